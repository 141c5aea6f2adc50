/*
 * status KEY: who holds the lock.  Exit 0 when held, 1 when free, like
 * `systemctl is-active`, so scripts can test it directly.
 */

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "redlock.h"

/* Another holder's token would let anyone release its lock: show a
 * recognisable prefix only. */
#define STATUS_TOKEN_SHOWN	8

static int	cmd_status_exec(struct global_opts *, struct cmd_args *);
static void	cmd_status_text(const char *, const struct lock_holder *,
		    const char *, const char *);
static void	cmd_status_json(const char *, const struct lock_holder *,
		    const char *, const char *);

static const int cmd_status_longopts[] = { OPT_JSON, 0 };

const struct cmd_entry cmd_status_entry = {
	.name = "status",
	.usage = "KEY [--json]",
	.summary = "Show who holds the lock; exit 0 if held, 1 if free.",
	.shortopts = "",
	.longopts = cmd_status_longopts,
	.exec = cmd_status_exec
};

static void
cmd_status_text(const char *key, const struct lock_holder *h,
    const char *token, const char *since)
{
	char	 safe[512];

	log_sanitize(safe, sizeof(safe), key, strlen(key));
	(void)printf("key: %s\n", safe);
	(void)printf("token: %s\n", token);
	(void)printf("ttl_ms: %lld\n", (long long)h->ttl_ms);
	if (h->fence >= 0)
		(void)printf("fence: %lld\n", (long long)h->fence);
	if (h->host != NULL) {
		log_sanitize(safe, sizeof(safe), h->host, strlen(h->host));
		(void)printf("host: %s\n", safe);
	}
	if (h->pid >= 0)
		(void)printf("pid: %lld\n", (long long)h->pid);
	if (h->command != NULL) {
		log_sanitize(safe, sizeof(safe), h->command,
		    strlen(h->command));
		(void)printf("command: %s\n", safe);
	}
	if (*since != '\0')
		(void)printf("since: %s\n", since);
}

static void
cmd_status_json(const char *key, const struct lock_holder *h,
    const char *token, const char *since)
{
	(void)fputs("{\"key\":", stdout);
	json_string(key);
	(void)fputs(",\"held\":true,\"token\":", stdout);
	json_string(token);
	(void)printf(",\"ttl_ms\":%lld", (long long)h->ttl_ms);
	if (h->fence >= 0)
		(void)printf(",\"fence\":%lld", (long long)h->fence);
	if (h->host != NULL) {
		(void)fputs(",\"host\":", stdout);
		json_string(h->host);
	}
	if (h->pid >= 0)
		(void)printf(",\"pid\":%lld", (long long)h->pid);
	if (h->command != NULL) {
		(void)fputs(",\"command\":", stdout);
		json_string(h->command);
	}
	if (*since != '\0') {
		(void)fputs(",\"since\":", stdout);
		json_string(since);
	}
	(void)fputs("}\n", stdout);
}

static int
cmd_status_exec(struct global_opts *g, struct cmd_args *a)
{
	struct lock		l;
	struct lock_holder	h;
	struct tm		tm;
	time_t			t;
	char			token[STATUS_TOKEN_SHOWN + 4];
	char			since[64] = "";
	int			rc;

	lock_init(&l, g, a->key);
	rc = lock_status(&l, &h);
	if (rc != EXIT_OK) {
		log_warnx("%s", l.err);
		lock_free(&l);
		return (rc);
	}
	if (!h.held) {
		if (a->json) {
			(void)fputs("{\"key\":", stdout);
			json_string(a->key);
			(void)fputs(",\"held\":false}\n", stdout);
		} else
			(void)puts("free");
		rc = EXIT_BUSY;		/* 1: "free", as the contract says */
		goto out;
	}
	log_sanitize(token, sizeof(token), h.token,
	    strlen(h.token) > STATUS_TOKEN_SHOWN ? STATUS_TOKEN_SHOWN :
	    strlen(h.token));
	if (strlen(h.token) > STATUS_TOKEN_SHOWN)
		(void)strcat(token, "...");
	if (h.since_ms > 0) {
		t = (time_t)(h.since_ms / 1000);
		if (gmtime_r(&t, &tm) != NULL)
			(void)strftime(since, sizeof(since),
			    "%Y-%m-%dT%H:%M:%SZ", &tm);
	}
	if (a->json)
		cmd_status_json(a->key, &h, token, since);
	else
		cmd_status_text(a->key, &h, token, since);
out:
	if (cmd_flush_stdout() == -1 && rc == EXIT_OK)
		rc = EXIT_UNAVAILABLE;
	lock_holder_free(&h);
	lock_free(&l);
	return (rc);
}
