/* SPDX-License-Identifier: MIT */
/*
 * Name lookups that cannot block.  getaddrinfo() has no deadline of its
 * own: a resolver that never answers holds it for its timeout times its
 * attempts times the address families, ten seconds and more, and a
 * renewal that reconnects does this while the lock is held.  So a host
 * name is looked up in a child process that writes the addresses into a
 * pipe; the poll loop of conn-poll.c watches the pipe like any socket, and
 * past the connection's deadline the child is killed.  Numeric addresses
 * are converted at once, without a child.
 *
 * The addresses found are kept for the next connection to the same host
 * and port (a renewal that reconnects then needs no lookup at all), and
 * dropped as soon as a connection to them fails, so that a name that
 * moves (a managed service's failover) is looked up again.
 */

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef REDLOCK_STATIC
#include <nss.h>
#endif

#include "conn-impl.h"


static struct addrinfo *conn_addr_new(int, int, int, const void *, size_t);
static int	 conn_addrs_copy(struct conn *, const struct addrinfo *);
static void	 conn_lookup_child(int, const char *, const char *);
static int	 conn_lookup_parse(struct conn *);
static void	 conn_lookup_end(struct conn *, int);

/* One node of our own address list: the addrinfo and its address. */
static struct addrinfo *
conn_addr_new(int family, int socktype, int protocol, const void *addr,
    size_t addrlen)
{
	struct addrinfo	*ai;

	ai = xcalloc(1, sizeof(*ai) + sizeof(struct sockaddr_storage));
	ai->ai_family = family;
	ai->ai_socktype = socktype;
	ai->ai_protocol = protocol;
	ai->ai_addrlen = (socklen_t)addrlen;
	ai->ai_addr = (struct sockaddr *)(ai + 1);
	memcpy(ai->ai_addr, addr, addrlen);
	return (ai);
}

void
conn_addrs_free(struct conn *c)
{
	struct addrinfo *ai, *next;

	for (ai = c->addrs; ai != NULL; ai = next) {
		next = ai->ai_next;
		free(ai);
	}
	c->addrs = c->addr = NULL;
	free(c->addrs_host);
	c->addrs_host = NULL;
}

/* getaddrinfo's list into ours (c->addrs), so that one free fits all. */
static int
conn_addrs_copy(struct conn *c, const struct addrinfo *res)
{
	struct addrinfo	**tail = &c->addrs;
	size_t		  n = 0;

	for (; res != NULL && n < CONN_MAX_ADDRS; res = res->ai_next) {
		if (res->ai_addrlen > sizeof(struct sockaddr_storage))
			continue;
		*tail = conn_addr_new(res->ai_family, res->ai_socktype,
		    res->ai_protocol, res->ai_addr, res->ai_addrlen);
		tail = &(*tail)->ai_next;
		n++;
	}
	return (n > 0 ? 0 : -1);
}

/* In the child: look up, write the records, end. */
static void
conn_lookup_child(int fd, const char *host, const char *port)
{
	struct conn_addr_record	 rec;
	struct addrinfo		 hints, *res = NULL, *ai;
	int			 rc;

	/* If we die, the lookup has no one to tell. */
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	/*
	 * Hold nothing of ours but the pipe: the guardian of run learns of
	 * our death from the end of its socket, which a copy here would
	 * keep open.  (close_range may be missing: then the parent-death
	 * signal above still ends us at once.)
	 */
	if (fd != 3 && dup2(fd, 3) == 3)
		fd = 3;
	if (fd == 3)
		(void)close_range(4, ~0U, 0);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
#ifdef REDLOCK_STATIC
	/* Static: files and DNS, built into the C library; no NSS module,
	 * which would load a second, shared C library (make STATIC=1). */
	(void)__nss_configure_lookup("hosts", "files dns");
#endif
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc != 0) {
		memset(&rec, 0, sizeof(rec));
		rec.family = -1;
		rec.protocol = rc;
		if (write(fd, &rec, sizeof(rec)) != (ssize_t)sizeof(rec))
			_exit(1);
		_exit(0);
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if (ai->ai_addrlen > sizeof(struct sockaddr_storage))
			continue;
		rec.family = ai->ai_family;
		rec.socktype = ai->ai_socktype;
		rec.protocol = ai->ai_protocol;
		rec.addrlen = ai->ai_addrlen;
		/* Records are small: the pipe takes them whole. */
		if (write(fd, &rec, sizeof(rec)) != (ssize_t)sizeof(rec) ||
		    write(fd, ai->ai_addr, ai->ai_addrlen) !=
		    (ssize_t)ai->ai_addrlen)
			_exit(1);
	}
	_exit(0);
}

/*
 * Start looking up host:port for c.  Returns 0 with c->addrs ready (kept
 * from before, or numeric), 1 with the lookup under way (c->lookup_fd to
 * watch), or -1 with c->err set.
 */
int
conn_lookup_start(struct conn *c, const char *host, int port)
{
	struct addrinfo	 hints, *res = NULL;
	char		 service[16];
	int		 fds[2];
	pid_t		 pid;

	if (c->addrs != NULL && c->addrs_host != NULL &&
	    strcmp(c->addrs_host, host) == 0 && c->addrs_port == port) {
		c->addr = c->addrs;
		return (0);
	}
	conn_addrs_free(c);
	c->addrs_host = xstrdup(host);
	c->addrs_port = port;
	(void)snprintf(service, sizeof(service), "%d", port);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	if (getaddrinfo(host, service, &hints, &res) == 0) {
		(void)conn_addrs_copy(c, res);
		freeaddrinfo(res);
		c->addr = c->addrs;
		return (c->addrs != NULL ? 0 : -1);
	}
	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) == -1 ||
	    (pid = fork()) == -1) {
		(void)snprintf(c->err, sizeof(c->err), "cannot connect to %s: "
		    "cannot look up the host: %s", c->dial->display,
		    strerror(errno));
		return (-1);
	}
	if (pid == 0) {
		(void)close(fds[0]);
		conn_lookup_child(fds[1], host, service);
	}
	(void)close(fds[1]);
	c->lookup_fd = fds[0];
	c->lookup_pid = pid;
	c->lookup_len = 0;
	if (c->lookup_buf == NULL)
		c->lookup_buf = xmalloc(CONN_LOOKUP_BUF);
	c->is_looking_up = 1;
	return (1);
}

/* The child's records into c->addrs; 0, or -1 with c->err set. */
static int
conn_lookup_parse(struct conn *c)
{
	struct conn_addr_record	  rec;
	struct addrinfo		**tail = &c->addrs;
	size_t			  off = 0;

	while (off + sizeof(rec) <= c->lookup_len) {
		memcpy(&rec, c->lookup_buf + off, sizeof(rec));
		off += sizeof(rec);
		if (rec.family == -1) {
			(void)snprintf(c->err, sizeof(c->err), "cannot connect "
			    "to %s: cannot resolve host: %s", c->dial->display,
			    gai_strerror(rec.protocol));
			return (-1);
		}
		if (rec.addrlen > sizeof(struct sockaddr_storage) ||
		    rec.addrlen > c->lookup_len - off)
			break;
		*tail = conn_addr_new(rec.family, rec.socktype, rec.protocol,
		    c->lookup_buf + off, rec.addrlen);
		tail = &(*tail)->ai_next;
		off += rec.addrlen;
	}
	c->addr = c->addrs;
	if (c->addrs == NULL) {
		(void)snprintf(c->err, sizeof(c->err), "cannot connect to %s: "
		    "cannot resolve host: no address", c->dial->display);
		return (-1);
	}
	return (0);
}

/* The lookup is over (answered, or given up): no child, no pipe left. */
static void
conn_lookup_end(struct conn *c, int is_abort)
{
	(void)close(c->lookup_fd);
	c->lookup_fd = -1;
	/*
	 * Only we reap it: every lookup ends before the poll loop returns,
	 * so the supervisor's waitpid(-1) never runs while it lives.  At EOF
	 * it is exiting by itself; otherwise it is killed.
	 */
	if (is_abort)
		(void)kill(c->lookup_pid, SIGKILL);
	while (waitpid(c->lookup_pid, NULL, 0) == -1 && errno == EINTR)
		;
	c->lookup_pid = -1;
	c->is_looking_up = 0;
}

/* Give up a lookup under way (deadline, or the connection closed). */
void
conn_lookup_abort(struct conn *c)
{
	if (c->is_looking_up)
		conn_lookup_end(c, 1);
}

/*
 * The pipe is readable.  Returns 1 while the child has more to say, 0 with
 * c->addrs ready, -1 with c->err set.
 */
int
conn_lookup_readable(struct conn *c)
{
	ssize_t n;

	for (;;) {
		if (c->lookup_len == CONN_LOOKUP_BUF)
			break;	/* more than CONN_MAX_ADDRS: enough */
		n = read(c->lookup_fd, c->lookup_buf + c->lookup_len,
		    CONN_LOOKUP_BUF - c->lookup_len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return (1);
		if (n <= 0)
			break;
		c->lookup_len += (size_t)n;
	}
	conn_lookup_end(c, 0);
	return (conn_lookup_parse(c));
}
