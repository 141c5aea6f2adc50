/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of src/mask.c: what a recorded command hides, what it keeps
 * (and so what the man page's SECURITY section must say is not masked),
 * and the edges: empty words, a word that is only '=', very long words.
 */

#include <stdlib.h>
#include <string.h>

#include "../../src/mask.h"
#include "unit.h"

#define MAXW	8

static void	 check_words(int, const char *const *, const char *, int);
static void	 test_mask_rules(void);
static void	 test_mask_kept(void);
static void	 test_mask_long(void);
static void	 test_mask_record(void);

/*
 * mask_words(words) is want; and with twice, masking want again (as
 * status does with what it reads back) changes nothing.
 */
static void
check_words(int line, const char *const *words, const char *want, int twice)
{
	const char	*again[1];
	char		*got, *got2;
	size_t		 n;

	for (n = 0; n < MAXW && words[n] != NULL; n++)
		;
	got = mask_words(words, n);
	CHECK(got != NULL && strcmp(got, want) == 0,
	    "line %d: got '%s', want '%s'", line, got ? got : "(null)", want);
	free(got);
	if (!twice)
		return;
	again[0] = want;
	got2 = mask_words(again, 1);
	CHECK(got2 != NULL && strcmp(got2, want) == 0,
	    "line %d: masking '%s' again gave '%s'", line, want,
	    got2 ? got2 : "(null)");
	free(got2);
}

#define W(...)	((const char *const []){ __VA_ARGS__, NULL })
#define MASKS(want, ...) check_words(__LINE__, W(__VA_ARGS__), want, 1)
/* Masked again, a quote the first mask hid no longer closes: more goes. */
#define MASKS_ONCE(want, ...) check_words(__LINE__, W(__VA_ARGS__), want, 0)

static void
test_mask_rules(void)
{
	/* URL passwords, in any word and anywhere in it. */
	MASKS("redlock-cli -u redis://user:***@host:6379/0", "redlock-cli",
	    "-u", "redis://user:pw@host:6379/0");
	MASKS("x redis://:***@h", "x", "redis://:pw@h");
	MASKS("rediss://u:***@h:6380", "rediss://u:p@h:6380");
	MASKS("redis-sentinel://:***@h1:26379,h2:26379/m",
	    "redis-sentinel://:pw@h1:26379,h2:26379/m");
	MASKS("postgres://u:***@h/db", "postgres://u:S3cret@h/db");
	MASKS("https://u:***@example.com/x", "https://u:p@example.com/x");
	MASKS("-uredis://:***@h", "-uredis://:pw@h");
	MASKS("--url=redis://:***@h", "--url=redis://:pw@h");
	MASKS("DSN=mysql://root:***@db/x", "DSN=mysql://root:pw@db/x");
	/* A password with '@', ':' and '/' in it ends at the last '@'. */
	MASKS("redis://:***@h", "redis://:p@s:s/x@h");
	/* Two URLs in one word: both passwords go. */
	MASKS("redis://:***@h2", "redis://:a@h1,redis://:b@h2");
	/* ... also where a NAME=VALUE rule starts inside the password. */
	MASKS("redis://:***", "redis://:a,key=x@h");

	/* Long options whose name holds PASS, SECRET, TOKEN or KEY. */
	MASKS("--password ***", "--password", "pw");
	MASKS("--password=***", "--password=pw");
	MASKS("--db-password *** db", "--db-password", "pw", "db");
	MASKS("--api-key ***", "--api-key", "k");
	MASKS("--token *** --secret ***", "--token", "t", "--secret", "s");
	MASKS("--PassWord ***", "--PassWord", "pw");
	MASKS("--key ***", "--key", "/etc/tls/client.key");
	MASKS("--password ***", "--password", "a b");
	/* An empty value has nothing to hide. */
	MASKS("--token ", "--token", "");
	MASKS("x --password", "x", "--password");

	/* NAME=VALUE whose NAME holds one of them. */
	MASKS("env DB_PASSWORD=*** cmd", "env", "DB_PASSWORD=pw", "cmd");
	MASKS("api_key=*** MY_TOKEN=*** Secret=***", "api_key=k",
	    "MY_TOKEN=t", "Secret=s");
	MASKS("KEYS=***", "KEYS=x");
	/* redis-cli's own variable, and --auth options. */
	MASKS("REDISCLI_AUTH=*** redis-cli", "REDISCLI_AUTH=s", "redis-cli");
	MASKS("--auth *** AWS_CREDENTIALS=***", "--auth", "a",
	    "AWS_CREDENTIALS=c");
	MASKS("-Dapi.key=***", "-Dapi.key=k");
	MASKS("--set=db.password=***", "--set=db.password=pw");
	MASKS("PASS=", "PASS=");

	/* Words with blanks: shell text, piece by piece. */
	MASKS("/bin/sh -c mysql --password *** db", "/bin/sh", "-c",
	    "mysql --password pw db");
	MASKS("sh -c cd /x;DB_PASSWORD=*** run", "sh", "-c",
	    "cd /x;DB_PASSWORD=pw run");
	MASKS("sh -c mysql --password=*** db", "sh", "-c",
	    "mysql --password='a b' db");
	MASKS("sh -c mysql --password *** db", "sh", "-c",
	    "mysql --password \"a \\\" b\" db");
	MASKS("sh -c X=1 DB_PASSWORD=*** y", "sh", "-c",
	    "X=1 DB_PASSWORD=$'a b' y");
	MASKS_ONCE("sh -c echo \"DB_PASSWORD=*** done", "sh", "-c",
	    "echo \"DB_PASSWORD=a b\" done");
	MASKS("sh -c PASS=***", "sh", "-c", "PASS='a b c");
	MASKS("sh -c x --token\t***\nnext", "sh", "-c", "x --token\tt\nnext");
	MASKS("sh -c x --token ***", "sh", "-c", "x --token", "t y");
}

/* What is kept as it is: no secret to see, or none that can be told. */
static void
test_mask_kept(void)
{
	MASKS("redis://user@host", "redis://user@host");
	MASKS("redis://host:6379/0", "redis://host:6379/0");
	MASKS("unix:///run/redis.sock?db=2", "unix:///run/redis.sock?db=2");
	MASKS("a=b", "a=b");
	MASKS("=", "=");
	MASKS("==", "==");
	MASKS("=x", "=x");
	MASKS("", "");
	MASKS(" ", "", "");
	MASKS(" a  b ", " a  b ");
	MASKS("--keep-going x", "--keep-going", "x");
	MASKS("FOO=PASS", "FOO=PASS");
	MASKS("it's --verbose", "it's", "--verbose");
	/* Short options and plain arguments cannot be told from others. */
	MASKS("mysql -pS3cret", "mysql", "-pS3cret");
	MASKS("redis-cli -a S3cret", "redis-cli", "-a", "S3cret");
	MASKS("tool S3cret", "tool", "S3cret");
	MASKS("--password", "--password");
}

static void
test_mask_long(void)
{
	const char	*w[2];
	char		*big, *got;
	size_t		 n = 200000, i;

	/* A URL whose password is longer than any buffer would be. */
	big = malloc(n + 32);
	CHECK(big != NULL, "malloc");
	if (big == NULL)
		return;
	memcpy(big, "redis://:", 9);
	memset(big + 9, 'x', n);
	memcpy(big + 9 + n, "@h", 3);
	w[0] = big;
	got = mask_words(w, 1);
	CHECK(got != NULL && strcmp(got, "redis://:***@h") == 0,
	    "long password: %.40s", got ? got : "(null)");
	free(got);
	/* A long word with nothing to hide comes back whole. */
	memset(big, 'a', n);
	big[n] = '\0';
	w[0] = "--opt";
	w[1] = big;
	got = mask_words(w, 2);
	CHECK(got != NULL && strlen(got) == n + 6 &&
	    strncmp(got, "--opt aaa", 9) == 0, "long word: %zu",
	    got ? strlen(got) : 0);
	free(got);
	/* Many NAME=VALUE and blanks in one word. */
	for (i = 0; i + 7 <= n; i += 7)
		memcpy(big + i, "PASS=x ", 7);
	big[n - n % 7] = '\0';
	w[0] = big;
	got = mask_words(w, 1);
	CHECK(got != NULL && strstr(got, "=x") == NULL &&
	    strncmp(got, "PASS=*** PASS=***", 17) == 0, "many assigns");
	free(got);
	free(big);
}

static void
test_mask_record(void)
{
	const char *const argv[] = { "hold-job", "--password=pw", "x" };
	const char *const named[] = { "PASS=pw", "x" };
	char *got;

	got = mask_record(MASK_RECORD_FULL, argv, 3, 1024);
	CHECK(got != NULL && strcmp(got, "hold-job --password=*** x") == 0,
	    "full: %s", got ? got : "(null)");
	free(got);
	got = mask_record(MASK_RECORD_FULL, argv, 3, 15);
	CHECK(got != NULL && strcmp(got, "hold-job --pass") == 0,
	    "full, cut: %s", got ? got : "(null)");
	free(got);
	/* The cut comes after the mask: no part of a secret is left. */
	got = mask_record(MASK_RECORD_FULL, argv, 3, 21);
	CHECK(got != NULL && strcmp(got, "hold-job --password=*") == 0,
	    "full, cut in the mask: %s", got ? got : "(null)");
	free(got);
	got = mask_record(MASK_RECORD_NAME, argv, 3, 1024);
	CHECK(got != NULL && strcmp(got, "hold-job") == 0, "name: %s",
	    got ? got : "(null)");
	free(got);
	got = mask_record(MASK_RECORD_NAME, named, 2, 1024);
	CHECK(got != NULL && strcmp(got, "PASS=***") == 0, "name masked: %s",
	    got ? got : "(null)");
	free(got);
	got = mask_record(MASK_RECORD_NONE, argv, 3, 1024);
	CHECK(got != NULL && strcmp(got, "") == 0, "none: %s",
	    got ? got : "(null)");
	free(got);
	got = mask_record(MASK_RECORD_FULL, argv, 0, 1024);
	CHECK(got != NULL && strcmp(got, "") == 0, "no words: %s",
	    got ? got : "(null)");
	free(got);
}

void
test_mask(void)
{
	test_mask_rules();
	test_mask_kept();
	test_mask_long();
	test_mask_record();
}
