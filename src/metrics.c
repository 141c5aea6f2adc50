/* SPDX-License-Identifier: MIT */
/*
 * run --metrics-file PATH: how the runs of each lock ended, in the text
 * format of Prometheus that node_exporter's textfile collector reads
 * (*.prom files in --collector.textfile.directory).  Per lock (label
 * "key"), five gauges of the last run and a counter of runs by outcome:
 *
 *	redlock_last_run_timestamp_seconds{key="K"}	when it ended
 *	redlock_last_success_timestamp_seconds{key="K"}	the last "ok"
 *	redlock_last_exit_status{key="K"}		run's exit status
 *	redlock_last_wait_seconds{key="K"}		waited for the lock
 *	redlock_last_held_seconds{key="K"}		held it
 *	redlock_runs_total{key="K",outcome="O"}		runs that ended so
 *
 * Prometheus keeps no state of ours, so the counts and the last success
 * live in the file itself: each run reads the previous file
 * (metrics-read.c), changes its own lock's lines, keeps the other locks',
 * and writes it all again.  A file that is not ours, or was edited, is
 * said once, and the counts start from 0.
 *
 * A reader must never see half a file, so the new one is written to a
 * temporary file in the same directory (named so that the collector's
 * *.prom glob skips it), synced, and renamed over PATH.  Two runs that end
 * at once may both read the old file: the later rename wins, and the
 * other's increment is lost (the man page says so).  A failure is one
 * line, and changes no exit status: the job's own result stands.
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

static void	 metrics_update(struct metrics_file *, const char *,
		     const struct run_end *, int);
static void	 metrics_seconds(char [METRICS_VALUE_MAX], int64_t);
static char	*metrics_render(struct metrics_file *, size_t *);
static void	 metrics_render_key(FILE *, int, const struct metrics_key *);
static void	 metrics_escape(FILE *, const char *);
static int	 metrics_replace(const char *, const char *, size_t);

/*
 * The end of a run of key, as --metrics-file keeps it: read what the file
 * held, count this run, write it back atomically.  Warns, never fails.
 */
void
metrics_write(const char *path, const char *key, const struct run_end *end,
    int status)
{
	struct metrics_file	 mf = { NULL, 0 };
	char			 why[128], *text;
	size_t			 len;

	if (metrics_read(path, &mf, why, sizeof(why)) == -1) {
		log_warnx("metrics file %s: %s: starting the counts from 0",
		    path, why);
		metrics_free(&mf);
	}
	metrics_update(&mf, key, end, status);
	if ((text = metrics_render(&mf, &len)) == NULL)
		log_warnx("cannot write metrics file %s: out of memory", path);
	else if (metrics_replace(path, text, len) == -1)
		log_warnx("cannot write metrics file %s: %s", path,
		    strerror(errno));
	free(text);
	metrics_free(&mf);
}

/* Milliseconds as a value in seconds, exactly: "12.345". */
static void
metrics_seconds(char buf[METRICS_VALUE_MAX], int64_t ms)
{
	if (ms < 0)
		ms = 0;
	(void)snprintf(buf, METRICS_VALUE_MAX, "%lld.%03lld",
	    (long long)(ms / 1000), (long long)(ms % 1000));
}

/* This run's lines: the gauges of key, and one more of its outcome. */
static void
metrics_update(struct metrics_file *mf, const char *key,
    const struct run_end *end, int status)
{
	struct metrics_key	*k = metrics_key(mf, key);
	int64_t			 now = clock_wall_ms();

	metrics_seconds(k->gauge[MG_RUN], now);
	if (end->outcome == RUN_OK)
		metrics_seconds(k->gauge[MG_SUCCESS], now);
	metrics_seconds(k->gauge[MG_WAIT], end->waited_ms);
	metrics_seconds(k->gauge[MG_HELD], end->held_ms);
	(void)snprintf(k->gauge[MG_EXIT], sizeof(k->gauge[MG_EXIT]), "%d",
	    status);
	if ((unsigned)end->outcome < METRICS_NOUTCOMES &&
	    k->runs[end->outcome] < UINT64_MAX)
		k->runs[end->outcome]++;
}

static int
metrics_key_cmp(const void *a, const void *b)
{
	return (strcmp(((const struct metrics_key *)a)->key,
	    ((const struct metrics_key *)b)->key));
}

/*
 * The whole file: each metric's HELP and TYPE once, then its samples, the
 * locks in order.  NULL when out of memory.
 */
static char *
metrics_render(struct metrics_file *mf, size_t *len)
{
	FILE	*f;
	char	*text = NULL;
	size_t	 i;
	int	 m, failed;

	qsort(mf->keys, mf->n, sizeof(*mf->keys), metrics_key_cmp);
	if ((f = open_memstream(&text, len)) == NULL)
		return (NULL);
	for (m = 0; m <= MG_COUNT; m++) {
		(void)fprintf(f, "# HELP %s %s\n# TYPE %s %s\n",
		    metrics_defs[m].name, metrics_defs[m].help,
		    metrics_defs[m].name, m == MG_COUNT ? "counter" : "gauge");
		for (i = 0; i < mf->n; i++)
			metrics_render_key(f, m, &mf->keys[i]);
	}
	failed = ferror(f);
	if (fclose(f) != 0 || failed) {
		free(text);
		return (NULL);
	}
	return (text);
}

/*
 * Metric m's samples of one lock: a gauge it has, or a count of every
 * outcome, 0 included, so that increase() sees the first of each.
 */
static void
metrics_render_key(FILE *f, int m, const struct metrics_key *k)
{
	int o;

	if (m != MG_COUNT) {
		if (k->gauge[m][0] == '\0')
			return;
		(void)fprintf(f, "%s{key=\"", metrics_defs[m].name);
		metrics_escape(f, k->key);
		(void)fprintf(f, "\"} %s\n", k->gauge[m]);
		return;
	}
	for (o = 0; o < METRICS_NOUTCOMES; o++) {
		(void)fprintf(f, "%s{key=\"", metrics_defs[m].name);
		metrics_escape(f, k->key);
		(void)fprintf(f, "\",outcome=\"%s\"} %llu\n", outcome_name(o),
		    (unsigned long long)k->runs[o]);
	}
}

/* A label's value, escaped as the text format wants it. */
static void
metrics_escape(FILE *f, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '\\' || *s == '"')
			(void)fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			(void)fputs("\\n", f);
		else
			(void)fputc(*s, f);
	}
}

/*
 * Put text at path atomically: a temporary file beside it (".NAME.XXXXXX",
 * which the collector's *.prom skips), mode 0644, synced, renamed over
 * path.  0, or -1 with errno set and the temporary file gone.
 */
static int
metrics_replace(const char *path, const char *text, size_t len)
{
	const char	*slash = strrchr(path, '/');
	char		*tmp;
	size_t		 off = 0;
	ssize_t		 n;
	int		 fd, saved;

	tmp = slash == NULL ? xasprintf(".%s.XXXXXX", path) :
	    xasprintf("%.*s/.%s.XXXXXX", (int)(slash - path), path, slash + 1);
	if ((fd = mkostemp(tmp, O_CLOEXEC)) == -1) {
		free(tmp);
		return (-1);
	}
	if (fchmod(fd, 0644) == -1)
		goto fail;
	while (off < len) {
		if ((n = write(fd, text + off, len - off)) == -1 &&
		    errno == EINTR)
			continue;
		if (n == -1)
			goto fail;
		off += (size_t)n;
	}
	if (fsync(fd) == -1)
		goto fail;
	n = close(fd);
	fd = -1;
	if (n == -1 || rename(tmp, path) == -1)
		goto fail;
	free(tmp);
	return (0);
fail:
	saved = errno;
	if (fd != -1)
		(void)close(fd);
	(void)unlink(tmp);
	free(tmp);
	errno = saved;
	return (-1);
}
