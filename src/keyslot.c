/* SPDX-License-Identifier: MIT */
/*
 * Redis Cluster hash slots: CRC16 (XMODEM: polynomial 0x1021, initial 0)
 * of the key's hash tag, or of the whole key when it has none, mod 16384.
 * Used to keep a lock's companion keys in the lock's own slot.
 */

#include <string.h>
#include <stdlib.h>

#include "redlock.h"

static unsigned int	crc16(const char *, size_t);

static unsigned int
crc16(const char *p, size_t len)
{
	unsigned int	crc = 0;
	size_t		i;
	int		bit;

	for (i = 0; i < len; i++) {
		crc ^= (unsigned int)(unsigned char)p[i] << 8;
		for (bit = 0; bit < 8; bit++)
			crc = (crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1;
		crc &= 0xffff;
	}
	return (crc);
}

/*
 * The tag is what lies between the first '{' and the first '}' after it,
 * if that is not empty; this mirrors the server's rule exactly.
 */
unsigned int
keyslot(const char *key, size_t len)
{
	const char	*open, *close;

	open = memchr(key, '{', len);
	if (open != NULL) {
		close = memchr(open + 1, '}', len - (size_t)(open + 1 - key));
		if (close != NULL && close > open + 1)
			return (crc16(open + 1, (size_t)(close - open - 1)) &
			    16383);
	}
	return (crc16(key, len) & 16383);
}

/*
 * Name a companion key of lock key K so that it lands in K's Cluster slot:
 * "{K}:suffix" when K has no braces (so K itself is the tag), otherwise
 * "{T}:K:suffix" with T the tag that decides K's slot: K's own tag, or a
 * short generated one with the same slot when K hashes whole but contains
 * a brace.  Distinct keys always get distinct companions.
 */
char *
keyslot_companion(const char *key, size_t len, const char *suffix,
    size_t *out_len)
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	const char	*open, *close;
	char		*out, tag[4];
	size_t		 tag_len = 0, slen = strlen(suffix), i, j, k, na;
	unsigned int	 slot;

	if (len > 0 && memchr(key, '{', len) == NULL &&
	    memchr(key, '}', len) == NULL) {
		*out_len = len + slen + 3;
		out = xmalloc(*out_len + 1);
		out[0] = '{';
		memcpy(out + 1, key, len);
		memcpy(out + 1 + len, "}:", 2);
		memcpy(out + 3 + len, suffix, slen + 1);
		return (out);
	}
	open = memchr(key, '{', len);
	close = open != NULL ? memchr(open + 1, '}', len -
	    (size_t)(open + 1 - key)) : NULL;
	if (open != NULL && close != NULL && close > open + 1) {
		tag_len = (size_t)(close - open - 1);
		out = xmalloc(tag_len + len + slen + 5);
		out[0] = '{';
		memcpy(out + 1, open + 1, tag_len);
	} else {
		/* Search 1..3 character tags; 36^3 covers all 16384 slots. */
		slot = keyslot(key, len);
		na = sizeof(alphabet) - 1;
		for (i = 0; i < na * na * na + na * na + na; i++) {
			k = i;
			if (k < na)
				tag_len = 1;
			else if ((k -= na) < na * na)
				tag_len = 2;
			else {
				k -= na * na;
				tag_len = 3;
			}
			for (j = 0; j < tag_len; j++, k /= na)
				tag[j] = alphabet[k % na];
			if (keyslot(tag, tag_len) == slot)
				break;
		}
		out = xmalloc(tag_len + len + slen + 5);
		out[0] = '{';
		memcpy(out + 1, tag, tag_len);
	}
	memcpy(out + 1 + tag_len, "}:", 2);
	memcpy(out + 3 + tag_len, key, len);
	out[3 + tag_len + len] = ':';
	memcpy(out + 4 + tag_len + len, suffix, slen + 1);
	*out_len = tag_len + len + slen + 4;
	return (out);
}
