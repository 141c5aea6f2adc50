/* SPDX-License-Identifier: MIT */
/*
 * Help text, generated from the command table (cmd.c, cmd-<verb>.c) and
 * the option table (options.c), never written per command: a verb's
 * synopsis, summary, options with their defaults, and example; the list
 * of commands with the global options.  Wrapped to 80 columns.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redlock.h"

#define HELP_COLS	80
#define HELP_DESC_COL	26	/* where an option's description starts */

static const char *help_word_end(const char *, int);
static void	 help_wrap(size_t, size_t, const char *, int);
static void	 help_option(const struct options_def *,
		     const struct cmd_entry *);

/*
 * The end of the word at p.  With keep_groups, a blank inside [...], (...)
 * or a quoted '...' does not end it (an apostrophe inside a word is no
 * quote), so that "[-n | -w WAIT]" stays on one line.
 */
static const char *
help_word_end(const char *p, int keep_groups)
{
	const char	*start = p;
	size_t		 depth = 0;
	int		 quoted = 0;

	for (; *p != '\0'; p++) {
		if (*p == ' ' && (!keep_groups || (depth == 0 && !quoted)))
			break;
		if (*p == '\'' && (quoted || p == start || p[-1] == ' '))
			quoted = !quoted;
		else if (!quoted && (*p == '[' || *p == '('))
			depth++;
		else if (!quoted && (*p == ']' || *p == ')') && depth > 0)
			depth--;
	}
	return (p);
}

/*
 * Print text and a newline on stdout, the cursor being at column col just
 * after the caller's lead-in, breaking lines at blanks so that none passes
 * HELP_COLS; continuation lines start at column indent.  With keep_groups,
 * a group (help_word_end) that fits on a line is never broken.
 */
static void
help_wrap(size_t col, size_t indent, const char *text, int keep_groups)
{
	const char	*p = text, *w;
	size_t		 len;
	int		 at_start = 1;

	for (;;) {
		p += strspn(p, " ");
		if (*p == '\0')
			break;
		w = p;
		p = help_word_end(w, keep_groups);
		if ((size_t)(p - w) > HELP_COLS - indent)
			p = help_word_end(w, 0);
		len = (size_t)(p - w);
		if (!at_start && col + 1 + len > HELP_COLS) {
			(void)printf("\n%*s", (int)indent, "");
			col = indent;
			at_start = 1;
		}
		if (!at_start) {
			(void)putchar(' ');
			col++;
		}
		(void)printf("%.*s", (int)len, w);
		col += len;
		at_start = 0;
	}
	(void)putchar('\n');
}

/*
 * One option: "  -t, --ttl TTL", then what it does and its default with
 * verb e (NULL: among the global options).
 */
static void
help_option(const struct options_def *d, const struct cmd_entry *e)
{
	const struct option	*o = &d->getopt.opt;
	const char		*dflt = options_default(d, e);
	const char		*open = "", *close = "";
	char			*name, *text;
	int			 col;

	/* An optional argument only ever follows an '=': --opt[=ARG]. */
	if (d->arg != NULL)
		open = o->has_arg == optional_argument ? "[=" : " ";
	if (d->arg != NULL && o->has_arg == optional_argument)
		close = "]";
	if (o->val < 256)
		name = xasprintf("  -%c, --%s%s%s%s", o->val, o->name, open,
		    d->arg != NULL ? d->arg : "", close);
	else
		name = xasprintf("      --%s%s%s%s", o->name, open,
		    d->arg != NULL ? d->arg : "", close);
	col = printf("%s", name);
	if (col < 0 || (size_t)col + 2 > HELP_DESC_COL) {
		(void)putchar('\n');
		col = 0;
	}
	(void)printf("%*s", HELP_DESC_COL - col, "");
	if (dflt != NULL)
		text = xasprintf("%s (default: %s)", d->help, dflt);
	else
		text = xstrdup(d->help);
	help_wrap(HELP_DESC_COL, HELP_DESC_COL, text, 1);
	free(text);
	free(name);
}

/* redlock-cli help COMMAND, redlock-cli COMMAND --help. */
void
help_print_command(const struct cmd_entry *e)
{
	char	*lead;
	size_t	 i;
	int	 col;

	lead = xasprintf("usage: %s %s ", PROGNAME, e->name);
	col = printf("%s", lead);
	help_wrap(col < 0 ? 0 : (size_t)col, strlen(lead), e->usage, 1);
	free(lead);
	(void)printf("\n");
	help_wrap(0, 0, e->summary, 0);
	(void)printf("\noptions:\n");
	for (i = 0; e->options[i] != 0; i++)
		help_option(options_find(e->options[i]), e);
	help_option(options_find(OPT_HELP), e);
	(void)printf("and the global options, before or after the command: "
	    "see '%s help'\n\nexample:\n  %s\n", PROGNAME, e->example);
}

/* redlock-cli help, redlock-cli --help: the commands, the global options. */
void
help_print_all(void)
{
	const struct cmd_entry		*e;
	const struct options_def	*d;
	size_t				 i;

	(void)printf("usage: %s [global options] command KEY [options]\n"
	    "\ncommands:\n", PROGNAME);
	for (i = 0; (e = cmd_at(i)) != NULL; i++)
		(void)printf("  %-8s %s\n", e->name, e->summary);
	(void)printf("\nglobal options (before or after the command):\n");
	for (d = options_defs; d->getopt.opt.name != NULL; d++)
		if (d->getopt.is_global && d->help != NULL)
			help_option(d, NULL);
	(void)printf("\n");
	help_wrap(0, 5, "URL: redis://[[user]:pass@]host[:port][/db], "
	    "rediss://..., unix:///path[?db=N], "
	    "redis+cluster://h1:p1,h2:p2, "
	    "redis-sentinel://h1:p1,h2:p2/master", 0);
	help_wrap(0, 5, "DUR: 250ms, 30s, 5m, 1h, 1d, 1.5s, 1h30m, 1h 30m; a "
	    "bare number is seconds", 0);
	(void)printf("\n");
	help_wrap(0, 0, "see '" PROGNAME " help COMMAND' for the options of a "
	    "command, and " PROGNAME "(1) for the exit status and the "
	    "environment", 0);
}
