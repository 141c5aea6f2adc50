/* SPDX-License-Identifier: MIT */
/*
 * Sending commands and waiting for replies: one poll() loop over every
 * connection in flight, each bounded by its own deadlines, and the calls
 * the rest of the program makes (conn_command_many(), conn_command(), and
 * conn_start() .. conn_take() for a caller with a poll loop of its own).
 * Each connection's own steps are conn-io.c's.
 */

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include "conn-impl.h"

static struct conn *conn_waited(struct conn *);
static int	 conn_poll_set(struct conn *, struct pollfd *, int64_t,
		     int64_t *);
static size_t	 conn_poll_all(struct conn **, size_t, size_t,
		     struct pollfd *, int64_t *);
static void	 conn_wait_all(struct conn **, size_t, size_t, const sigset_t *,
		     struct conn_lead *, redisReply **, int *);
static void	 conn_collect(struct conn **, size_t, redisReply **, int *);
static void	 conn_stop(struct conn *);

/*
 * The conn the poll loop waits on in c's place: while the sentinels are
 * asked, the one to the sentinel asked.  When that is done, its answer
 * is taken first (and may lead to another).
 */
static struct conn *
conn_waited(struct conn *c)
{
	while (c->is_probing && c->probe->is_done)
		conn_act(c, conn_probe_step(c));
	return (c->is_probing ? c->probe : c);
}

/*
 * What to poll for c at now (its deadline may have come: then it fails,
 * and what follows may have a deadline of its own).  Returns 1 with *pfd
 * set and *wait_ns lowered to c's deadline, 0 when c is done.
 */
static int
conn_poll_set(struct conn *c0, struct pollfd *pfd, int64_t now,
    int64_t *wait_ns)
{
	struct conn *c;

	for (;;) {
		c = conn_waited(c0);
		if (c0->is_done)
			return (0);
		if (now < c->deadline_ns)
			break;
		conn_fail_late(c);
	}
	pfd->fd = c->fd;
	if (c->is_looking_up) {
		pfd->fd = c->lookup_fd;
		pfd->events = POLLIN;
	} else if (c->is_connecting && c->tls != NULL)
		pfd->events = c->tls_want_write ? POLLOUT : POLLIN;
	else if (c->is_connecting)
		pfd->events = POLLOUT;
	else
		pfd->events = POLLIN | (c->out_off < c->out_len ||
		    c->tls_want_write ? POLLOUT : 0);
	if (*wait_ns == -1 || c->deadline_ns - now < *wait_ns)
		*wait_ns = c->deadline_ns - now;
	return (1);
}

/*
 * Send the same command to n servers at once and wait in one poll() loop
 * until `need` of them have answered without error (n: all of them), each
 * bounded by its own connect and I/O timeouts (the I/O timeout counts from
 * the end of block_ns, the time a blocking command such as BZPOPMIN may
 * legitimately take) and by cap_ns, an absolute CLOCK_MONOTONIC deadline
 * (0: none).  Servers still pending when enough have answered are
 * disconnected.  replies[i] gets the reply (the caller frees it) or NULL;
 * results[i] a conn_result, with the message in conn_error(cs[i]).
 */
void
conn_command_many(struct conn **cs, size_t n, size_t need, int argc,
    const char **argv, const size_t *lens, int64_t block_ns, int64_t cap_ns,
    redisReply **replies, int *results)
{
	size_t		 i;
	/* While a blocking command waits, the caller's signals may end us;
	 * not with a lead, which has a command behind it (conn_set_lead). */
	const sigset_t	*mask = block_ns > 0 && n > 0 ?
			     cs[0]->conf.wait_mask : NULL;
	struct conn_lead *lead = n == 1 ? cs[0]->lead : NULL;

	for (i = 0; i < n; i++) {
		cs[i]->block_ns = block_ns + (cs[i]->lead != NULL ?
		    cs[i]->lead->block_ns : 0);
		conn_begin(cs[i], argc, argv, lens, cap_ns);
	}
	conn_wait_all(cs, n, need, mask, lead, replies, results);
}

/*
 * As conn_command_many(), but each server gets a command of its own: its
 * argcs[i] arguments argvs[i] of lengths lenss[i]; none blocks, all are
 * waited for.
 */
void
conn_command_each(struct conn **cs, size_t n, const int *argcs,
    const char ***argvs, size_t **lenss, int64_t cap_ns,
    redisReply **replies, int *results)
{
	size_t i;

	for (i = 0; i < n; i++) {
		cs[i]->block_ns = 0;
		conn_begin(cs[i], argcs[i], argvs[i], lenss[i], cap_ns);
	}
	conn_wait_all(cs, n, n, NULL, NULL, replies, results);
}

/*
 * The poll() loop of the commands begun on cs, until `need` have answered
 * (see conn_command_many()); mask: the signals a blocking wait lets in;
 * lead: cs[0]'s, whose stop_fd ends the wait.
 */
static void
conn_wait_all(struct conn **cs, size_t n, size_t need, const sigset_t *mask,
    struct conn_lead *lead, redisReply **replies, int *results)
{
	struct pollfd	*pfd;
	struct timespec	 ts;
	size_t		 i;
	int64_t		 wait_ns;

	pfd = xcalloc(n + 1, sizeof(*pfd));
	while (conn_poll_all(cs, n, need, pfd, &wait_ns) > 0) {
		/* Round up so that we never wake just before a deadline. */
		if (wait_ns >= 0)
			wait_ns = (wait_ns + 999999) / 1000000 * 1000000;
		ts.tv_sec = wait_ns / 1000000000;
		ts.tv_nsec = wait_ns % 1000000000;
		pfd[n].fd = lead != NULL ? lead->stop_fd : -1;
		pfd[n].events = POLLIN;
		pfd[n].revents = 0;
		if (ppoll(pfd, n + 1, wait_ns >= 0 ? &ts : NULL, mask) == -1) {
			if (errno == EINTR)
				continue;
			fatal(EXIT_UNAVAILABLE, "poll");
		}
		for (i = 0; i < n; i++)
			if (pfd[i].fd != -1 && pfd[i].revents != 0)
				conn_on_events(cs[i]->is_probing ?
				    cs[i]->probe : cs[i], pfd[i].revents);
		/* A reply that came with the signal is taken first. */
		if (pfd[n].revents != 0 && !cs[0]->is_done) {
			conn_stop(cs[0]);
			break;
		}
	}
	conn_collect(cs, n, replies, results);
	free(pfd);
}

/*
 * One turn of the loop: once `need` servers have answered, those still
 * pending are let go; the others' pfd[] and the wait until the nearest
 * deadline are set.  Returns how many are still in flight.
 */
static size_t
conn_poll_all(struct conn **cs, size_t n, size_t need, struct pollfd *pfd,
    int64_t *wait_ns)
{
	int64_t	now = clock_mono_ns();
	size_t	i, active = 0, answered = 0;

	*wait_ns = -1;
	for (i = 0; i < n; i++)
		if (cs[i]->is_done && cs[i]->result == CONN_OK)
			answered++;
	for (i = 0; i < n; i++) {
		pfd[i].fd = -1;
		pfd[i].events = pfd[i].revents = 0;
		if (!cs[i]->is_done && answered >= need)
			conn_fail(cs[i], CONN_UNAVAILABLE, "%s: not waited for",
			    cs[i]->dial->display);
		if (!cs[i]->is_done)
			active += (size_t)conn_poll_set(cs[i], &pfd[i], now,
			    wait_ns);
	}
	return (active);
}

/* Each server's reply and result to the caller; the conns made ready. */
static void
conn_collect(struct conn **cs, size_t n, redisReply **replies, int *results)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		replies[i] = cs[i]->reply;
		cs[i]->reply = NULL;
		results[i] = cs[i]->result;
		cs[i]->block_ns = 0;
		cs[i]->lead = NULL;
		cs[i]->alt_argc = 0;
		cs[i]->secret_arg = 0;
		cs[i]->secret_from = 0;
		cs[i]->secret_span = 0;
		cs[i]->secret_reply = 0;
	}
}

/*
 * The lead's stop_fd became readable: give up on c, whose command's
 * outcome is now unknown (the caller makes sure of it elsewhere).
 */
static void
conn_stop(struct conn *c)
{
	c->lead->is_stopped = 1;
	if (!c->is_done)
		conn_fail(c, CONN_UNAVAILABLE, "%s: interrupted",
		    c->dial->display);
	conn_close(c);
}

/* One command to one server; see conn_command_many(). */
int
conn_command(struct conn *c, int argc, const char **argv, const size_t *lens,
    int64_t cap_ns, redisReply **reply)
{
	int result;

	conn_command_many(&c, 1, 1, argc, argv, lens, 0, cap_ns, reply,
	    &result);
	return (result);
}

/*
 * The same one command without waiting for it, for a caller that waits on
 * other things too (run's supervisor: signals, and a BZPOPMIN between
 * renewals): conn_start() sends it, conn_pending() says what to poll for
 * (and fails it once its deadline has passed), conn_advance() takes what
 * poll() saw, conn_take() the reply once it is in.  argv and lens must
 * live until then.
 */
void
conn_start(struct conn *c, int argc, const char **argv, const size_t *lens,
    int64_t block_ns, int64_t cap_ns)
{
	c->block_ns = block_ns;
	conn_begin(c, argc, argv, lens, cap_ns);
}

/* 1 with *pfd set and *wait_ns lowered to c's deadline; 0 when done. */
int
conn_pending(struct conn *c, struct pollfd *pfd, int64_t *wait_ns)
{
	return (c->is_done ? 0 : conn_poll_set(c, pfd, clock_mono_ns(),
	    wait_ns));
}

void
conn_advance(struct conn *c, short revents)
{
	if (!c->is_done && revents != 0)
		conn_on_events(c->is_probing ? c->probe : c, revents);
}

/* The result of a command that conn_pending() says is done. */
int
conn_take(struct conn *c, redisReply **reply)
{
	*reply = c->reply;
	c->reply = NULL;
	c->block_ns = 0;
	c->alt_argc = 0;
	c->secret_arg = 0;
	c->secret_span = 0;
	c->secret_reply = 0;
	return (c->result);
}
