/* SPDX-License-Identifier: MIT */
/*
 * proxy: a loopback TCP proxy for the fault-injection tests
 * (tests/faults/), whose behaviour the tests switch while it runs.
 *
 * Usage:
 *	proxy LISTEN_PORT TARGET_PORT PIDFILE CONTROL
 *
 * Listens on 127.0.0.1:LISTEN_PORT (0: any free port) and forwards every
 * connection to 127.0.0.1:TARGET_PORT.  Once listening it writes CONTROL.ack
 * (see below, it carries the port) and then its pid to PIDFILE, so PIDFILE
 * appearing means "ready".  SIGTERM or SIGINT: close everything, remove
 * PIDFILE, exit 0.  One process, one thread, one poll() loop.
 *
 * Control.  CONTROL is a file that the proxy reads every 20 ms.  Write one
 * line "SEQ MODE [ARG]" into it, atomically (write a temporary file, then
 * rename it over CONTROL), with SEQ a number other than the last one.  The
 * proxy applies the mode and then writes CONTROL.ack, also atomically:
 *
 *	seq=SEQ mode=MODE port=P accepted=A open=O up=U down=D unread=N
 *
 * (A: connections accepted so far, O: open now, U and D: bytes read from
 * clients and from the server so far, N: bytes that clients sent and the
 * proxy has not read yet, e.g. a request held by freeze).  A bad line is
 * acknowledged with mode=error.  The ack is rewritten whenever the
 * counters change, at most every 20 ms, so tests can also poll it for "a
 * client has connected" or "a request is waiting".
 *
 * Modes:
 *	pass		forward both ways (the initial mode)
 *	drop		close every connection and stop listening: new
 *			connections are refused (ECONNREFUSED) until the
 *			next mode, when the proxy listens on the same port
 *	blackhole	accept and read from everyone, forward nothing and
 *			answer nothing: existing connections go silent
 *	mute		forward client to server, read and discard what the
 *			server answers (a request gets through, its reply
 *			is lost)
 *	delay MS	forward both ways, each chunk MS milliseconds after
 *			it was read
 *	freeze		read nothing from either side and write nothing:
 *			bytes wait in the kernel's buffers and flow on, late,
 *			when the mode changes (new connections are accepted
 *			and connected to the server, but not read either)
 *
 * A connection that lost bytes (blackhole, mute) carries a broken stream:
 * it is closed when the proxy leaves that mode.  When one side of a
 * connection closes, what was read from it is still delivered (at its
 * time), then both sides are closed.
 *
 * Build: cc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -o proxy proxy.c
 */

#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FAKE_NAME "proxy"
#include "fake.h"

#define TICK_NS		(20 * 1000000LL)	/* control file poll */
#define QUEUE_MAX	(1024 * 1024)	/* bytes queued per direction */
#define READ_SIZE	16384

enum mode { M_PASS, M_DROP, M_BLACKHOLE, M_MUTE, M_DELAY, M_FREEZE };
static const char *mode_names[] = {
	"pass", "drop", "blackhole", "mute", "delay", "freeze"
};

struct chunk {
	struct chunk	*next;
	int64_t		 due_ns;
	size_t		 len;
	size_t		 off;
	char		 data[];
};

struct queue {
	struct chunk	*head;
	struct chunk	*tail;
	size_t		 bytes;
};

struct pair {
	int		 cfd;		/* client side */
	int		 sfd;		/* server side, -1 if none */
	int		 is_connecting;	/* sfd: connect() under way */
	int		 is_tainted;	/* bytes were discarded */
	int		 c_eof;		/* client closed its side */
	int		 s_eof;		/* server closed its side */
	int		 is_dead;	/* close at the end of this round */
	struct queue	 to_s;
	struct queue	 to_c;
};

static enum mode		 mode = M_PASS;
static int64_t			 delay_ns;
static long long		 seq;
static int			 seq_known;
static int			 listen_fd = -1;
static int			 listen_port;
static int			 target_port;
static struct pair		**pairs;
static size_t			 npairs;
static unsigned long long	 n_accepted, n_up, n_down;
static char			*ack_path, *ack_tmp, *ctl_path;
static char			 ack_last[256];
static int			 ack_bad;	/* the last SEQ was a bad line */

static void
warnmsg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (fputs("proxy: ", stderr) == EOF ||
	    vfprintf(stderr, fmt, ap) < 0 || fputc('\n', stderr) == EOF) {
		/* Nowhere left to complain to. */
	}
	va_end(ap);
}

static void *
xmalloc(size_t n)
{
	void *p = malloc(n);

	if (p == NULL)
		die("out of memory");
	return (p);
}

static char *
xstrcat2(const char *a, const char *b)
{
	size_t	 la = strlen(a), lb = strlen(b);
	char	*p;

	if (la > SIZE_MAX - lb - 1)
		die("path too long");
	p = xmalloc(la + lb + 1);
	memcpy(p, a, la);
	memcpy(p + la, b, lb + 1);
	return (p);
}

static void
xclose(int fd)
{
	if (fd != -1 && close(fd) == -1 && errno != EINTR)
		warnmsg("close: %s", strerror(errno));
}

/* Parse a port: 0..65535, digits only. */
static int
parse_port(const char *s, int *out)
{
	char	*end;
	long	 v;

	if (*s < '0' || *s > '9')
		return (-1);
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < 0 || v > 65535)
		return (-1);
	*out = (int)v;
	return (0);
}

/* --- queues ------------------------------------------------------------ */

static void
queue_push(struct queue *q, const char *buf, size_t len, int64_t due)
{
	struct chunk *c;

	if (len > SIZE_MAX - sizeof(*c))
		die("chunk too large");
	c = xmalloc(sizeof(*c) + len);
	c->next = NULL;
	c->due_ns = due;
	c->len = len;
	c->off = 0;
	memcpy(c->data, buf, len);
	if (q->tail != NULL)
		q->tail->next = c;
	else
		q->head = c;
	q->tail = c;
	q->bytes += len;
}

static void
queue_clear(struct queue *q)
{
	struct chunk *c, *next;

	for (c = q->head; c != NULL; c = next) {
		next = c->next;
		free(c);
	}
	q->head = q->tail = NULL;
	q->bytes = 0;
}

static int
queue_ready(const struct queue *q, int64_t now)
{
	return (q->head != NULL && q->head->due_ns <= now);
}

/*
 * Write what is due from q to fd.  Returns 0, or -1 when the peer is gone.
 */
static int
queue_flush(struct queue *q, int fd, int64_t now)
{
	struct chunk	*c;
	ssize_t		 n;

	while ((c = q->head) != NULL && c->due_ns <= now) {
		n = send(fd, c->data + c->off, c->len - c->off,
		    MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n == -1) {
			if (errno == EAGAIN || errno == EWOULDBLOCK ||
			    errno == EINTR)
				return (0);
			return (-1);
		}
		c->off += (size_t)n;
		q->bytes -= (size_t)n;
		if (c->off < c->len)
			return (0);
		q->head = c->next;
		if (q->head == NULL)
			q->tail = NULL;
		free(c);
	}
	return (0);
}

/* --- connections ------------------------------------------------------- */

static void
pair_close(struct pair *p)
{
	xclose(p->cfd);
	xclose(p->sfd);
	queue_clear(&p->to_s);
	queue_clear(&p->to_c);
	free(p);
}

static void
close_all(int only_tainted)
{
	size_t i, j;

	for (i = 0, j = 0; i < npairs; i++) {
		if (!only_tainted || pairs[i]->is_tainted)
			pair_close(pairs[i]);
		else
			pairs[j++] = pairs[i];
	}
	npairs = j;
}

static int
listen_open(void)
{
	struct sockaddr_in	sa;
	socklen_t		len = sizeof(sa);
	int			fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1) {
		warnmsg("socket: %s", strerror(errno));
		return (-1);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)listen_port);
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == -1 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1 ||
	    listen(fd, 128) == -1 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) == -1) {
		warnmsg("listen on 127.0.0.1:%d: %s", listen_port,
		    strerror(errno));
		xclose(fd);
		return (-1);
	}
	listen_port = ntohs(sa.sin_port);
	listen_fd = fd;
	return (0);
}

/* Start a non-blocking connect to the target.  Returns the fd or -1. */
static int
upstream_open(int *connecting)
{
	struct sockaddr_in	sa;
	int			fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return (-1);
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ==
	    -1) {
		xclose(fd);
		return (-1);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)target_port);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		*connecting = 0;
		return (fd);
	}
	if (errno == EINPROGRESS) {
		*connecting = 1;
		return (fd);
	}
	xclose(fd);
	return (-1);
}

static void
accept_one(void)
{
	struct pair	*p;
	int		 fd, one = 1, connecting = 0;

	fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd == -1) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
		    errno != ECONNABORTED)
			warnmsg("accept: %s", strerror(errno));
		return;
	}
	n_accepted++;
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ==
	    -1)
		warnmsg("TCP_NODELAY: %s", strerror(errno));
	p = xmalloc(sizeof(*p));
	memset(p, 0, sizeof(*p));
	p->cfd = fd;
	p->sfd = -1;
	if (mode == M_BLACKHOLE)
		p->is_tainted = 1;	/* no server behind it, ever */
	else if ((p->sfd = upstream_open(&connecting)) == -1) {
		/* The server is down: so is this connection. */
		xclose(fd);
		free(p);
		return;
	} else
		p->is_connecting = connecting;
	if (npairs >= SIZE_MAX / sizeof(*pairs) - 1)
		die("too many connections");
	pairs = realloc(pairs, (npairs + 1) * sizeof(*pairs));
	if (pairs == NULL)
		die("out of memory");
	pairs[npairs++] = p;
}

/*
 * Read what fd has.  Forward it to q at its due time, or discard it.
 * Returns 1 on EOF or error, else 0.
 */
static int
pump(struct pair *p, int fd, struct queue *q, int forward,
    unsigned long long *count, int64_t now)
{
	char	buf[READ_SIZE];
	ssize_t	n;

	n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n == -1)
		return (errno == EAGAIN || errno == EWOULDBLOCK ||
		    errno == EINTR ? 0 : 1);
	if (n == 0)
		return (1);
	*count += (unsigned long long)n;
	if (forward)
		queue_push(q, buf, (size_t)n, now + (mode == M_DELAY ?
		    delay_ns : 0));
	else
		p->is_tainted = 1;
	return (0);
}

/* --- control ----------------------------------------------------------- */

/* Bytes that clients sent and that we have not read (FIONREAD). */
static unsigned long long
unread_bytes(void)
{
	unsigned long long	total = 0;
	size_t			i;
	int			n;

	for (i = 0; i < npairs; i++) {
		if (pairs[i]->c_eof)
			continue;
		if (ioctl(pairs[i]->cfd, FIONREAD, &n) == -1)
			warnmsg("FIONREAD: %s", strerror(errno));
		else if (n > 0)
			total += (unsigned long long)n;
	}
	return (total);
}

static void
ack_write(void)
{
	char	 line[256];
	FILE	*f;
	int	 n;

	n = snprintf(line, sizeof(line), "seq=%lld mode=%s port=%d "
	    "accepted=%llu open=%zu up=%llu down=%llu unread=%llu\n", seq,
	    ack_bad ? "error" : mode_names[mode], listen_port, n_accepted,
	    npairs, n_up, n_down, unread_bytes());
	if (n < 0 || (size_t)n >= sizeof(line))
		die("ack line too long");
	if (strcmp(line, ack_last) == 0)
		return;
	if ((f = fopen(ack_tmp, "w")) == NULL) {
		warnmsg("%s: %s", ack_tmp, strerror(errno));
		return;
	}
	if (fputs(line, f) == EOF) {
		warnmsg("%s: write failed", ack_tmp);
		if (fclose(f) == EOF) {
			/* already failed */
		}
		return;
	}
	if (fclose(f) == EOF) {
		warnmsg("%s: %s", ack_tmp, strerror(errno));
		return;
	}
	if (rename(ack_tmp, ack_path) == -1) {
		warnmsg("rename %s: %s", ack_path, strerror(errno));
		return;
	}
	memcpy(ack_last, line, (size_t)n + 1);
}

static void
mode_set(enum mode m, int64_t arg_ns)
{
	enum mode old = mode;

	mode = m;
	delay_ns = arg_ns;
	if (old == M_BLACKHOLE || old == M_MUTE)
		close_all(1);
	if (m == M_DROP) {
		close_all(0);
		if (listen_fd != -1) {
			xclose(listen_fd);
			listen_fd = -1;
		}
	}
}

/* Read CONTROL; apply a new SEQ.  The buffer bounds what is read. */
static void
control_poll(void)
{
	char		 buf[128], word[16], *end, *p;
	long long	 s, ms = 0;
	ssize_t		 n;
	size_t		 wl;
	int		 fd;
	enum mode	 m;

	fd = open(ctl_path, O_RDONLY | O_CLOEXEC);
	if (fd == -1) {
		if (errno != ENOENT)
			warnmsg("%s: %s", ctl_path, strerror(errno));
		return;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	xclose(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	errno = 0;
	s = strtoll(buf, &end, 10);
	if (end == buf || errno != 0 || *end != ' ')
		return;		/* not even a SEQ: ignore until rewritten */
	if (seq_known && s == seq)
		return;
	seq = s;
	seq_known = 1;
	p = end + 1;
	wl = strcspn(p, " \n");
	if (wl == 0 || wl >= sizeof(word)) {
		ack_bad = 1;
		ack_write();
		return;
	}
	memcpy(word, p, wl);
	word[wl] = '\0';
	p += wl;
	for (m = M_PASS; m <= M_FREEZE; m++)
		if (strcmp(word, mode_names[m]) == 0)
			break;
	if (m > M_FREEZE) {
		ack_bad = 1;
		ack_write();
		return;
	}
	if (m == M_DELAY) {
		errno = 0;
		ms = *p == ' ' ? strtoll(p + 1, &end, 10) : -1;
		if (*p != ' ' || errno != 0 || end == p + 1 || ms < 0 ||
		    ms > 3600000 || (*end != '\0' && *end != '\n')) {
			ack_bad = 1;
			ack_write();
			return;
		}
	} else if (*p != '\0' && *p != '\n') {
		ack_bad = 1;
		ack_write();
		return;
	}
	ack_bad = 0;
	mode_set(m, ms * 1000000LL);
	ack_write();
}

/* --- main loop --------------------------------------------------------- */

static void
write_pidfile(const char *path)
{
	char	*tmp = xstrcat2(path, ".tmp");
	FILE	*f;

	if ((f = fopen(tmp, "w")) == NULL)
		die("%s: %s", tmp, strerror(errno));
	if (fprintf(f, "%ld\n", (long)getpid()) < 0)
		die("%s: write failed", tmp);
	if (fclose(f) == EOF)
		die("%s: %s", tmp, strerror(errno));
	if (rename(tmp, path) == -1)
		die("rename %s: %s", path, strerror(errno));
	free(tmp);
}

/* Events wanted on a pair's two fds in the current mode. */
static void
pair_events(const struct pair *p, int64_t now, short *cev, short *sev)
{
	int reads = mode != M_FREEZE, writes = mode != M_FREEZE &&
	    mode != M_BLACKHOLE;

	*cev = *sev = 0;
	if (reads && !p->c_eof && p->to_s.bytes < QUEUE_MAX)
		*cev |= POLLIN;
	if (writes && queue_ready(&p->to_c, now))
		*cev |= POLLOUT;
	if (p->sfd == -1)
		return;
	if (p->is_connecting) {
		*sev = POLLOUT;
		return;
	}
	if (reads && !p->s_eof && p->to_c.bytes < QUEUE_MAX)
		*sev |= POLLIN;
	if (writes && queue_ready(&p->to_s, now))
		*sev |= POLLOUT;
}

static void
pair_io(struct pair *p, short crev, short srev, int64_t now)
{
	int		 err = 0;
	socklen_t	 len = sizeof(err);
	int		 fwd_up = mode == M_PASS || mode == M_DELAY ||
			     mode == M_MUTE;
	int		 fwd_down = mode == M_PASS || mode == M_DELAY;

	if (p->sfd != -1 && p->is_connecting && srev != 0) {
		if (getsockopt(p->sfd, SOL_SOCKET, SO_ERROR, &err, &len) == -1 ||
		    err != 0) {
			p->is_dead = 1;
			return;
		}
		p->is_connecting = 0;
		srev = 0;
	}
	if (crev & (POLLIN | POLLHUP | POLLERR) && !p->c_eof &&
	    mode != M_FREEZE)
		p->c_eof = pump(p, p->cfd, &p->to_s, fwd_up && p->sfd != -1,
		    &n_up, now);
	if (p->sfd != -1 && srev & (POLLIN | POLLHUP | POLLERR) &&
	    !p->s_eof && !p->is_connecting && mode != M_FREEZE)
		p->s_eof = pump(p, p->sfd, &p->to_c, fwd_down, &n_down, now);
	if (mode == M_BLACKHOLE) {
		if (p->to_s.bytes > 0 || p->to_c.bytes > 0)
			p->is_tainted = 1;
		queue_clear(&p->to_s);
		queue_clear(&p->to_c);
	}
	/*
	 * A side we cannot write to is gone: drop what was queued for it,
	 * but still deliver what it sent to the other side.
	 */
	if (mode != M_FREEZE && mode != M_BLACKHOLE) {
		if (queue_flush(&p->to_c, p->cfd, now) == -1) {
			queue_clear(&p->to_c);
			p->c_eof = 1;
		}
		if (p->sfd != -1 && !p->is_connecting &&
		    queue_flush(&p->to_s, p->sfd, now) == -1) {
			queue_clear(&p->to_s);
			p->s_eof = 1;
		}
	}
	/* A side that closed: deliver what it sent, then close both. */
	if (p->c_eof && (p->to_s.head == NULL || p->sfd == -1))
		p->is_dead = 1;
	if (p->s_eof && p->to_c.head == NULL)
		p->is_dead = 1;
}

static int64_t
next_due(int64_t now, int64_t limit)
{
	size_t		 i;
	int64_t		 t = limit;
	struct queue	*qs[2];
	int		 k;

	if (mode == M_FREEZE || mode == M_BLACKHOLE)
		return (t);
	for (i = 0; i < npairs; i++) {
		qs[0] = &pairs[i]->to_s;
		qs[1] = &pairs[i]->to_c;
		for (k = 0; k < 2; k++)
			if (qs[k]->head != NULL && qs[k]->head->due_ns > now &&
			    qs[k]->head->due_ns < t)
				t = qs[k]->head->due_ns;
	}
	return (t);
}

int
main(int argc, char **argv)
{
	sigset_t		 waitmask;
	struct pollfd		*pfd = NULL;
	struct timespec		 ts;
	size_t			 cap = 0, i, j, n;
	int64_t			 now, next_tick = 0, wake;
	int			 rc, lslot;
	const char		*pidfile;

	if (argc != 5 || parse_port(argv[1], &listen_port) == -1 ||
	    parse_port(argv[2], &target_port) == -1 || target_port == 0) {
		if (fputs("usage: proxy LISTEN_PORT TARGET_PORT PIDFILE "
		    "CONTROL\n", stderr) == EOF) {
			/* nothing to do */
		}
		return (2);
	}
	pidfile = argv[3];
	ctl_path = argv[4];
	ack_path = xstrcat2(ctl_path, ".ack");
	ack_tmp = xstrcat2(ctl_path, ".ack.tmp");

	fake_signals(&waitmask);

	if (listen_open() == -1)
		return (2);
	control_poll();		/* a CONTROL written before we started */
	ack_write();
	write_pidfile(pidfile);

	while (!got_term) {
		now = now_ns();
		if (now >= next_tick) {
			control_poll();
			if (mode != M_DROP && listen_fd == -1 &&
			    listen_open() == -1)
				warnmsg("cannot listen again; retrying");
			ack_write();
			next_tick = now + TICK_NS;
		}
		if (npairs + 1 > cap) {
			cap = npairs + 16;
			if (cap > SIZE_MAX / (2 * sizeof(*pfd)))
				die("too many connections");
			pfd = realloc(pfd, cap * 2 * sizeof(*pfd));
			if (pfd == NULL)
				die("out of memory");
		}
		n = 0;
		lslot = -1;
		if (listen_fd != -1) {
			lslot = 0;
			pfd[n].fd = listen_fd;
			pfd[n].events = POLLIN;
			pfd[n++].revents = 0;
		}
		for (i = 0; i < npairs; i++) {
			short cev, sev;

			pair_events(pairs[i], now, &cev, &sev);
			pfd[n].fd = cev != 0 ? pairs[i]->cfd : -1;
			pfd[n].events = cev;
			pfd[n++].revents = 0;
			pfd[n].fd = sev != 0 ? pairs[i]->sfd : -1;
			pfd[n].events = sev;
			pfd[n++].revents = 0;
		}
		wake = next_due(now, next_tick);
		if (wake < now)
			wake = now;
		ts.tv_sec = (time_t)((wake - now) / 1000000000LL);
		ts.tv_nsec = (long)((wake - now) % 1000000000LL);
		rc = ppoll(pfd, n, &ts, &waitmask);
		if (rc == -1) {
			if (errno == EINTR)
				continue;
			die("ppoll: %s", strerror(errno));
		}
		now = now_ns();
		j = lslot == 0 ? 1 : 0;
		for (i = 0; i < npairs; i++, j += 2)
			pair_io(pairs[i], pfd[j].revents, pfd[j + 1].revents,
			    now);
		for (i = 0, j = 0; i < npairs; i++) {
			if (pairs[i]->is_dead)
				pair_close(pairs[i]);
			else
				pairs[j++] = pairs[i];
		}
		npairs = j;
		if (lslot == 0 && pfd[0].revents & POLLIN)
			accept_one();
	}
	close_all(0);
	xclose(listen_fd);
	free(pairs);
	free(pfd);
	if (unlink(pidfile) == -1 && errno != ENOENT)
		warnmsg("%s: %s", pidfile, strerror(errno));
	return (0);
}
