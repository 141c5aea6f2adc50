/* SPDX-License-Identifier: MIT */
/*
 * The messages for a word getopt refused: an unknown option, a missing or
 * unwanted argument, or an option of a verb given before the verb.  Each
 * names the option as it was typed.
 */

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "redlock.h"
#include "options-impl.h"

static const char *options_typed(char **, int, char *, size_t);
static void	 options_unknown(const char *, const char *, const char *);
static const char *options_word_of(char **, int);

/*
 * The whole word that held the option getopt refused.  getopt moves on
 * to the next word only after the last letter of a cluster: "-Z" alone
 * or at the end is the word before optind, one refused in the middle
 * ("-json": 'j') is the word at optind.  argv ends with NULL.
 */
static const char *
options_word_of(char **argv, int optind_now)
{
	const char	*prev = argv[optind_now - 1], *cur = argv[optind_now];
	size_t		 n = strlen(prev);

	if (strncmp(prev, "--", 2) == 0 || optopt <= 0 || (prev[0] == '-' &&
	    n > 1 && prev[n - 1] == optopt) || cur == NULL || cur[0] != '-' ||
	    strchr(cur, optopt) == NULL)
		return (prev);
	return (cur);
}

/*
 * The option getopt just refused, as typed: "--name" without any
 * "=value", or "-x" alone out of a cluster.  buf holds the latter.
 */
static const char *
options_typed(char **argv, int optind_now, char *buf, size_t len)
{
	const char *word = argv[optind_now - 1];

	if (strncmp(word, "--", 2) == 0) {
		(void)snprintf(buf, len, "%.*s", (int)strcspn(word, "="), word);
		return (buf);
	}
	if (optopt > 0 && optopt < 128) {
		(void)snprintf(buf, len, "-%c", optopt);
		return (buf);
	}
	return (word);
}

/* Print the message for a getopt error ('?' or ':'). */
int
options_getopt_error(const char *verb, int ch, char **argv, int optind_now)
{
	const char	*word = argv[optind_now - 1];
	const char	*typed;
	char		 buf[64], prefix[64] = "";

	if (verb != NULL)
		(void)snprintf(prefix, sizeof(prefix), "%s: ", verb);
	typed = options_typed(argv, optind_now, buf, sizeof(buf));
	if (ch == ':')
		log_warnx("%soption '%s' requires an argument", prefix, typed);
	else if (strncmp(word, "--", 2) == 0 &&
	    word[strcspn(word, "=")] == '=' && optopt != 0)
		log_warnx("%soption '%s' does not take an argument", prefix,
		    typed);
	else
		options_unknown(verb, typed, options_word_of(argv,
		    optind_now));
	return (EXIT_USAGE);
}

/*
 * "unknown option", with the nearest valid spelling when there is one,
 * and where the valid ones are listed.  word is the whole word typed:
 * "-json" was taken by getopt for "-j", but meant "--json".
 */
static void
options_unknown(const char *verb, const char *typed, const char *word)
{
	const struct cmd_entry	*e = verb != NULL ? cmd_find(verb) : NULL;
	const char		*near;
	char			 buf[80], see[64];

	near = options_nearest(word[0] == '-' && word[1] != '-' &&
	    strlen(word) > 2 ? word : typed, e, buf, sizeof(buf));
	if (e != NULL)
		(void)snprintf(see, sizeof(see), "%s help %s", PROGNAME,
		    e->name);
	else
		(void)snprintf(see, sizeof(see), "%s --help", PROGNAME);
	if (near != NULL)
		log_warnx("%s%sunknown option '%s': did you mean '%s'? (see "
		    "'%s')", verb != NULL ? verb : "", verb != NULL ? ": " : "",
		    word[0] == '-' && word[1] != '-' && strlen(word) > 2 &&
		    strcmp(near + 2, word + 1) == 0 ? word : typed, near, see);
	else
		log_warnx("%s%sunknown option '%s' (see '%s')", verb != NULL ?
		    verb : "", verb != NULL ? ": " : "", typed, see);
}

/*
 * A first word that is no command: the nearest command, or for flock's
 * habit ("flock FILE CMD": 'redlock-cli nightly -- backup.sh'), the run
 * that was meant.
 */
void
options_unknown_command(int argc, char **argv)
{
	const char	*near = options_nearest_command(argv[0]);
	int		 i;

	for (i = 1; near == NULL && i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			log_warnx("unknown command '%s': to run a command "
			    "under lock '%s', type '%s run %s -- CMD' (see "
			    "'%s --help')", argv[0], argv[0], PROGNAME, argv[0],
			    PROGNAME);
			return;
		}
	if (near != NULL)
		log_warnx("unknown command '%s': did you mean '%s'? (see '%s "
		    "--help')", argv[0], near, PROGNAME);
	else
		log_warnx("unknown command '%s' (see '%s --help')", argv[0],
		    PROGNAME);
}

/*
 * An option getopt refused before the verb: if it is one of a verb's,
 * say where it goes, naming the verb given later on the line.  Returns 1
 * after the message, 0 when it is no option of ours at all.
 */
int
options_misplaced(int argc, char **argv, int optind_now)
{
	const struct options_def	*d;
	const struct cmd_entry		*e = NULL;
	const char			*typed;
	char				 buf[64];
	int				 i;

	typed = options_typed(argv, optind_now, buf, sizeof(buf));
	for (d = options_defs; d->getopt.opt.name != NULL; d++)
		if (strncmp(typed, "--", 2) == 0 ?
		    strcmp(typed + 2, d->getopt.opt.name) == 0 :
		    (typed[0] == '-' && typed[1] == d->getopt.opt.val &&
		    typed[2] == '\0'))
			break;
	if (d->getopt.opt.name == NULL || d->getopt.is_global)
		return (0);
	/*
	 * Its argument is no verb: skip the next word, unless it came as
	 * "--name=value".  (After "-t5s" the next word is "-t5s" itself.)
	 */
	i = optind_now;
	if (d->getopt.opt.has_arg == required_argument &&
	    (typed[1] != '-' || strchr(argv[optind_now - 1], '=') == NULL))
		i++;
	for (; i < argc && e == NULL; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		e = cmd_find(argv[i]);
	}
	if (e == NULL)
		log_warnx("%s is an option of a command: put it after the "
		    "command and its KEY", typed);
	else if (options_takes(e, d->getopt.opt.val))
		log_warnx("%s is an option of '%s': put it after '%s KEY'",
		    typed, e->name, e->name);
	else
		options_unknown(e->name, typed, options_word_of(argv,
		    optind_now));
	return (1);
}
