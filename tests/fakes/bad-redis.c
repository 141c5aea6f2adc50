/* SPDX-License-Identifier: MIT */
/*
 * bad-redis: a misbehaving Redis server for tests/faults/misbehaving.bats.
 * It reads real RESP requests and answers each with whatever it is told
 * to: wrong types, partial replies, huge lengths, any error reply, and it
 * can close or stall mid-reply, or trickle a reply out byte by byte.
 *
 * Usage:
 *	bad-redis [options] SOCKET PIDFILE LOG
 *
 * Listens on the unix socket SOCKET, writes its pid to PIDFILE once it
 * listens (PIDFILE appearing means "ready"), and appends one line per
 * request to LOG: the command name in upper case ("EVALSHA", "AUTH", ...,
 * "INLINE" for an inline command).  SIGTERM or SIGINT: exit 0.  One
 * process, one thread, one poll() loop; every connection is independent.
 *
 * Options (the bytes of a reply are taken verbatim: use bash's $'...'):
 *	-r REPLY	answer every request with REPLY (default "+OK\r\n")
 *	-R FILE		... with the bytes of FILE (a reply too long for an
 *			argument; no NUL bytes)
 *	-f N		... except the first N requests of each connection,
 *	-F REPLY	    which get this one (default "*2\r\n:1\r\n:1\r\n",
 *			    an acquire that won, fence 1)
 *	-n N		... the first N requests of the whole run, not of
 *			    each connection (-f counts per connection)
 *	-a ACTION	after each REPLY: "next" (read the next request,
 *			the default), "close" (close the connection), or
 *			"stall" (never write again on it; read and ignore)
 *	-x N		send N filler bytes ('x') after REPLY: with a huge
 *			bulk length in REPLY, a reply that never ends
 *	-d MS		trickle each reply out, one byte every MS ms
 *	-H		hang up on every connection at once, unread
 *
 * "@DEADPORT@" in a reply becomes a TCP port on 127.0.0.1 where nothing
 * listens (bound once at start, then closed), e.g. for a MOVED to a dead
 * node.
 *
 * Build: cc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -o bad-redis bad-redis.c
 */

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <ctype.h>
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

#define FAKE_NAME "bad-redis"
#include "fake.h"

#define IN_MAX		(64 * 1024 * 1024)	/* a request larger: close */
#define READ_SIZE	16384
#define NAME_MAX_LEN	32

enum after { AFTER_NEXT, AFTER_CLOSE, AFTER_STALL };

struct buf {
	char	*data;
	size_t	 len;
	size_t	 cap;
	size_t	 off;		/* out: bytes already written */
};

struct client {
	int		 fd;
	struct buf	 in;
	struct buf	 out;
	long long	 served;	/* requests answered on this connection */
	int		 is_stalled;
	int		 is_closing;	/* close once out is written */
	int		 is_dead;
	int64_t		 next_drip_ns;
};

static struct client		**clients;
static size_t			 nclients;
static char			*reply = "+OK\r\n";
static size_t			 reply_len = 5;
static char			*first_reply = "*2\r\n:1\r\n:1\r\n";
static size_t			 first_reply_len = 12;
static long long		 first_n;	/* per connection */
static long long		 global_n = -1;	/* whole run, -1: unused */
static long long		 served_total;
static enum after		 after = AFTER_NEXT;
static size_t			 filler;
static int64_t			 drip_ns;
static int			 hang_up;
static FILE			*logf;

static void
xclose(int fd)
{
	if (fd != -1 && close(fd) == -1 && errno != EINTR &&
	    fprintf(stderr, "bad-redis: close: %s\n", strerror(errno)) < 0) {
		/* nothing more to do */
	}
}

static long long
parse_num(const char *s, long long max, const char *what)
{
	char		*end;
	long long	 v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (*s < '0' || *s > '9' || errno != 0 || *end != '\0' || v > max)
		die("bad %s '%s'", what, s);
	return (v);
}

static void
buf_append(struct buf *b, const char *p, size_t n)
{
	size_t	 need;
	char	*d;

	if (n > SIZE_MAX - b->len)
		die("buffer too large");
	need = b->len + n;
	if (need > b->cap) {
		size_t cap = b->cap ? b->cap : 256;

		while (cap < need) {
			if (cap > SIZE_MAX / 2)
				die("buffer too large");
			cap *= 2;
		}
		if ((d = realloc(b->data, cap)) == NULL)
			die("out of memory");
		b->data = d;
		b->cap = cap;
	}
	if (n > 0)
		memcpy(b->data + b->len, p, n);
	b->len = need;
}

static void
buf_consume(struct buf *b, size_t n)
{
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
}

/* The bytes of the file path, NUL-terminated; *len gets how many (-R). */
static char *
read_reply(const char *path, size_t *len)
{
	struct buf	 b;
	char		 chunk[READ_SIZE];
	size_t		 n;
	FILE		*f;

	if ((f = fopen(path, "rb")) == NULL)
		die("%s: %s", path, strerror(errno));
	memset(&b, 0, sizeof(b));
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_append(&b, chunk, n);
	if (ferror(f))
		die("%s: read error", path);
	if (fclose(f) == EOF)
		die("%s: %s", path, strerror(errno));
	*len = b.len;
	buf_append(&b, "", 1);
	if (strlen(b.data) != *len)
		die("%s: a NUL byte in the reply", path);
	return (b.data);
}

/*
 * Replace every "@DEADPORT@" in s with a port where nothing listens.
 * Returns a new string (or s itself if there is none); *len updated.
 */
static char *
substitute_deadport(char *s, size_t *len)
{
	static const char	 tag[] = "@DEADPORT@";
	struct sockaddr_in	 sa;
	socklen_t		 sl = sizeof(sa);
	struct buf		 b;
	char			 port[16], *at, *p = s;
	int			 fd, n;

	if (strstr(s, tag) == NULL)
		return (s);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		die("socket: %s", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) == -1)
		die("cannot find a dead port: %s", strerror(errno));
	xclose(fd);
	n = snprintf(port, sizeof(port), "%d", ntohs(sa.sin_port));
	if (n < 0 || (size_t)n >= sizeof(port))
		die("port");
	memset(&b, 0, sizeof(b));
	while ((at = strstr(p, tag)) != NULL) {
		buf_append(&b, p, (size_t)(at - p));
		buf_append(&b, port, (size_t)n);
		p = at + sizeof(tag) - 1;
	}
	buf_append(&b, p, strlen(p) + 1);
	*len = b.len - 1;
	return (b.data);
}

/*
 * Is there one complete request at the start of b?  Returns its length
 * and the command name in name (upper case, cut to fit), 0 if more bytes
 * are needed, -1 if it is not RESP at all.
 */
static long long
parse_request(const struct buf *b, char *name, size_t namesz)
{
	const char	*p = b->data, *end = b->data + b->len, *nl;
	long long	 nargs, i, blen;
	size_t		 k;
	char		*e;

	name[0] = '\0';
	if (b->len == 0)
		return (0);
	if (*p != '*') {
		/* Inline command: one line. */
		if ((nl = memchr(p, '\n', b->len)) == NULL)
			return (0);
		(void)snprintf(name, namesz, "INLINE");
		return ((long long)(nl - p + 1));
	}
	if ((nl = memchr(p, '\n', b->len)) == NULL)
		return (0);
	errno = 0;
	nargs = strtoll(p + 1, &e, 10);
	if (errno != 0 || e == p + 1 || *e != '\r' || nargs < 0 ||
	    nargs > 1024 * 1024)
		return (-1);
	p = nl + 1;
	for (i = 0; i < nargs; i++) {
		if (p >= end)
			return (0);
		if (*p != '$')
			return (-1);
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			return (0);
		errno = 0;
		blen = strtoll(p + 1, &e, 10);
		if (errno != 0 || e == p + 1 || *e != '\r' || blen < 0 ||
		    blen > IN_MAX)
			return (-1);
		p = nl + 1;
		if (end - p < blen + 2)
			return (0);
		if (i == 0) {
			for (k = 0; k < (size_t)blen && k + 1 < namesz; k++)
				name[k] = (char)toupper((unsigned char)p[k]);
			name[k] = '\0';
		}
		p += blen + 2;
	}
	return ((long long)(p - b->data));
}

static void
log_request(const char *name)
{
	if (fprintf(logf, "%s\n", name[0] ? name : "?") < 0 ||
	    fflush(logf) == EOF)
		die("log: %s", strerror(errno));
}

/* Answer every complete request in c->in. */
static void
serve(struct client *c)
{
	char		name[NAME_MAX_LEN];
	long long	n;
	int		first;

	while (!c->is_dead && (n = parse_request(&c->in, name,
	    sizeof(name))) != 0) {
		if (n < 0) {
			c->is_dead = 1;		/* not RESP: hang up */
			return;
		}
		buf_consume(&c->in, (size_t)n);
		log_request(name);
		if (c->is_stalled || c->is_closing)
			continue;
		if (global_n >= 0)
			first = served_total < global_n;
		else
			first = c->served < first_n;
		c->served++;
		served_total++;
		if (first) {
			buf_append(&c->out, first_reply, first_reply_len);
			continue;
		}
		buf_append(&c->out, reply, reply_len);
		if (filler > 0) {
			size_t	 left = filler;
			char	 x[READ_SIZE];

			memset(x, 'x', sizeof(x));
			while (left > 0) {
				size_t k = left < sizeof(x) ? left : sizeof(x);

				buf_append(&c->out, x, k);
				left -= k;
			}
		}
		if (after == AFTER_CLOSE)
			c->is_closing = 1;
		else if (after == AFTER_STALL)
			c->is_stalled = 1;	/* after this reply goes */
	}
}

static void
client_read(struct client *c)
{
	char	buf[READ_SIZE];
	ssize_t	n;

	n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n == -1) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			c->is_dead = 1;
		return;
	}
	if (n == 0) {
		c->is_dead = 1;
		return;
	}
	if (c->in.len + (size_t)n > IN_MAX) {
		c->is_dead = 1;
		return;
	}
	buf_append(&c->in, buf, (size_t)n);
	serve(c);
}

static void
client_write(struct client *c, int64_t now)
{
	size_t	want;
	ssize_t	n;

	while (c->out.off < c->out.len) {
		want = c->out.len - c->out.off;
		if (drip_ns > 0) {
			if (now < c->next_drip_ns)
				return;
			want = 1;
		}
		n = send(c->fd, c->out.data + c->out.off, want,
		    MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n == -1) {
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR)
				c->is_dead = 1;
			return;
		}
		c->out.off += (size_t)n;
		if (drip_ns > 0) {
			c->next_drip_ns = now + drip_ns;
			break;
		}
	}
	if (c->out.off == c->out.len) {
		c->out.off = c->out.len = 0;
		if (c->is_closing)
			c->is_dead = 1;
	}
}

static void
client_free(struct client *c)
{
	xclose(c->fd);
	free(c->in.data);
	free(c->out.data);
	free(c);
}

static void
usage(void)
{
	if (fputs("usage: bad-redis [-H] [-r REPLY | -R FILE] [-f N] [-F REPLY] "
	    "[-n N] [-a next|close|stall] [-x N] [-d MS] SOCKET PIDFILE LOG\n",
	    stderr) == EOF) {
		/* nothing to do */
	}
	exit(2);
}

int
main(int argc, char **argv)
{
	struct sockaddr_un	 sun;
	sigset_t		 waitmask;
	struct pollfd		*pfd = NULL;
	struct timespec		 ts, *tsp;
	size_t			 cap = 0, i, j, n;
	int64_t			 now, wake;
	int			 ch, lfd, fd, rc;
	const char		*sock, *pidfile;
	char			*tmp;
	FILE			*f;

	while ((ch = getopt(argc, argv, "Hr:R:f:F:n:a:x:d:")) != -1) {
		switch (ch) {
		case 'H':
			hang_up = 1;
			break;
		case 'r':
			reply = optarg;
			reply_len = strlen(optarg);
			break;
		case 'R':
			reply = read_reply(optarg, &reply_len);
			break;
		case 'f':
			first_n = parse_num(optarg, 1000000, "count");
			break;
		case 'F':
			first_reply = optarg;
			first_reply_len = strlen(optarg);
			break;
		case 'n':
			global_n = parse_num(optarg, 1000000, "count");
			break;
		case 'a':
			if (strcmp(optarg, "next") == 0)
				after = AFTER_NEXT;
			else if (strcmp(optarg, "close") == 0)
				after = AFTER_CLOSE;
			else if (strcmp(optarg, "stall") == 0)
				after = AFTER_STALL;
			else
				usage();
			break;
		case 'x':
			filler = (size_t)parse_num(optarg, 256 * 1024 * 1024,
			    "filler size");
			break;
		case 'd':
			drip_ns = parse_num(optarg, 60000, "drip") * 1000000;
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 3)
		usage();
	sock = argv[optind];
	pidfile = argv[optind + 1];
	reply = substitute_deadport(reply, &reply_len);
	first_reply = substitute_deadport(first_reply, &first_reply_len);
	if ((logf = fopen(argv[optind + 2], "a")) == NULL)
		die("%s: %s", argv[optind + 2], strerror(errno));

	fake_signals(&waitmask);

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(sock) >= sizeof(sun.sun_path))
		die("%s: socket path too long", sock);
	memcpy(sun.sun_path, sock, strlen(sock) + 1);
	if (unlink(sock) == -1 && errno != ENOENT)
		die("%s: %s", sock, strerror(errno));
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (lfd == -1 || bind(lfd, (struct sockaddr *)&sun, sizeof(sun)) ==
	    -1 || listen(lfd, 64) == -1)
		die("%s: %s", sock, strerror(errno));

	if ((tmp = malloc(strlen(pidfile) + 5)) == NULL)
		die("out of memory");
	memcpy(tmp, pidfile, strlen(pidfile));
	memcpy(tmp + strlen(pidfile), ".tmp", 5);
	if ((f = fopen(tmp, "w")) == NULL ||
	    fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f) == EOF ||
	    rename(tmp, pidfile) == -1)
		die("%s: %s", pidfile, strerror(errno));
	free(tmp);

	while (!got_term) {
		if (nclients + 1 > cap) {
			cap = nclients + 16;
			if (cap > SIZE_MAX / sizeof(*pfd))
				die("too many connections");
			if ((pfd = realloc(pfd, cap * sizeof(*pfd))) == NULL)
				die("out of memory");
		}
		now = now_ns();
		wake = -1;
		pfd[0].fd = lfd;
		pfd[0].events = POLLIN;
		pfd[0].revents = 0;
		for (i = 0; i < nclients; i++) {
			struct client *c = clients[i];

			pfd[i + 1].fd = c->fd;
			pfd[i + 1].events = POLLIN;
			pfd[i + 1].revents = 0;
			if (c->out.off >= c->out.len)
				continue;
			if (drip_ns > 0 && now < c->next_drip_ns) {
				if (wake == -1 || c->next_drip_ns < wake)
					wake = c->next_drip_ns;
			} else
				pfd[i + 1].events |= POLLOUT;
		}
		n = nclients + 1;
		tsp = NULL;
		if (wake != -1) {
			ts.tv_sec = (time_t)((wake - now) / 1000000000LL);
			ts.tv_nsec = (long)((wake - now) % 1000000000LL);
			tsp = &ts;
		}
		rc = ppoll(pfd, n, tsp, &waitmask);
		if (rc == -1) {
			if (errno == EINTR)
				continue;
			die("ppoll: %s", strerror(errno));
		}
		now = now_ns();
		for (i = 0; i < nclients; i++) {
			struct client *c = clients[i];

			if (pfd[i + 1].revents & (POLLIN | POLLHUP | POLLERR))
				client_read(c);
			if (!c->is_dead)
				client_write(c, now);
		}
		for (i = 0, j = 0; i < nclients; i++) {
			if (clients[i]->is_dead)
				client_free(clients[i]);
			else
				clients[j++] = clients[i];
		}
		nclients = j;
		if (!(pfd[0].revents & POLLIN))
			continue;
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1) {
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR && errno != ECONNABORTED)
				die("accept: %s", strerror(errno));
			continue;
		}
		if (hang_up) {
			log_request("HANGUP");
			xclose(fd);
			continue;
		}
		if (nclients >= SIZE_MAX / sizeof(*clients) - 1)
			die("too many connections");
		clients = realloc(clients, (nclients + 1) * sizeof(*clients));
		if (clients == NULL)
			die("out of memory");
		if ((clients[nclients] = calloc(1, sizeof(**clients))) == NULL)
			die("out of memory");
		clients[nclients++]->fd = fd;
	}
	for (i = 0; i < nclients; i++)
		client_free(clients[i]);
	free(clients);
	free(pfd);
	xclose(lfd);
	if (unlink(sock) == -1 && errno != ENOENT)
		die("%s: %s", sock, strerror(errno));
	if (unlink(pidfile) == -1 && errno != ENOENT)
		die("%s: %s", pidfile, strerror(errno));
	if (fclose(logf) == EOF)
		die("log: %s", strerror(errno));
	return (0);
}
