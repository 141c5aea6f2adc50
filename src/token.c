/* SPDX-License-Identifier: MIT */
/*
 * Lock tokens: 128 random bits as 32 lower-case hex digits.  The kernel's
 * getrandom() is the source; libuuid's random UUID generator (which reads
 * the same pool) is the fallback on kernels without the syscall.
 */

#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <uuid/uuid.h>

#include "redlock.h"

static void	token_random_bytes(unsigned char *, size_t);

static void
token_random_bytes(unsigned char *buf, size_t len)
{
	uuid_t	 u;
	size_t	 done = 0;
	ssize_t	 n;

	while (done < len) {
		n = getrandom(buf + done, len - done, 0);
		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		break;
	}
	while (done < len) {
		uuid_generate_random(u);
		n = (ssize_t)(len - done < sizeof(u) ? len - done : sizeof(u));
		memcpy(buf + done, u, (size_t)n);
		done += (size_t)n;
	}
}

void
token_new(char out[TOKEN_HEX_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char	  raw[TOKEN_HEX_LEN / 2];
	size_t		  i;

	token_random_bytes(raw, sizeof(raw));
	for (i = 0; i < sizeof(raw); i++) {
		out[2 * i] = hex[raw[i] >> 4];
		out[2 * i + 1] = hex[raw[i] & 0xf];
	}
	out[TOKEN_HEX_LEN] = '\0';
}

/* For jitter and back-off: not secret, but must differ between hosts. */
uint64_t
token_random_u64(void)
{
	uint64_t v;

	token_random_bytes((unsigned char *)&v, sizeof(v));
	return (v);
}
