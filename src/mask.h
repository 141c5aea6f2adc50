/* SPDX-License-Identifier: MIT */
/*
 * mask.c: a command line as a lock may record it, with what looks like a
 * secret replaced by MASK_TEXT.  Pure (no I/O, no exit, no other module),
 * so that the unit tests and redlock.h both take it as it is.
 */

#ifndef MASK_H
#define MASK_H

#include <stddef.h>

#define MASK_TEXT	"***"

/* --record-command: how much of a command a holder records. */
enum mask_record {
	MASK_RECORD_FULL,	/* every word, masked (the default) */
	MASK_RECORD_NAME,	/* the program name alone, masked */
	MASK_RECORD_NONE	/* nothing: an empty string */
};

char	*mask_words(const char *const *, size_t);
char	*mask_record(enum mask_record, const char *const *, size_t, size_t);

#endif
