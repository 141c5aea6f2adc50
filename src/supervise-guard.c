/* SPDX-License-Identifier: MIT */
/*
 * The guardian: nothing of a job may outlive its lock, not even when
 * redlock-cli itself is killed (SIGKILL, the OOM killer), and not the
 * processes a job leaves behind either (`backup.sh &`, `nohup upload &`,
 * a daemon's double fork and setsid()).
 *
 * When a process dies, its children are re-parented to the nearest
 * ancestor that is a subreaper (PR_SET_CHILD_SUBREAPER), or else to init.
 * So a subreaper that is an ancestor of the whole job sees every process
 * the job ever leaves behind, whatever its session or group: each one
 * ends up as its child.  And when such a subreaper's waitpid() says
 * ECHILD, no process of the job is left at all: an orphan would have
 * become its child, and a child is waitable until reaped.  That is how
 * "the command and everything it started have exited" is known, without
 * a race against a grandchild being re-parented just after the command
 * exited: it is re-parented before its parent can be reaped.
 *
 * That ancestor cannot be redlock-cli itself, since it must outlive it:
 * the guardian is a child of redlock-cli (a fork, before the command; for
 * a run that waits, while it waits: supervise_pre_start()),
 * the subreaper of the job and the parent of the command (a vfork).
 *
 *   redlock-cli killed: its end of the socket pair closes, the guardian
 *	reads EOF, SIGKILLs its children (the command's group with them),
 *	reaps them, and again for what was re-parented meanwhile, until
 *	waitpid() says there is no child left; then it exits.  A few
 *	milliseconds, well before the lock can expire.
 *   the guardian killed: the command has PR_SET_PDEATHSIG(SIGKILL)
 *	towards it, and what else is left is re-parented to redlock-cli,
 *	itself a subreaper, which kills it (supervise.c).
 *
 * Alternatives that were not taken: a cgroup (freeze and kill the lot)
 * needs a delegated hierarchy that an unprivileged user does not usually
 * have; a PID namespace (its init's death kills the rest) needs
 * CAP_SYS_ADMIN or user namespaces, often disabled; PR_SET_PDEATHSIG
 * reaches only the process that set it; /proc/PID/environ markers can be
 * cleared by the process itself.
 *
 * The guardian has a process group of its own, so that what is sent to
 * redlock-cli's group (kill %1, kill -9 %1) does not reach it, and blocks
 * every signal: only SIGKILL and SIGSTOP sent to it by pid do.  It never
 * touches the lock: the forked copies of redlock-cli's connections are
 * only closed by its _exit() (one forked during a wait closes them).  It
 * waits in poll() on the socket and a signalfd for SIGCHLD, so it costs
 * no CPU while the job runs.
 */

#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "redlock.h"
#include "supervise-impl.h"

/* The longest pause between two rounds of a kill (a stuck process). */
#define GUARD_SWEEP_MAX_MS	256
/* Without /proc, the descriptors a forked guardian looks at for ours. */
#define GUARD_CLOSE_MAX		65536
/* Signals passed on to a command not started yet, kept until it runs. */
#define GUARD_EARLY_MAX		32

/* What redlock-cli asked before the command started (we were stopped). */
struct guard_early {
	int	sigs[GUARD_EARLY_MAX];	/* to pass on, in order */
	size_t	n;
};

deadfn static void supervise_guard_serve(struct guard *,
		     struct supervise_spawn *);
deadfn static void supervise_guard_not_started(struct guard *, int);
static int	 supervise_guard_setup(struct guard *);
static void	 supervise_guard_close_ours(int);
static int	 supervise_guard_early(struct guard *, struct guard_early *);
static void	 supervise_guard_tell(struct guard *, int, int, int);
static int	 supervise_guard_reap(struct guard *);
static void	 supervise_guard_reaped(struct guard *);
static void	 supervise_guard_request(struct guard *);
static void	 supervise_guard_signal(struct guard *, int, int);
static void	 supervise_guard_sweep(struct guard *);
static void	 supervise_guard_wait(struct guard *, int);
deadfn static void supervise_guard_linger(struct guard *);

/*
 * In the guardian of supervise_pre_start(): wait, with no child and
 * every signal blocked, until the lock is ours, then start the command
 * as supervise_guard_main() does.  redlock-cli gone (EOF) or giving up
 * (it closes its end): nothing to do but exit.
 */
void
supervise_guard_pre_main(struct guard *g, char **argv, const char *key,
    const sigset_t *caller_mask)
{
	struct supervise_spawn	sp;
	struct supervise_go	go;
	struct sigaction	caller_chld;
	sigset_t		mask = *caller_mask;
	size_t			first_own;
	ssize_t			n;

	supervise_guard_close_ours(g->fd);
	if (sigaction(SIGCHLD, NULL, &caller_chld) == -1 ||
	    supervise_guard_setup(g) == -1)
		_exit(EXIT_UNAVAILABLE);
	while ((n = recv(g->fd, &go, sizeof(go), 0)) == -1 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(go) || go.op != SUPERVISE_GO)
		_exit(EXIT_OK);
	go.token[TOKEN_HEX_LEN] = '\0';
	memset(&sp, 0, sizeof(sp));
	sp.argv = argv;
	sp.envp = supervise_environ(key, go.token, go.fence, go.ttl_ms,
	    &first_own);
	sp.old_mask = &mask;
	sp.old_chld = &caller_chld;
	sp.tty_fd = go.take_tty ? STDIN_FILENO : -1;
	supervise_guard_serve(g, &sp);
}

/*
 * In a guardian forked while redlock-cli waits: close our copies of its
 * descriptors, but for the one we talk over.  Its connections are among
 * them: a copy kept open would keep one that redlock-cli gives up alive
 * on the server, with the BZPOPMIN and the attempt queued behind it.
 * Ours are all close-on-exec; those the command is to inherit are not.
 */
static void
supervise_guard_close_ours(int keep)
{
	struct dirent	*e;
	DIR		*d;
	long		 fd, max;
	int		 flags;

	if ((d = opendir("/proc/self/fd")) == NULL) {
		max = sysconf(_SC_OPEN_MAX);
		if (max < 0 || max > GUARD_CLOSE_MAX)
			max = GUARD_CLOSE_MAX;
		for (fd = 0; fd < max; fd++)
			if (fd != keep && (flags = fcntl((int)fd, F_GETFD)) !=
			    -1 && (flags & FD_CLOEXEC))
				(void)close((int)fd);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;	/* . and .. */
		fd = strtol(e->d_name, NULL, 10);
		if (fd == keep || fd == dirfd(d))
			continue;
		if ((flags = fcntl((int)fd, F_GETFD)) != -1 &&
		    (flags & FD_CLOEXEC))
			(void)close((int)fd);
	}
	(void)closedir(d);
}

/*
 * Own group, subreaper, every signal blocked, SIGCHLD as a descriptor
 * (and not ignored, as it may have been by whoever started us: our
 * children would then be reaped by the kernel, unseen).  0, or -1.
 */
static int
supervise_guard_setup(struct guard *g)
{
	struct sigaction	dfl;
	sigset_t		all, chld;

	g->self = getpid();
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	if (setpgid(0, 0) == -1 || prctl(PR_SET_CHILD_SUBREAPER, 1) == -1 ||
	    sigfillset(&all) == -1 ||
	    sigprocmask(SIG_SETMASK, &all, NULL) == -1 ||
	    sigemptyset(&dfl.sa_mask) == -1 ||
	    sigaction(SIGCHLD, &dfl, NULL) == -1 ||
	    sigemptyset(&chld) == -1 || sigaddset(&chld, SIGCHLD) == -1)
		return (-1);
	g->sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	return (g->sfd == -1 ? -1 : 0);
}

/* The guardian's life: start the command, then answer until it is over. */
void
supervise_guard_main(struct guard *g, struct supervise_spawn *sp)
{
	if (supervise_guard_setup(g) == -1)
		supervise_guard_not_started(g, errno);
	supervise_guard_serve(g, sp);
}

/* The command could not be started, or must not be: say why (err). */
static void
supervise_guard_not_started(struct guard *g, int err)
{
	struct supervise_msg m;

	memset(&m, 0, sizeof(m));
	m.event = SUPERVISE_STARTED;
	m.pid = -1;
	m.err = err;
	(void)send(g->fd, &m, sizeof(m), MSG_NOSIGNAL);
	_exit(EXIT_UNAVAILABLE);
}

/*
 * Set up: start the command, say so, and answer until the job is over.
 * Not if the lock was given up before we could start it (ENOLCK).
 */
static void
supervise_guard_serve(struct guard *g, struct supervise_spawn *sp)
{
	struct supervise_msg	m;
	struct guard_early	early;
	struct pollfd		pfd[2];
	size_t			i;

	if (supervise_guard_early(g, &early) == -1)
		supervise_guard_not_started(g, ENOLCK);
	/* The command says SUPERVISE_STARTED itself, before exec. */
	sp->tell_fd = g->fd;
	memset(&m, 0, sizeof(m));
	m.event = SUPERVISE_EXEC_FAILED;
	if ((m.pid = supervise_spawn(sp, &m.err)) == -1)
		supervise_guard_not_started(g, errno);
	g->cmd = m.pid;
	/* Not announced with a SIGCHLD: redlock-cli reads it with our next
	 * word (supervise_hear()), renewing the lock meanwhile. */
	if (m.err != 0 && send(g->fd, &m, sizeof(m), MSG_NOSIGNAL) == -1) {
		supervise_guard_sweep(g);	/* nobody to answer to */
		_exit(EXIT_OK);
	}
	for (i = 0; i < early.n; i++)
		supervise_guard_signal(g, early.sigs[i], 0);
	for (;;) {
		pfd[0].fd = g->fd;
		pfd[0].events = POLLIN;
		pfd[1].fd = g->sfd;
		pfd[1].events = POLLIN;
		if (poll(pfd, 2, -1) == -1) {
			if (errno == EINTR)
				continue;
			supervise_guard_sweep(g);
			_exit(EXIT_UNAVAILABLE);
		}
		if (pfd[1].revents != 0)
			supervise_guard_reaped(g);
		if (pfd[0].revents != 0)
			supervise_guard_request(g);
	}
}

/*
 * Before the command starts: what redlock-cli asked meanwhile, which is
 * nothing unless someone stopped us (SIGSTOP) on the way while it renewed.
 * -1 if it has given the lock up since (lost, forced away, cancelled: the
 * signal, then SIGKILL) or is gone: the command must not start then, on a
 * lock that may be someone else's.  Else 0, with the signals to pass on
 * once it runs in e, in order (the first GUARD_EARLY_MAX of them).
 */
static int
supervise_guard_early(struct guard *g, struct guard_early *e)
{
	struct supervise_req	r;
	ssize_t			n;

	e->n = 0;
	for (;;) {
		n = recv(g->fd, &r, sizeof(r), MSG_DONTWAIT);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return (0);
		if (n != (ssize_t)sizeof(r) || r.op != SUPERVISE_PASS)
			return (-1);
		if (e->n < GUARD_EARLY_MAX)
			e->sigs[e->n++] = r.sig;
	}
}

/*
 * Tell redlock-cli (event, with the command's status, left and is_last:
 * this is our last word, nothing of the job runs any more, and we exit
 * once it closes its end, so it need not wait for that).  It waits in
 * sigtimedwait() for SIGCHLD, so it is woken with one: a message is news
 * about its child.  Only while it is still our parent, so alive, its pid
 * not someone else's.  If it is gone, the EOF that poll() sees next says
 * so.
 */
static void
supervise_guard_tell(struct guard *g, int event, int left, int is_last)
{
	struct supervise_msg m;

	memset(&m, 0, sizeof(m));
	m.event = event;
	m.pid = g->cmd;
	m.status = g->cmd_status;
	m.left = left;
	m.is_last = is_last;
	if (event == SUPERVISE_EXITED)
		g->is_told = 1;
	while (send(g->fd, &m, sizeof(m), MSG_NOSIGNAL) == -1 &&
	    errno == EINTR)
		;
	if (getppid() == g->rl)
		(void)kill(g->rl, SIGCHLD);
}

/*
 * Reap what has ended; note the command's end, tell its stops.  Returns
 * 1 when no child at all is left (so no process of the job), else 0.
 */
static int
supervise_guard_reap(struct guard *g)
{
	pid_t	w;
	int	status;

	for (;;) {
		w = waitpid(-1, &status, WNOHANG | WUNTRACED);
		if (w == 0)
			return (0);
		if (w == -1 && errno == EINTR)
			continue;
		if (w == -1)
			return (1);	/* ECHILD */
		if (w != g->cmd || g->is_cmd_reaped)
			continue;	/* something the job left behind */
		if (WIFSTOPPED(status)) {
			supervise_guard_tell(g, SUPERVISE_STOPPED, 0, 0);
			continue;
		}
		g->is_cmd_reaped = 1;
		g->cmd_status = status;
	}
}

/*
 * After a SIGCHLD.  Once the command has exited: say so, with how many
 * processes it left running, and exit when nothing is left (if that was
 * our word, once redlock-cli has released the lock:
 * supervise_guard_linger()), or at once with --release-on-exit (what is
 * left is then re-parented upwards).
 */
static void
supervise_guard_reaped(struct guard *g)
{
	struct signalfd_siginfo	si;
	int			done;

	while (read(g->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		;
	done = supervise_guard_reap(g);
	if (!g->is_cmd_reaped)
		return;
	if (!g->is_told) {
		supervise_guard_tell(g, SUPERVISE_EXITED, done ? 0 :
		    supervise_proc_signal_descendants(g->self, 0, 0), done);
		if (done)
			supervise_guard_linger(g);
	}
	/* Told before that some were left: our exit is the news now. */
	if (done || g->release_on_exit)
		_exit(EXIT_OK);
}

/*
 * Nothing of the job is left, and redlock-cli has been told: it releases
 * the lock now.  Our exit unmaps a copy of redlock-cli, and the scheduler
 * often runs the process we have just woken on our CPU, after us: exiting
 * now would delay the release, and so the next holder.  So wait
 * until redlock-cli closes its end, which it does once the lock is
 * released (or it died), and exit then, while the next holder starts.  A
 * request meanwhile has nothing left to act on.  Nothing else can wake
 * us: every signal is blocked, and no child is left.
 */
static void
supervise_guard_linger(struct guard *g)
{
	struct supervise_req	r;
	ssize_t			n;

	for (;;) {
		n = recv(g->fd, &r, sizeof(r), 0);
		if (n == 0 || (n == -1 && errno != EINTR))
			_exit(EXIT_OK);
	}
}

/* One request from redlock-cli, or its end. */
static void
supervise_guard_request(struct guard *g)
{
	struct supervise_req	r;
	ssize_t			n;

	n = recv(g->fd, &r, sizeof(r), MSG_DONTWAIT);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n != (ssize_t)sizeof(r) || r.op == SUPERVISE_KILL) {
		/*
		 * EOF: redlock-cli is gone, and with nobody renewing it the
		 * lock expires: nothing of the job may run by then.  Or its
		 * lock is lost, and the time is up.
		 */
		supervise_guard_sweep(g);
		if (!g->is_told)
			supervise_guard_tell(g, SUPERVISE_EXITED, 0, 1);
		_exit(EXIT_OK);
	}
	supervise_guard_signal(g, r.sig, r.op == SUPERVISE_LOST);
}

/*
 * sig to the job.  With is_all (the lock is lost), to all of it: the
 * command's group and every other process that descends from us, in
 * whatever group or session.  Otherwise (a signal sent to redlock-cli):
 * while the command runs, to its process group, as timeout(1) does (the
 * command decides about processes it moved out of it); once it has
 * exited, to what it left behind, each process re-parented to us as if
 * it were a command of its own (to the group it leads, if it leads one).
 */
static void
supervise_guard_signal(struct guard *g, int sig, int is_all)
{
	/* Its leader is our unreaped child: the group id is still its. */
	if (!g->is_cmd_reaped && kill(-g->cmd, sig) == -1 && errno == ESRCH)
		(void)kill(g->cmd, sig);
	if (is_all) {
		/* The walk of /proc below is long, and the command, just
		 * woken on our CPU, would wait for it to end: it runs
		 * first. */
		(void)sched_yield();
		(void)supervise_proc_signal_descendants(g->self, sig,
		    g->is_cmd_reaped ? 0 : g->cmd);
	}
	else if (g->is_cmd_reaped)
		(void)supervise_proc_signal_children(g->self, sig);
}

/*
 * SIGKILL everything, until no child is left.  Each round kills every
 * descendant it finds; one forked meanwhile is a child of a killed one,
 * re-parented to us before that can be reaped, so the next round finds
 * it.  Rounds wait for a SIGCHLD (or a pause that doubles, for a process
 * that takes long to die) rather than spin.
 */
static void
supervise_guard_sweep(struct guard *g)
{
	int	wait_ms = 1;

	for (;;) {
		if (!g->is_cmd_reaped && kill(-g->cmd, SIGKILL) == -1)
			(void)kill(g->cmd, SIGKILL);
		(void)supervise_proc_signal_descendants(g->self, SIGKILL, 0);
		if (supervise_guard_reap(g))
			return;
		supervise_guard_wait(g, wait_ms);
		if (wait_ms < GUARD_SWEEP_MAX_MS)
			wait_ms *= 2;
	}
}

/* Wait up to ms for a SIGCHLD. */
static void
supervise_guard_wait(struct guard *g, int ms)
{
	struct signalfd_siginfo	si;
	struct pollfd		pfd;

	pfd.fd = g->sfd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, ms) > 0)
		while (read(g->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			;
}
