/* SPDX-License-Identifier: MIT */
/*
 * Messages.  Every line starts "redlock-cli: " and goes to stderr, and with
 * --syslog also to syslog(3) with the pid (cron mails stderr; syslog keeps
 * it); the record of each run (log_audit) goes to syslog even without -v,
 * at the level of what happened.
 *
 * Syslog mixes the lines of every run of every lock on the host, so each
 * of its lines names the lock (log_name_lock): one that does not name it
 * already gets "lock 'K': " in front.  Only there: stderr belongs to the
 * one invocation, whose scripts match its lines as they are.
 *
 * Passwords never reach this file: URLs are printed through their
 * redacted display form, and server text goes through log_sanitize().
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "redlock.h"

int		 log_verbosity;
static int	 log_to_syslog;
static char	 log_lock[256];	/* 'KEY', sanitized: what syslog names */

/* Where a line goes: stderr, syslog (with --syslog), or both. */
#define LOG_TO_STDERR	0x1
#define LOG_TO_SYSLOG	0x2
#define LOG_TO_BOTH	(LOG_TO_STDERR | LOG_TO_SYSLOG)

static void	 log_vline(int, int, const char *, const char *, va_list)
		     printflike(4, 0);
static void	 log_syslog(int, const char *, const char *);

void
log_open_syslog(void)
{
	openlog(PROGNAME, LOG_PID, LOG_USER);
	log_to_syslog = 1;
}

/*
 * The lock this invocation is about, once known: every syslog line names
 * it.  Quoted as messages quote it, and sanitized as they are, so that a
 * line that names it already is recognised.
 */
void
log_name_lock(const char *key)
{
	char	name[sizeof(log_lock) - 2];

	log_sanitize(name, sizeof(name), key, strlen(key));
	(void)snprintf(log_lock, sizeof(log_lock), "'%s'", name);
}

/* One line to syslog, with the lock's name in front if it lacks it. */
static void
log_syslog(int prio, const char *line, const char *suffix)
{
	const char *sep = suffix != NULL ? ": " : "";

	if (suffix == NULL)
		suffix = "";
	if (log_lock[0] != '\0' && strstr(line, log_lock) == NULL)
		syslog(prio, "lock %s: %s%s%s", log_lock, line, sep, suffix);
	else
		syslog(prio, "%s%s%s", line, sep, suffix);
}

static void
log_vline(int to, int prio, const char *suffix, const char *fmt, va_list ap)
{
	char	 buf[2048], *p;
	int	 n;

	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	if (n < 0)
		(void)snprintf(buf, sizeof(buf), "(unprintable message)");
	/*
	 * One message, one line: a key or a server's text with a newline or
	 * an escape sequence must not forge lines or move the cursor.  A
	 * long message is cut, never overflowed.
	 */
	for (p = buf; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	if ((to & LOG_TO_STDERR) && suffix != NULL)
		(void)fprintf(stderr, "%s: %s: %s\n", PROGNAME, buf, suffix);
	else if (to & LOG_TO_STDERR)
		(void)fprintf(stderr, "%s: %s\n", PROGNAME, buf);
	if (log_to_syslog && (to & LOG_TO_SYSLOG))
		log_syslog(prio, buf, suffix);
}

/* An error, with strerror(errno) appended. */
void
log_warn(const char *fmt, ...)
{
	va_list	 ap;
	int	 saved = errno;

	va_start(ap, fmt);
	log_vline(LOG_TO_BOTH, LOG_ERR, strerror(saved), fmt, ap);
	va_end(ap);
	errno = saved;
}

/* An error. */
void
log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline(LOG_TO_BOTH, LOG_ERR, NULL, fmt, ap);
	va_end(ap);
}

/* "The lock is busy": an expected outcome, silenced by -q. */
void
log_busy(const char *fmt, ...)
{
	va_list ap;

	if (log_verbosity < 0)
		return;
	va_start(ap, fmt);
	log_vline(LOG_TO_BOTH, LOG_NOTICE, NULL, fmt, ap);
	va_end(ap);
}

/*
 * What an operator did to others (release --force): said as an error
 * is, on stderr whatever -q says, but at LOG_NOTICE: it is no failure.
 */
void
log_notice(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline(LOG_TO_BOTH, LOG_NOTICE, NULL, fmt, ap);
	va_end(ap);
}

/* What was done and how long it took: -v. */
void
log_info(const char *fmt, ...)
{
	va_list ap;

	if (log_verbosity < 1)
		return;
	va_start(ap, fmt);
	log_vline(LOG_TO_BOTH, LOG_INFO, NULL, fmt, ap);
	va_end(ap);
}

/*
 * The record of what a run did and met (a quorum server that did not
 * answer), for whoever reads syslog (cron jobs), at prio (a syslog(3)
 * level: LOG_INFO for what went well, LOG_WARNING and LOG_ERR for what
 * did not): with --syslog always, on stderr only with -v, like
 * log_info().
 */
void
log_audit(int prio, const char *fmt, ...)
{
	va_list ap;

	if (log_verbosity < 1 && !log_to_syslog)
		return;
	va_start(ap, fmt);
	log_vline(log_verbosity < 1 ? LOG_TO_SYSLOG : LOG_TO_BOTH, prio, NULL,
	    fmt, ap);
	va_end(ap);
}

/* Each Redis command: -v -v.  Callers pass no secrets. */
void
log_debug(const char *fmt, ...)
{
	va_list ap;

	if (log_verbosity < 2)
		return;
	va_start(ap, fmt);
	log_vline(LOG_TO_BOTH, LOG_DEBUG, NULL, fmt, ap);
	va_end(ap);
}

void
fatal(int code, const char *fmt, ...)
{
	va_list	 ap;
	int	 saved = errno;

	va_start(ap, fmt);
	log_vline(LOG_TO_BOTH, LOG_ERR, strerror(saved), fmt, ap);
	va_end(ap);
	exit(code);
}

void
fatalx(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline(LOG_TO_BOTH, LOG_ERR, NULL, fmt, ap);
	va_end(ap);
	exit(code);
}

/*
 * Copy text that came from a server or a user into dst for printing:
 * bounded, NUL-terminated, control characters shown as '?', so a hostile
 * server cannot forge log lines or move the terminal cursor.
 */
void
log_sanitize(char *dst, size_t dstlen, const char *src, size_t srclen)
{
	size_t i, j = 0;

	if (dstlen == 0)
		return;
	for (i = 0; i < srclen && j + 1 < dstlen; i++) {
		unsigned char ch = (unsigned char)src[i];

		dst[j++] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
	}
	if (i < srclen && dstlen > 4 && j + 1 >= dstlen) {
		j = dstlen - 4;
		memcpy(dst + j, "...", 3);
		j += 3;
	}
	dst[j] = '\0';
}

/*
 * A token as it may be shown (status, -v -v): its first TOKEN_SHOWN
 * characters, then "..." if there are more, sanitized like the above.
 * Enough to tell tokens apart, too little to release another's lock.
 */
void
log_shorten(char *dst, size_t dstlen, const char *src, size_t srclen)
{
	log_sanitize(dst, dstlen, src, srclen > TOKEN_SHOWN ? TOKEN_SHOWN :
	    srclen);
	if (srclen > TOKEN_SHOWN && strlen(dst) + 4 <= dstlen)
		(void)strcat(dst, "...");
}
