/* SPDX-License-Identifier: MIT */
/*
 * What the files that play the scripts with native commands share
 * (scripts-native.c, native-view.c, native-owner.c, native-cmd.c); nothing
 * else includes it.  Floors, top to bottom:
 *
 *	scripts-native.c	the table, acquire, release, extend, fences
 *	native-view.c		status, list, force, history
 *	native-owner.c		owner-checked steps, history entries
 *	native-cmd.c		commands, and the reply built as RESP
 */

#ifndef NATIVE_IMPL_H
#define NATIVE_IMPL_H

#include <hiredis/hiredis.h>

#include "lock-impl.h"

/* How long the companion keys outlive the lock (scripts-lua.h's). */
#define NAT_LINGER_MS		5000LL
#define NAT_KEEP_MS		604800000LL	/* fence, history: 7 days */
#define NAT_ARGC		32
#define NAT_TRIES		3	/* WATCHed steps, if the key moves */

/* One play: the server, the script's KEYS and ARGV, the reply built. */
struct nat {
	struct conn	*c;
	int64_t		 cap_ns;
	int		 nkeys, nargs;
	const char	**args;		/* KEYS, then ARGV */
	const size_t	*lens;
	int		 failed;	/* a command failed: conn_error() */
	char		*rbuf;		/* the reply, as RESP */
	size_t		 rlen, rcap;
};

/* One command being built. */
struct nat_cmd {
	const char	*v[NAT_ARGC];
	size_t		 l[NAT_ARGC];
	int		 n;
	int		 secret;	/* -v -v: v[secret] shortened; 0 */
	size_t		 secret_from;	/* from this byte on */
	int		 is_token;	/* and the reply: a lock's token */
};

/* native-cmd.c: the reply built, and the commands */
void		 nat_int(struct nat *, long long);
void		 nat_arr(struct nat *, size_t);
void		 nat_str(struct nat *, const char *, size_t);
void		 nat_str_of(struct nat *, const redisReply *);
redisReply	*nat_reply(struct nat *);
const char	*nat_arg(const struct nat *, int, size_t *);
const char	*nat_key(const struct nat *, int, size_t *);
void		 cmd_b(struct nat_cmd *, const char *, size_t);
void		 cmd_s(struct nat_cmd *, const char *);
void		 cmd_key(struct nat_cmd *, const struct nat *, int);
void		 cmd_arg(struct nat_cmd *, const struct nat *, int);
void		 cmd_token(struct nat_cmd *, const struct nat *);
redisReply	*nat_send(struct nat *, struct nat_cmd *, int);
int		 nat_do(struct nat *, struct nat_cmd *);
int		 nat_lacked(struct nat *, int);
int		 nat_same(const redisReply *, const char *, size_t);
redisReply	*nat_get(struct nat *, int);
int		 nat_key_int(struct nat *, const char *, int, long long);
int		 nat_word(struct nat *, const char *);

/* native-owner.c: owner-checked steps, history entries */
int		 nat_watch_holds(struct nat *, int, const char *, size_t);
int		 nat_exec(struct nat *);
int		 nat_del_if(struct nat *, int, const char *, size_t);
int		 nat_who_now(struct nat *);
void		 nat_meta_drop(struct nat *, const char *, size_t);
void		 nat_wake(struct nat *);
void		 nat_history_argv(struct nat *, int);
redisReply	*nat_holder_meta(struct nat *);
void		 nat_history_ended(struct nat *, const char *,
		     const redisReply *, const char *, const char *);
redisReply	*nat_get_lock(struct nat *);
int		 nat_raise_fence(struct nat *);

/* native-view.c: the plays of status, list, force, history */
int		 nat_status(struct nat *);
int		 nat_waiters(struct nat *);
int		 nat_force(struct nat *);
int		 nat_list(struct nat *);
int		 nat_leave(struct nat *);
int		 nat_history_note(struct nat *);
int		 nat_history_read(struct nat *);

#endif /* NATIVE_IMPL_H */
