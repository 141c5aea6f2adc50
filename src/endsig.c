/* SPDX-License-Identifier: MIT */
/*
 * The signals that end us by default (and that run passes on to its
 * command), held while a lock may be ours but nobody answers for it yet.
 *
 * Killed between the server's "taken" and our reading of it, we would
 * leave a lock behind until its TTL, with nobody knowing its token.  So
 * acquire and run hold these signals from their first attempt on, let
 * them through only while merely waiting (lock-wait.c: no lock is ours
 * then), and once the lock is taken, look whether one came: if so, give
 * the lock back first, then let the signal do what it would have done.
 */

#include <signal.h>
#include <string.h>
#include <time.h>

#include "redlock.h"

const int endsig_list[] = {
	SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, 0
};

/* Hold them; *caller gets the mask we were started with.  0 or -1. */
int
endsig_hold(sigset_t *caller)
{
	sigset_t	set;
	int		i;

	if (sigemptyset(&set) == -1)
		return (-1);
	for (i = 0; endsig_list[i] != 0; i++)
		if (sigaddset(&set, endsig_list[i]) == -1)
			return (-1);
	return (sigprocmask(SIG_BLOCK, &set, caller));
}

/*
 * One that came meanwhile and would end us (its disposition is the
 * default), or 0.  One that we were started ignoring is dropped, as it
 * would have been.
 */
int
endsig_pending(void)
{
	struct sigaction	sa;
	struct timespec		zero = { 0, 0 };
	sigset_t		pending, one;
	int			i;

	if (sigpending(&pending) == -1)
		return (0);
	for (i = 0; endsig_list[i] != 0; i++) {
		if (sigismember(&pending, endsig_list[i]) != 1 ||
		    sigaction(endsig_list[i], NULL, &sa) == -1)
			continue;
		if (sa.sa_handler != SIG_IGN)
			return (endsig_list[i]);
		if (sigemptyset(&one) == 0 &&
		    sigaddset(&one, endsig_list[i]) == 0)
			(void)sigtimedwait(&one, NULL, &zero);
	}
	return (0);
}

/* Back to the caller's mask: a signal held meanwhile takes effect now. */
void
endsig_restore(const sigset_t *caller)
{
	(void)sigprocmask(SIG_SETMASK, caller, NULL);
}

/*
 * SIGPIPE is ignored while we run: a reader of our output that goes away
 * must not end us between taking a lock and reporting it (write errors
 * are checked instead).  The command gets the disposition we were
 * started with: supervise-spawn.c restores it in the child, before exec.
 */
static struct sigaction	 endsig_old_sigpipe;
static int		 endsig_have_old_sigpipe;

void
endsig_ignore_sigpipe(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	if (sigemptyset(&sa.sa_mask) == 0 &&
	    sigaction(SIGPIPE, &sa, &endsig_old_sigpipe) == 0)
		endsig_have_old_sigpipe = 1;
}

void
endsig_restore_sigpipe(void)
{
	if (endsig_have_old_sigpipe)
		(void)sigaction(SIGPIPE, &endsig_old_sigpipe, NULL);
}
