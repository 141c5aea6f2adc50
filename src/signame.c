/* SPDX-License-Identifier: MIT */
/*
 * Signal names for --lost-signal: "TERM", "SIGTERM" or "15", as kill(1).
 */

#include <ctype.h>
#include <signal.h>
#include <string.h>
#include <strings.h>

#include "redlock.h"

static const struct {
	const char	*name;
	int		 sig;
} signames[] = {
	{ "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT },
	{ "ILL", SIGILL }, { "TRAP", SIGTRAP }, { "ABRT", SIGABRT },
	{ "BUS", SIGBUS }, { "FPE", SIGFPE }, { "KILL", SIGKILL },
	{ "USR1", SIGUSR1 }, { "SEGV", SIGSEGV }, { "USR2", SIGUSR2 },
	{ "PIPE", SIGPIPE }, { "ALRM", SIGALRM }, { "TERM", SIGTERM },
	{ "CHLD", SIGCHLD }, { "CONT", SIGCONT }, { "STOP", SIGSTOP },
	{ "TSTP", SIGTSTP }, { "TTIN", SIGTTIN }, { "TTOU", SIGTTOU },
	{ "URG", SIGURG }, { "XCPU", SIGXCPU }, { "XFSZ", SIGXFSZ },
	{ "VTALRM", SIGVTALRM }, { "PROF", SIGPROF }, { "WINCH", SIGWINCH },
	{ "IO", SIGIO }, { "PWR", SIGPWR }, { "SYS", SIGSYS },
	{ NULL, 0 }
};

/* Returns the signal number, or -1. */
int
signame_parse(const char *s)
{
	const char	*errstr;
	long long	 n;
	int		 i;

	if (isdigit((unsigned char)*s))
		return (number_parse(s, 1, NSIG - 1, &n, &errstr) == 0 ?
		    (int)n : -1);
	if (strncasecmp(s, "SIG", 3) == 0)
		s += 3;
	for (i = 0; signames[i].name != NULL; i++)
		if (strcasecmp(s, signames[i].name) == 0)
			return (signames[i].sig);
	return (-1);
}

const char *
signame_name(int sig)
{
	int i;

	for (i = 0; signames[i].name != NULL; i++)
		if (signames[i].sig == sig)
			return (signames[i].name);
	return ("?");
}
