/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the reply handling of the connection layer, where
 * server bytes are interpreted (conn_feed(), conn_on_reply(),
 * conn_classify_error()).
 *
 * conn-impl.h declares struct conn and conn_feed() for the connection
 * layer's files, and this target uses it like one of them, so no test
 * hook enters the product.  A conn is built
 * in memory, with no socket (fd -1), as conn_begin() leaves it after
 * sending a command.  What conn_feed() asks for is done as conn-io.c
 * would (conn_act()), except following a redirect, which would dial.
 *
 * Input: three header bytes, then the server's bytes.
 *   byte 0: bits 0-2 how many setup replies come first (mod 5),
 *           bit 3 a redis-sentinel:// URL (ROLE, READONLY paths),
 *           bit 4 verbose (-v -v: each reply is logged),
 *           bit 5 the command is an EVALSHA with an EVAL to send on
 *           NOSCRIPT (redis:// only: on a kept sentinel connection
 *           conn_begin() asks the sentinels again, over the network),
 *           bit 6 the command went to a node named by ASK, behind
 *           ASKING, so the EVAL does too
 *   byte 1: the kind of each setup reply, two bits each (AUTH, SELECT,
 *           ROLE, ASKING)
 *   byte 2: 0 feeds the bytes at once; n feeds them in chunks of 1..n
 *           bytes (sizes from a generator seeded with n), so replies
 *           arrive split as they do from a socket.
 *
 * Beyond the checks on the result, the heap may not grow by more than the
 * reply bounds allow (contract, Safety: a server's reply can never make
 * us allocate more than a few MB): ASan's count of allocated bytes is
 * sampled at every malloc() while the input is fed, and its peak checked.
 * The same target builds against hiredis 0.14 and 1.x (fuzz.mk,
 * HIREDIS_PREFIX), and accepts the reply types of either.
 */

#include <sanitizer/allocator_interface.h>

#include <string.h>
#include <unistd.h>

#include "../../src/conn-impl.h"

#include "fuzz.h"

/*
 * What the bytes of one input may add to the heap: the reader's buffer
 * (the bytes read, and sds's slack of up to 1 MiB as it grows), the
 * replies it parsed, and a margin for the rest (our conn, the EVAL sent
 * on NOSCRIPT, ASan's own bookkeeping).
 */
#define FUZZ_MAX_HEAP	(CONN_MAX_REPLY_BYTES + CONN_MAX_REPLY_ALLOC + \
			    2 * 1024 * 1024)

/* What script_call() would send after NOSCRIPT. */
static const char	*fuzz_eval_argv[] = { "EVAL", "return 1", "1", "k" };
static const size_t	 fuzz_eval_lens[] = { 4, 8, 1, 1 };

int	 LLVMFuzzerInitialize(int *, char ***);
int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static char fuzz_display[] = "redis://fuzz:1";
static char fuzz_host[] = "fuzz";
static char fuzz_master[] = "mymaster";

/* The most ASan counted as allocated since fuzz_heap_reset(). */
static size_t	 fuzz_heap_peak;
static int	 fuzz_heap_on;

static void
fuzz_malloc_hook(const volatile void *p, size_t size)
{
	size_t now;

	(void)p;
	(void)size;
	if (!fuzz_heap_on)
		return;
	now = __sanitizer_get_current_allocated_bytes();
	if (now > fuzz_heap_peak)
		fuzz_heap_peak = now;
}

static void
fuzz_free_hook(const volatile void *p)
{
	(void)p;
}

static size_t
fuzz_heap_reset(void)
{
	fuzz_heap_peak = __sanitizer_get_current_allocated_bytes();
	return (fuzz_heap_peak);
}

/* A reply tree as hiredis builds it: known types, terminated strings. */
static void
fuzz_check_reply(const redisReply *r, int depth)
{
	size_t i;

	FUZZ_CHECK(r != NULL, "NULL reply at depth %d", depth);
	FUZZ_CHECK(depth < 16, "reply nested %d deep", depth);
	switch (r->type) {
	case REDIS_REPLY_STRING:
	case REDIS_REPLY_STATUS:
	case REDIS_REPLY_ERROR:
#if HIREDIS_MAJOR >= 1
	case REDIS_REPLY_DOUBLE:
	case REDIS_REPLY_BIGNUM:
	case REDIS_REPLY_VERB:
#endif
		FUZZ_CHECK(r->str != NULL && r->str[r->len] == '\0',
		    "string reply not terminated");
		break;
	case REDIS_REPLY_ARRAY:
#if HIREDIS_MAJOR >= 1
	case REDIS_REPLY_MAP:
	case REDIS_REPLY_SET:
	case REDIS_REPLY_PUSH:
#endif
		FUZZ_CHECK(depth < CONN_MAX_DEPTH, "an aggregate %d deep",
		    depth);
		for (i = 0; i < r->elements; i++)
			fuzz_check_reply(r->element[i], depth + 1);
		break;
	case REDIS_REPLY_INTEGER:
	case REDIS_REPLY_NIL:
#if HIREDIS_MAJOR >= 1
	case REDIS_REPLY_BOOL:
#endif
		break;
	default:
		FUZZ_CHECK(0, "reply type %d", r->type);
	}
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	if (__sanitizer_install_malloc_and_free_hooks(fuzz_malloc_hook,
	    fuzz_free_hook) == 0)
		FUZZ_CHECK(0, "cannot install the malloc hooks");
	return (0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct redis_url	 url;
	struct conn_config	 conf;
	struct url_host		 host;
	struct conn		*c;
	const char		*buf;
	size_t			 n, off, chunk, base;
	uint32_t		 state;
	int			 i, maxchunk, sv[2] = { -1, -1 };
	enum conn_verdict	 v;

	if (size < 3)
		return (0);

	memset(&host, 0, sizeof(host));
	host.host = fuzz_host;
	host.port = 1;
	memset(&url, 0, sizeof(url));
	url.kind = data[0] & 0x08 ? URL_SENTINEL : URL_TCP;
	url.hosts = &host;
	url.nhosts = 1;
	url.host = fuzz_host;
	url.port = 1;
	url.display = fuzz_display;
	if (url.kind == URL_SENTINEL)
		url.master_name = fuzz_master;
	memset(&conf, 0, sizeof(conf));
	conf.connect_timeout_ms = DEFAULT_TIMEOUT_MS;
	conf.io_timeout_ms = DEFAULT_TIMEOUT_MS;
	log_verbosity = data[0] & 0x10 ? 2 : 0;

	c = conn_new(&url, &conf);
	FUZZ_CHECK(c->fd == -1, "a new conn has fd %d", c->fd);
	conn_reader_new(c);
	c->nsetup = (data[0] & 0x07) % (CONN_MAX_SETUP + 1);
	for (i = 0; i < c->nsetup; i++)
		c->setup[i] = (enum conn_setup)((data[1] >> (2 * i)) & 0x03);
	c->setup_replies = c->nsetup;
	c->result = CONN_OK;
	if (data[0] & 0x20 && url.kind == URL_TCP &&
	    socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0) {
		/* The EVAL goes down a socket nobody reads; conn owns sv[0]. */
		c->fd = sv[0];
		conn_set_fallback(c, 4, fuzz_eval_argv, fuzz_eval_lens);
	}
	if (data[0] & 0x40) {
		c->ask.host = xstrdup(fuzz_host);
		c->ask.url = url;
		c->ask.url.kind = URL_TCP;
		c->ask.url.host = c->ask.host;
		c->ask.url.display = xstrdup(fuzz_display);
		c->dial = &c->ask.url;
	}
	maxchunk = data[2];
	state = data[2];

	buf = (const char *)data + 3;
	n = size - 3;
	base = fuzz_heap_reset();
	fuzz_heap_on = 1;
	for (off = 0; off < n && !c->is_done; off += chunk) {
		chunk = n - off;
		if (maxchunk > 0) {
			state = state * 1103515245u + 12345u;
			chunk = 1 + (state >> 16) % (size_t)maxchunk;
			if (chunk > n - off)
				chunk = n - off;
		}
		v = conn_feed(c, buf + off, chunk);
		if (v != CONN_V_REDIRECT)
			conn_act(c, v);
	}
	fuzz_heap_on = 0;
	FUZZ_CHECK(fuzz_heap_peak - base <= FUZZ_MAX_HEAP,
	    "%zu bytes allocated for %zu bytes of replies",
	    fuzz_heap_peak - base, n);

	FUZZ_CHECK(c->result >= CONN_OK && c->result <= CONN_PROTOCOL,
	    "result %d", c->result);
	FUZZ_CHECK(c->setup_replies >= 0 && c->setup_replies <= c->nsetup,
	    "%d setup replies left of %d", c->setup_replies, c->nsetup);
	if (!c->is_done) {
		/* Not a whole reply yet: the caller would wait for more. */
		FUZZ_CHECK(c->result == CONN_OK && c->reply == NULL,
		    "pending, yet result %d", c->result);
		FUZZ_CHECK(c->reader != NULL, "pending without a reader");
	} else if (c->result == CONN_OK) {
		FUZZ_CHECK(c->reply != NULL, "CONN_OK without a reply");
		FUZZ_CHECK(c->reply->type != REDIS_REPLY_ERROR,
		    "an error reply taken as CONN_OK");
		FUZZ_CHECK(c->setup_replies == 0,
		    "CONN_OK with %d setup replies unread", c->setup_replies);
		fuzz_check_reply(c->reply, 0);
	} else {
		FUZZ_CHECK(c->reply == NULL, "failure %d with a reply",
		    c->result);
		FUZZ_CHECK(c->err[0] != '\0', "failure %d without a message",
		    c->result);
		/* A stream in an unknown state is never reused. */
		if (c->result == CONN_PROTOCOL || c->result == CONN_AUTH ||
		    c->result == CONN_UNAVAILABLE)
			FUZZ_CHECK(c->reader == NULL && c->fd == -1,
			    "result %d left the stream open", c->result);
	}
	FUZZ_CHECK(memchr(c->server_error, '\0', sizeof(c->server_error)) !=
	    NULL, "server_error not terminated");
	conn_free(c);
	if (sv[1] != -1)
		(void)close(sv[1]);
	return (0);
}
