/* SPDX-License-Identifier: MIT */
/*
 * OpenSSL for a build with the shared C library: libssl is opened with
 * dlopen() the first time a URL needs TLS, not linked, since loading
 * libssl and libcrypto costs about a millisecond per process start, which
 * a plain redis:// lock in front of every cron job must not pay.
 */

#include <dlfcn.h>
#include <stdio.h>

#include "redlock.h"
#include "tls-impl.h"

/* The libssl names tried, newest first. */
static const char *tls_libs[] = { "libssl.so.3", "libssl.so.1.1",
    "libssl.so", NULL };

/* Resolve every function we use, or say which one is missing. */
int
tls_api_load(struct tls_api *api, char *err, size_t len)
{
	void	*lib = NULL;
	int	 i;

	for (i = 0; tls_libs[i] != NULL && lib == NULL; i++)
		lib = dlopen(tls_libs[i], RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		(void)snprintf(err, len, "TLS needs libssl (OpenSSL), which "
		    "cannot be loaded: %s", dlerror());
		return (-1);
	}
	/* Kept open for the life of the process: its sessions use it. */
#define TLS_API_DLSYM(name)						\
	*(void **)&api->p_##name = dlsym(lib, #name);			\
	if (api->p_##name == NULL) {					\
		(void)snprintf(err, len, "libssl lacks %s", #name);	\
		return (-1);						\
	}
	TLS_API(TLS_API_DLSYM)
#undef TLS_API_DLSYM
	return (0);
}

/* The shared libssl reads openssl.cnf: the site's policy is the floor. */
int
tls_ctx_floor(SSL_CTX *ctx, char *err, size_t len)
{
	(void)ctx;
	(void)err;
	(void)len;
	return (0);
}

/*
 * Which libssl a TLS connection would load ("libssl.so.3 loadable"),
 * found by loading it and letting it go again.
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
