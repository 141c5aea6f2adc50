/* SPDX-License-Identifier: MIT */
/*
 * The option parser's own header: what its files share.  Nothing else
 * includes it; the rest of the program sees the parser through redlock.h.
 * Who calls whom (tests/lint/floors.py checks there is no circle):
 *
 *	options.c	-> options-value.c options-error.c options-table.c
 *			   help.c (for --help)
 *	options-error.c	-> options-table.c
 *	help.c		-> options-table.c
 *	options-value.c, options-table.c: none of the parser's
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

/* Where release and extend find the token that --token does not give. */
#define TOKEN_ENV	"REDLOCK_TOKEN"

/* options-table.c */
struct options_alias {
	int	 letter;	/* the short option typed */
	int	 id;		/* the option it is */
};
extern const struct options_alias options_short_aliases[];
int	 options_canonical(const struct cmd_entry *, int);
extern const size_t options_ndefs;
int	 options_listed(const struct cmd_entry *, int);
int	 options_takes(const struct cmd_entry *, int);
const struct options_def *options_optional_before(char **, int);

/* options-value.c: each returns 0, EXIT_USAGE, or -1 if ch is none of its */
int	 options_global(int, const char *, struct global_opts *);
int	 options_verb(int, const char *, struct cmd_args *,
	     struct options_seen *);

/* options-hint.c */
const char *options_nearest(const char *, const struct cmd_entry *, char *,
	     size_t);
const char *options_nearest_command(const char *);

/* options-error.c */
int	 options_getopt_error(const char *, int, char **, int);
int	 options_misplaced(int, char **, int);

#endif
