/* SPDX-License-Identifier: MIT */
/*
 * --metrics-file's two floors, and what they share: metrics.c counts a
 * run and writes the file; metrics-read.c, below it, reads the previous
 * file into the same struct metrics_file, strictly.
 */

#ifndef METRICS_IMPL_H
#define METRICS_IMPL_H

#include <stdint.h>

/* A file of ours is far smaller: thousands of locks. */
#define METRICS_READ_MAX	(1024 * 1024)
/* The outcomes counted: the runs that ended (RUN_ERROR is none). */
#define METRICS_NOUTCOMES	(RUN_BUSY + 1)
/* A value as we write it: "1733420000.123" */
#define METRICS_VALUE_MAX	32

enum metrics_gauge {
	MG_RUN,
	MG_SUCCESS,
	MG_EXIT,
	MG_WAIT,
	MG_HELD,
	MG_COUNT	/* the counter, redlock_runs_total */
};

/* Each metric's name and HELP text, in enum metrics_gauge's order. */
struct metrics_def {
	const char	*name;
	const char	*help;
};
extern const struct metrics_def metrics_defs[MG_COUNT + 1];

/* One lock's lines. */
struct metrics_key {
	char		*key;			/* unescaped */
	char		 gauge[MG_COUNT][METRICS_VALUE_MAX];	/* "": none */
	uint64_t	 runs[METRICS_NOUTCOMES];
	unsigned	 counted;	/* read: a bit for each outcome seen */
};

struct metrics_file {
	struct metrics_key	*keys;
	size_t			 n;
};

/* metrics-read.c */
int	 metrics_read(const char *, struct metrics_file *, char *, size_t);
struct metrics_key *metrics_key(struct metrics_file *, const char *);
void	 metrics_free(struct metrics_file *);

#endif /* METRICS_IMPL_H */
