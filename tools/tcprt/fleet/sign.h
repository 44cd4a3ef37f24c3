/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who a host is, in the store (docs/fleet.md, "Who a host is"): every
 * message tcprt ship sends is signed with its host's frame key, and tcprt
 * ingest stores a message under a host id only when it is signed with
 * that host's key.
 *
 *   S1 <mac> <message>
 *	<message> is a message of frame.h (D1, D2, C1, L1) as it would be sent
 *	unsigned; <mac> the first 16 bytes of HMAC-SHA256(key, <message>)
 *	in lower-case hex.
 *
 * A host's key is derived from one master secret that only the central
 * (and the machine that enrolls hosts) holds:
 *
 *   key(host) = HMAC-SHA256(master, "tcprt frame key v1" NUL host)
 *
 * so the central keeps no state per host and checks a message of any of
 * thousands of hosts with two HMACs and no lookup; a host holds only its
 * own key, so it can sign for no other id.  TLS on the RELP hop
 * authenticates the machine that connects; rsyslog hands on nothing of
 * its certificate (shared/spec/fleet-notes.md), so this is what ties a
 * stored message to a sender.  Files: the master "HEX\n", a host's key
 * "HOST HEX\n" (64 hex digits each), both readable by their owner alone.
 */
#ifndef TCPRT_SIGN_H
#define TCPRT_SIGN_H

#include <stdbool.h>
#include <stddef.h>

#include "frame.h"

#define SIGN_KEY_LEN	32
#define SIGN_MAC_HEX	32			/* 16 bytes, in hex */
#define SIGN_PREFIX_LEN	(3 + SIGN_MAC_HEX + 1)	/* "S1 " mac " " */

struct sign_key {
	char host[HOST_ID_MAX + 1];
	unsigned char key[SIGN_KEY_LEN];
};

/* The master secret in @path (0600): false with @err when it is not one. */
bool sign_read_master(const char *path, unsigned char master[SIGN_KEY_LEN],
		      char *err, size_t len);
/* A host's key file in @path (0600): its host id and key. */
bool sign_read_key(const char *path, struct sign_key *k, char *err, size_t len);
/* The key of @host under @master. */
void sign_derive(const unsigned char master[SIGN_KEY_LEN], const char *host,
		 unsigned char key[SIGN_KEY_LEN]);
/* A host's key file's line, "HOST HEX\n", into @out (at least 140 bytes). */
size_t sign_key_line(char *out, size_t size, const struct sign_key *k);

/* Write "S1 <mac> " (SIGN_PREFIX_LEN bytes, no NUL) for @msg to @out. */
void sign_prefix(char *out, const unsigned char key[SIGN_KEY_LEN],
		 const char *msg, size_t len);
/* A signed message: true, its MAC in *@mac and the message it signs in
 * *@body (*@blen bytes); false when it does not begin "S1 <mac> ". */
bool sign_split(const char *msg, size_t len, const char **mac,
		const char **body, size_t *blen);
/* Whether @mac (SIGN_MAC_HEX bytes) is @key's over @body; in constant time. */
bool sign_check(const unsigned char key[SIGN_KEY_LEN], const char *mac,
		const char *body, size_t blen);
/* The host id a message of frame.h claims (its second token); false if none. */
bool sign_claimed_host(const char *body, size_t blen,
		       char host[HOST_ID_MAX + 1]);

#endif
