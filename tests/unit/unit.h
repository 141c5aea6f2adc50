/* SPDX-License-Identifier: MIT */
/*
 * What the unit test files share (tests/unit/test-*.c, linked into one
 * test-units): the counters and CHECK, and each file's entry point.
 */

#ifndef UNIT_H
#define UNIT_H

#include <stdio.h>

extern int passed, failed;

#define CHECK(cond, ...) do {						\
	if (cond)							\
		passed++;						\
	else {								\
		failed++;						\
		(void)printf("FAIL %s:%d: ", __FILE__, __LINE__);	\
		(void)printf(__VA_ARGS__);				\
		(void)printf("\n");					\
	}								\
} while (0)

/* test-mask.c */
void	 test_mask(void);

#endif
