/* SPDX-License-Identifier: MIT */
/*
 * One SCAN's cursors, checked as they come, so that a scan always ends:
 * a server that answers a cursor that is not a number, that comes back,
 * or that never reaches 0 would have list call SCAN for ever.  Pure: no
 * I/O, no exit; the caller says what went wrong and whose it was.
 */

#include <ctype.h>
#include <string.h>

#include "redlock.h"

void
cursor_start(struct cursor *cur)
{
	memset(cur, 0, sizeof(*cur));
	cur->power = 1;
}

/*
 * The cursor a server answered, len bytes at str: a decimal number that
 * fits 64 bits, as every server's is.  One that comes back would make the
 * scan go round for ever: Brent's cycle finding compares each new one with
 * cur->mark, which moves on after 1, 2, 4, ... steps, so any cycle is
 * seen within twice its length and what came before it.  A server that
 * hands out ever new ones is stopped after CURSOR_MAX_CALLS.  Returns
 * CURSOR_MORE (cur->value is the next to send), CURSOR_END (0), or what
 * is wrong with it.
 */
enum cursor_verdict
cursor_next(struct cursor *cur, const char *str, size_t len)
{
	uint64_t	v = 0, digit;
	size_t		i;

	for (i = 0; i < len && isdigit((unsigned char)str[i]); i++) {
		digit = (uint64_t)(str[i] - '0');
		if (v > (UINT64_MAX - digit) / 10)
			return (CURSOR_BAD);
		v = v * 10 + digit;
	}
	if (len == 0 || i < len)
		return (CURSOR_BAD);
	if (v == 0)
		return (CURSOR_END);
	if (v == cur->mark)
		return (CURSOR_AGAIN);
	if (++cur->calls >= CURSOR_MAX_CALLS)
		return (CURSOR_ENDLESS);
	if (++cur->steps == cur->power) {
		cur->mark = v;
		cur->power *= 2;
		cur->steps = 0;
	}
	cur->value = v;
	return (CURSOR_MORE);
}
