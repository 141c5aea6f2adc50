/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the URL parser (src/url.c) and url_redact().
 *
 * url.c is included, not linked, so that url_make_display() can be called
 * again on a copy of the parsed URL with another password: the display
 * must not depend on the password's value, which is exactly "the display
 * never shows the password".  url_redact() must hide the span of the
 * string that url_parse() takes as the password, whether or not the rest
 * of the URL parses (it is used for URLs that did not).
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/url.c"
#include "fuzz.h"

int	 LLVMFuzzerInitialize(int *, char ***);
int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char *
fuzz_scheme(const struct redis_url *u)
{
	static const char *names[] = { "redis", "unix", "redis-sentinel",
	    "redis+cluster" };

	FUZZ_CHECK(u->kind >= URL_TCP && u->kind <= URL_CLUSTER, "kind %d",
	    (int)u->kind);
	return (u->is_tls && u->kind == URL_TCP ? "rediss" : names[u->kind]);
}

/* Is str[0..len) the name of a scheme that url_parse_net() handles? */
static int
fuzz_is_net_scheme(const char *str, size_t len)
{
	return ((len == 5 && strncmp(str, "redis", 5) == 0) ||
	    (len == 6 && strncmp(str, "rediss", 6) == 0) ||
	    (len == 14 && strncmp(str, "redis-sentinel", 14) == 0) ||
	    (len == 13 && strncmp(str, "redis+cluster", 13) == 0));
}

/*
 * Where url_parse() takes the password from, as [*start, *end) of str:
 * after the first ':' of the user-info, or all of it.  The user-info ends
 * at the last '@' (network schemes) or at an '@' just before the first '/'
 * (unix://).  Returns 0 when str has no user-info.
 */
static int
fuzz_password_span(const char *str, size_t *start, size_t *end)
{
	const char	*sep, *rest, *at, *slash, *colon;

	if ((sep = strstr(str, "://")) == NULL)
		return (0);
	rest = sep + 3;
	if ((size_t)(sep - str) == 4 && strncmp(str, "unix", 4) == 0) {
		slash = strchr(rest, '/');
		if (slash == NULL || slash == rest || slash[-1] != '@')
			return (0);
		at = slash - 1;
	} else if (fuzz_is_net_scheme(str, (size_t)(sep - str))) {
		if ((at = strrchr(rest, '@')) == NULL)
			return (0);
	} else
		return (0);
	colon = memchr(rest, ':', (size_t)(at - rest));
	*start = (size_t)((colon != NULL ? colon + 1 : rest) - str);
	*end = (size_t)(at - str);
	return (1);
}

/* The checks on a URL that parsed. */
static void
fuzz_check_parsed(const char *str, struct redis_url *u)
{
	struct redis_url	 v;
	char			*prefix;
	size_t			 i, start, end;
	int			 has_span;
	const char		*errstr = NULL;
	char			*decoded;

	FUZZ_CHECK(u->display != NULL, "no display for '%s'", str);

	/* scheme://[user][:***@ or @]: the user-info, with *** only. */
	prefix = xasprintf("%s://%s%s", fuzz_scheme(u),
	    u->user != NULL ? u->user : "", u->password != NULL ? ":***@" :
	    u->user != NULL ? "@" : "");
	FUZZ_CHECK(strncmp(u->display, prefix, strlen(prefix)) == 0,
	    "display '%s' does not start with '%s'", u->display, prefix);
	free(prefix);

	/* The display is the same whatever the password is. */
	v = *u;
	v.display = NULL;
	if (u->password != NULL)
		v.password = (char *)"a-different-password";
	url_make_display(&v);
	FUZZ_CHECK(strcmp(u->display, v.display) == 0,
	    "display depends on the password: '%s' vs '%s'", u->display,
	    v.display);
	free(v.display);

	/* The parser and fuzz_password_span() agree on the password. */
	has_span = fuzz_password_span(str, &start, &end);
	FUZZ_CHECK(has_span == (u->password != NULL),
	    "password %s, span %d", u->password != NULL ? "set" : "NULL",
	    has_span);
	if (has_span) {
		decoded = url_decode(str + start, end - start, &errstr);
		FUZZ_CHECK(decoded != NULL && strcmp(decoded, u->password) == 0,
		    "password span of '%s' is not the password", str);
		free(decoded);
	}

	if (u->kind == URL_UNIX) {
		FUZZ_CHECK(u->path != NULL && u->path[0] == '/' &&
		    u->path[1] != '\0', "unix path");
		FUZZ_CHECK(u->nhosts == 0, "unix URL with hosts");
	} else {
		FUZZ_CHECK(u->nhosts >= 1 && u->hosts != NULL, "no host");
		FUZZ_CHECK(u->host == u->hosts[0].host &&
		    u->port == u->hosts[0].port, "host is not hosts[0]");
		FUZZ_CHECK(u->kind != URL_TCP || u->nhosts == 1,
		    "several hosts in a redis:// URL");
		FUZZ_CHECK((u->kind == URL_SENTINEL) ==
		    (u->master_name != NULL), "master name");
		for (i = 0; i < u->nhosts; i++) {
			FUZZ_CHECK(u->hosts[i].host[0] != '\0', "empty host");
			FUZZ_CHECK(u->hosts[i].port >= 1 &&
			    u->hosts[i].port <= 65535, "port %d",
			    u->hosts[i].port);
		}
	}
	FUZZ_CHECK(u->db >= 0, "db %d", u->db);
	FUZZ_CHECK(u->kind != URL_CLUSTER || u->db == 0, "cluster db");
}

/*
 * url_redact(str) must be str with one stretch that covers the password
 * span replaced by "***": str[0..a) "***" str[b..] with a <= start and
 * b >= end.  Over-redaction is allowed, showing any byte of a non-empty
 * span is not.
 */
static void
fuzz_check_redact(const char *str)
{
	char	*out = url_redact(str);
	size_t	 n = strlen(str), len = strlen(out), start, end, a, b, lcp,
		 lcs;
	int	 ok = 0;

	FUZZ_CHECK(out != NULL, "url_redact returned NULL");
	/* An empty password has nothing to show. */
	if (fuzz_password_span(str, &start, &end) && end > start) {
		for (lcp = 0; lcp < n && lcp < len && str[lcp] == out[lcp];
		    lcp++)
			;
		for (lcs = 0; lcs < n && lcs < len &&
		    str[n - 1 - lcs] == out[len - 1 - lcs]; lcs++)
			;
		for (a = 0; !ok && a <= lcp && a <= start && a + 3 <= len;
		    a++) {
			if (memcmp(out + a, "***", 3) != 0 ||
			    len - a - 3 > lcs || len - a - 3 > n)
				continue;
			b = n - (len - a - 3);
			ok = b >= end;
		}
		FUZZ_CHECK(ok, "url_redact('%s') = '%s' shows the password "
		    "at [%zu, %zu)", str, out, start, end);
	}
	free(out);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return (0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct redis_url	 u;
	const char		*errstr = NULL;
	char			*str;

	str = xmalloc(size + 1);
	memcpy(str, data, size);
	str[size] = '\0';

	if (url_parse(str, &u, &errstr) == 0) {
		fuzz_check_parsed(str, &u);
		url_free(&u);
	} else {
		FUZZ_CHECK(errstr != NULL && *errstr != '\0',
		    "failure without a reason");
		FUZZ_CHECK(u.display == NULL && u.hosts == NULL &&
		    u.password == NULL, "a failed parse left fields set");
	}
	fuzz_check_redact(str);
	free(str);
	return (0);
}
