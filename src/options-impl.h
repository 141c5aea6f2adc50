/* SPDX-License-Identifier: MIT */
/*
 * The option parser's own header: what its files (options.c,
 * options-value.c, options-error.c) share.  Nothing else includes it; the
 * rest of the program sees the parser through redlock.h.
 */

#ifndef OPTIONS_IMPL_H
#define OPTIONS_IMPL_H

#include "redlock.h"

/* What one verb's parse has seen so far, beyond struct cmd_args. */
struct options_seen {
	int	 have_n;
	int	 have_w;
	int	 saw_dashdash;
};

/* options.c */
int	 options_takes(const struct cmd_entry *, int);

/* options-value.c: each returns 0, EXIT_USAGE, or -1 if ch is none of its */
int	 options_global(int, const char *, struct global_opts *);
int	 options_verb(int, const char *, struct cmd_args *,
	     struct options_seen *);

/* options-error.c */
int	 options_getopt_error(const char *, int, char **, int);
int	 options_misplaced(int, char **, int);

#endif
