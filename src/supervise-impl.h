/* SPDX-License-Identifier: MIT */
/*
 * Internals of the supervisor, shared by its files only:
 *
 *	supervise.c		redlock-cli's side: the lock, renewals, the
 *				signals sent to us, the lost lock
 *	supervise-reap.c	redlock-cli's side of the job: what the
 *				guardian says, what we ask it, its end
 *	supervise-guard.c	the guardian: a process of ours between
 *				redlock-cli and the command, the subreaper of
 *				the job, which outlives us long enough to kill
 *				it if we are killed
 *	supervise-spawn.c	starting the command (vfork, exec)
 *	supervise-proc.c	the guardian's children, as /proc lists them
 *	supervise-release.c	the end: the lock given back
 *	supervise-audit.c	what --syslog keeps of the run: its start and
 *				its end, at the level of what happened
 *
 * redlock-cli and the guardian talk over a SOCK_SEQPACKET socket pair:
 * one message is one struct, and our end closing (we died) is an EOF the
 * guardian cannot miss.
 */

#ifndef SUPERVISE_IMPL_H
#define SUPERVISE_IMPL_H

#include <sys/types.h>

#include <poll.h>
#include <signal.h>

/* What redlock-cli asks the guardian to do. */
enum supervise_op {
	SUPERVISE_PASS = 1,	/* a signal sent to us, passed on to the
				 * command's group (once it has exited, to
				 * what it left behind) */
	SUPERVISE_LOST,		/* the lost lock's signal: all of the job */
	SUPERVISE_KILL,		/* SIGKILL all of it, until nothing is left */
	SUPERVISE_GO		/* (struct supervise_go) the lock is ours:
				 * start the command (supervise_pre_start) */
};

struct supervise_req {
	int	op;
	int	sig;
};

/*
 * To a guardian started before the lock was taken: what only the taking
 * tells, for the command's environment, and whether our process group
 * still has the terminal to hand on.
 */
struct supervise_go {
	int		op;		/* SUPERVISE_GO */
	int		take_tty;
	long long	fence;
	long long	ttl_ms;
	char		token[TOKEN_HEX_LEN + 1];
};

/* What the guardian tells redlock-cli. */
enum supervise_event {
	SUPERVISE_STARTED = 1,	/* pid: the command (-1: vfork failed,
				 * err: why); sent by the command itself,
				 * before exec (supervise_child()) */
	SUPERVISE_EXEC_FAILED,	/* err: exec's errno; the command exits
				 * 126 or 127 */
	SUPERVISE_STOPPED,	/* the command was stopped (Ctrl-Z) */
	SUPERVISE_EXITED	/* status: its wait status; left: how many
				 * processes of the job still run (-1: not
				 * known); is_last: none, the guardian
				 * exits when our end closes */
};

struct supervise_msg {
	int	event;
	pid_t	pid;
	int	status;
	int	err;
	int	left;
	int	is_last;
};

/* What the command needs, all of it prepared before the fork. */
struct supervise_spawn {
	char		**argv;
	char		**envp;
	const sigset_t	 *old_mask;	/* the mask we were started with */
	const struct sigaction *old_chld; /* and SIGCHLD's disposition */
	sigset_t	  stops;	/* SIGTSTP: see supervise_child() */
	pid_t		  parent;	/* the guardian, set by it */
	int		  tty_fd;	/* -1: do not hand the terminal */
	int		  err_fd;	/* exec's errno goes here */
	int		  tell_fd;	/* to redlock-cli: SUPERVISE_STARTED */
};

/* One process as /proc/PID/stat shows it. */
struct supervise_proc {
	pid_t	pid;
	pid_t	ppid;
	pid_t	pgrp;
	char	state;
	unsigned long long start;	/* since boot: pid and this name it */
};

/* redlock-cli's state while it supervises (supervise.c). */
struct supervisor {
	struct lock			*lock;
	const struct supervise_opts	*opts;
	pid_t				 guard;		/* the guardian */
	int				 guard_fd;	/* our end */
	int				 guard_status;	/* its wait status */
	pid_t				 child;		/* the command */
	const char			*argv0;		/* its name */
	int				 is_start_failed; /* it never ran */
	int				 tty_fd;	/* -1 if not handed */
	int64_t				 renew_ns;
	int64_t				 retry_ns;
	int64_t				 margin_ns;
	int64_t				 next_renew_ns;
	int64_t				 last_ok_ns;
	int				 is_lost;
	int				 lost_not_owner;
	int				 is_killed;
	int				 is_exited;	/* the command */
	int				 is_over;	/* all of the job */
	int				 is_guard_reaped;
	int				 is_reaped;	/* the whole job */
	int				 may_have_changed; /* ask */
	int				 code;		/* the command's */
	int				 code_sig;	/* killed by, or 0 */
	int64_t				 kill_at_ns;
	int64_t				 held_until_ns;	/* lost, or released */
	int				 is_cancelled;	/* --cancel-running */
	int				 is_forced;	/* release --force */
	int				 is_late_end;	/* cancelled or forced
							 * after the command
							 * exited: its status
							 * stands */
	int64_t				 cancel_kill_ns;
	int				 sig_fd;	/* signalfd, or -1 */
	struct pollfd			*pfd;		/* it, and listening's */
	size_t				 npfd;
	int				 is_blocked;
	sigset_t			 wait_set;	/* sigtimedwait()'s */
	sigset_t			 before_mask;	/* supervise_run's */
	struct sigaction		 before_chld;	/* caller's, restored */
	char				 last_error[512];
};

/* supervise-job.c */
int	  supervise_reap(struct supervisor *);
void	  supervise_hear(struct supervisor *);
int	  supervise_started(struct supervisor *, const struct supervise_msg *);
void	  supervise_tell(struct supervisor *, int, int);
int	  supervise_guard_send(int, int, int);
int	  supervise_guard_recv(int, struct supervise_msg *);

/* supervise-spawn.c */
char	**supervise_environ(const char *, const char *, long long,
	      long long, size_t *);
pid_t	  supervise_spawn(struct supervise_spawn *, int *);

/* supervise-start.c */
int	  supervise_start(struct supervisor *, char **);
pid_t	  supervise_guard_start(struct supervise_spawn *, int, int *);
pid_t	  supervise_pre_go(struct supervise_pre *, const struct lock *, int,
	      int *);

/*
 * supervise-guard.c: the guardian process, and its state as
 * supervise-start.c sets it up before the fork
 */
struct guard {
	int	 fd;		/* to redlock-cli */
	int	 sfd;		/* signalfd: SIGCHLD */
	pid_t	 self;
	pid_t	 rl;		/* redlock-cli */
	pid_t	 cmd;		/* the command */
	int	 is_cmd_reaped;
	int	 is_told;	/* SUPERVISE_EXITED sent */
	int	 cmd_status;
	int	 release_on_exit;
};
deadfn void supervise_guard_main(struct guard *, struct supervise_spawn *);
deadfn void supervise_guard_pre_main(struct guard *, char **, const char *,
	      const sigset_t *);

/* supervise-release.c */
void	  supervise_release(struct supervisor *);

/* supervise-audit.c */
void	  supervise_audit_start(const struct supervisor *, char **);
int64_t	  supervise_held_ms(const struct supervisor *);
void	  supervise_audit(const struct supervisor *, enum run_outcome);

/* supervise-listen.c */
void	  supervise_listen_open(struct supervisor *);
void	  supervise_listen_close(struct supervisor *);
int	  supervise_listen_wait(struct supervisor *, int64_t);
void	  supervise_cancel_due(struct supervisor *, int64_t);

/* supervise-proc.c */
int	  supervise_proc_signal_descendants(pid_t, int, pid_t);
int	  supervise_proc_signal_children(pid_t, int);

#endif /* SUPERVISE_IMPL_H */
