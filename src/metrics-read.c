/* SPDX-License-Identifier: MIT */
/*
 * The previous --metrics-file, read back (metrics.c): its counts and its
 * last success are kept nowhere else.  Strict, as the number parsers are:
 * only lines of the shape metrics.c writes, the HELP and TYPE of our own
 * metrics and their samples, label values unescaped as the text format
 * escapes them; the first other line makes the whole file not ours, so
 * that a file edited by hand or written by something else is never half
 * believed.  At most 1 MiB is read.
 */

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "redlock.h"
#include "metrics-impl.h"

const struct metrics_def metrics_defs[MG_COUNT + 1] = {
	[MG_RUN] = { "redlock_last_run_timestamp_seconds",
	    "When the last run of the lock ended, in seconds since the epoch." },
	[MG_SUCCESS] = { "redlock_last_success_timestamp_seconds",
	    "When the last run of the lock whose command exited 0 ended." },
	[MG_EXIT] = { "redlock_last_exit_status",
	    "The exit status of redlock-cli run, the last time." },
	[MG_WAIT] = { "redlock_last_wait_seconds",
	    "How long the last run waited for the lock." },
	[MG_HELD] = { "redlock_last_held_seconds",
	    "How long the last run held the lock." },
	[MG_COUNT] = { "redlock_runs_total",
	    "Runs of the lock that ended, by outcome." }
};

static int	 metrics_slurp(int, char *, size_t *);
static int	 metrics_parse(struct metrics_file *, char *, size_t, char *,
		     size_t);
static const char *metrics_parse_line(struct metrics_file *, const char *);
static const char *metrics_sample(struct metrics_file *, int, const char *);
static const char *metrics_label(const char *, const char *, char **);
static int	 metrics_value(const char *, int);

/*
 * The previous file into mf: 0 (also when there is none yet), or -1 with
 * why set when it cannot be read or is not ours.
 */
int
metrics_read(const char *path, struct metrics_file *mf, char *why,
    size_t whylen)
{
	struct stat	 st;
	char		*buf;
	size_t		 len = 0;
	int		 fd, rc = -1;

	/* O_NONBLOCK: a FIFO at PATH must not hang the end of the run. */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) == -1) {
		if (errno == ENOENT)
			return (0);
		(void)snprintf(why, whylen, "%s", strerror(errno));
		return (-1);
	}
	buf = xmalloc(METRICS_READ_MAX + 1);
	if (fstat(fd, &st) == -1)
		(void)snprintf(why, whylen, "%s", strerror(errno));
	else if (!S_ISREG(st.st_mode))
		(void)snprintf(why, whylen, "not a regular file");
	else if (metrics_slurp(fd, buf, &len) == -1)
		(void)snprintf(why, whylen, "%s", strerror(errno));
	else if (len > METRICS_READ_MAX)
		(void)snprintf(why, whylen, "larger than 1 MiB");
	else
		rc = metrics_parse(mf, buf, len, why, whylen);
	free(buf);
	(void)close(fd);
	return (rc);
}

/*
 * Read fd into buf, up to METRICS_READ_MAX + 1 bytes (one more than a
 * file of ours may have, to tell one that is too large).  0, or -1.
 */
static int
metrics_slurp(int fd, char *buf, size_t *len)
{
	ssize_t n;

	while (*len <= METRICS_READ_MAX) {
		n = read(fd, buf + *len, METRICS_READ_MAX + 1 - *len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return (-1);
		if (n == 0)
			break;
		*len += (size_t)n;
	}
	return (0);
}

/*
 * Parse the len bytes of buf, every line of them, into mf.  0, or -1 with
 * the first bad line's number and what is wrong with it in why.
 */
static int
metrics_parse(struct metrics_file *mf, char *buf, size_t len, char *why,
    size_t whylen)
{
	const char	*bad;
	char		*line = buf, *nl;
	size_t		 lineno = 0;

	if (memchr(buf, '\0', len) != NULL) {
		(void)snprintf(why, whylen, "a NUL byte");
		return (-1);
	}
	if (len > 0 && buf[len - 1] != '\n') {
		(void)snprintf(why, whylen, "no newline at its end");
		return (-1);
	}
	buf[len] = '\0';
	for (; *line != '\0'; line = nl + 1) {
		nl = strchr(line, '\n');
		*nl = '\0';
		lineno++;
		if ((bad = metrics_parse_line(mf, line)) != NULL) {
			(void)snprintf(why, whylen, "line %zu: %s", lineno,
			    bad);
			return (-1);
		}
	}
	return (0);
}

/* One line: HELP and TYPE of ours, or a sample.  NULL, or what is wrong. */
static const char *
metrics_parse_line(struct metrics_file *mf, const char *line)
{
	const char	*rest;
	size_t		 len;
	int		 m;

	for (m = 0; m <= MG_COUNT; m++) {
		len = strlen(metrics_defs[m].name);
		if (strncmp(line, "# HELP ", 7) == 0 &&
		    strncmp(line + 7, metrics_defs[m].name, len) == 0 &&
		    line[7 + len] == ' ')
			return (NULL);	/* written anew */
		if (strncmp(line, "# TYPE ", 7) == 0 &&
		    strncmp(line + 7, metrics_defs[m].name, len) == 0) {
			rest = line + 7 + len;
			return (strcmp(rest, m == MG_COUNT ? " counter" :
			    " gauge") == 0 ? NULL : "not our metric's type");
		}
		if (strncmp(line, metrics_defs[m].name, len) == 0 &&
		    line[len] == '{')
			return (metrics_sample(mf, m, line + len + 1));
	}
	return ("not a line of redlock-cli's metrics");
}

/*
 * A sample of metric m, after its '{': key="K"} V, or for the counter
 * key="K",outcome="O"} N.  NULL, or what is wrong.
 */
static const char *
metrics_sample(struct metrics_file *mf, int m, const char *p)
{
	struct metrics_key	*k;
	char			*key = NULL, *outcome = NULL;
	const char		*v;
	int			 o = 0;

	if ((p = metrics_label(p, "key", &key)) == NULL)
		return ("not a key=\"...\" label");
	if (m == MG_COUNT) {
		if (*p++ != ',' ||
		    (p = metrics_label(p, "outcome", &outcome)) == NULL) {
			free(key);
			return ("not an outcome=\"...\" label");
		}
		for (o = 0; o < METRICS_NOUTCOMES &&
		    strcmp(outcome, outcome_name(o)) != 0; o++)
			;
		free(outcome);
	}
	if (o == METRICS_NOUTCOMES || p[0] != '}' || p[1] != ' ' ||
	    metrics_value(v = p + 2, m == MG_COUNT) == -1) {
		free(key);
		return ("not an outcome, labels or a value of ours");
	}
	k = metrics_key(mf, key);
	free(key);
	if (m != MG_COUNT ? k->gauge[m][0] != '\0' :
	    (k->counted & (1U << o)) != 0)
		return ("a second sample of the same series");
	k->counted |= m == MG_COUNT ? 1U << o : 0;
	if (m != MG_COUNT)
		(void)snprintf(k->gauge[m], sizeof(k->gauge[m]), "%s", v);
	else
		k->runs[o] = strtoull(v, NULL, 10);
	return (NULL);
}

/*
 * name="value" at p, the value unescaped as the text format escapes it
 * (\\, \", \n) into *out.  The end of it, or NULL if it is not that.
 */
static const char *
metrics_label(const char *p, const char *name, char **out)
{
	size_t	 len = strlen(name), n = 0;
	char	*s;

	if (strncmp(p, name, len) != 0 || p[len] != '=' || p[len + 1] != '"')
		return (NULL);
	p += len + 2;
	s = xmalloc(strlen(p) + 1);
	for (; *p != '"'; p++) {
		if (*p == '\0' || (*p == '\\' && p[1] != '\\' &&
		    p[1] != '"' && p[1] != 'n')) {
			free(s);
			return (NULL);
		}
		if (*p == '\\')
			s[n++] = *++p == 'n' ? '\n' : *p;
		else
			s[n++] = *p;
	}
	s[n] = '\0';
	*out = s;
	return (p + 1);
}

/*
 * A value as we write them: digits, and for a gauge a fraction.  It ends
 * the line: no timestamp.  0, or -1.
 */
static int
metrics_value(const char *v, int is_count)
{
	size_t	 whole = strspn(v, "0123456789"), frac = 0;

	if (v[whole] == '.' && !is_count)
		frac = strspn(v + whole + 1, "0123456789") + 1;
	if (whole == 0 || frac == 1 || v[whole + frac] != '\0' ||
	    whole + frac >= METRICS_VALUE_MAX)
		return (-1);
	if (is_count && (whole > 20 || (whole == 20 &&
	    strcmp(v, "18446744073709551615") > 0)))
		return (-1);
	return (0);
}

/* key's lines in mf, new and empty if it had none. */
struct metrics_key *
metrics_key(struct metrics_file *mf, const char *key)
{
	struct metrics_key	*k;
	size_t			 i;

	for (i = 0; i < mf->n; i++)
		if (strcmp(mf->keys[i].key, key) == 0)
			return (&mf->keys[i]);
	mf->keys = xreallocarray(mf->keys, mf->n + 1, sizeof(*mf->keys));
	k = &mf->keys[mf->n++];
	memset(k, 0, sizeof(*k));
	k->key = xstrdup(key);
	return (k);
}

/* Every lock's lines gone: mf is empty. */
void
metrics_free(struct metrics_file *mf)
{
	size_t i;

	for (i = 0; i < mf->n; i++)
		free(mf->keys[i].key);
	free(mf->keys);
	mf->keys = NULL;
	mf->n = 0;
}
