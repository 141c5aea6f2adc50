/* SPDX-License-Identifier: MIT */
/*
 * The supervisor's wait while it holds the lock: the signals it collects
 * (supervise.c) and, while it holds, an operator's release --force or a
 * newer run's cancel (--cancel-running; the calls are lock-listen.c's).
 * One poll() waits for both: the signals, still blocked, are read from a
 * signalfd, as sigtimedwait() would take them, so that a cancel, a signal
 * and the command's end are each heard at once.
 *
 * A cancel is not a lost lock: the lock is still ours and stays renewed
 * while the command stops.  It gets --lost-signal at once and SIGKILL
 * after the grace the canceller asked for; then the lock is released as
 * at any end, and run exits with --cancelled-exit-code.
 */

#include <sys/signalfd.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "redlock.h"
#include "supervise-impl.h"

static void	 supervise_cancel(struct supervisor *);
static void	 supervise_forced(struct supervisor *);

/* Listen if asked to, on a signalfd of what sigtimedwait() waited for. */
void
supervise_listen_open(struct supervisor *s)
{
	s->sig_fd = -1;
	if (!s->opts->listens)
		return;
	s->sig_fd = signalfd(-1, &s->wait_set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (s->sig_fd == -1) {
		/* Signals are still taken by sigtimedwait(); only a cancel
		 * or a forced release is not heard at once. */
		log_info("signalfd: %s: not listening for cancels",
		    strerror(errno));
		return;
	}
	s->npfd = 1 + lock_nservers(s->lock);
	s->pfd = xcalloc(s->npfd, sizeof(*s->pfd));
}

void
supervise_listen_close(struct supervisor *s)
{
	lock_listen_stop(s->lock);
	if (s->sig_fd != -1)
		(void)close(s->sig_fd);
	s->sig_fd = -1;
	free(s->pfd);
	s->pfd = NULL;
}

/*
 * Wait until wake_ns (-1: no deadline) for a signal, or a cancel while
 * the lock is ours and not lost.  Returns the signal, or -1 as
 * sigtimedwait() does when none came.
 */
int
supervise_listen_wait(struct supervisor *s, int64_t wake_ns)
{
	struct signalfd_siginfo	 si;
	int64_t			 now = clock_mono_ns(), wait_ns;
	size_t			 n = 1;
	int			 is_listening;

	is_listening = !s->is_lost && !s->is_cancelled;
	if (is_listening)
		lock_listen_start(s->lock);
	wait_ns = wake_ns == -1 ? -1 : wake_ns > now ? wake_ns - now : 0;
	s->pfd[0].fd = s->sig_fd;
	s->pfd[0].events = POLLIN;
	s->pfd[0].revents = 0;
	if (is_listening)
		n += lock_listen_poll(s->lock, s->pfd + 1, s->npfd - 1,
		    &wait_ns);
	/* Woken early by clock_poll_ms()'s cap, the caller waits again. */
	if (poll(s->pfd, n, clock_poll_ms(wait_ns)) == -1)
		return (-1);	/* EINTR */
	if (is_listening)
		switch (lock_listen_events(s->lock, s->pfd + 1, n - 1)) {
		case LOCK_HEARD_FORCE:
			supervise_forced(s);
			break;
		case LOCK_HEARD_CANCEL:
			supervise_cancel(s);
			break;
		default:
			break;
		}
	if (!(s->pfd[0].revents & POLLIN) ||
	    read(s->sig_fd, &si, sizeof(si)) != (ssize_t)sizeof(si))
		return (-1);
	return ((int)si.ssi_signo);
}

/*
 * A newer run asked us to stop: the command's signal, SIGKILL later.  The
 * signal first: the newer run waits for the command's end, and the line
 * and the listening's connections can wait for the signal.
 */
static void
supervise_cancel(struct supervisor *s)
{
	s->is_cancelled = 1;
	/* After the command's own end: its status stands (supervise_run).
	 * That end may be waiting unread beside the cancel (we were
	 * stopped, or busy): what the guardian said is heard first. */
	supervise_hear(s);
	s->is_late_end = s->is_exited;
	supervise_tell(s, SUPERVISE_LOST, s->opts->lost_signal);
	log_warnx("%s", lock_error(s->lock));
	lock_listen_stop(s->lock);
	s->cancel_kill_ns = clock_mono_ns() +
	    clock_ms_to_ns(lock_cancel_grace_ms(s->lock));
}

/*
 * An operator removed our hold (release --force): the lock is not ours
 * any more, and the next holder may already run.  The loop's next turn
 * tells the job at once, as for a lost lock (supervise_lose_due), and
 * leaves the key alone at the end.
 */
static void
supervise_forced(struct supervisor *s)
{
	s->is_forced = 1;
	supervise_hear(s);	/* as for a cancel: the command's end first */
	s->is_late_end = s->is_exited;
	s->lost_not_owner = 1;
	lock_listen_stop(s->lock);
}

/* The grace of a cancel is over: kill what is left of the job. */
void
supervise_cancel_due(struct supervisor *s, int64_t now)
{
	if (!s->is_cancelled || s->is_killed || now < s->cancel_kill_ns)
		return;
	log_info("lock '%s': the cancelled command is still running: "
	    "killing it", lock_name(s->lock));
	supervise_tell(s, SUPERVISE_KILL, SIGKILL);
	s->is_killed = 1;
}
