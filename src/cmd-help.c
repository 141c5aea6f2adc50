/* SPDX-License-Identifier: MIT */
/*
 * help [COMMAND]: the help of one command, or the list of them all, on
 * standard output.  Needs no server, so it works whatever the URLs say.
 */

#include <stdio.h>

#include "redlock.h"

static int	cmd_help_exec(struct global_opts *, struct cmd_args *);

static const int cmd_help_options[] = { 0 };

const struct cmd_entry cmd_help_entry = {
	.name = "help",
	.usage = "[COMMAND]",
	.summary = "print the help of COMMAND, or list the commands",
	.example = "redlock-cli help run",
	.options = cmd_help_options,
	.flags = CMD_TAKES_TOPIC,
	.exec = cmd_help_exec
};

static int
cmd_help_exec(struct global_opts *g, struct cmd_args *a)
{
	const struct cmd_entry *e;

	(void)g;
	if (a->key == NULL)
		help_print_all();
	else if ((e = cmd_find(a->key)) != NULL)
		help_print_command(e);
	else {
		log_warnx("unknown command '%s'", a->key);
		return (EXIT_USAGE);
	}
	return (EXIT_OK);
}
