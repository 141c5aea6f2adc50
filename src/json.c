/* SPDX-License-Identifier: MIT */
/*
 * Just enough JSON output for --json: strings escaped per RFC 8259.
 */

#include <stdio.h>

#include "redlock.h"

void
json_string(const char *s)
{
	const unsigned char *p;

	(void)putchar('"');
	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		switch (*p) {
		case '"':
			(void)fputs("\\\"", stdout);
			break;
		case '\\':
			(void)fputs("\\\\", stdout);
			break;
		case '\n':
			(void)fputs("\\n", stdout);
			break;
		case '\t':
			(void)fputs("\\t", stdout);
			break;
		case '\r':
			(void)fputs("\\r", stdout);
			break;
		default:
			if (*p < 0x20)
				(void)printf("\\u%04x", *p);
			else
				(void)putchar(*p);
		}
	}
	(void)putchar('"');
}
