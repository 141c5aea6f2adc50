/* SPDX-License-Identifier: MIT */
/*
 * Redis URLs: redis://[[user]:pass@]host[:port][/db][?ssl_cert_reqs=...],
 * unix://[[user]:pass@]/path[?db=N], IPv6 hosts in brackets.  Pure:
 * returns an error phrase, never prints or exits.  A user-info without ':'
 * is a password, as in redis-cli.  Every message about a URL uses its
 * redacted form, hints included.
 */

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "redlock.h"

#define URL_SCHEMES	"redis://, rediss://, unix://, redis-sentinel:// " \
			    "or redis+cluster://"

static int	 url_number(const char *, size_t, long long, long long,
		     long long *);
static char	*url_decode(const char *, size_t, const char **);
static int	 url_userinfo(const char *, size_t, struct redis_url *,
		     const char **);
static int	 url_parse_host(const char **, int, struct redis_url *,
		     const char **);
static int	 url_parse_net(const char *, enum url_kind, struct redis_url *,
		     const char **);
static int	 url_parse_unix(const char *, struct redis_url *,
		     const char **);
static void	 url_make_display(struct redis_url *);
static int	 url_master_name(const char **, struct redis_url *,
		     const char **);
static const char *url_set_error(const char **, char *);
static int	 url_parse_query(const char *, struct redis_url *,
		     const char **);
static int	 url_scheme_name(const char *, size_t);
static void	 url_hint(const char *, const char **);

/* The last message that had to be built; valid until the next one. */
static char	*url_error;

/*
 * Set *errstr to msg, a message built with xasprintf(); the one before is
 * freed.  Returns msg.
 */
static const char *
url_set_error(const char **errstr, char *msg)
{
	free(url_error);
	url_error = msg;
	*errstr = msg;
	return (msg);
}

/* A decimal number in [min, max], s[0..len): number_parse on a copy. */
static int
url_number(const char *s, size_t len, long long min, long long max,
    long long *out)
{
	const char	*errstr;
	char		*copy;
	int		 rc;

	copy = xmalloc(len + 1);
	memcpy(copy, s, len);
	copy[len] = '\0';
	rc = number_parse(copy, min, max, out, &errstr);
	free(copy);
	return (rc);
}

/* Percent-decode s[0..len) into a new string. */
static char *
url_decode(const char *s, size_t len, const char **errstr)
{
	char	*out, *o;
	size_t	 i;
	int	 hi, lo;

	o = out = xmalloc(len + 1);
	for (i = 0; i < len; i++) {
		if (s[i] != '%') {
			*o++ = s[i];
			continue;
		}
		if (i + 2 >= len) {
			free(out);
			*errstr = "bad percent-encoding";
			return (NULL);
		}
		hi = isxdigit((unsigned char)s[i + 1]) ? s[i + 1] : -1;
		lo = isxdigit((unsigned char)s[i + 2]) ? s[i + 2] : -1;
		if (hi == -1 || lo == -1) {
			free(out);
			*errstr = "bad percent-encoding";
			return (NULL);
		}
		hi = isdigit(hi) ? hi - '0' : tolower(hi) - 'a' + 10;
		lo = isdigit(lo) ? lo - '0' : tolower(lo) - 'a' + 10;
		*o++ = (char)(hi << 4 | lo);
		i += 2;
	}
	*o = '\0';
	return (out);
}

static int
url_userinfo(const char *s, size_t len, struct redis_url *u,
    const char **errstr)
{
	const char *colon = memchr(s, ':', len);

	if (colon != NULL) {
		if (colon > s &&
		    (u->user = url_decode(s, (size_t)(colon - s), errstr)) ==
		    NULL)
			return (-1);
		len -= (size_t)(colon + 1 - s);
		s = colon + 1;
	}
	if ((u->password = url_decode(s, len, errstr)) == NULL)
		return (-1);
	return (0);
}

/* One host[:port] or [v6]:port at *pp, appended to u->hosts. */
static int
url_parse_host(const char **pp, int default_port, struct redis_url *u,
    const char **errstr)
{
	const char	*host, *host_end, *p = *pp, *end;
	struct url_host	*h;
	long long	 v;

	if (*p == '[') {
		host = p + 1;
		if ((host_end = strchr(host, ']')) == NULL) {
			*errstr = "unterminated IPv6 address";
			return (-1);
		}
		p = host_end + 1;
	} else {
		host = p;
		host_end = host + strcspn(host, ":/?,");
		p = host_end;
	}
	if (host_end == host) {
		*errstr = "missing host";
		return (-1);
	}
	u->hosts = xreallocarray(u->hosts, u->nhosts + 1, sizeof(*u->hosts));
	h = &u->hosts[u->nhosts++];
	h->host = xmalloc((size_t)(host_end - host) + 1);
	memcpy(h->host, host, (size_t)(host_end - host));
	h->host[host_end - host] = '\0';
	h->port = default_port;
	if (*p == ':') {
		p++;
		end = p + strcspn(p, "/?,");
		if (url_number(p, (size_t)(end - p), 1, 65535, &v) == -1) {
			*errstr = "invalid port";
			return (-1);
		}
		h->port = (int)v;
		p = end;
	}
	*pp = p;
	return (0);
}

/* A Sentinel URL's "/master" at *p, past it. */
static int
url_master_name(const char **p, struct redis_url *u, const char **errstr)
{
	const char *name;

	if (**p != '/' || (*p)[1] == '\0' || (*p)[1] == '/') {
		*errstr = "missing master name";
		return (-1);
	}
	name = ++*p;
	*p += strcspn(*p, "/?");
	u->master_name = xmalloc((size_t)(*p - name) + 1);
	memcpy(u->master_name, name, (size_t)(*p - name));
	u->master_name[*p - name] = '\0';
	return (0);
}

/*
 * redis://, redis-sentinel:// and redis+cluster://: user-info, then one
 * host (or, for the last two, a comma-separated list), then a path:
 * /db, /master-name[/db], or nothing.
 */
static int
url_parse_net(const char *rest, enum url_kind kind, struct redis_url *u,
    const char **errstr)
{
	const char	*at, *p;
	long long	 v;

	u->kind = kind;
	/* The last '@' ends the user-info: a password may contain '@'. */
	if ((at = strrchr(rest, '@')) != NULL) {
		if (url_userinfo(rest, (size_t)(at - rest), u, errstr) == -1)
			return (-1);
		rest = at + 1;
	}
	p = rest;
	for (;;) {
		if (url_parse_host(&p, kind == URL_SENTINEL ? 26379 : 6379, u,
		    errstr) == -1)
			return (-1);
		if (*p != ',')
			break;
		if (kind == URL_TCP) {
			*errstr = "several hosts need redis-sentinel:// or "
			    "redis+cluster:// (or one -u per server for a "
			    "quorum)";
			return (-1);
		}
		p++;
	}
	u->host = u->hosts[0].host;
	u->port = u->hosts[0].port;
	if (kind == URL_SENTINEL && url_master_name(&p, u, errstr) == -1)
		return (-1);
	if (*p == '/') {
		p++;
		if (*p != '\0' && *p != '?') {
			if (kind == URL_CLUSTER ||
			    url_number(p, strcspn(p, "?"), 0, INT_MAX, &v) ==
			    -1) {
				*errstr = kind == URL_CLUSTER ? "a cluster has "
				    "no database numbers" :
				    "invalid database number";
				return (-1);
			}
			u->db = (int)v;
		}
		p += strcspn(p, "?");
	}
	if (*p == '?')
		return (url_parse_query(p + 1, u, errstr));
	if (*p != '\0') {
		*errstr = "unexpected text after the host";
		return (-1);
	}
	return (0);
}

/*
 * The query of a network URL: name=value pairs separated by '&'.  Only
 * redis-py's ssl_cert_reqs is known (so that a URL from Heroku, Render or
 * a Python configuration works as given): none (or CERT_NONE) skips the
 * certificate checks as --insecure does, required (CERT_REQUIRED) is the
 * default.  Anything else is refused by name rather than ignored.
 */
static int
url_parse_query(const char *q, struct redis_url *u, const char **errstr)
{
	const char	*name, *eq, *value;
	size_t		 len, nlen, vlen;

	while (*q != '\0') {
		len = strcspn(q, "&");
		name = q;
		q += len;
		if (*q == '&')
			q++;
		if (len == 0)
			continue;
		eq = memchr(name, '=', len);
		nlen = eq != NULL ? (size_t)(eq - name) : len;
		value = eq != NULL ? eq + 1 : name + len;
		vlen = len - (size_t)(value - name);
		if (nlen != 13 || strncmp(name, "ssl_cert_reqs", 13) != 0) {
			url_set_error(errstr, xasprintf("unknown parameter "
			    "'%.*s' (only ssl_cert_reqs is accepted)",
			    (int)nlen, name));
			return (-1);
		}
		if ((vlen == 4 && strncasecmp(value, "none", 4) == 0) ||
		    (vlen == 9 && strncasecmp(value, "CERT_NONE", 9) == 0))
			u->tls_insecure = 1;
		else if ((vlen == 8 && strncasecmp(value, "required", 8) ==
		    0) || (vlen == 13 && strncasecmp(value, "CERT_REQUIRED",
		    13) == 0))
			u->tls_insecure = 0;
		else {
			url_set_error(errstr, xasprintf("invalid ssl_cert_reqs "
			    "'%.*s' (none or required)", (int)vlen, value));
			return (-1);
		}
	}
	return (0);
}

static int
url_parse_unix(const char *rest, struct redis_url *u, const char **errstr)
{
	const char	*slash, *q;
	long long	 v;

	u->kind = URL_UNIX;
	/* unix://[userinfo@]/path: the path starts at the first '/'. */
	slash = strchr(rest, '/');
	if (slash != rest && slash != NULL && slash[-1] == '@') {
		if (url_userinfo(rest, (size_t)(slash - 1 - rest), u,
		    errstr) == -1)
			return (-1);
		rest = slash;
	}
	if (*rest != '/' || rest[1] == '\0' || rest[1] == '?') {
		*errstr = "missing socket path";
		return (-1);
	}
	if ((q = strchr(rest, '?')) == NULL)
		q = rest + strlen(rest);
	u->path = xmalloc((size_t)(q - rest) + 1);
	memcpy(u->path, rest, (size_t)(q - rest));
	u->path[q - rest] = '\0';
	if (*q == '?') {
		if (strncmp(q, "?db=", 4) != 0) {
			url_set_error(errstr, xasprintf("unknown parameter "
			    "'%.*s' (only db is accepted)",
			    (int)strcspn(q + 1, "=&"), q + 1));
			return (-1);
		}
		if (url_number(q + 4, strlen(q + 4), 0, INT_MAX, &v) == -1) {
			*errstr = "invalid database number";
			return (-1);
		}
		u->db = (int)v;
	}
	return (0);
}

static void
url_make_display(struct redis_url *u)
{
	static const char *schemes[] = { "redis", "unix", "redis-sentinel",
	    "redis+cluster" };
	const char	*pw = u->password != NULL ? ":***@" : "";
	const char	*user = u->user != NULL ? u->user : "";
	char		*hosts = xstrdup(""), *next, db[32] = "";
	size_t		 i;

	if (u->password == NULL && u->user != NULL)
		pw = "@";
	if (u->kind == URL_UNIX) {
		if (u->db != 0)
			(void)snprintf(db, sizeof(db), "?db=%d", u->db);
		u->display = xasprintf("unix://%s%s%s%s", user, pw, u->path,
		    db);
		free(hosts);
		return;
	}
	for (i = 0; i < u->nhosts; i++) {
		next = xasprintf(strchr(u->hosts[i].host, ':') != NULL ?
		    "%s%s[%s]:%d" : "%s%s%s:%d", hosts, i ? "," : "",
		    u->hosts[i].host, u->hosts[i].port);
		free(hosts);
		hosts = next;
	}
	if (u->db != 0)
		(void)snprintf(db, sizeof(db), "/%d", u->db);
	u->display = xasprintf("%s://%s%s%s%s%s%s", u->is_tls &&
	    u->kind == URL_TCP ? "rediss" : schemes[u->kind], user,
	    pw, hosts, u->master_name != NULL ? "/" : "",
	    u->master_name != NULL ? u->master_name : "", db);
	free(hosts);
}

/* Is str[0..len) a scheme's name: a letter, then letters, digits, + - . */
static int
url_scheme_name(const char *str, size_t len)
{
	size_t	 i;

	if (len == 0 || !isalpha((unsigned char)str[0]))
		return (0);
	for (i = 1; i < len; i++)
		if (!isalnum((unsigned char)str[i]) && strchr("+-.", str[i]) ==
		    NULL)
			return (0);
	return (1);
}

/* Appends "; did you mean URL?" to *errstr, redacted, when url_guess has one. */
static void
url_hint(const char *str, const char **errstr)
{
	char	*guess, *shown;

	if ((guess = url_guess(str)) == NULL)
		return;
	shown = url_redact(guess);
	free(guess);
	url_set_error(errstr, xasprintf("%s; did you mean %s?", *errstr,
	    shown));
	free(shown);
}

/*
 * Parse str into *u.  Returns 0, or -1 with *errstr set (and *u freed).
 * A message that had to be built stays valid until the next call.
 */
int
url_parse(const char *str, struct redis_url *u, const char **errstr)
{
	const char	*sep;
	int		 rc;

	memset(u, 0, sizeof(*u));
	if (*str == '\0') {
		*errstr = "empty";
		return (-1);
	}
	if ((sep = strstr(str, "://")) == NULL) {
		*errstr = "missing scheme (" URL_SCHEMES ")";
		url_hint(str, errstr);
		return (-1);
	}
	if ((size_t)(sep - str) == 5 && strncmp(str, "redis", 5) == 0)
		rc = url_parse_net(sep + 3, URL_TCP, u, errstr);
	else if ((size_t)(sep - str) == 14 &&
	    strncmp(str, "redis-sentinel", 14) == 0)
		rc = url_parse_net(sep + 3, URL_SENTINEL, u, errstr);
	else if ((size_t)(sep - str) == 13 &&
	    strncmp(str, "redis+cluster", 13) == 0)
		rc = url_parse_net(sep + 3, URL_CLUSTER, u, errstr);
	else if ((size_t)(sep - str) == 4 && strncmp(str, "unix", 4) == 0)
		rc = url_parse_unix(sep + 3, u, errstr);
	else if ((size_t)(sep - str) == 6 && strncmp(str, "rediss", 6) == 0) {
		rc = url_parse_net(sep + 3, URL_TCP, u, errstr);
		u->is_tls = 1;
	} else {
		*errstr = "unsupported scheme";
		if (url_scheme_name(str, (size_t)(sep - str))) {
			url_set_error(errstr, xasprintf("unsupported scheme "
			    "'%.*s' (" URL_SCHEMES ")", (int)(sep - str),
			    str));
			url_hint(str, errstr);
		}
		rc = -1;
	}
	if (rc == -1) {
		url_free(u);
		return (-1);
	}
	url_make_display(u);
	return (0);
}

void
url_free(struct redis_url *u)
{
	size_t i;

	for (i = 0; i < u->nhosts; i++)
		free(u->hosts[i].host);
	free(u->hosts);
	free(u->master_name);
	free(u->path);
	free(u->user);
	freezero_str(u->password);
	free(u->display);
	memset(u, 0, sizeof(*u));
}

/*
 * A URL string as given, with any password replaced by ***, for messages
 * about URLs that did not parse.
 */
char *
url_redact(const char *str)
{
	const char	*sep, *at, *colon, *start;

	if ((at = strrchr(str, '@')) == NULL)
		return (xstrdup(str));
	/*
	 * The user-info starts after "://"; in a URL whose scheme is
	 * mangled it may start anywhere, so then hide from the first ':'
	 * (or everything before the '@').
	 */
	sep = strstr(str, "://");
	start = sep != NULL && sep < at ? sep + 3 : str;
	/* A ':' after an '@' is in a path or host, not the user-info. */
	colon = memchr(start, ':', (size_t)(at - start));
	if (colon != NULL && memchr(start, '@', (size_t)(colon - start)) ==
	    NULL)
		start = colon + 1;
	return (xasprintf("%.*s***%s", (int)(start - str), str, at));
}
