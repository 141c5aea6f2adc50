/*
 * Redis Cluster hash slots: CRC16 (XMODEM: polynomial 0x1021, initial 0)
 * of the key's hash tag, or of the whole key when it has none, mod 16384.
 * Used to keep a lock's companion keys in the lock's own slot.
 */

#include <string.h>

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
