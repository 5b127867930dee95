/* See LICENSE file for copyright and license details. */
/*
 * digest.c computes SHA-256 with OpenSSL's libcrypto (the EVP interface),
 * never with a hash of our own: bundles name their blobs by it, and a
 * journal and every apply compare files by it, and an agent's log is
 * sealed with it.  Digests are written as 64 lowercase hex digits.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "base/base.h"

static void to_hex(const unsigned char *md, unsigned len,
    char hex[CORRAL_SHA256_HEX]);

void
corral_sha256_tohex(const unsigned char md[32], char hex[CORRAL_SHA256_HEX])
{
	to_hex(md, 32, hex);
}

static void
to_hex(const unsigned char *md, unsigned len, char hex[CORRAL_SHA256_HEX])
{
	static const char digits[] = "0123456789abcdef";
	unsigned i;

	for (i = 0; i < len && i < 32; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[2 * i] = '\0';
}

static EVP_MD_CTX *
start(struct corral_err *err)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();

	if (!ctx) {
		corral_err_set(err, ENOMEM, "sha256");
		return NULL;
	}
	if (EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(ctx);
		corral_err_set(err, 0, "sha256: libcrypto cannot start a digest");
		return NULL;
	}
	return ctx;
}

static int
finish(EVP_MD_CTX *ctx, char hex[CORRAL_SHA256_HEX], struct corral_err *err)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned len = 0;
	int ok = EVP_DigestFinal_ex(ctx, md, &len) == 1 && len == 32;

	EVP_MD_CTX_free(ctx);
	if (!ok)
		return corral_err_set(err, 0, "sha256: libcrypto failed");
	to_hex(md, len, hex);
	return 0;
}

int
corral_sha256_buf(const void *p, size_t n, char hex[CORRAL_SHA256_HEX],
    struct corral_err *err)
{
	EVP_MD_CTX *ctx;

	if (!(ctx = start(err)))
		return -1;
	if (EVP_DigestUpdate(ctx, p, n) != 1) {
		EVP_MD_CTX_free(ctx);
		return corral_err_set(err, 0, "sha256: libcrypto failed");
	}
	return finish(ctx, hex, err);
}

/* A chunk into the digest; a libcrypto failure leaves errno 0. */
static int
update(void *ctx, const char *p, size_t n)
{
	if (EVP_DigestUpdate(ctx, p, n) == 1)
		return 0;
	errno = 0;
	return -1;
}

int
corral_sha256_fd(int fd, const char *name, char hex[CORRAL_SHA256_HEX],
    struct corral_err *err)
{
	EVP_MD_CTX *ctx;

	if (!(ctx = start(err)))
		return -1;
	if (corral_fd_chunks(fd, update, ctx) < 0) {
		if (errno)
			corral_err_set(err, errno, "cannot read '%s'", name);
		else
			corral_err_set(err, 0, "sha256: libcrypto failed");
		EVP_MD_CTX_free(ctx);
		return -1;
	}
	return finish(ctx, hex, err);
}

int
corral_sha256_init(struct corral_sha256 *s, struct corral_err *err)
{
	return (s->ctx = start(err)) ? 0 : -1;
}

int
corral_sha256_add(struct corral_sha256 *s, const void *p, size_t n,
    struct corral_err *err)
{
	if (EVP_DigestUpdate(s->ctx, p, n) != 1)
		return corral_err_set(err, 0, "sha256: libcrypto failed");
	return 0;
}

/* Finish a copy, so that s can go on growing. */
int
corral_sha256_peek(const struct corral_sha256 *s,
    char hex[CORRAL_SHA256_HEX], struct corral_err *err)
{
	EVP_MD_CTX *copy = EVP_MD_CTX_new();

	if (!copy)
		return corral_err_set(err, ENOMEM, "sha256");
	if (EVP_MD_CTX_copy_ex(copy, s->ctx) != 1) {
		EVP_MD_CTX_free(copy);
		return corral_err_set(err, 0, "sha256: libcrypto failed");
	}
	return finish(copy, hex, err);
}

void
corral_sha256_release(struct corral_sha256 *s)
{
	EVP_MD_CTX_free(s->ctx);
	s->ctx = NULL;
}

int
corral_sha256_valid(const char *s)
{
	size_t i;

	for (i = 0; i < 64; i++)
		if (!strchr("0123456789abcdef", s[i]) || s[i] == '\0')
			return 0;
	return s[64] == '\0';
}
