/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The archive: every valid log line read, appended to a file (--archive,
 * [agent] archive).  Lines gather in a buffer written with write(2) at
 * every read pass (and at 64 KiB), so that a write that fails is known
 * and its lines counted - failed, not lost silently: a full disk, a
 * read-only file system.
 */
#ifndef TCPRT_ARCHIVE_H
#define TCPRT_ARCHIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

struct archive {
	int fd;
	char *path;
	struct buf b;		/* lines not written yet */
	uint64_t pending;	/* how many */
	uint64_t written, failed;	/* lines, since open */
	bool failing;		/* the last write failed (said once) */
};

/* Open @path to append (created if need be): 0, or -1 after saying why. */
int archive_open(struct archive *a, const char *path);

/* One line (without its newline). */
void archive_line(struct archive *a, const char *s, size_t len);

/* Write what gathered; a failure counts its lines in failed. */
void archive_flush(struct archive *a);

/* Flush, say what failed since open, close: whether every line was
 * written. */
bool archive_close(struct archive *a);

#endif
