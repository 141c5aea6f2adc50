/* SPDX-License-Identifier: MIT */
/*
 * The lock layer's own header: struct lock and what the lock*.c files
 * share.  Nothing outside the lock layer includes it; the verbs see struct
 * lock as opaque, through redlock.h, and never a server's reply.
 *
 * Floors: the verbs call the API of lock.c, lock-acquire.c,
 * lock-status.c, lock-list.c, lock-force.c and lock-queue.c.  Who calls
 * whom inside (tests/lint/floors.py checks there is no circle):
 *
 *	lock-acquire.c	-> lock-wait.c lock-queue.c lock.c lock-call.c
 *	lock-list.c	-> lock-list-all.c lock-list-one.c lock-status.c
 *			   lock-waiters.c lock.c lock-call.c
 *	lock-list-all.c, lock-list-one.c -> lock-status.c lock-history.c
 *			   lock.c, and the connection layer
 *	lock.c		-> lock-listen.c lock-queue.c lock-history.c
 *			   lock-call.c
 *	lock-history.c	-> lock-status.c lock-call.c
 *	lock-wait.c	-> lock-queue.c lock.c lock-call.c
 *	lock-listen.c	-> lock-queue.c lock-call.c
 *	lock-status.c	-> lock-waiters.c lock-call.c
 *	lock-waiters.c	-> lock-scripts.c, and the connection layer
 *	lock-queue.c, lock-force.c -> lock-call.c
 *	lock-call.c	-> lock-scripts.c, and the connection layer
 *	lock-scripts.c	-> scripts-native.c, and the connection layer
 *	scripts-native.c -> the connection layer
 */

#ifndef LOCK_IMPL_H
#define LOCK_IMPL_H

#include <hiredis/hiredis.h>

#include "redlock.h"

/* acquire's arguments, at most (see scripts-lua.h) */
#define LOCK_ATTEMPT_ARGC	17
/* A queued waiter's place lasts this long without a try. */
#define LOCK_FAIR_LEASE_MS	3000
/*
 * A waiter's intent (a writer's, which keeps new readers out, or a
 * reader's, to be woken) lasts this long without a try: more than the
 * longest pause between two tries (lock-wait.c), so a live waiter keeps
 * it, and a dead one holds new readers up for no longer than this.
 */
#define LOCK_INTENT_LEASE_MS	5000
#define LOCK_STR_(x)		#x
#define LOCK_STR(x)		LOCK_STR_(x)
/*
 * status lists at most this many holders of a semaphore, and counts the
 * rest: with command lines of 1 KB, the most kept, 1000 holders are about
 * 3 MB once parsed, within the reply bounds of conn-impl.h.
 */
#define LOCK_STATUS_LISTED	1000

/*
 * The lock's key and its companions (all in one Cluster slot), in the
 * order every script takes them as KEYS; a script takes the first n.
 */
enum lock_key {
	LK_LOCK,	/* PREFIX KEY itself: the token, or a semaphore */
	LK_FENCE,	/* fence counter, expires with the lock + linger */
	LK_META,	/* holder metadata */
	LK_QUEUE,	/* --queue fifo, latest: waiters by rank */
	LK_LEASES,	/* --queue fifo, latest: each waiter's lease */
	LK_WAKE,	/* release pushes, one waiter pops */
	LK_READERS,	/* -s: each reader's expiry */
	LK_RMETA,	/* -s: readers' metadata */
	LK_WRITERS,	/* -x waiting: keeps new readers out */
	LK_RWAIT,	/* -s waiting: woken together */
	LK_HISTORY,	/* the runs that ended (scripts-history.h) */
	LK_WHO,		/* who waits: LK_QUEUE's name + ":who" */
	LOCK_NKEYS
};

/* lock-scripts.c: one script per purpose, in one variant per mode */
struct script;
struct lock_scripts {
	struct script	*acquire;
	struct script	*release;
	struct script	*extend;
	struct script	*status;
	struct script	*raise_fence;
	struct script	*leave;
	struct script	*force;		/* release --force */
	struct script	*done;		/* --skip-outdated's record */
	struct script	*give_back;	/* undo a take that made no lock */
};
extern const struct lock_scripts scripts_mutex;
extern const struct lock_scripts scripts_semaphore;
extern struct script *const scripts_list;	/* every mode at once */
extern struct script *const scripts_mutex_waiters;	/* status's second */
extern struct script *const scripts_history_note;
extern struct script *const scripts_history_read;
extern const struct lock_scripts scripts_shared;
/* scripts-native.c: a script played with native commands (no scripts) */
int	 native_call(struct conn *, const char *, int, int, const char **,
	     const size_t *, int64_t, redisReply **);
void	 script_call_many(struct conn **, size_t, struct script *, int, int,
	     const char **, const size_t *, int64_t, redisReply **, int *);

/*
 * What went wrong: an exit code and its message.  A lock keeps two.
 * fail is the operation's failure, which the caller reports: only
 * lock_failed() and lock_fail() write it, so a call made afterwards (a
 * release after an outdated check, a give-back after a lost vote) cannot
 * clear or replace it.  round is what the servers of the last round said
 * (lock_tally), which lock_fail() turns into the failure when too few
 * answered.  A key of the wrong type (a mutex used with --limit) is
 * remembered apart, since it outranks whatever failure follows.
 */
struct lock_failure {
	int		 code;		/* 0: none */
	int		 type_clash;	/* exit code if the key's type is wrong */
	char		 text[1024];
};

/*
 * What a lock's queue needs (lock-queue.c opens and frees it): the keys
 * and arguments of waiting in line, of cancels and of --skip-outdated's
 * record.
 */
struct lock_queue_state {
	char		*wake_prefix;	/* queued: + token = its wake key */
	size_t		 wake_prefix_len;
	char		*cancel_prefix;	/* + token = a holder's cancel key */
	char		*done_key;	/* --skip-outdated's record (--order) */
	char		 order[32];	/* --order, or '' */
	char		 grace_arg[32];	/* --cancel-running's, or '' */
	int64_t		 cancel_grace_ms;	/* what a cancel asked for */
};

/*
 * How the holder's run ended, as the release (or lock_history_note) writes
 * it to the lock's history; outcome NULL: nothing to write.
 */
struct lock_end {
	const char	*outcome;
	int		 exit_code;	/* -1: none */
	int64_t		 queued_ms;	/* wall clock; 0: unknown */
};

struct lock {
	const struct global_opts *opts;
	struct lock_spec spec;		/* as opened; key and token owned */
	const struct lock_scripts *scripts;	/* the mode's */
	struct conn_config conf;
	struct conn	**conns;	/* one per server */
	size_t		 nconns;
	size_t		 quorum;	/* nconns / 2 + 1 */
	char		*key;		/* PREFIX KEY: the lock itself */
	size_t		 key_len;
	char		*keys[LOCK_NKEYS];	/* KEYS[1..] of every script */
	size_t		 keys_len[LOCK_NKEYS];
	struct lock_queue_state q;	/* lock-queue.c's */
	struct lock_listen *listen;	/* a holder's, between renewals */
	char		*token;		/* ours: generated or given */
	char		 limit_arg[24];	/* spec.limit, as scripts take it */
	int64_t		 ttl_ms;
	int64_t		 fence;
	int64_t		 acquired_ns;	/* CLOCK_MONOTONIC, start of attempt */
	int64_t		 taken_ns;	/* and when its answer was in */
	int64_t		 taken_wall_ms;	/* the same, by the wall clock */
	struct lock_end	 end;		/* lock-history.c's: how it ended */
	int64_t		 valid_until_ns;	/* our view of the expiry */
	int64_t		 busy_ttl_ms;	/* holder's PTTL on the last busy */
	int		 splits;	/* split votes in a row (lock-wait.c) */
	int		 was_busy;	/* a majority answered "busy" once */
	int		 outages;	/* unavailable rounds ridden out */
	struct lock_holder busy;	/* who held it then, if known */
	int		 holder_changed;	/* since -v last said who */
	int		 not_owner;	/* enum lock_not_owner */
	int		 cannot_block;	/* server without fractional BZPOPMIN */
	int		 may_wait;	/* acquire without -n: tries note it */
	int		 said_wait_cap;	/* -v: --wait-timeout was capped */
	int		 said_no_cancel;	/* -v: 1 to say, 2 said */
	int		 said_mixed;	/* waiters of another --queue: said */
	unsigned char	*said_silent;	/* quorum: per server, its silence
					 * said (lock_tally), or NULL */
	struct lock_failure fail;	/* the operation's */
	struct lock_failure round;	/* the last round's servers' */
};

/* the replies of one operation sent to every server */
struct lock_round {
	redisReply	**replies;
	int		 *results;	/* enum conn_result */
};

/*
 * The next acquire attempt, which a wait sends behind its BZPOPMIN when it
 * can (lock-wait.c): the server runs it the moment it wakes us, and its
 * reply comes with the wake-up.  Its acquired-at is '' (ARGV[6]): the
 * server's clock then, since ours at sending may be long before.
 */
struct lock_next {
	int		 argc;
	const char	*argv[LOCK_ATTEMPT_ARGC];
	int		 is_sent;	/* the wait sent it: what follows is its */
	int64_t		 sent_ns;	/* its validity counts from here */
	size_t		 answered;
	struct lock_round rd;
};

/* lock-call.c: the fan-out and the failure record */
size_t	 lock_call(struct lock *, struct script *, int, int, const char **,
	     const size_t *, int64_t, struct lock_round *);
size_t	 lock_call_named(struct lock *, struct script *, int, int,
	     const char **, const size_t *, int64_t, struct lock_round *);
size_t	 lock_call_behind(struct lock *, struct conn_lead *, struct script *,
	     int, const char **, struct lock_round *);
void	 lock_round_free(struct lock *, struct lock_round *);
size_t	 lock_call_keys(struct lock *, struct script *, int, const char **,
	     int64_t, struct lock_round *);
void	 lock_script_args(const struct lock *, int, int, const char **,
	     const size_t *, const char ***, size_t **);
void	 lock_failed(struct lock *, int, const char *, ...) printflike(3, 4);
int	 lock_fail(struct lock *, size_t);
int	 lock_unexpected(struct lock *, size_t, const char *,
	     const redisReply *, const char *);
void	 lock_forget_attempt(struct lock *, const char *const *, int, int);
int	 lock_wait_replicas(struct lock *, int64_t);

/* lock-history.c: ARGV of an entry, the size first */
#define LOCK_ENTRY_ARGC	11
struct lock_entry_args {
	const char	*argv[LOCK_ENTRY_ARGC];
	char		 size[16], exit[16], pid[32], order[32];
	char		 queued[32], started[32], ended[32], fence[32];
	char		 host[256];
};
void	 lock_entry_args(const struct lock *, struct lock_entry_args *);

/* list's run over the servers (lock-list.c scans, lock-list-all.c merges) */
/* One lock as one server (or one master of a Cluster) sees it. */
struct list_found {
	char		*key;		/* without the prefix */
	size_t		 server;	/* its index among the URLs */
	int64_t		 limit;		/* as struct lock_entry's */
	struct lock_view view;
};

struct list_run {
	struct lock	*l;		/* the servers and their failures */
	const struct global_opts *opts;	/* to open a lock at a time */
	size_t		 prefix_len;
	char		**errors;	/* per URL: why it failed, or NULL */
	struct list_found *found;
	size_t		 nfound;
	size_t		 commands;
	const char	*prefix;
	int		 history_pass;	/* --all: names with a history */
	int		 few;		/* LOCK_LIST_FEW: LIST_FEW_PAGES */
	int		 cluster;	/* this URL's: one list call a slot */
	char		**names;	/* what that pass found */
	size_t		 nnames;
};
void	 list_merge(struct list_run *, struct lock_listing *);
char	*list_history_glob(const char *, const char *);
char	*list_history_name(const char *, size_t, const char *);
void	 list_add_free(const struct global_opts *, char **, size_t,
	     struct lock_listing *);

/* lock-list-one.c: list in a slot that migrates, a lock at a time */
int	 list_one_by_one(struct list_run *, size_t, struct conn *,
	     const char *const *, const size_t *, size_t);

/* lock.c */
void	 lock_holder_clear(struct lock_holder *);
size_t	 lock_release_call(struct lock *, struct lock_round *);

/* lock-waiters.c: who waits, as status and list show it */
int	 lock_waiters_parse(const redisReply *, struct lock_view *);
size_t	 lock_waiters_read(struct lock *, struct lock_view *);

/* lock-status.c */
char	*lock_command_shown(const char *, size_t);
int	 lock_view_parse(redisReply *const *, size_t, const char *,
	     struct lock_view *);
void	 lock_state_majority(struct lock_state *, size_t);

/* lock-wait.c */
int	 lock_wait_for_release(struct lock *, struct lock_next *, int64_t);
int	 lock_ride_out(struct lock *, int, int64_t, int);
void	 lock_leave_queue(struct lock *);
void	 lock_say_waiting(struct lock *);

/* lock-queue.c: who a note names (pointers into a reply) */
struct lock_note_who {
	const char	*order, *pid, *host;
	size_t		 order_len, pid_len, host_len;
};
void	 lock_note_by(char *, size_t, const struct lock_note_who *,
	     const char *);
int	 lock_note_parse(const char *, size_t, struct lock_note_who *);
void	 lock_queue_open(struct lock *);
void	 lock_queue_close(struct lock *);
void	 lock_queue_args(struct lock *, const char **);
void	 lock_queue_mixed(struct lock *, const redisReply *);
int	 lock_superseded(struct lock *, const redisReply *);
int	 lock_wake_note(struct lock *, const redisReply *);

/* lock-listen.c */
void	 lock_listen_free(struct lock *);

#endif /* LOCK_IMPL_H */
