/* SPDX-License-Identifier: MIT */
/*
 * Every Lua script redlock-cli sends, in one place (their source is in
 * scripts-lua.h).  Each runs atomically on the server, which is what makes
 * the lock safe: any check-then-act done in two round trips from here could
 * act on a lock that changed between them.  Calls are EVALSHA with the
 * script's SHA-1 (computed when building: scripts-sha.h), and EVAL only
 * when the server answers NOSCRIPT (first use after a restart or SCRIPT
 * FLUSH), which also loads it for the next caller.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "lock-impl.h"
#include "scripts-lua.h"
#include "scripts-sha.h"

static void	 script_send_many(struct conn **, size_t, struct script *, int,
		     int, const char **, const size_t *, int64_t, redisReply **,
		     int *);
static void	 script_pokes(struct conn **, size_t, redisReply **,
		     const int *, int64_t);
static redisReply *script_unwrap(struct conn *, redisReply **);
static int	 script_pokes_valid(const redisReply *);
static int	 script_poke_argv(const redisReply *, char *, size_t,
		     const char ***, size_t **);

struct script {
	const char	*name;
	const char	*body;
	const char	*sha;
	int		 token_arg;	/* ARGV[n] is the token; 0: none */
	int		 is_blind;	/* sent as EVAL, never EVALSHA */
};

/* ARGV[1] is the token in every script but status, which takes none. */
#define SCRIPT(name, body, token_arg) \
	static struct script script_##name = { #name, body, SHA_##name, \
	    token_arg, 0 }
/*
 * give_back runs mostly where a reply went missing, on a fresh connection
 * that may be as deaf as the last one: its NOSCRIPT would be lost too, and
 * the take with it left in place.  It is rare, so it always carries its
 * body.
 */
#define BLIND_SCRIPT(name, body, token_arg) \
	static struct script script_##name = { #name, body, SHA_##name, \
	    token_arg, 1 }

SCRIPT(LEAVE, lua_leave, 1);
SCRIPT(DONE, lua_done, 0);
SCRIPT(MUTEX_ACQUIRE, lua_mutex_acquire, 1);
SCRIPT(MUTEX_RELEASE, lua_mutex_release, 1);
SCRIPT(MUTEX_EXTEND, lua_mutex_extend, 1);
SCRIPT(MUTEX_STATUS, lua_mutex_status, 0);
SCRIPT(MUTEX_WAITERS, lua_mutex_waiters, 0);
SCRIPT(MUTEX_RAISE_FENCE, lua_mutex_raise_fence, 1);
SCRIPT(MUTEX_FORCE, lua_mutex_force, 0);
BLIND_SCRIPT(MUTEX_GIVE_BACK, lua_mutex_give_back, 1);
SCRIPT(SEMAPHORE_ACQUIRE, lua_semaphore_acquire, 1);
SCRIPT(SEMAPHORE_RELEASE, lua_semaphore_release, 1);
SCRIPT(SEMAPHORE_EXTEND, lua_semaphore_extend, 1);
SCRIPT(SEMAPHORE_STATUS, lua_semaphore_status, 0);
SCRIPT(SEMAPHORE_RAISE_FENCE, lua_semaphore_raise_fence, 1);
SCRIPT(SEMAPHORE_FORCE, lua_semaphore_force, 0);
BLIND_SCRIPT(SEMAPHORE_GIVE_BACK, lua_semaphore_give_back, 1);
SCRIPT(LIST, lua_list, 0);

struct script *const scripts_list = &script_LIST;
struct script *const scripts_mutex_waiters = &script_MUTEX_WAITERS;
SCRIPT(HISTORY_NOTE, lua_history_note, 0);
SCRIPT(HISTORY_READ, lua_history_read, 0);
struct script *const scripts_history_note = &script_HISTORY_NOTE;
struct script *const scripts_history_read = &script_HISTORY_READ;
SCRIPT(SHARED_ACQUIRE, lua_shared_acquire, 1);
SCRIPT(SHARED_RELEASE, lua_shared_release, 1);
SCRIPT(SHARED_EXTEND, lua_shared_extend, 1);
SCRIPT(SHARED_RAISE_FENCE, lua_shared_raise_fence, 1);
/* Sent with its body, by script_pokes() only. */
SCRIPT(POKE, lua_poke, 0);
BLIND_SCRIPT(SHARED_GIVE_BACK, lua_shared_give_back, 1);

const struct lock_scripts scripts_mutex = {
	&script_MUTEX_ACQUIRE, &script_MUTEX_RELEASE, &script_MUTEX_EXTEND,
	&script_MUTEX_STATUS, &script_MUTEX_RAISE_FENCE, &script_LEAVE,
	&script_MUTEX_FORCE, &script_DONE, &script_MUTEX_GIVE_BACK
};
const struct lock_scripts scripts_semaphore = {
	&script_SEMAPHORE_ACQUIRE, &script_SEMAPHORE_RELEASE,
	&script_SEMAPHORE_EXTEND, &script_SEMAPHORE_STATUS,
	&script_SEMAPHORE_RAISE_FENCE, &script_LEAVE,
	&script_SEMAPHORE_FORCE, &script_DONE, &script_SEMAPHORE_GIVE_BACK
};
/* status is the mutex's: it shows either kind, as status takes no -s. */
const struct lock_scripts scripts_shared = {
	&script_SHARED_ACQUIRE, &script_SHARED_RELEASE, &script_SHARED_EXTEND,
	&script_MUTEX_STATUS, &script_SHARED_RAISE_FENCE, &script_LEAVE,
	&script_MUTEX_FORCE, &script_DONE, &script_SHARED_GIVE_BACK
};

/*
 * Run script s on n servers at once, with nkeys keys followed by nargs
 * arguments (args and lens hold both, keys first): EVALSHA everywhere,
 * and EVAL on a server that answers NOSCRIPT, at once, without waiting for
 * the others (one of which may be frozen).  A server that refuses scripts
 * (conn_lacks()) gets the script played with native commands instead
 * (scripts-native.c), found out from its refusal of the first one: a
 * server with scripts pays nothing for it.  -v -v shows the token
 * shortened.  replies and results as in conn_command_many().
 */
void
script_call_many(struct conn **cs, size_t n, struct script *s, int nkeys,
    int nargs, const char **args, const size_t *lens, int64_t cap_ns,
    redisReply **replies, int *results)
{
	struct conn	**send;
	redisReply	**sr;
	size_t		  i, m = 0, *at;
	int		 *sres;

	send = xcalloc(n + 1, sizeof(*send));
	at = xcalloc(n + 1, sizeof(*at));
	sr = xcalloc(n + 1, sizeof(*sr));
	sres = xcalloc(n + 1, sizeof(*sres));
	for (i = 0; i < n; i++) {
		replies[i] = NULL;
		results[i] = CONN_NO_SCRIPTS;
		if (!conn_lacks(cs[i], CONN_LACKS_SCRIPTS)) {
			at[m] = i;
			send[m++] = cs[i];
		}
	}
	if (m > 0) {
		script_send_many(send, m, s, nkeys, nargs, args, lens, cap_ns,
		    sr, sres);
		script_pokes(send, m, sr, sres, cap_ns);
	}
	for (i = 0; i < m; i++) {
		replies[at[i]] = sr[i];
		results[at[i]] = sres[i];
		if (sres[i] == CONN_NO_SCRIPTS)
			log_info("%s refuses scripts: using native commands "
			    "for it", conn_display(cs[at[i]]));
	}
	for (i = 0; i < n; i++)
		if (results[i] == CONN_NO_SCRIPTS) {
			if (replies[i] != NULL)
				freeReplyObject(replies[i]);
			results[i] = native_call(cs[i], s->name, nkeys, nargs,
			    args, lens, cap_ns, &replies[i]);
		}
	free(send);
	free(at);
	free(sr);
	free(sres);
}

/* EVALSHA (EVAL on NOSCRIPT) of s on n servers at once. */
static void
script_send_many(struct conn **cs, size_t n, struct script *s, int nkeys,
    int nargs, const char **args, const size_t *lens, int64_t cap_ns,
    redisReply **replies, int *results)
{
	const char	**argv, **eval;
	size_t		 *argl, *evall, i;
	char		  numkeys[16];
	int		  argc = 3 + nkeys + nargs, j;

	argv = xcalloc((size_t)argc, sizeof(*argv));
	argl = xcalloc((size_t)argc, sizeof(*argl));
	eval = xcalloc((size_t)argc, sizeof(*eval));
	evall = xcalloc((size_t)argc, sizeof(*evall));
	(void)snprintf(numkeys, sizeof(numkeys), "%d", nkeys);
	argv[0] = "EVALSHA";
	argl[0] = 7;
	argv[1] = s->sha;
	argl[1] = 40;
	argv[2] = numkeys;
	argl[2] = strlen(numkeys);
	for (j = 0; j < nkeys + nargs; j++) {
		argv[3 + j] = args[j];
		argl[3 + j] = lens[j];
	}
	/* The same with the body, for a server that lacks the script. */
	memcpy(eval, argv, (size_t)argc * sizeof(*eval));
	memcpy(evall, argl, (size_t)argc * sizeof(*evall));
	eval[0] = "EVAL";
	evall[0] = 4;
	eval[1] = s->body;
	evall[1] = strlen(s->body);
	for (i = 0; i < n; i++) {
		if (!s->is_blind)
			conn_set_fallback(cs[i], argc, eval, evall);
		conn_set_secret(cs[i], s->token_arg > 0 ? 2 + nkeys +
		    s->token_arg : 0, 0);
	}
	conn_command_many(cs, n, n, argc, s->is_blind ? eval : argv,
	    s->is_blind ? evall : argl, 0, cap_ns, replies, results);
	free(argv);
	free(argl);
	free(eval);
	free(evall);
}

/*
 * The pokes of the replies of n servers (LUA_POKES): each reply
 * {LUA_POKED, reply, {key, score, note, ...}} becomes the script's own
 * reply, and its notes go to their keys with the poke script, on every
 * such server at once, within the same cap.  A poke that fails is only
 * logged: it wakes or tells, and whom it was for finds the same at its
 * next attempt or renewal.
 */
static void
script_pokes(struct conn **cs, size_t n, redisReply **replies,
    const int *results, int64_t cap_ns)
{
	struct conn	**to;
	redisReply	**held, **pr;
	const char	***argvs;
	size_t		**lenss;
	int		 *argcs, *pres;
	char		(*nk)[24];
	size_t		  i, m = 0;

	to = xcalloc(n + 1, sizeof(*to));
	held = xcalloc(n + 1, sizeof(*held));
	pr = xcalloc(n + 1, sizeof(*pr));
	argvs = xcalloc(n + 1, sizeof(*argvs));
	lenss = xcalloc(n + 1, sizeof(*lenss));
	argcs = xcalloc(n + 1, sizeof(*argcs));
	pres = xcalloc(n + 1, sizeof(*pres));
	nk = xcalloc(n + 1, sizeof(*nk));
	for (i = 0; i < n; i++) {
		if (results[i] != CONN_OK ||
		    (held[m] = script_unwrap(cs[i], &replies[i])) == NULL)
			continue;
		argcs[m] = script_poke_argv(held[m]->element[1], nk[m],
		    sizeof(nk[m]), &argvs[m], &lenss[m]);
		conn_set_secret_span(cs[i], 3, (argcs[m] - 3) / 3);
		to[m++] = cs[i];
	}
	if (m > 0)
		conn_command_each(to, m, argcs, argvs, lenss, cap_ns, pr, pres);
	for (i = 0; i < m; i++) {
		if (pres[i] != CONN_OK)
			log_debug("%s: pokes not written: %s",
			    conn_display(to[i]), conn_error(to[i]));
		if (pr[i] != NULL)
			freeReplyObject(pr[i]);
		free(argvs[i]);
		free(lenss[i]);
		freeReplyObject(held[i]);
	}
	free(to);
	free(held);
	free(pr);
	free(argvs);
	free(lenss);
	free(argcs);
	free(pres);
	free(nk);
}

/*
 * If *rp is {LUA_POKED, reply, pokes} with pokes {key, score, note, ...}
 * (strings, by threes), reply takes its place, and the rest, {LUA_POKED,
 * pokes}, is returned for the caller to free; else NULL.
 */
static redisReply *
script_unwrap(struct conn *c, redisReply **rp)
{
	redisReply	*r = *rp;
	const size_t	 len = sizeof(LUA_POKED) - 1;

	if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
	    r->element[0]->type != REDIS_REPLY_STRING ||
	    r->element[0]->len != len ||
	    memcmp(r->element[0]->str, LUA_POKED, len) != 0)
		return (NULL);
	*rp = r->element[1];
	r->element[1] = r->element[2];
	r->element[2] = NULL;
	r->elements = 2;
	if (script_pokes_valid(r->element[1]))
		return (r);
	log_debug("%s: pokes not understood: not sent", conn_display(c));
	freeReplyObject(r);
	return (NULL);
}

/* Whether p is {key, score, note, ...}: strings, by threes. */
static int
script_pokes_valid(const redisReply *p)
{
	size_t i;

	if (p->type != REDIS_REPLY_ARRAY || p->elements == 0 ||
	    p->elements % 3 != 0)
		return (0);
	for (i = 0; i < p->elements; i++)
		if (p->element[i]->type != REDIS_REPLY_STRING)
			return (0);
	return (1);
}

/*
 * EVAL of the poke script with the notes of p: KEYS the keys, ARGV the
 * score and note of each.  Sent with its body (it is short), so that no
 * server answers NOSCRIPT.  numkeys (of size nsize) holds the number of
 * keys.  Returns argc; *argv and *lens are the caller's to free (their
 * strings are p's and numkeys).
 */
static int
script_poke_argv(const redisReply *p, char *numkeys, size_t nsize,
    const char ***argv, size_t **lens)
{
	const char	**a;
	size_t		 *l, n = p->elements / 3, i;
	int		  argc = (int)(3 + 3 * n);

	(void)snprintf(numkeys, nsize, "%zu", n);
	a = xcalloc((size_t)argc, sizeof(*a));
	l = xcalloc((size_t)argc, sizeof(*l));
	a[0] = "EVAL";
	a[1] = script_POKE.body;
	a[2] = numkeys;
	for (i = 0; i < 3; i++)
		l[i] = strlen(a[i]);
	for (i = 0; i < n; i++) {
		a[3 + i] = p->element[3 * i]->str;
		l[3 + i] = p->element[3 * i]->len;
		a[3 + n + 2 * i] = p->element[3 * i + 1]->str;
		l[3 + n + 2 * i] = p->element[3 * i + 1]->len;
		a[3 + n + 2 * i + 1] = p->element[3 * i + 2]->str;
		l[3 + n + 2 * i + 1] = p->element[3 * i + 2]->len;
	}
	*argv = a;
	*lens = l;
	return (argc);
}
