/* SPDX-License-Identifier: MIT */
/*
 * Internals of TLS, shared by its files only:
 *
 *	tls.c		the context, the sessions, their reads and writes,
 *			through the table of OpenSSL's functions below
 *	tls-dlopen.c	fills the table from a libssl opened with dlopen()
 *			at the first TLS connection: the default build,
 *			with the shared C library (STATIC=0)
 *	tls-linked.c	fills it from the OpenSSL linked in: the static-pie
 *			build (STATIC=1), which has no dynamic loader to
 *			open a library with
 *
 * The Makefile links exactly one of the last two.  The types come from
 * OpenSSL's headers, so every pointer has the exact prototype of the
 * function it points to.
 */

#ifndef TLS_IMPL_H
#define TLS_IMPL_H

#include <stddef.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

/* Every function of OpenSSL's that tls.c calls: X(name) for each. */
#define TLS_API(X)							\
	X(TLS_client_method)						\
	X(SSL_CTX_new)							\
	X(SSL_CTX_free)							\
	X(SSL_CTX_set_verify)						\
	X(SSL_CTX_set_default_verify_paths)				\
	X(SSL_CTX_load_verify_locations)				\
	X(SSL_CTX_use_certificate_chain_file)				\
	X(SSL_CTX_use_PrivateKey_file)					\
	X(SSL_CTX_check_private_key)					\
	X(SSL_CTX_ctrl)							\
	X(SSL_new)							\
	X(SSL_free)							\
	X(SSL_set_fd)							\
	X(SSL_ctrl)							\
	X(SSL_set1_host)						\
	X(SSL_get0_param)						\
	X(X509_VERIFY_PARAM_set1_ip_asc)				\
	X(SSL_connect)							\
	X(SSL_read)							\
	X(SSL_write)							\
	X(SSL_get_error)						\
	X(SSL_get_verify_result)					\
	X(X509_verify_cert_error_string)				\
	X(ERR_get_error)						\
	X(ERR_peek_error)						\
	X(ERR_error_string_n)						\
	X(ERR_clear_error)

#define TLS_API_FIELD(name)	__typeof__(&name) p_##name;
struct tls_api {
	TLS_API(TLS_API_FIELD)
};
#undef TLS_API_FIELD

/* Fill api, once per process: 0, or -1 with err set.  Each file also
 * has tls_describe() (redlock.h): for --version, the OpenSSL a TLS
 * connection would use. */
int	tls_api_load(struct tls_api *, char *, size_t);
/* The context's protocol floor: none of ours where OpenSSL reads the
 * system's openssl.cnf (its crypto policy applies), TLS 1.2 at security
 * level 2 where it reads none.  0, or -1 with err set. */
int	tls_ctx_floor(SSL_CTX *, char *, size_t);

#endif /* TLS_IMPL_H */
