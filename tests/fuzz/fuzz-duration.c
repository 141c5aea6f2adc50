/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: duration_parse() and duration_format() (src/duration.c).
 *
 * A parsed duration is whole milliseconds in [0, 1e12]; a refusal names
 * one of the documented reasons; formatting any value fits the 32 bytes
 * the callers give it, and the exact forms (250ms, 30s, 5m, 1h) read back
 * as the same value.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/redlock.h"
#include "fuzz.h"

int	 LLVMFuzzerInitialize(int *, char ***);
int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char *fuzz_reasons[] = {
	"empty", "negative", "not a number",
	"unknown unit (us, ms, s, m, h, d or w)",
	"a number without a unit in a sum", "trailing blank", "too large",
	"below 1ms", NULL
};

static void
fuzz_check_format(int64_t ms)
{
	char		 buf[32], canary[sizeof(buf) + 8];
	const char	*errstr = NULL;
	int64_t		 back = -1;
	size_t		 len;

	memset(canary, 'x', sizeof(canary));
	duration_format(ms, canary, sizeof(buf));
	len = strnlen(canary, sizeof(buf));
	FUZZ_CHECK(len < sizeof(buf), "format of %lld not terminated",
	    (long long)ms);
	FUZZ_CHECK(canary[sizeof(buf)] == 'x', "format of %lld overflowed",
	    (long long)ms);
	memcpy(buf, canary, len + 1);
	if (ms < 0 || ms > 1000000000000LL)
		return;
	/* %.3gs rounds on purpose ("1.23s"); the other forms are exact. */
	if (ms >= 1000 && ms % 1000 != 0)
		return;
	FUZZ_CHECK(duration_parse(buf, &back, &errstr) == 0 && back == ms,
	    "'%s' (from %lld) reads back as %lld (%s)", buf, (long long)ms,
	    (long long)back, errstr != NULL ? errstr : "ok");
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return (0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*errstr = (const char *)1;
	char		*str;
	int64_t		 ms = -7, raw;
	int		 i, rc;

	str = malloc(size + 1);
	if (str == NULL)
		return (0);
	memcpy(str, data, size);
	str[size] = '\0';

	rc = duration_parse(str, &ms, &errstr);
	FUZZ_CHECK(rc == 0 || rc == -1, "rc %d", rc);
	if (rc == 0) {
		FUZZ_CHECK(ms >= 0 && ms <= 1000000000000LL,
		    "'%s' parsed as %lld", str, (long long)ms);
		FUZZ_CHECK(errstr == NULL, "success with a reason");
		fuzz_check_format(ms);
	} else {
		FUZZ_CHECK(ms == -7, "a refusal wrote %lld", (long long)ms);
		for (i = 0; fuzz_reasons[i] != NULL; i++)
			if (errstr != NULL && strcmp(errstr, fuzz_reasons[i]) ==
			    0)
				break;
		FUZZ_CHECK(fuzz_reasons[i] != NULL, "unknown reason for '%s'",
		    str);
	}

	/* Formatting any int64_t, not only parsed ones, must be safe. */
	if (size >= sizeof(raw)) {
		memcpy(&raw, data, sizeof(raw));
		fuzz_check_format(raw);
	}
	free(str);
	return (0);
}
