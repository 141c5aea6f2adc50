/* SPDX-License-Identifier: MIT */
/*
 * A command as bytes: RESP, an array of bulk strings, appended to a
 * connection's output buffer; and the line -v -v logs for it, with its
 * secret argument cut.  Nothing here does I/O.
 */

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "conn-impl.h"

static size_t	 conn_resp_len(int, const size_t *);
static size_t	 conn_digits(size_t);
static char	*conn_resp_header(char *, char, size_t);
static void	 conn_log_secret(char *, size_t, const char *, size_t,
		     size_t);

/* Append one formatted command to the output buffer. */
void
conn_append(struct conn *c, int argc, const char **argv, const size_t *lens)
{
	size_t	 n = conn_resp_len(argc, lens);
	char	*p;
	int	 i;

	c->out = xreallocarray(c->out, c->out_len + n, 1);
	p = c->out + c->out_len;
	p = conn_resp_header(p, '*', (size_t)argc);
	for (i = 0; i < argc; i++) {
		p = conn_resp_header(p, '$', lens[i]);
		memcpy(p, argv[i], lens[i]);
		p += lens[i];
		*p++ = '\r';
		*p++ = '\n';
	}
	c->out_len += n;
}

/*
 * The bytes of a command in RESP, an array of bulk strings: "*ARGC\r\n",
 * then "$LEN\r\nARG\r\n" for each.  Written here rather than by hiredis's
 * redisFormatCommandArgv, which formats every header with sprintf: a lock's
 * scripts have many keys and arguments, and the lengths are known.
 */
static size_t
conn_resp_len(int argc, const size_t *lens)
{
	size_t	n = 1 + conn_digits((size_t)argc) + 2;
	int	i;

	for (i = 0; i < argc; i++)
		n += 1 + conn_digits(lens[i]) + 2 + lens[i] + 2;
	return (n);
}

static size_t
conn_digits(size_t v)
{
	size_t n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return (n);
}

/* "<kind><v>\r\n" at p; returns the end. */
static char *
conn_resp_header(char *p, char kind, size_t v)
{
	size_t	n = conn_digits(v), i;

	*p++ = kind;
	for (i = n; i > 0; i--) {
		p[i - 1] = (char)('0' + v % 10);
		v /= 10;
	}
	p += n;
	*p++ = '\r';
	*p++ = '\n';
	return (p);
}

/*
 * A secret argument, for -v -v: its public start (secret_from bytes),
 * then the secret cut.
 */
static void
conn_log_secret(char *dst, size_t dstlen, const char *arg, size_t len,
    size_t secret_from)
{
	size_t from = secret_from < len ? secret_from : 0;
	size_t used;

	log_sanitize(dst, dstlen, arg, from);
	used = strlen(dst);
	log_shorten(dst + used, dstlen - used, arg + from, len - from);
}

/* -v -v: a command, its argument secret_arg (0: none) cut. */
void
conn_log_command(struct conn *c, int argc, const char **argv,
    const size_t *lens, int secret_arg, size_t secret_from)
{
	char	 line[1024], arg[128];
	size_t	 used = 0;
	int	 i, n;

	if (log_verbosity < 2)
		return;
	line[0] = '\0';
	for (i = 0; i < argc && used < sizeof(line) - 1; i++) {
		/* The secret wherever it comes (SET K tok IFEQ tok). */
		if ((secret_arg > 0 && secret_arg < argc && i > 0 &&
		    lens[i] == lens[secret_arg] &&
		    memcmp(argv[i], argv[secret_arg], lens[i]) == 0) ||
		    (c->secret_span > 0 && i >= secret_arg &&
		    i < secret_arg + c->secret_span))
			conn_log_secret(arg, sizeof(arg), argv[i], lens[i],
			    secret_from);
		else
			/* Script bodies are long and secret-free: show their
			 * start. */
			log_sanitize(arg, lens[i] > 40 && i == 1 &&
			    strcasecmp(argv[0], "EVAL") == 0 ? 44 :
			    sizeof(arg), argv[i], lens[i]);
		n = snprintf(line + used, sizeof(line) - used, "%s%s",
		    i ? " " : "", arg);
		if (n < 0)
			break;
		used += (size_t)n;
	}
	log_debug("%s: > %s", c->dial->display, line);
}
