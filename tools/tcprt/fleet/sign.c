// SPDX-License-Identifier: GPL-2.0
/* Message signatures and frame keys: see sign.h. */
#include "sign.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static const char derive_label[] = "tcprt frame key v1";

static void hmac(const unsigned char key[SIGN_KEY_LEN], const void *msg,
		 size_t len, unsigned char out[EVP_MAX_MD_SIZE])
{
	unsigned int n = 0;

	if (!HMAC(EVP_sha256(), key, SIGN_KEY_LEN, msg, len, out, &n) || n != 32)
		die(EXIT_RUNTIME, "libcrypto's HMAC-SHA256 failed");
}

bool sign_read_master(const char *path, unsigned char master[SIGN_KEY_LEN],
		      char *err, size_t len)
{
	char *s = read_secret(path, "frame master key", err, len);
	bool ok;

	if (!s)
		return false;
	ok = strlen(s) == 2 * SIGN_KEY_LEN && unhex(s, master, SIGN_KEY_LEN);
	explicit_bzero(s, strlen(s));
	free(s);
	if (!ok)
		snprintf(err, len, "frame master key %s: not %d hex digits",
			 path, 2 * SIGN_KEY_LEN);
	return ok;
}

bool sign_read_key(const char *path, struct sign_key *k, char *err, size_t len)
{
	char *s = read_secret(path, "frame key", err, len);
	const char *sp;
	bool ok;

	if (!s)
		return false;
	sp = strchr(s, ' ');
	ok = sp && (size_t)(sp - s) <= HOST_ID_MAX && strlen(sp + 1) == 2 * SIGN_KEY_LEN &&
	     unhex(sp + 1, k->key, SIGN_KEY_LEN);
	if (ok) {
		memcpy(k->host, s, (size_t)(sp - s));
		k->host[sp - s] = '\0';
		ok = frame_host_ok(k->host);
	}
	explicit_bzero(s, strlen(s));
	free(s);
	if (!ok)
		snprintf(err, len, "frame key %s: not \"HOST KEY\" (a host id, then %d hex digits)",
			 path, 2 * SIGN_KEY_LEN);
	return ok;
}

void sign_derive(const unsigned char master[SIGN_KEY_LEN], const char *host,
		 unsigned char key[SIGN_KEY_LEN])
{
	unsigned char msg[sizeof(derive_label) + HOST_ID_MAX];
	unsigned char out[EVP_MAX_MD_SIZE];
	size_t n = strlen(host);

	if (n > HOST_ID_MAX)
		n = HOST_ID_MAX;
	/* the label and its NUL, then the host id */
	memcpy(msg, derive_label, sizeof(derive_label));
	memcpy(msg + sizeof(derive_label), host, n);
	hmac(master, msg, sizeof(derive_label) + n, out);
	memcpy(key, out, SIGN_KEY_LEN);
	explicit_bzero(out, sizeof(out));
}

size_t sign_key_line(char *out, size_t size, const struct sign_key *k)
{
	char hex[2 * SIGN_KEY_LEN + 1];
	int n;

	tohex(hex, k->key, SIGN_KEY_LEN);
	hex[2 * SIGN_KEY_LEN] = '\0';
	n = snprintf(out, size, "%s %s\n", k->host, hex);
	explicit_bzero(hex, sizeof(hex));
	return n < 0 ? 0 : (size_t)n;
}

void sign_prefix(char *out, const unsigned char key[SIGN_KEY_LEN],
		 const char *msg, size_t len)
{
	unsigned char mac[EVP_MAX_MD_SIZE];

	hmac(key, msg, len, mac);
	memcpy(out, "S1 ", 3);
	tohex(out + 3, mac, SIGN_MAC_HEX / 2);
	out[SIGN_PREFIX_LEN - 1] = ' ';
}

bool sign_split(const char *msg, size_t len, const char **mac,
		const char **body, size_t *blen)
{
	if (len < SIGN_PREFIX_LEN || memcmp(msg, "S1 ", 3) ||
	    msg[SIGN_PREFIX_LEN - 1] != ' ')
		return false;
	*mac = msg + 3;
	*body = msg + SIGN_PREFIX_LEN;
	*blen = len - SIGN_PREFIX_LEN;
	return true;
}

bool sign_check(const unsigned char key[SIGN_KEY_LEN], const char *mac,
		const char *body, size_t blen)
{
	unsigned char want[EVP_MAX_MD_SIZE];
	char hex[SIGN_MAC_HEX];

	hmac(key, body, blen, want);
	tohex(hex, want, SIGN_MAC_HEX / 2);
	return CRYPTO_memcmp(hex, mac, SIGN_MAC_HEX) == 0;
}

bool sign_claimed_host(const char *body, size_t blen,
		       char host[HOST_ID_MAX + 1])
{
	const char *p, *end = body + blen, *sp;

	if (blen < 4 || !frame_kind(body, blen))
		return false;
	p = body + 3;
	sp = memchr(p, ' ', (size_t)(end - p));
	if (!sp || sp == p || sp - p > HOST_ID_MAX)
		return false;
	memcpy(host, p, (size_t)(sp - p));
	host[sp - p] = '\0';
	return frame_host_ok(host);
}
