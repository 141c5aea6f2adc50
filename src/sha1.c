/* SPDX-License-Identifier: MIT */
/*
 * SHA-1 (FIPS 180-4), only to name Lua scripts for EVALSHA the way the
 * server does, and only when building: src/tools/script-sha.c hashes each
 * script into scripts-sha.h (the unit tests check it against the FIPS
 * vectors).  Not used for anything secret.  Written here rather than taken
 * from OpenSSL so that the build tool, compiled for the build machine with
 * CC_FOR_BUILD, needs no libcrypto there.
 */

#include <stdio.h>
#include <string.h>

#include "redlock.h"

#define ROL(x, n)	(((x) << (n)) | ((x) >> (32 - (n))))

static void	sha1_block(uint32_t [5], const unsigned char *);

static void
sha1_block(uint32_t h[5], const unsigned char *p)
{
	uint32_t w[80], a, b, c, d, e, t;
	int	 i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		    (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
	for (i = 16; i < 80; i++)
		w[i] = ROL(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	a = h[0];
	b = h[1];
	c = h[2];
	d = h[3];
	e = h[4];
	/* Four loops rather than one with a branch per round: this runs
	 * over every script once per process, on the start-up path. */
#define ROUND(f, k) do {						\
	t = ROL(a, 5) + (f) + e + (k) + w[i];				\
	e = d;								\
	d = c;								\
	c = ROL(b, 30);							\
	b = a;								\
	a = t;								\
} while (0)
	for (i = 0; i < 20; i++)
		ROUND((b & c) | (~b & d), 0x5a827999);
	for (; i < 40; i++)
		ROUND(b ^ c ^ d, 0x6ed9eba1);
	for (; i < 60; i++)
		ROUND((b & c) | (b & d) | (c & d), 0x8f1bbcdc);
	for (; i < 80; i++)
		ROUND(b ^ c ^ d, 0xca62c1d6);
#undef ROUND
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
}

void
sha1_hex(const void *data, size_t len, char out[41])
{
	uint32_t		 h[5] = { 0x67452301, 0xefcdab89, 0x98badcfe,
				    0x10325476, 0xc3d2e1f0 };
	const unsigned char	*p = data;
	unsigned char		 tail[128];
	uint64_t		 bits = (uint64_t)len * 8;
	size_t			 rest, tail_len, i;

	for (; len >= 64; p += 64, len -= 64)
		sha1_block(h, p);
	rest = len;
	memset(tail, 0, sizeof(tail));
	memcpy(tail, p, rest);
	tail[rest] = 0x80;
	tail_len = rest + 1 + 8 <= 64 ? 64 : 128;
	for (i = 0; i < 8; i++)
		tail[tail_len - 1 - i] = (unsigned char)(bits >> (8 * i));
	sha1_block(h, tail);
	if (tail_len == 128)
		sha1_block(h, tail + 64);
	for (i = 0; i < 5; i++)
		(void)snprintf(out + 8 * i, 9, "%08x", h[i]);
}
