/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the pure parts: durations, poll()'s timeouts, SCAN
 * cursors, whole numbers, URLs, key slots and companion keys, SHA-1,
 * signal names; the masking of recorded commands in test-mask.c.  Run by
 * tests/unit.bats; prints "N passed,
 * M failed" and exits non-zero on any failure.
 */

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/redlock.h"
#include "unit.h"

#define DURATION_UNITS	"unknown unit (us, ms, s, m, h, d or w)"

int passed, failed;

static void
test_durations(void)
{
	static const struct {
		const char	*in;
		int64_t		 ms;
		const char	*err;
	} cases[] = {
		{ "250ms", 250, NULL }, { "30s", 30000, NULL },
		{ "5m", 300000, NULL }, { "1h", 3600000, NULL },
		{ "1.5s", 1500, NULL }, { "3", 3000, NULL },
		{ "0.25", 250, NULL }, { "0", 0, NULL }, { ".5s", 500, NULL },
		{ "1.5ms", 1, NULL }, { "1d", 86400000, NULL },
		{ "1w", 604800000, NULL }, { "1h30m", 5400000, NULL },
		{ "1h 30m", 5400000, NULL }, { "1h  30m", 5400000, NULL },
		{ "1h\t30m", 5400000, NULL }, { "2min", 120000, NULL },
		{ "90", 90000, NULL }, { "1.1s", 1100, NULL },
		{ "0.29s", 290, NULL }, { "0.29", 290, NULL },
		{ "1.001h", 3603600, NULL }, { "0.1w", 60480000, NULL },
		{ "1500us", 1, NULL }, { "2000usec", 2, NULL },
		{ "3msec", 3, NULL }, { "2sec", 2000, NULL },
		{ "1second", 1000, NULL }, { "2seconds", 2000, NULL },
		{ "1minute", 60000, NULL }, { "2minutes", 120000, NULL },
		{ "1hr", 3600000, NULL }, { "1hour", 3600000, NULL },
		{ "2hours", 7200000, NULL }, { "1day", 86400000, NULL },
		{ "2days", 172800000, NULL }, { "1week", 604800000, NULL },
		{ "2weeks", 1209600000, NULL },
		{ "1d2h3m4s5ms", 93784005, NULL }, { "30m1h", 5400000, NULL },
		{ "1.5h 30m 250ms", 7200250, NULL },
		{ "365d", 31536000000LL, NULL },
		{ "1000000000000ms", 1000000000000LL, NULL },
		{ "", 0, "empty" },
		{ "-1", 0, "negative" }, { "1h -5m", 0, "negative" },
		{ "abc", 0, "not a number" },
		{ " 5", 0, "not a number" }, { "+5", 0, "not a number" },
		{ "1.5x", 0, DURATION_UNITS }, { "1e3", 0, DURATION_UNITS },
		{ "0x10", 0, DURATION_UNITS }, { "inf", 0, "not a number" },
		{ "nan", 0, "not a number" }, { "5S", 0, DURATION_UNITS },
		{ "1.2.3", 0, DURATION_UNITS }, { ".", 0, "not a number" },
		{ "1h-5m", 0, "negative" }, { "1M", 0, DURATION_UNITS },
		{ "1y", 0, DURATION_UNITS }, { "2mins", 0, DURATION_UNITS },
		{ "1h x", 0, "not a number" }, { "1h .", 0, "not a number" },
		{ "5 s", 0, "a number without a unit in a sum" },
		{ "1h30", 0, "a number without a unit in a sum" },
		{ "1h 30", 0, "a number without a unit in a sum" },
		{ "1h ", 0, "trailing blank" }, { "5s\t", 0, "trailing blank" },
		{ "99999999999999h", 0, "too large" },
		{ "1000000000001ms", 0, "too large" },
		{ "99999999999999999999999999", 0, "too large" },
		{ "99999999999999999999999999x", 0, DURATION_UNITS },
		{ "11575d", 0, "too large" },
		{ "0.0001", 0, "below 1ms" }, { "0.5ms", 0, "below 1ms" },
		{ "999us", 0, "below 1ms" },
		{ NULL, 0, NULL }
	};
	const char	*err;
	int64_t		 ms;
	int		 i, rc;
	char		 buf[32];

	for (i = 0; cases[i].in != NULL; i++) {
		ms = -7;
		err = NULL;
		rc = duration_parse(cases[i].in, &ms, &err);
		if (cases[i].err == NULL)
			CHECK(rc == 0 && ms == cases[i].ms,
			    "duration '%s': rc %d ms %lld", cases[i].in, rc,
			    (long long)ms);
		else
			CHECK(rc == -1 && err != NULL &&
			    strcmp(err, cases[i].err) == 0,
			    "duration '%s': rc %d err '%s', want '%s'",
			    cases[i].in, rc, err ? err : "(null)",
			    cases[i].err);
	}
	duration_format(250, buf, sizeof(buf));
	CHECK(strcmp(buf, "250ms") == 0, "format 250: %s", buf);
	duration_format(1500, buf, sizeof(buf));
	CHECK(strcmp(buf, "1.5s") == 0, "format 1500: %s", buf);
	duration_format(120000, buf, sizeof(buf));
	CHECK(strcmp(buf, "2m") == 0, "format 120000: %s", buf);
	duration_format(1999, buf, sizeof(buf));
	CHECK(strcmp(buf, "1.999s") == 0, "format 1999: %s", buf);
	duration_format(1234567, buf, sizeof(buf));
	CHECK(strcmp(buf, "1234.567s") == 0, "format 1234567: %s", buf);
	duration_format(61050, buf, sizeof(buf));
	CHECK(strcmp(buf, "61.05s") == 0, "format 61050: %s", buf);
}

static void
test_urls(void)
{
	static const struct {
		const char	*in;
		const char	*display;	/* NULL: must fail */
		const char	*err;
		const char	*host, *path, *user, *password;
		int		 port, db;
	} cases[] = {
		{ "redis://localhost", "redis://localhost:6379", NULL,
		    "localhost", NULL, NULL, NULL, 6379, 0 },
		{ "redis://h:6380/3", "redis://h:6380/3", NULL, "h", NULL,
		    NULL, NULL, 6380, 3 },
		{ "redis://:pw@h", "redis://:***@h:6379", NULL, "h", NULL,
		    NULL, "pw", 6379, 0 },
		{ "redis://pw@h", "redis://:***@h:6379", NULL, "h", NULL,
		    NULL, "pw", 6379, 0 },
		{ "redis://u:p%40ss@h:1/2", "redis://u:***@h:1/2", NULL, "h",
		    NULL, "u", "p@ss", 1, 2 },
		{ "redis://a:b@c@h", "redis://a:***@h:6379", NULL, "h", NULL,
		    "a", "b@c", 6379, 0 },
		{ "redis://[::1]:7000", "redis://[::1]:7000", NULL, "::1",
		    NULL, NULL, NULL, 7000, 0 },
		{ "redis://h/", "redis://h:6379", NULL, "h", NULL, NULL, NULL,
		    6379, 0 },
		{ "unix:///tmp/r.sock", "unix:///tmp/r.sock", NULL, NULL,
		    "/tmp/r.sock", NULL, NULL, 0, 0 },
		{ "unix:///tmp/r.sock?db=4", "unix:///tmp/r.sock?db=4", NULL,
		    NULL, "/tmp/r.sock", NULL, NULL, 0, 4 },
		{ "unix://:pw@/tmp/s", "unix://:***@/tmp/s", NULL, NULL,
		    "/tmp/s", NULL, "pw", 0, 0 },
		{ "", NULL, "empty", NULL, NULL, NULL, NULL, 0, 0 },
		{ "localhost:6379", NULL, "missing scheme (redis://, rediss://, "
		    "unix://, redis-sentinel:// or redis+cluster://); did you "
		    "mean redis://localhost:6379?", NULL, NULL, NULL, NULL, 0,
		    0 },
		{ "redis:", NULL, "missing scheme (redis://, rediss://, unix://, "
		    "redis-sentinel:// or redis+cluster://)", NULL, NULL, NULL,
		    NULL, 0, 0 },
		{ "redis-sentinel://s1,s2:26380/mymaster",
		    "redis-sentinel://s1:26379,s2:26380/mymaster", NULL, "s1",
		    NULL, NULL, NULL, 26379, 0 },
		{ "redis-sentinel://:pw@[::1]:5000/m/2",
		    "redis-sentinel://:***@[::1]:5000/m/2", NULL, "::1", NULL,
		    NULL, "pw", 5000, 2 },
		{ "redis+cluster://a:7000,b:7001", "redis+cluster://a:7000,b:7001",
		    NULL, "a", NULL, NULL, NULL, 7000, 0 },
		{ "redis-sentinel://s1", NULL, "missing master name", NULL, NULL,
		    NULL, NULL, 0, 0 },
		{ "redis-sentinel://s1/", NULL, "missing master name", NULL,
		    NULL, NULL, NULL, 0, 0 },
		{ "redis+cluster://a/3", NULL, "a cluster has no database numbers",
		    NULL, NULL, NULL, NULL, 0, 0 },
		{ "redis://a,b", NULL, "several hosts need redis-sentinel:// or "
		    "redis+cluster:// (or one -u per server for a quorum)", NULL,
		    NULL, NULL, NULL, 0, 0 },
		{ "redis+cluster://a,", NULL, "missing host", NULL, NULL, NULL,
		    NULL, 0, 0 },
		{ "http://h", NULL, "unsupported scheme 'http' (redis://, "
		    "rediss://, unix://, redis-sentinel:// or redis+cluster://)",
		    NULL, NULL, NULL, NULL, 0, 0 },
		{ "a b://h", NULL, "unsupported scheme", NULL, NULL, NULL, NULL, 0, 0 },
		{ "redis://", NULL, "missing host", NULL, NULL, NULL, NULL, 0, 0 },
		{ "redis://:6379", NULL, "missing host", NULL, NULL, NULL, NULL, 0, 0 },
		{ "redis://h:0", NULL, "invalid port", NULL, NULL, NULL, NULL, 0, 0 },
		{ "redis://h:65536", NULL, "invalid port", NULL, NULL, NULL, NULL, 0, 0 },
		{ "redis://h:x", NULL, "invalid port", NULL, NULL, NULL, NULL, 0, 0 },
		{ "redis://h:", NULL, "invalid port", NULL, NULL, NULL, NULL, 0, 0 },
		{ "redis://h/x", NULL, "invalid database number", NULL, NULL, NULL, NULL, 0, 0 },
		{ "redis://h/-1", NULL, "invalid database number", NULL, NULL, NULL, NULL, 0, 0 },
		{ "redis://[::1", NULL, "unterminated IPv6 address", NULL, NULL, NULL, NULL, 0, 0 },
		{ "redis://h?x=1", NULL, "unknown parameter 'x' (only "
		    "ssl_cert_reqs is accepted)", NULL, NULL, NULL, NULL, 0, 0 },
		{ "rediss://:pw@h:6380?ssl_cert_reqs=none",
		    "rediss://:***@h:6380", NULL, "h", NULL, NULL, "pw", 6380, 0 },
		{ "rediss://h/3?ssl_cert_reqs=required", "rediss://h:6379/3",
		    NULL, "h", NULL, NULL, NULL, 6379, 3 },
		{ "rediss://h?ssl_cert_reqs=maybe", NULL, "invalid ssl_cert_reqs "
		    "'maybe' (none or required)", NULL, NULL, NULL, NULL, 0, 0 },
		{ "unix:///s?x=1", NULL, "unknown parameter 'x' (only db is "
		    "accepted)", NULL, NULL, NULL, NULL, 0, 0 },
		{ "redis://:p%4@h", NULL, "bad percent-encoding", NULL, NULL, NULL, NULL, 0, 0 },
		{ "unix://", NULL, "missing socket path", NULL, NULL, NULL, NULL, 0, 0 },
		{ "unix:///", NULL, "missing socket path", NULL, NULL, NULL, NULL, 0, 0 },
		{ "unix:///s?db=x", NULL, "invalid database number", NULL, NULL, NULL, NULL, 0, 0 },
		{ NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0 }
	};
	struct redis_url u;
	const char	*err;
	int		 i, rc;

#define SAME(a, b) ((a) == NULL ? (b) == NULL : (b) != NULL && strcmp((a), (b)) == 0)
	for (i = 0; cases[i].in != NULL || cases[i].err != NULL; i++) {
		err = NULL;
		rc = url_parse(cases[i].in, &u, &err);
		if (cases[i].display == NULL) {
			CHECK(rc == -1 && err != NULL &&
			    strcmp(err, cases[i].err) == 0,
			    "url '%s': rc %d err '%s', want '%s'",
			    cases[i].in, rc, err ? err : "(null)",
			    cases[i].err);
			continue;
		}
		CHECK(rc == 0, "url '%s': rc %d err %s", cases[i].in, rc,
		    err ? err : "");
		if (rc != 0)
			continue;
		CHECK(strcmp(u.display, cases[i].display) == 0 &&
		    SAME(cases[i].host, u.host) &&
		    SAME(cases[i].path, u.path) &&
		    SAME(cases[i].user, u.user) &&
		    SAME(cases[i].password, u.password) &&
		    (cases[i].path != NULL || u.port == cases[i].port) &&
		    u.db == cases[i].db,
		    "url '%s': display %s host %s port %d db %d", cases[i].in,
		    u.display, u.host ? u.host : "-", u.port, u.db);
		url_free(&u);
	}
	{
		static const struct {
			const char	*in;
			int		 insecure;
		} reqs[] = {
			{ "rediss://h?ssl_cert_reqs=none", 1 },
			{ "rediss://h?ssl_cert_reqs=CERT_NONE", 1 },
			{ "rediss://h/2?ssl_cert_reqs=required", 0 },
			{ "rediss://h?ssl_cert_reqs=CERT_REQUIRED", 0 },
			{ "rediss://h?ssl_cert_reqs=none&ssl_cert_reqs=required",
			    0 },
			{ "rediss://h", 0 },
		};
		size_t j;

		for (j = 0; j < sizeof(reqs) / sizeof(reqs[0]); j++) {
			err = NULL;
			rc = url_parse(reqs[j].in, &u, &err);
			CHECK(rc == 0 && u.tls_insecure == reqs[j].insecure,
			    "url '%s': rc %d insecure %d", reqs[j].in, rc,
			    rc == 0 ? u.tls_insecure : -1);
			if (rc == 0)
				url_free(&u);
		}
	}
	{
		char *r = url_redact("redis://user:secret@h:99999");

		CHECK(strcmp(r, "redis://user:***@h:99999") == 0, "redact %s",
		    r);
		free(r);
		r = url_redact("redis://secret@h:x");
		CHECK(strcmp(r, "redis://***@h:x") == 0, "redact %s", r);
		free(r);
		r = url_redact("redis:/:secret@host:6380");
		CHECK(strcmp(r, "redis:***@host:6380") == 0, "redact %s", r);
		free(r);
		r = url_redact("redis//user:secret@host");
		CHECK(strcmp(r, "redis//user:***@host") == 0, "redact %s", r);
		free(r);
		r = url_redact("secret@host");
		CHECK(strcmp(r, "***@host") == 0, "redact %s", r);
		free(r);
		r = url_redact("unix://secret@/tmp/x:y@z?db=x");
		CHECK(strcmp(r, "unix://***@z?db=x") == 0, "redact %s", r);
		free(r);
		r = url_redact("redis://:pa/ss@host");
		CHECK(strcmp(r, "redis://:***@host") == 0, "redact %s", r);
		free(r);
	}
}

static void
test_keyslots(void)
{
	static const char *keys[] = {
		"nightly", "a{b}c", "{b}", "x}y", "{}x", "{}}", "a}{b",
		"{{a}", "café", "with space", "", NULL
	};
	char	*c;
	size_t	 len;
	int	 i;

	/* Values from the Redis Cluster specification's CRC16 example and
	 * CLUSTER KEYSLOT. */
	CHECK(keyslot("123456789", 9) == (0x31c3 & 16383), "crc16 vector");
	CHECK(keyslot("foo", 3) == 12182, "slot foo %u", keyslot("foo", 3));
	CHECK(keyslot("{user1000}.following", 21) ==
	    keyslot("user1000", 8), "hash tag");
	CHECK(keyslot("foo{}{bar}", 10) == keyslot("foo{}{bar}", 10) &&
	    keyslot("foo{}{bar}", 10) != keyslot("bar", 3),
	    "empty tag hashes whole key");
	for (i = 0; keys[i] != NULL; i++) {
		c = keyslot_companion(keys[i], strlen(keys[i]), "fence",
		    &len);
		CHECK(len == strlen(c) && keyslot(c, len) ==
		    keyslot(keys[i], strlen(keys[i])),
		    "companion of '%s' is '%s' (slot %u vs %u)", keys[i], c,
		    keyslot(c, len), keyslot(keys[i], strlen(keys[i])));
		free(c);
	}
	c = keyslot_companion("nightly", 7, "meta", &len);
	CHECK(strcmp(c, "{nightly}:meta") == 0, "plain companion %s", c);
	free(c);
	c = keyslot_companion("a{b}c", 5, "meta", &len);
	CHECK(strcmp(c, "{b}:a{b}c:meta") == 0, "tagged companion %s", c);
	free(c);
}

static void
test_sha1_signames(void)
{
	char hex[41];

	sha1_hex("abc", 3, hex);
	CHECK(strcmp(hex, "a9993e364706816aba3e25717850c26c9cd0d89d") == 0,
	    "sha1 abc %s", hex);
	sha1_hex("", 0, hex);
	CHECK(strcmp(hex, "da39a3ee5e6b4b0d3255bfef95601890afd80709") == 0,
	    "sha1 empty %s", hex);
	sha1_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
	    56, hex);
	CHECK(strcmp(hex, "84983e441c3bd26ebaae4aa1f95129e5e54670f1") == 0,
	    "sha1 56 bytes %s", hex);
	CHECK(signame_parse("TERM") == 15 && signame_parse("SIGTERM") == 15 &&
	    signame_parse("15") == 15 && signame_parse("usr1") == 10 &&
	    signame_parse("FOO") == -1 && signame_parse("0") == -1 &&
	    signame_parse("999") == -1 && signame_parse("") == -1,
	    "signal names");
}

static void
test_numbers(void)
{
	static const struct {
		const char	*in;
		long long	 min, max, v;
		const char	*err;
	} cases[] = {
		{ "0", 0, 255, 0, NULL }, { "255", 0, 255, 255, NULL },
		{ "007", 0, 255, 7, NULL }, { "-5", -10, 10, -5, NULL },
		{ "256", 0, 255, 0, "too large" },
		{ "-1", 0, 255, 0, "too small" },
		{ "99999999999999999999", 0, 255, 0, "too large" },
		{ "-99999999999999999999", -5, 255, 0, "too small" },
		{ "9223372036854775807", 0, LLONG_MAX, LLONG_MAX, NULL },
		{ "", 0, 255, 0, "invalid" }, { "-", 0, 255, 0, "invalid" },
		{ " 5", 0, 255, 0, "invalid" }, { "+5", 0, 255, 0, "invalid" },
		{ "5 ", 0, 255, 0, "invalid" }, { "0x10", 0, 255, 0, "invalid" },
		{ "1.5", 0, 255, 0, "invalid" }, { "x", 0, 255, 0, "invalid" },
	};
	const char	*err;
	long long	 v;
	size_t		 i;
	int		 rc;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		v = -42;
		rc = number_parse(cases[i].in, cases[i].min, cases[i].max, &v,
		    &err);
		if (cases[i].err == NULL)
			CHECK(rc == 0 && v == cases[i].v && err == NULL,
			    "number '%s': rc %d v %lld", cases[i].in, rc, v);
		else
			CHECK(rc == -1 && v == -42 && err != NULL &&
			    strcmp(err, cases[i].err) == 0,
			    "number '%s': rc %d err %s", cases[i].in, rc,
			    rc == -1 ? err : "none");
	}
}

/* poll()'s int milliseconds from any wait: rounded up, capped, -1 kept. */
static void
test_poll_ms(void)
{
	static const struct {
		int64_t	ns;
		int	ms;
	} cases[] = {
		{ -1, -1 }, { -5, 0 }, { 0, 0 }, { 1, 1 }, { 999999, 1 },
		{ 1000000, 1 }, { 1000001, 2 }, { 2500000000LL, 2500 },
		{ 3600000000000LL, CLOCK_POLL_MAX_MS },
		{ 3600000000001LL, CLOCK_POLL_MAX_MS },
		/* 24.8 days and more: what (int) made negative or wrapped. */
		{ 2147483648000000LL, CLOCK_POLL_MAX_MS },
		{ 2880000000000000LL, CLOCK_POLL_MAX_MS },
		{ 4294967296500000LL, CLOCK_POLL_MAX_MS },
		{ 31536000000000000LL, CLOCK_POLL_MAX_MS },
		{ INT64_MAX, CLOCK_POLL_MAX_MS },
	};
	size_t	i;
	int	ms;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ms = clock_poll_ms(cases[i].ns);
		CHECK(ms == cases[i].ms, "clock_poll_ms(%lld): %d, want %d",
		    (long long)cases[i].ns, ms, cases[i].ms);
	}
}

/* cursor_next() over a sequence of answers; the verdict of the last. */
static enum cursor_verdict
cursor_run(const char *const *answers, uint64_t *value)
{
	struct cursor		cur;
	enum cursor_verdict	v = CURSOR_MORE;

	cursor_start(&cur);
	for (; *answers != NULL && v == CURSOR_MORE; answers++)
		v = cursor_next(&cur, *answers, strlen(*answers));
	*value = cur.value;
	return (v);
}

/* SCAN cursors: numbers only, none twice in a loop, a bounded scan. */
static void
test_cursors(void)
{
	static const char *const bad[] = { "", "abc", "-1", "1.5", " 7", "7 ",
	    "0x10", "18446744073709551616", "99999999999999999999999", "1e3" };
	static const char *const end[] = { "17", "4", "0", NULL };
	static const char *const max[] = { "18446744073709551615", NULL };
	static const char *const same[] = { "123", "123", NULL };
	static const char *const two[] = { "5", "7", "5", "7", NULL };
	static const char *const tail[] = { "1", "2", "3", "4", "5", "6", "7",
	    "8", "9", "6", "7", "8", "9", "6", "7", "8", "9", "6", "7", "8",
	    "9", "6", "7", "8", "9", NULL };
	struct cursor	cur;
	char		buf[24];
	uint64_t	value;
	size_t		i;
	int		v = CURSOR_MORE;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cursor_start(&cur);
		CHECK(cursor_next(&cur, bad[i], strlen(bad[i])) == CURSOR_BAD,
		    "cursor '%s' taken", bad[i]);
	}
	CHECK(cursor_run(end, &value) == CURSOR_END, "cursor 0: not the end");
	CHECK(cursor_run(max, &value) == CURSOR_MORE && value == UINT64_MAX,
	    "cursor 2^64-1: %llu", (unsigned long long)value);
	CHECK(cursor_run(same, &value) == CURSOR_AGAIN, "cursor 123 twice");
	CHECK(cursor_run(two, &value) == CURSOR_AGAIN, "cursors 5 7 5");
	CHECK(cursor_run(tail, &value) == CURSOR_AGAIN, "cursors 1-9, 6-9...");
	/* Ever new cursors: stopped at the bound, not before. */
	cursor_start(&cur);
	for (i = 1; i <= CURSOR_MAX_CALLS && v == CURSOR_MORE; i++) {
		(void)snprintf(buf, sizeof(buf), "%zu", i);
		v = cursor_next(&cur, buf, strlen(buf));
	}
	CHECK(v == CURSOR_ENDLESS && i == CURSOR_MAX_CALLS + 1,
	    "ever new cursors: %d after %zu", v, i - 1);
}

int
main(void)
{
	test_durations();
	test_numbers();
	test_poll_ms();
	test_cursors();
	test_urls();
	test_keyslots();
	test_sha1_signames();
	test_mask();
	(void)printf("%d passed, %d failed\n", passed, failed);
	return (failed == 0 ? 0 : 1);
}
