/* SPDX-License-Identifier: MIT */
/*
 * The processes of a job, as /proc shows them: the children of the
 * guardian (being the job's subreaper, it gets every process the job
 * leaves behind, whatever its session or group) and all of its
 * descendants, to count them or to signal them.
 *
 * /proc/PID/task/TID/children would list the children directly, but it
 * exists only with CONFIG_PROC_CHILDREN, which many kernels (this build
 * machine's too) leave out; reading every /proc/PID/stat works with all.
 * That costs a few milliseconds on a busy host, so it is done only when
 * a signal must reach processes outside the command's group, when
 * processes were left behind, or to kill: never on the way of
 * `run k -- true`.
 *
 * A pid read from /proc may belong to someone else by the time a signal
 * is sent: the process may have ended and been reaped by its parent, and
 * the number reused.  A direct child is safe (we reap it), the others are
 * signalled through a pidfd, opened and then checked to be the process
 * that was listed (same start time): the pidfd then reaches that process
 * or nothing.
 */

#include <sys/syscall.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "redlock.h"
#include "supervise-impl.h"

/*
 * Enough for /proc/PID/stat up to its 22nd field, the start time: comm
 * is at most 15 bytes and each number at most 20 digits.
 */
#define SUPERVISE_STAT_HEAD	512
/*
 * Fields 6 to 21 of /proc/PID/stat (session .. itrealvalue), skipped:
 * suppressed conversions store nothing, so no width can overflow.
 */
#define SUPERVISE_SKIP_6_TO_21	" %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u" \
	" %*d %*d %*d %*d %*d %*d"

static int	 supervise_proc_stat(pid_t, struct supervise_proc *);
static int	 supervise_proc_push(struct supervise_proc **, size_t *,
		     size_t *, const struct supervise_proc *);
static int	 supervise_proc_scan(struct supervise_proc **, size_t *);
static int	 supervise_proc_cmp(const void *, const void *);
static size_t	 supervise_proc_find(const struct supervise_proc *, size_t,
		     pid_t);
static int	 supervise_proc_under(const struct supervise_proc *, char *,
		     size_t, size_t, pid_t);
static int	 supervise_proc_tree(pid_t, struct supervise_proc **,
		     size_t *, char **);
static int	 supervise_proc_send(const struct supervise_proc *, int);
static int	 supervise_proc_leads(const struct supervise_proc *, size_t,
		     pid_t);

/* /proc/PID/stat into *p: 0, or -1 (gone meanwhile, or unreadable). */
static int
supervise_proc_stat(pid_t pid, struct supervise_proc *p)
{
	char			 path[64], buf[SUPERVISE_STAT_HEAD + 1], *end;
	unsigned long long	 start;
	ssize_t			 n;
	int			 fd, ppid, pgrp;

	if (snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid) >=
	    (int)sizeof(path) ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return (-1);
	n = read(fd, buf, sizeof(buf) - 1);
	(void)close(fd);
	if (n <= 0)
		return (-1);
	buf[n] = '\0';
	/* comm may hold spaces and ')': the fields follow the last ')'. */
	if ((end = strrchr(buf, ')')) == NULL ||
	    sscanf(end + 1, " %c %d %d" SUPERVISE_SKIP_6_TO_21 " %llu",
	    &p->state, &ppid, &pgrp, &start) != 4)
		return (-1);
	p->pid = pid;
	p->ppid = (pid_t)ppid;
	p->pgrp = (pid_t)pgrp;
	p->start = start;
	return (0);
}

/* Append; -1 when out of memory (what was listed so far stays). */
static int
supervise_proc_push(struct supervise_proc **v, size_t *n, size_t *cap,
    const struct supervise_proc *p)
{
	struct supervise_proc	*nv;

	if (*n == *cap) {
		/* Not xreallocarray: in the guardian, running out of
		 * memory must not end the cleanup it is there for. */
		nv = reallocarray(*v, *cap == 0 ? 64 : *cap * 2, sizeof(**v));
		if (nv == NULL)
			return (-1);
		*v = nv;
		*cap = *cap == 0 ? 64 : *cap * 2;
	}
	(*v)[(*n)++] = *p;
	return (0);
}

/* Every process.  0, or -1 with what could be listed in *out. */
static int
supervise_proc_scan(struct supervise_proc **out, size_t *n)
{
	struct supervise_proc	 p;
	struct dirent		*de;
	DIR			*d;
	size_t			 cap = 0;
	int			 rc = 0;

	*out = NULL;
	*n = 0;
	if ((d = opendir("/proc")) == NULL)
		return (-1);
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
		    supervise_proc_stat((pid_t)strtol(de->d_name, NULL, 10),
		    &p) == -1)
			continue;
		rc = supervise_proc_push(out, n, &cap, &p);
	}
	(void)closedir(d);
	return (rc);
}

/* qsort and bsearch by pid. */
static int
supervise_proc_cmp(const void *a, const void *b)
{
	pid_t x = ((const struct supervise_proc *)a)->pid;
	pid_t y = ((const struct supervise_proc *)b)->pid;

	return ((x > y) - (x < y));
}

/* The index of pid in v (sorted), or n. */
static size_t
supervise_proc_find(const struct supervise_proc *v, size_t n, pid_t pid)
{
	struct supervise_proc	 key, *hit;

	key.pid = pid;
	hit = bsearch(&key, v, n, sizeof(*v), supervise_proc_cmp);
	return (hit == NULL ? n : (size_t)(hit - v));
}

/*
 * Does v[i] descend from root?  Walks up its parents until root, a
 * process outside the list (init, or gone), or one already decided;
 * then writes the answer (1 yes, 2 no) on the whole way up, so every
 * process is walked about once.  A snapshot taken while processes come
 * and go may even hold a loop: the walk is bounded by n.
 */
static int
supervise_proc_under(const struct supervise_proc *v, char *mark, size_t n,
    size_t i, pid_t root)
{
	size_t	j, k, steps;
	char	verdict = 2;

	for (j = i, steps = 0; steps <= n; steps++, j = k) {
		if (mark[j] != 0) {
			verdict = mark[j];
			break;
		}
		if (v[j].ppid == root) {
			verdict = 1;
			break;
		}
		if ((k = supervise_proc_find(v, n, v[j].ppid)) == n)
			break;
	}
	for (j = i, steps = 0; mark[j] == 0 && steps <= n; steps++, j = k) {
		mark[j] = verdict;
		if (v[j].ppid == root ||
		    (k = supervise_proc_find(v, n, v[j].ppid)) == n)
			break;
	}
	return (verdict == 1);
}

/*
 * Every process, sorted by pid, with (*mark)[i] 1 for the descendants of
 * root and 2 for the others.  0, or -1 (nothing to free then).
 */
static int
supervise_proc_tree(pid_t root, struct supervise_proc **v, size_t *n,
    char **mark)
{
	size_t i;

	if (supervise_proc_scan(v, n) == -1 && *n == 0) {
		free(*v);
		return (-1);
	}
	if ((*mark = calloc(*n == 0 ? 1 : *n, 1)) == NULL) {
		free(*v);
		return (-1);
	}
	qsort(*v, *n, sizeof(**v), supervise_proc_cmp);
	for (i = 0; i < *n; i++)
		(void)supervise_proc_under(*v, *mark, *n, i, root);
	return (0);
}

/*
 * sig to the process p was read from, and to no other: through a pidfd
 * that is checked to be that process (its pid and start time) before
 * use.  Without pidfds (Linux before 5.3), the check and kill().
 */
static int
supervise_proc_send(const struct supervise_proc *p, int sig)
{
	struct supervise_proc	now;
	int			fd = -1, rc = -1;

#ifdef SYS_pidfd_open
	if ((fd = (int)syscall(SYS_pidfd_open, p->pid, 0)) == -1 &&
	    errno != ENOSYS)
		return (-1);	/* gone */
#endif
	if (supervise_proc_stat(p->pid, &now) == 0 && now.start == p->start) {
#ifdef SYS_pidfd_send_signal
		if (fd != -1)
			rc = (int)syscall(SYS_pidfd_send_signal, fd, sig,
			    NULL, 0);
		else
#endif
			rc = kill(p->pid, sig);
	}
	if (fd != -1)
		(void)close(fd);
	return (rc);
}

/*
 * sig to every live descendant of root (zombies have ended, only not been
 * reaped yet), one by one, except those in the process group skip (0:
 * none), which the caller signals itself; sig 0 only counts them.
 * Returns how many there were, or -1 if none could be listed.
 */
int
supervise_proc_signal_descendants(pid_t root, int sig, pid_t skip)
{
	struct supervise_proc	*v;
	size_t			 n, i;
	char			*mark;
	int			 count = 0;

	if (supervise_proc_tree(root, &v, &n, &mark) == -1)
		return (-1);
	for (i = 0; i < n; i++) {
		if (mark[i] != 1 || v[i].state == 'Z')
			continue;
		count++;
		if (sig != 0 && (skip == 0 || v[i].pgrp != skip))
			(void)supervise_proc_send(&v[i], sig);
	}
	free(mark);
	free(v);
	return (count);
}

/* Some process of v leads the group pgrp (is its leader, so keeps it). */
static int
supervise_proc_leads(const struct supervise_proc *v, size_t n, pid_t pgrp)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].pid == pgrp && v[i].pgrp == pgrp)
			return (1);
	return (0);
}

/*
 * sig to every child of parent, as to a command of its own: to the group
 * it leads, if it leads one (setsid() makes a daemon the leader of its
 * pipeline's group), else to the child itself; once only to each (a
 * child in a group that another child leads gets it through that group).
 * A child's pid is safe to use: it is ours until we reap it.  Returns how
 * many children there were, or -1 if none could be listed.
 */
int
supervise_proc_signal_children(pid_t parent, int sig)
{
	struct supervise_proc	*v;
	size_t			 n, i, kept = 0;
	int			 rc;

	rc = supervise_proc_scan(&v, &n);
	for (i = 0; i < n; i++)
		if (v[i].ppid == parent)
			v[kept++] = v[i];
	for (i = 0; i < kept; i++) {
		if (v[i].pgrp == v[i].pid)
			(void)kill(-v[i].pid, sig);
		else if (!supervise_proc_leads(v, kept, v[i].pgrp))
			(void)kill(v[i].pid, sig);
	}
	free(v);
	return (rc == -1 && kept == 0 ? -1 : (int)kept);
}
