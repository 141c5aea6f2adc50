/* SPDX-License-Identifier: MIT */
/*
 * The nearest valid spelling of a mistyped option or command, for the
 * "did you mean" of its usage error: '--tll' is '--ttl', '-json' is
 * '--json', 'acq' is 'acquire'.  A guess is offered only when it is close
 * (at most two edits, and fewer than half the word), so that a word of
 * another program's is not given a meaning it does not have.  Reads the
 * option and command tables; prints nothing.
 */

#include <stdio.h>
#include <string.h>

#include "redlock.h"
#include "options-impl.h"

/* Words longer than this are compared no further: no guess. */
#define HINT_MAX	64

static size_t	 hint_distance(const char *, const char *);
static int	 hint_close(const char *, const char *, size_t *);
static int	 options_offered(const struct cmd_entry *,
		     const struct options_def *);

/*
 * Whether d may be offered for verb e: one of its options, or before any
 * verb (e NULL), any option at all, since the verb may come later.
 */
static int
options_offered(const struct cmd_entry *e, const struct options_def *d)
{
	return (e == NULL || options_takes(e, d->getopt.opt.val));
}

/*
 * Edits (insert, delete, replace, swap of two neighbours) from a to b,
 * or HINT_MAX when either is too long to bother.
 */
static size_t
hint_distance(const char *a, const char *b)
{
	size_t	d[HINT_MAX + 1][HINT_MAX + 1], la = strlen(a), lb = strlen(b);
	size_t	i, j, best;

	if (la > HINT_MAX || lb > HINT_MAX)
		return (HINT_MAX);
	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return (d[la][lb]);
}

/* Whether word is close enough to name, and nearer than *best so far. */
static int
hint_close(const char *word, const char *name, size_t *best)
{
	size_t	n = hint_distance(word, name);

	/* A start of three letters or more ('acq') is as near as a typo. */
	if (strlen(word) >= 3 && strncmp(word, name, strlen(word)) == 0)
		n = 1;
	if (n > 2 || n * 2 >= strlen(word) || n >= *best)
		return (0);
	*best = n;
	return (1);
}

/*
 * The long option of verb e (NULL: of any verb) nearest to typed,
 * as "--name", into buf; NULL when none is close.  "-name" with one dash
 * is "--name" when that is an option of e.
 */
const char *
options_nearest(const char *typed, const struct cmd_entry *e, char *buf,
    size_t len)
{
	const struct options_def	*d;
	const char			*word, *found = NULL;
	size_t				 best = HINT_MAX;
	int				 pass;

	if (typed[0] != '-')
		return (NULL);
	word = typed + (typed[1] == '-' ? 2 : 1);
	/* A command's own options first: of two as near, '--ttl' wins
	 * over the global '--tls'. */
	for (pass = 0; pass < 2 && found == NULL; pass++)
		for (d = options_defs; d->getopt.opt.name != NULL; d++) {
			if (d->getopt.is_global != pass ||
			    !options_offered(e, d))
				continue;
			if (typed[1] != '-' ? strcmp(word,
			    d->getopt.opt.name) == 0 : hint_close(word,
			    d->getopt.opt.name, &best))
				found = d->getopt.opt.name;
		}
	if (found == NULL)
		return (NULL);
	(void)snprintf(buf, len, "--%s", found);
	return (buf);
}

/* The command nearest to word, or NULL when none is close. */
const char *
options_nearest_command(const char *word)
{
	const struct cmd_entry	*e;
	const char		*found = NULL;
	size_t			 i, best = HINT_MAX;

	for (i = 0; (e = cmd_at(i)) != NULL; i++)
		if (hint_close(word, e->name, &best))
			found = e->name;
	return (found);
}
