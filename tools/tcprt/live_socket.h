/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tcprt live's query endpoint: a local stream socket where a program asks
 * a question on one line and gets its answer on one line (docs/live.md).
 * This file is the socket's side only - accepting, cutting lines, queuing
 * answers, guarding against hostile or stuck clients; what a question
 * means is the caller's (an answer function).
 *
 * Guards: at most LSOCK_CLIENTS clients (a further one is told so in one
 * line and closed: `refused`); a question longer than LSOCK_LINE_MAX
 * bytes gets an error answer and the connection is closed (`oversized`);
 * a client whose unread answers pass LSOCK_OUT_MAX bytes - one that asks
 * and never reads - is closed (`slow`).  Nothing here blocks: the windows
 * keep running whoever is connected.
 *
 * Single-threaded, driven by the caller's poll() loop.
 */
#ifndef TCPRT_LIVE_SOCKET_H
#define TCPRT_LIVE_SOCKET_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "buf.h"

#define LSOCK_CLIENTS	64
#define LSOCK_LINE_MAX	512
#define LSOCK_OUT_MAX	(256 * 1024)

struct lsock_client {
	int fd;
	char in[LSOCK_LINE_MAX + 1];
	size_t in_len;
	struct buf out;
	size_t out_off;		/* of out: sent so far */
	bool closing;		/* close once out is sent */
};

/* The answer to one question (@line, NUL-terminated, no '\n'): append it
 * to @out, one line ending in '\n'. */
typedef void (*lsock_answer_fn)(const char *line, struct buf *out, void *ctx);

struct lsock {
	int fd;
	char *path;
	struct lsock_client c[LSOCK_CLIENTS];
	unsigned int nclients;
	lsock_answer_fn answer;
	void *ctx;
	uint64_t accepted, answered, refused, oversized, slow;
};

/*
 * Listen on @path, mode 0660 and group @gid (-1: the caller's), replacing
 * a stale socket left by a tcprt that died (not a live one, nor a file
 * that is not a socket).  0, or -1 with the reason on stderr.
 */
int lsock_open(struct lsock *s, const char *path, gid_t gid,
	       lsock_answer_fn answer, void *ctx);

/* Fill @pfd (room for 1 + LSOCK_CLIENTS) with what to wait for; its count. */
unsigned int lsock_pollfds(const struct lsock *s, struct pollfd *pfd);

/* After poll(): accept, read, answer and write what @pfd says is ready. */
void lsock_service(struct lsock *s, const struct pollfd *pfd, unsigned int n);

/* Close every client and the socket, and remove its file. */
void lsock_close(struct lsock *s);

#endif
