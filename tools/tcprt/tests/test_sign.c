// SPDX-License-Identifier: GPL-2.0
/*
 * sign.c: a message signed with its host's key is authentic, and is not
 * with any change of a byte, another host's key or a key from another
 * master; the prefix's form; key files (mode, form); the claimed host.
 * tests/cli.sh holds the derivation and the MAC to Python's hmac.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sign.h"
#include "tap.h"
#include "util.h"

static char dir[] = "/tmp/tcprt-sign.XXXXXX";

static const char *file(const char *name, const char *text, mode_t mode)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
	return path;
}

int main(void)
{
	static const char msg[] = "D1 web-1 77 0 3 1 V6 R 1795218000 000001 10.0.0.2:1 10.0.0.1:7100 5000 1000 300 0 1 500 100 300 0 1448|";
	unsigned char master[SIGN_KEY_LEN], other[SIGN_KEY_LEN], ka[SIGN_KEY_LEN], kb[SIGN_KEY_LEN];
	char signed_[sizeof(msg) + SIGN_PREFIX_LEN], err[512], host[HOST_ID_MAX + 1], line[160];
	const char *mac, *body;
	struct sign_key k;
	size_t blen, i, n = strlen(msg), bad = 0;

	if (!mkdtemp(dir))
		return 1;
	memset(master, 0x11, sizeof(master));
	memset(other, 0x22, sizeof(other));
	sign_derive(master, "web-1", ka);
	sign_derive(master, "web-2", kb);
	ok(memcmp(ka, kb, SIGN_KEY_LEN) != 0, "two hosts, two keys");

	sign_prefix(signed_, ka, msg, n);
	memcpy(signed_ + SIGN_PREFIX_LEN, msg, n);
	ok(!memcmp(signed_, "S1 ", 3) && signed_[SIGN_PREFIX_LEN - 1] == ' ' &&
	   strspn(signed_ + 3, "0123456789abcdef") == SIGN_MAC_HEX,
	   "the prefix: S1, 32 lower-case hex digits, a space");
	ok(sign_split(signed_, SIGN_PREFIX_LEN + n, &mac, &body, &blen) &&
	   blen == n && !memcmp(body, msg, n) && sign_check(ka, mac, body, blen),
	   "signed with its host's key: authentic");
	ok(!sign_check(kb, mac, body, blen), "checked with another host's key: not");
	sign_derive(other, "web-1", kb);
	ok(!sign_check(kb, mac, body, blen), "checked with web-1's key of another master: not");
	for (i = 0; i < n; i++) {
		signed_[SIGN_PREFIX_LEN + i] ^= 1;
		bad += sign_check(ka, mac, body, blen);
		signed_[SIGN_PREFIX_LEN + i] ^= 1;
	}
	for (i = 0; i < SIGN_MAC_HEX; i++) {
		char c = signed_[3 + i];

		signed_[3 + i] = c == '0' ? '1' : '0';
		bad += sign_check(ka, mac, body, blen);
		signed_[3 + i] = c;
	}
	ok(!bad, "any byte of the message or of the MAC changed: not authentic");
	ok(!sign_split(msg, n, &mac, &body, &blen) &&
	   !sign_split("S1 abc D1 x", 11, &mac, &body, &blen), "unsigned, or a short prefix: not signed");
	ok(sign_claimed_host(msg, n, host) && !strcmp(host, "web-1") &&
	   sign_claimed_host("C1 h.2 5 1 0 0 0 0 0 0 0 0 0 0 0 0", 34, host) && !strcmp(host, "h.2") &&
	   !sign_claimed_host("X1 web-1 1", 10, host) && !sign_claimed_host("D1 a/b 1", 8, host),
	   "the claimed host: D1's and C1's second token, a valid id, nothing else");
	/* an L1 or a D2 claims its host too: unsigned, it is refused as such */
	ok(sign_claimed_host("L1 db-3 5 1 7 0 0 1 1 0 0 0 0 0", 31, host) && !strcmp(host, "db-3") &&
	   sign_claimed_host("D2 web-2 5 0 0 7 1 x|", 21, host) && !strcmp(host, "web-2"),
	   "L1's and D2's: their second token");

	/* files */
	ok(sign_read_master(file("m", "1111111111111111111111111111111111111111111111111111111111111111\n", 0600),
			    kb, err, sizeof(err)) && !memcmp(kb, master, SIGN_KEY_LEN),
	   "the master: 64 hex digits and a newline");
	ok(!sign_read_master(file("m2", "1111111111111111111111111111111111111111111111111111111111111111\n", 0640),
			     kb, err, sizeof(err)) && strstr(err, "(mode 0640): chmod 600 it"),
	   "a master the group may read: refused (%s)", err);
	ok(!sign_read_master(file("m3", "xyz\n", 0600), kb, err, sizeof(err)) &&
	   strstr(err, "not 64 hex digits"), "not hex: refused (%s)", err);
	memcpy(k.key, ka, SIGN_KEY_LEN);
	strcpy(k.host, "web-1");
	sign_key_line(line, sizeof(line), &k);
	memset(&k, 0, sizeof(k));
	ok(sign_read_key(file("k", line, 0600), &k, err, sizeof(err)) &&
	   !strcmp(k.host, "web-1") && !memcmp(k.key, ka, SIGN_KEY_LEN),
	   "a key file written and read back: its host and key");
	ok(!sign_read_key(file("k2", "web 1 00\n", 0600), &k, err, sizeof(err)) &&
	   strstr(err, "not \"HOST KEY\""), "a key file of another form: refused (%s)", err);
	for (i = 0; i < 6; i++) {
		const char *names[] = { "m", "m2", "m3", "k", "k2", "" };
		char p[300];

		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		if (names[i][0])
			unlink(p);
	}
	rmdir(dir);
	return done_testing();
}
