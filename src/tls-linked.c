/* SPDX-License-Identifier: MIT */
/*
 * OpenSSL for the static build: linked in, as the C library is.  A
 * static executable has no dynamic loader to open libssl with (glibc's
 * dlopen() from one needs the very glibc it was linked with at run time),
 * and linking costs a plain redis:// run nothing: no relocation, and no
 * page of OpenSSL's is touched before a TLS connection.
 *
 * OpenSSL's configuration file (openssl.cnf) is not read: the modules it
 * may name (providers, engines) are shared objects, which would need
 * dlopen() too.  So no site's crypto policy applies, and tls_ctx_floor()
 * sets ours: TLS 1.2 or newer, at security level 2 (112-bit keys, no SHA-1
 * signatures).  The trust store, SSL_CERT_FILE and SSL_CERT_DIR work as
 * in any OpenSSL program.
 */

#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "redlock.h"
#include "tls-impl.h"

int
tls_api_load(struct tls_api *api, char *err, size_t len)
{
	if (OPENSSL_init_ssl(OPENSSL_INIT_NO_LOAD_CONFIG, NULL) != 1) {
		(void)snprintf(err, len, "cannot initialise OpenSSL");
		return (-1);
	}
#define TLS_API_LINK(name)	api->p_##name = name;
	TLS_API(TLS_API_LINK)
#undef TLS_API_LINK
	return (0);
}

int
tls_ctx_floor(SSL_CTX *ctx, char *err, size_t len)
{
	SSL_CTX_set_security_level(ctx, 2);
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) {
		(void)snprintf(err, len, "cannot set TLS 1.2 as the minimum");
		return (-1);
	}
	return (0);
}

/* "OpenSSL 3.0.17 linked": the first two words of its version text. */
void
tls_describe(char *buf, size_t len)
{
	const char	*v = OpenSSL_version(OPENSSL_VERSION);
	const char	*sp = strchr(v, ' ');
	size_t		 n = strlen(v);

	if (sp != NULL && (sp = strchr(sp + 1, ' ')) != NULL)
		n = (size_t)(sp - v);
	(void)snprintf(buf, len, "%.*s linked", (int)n, v);
}
