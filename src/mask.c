/* SPDX-License-Identifier: MIT */
/*
 * What a holder records as its command, masked: the words joined by
 * spaces, with every value that looks like a secret replaced by "***",
 * since anyone who may read the lock's keys may read the record.  Masked:
 *
 *   - a URL's password, in any word and anywhere in it, so also in
 *     "--url=redis://:PW@h", "-uredis://:PW@h" and "postgres://u:PW@h/db":
 *     from the first ':' after "://" to the last '@' of the piece.  A
 *     password may hold '@', ':' or '/', so the last '@' is the one that
 *     surely ends it; that a URL with an '@' in its path loses its port
 *     and path too is the safe way to be wrong.
 *   - the value of NAME=VALUE when NAME holds PASS, SECRET, TOKEN or KEY,
 *     in any case ("DB_PASSWORD=***", "--api-key=***", "-Dapi.key=***").
 *     NAME is letters, digits, '_', '.' and '-'; it starts the piece or
 *     follows one of  ; & | ( ) { } < > ` , = ' "  (shell text, lists).
 *   - the word after a long option whose name holds one of them
 *     ("--password ***", "--api-key ***").
 *
 * A word with blanks in it ("sh -c 'mysql --password PW db'") is taken
 * blank-separated piece by piece by the same rules, and there an option's
 * value is the next piece.  A masked value that starts with a quote, or
 * whose NAME follows one, runs to the closing quote, blanks and all.
 * Short options are not masked (-p is a port to one program and a
 * password to another), nor is a secret given as a plain argument: the
 * man page's SECURITY section says so.
 *
 * Each rule marks the bytes it would hide, and the marks are applied
 * once, each run of marked bytes becoming one "***": rules that overlap
 * (a URL whose password holds "key=") then hide the union of what each
 * would, and no rule can undo another's mask.
 *
 * Out of memory (or a length past SIZE_MAX) is NULL: the caller then
 * records nothing, never the unmasked line.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mask.h"

/* The output so far; a failure sticks, and the result is then NULL. */
struct mask_buf {
	char	*s;
	size_t	 len;
	size_t	 cap;
	int	 failed;
};

/* One word: its text, and which of its bytes are hidden. */
struct mask_word {
	const char	*s;
	const char	*end;
	unsigned char	*hide;
};

static void	 mask_put(struct mask_buf *, const char *, size_t);
static int	 mask_is_blank(char);
static int	 mask_is_name_char(char);
static int	 mask_is_boundary(char);
static int	 mask_is_secret_name(const char *, const char *);
static int	 mask_is_secret_option(const char *, const char *);
static void	 mask_hide(struct mask_word *, const char *, const char *);
static const char *mask_value_end(const char *, const char *, const char *,
		     char);
static const char *mask_find_assign(const char *, const char *,
		     const char **);
static void	 mask_mark_urls(struct mask_word *, const char *,
		     const char *);
static const char *mask_mark_assigns(struct mask_word *, const char *,
		     const char *);
static void	 mask_mark_word(struct mask_word *, int *);
static void	 mask_put_word(struct mask_buf *, const struct mask_word *);
static void	 mask_word(struct mask_buf *, const char *, int *);

/* Append n bytes, keeping the buffer NUL-terminated. */
static void
mask_put(struct mask_buf *b, const char *p, size_t n)
{
	size_t	 need, cap;
	char	*s;

	if (b->failed)
		return;
	if (n > SIZE_MAX - 1 - b->len) {
		b->failed = 1;
		return;
	}
	need = b->len + n + 1;
	if (need > b->cap) {
		cap = b->cap == 0 ? 64 : b->cap;
		while (cap < need)
			cap = cap > SIZE_MAX / 2 ? need : cap * 2;
		if ((s = realloc(b->s, cap)) == NULL) {
			b->failed = 1;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
	memcpy(b->s + b->len, p, n);
	b->len += n;
	b->s[b->len] = '\0';
}

/* What separates the pieces of a word (isspace in the C locale). */
static int
mask_is_blank(char c)
{
	return (c == ' ' || c == '\t' || c == '\n' || c == '\v' ||
	    c == '\f' || c == '\r');
}

/* ASCII by hand: what is masked must not depend on the locale. */
static int
mask_is_name_char(char c)
{
	return ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-');
}

/* What a NAME of NAME=VALUE may follow inside a piece. */
static int
mask_is_boundary(char c)
{
	return (c != '\0' && strchr(";&|(){}<>`,='\"", c) != NULL);
}

/*
 * Whether [s, e) holds PASS, SECRET, TOKEN or KEY, in any case; or AUTH
 * and CREDENTIAL too (REDISCLI_AUTH=..., --auth ...): a name that merely
 * contains one, such as AUTHOR, loses a value that was no secret, which
 * is the cheaper mistake.
 */
static int
mask_is_secret_name(const char *s, const char *e)
{
	static const char *const words[] = { "pass", "secret", "token",
	    "key", "auth", "credential", NULL };
	const char	*p;
	size_t		 i, len;

	for (p = s; p < e; p++)
		for (i = 0; words[i] != NULL; i++) {
			len = strlen(words[i]);
			if ((size_t)(e - p) >= len &&
			    strncasecmp(p, words[i], len) == 0)
				return (1);
		}
	return (0);
}

/* Whether [s, e) is "--NAME" (no '=') with a secret's NAME. */
static int
mask_is_secret_option(const char *s, const char *e)
{
	const char *p;

	if (e - s < 3 || s[0] != '-' || s[1] != '-')
		return (0);
	for (p = s + 2; p < e; p++)
		if (!mask_is_name_char(*p))
			return (0);
	return (mask_is_secret_name(s + 2, e));
}

/* Mark [p, e) of w hidden. */
static void
mask_hide(struct mask_word *w, const char *p, const char *e)
{
	if (e > p)
		memset(w->hide + (p - w->s), 1, (size_t)(e - p));
}

/*
 * Where a value that starts at v ends: the end e of its piece, or, when it
 * is quoted (it starts with ', ", $' or $", or open is the quote its NAME
 * followed), just past the closing quote, which may lie beyond e; the end
 * of the word wend when the quote is never closed.
 */
static const char *
mask_value_end(const char *v, const char *e, const char *wend, char open)
{
	char q = open;

	if (e - v >= 2 && *v == '$' && (v[1] == '\'' || v[1] == '"'))
		v++;
	if (v < e && (*v == '\'' || *v == '"'))
		q = *v++;
	if (q == 0)
		return (e);
	for (; v < wend; v++) {
		if (*v == '\\' && q == '"' && v + 1 < wend)
			v++;
		else if (*v == q)
			return (v + 1);
	}
	return (wend);
}

/*
 * The first NAME=VALUE in [p, e) whose NAME is a secret's, NAME starting
 * at p or after a boundary: NAME's start, with *eq at its '='.  NULL if
 * there is none.  Each byte is looked at a bounded number of times.
 */
static const char *
mask_find_assign(const char *p, const char *e, const char **eq)
{
	const char *q = p, *n;

	while (q < e) {
		if (q == p || mask_is_boundary(q[-1])) {
			for (n = q; n < e && mask_is_name_char(*n); n++)
				;
			if (n > q && n < e && *n == '=' &&
			    mask_is_secret_name(q, n)) {
				*eq = n;
				return (q);
			}
			if (n > q) {
				q = n;
				continue;
			}
		}
		q++;
	}
	return (NULL);
}

/* Mark the password of each URL in the piece [p, e). */
static void
mask_mark_urls(struct mask_word *w, const char *p, const char *e)
{
	const char *scheme_end, *user, *at, *colon;

	while (p < e) {
		if ((scheme_end = memmem(p, (size_t)(e - p), "://", 3)) == NULL)
			return;
		user = scheme_end + 3;
		if ((at = memrchr(user, '@', (size_t)(e - user))) == NULL)
			return;
		/* No ':' before the '@': a user without a password. */
		if ((colon = memchr(user, ':', (size_t)(at - user))) != NULL)
			mask_hide(w, colon + 1, at);
		p = at + 1;
	}
}

/*
 * Mark the value of each secret's NAME=VALUE in the piece [s, e).
 * Returns where the piece really ends: past e when a quoted value ran on.
 */
static const char *
mask_mark_assigns(struct mask_word *w, const char *s, const char *e)
{
	const char	*p = s, *far = e, *name, *eq;
	char		 open;

	while (p < e && (name = mask_find_assign(p, e, &eq)) != NULL) {
		open = name > s && (name[-1] == '\'' || name[-1] == '"') ?
		    name[-1] : 0;
		p = mask_value_end(eq + 1, e, w->end, open);
		mask_hide(w, eq + 1, p);
		if (p > far)
			far = p;
	}
	return (far);
}

/*
 * Mark what to hide in w, piece by piece.  *pending: the word before
 * ended in a secret's option, so this whole word is its value; on return,
 * whether the next word is.
 */
static void
mask_mark_word(struct mask_word *w, int *pending)
{
	const char	*p = w->s, *s, *e;
	int		 piece_pending = 0;

	if (*pending) {
		mask_hide(w, w->s, w->end);
		*pending = 0;
		return;
	}
	while (p < w->end) {
		for (s = p; s < w->end && mask_is_blank(*s); s++)
			;
		for (e = s; e < w->end && !mask_is_blank(*e); e++)
			;
		if (s == e)
			break;
		if (piece_pending) {
			p = mask_value_end(s, e, w->end, 0);
			mask_hide(w, s, p);
			piece_pending = 0;
		} else if (mask_is_secret_option(s, e)) {
			piece_pending = 1;
			p = e;
		} else {
			mask_mark_urls(w, s, e);
			p = mask_mark_assigns(w, s, e);
		}
	}
	*pending = piece_pending;
}

/* Put w, each run of hidden bytes as one MASK_TEXT. */
static void
mask_put_word(struct mask_buf *b, const struct mask_word *w)
{
	const char	*p = w->s, *q;
	size_t		 i;

	while (p < w->end) {
		i = (size_t)(p - w->s);
		for (q = p; q < w->end && w->hide[q - w->s] == w->hide[i]; q++)
			;
		if (w->hide[i])
			mask_put(b, MASK_TEXT, sizeof(MASK_TEXT) - 1);
		else
			mask_put(b, p, (size_t)(q - p));
		p = q;
	}
}

/* Put the word s, masked; *pending as for mask_mark_word. */
static void
mask_word(struct mask_buf *b, const char *s, int *pending)
{
	struct mask_word	w;
	size_t			len = strlen(s);

	w.s = s;
	w.end = s + len;
	if ((w.hide = calloc(len > 0 ? len : 1, 1)) == NULL) {
		b->failed = 1;
		return;
	}
	mask_mark_word(&w, pending);
	mask_put_word(b, &w);
	free(w.hide);
}

/*
 * The n words joined by single spaces, masked; "" for none.  The caller
 * frees it.  NULL when out of memory.
 */
char *
mask_words(const char *const *words, size_t n)
{
	struct mask_buf	 b = { NULL, 0, 0, 0 };
	size_t		 i;
	int		 pending = 0;

	mask_put(&b, "", 0);
	for (i = 0; i < n && !b.failed; i++) {
		if (i > 0)
			mask_put(&b, " ", 1);
		mask_word(&b, words[i] != NULL ? words[i] : "", &pending);
	}
	if (b.failed) {
		free(b.s);
		return (NULL);
	}
	return (b.s);
}

/*
 * What a holder records of argv (argc words) for --record-command: all of
 * it masked, its program name alone (masked too), or "".  Cut at max_len
 * bytes after masking, so that a cut never leaves part of a secret
 * unmasked.  NULL when out of memory.
 */
char *
mask_record(enum mask_record how, const char *const *argv, size_t argc,
    size_t max_len)
{
	char *s;

	if (how == MASK_RECORD_NONE)
		argc = 0;
	else if (how == MASK_RECORD_NAME && argc > 1)
		argc = 1;
	if ((s = mask_words(argv, argc)) != NULL && strlen(s) > max_len)
		s[max_len] = '\0';
	return (s);
}
