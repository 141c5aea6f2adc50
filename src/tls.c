/* SPDX-License-Identifier: MIT */
/*
 * TLS under the connection layer, through OpenSSL.
 *
 * libssl is opened with dlopen() the first time a URL needs TLS, not
 * linked: loading libssl and libcrypto costs about a millisecond per
 * process start, which a plain redis:// lock in front of every cron job
 * must not pay.  The types come from OpenSSL's headers, so every function
 * pointer has the exact prototype of the function it points to.
 *
 * One SSL_CTX per process holds the trust settings (--cacert, --cacertdir,
 * or the system store), the client certificate (--cert, --key) and the
 * verification mode (--insecure turns it off, with a warning each run).
 * Each connection verifies the chain and the host name or IP address it
 * dialled (or --sni), and sends SNI for names.
 */

#include <sys/stat.h>

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "redlock.h"

#define TLS_FN(name)	__typeof__(&name) p_##name

static struct {
	void	*lib;
	TLS_FN(TLS_client_method);
	TLS_FN(SSL_CTX_new);
	TLS_FN(SSL_CTX_free);
	TLS_FN(SSL_CTX_set_verify);
	TLS_FN(SSL_CTX_set_default_verify_paths);
	TLS_FN(SSL_CTX_load_verify_locations);
	TLS_FN(SSL_CTX_use_certificate_chain_file);
	TLS_FN(SSL_CTX_use_PrivateKey_file);
	TLS_FN(SSL_CTX_check_private_key);
	TLS_FN(SSL_CTX_ctrl);
	TLS_FN(SSL_new);
	TLS_FN(SSL_free);
	TLS_FN(SSL_set_fd);
	TLS_FN(SSL_ctrl);
	TLS_FN(SSL_set1_host);
	TLS_FN(SSL_get0_param);
	TLS_FN(X509_VERIFY_PARAM_set1_ip_asc);
	TLS_FN(SSL_connect);
	TLS_FN(SSL_read);
	TLS_FN(SSL_write);
	TLS_FN(SSL_get_error);
	TLS_FN(SSL_get_verify_result);
	TLS_FN(X509_verify_cert_error_string);
	TLS_FN(ERR_get_error);
	TLS_FN(ERR_peek_error);
	TLS_FN(ERR_error_string_n);
	TLS_FN(ERR_clear_error);
	SSL_CTX	*ctx;
	const struct tls_options *opts;
} tls;

struct tls_conn {
	SSL	*ssl;
};

static int	 tls_load(char *, size_t);
static void	 tls_ssl_error(const char *, char *, size_t);
static int	 tls_would_block(int, int *);

/* The libssl names tried, newest first. */
static const char *tls_libs[] = { "libssl.so.3", "libssl.so.1.1",
    "libssl.so", NULL };

/* Resolve every function we use, or say which one is missing. */
static int
tls_load(char *err, size_t len)
{
	int i;

	for (i = 0; tls_libs[i] != NULL && tls.lib == NULL; i++)
		tls.lib = dlopen(tls_libs[i], RTLD_NOW | RTLD_LOCAL);
	if (tls.lib == NULL) {
		(void)snprintf(err, len, "TLS needs libssl (OpenSSL), which "
		    "cannot be loaded: %s", dlerror());
		return (-1);
	}
#define TLS_LOAD(name) do {						\
	*(void **)&tls.p_##name = dlsym(tls.lib, #name);		\
	if (tls.p_##name == NULL) {					\
		(void)snprintf(err, len, "libssl lacks %s", #name);	\
		return (-1);						\
	}								\
} while (0)
	TLS_LOAD(TLS_client_method);
	TLS_LOAD(SSL_CTX_new);
	TLS_LOAD(SSL_CTX_free);
	TLS_LOAD(SSL_CTX_set_verify);
	TLS_LOAD(SSL_CTX_set_default_verify_paths);
	TLS_LOAD(SSL_CTX_load_verify_locations);
	TLS_LOAD(SSL_CTX_use_certificate_chain_file);
	TLS_LOAD(SSL_CTX_use_PrivateKey_file);
	TLS_LOAD(SSL_CTX_check_private_key);
	TLS_LOAD(SSL_CTX_ctrl);
	TLS_LOAD(SSL_new);
	TLS_LOAD(SSL_free);
	TLS_LOAD(SSL_set_fd);
	TLS_LOAD(SSL_ctrl);
	TLS_LOAD(SSL_set1_host);
	TLS_LOAD(SSL_get0_param);
	TLS_LOAD(X509_VERIFY_PARAM_set1_ip_asc);
	TLS_LOAD(SSL_connect);
	TLS_LOAD(SSL_read);
	TLS_LOAD(SSL_write);
	TLS_LOAD(SSL_get_error);
	TLS_LOAD(SSL_get_verify_result);
	TLS_LOAD(X509_verify_cert_error_string);
	TLS_LOAD(ERR_get_error);
	TLS_LOAD(ERR_peek_error);
	TLS_LOAD(ERR_error_string_n);
	TLS_LOAD(ERR_clear_error);
#undef TLS_LOAD
	return (0);
}

/* "what: <OpenSSL's reason>", the queue of errors emptied. */
static void
tls_ssl_error(const char *what, char *err, size_t len)
{
	unsigned long	 e, last = 0;
	char		 buf[256] = "unknown error";

	while ((e = tls.p_ERR_get_error()) != 0)
		last = e;
	if (last != 0)
		tls.p_ERR_error_string_n(last, buf, sizeof(buf));
	(void)snprintf(err, len, "%s: %s", what, buf);
}

/*
 * Load libssl and build the context, once.  Returns 0, or an exit code
 * with err set: EXIT_USAGE for a bad certificate or key file,
 * EXIT_UNAVAILABLE when TLS itself is not available.
 */
int
tls_setup(const struct tls_options *o, char *err, size_t len)
{
	struct stat st;

	if (tls.ctx != NULL)
		return (0);
	if (tls.lib == NULL && tls_load(err, len) == -1)
		return (EXIT_UNAVAILABLE);
	tls.opts = o;
	if ((tls.ctx = tls.p_SSL_CTX_new(tls.p_TLS_client_method())) == NULL) {
		tls_ssl_error("cannot create a TLS context", err, len);
		return (EXIT_UNAVAILABLE);
	}
	/* Writes are retried from where they stopped, buffer unchanged. */
	(void)tls.p_SSL_CTX_ctrl(tls.ctx, SSL_CTRL_MODE,
	    SSL_MODE_ENABLE_PARTIAL_WRITE |
	    SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER, NULL);
	tls.p_SSL_CTX_set_verify(tls.ctx, o->insecure ? SSL_VERIFY_NONE :
	    SSL_VERIFY_PEER, NULL);
	if (o->cacertdir != NULL && (stat(o->cacertdir, &st) == -1 ||
	    !S_ISDIR(st.st_mode))) {
		(void)snprintf(err, len, "--cacertdir '%s' is not a directory",
		    o->cacertdir);
		return (EXIT_USAGE);
	}
	if (o->cacert != NULL || o->cacertdir != NULL) {
		if (tls.p_SSL_CTX_load_verify_locations(tls.ctx, o->cacert,
		    o->cacertdir) != 1) {
			tls_ssl_error(o->cacert != NULL ? "cannot load --cacert"
			    : "cannot load --cacertdir", err, len);
			return (EXIT_USAGE);
		}
	} else if (tls.p_SSL_CTX_set_default_verify_paths(tls.ctx) != 1) {
		tls_ssl_error("cannot load the system's CA certificates", err,
		    len);
		return (EXIT_UNAVAILABLE);
	}
	if (o->cert != NULL || o->key != NULL) {
		if (o->cert == NULL || o->key == NULL) {
			(void)snprintf(err, len, "--cert and --key go "
			    "together");
			return (EXIT_USAGE);
		}
		if (tls.p_SSL_CTX_use_certificate_chain_file(tls.ctx,
		    o->cert) != 1) {
			tls_ssl_error("cannot load --cert", err, len);
			return (EXIT_USAGE);
		}
		if (tls.p_SSL_CTX_use_PrivateKey_file(tls.ctx, o->key,
		    SSL_FILETYPE_PEM) != 1 ||
		    tls.p_SSL_CTX_check_private_key(tls.ctx) != 1) {
			tls_ssl_error("cannot load --key", err, len);
			return (EXIT_USAGE);
		}
	}
	return (0);
}

/*
 * A TLS session over the connected socket fd, to be verified against
 * host (the name or address dialled; --sni overrides it).
 */
struct tls_conn *
tls_new(int fd, const char *host, char *err, size_t len)
{
	struct tls_conn	*t;
	const char	*name = tls.opts->sni != NULL ? tls.opts->sni : host;
	unsigned char	 addr[16];
	int		 is_ip;

	is_ip = inet_pton(AF_INET, name, addr) == 1 ||
	    inet_pton(AF_INET6, name, addr) == 1;
	t = xcalloc(1, sizeof(*t));
	tls.p_ERR_clear_error();
	if ((t->ssl = tls.p_SSL_new(tls.ctx)) == NULL ||
	    tls.p_SSL_set_fd(t->ssl, fd) != 1) {
		tls_ssl_error("cannot start TLS", err, len);
		tls_free(t);
		return (NULL);
	}
	/* SNI is for names only; an address is checked as an address. */
	if (!is_ip)
		(void)tls.p_SSL_ctrl(t->ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME,
		    TLSEXT_NAMETYPE_host_name, (void *)(uintptr_t)name);
	if (!tls.opts->insecure && (is_ip ?
	    tls.p_X509_VERIFY_PARAM_set1_ip_asc(tls.p_SSL_get0_param(t->ssl),
	    name) : tls.p_SSL_set1_host(t->ssl, name)) != 1) {
		tls_ssl_error("cannot set the name to verify", err, len);
		tls_free(t);
		return (NULL);
	}
	return (t);
}

void
tls_free(struct tls_conn *t)
{
	if (t == NULL)
		return;
	if (t->ssl != NULL)
		tls.p_SSL_free(t->ssl);
	free(t);
}

/*
 * Drive the handshake.  Returns 1 when done, 0 to wait (*want_write: for
 * POLLOUT rather than POLLIN), -1 with err set.  A failed verification is
 * reported with OpenSSL's reason (unknown CA, name mismatch, expired).
 */
int
tls_handshake(struct tls_conn *t, int *want_write, char *err, size_t len)
{
	long	v;
	int	rc, e;

	tls.p_ERR_clear_error();
	if ((rc = tls.p_SSL_connect(t->ssl)) == 1)
		return (1);
	e = tls.p_SSL_get_error(t->ssl, rc);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
		*want_write = e == SSL_ERROR_WANT_WRITE;
		return (0);
	}
	if ((v = tls.p_SSL_get_verify_result(t->ssl)) != X509_V_OK) {
		(void)snprintf(err, len, "certificate verification failed: %s",
		    tls.p_X509_verify_cert_error_string(v));
		return (-1);
	}
	if (e == SSL_ERROR_SYSCALL && errno != 0)
		(void)snprintf(err, len, "TLS handshake failed: %s",
		    strerror(errno));
	else if (e == SSL_ERROR_SYSCALL || e == SSL_ERROR_ZERO_RETURN)
		(void)snprintf(err, len, "TLS handshake failed: connection "
		    "closed by the server (does it speak TLS?)");
	else
		tls_ssl_error("TLS handshake failed", err, len);
	return (-1);
}

/* SSL_ERROR_WANT_*: wait for the socket, as EAGAIN says for a socket. */
static int
tls_would_block(int e, int *want_write)
{
	if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
		return (0);
	*want_write = e == SSL_ERROR_WANT_WRITE;
	errno = EAGAIN;
	return (1);
}

/*
 * Read or write like recv/send: > 0 bytes, 0 end of stream (read), -1
 * with errno EAGAIN to wait (*want_write says for what), or -1 with errno
 * EIO and err set.
 */
long
tls_read(struct tls_conn *t, void *buf, size_t n, int *want_write,
    char *err, size_t len)
{
	int rc, e;

	tls.p_ERR_clear_error();
	if ((rc = tls.p_SSL_read(t->ssl, buf, (int)(n > INT32_MAX ?
	    INT32_MAX : n))) > 0)
		return (rc);
	e = tls.p_SSL_get_error(t->ssl, rc);
	if (tls_would_block(e, want_write))
		return (-1);
	if (e == SSL_ERROR_ZERO_RETURN ||
	    (e == SSL_ERROR_SYSCALL && errno == 0))
		return (0);
	tls_ssl_error("TLS read failed", err, len);
	errno = EIO;
	return (-1);
}

long
tls_write(struct tls_conn *t, const void *buf, size_t n, int *want_write,
    char *err, size_t len)
{
	int rc, e;

	tls.p_ERR_clear_error();
	if ((rc = tls.p_SSL_write(t->ssl, buf, (int)(n > INT32_MAX ?
	    INT32_MAX : n))) > 0)
		return (rc);
	e = tls.p_SSL_get_error(t->ssl, rc);
	if (tls_would_block(e, want_write))
		return (-1);
	/*
	 * A server that refuses us after the handshake (TLS 1.3: no client
	 * certificate) has sent an alert saying why: read it, so the
	 * message names the reason rather than a broken pipe.
	 */
	if (tls.p_ERR_peek_error() == 0) {
		char byte;

		(void)tls.p_SSL_read(t->ssl, &byte, 1);
	}
	tls_ssl_error("TLS write failed", err, len);
	errno = EIO;
	return (-1);
}

/*
 * For --version: which libssl a TLS connection would load ("libssl.so.3
 * loadable"), found by loading it and letting it go again.
 */
void
tls_describe(char *buf, size_t len)
{
	void	*h;
	int	 i;

	for (i = 0; tls_libs[i] != NULL; i++) {
		if ((h = dlopen(tls_libs[i], RTLD_LAZY | RTLD_LOCAL)) != NULL) {
			(void)snprintf(buf, len, "%s loadable", tls_libs[i]);
			(void)dlclose(h);
			return;
		}
	}
	(void)snprintf(buf, len, "no libssl loadable");
}
