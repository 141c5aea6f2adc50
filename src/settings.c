/* SPDX-License-Identifier: MIT */
/*
 * Connection settings, resolved once after parsing and before any lock is
 * taken: URLs from -u or the environment, the password, logging.
 */

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "redlock.h"

#define MAX_PASSWORD_LEN	4096

static int	 settings_read_password_file(struct global_opts *);
static void	 settings_split_urls(struct global_opts *, const char *);
static int	 settings_urls(struct global_opts *);
static int	 settings_tls(struct global_opts *);

/* $REDLOCK_URL may list several URLs, separated by commas or spaces. */
static void
settings_split_urls(struct global_opts *g, const char *list)
{
	const char	*p = list, *q;
	size_t		 len;

	while (*p != '\0') {
		p += strspn(p, ", \t\n");
		/*
		 * Blanks always separate; a comma only when a new scheme
		 * follows, since sentinel and cluster URLs list their hosts
		 * with commas.
		 */
		for (len = 0; p[len] != '\0' && strchr(" \t\n", p[len]) == NULL;
		    len++) {
			if (p[len] != ',')
				continue;
			q = p + len + 1;
			if (*q == '\0' || strchr(" \t\n,", *q) != NULL)
				break;
			q += strspn(q, "abcdefghijklmnopqrstuvwxyz+-");
			if (strncmp(q, "://", 3) == 0)
				break;
		}
		if (len == 0)
			break;
		g->url_strings = xreallocarray(g->url_strings,
		    g->nurl_strings + 1, sizeof(*g->url_strings));
		g->url_strings[g->nurl_strings] = xmalloc(len + 1);
		memcpy(g->url_strings[g->nurl_strings], p, len);
		g->url_strings[g->nurl_strings][len] = '\0';
		g->nurl_strings++;
		p += len;
	}
}

/*
 * Read the first line of --password-file.  Refused when group or others
 * may read it, as ssh refuses such a private key: the secret is already
 * exposed and the user should know.
 */
static int
settings_read_password_file(struct global_opts *g)
{
	struct stat	 st;
	char		*buf;
	ssize_t		 n;
	size_t		 len = 0;
	int		 fd;

	fd = open(g->password_file, O_RDONLY | O_CLOEXEC);
	if (fd == -1) {
		log_warn("cannot open password file '%s'", g->password_file);
		return (EXIT_USAGE);
	}
	if (fstat(fd, &st) == -1) {
		log_warn("cannot stat password file '%s'", g->password_file);
		(void)close(fd);
		return (EXIT_USAGE);
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		log_warnx("password file '%s' is accessible by group or "
		    "others (mode %04o): chmod 600 it", g->password_file,
		    (unsigned)(st.st_mode & 07777));
		(void)close(fd);
		return (EXIT_USAGE);
	}
	buf = xmalloc(MAX_PASSWORD_LEN + 1);
	while (len < MAX_PASSWORD_LEN) {
		n = read(fd, buf + len, MAX_PASSWORD_LEN - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			log_warn("cannot read password file '%s'",
			    g->password_file);
			(void)close(fd);
			freezero_str(buf);
			return (EXIT_USAGE);
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	(void)close(fd);
	buf[len] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (*buf == '\0') {
		log_warnx("password file '%s' is empty", g->password_file);
		freezero_str(buf);
		return (EXIT_USAGE);
	}
	g->password = buf;
	return (0);
}

/*
 * After parsing: URLs from -u or the environment, the password, logging.
 * Returns 0 or an exit code (the message printed).
 */
int
settings_setup(struct global_opts *g)
{
	const char	*env;
	int		 rc;

	log_verbosity = g->quiet ? -1 : g->verbose;
	if (g->use_syslog)
		log_open_syslog();
	if (g->prefix == NULL && (env = getenv("REDLOCK_PREFIX")) != NULL)
		g->prefix = env;
	if ((rc = settings_urls(g)) != 0 || (rc = settings_tls(g)) != 0)
		return (rc);
	if (g->user == NULL && (env = getenv("REDLOCK_USER")) != NULL &&
	    *env != '\0')
		g->user = env;
	if (g->password_file != NULL) {
		if ((rc = settings_read_password_file(g)) != 0)
			return (rc);
		g->password_from = "--password-file";
	} else if ((env = getenv("REDLOCK_PASSWORD")) != NULL &&
	    *env != '\0') {
		g->password = xstrdup(env);
		g->password_from = "REDLOCK_PASSWORD";
	} else if ((env = getenv("REDISCLI_AUTH")) != NULL && *env != '\0') {
		g->password = xstrdup(env);
		g->password_from = "REDISCLI_AUTH";
	}
	return (0);
}

/* The URLs: from -u, else the environment, else the default; parsed. */
static int
settings_urls(struct global_opts *g)
{
	const char	*env, *errstr, *var;
	char		*shown;
	size_t		 i;
	int		 from_command_line = g->nurl_strings > 0;

	if (g->nurl_strings == 0) {
		/* The variable the URLs came from, for the message. */
		if ((env = getenv(var = "REDLOCK_URL")) == NULL || *env == '\0')
			env = getenv(var = "REDIS_URL");
		if (env == NULL || *env == '\0')
			env = DEFAULT_URL;
		settings_split_urls(g, env);
		if (g->nurl_strings == 0) {
			log_warnx("%s: invalid URL list in the environment", var);
			return (EXIT_USAGE);
		}
	}
	g->urls = xcalloc(g->nurl_strings, sizeof(*g->urls));
	for (i = 0; i < g->nurl_strings; i++) {
		if (url_parse(g->url_strings[i], &g->urls[i], &errstr) == -1) {
			shown = url_redact(g->url_strings[i]);
			log_warnx("invalid URL '%s': %s", shown, errstr);
			free(shown);
			return (EXIT_USAGE);
		}
		g->nurls++;
		g->tls.insecure |= g->urls[i].tls_insecure;
		if (from_command_line && g->urls[i].password != NULL &&
		    !g->no_auth_warning)
			log_warnx("warning: a password in -u on the command "
			    "line may be seen by other users; use "
			    "--password-file or REDISCLI_AUTH");
	}
	return (0);
}

/* TLS, for every URL with --tls, or for the rediss:// ones. */
static int
settings_tls(struct global_opts *g)
{
	char	err[512];
	size_t	i;
	int	rc;

	for (i = 0; i < g->nurls; i++)
		if (g->urls[i].is_tls)
			g->tls.enabled = 2;	/* some URLs, not all */
	if (!g->tls.enabled)
		return (0);
	if ((rc = tls_setup(&g->tls, err, sizeof(err))) != 0) {
		log_warnx("%s", err);
		return (rc);
	}
	if (g->tls.insecure)
		log_warnx("warning: --insecure: the server's certificate is "
		    "not verified");
	return (0);
}

void
settings_free(struct global_opts *g)
{
	size_t i;

	for (i = 0; i < g->nurl_strings; i++)
		freezero_str(g->url_strings[i]);
	free(g->url_strings);
	for (i = 0; i < g->nurls; i++)
		url_free(&g->urls[i]);
	free(g->urls);
	freezero_str(g->password);
	memset(g, 0, sizeof(*g));
}
