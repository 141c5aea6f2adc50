/* SPDX-License-Identifier: MIT */
/*
 * The lock layer's public interface (lock*.c): one lock, as the verbs
 * see it; its internals are in lock-impl.h.  Included by redlock.h
 * (which every file includes) at this point, after the types it uses.
 */

#ifndef LOCK_H
#define LOCK_H

/*
 * lock.c: one lock, as the verbs see it.  The verbs describe it once, in a
 * struct lock_spec, and read back only what the accessors give; every
 * operation returns an exit code, and lock_error() says why it failed.
 * The internals (struct lock, the fan-out to every server, the scripts of
 * each mode) are private to lock*.c: lock-impl.h.
 */
enum lock_mode {
	LOCK_MUTEX,		/* one holder: the key is the token */
	LOCK_SEMAPHORE,		/* --limit N holders */
	LOCK_SHARED		/* -s: any number, excluding the mutex */
};
/* How waiters queue (--queue): see lock-queue.c. */
enum lock_queue {
	LOCK_QUEUE_ANY,		/* a release wakes one; no order */
	LOCK_QUEUE_FIFO,	/* by arrival, or by --order, lowest first */
	LOCK_QUEUE_LATEST	/* one waiter: the newest, or highest order */
};
enum lock_not_owner {
	LOCK_GONE = 1,		/* the key no longer exists: expired */
	LOCK_OTHER		/* someone else holds it now */
};
struct lock_spec {
	const char	*key;		/* as given, before --prefix */
	enum lock_mode	 mode;
	int64_t		 limit;		/* LOCK_SEMAPHORE: how many */
	int		 is_fair;	/* queued: --queue fifo or latest */
	enum lock_queue	 queue;
	int64_t		 order;		/* --order N, or -1: by arrival */
	int64_t		 cancel_grace_ms;	/* --cancel-running, or -1 */
	int		 listens;	/* a run: hears a cancel or a force */
	const char	*token;		/* ours, or NULL for a new one */
	int64_t		 ttl_ms;	/* acquire, extend */
	int64_t		 wait_ms;	/* WAIT_FOREVER, 0 = -n, or a limit */
	const char	*command;	/* acquire: what status shows */
	int64_t		 pid;		/* acquire: whose it is; 0: ours */
	const sigset_t	*wait_mask;	/* the signal mask while waiting */
	void		(*before_wait)(void *);	/* once, if it waits */
	void		 *before_wait_arg;
	/*
	 * A check once the lock is ours (run's --skip-outdated after a
	 * wait): EXIT_OK to keep it, else the lock is given back and
	 * acquire returns that code.  The margin of validity is checked
	 * after it.
	 */
	int		(*after_take)(struct lock *, void *);
	void		 *after_take_arg;
};
struct lock_holder {
	int		 ours;
	char		*token;
	int64_t		 ttl_ms;
	int64_t		 fence;		/* -1 when unknown (foreign client) */
	char		*host;
	int64_t		 pid;
	char		*command;
	int64_t		 since_ms;	/* wall clock, 0 when unknown */
	int		 writer;	/* a writer that waits, not a holder */
};
/* one who waits for a lock (a waiter that will wait, not a -n probe) */
struct lock_waiter {
	char		*host;
	int64_t		 pid;		/* -1 when unknown */
	int64_t		 order;		/* --order, or -1 */
	int64_t		 since_ms;	/* first arrival, server's wall clock */
	char		 kind[12];	/* exclusive, shared, semaphore */
};
/* one server's view of a lock, for status */
struct lock_view {
	const char	   *display;	/* the server's URL, redacted */
	const char	   *mode;	/* "exclusive", "shared", "semaphore" */
	char		   *error;	/* NULL if it answered */
	struct lock_holder *holders;
	size_t		    nholders;	/* listed */
	size_t		    nholding;	/* in all */
	size_t		    waiting;	/* waiters */
	struct lock_waiter *waiters;	/* the first of them */
	size_t		    nwaiters;
	char		    queue[8];	/* their mode: any, fifo, latest */
	int64_t		    limit;	/* a semaphore's, as stored; 0 */
};
struct lock_run;
/* what status found */
struct lock_state {
	struct lock_holder *holders;	/* on a majority */
	size_t		    nholders;
	size_t		    unlisted;	/* holders beyond the list */
	struct lock_view   *views;	/* each server's own answer */
	size_t		    nviews;
	size_t		    waiting;	/* waiters, seen by a majority */
	struct lock_waiter *waiters;	/* as a server seeing them all lists */
	size_t		    nwaiters;
	char		    queue[8];	/* their mode: any, fifo, latest */
	int64_t		    limit;	/* a semaphore's, as stored; 0 */
	int		    disagree;	/* quorum: the servers' views differ */
	const char	   *mode;	/* as a holding server names it */
	struct lock_run	   *last;	/* free: the history's newest entry
					 * (the caller's to free) */
};
struct lock;
struct lock *lock_open(const struct global_opts *, const struct lock_spec *);
void	 lock_close(struct lock *);
int	 lock_acquire(struct lock *);
int	 lock_release(struct lock *);
int	 lock_extend(struct lock *, int64_t, int64_t);
int	 lock_linger(struct lock *, int64_t);
int	 lock_status(struct lock *, struct lock_state *);
int	 lock_force_release(struct lock *, struct lock_holder **, size_t *,
	     size_t *);
void	 lock_state_free(struct lock_state *);
/* one entry of a lock's history (lock-history.c) */
struct lock_run {
	char		*outcome;	/* ok, failed, ... expired */
	int		 exit_code;	/* -1: none */
	char		*host;		/* '' unknown */
	int64_t		 pid;		/* -1 unknown */
	char		*command;	/* masked as recorded; '' */
	int64_t		 order;		/* -1: none */
	int64_t		 queued_ms;	/* wall clock; 0 unknown */
	int64_t		 started_ms;
	int64_t		 ended_ms;
	int64_t		 fence;		/* -1 unknown */
};
void	 lock_history_end(struct lock *, const char *, int, int64_t);
void	 lock_history_note(struct lock *);
int	 lock_history(struct lock *, int64_t, struct lock_run **, size_t *);
void	 lock_runs_free(struct lock_run *, size_t);
void	 lock_holders_free(struct lock_holder *, size_t);
void	 lock_waiters_free(struct lock_waiter *, size_t);
const char *lock_error(const struct lock *);
const char *lock_name(const struct lock *);
const char *lock_token(const struct lock *);
int64_t	 lock_fence(const struct lock *);
int64_t	 lock_ttl_ms(const struct lock *);
int64_t	 lock_acquired_ns(const struct lock *);
int64_t	 lock_taken_ns(const struct lock *);
int64_t	 lock_valid_until_ns(const struct lock *);
int	 lock_not_owner(const struct lock *);
void	 lock_describe_holder(const struct lock *, char *, size_t);
int	 lock_busy_writer(const struct lock *);
size_t	 lock_nservers(const struct lock *);
int64_t	 lock_drift_ms(int64_t);
int64_t	 lock_margin_ns(int64_t);
int64_t	 lock_cap_ns(int64_t, int64_t);

/* lock-queue.c: --skip-outdated's record; lock-listen.c: a holder's cancels */
struct pollfd;
int	 lock_outdated(struct lock *, int64_t);
int	 lock_record_done(struct lock *, int64_t);
const char *lock_queue_name(int);
void	 lock_listen_start(struct lock *);
size_t	 lock_listen_poll(struct lock *, struct pollfd *, size_t, int64_t *);
/* What a holder heard while it held (lock_listen_events); the worst. */
enum lock_heard {
	LOCK_HEARD_NONE,
	LOCK_HEARD_CANCEL,	/* --cancel-running: a newer run asks */
	LOCK_HEARD_FORCE	/* release --force: it is no longer ours */
};
int	 lock_listen_events(struct lock *, const struct pollfd *, size_t);
void	 lock_listen_stop(struct lock *);
int64_t	 lock_cancel_grace_ms(const struct lock *);
/* lock-list.c: every held lock under the prefix (list) */
struct lock_entry {
	char		 *key;		/* without the prefix */
	int64_t		  limit;	/* 0: a mutex; a semaphore's, or -1 */
	struct lock_state st;		/* the majority's view */
};
struct lock_listing {
	struct lock_entry *entries;	/* sorted by key */
	size_t		   n;
	size_t		   commands;	/* sent, for -v */
	char		   error[512];
};
/* lock_list's flags: free names with a history too; the first pages only */
#define LOCK_LIST_ALL	1
#define LOCK_LIST_FEW	2
int	 lock_list(const struct global_opts *, const char *, int,
	     struct lock_listing *);
void	 lock_listing_free(struct lock_listing *);

#endif /* LOCK_H */
