/* SPDX-License-Identifier: MIT */
/*
 * TLS under the connection layer, through OpenSSL, whose functions are
 * called through a table (tls-impl.h): filled from a libssl opened at the
 * first TLS connection, or from the OpenSSL linked into a static build.
 *
 * One SSL_CTX per process holds the trust settings (--cacert, --cacertdir,
 * or the system store), the client certificate (--cert, --key) and the
 * verification mode (--insecure turns it off, with a warning each run).
 * Each connection verifies the chain and the host name or IP address it
 * dialled (or --sni), and sends SNI for names.
 */

#include <sys/stat.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redlock.h"
#include "tls-impl.h"

static struct tls_api api;

static struct {
	int	 is_loaded;
	SSL_CTX	*ctx;
	const struct tls_options *opts;
} tls;

struct tls_conn {
	SSL	*ssl;
};

static void	 tls_ssl_error(const char *, char *, size_t);
static int	 tls_would_block(int, int *);

/* "what: <OpenSSL's reason>", the queue of errors emptied. */
static void
tls_ssl_error(const char *what, char *err, size_t len)
{
	unsigned long	 e, last = 0;
	char		 buf[256] = "unknown error";

	while ((e = api.p_ERR_get_error()) != 0)
		last = e;
	if (last != 0)
		api.p_ERR_error_string_n(last, buf, sizeof(buf));
	(void)snprintf(err, len, "%s: %s", what, buf);
}

/*
 * Load OpenSSL's functions and build the context, once.  Returns 0, or an exit code
 * with err set: EXIT_USAGE for a bad certificate or key file,
 * EXIT_UNAVAILABLE when TLS itself is not available.
 */
int
tls_setup(const struct tls_options *o, char *err, size_t len)
{
	struct stat st;

	if (tls.ctx != NULL)
		return (0);
	if (!tls.is_loaded && tls_api_load(&api, err, len) == -1)
		return (EXIT_UNAVAILABLE);
	tls.is_loaded = 1;
	tls.opts = o;
	if ((tls.ctx = api.p_SSL_CTX_new(api.p_TLS_client_method())) == NULL) {
		tls_ssl_error("cannot create a TLS context", err, len);
		return (EXIT_UNAVAILABLE);
	}
	if (tls_ctx_floor(tls.ctx, err, len) == -1)
		return (EXIT_UNAVAILABLE);
	/* Writes are retried from where they stopped, buffer unchanged. */
	(void)api.p_SSL_CTX_ctrl(tls.ctx, SSL_CTRL_MODE,
	    SSL_MODE_ENABLE_PARTIAL_WRITE |
	    SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER, NULL);
	api.p_SSL_CTX_set_verify(tls.ctx, o->insecure ? SSL_VERIFY_NONE :
	    SSL_VERIFY_PEER, NULL);
	if (o->cacertdir != NULL && (stat(o->cacertdir, &st) == -1 ||
	    !S_ISDIR(st.st_mode))) {
		(void)snprintf(err, len, "--cacertdir '%s' is not a directory",
		    o->cacertdir);
		return (EXIT_USAGE);
	}
	if (o->cacert != NULL || o->cacertdir != NULL) {
		if (api.p_SSL_CTX_load_verify_locations(tls.ctx, o->cacert,
		    o->cacertdir) != 1) {
			tls_ssl_error(o->cacert != NULL ? "cannot load --cacert"
			    : "cannot load --cacertdir", err, len);
			return (EXIT_USAGE);
		}
	} else if (api.p_SSL_CTX_set_default_verify_paths(tls.ctx) != 1) {
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
		if (api.p_SSL_CTX_use_certificate_chain_file(tls.ctx,
		    o->cert) != 1) {
			tls_ssl_error("cannot load --cert", err, len);
			return (EXIT_USAGE);
		}
		if (api.p_SSL_CTX_use_PrivateKey_file(tls.ctx, o->key,
		    SSL_FILETYPE_PEM) != 1 ||
		    api.p_SSL_CTX_check_private_key(tls.ctx) != 1) {
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
	api.p_ERR_clear_error();
	if ((t->ssl = api.p_SSL_new(tls.ctx)) == NULL ||
	    api.p_SSL_set_fd(t->ssl, fd) != 1) {
		tls_ssl_error("cannot start TLS", err, len);
		tls_free(t);
		return (NULL);
	}
	/* SNI is for names only; an address is checked as an address. */
	if (!is_ip)
		(void)api.p_SSL_ctrl(t->ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME,
		    TLSEXT_NAMETYPE_host_name, (void *)(uintptr_t)name);
	if (!tls.opts->insecure && (is_ip ?
	    api.p_X509_VERIFY_PARAM_set1_ip_asc(api.p_SSL_get0_param(t->ssl),
	    name) : api.p_SSL_set1_host(t->ssl, name)) != 1) {
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
		api.p_SSL_free(t->ssl);
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

	api.p_ERR_clear_error();
	if ((rc = api.p_SSL_connect(t->ssl)) == 1)
		return (1);
	e = api.p_SSL_get_error(t->ssl, rc);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
		*want_write = e == SSL_ERROR_WANT_WRITE;
		return (0);
	}
	if ((v = api.p_SSL_get_verify_result(t->ssl)) != X509_V_OK) {
		(void)snprintf(err, len, "certificate verification failed: %s",
		    api.p_X509_verify_cert_error_string(v));
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

	api.p_ERR_clear_error();
	if ((rc = api.p_SSL_read(t->ssl, buf, (int)(n > INT32_MAX ?
	    INT32_MAX : n))) > 0)
		return (rc);
	e = api.p_SSL_get_error(t->ssl, rc);
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

	api.p_ERR_clear_error();
	if ((rc = api.p_SSL_write(t->ssl, buf, (int)(n > INT32_MAX ?
	    INT32_MAX : n))) > 0)
		return (rc);
	e = api.p_SSL_get_error(t->ssl, rc);
	if (tls_would_block(e, want_write))
		return (-1);
	/*
	 * A server that refuses us after the handshake (TLS 1.3: no client
	 * certificate) has sent an alert saying why: read it, so the
	 * message names the reason rather than a broken pipe.
	 */
	if (api.p_ERR_peek_error() == 0) {
		char byte;

		(void)api.p_SSL_read(t->ssl, &byte, 1);
	}
	tls_ssl_error("TLS write failed", err, len);
	errno = EIO;
	return (-1);
}
