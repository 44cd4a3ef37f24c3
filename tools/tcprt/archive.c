// SPDX-License-Identifier: GPL-2.0
/*
 * The archive (archive.h).  State: the reader's, one thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive.h"
#include "util.h"

#define ARCHIVE_FLUSH	65536	/* bytes gathered before a write */

int archive_open(struct archive *a, const char *path)
{
	memset(a, 0, sizeof(*a));
	a->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
	if (a->fd < 0) {
		warnx_("%s: %s", path, strerror(errno));
		return -1;
	}
	a->path = xstrdup(path);
	return 0;
}

void archive_line(struct archive *a, const char *s, size_t len)
{
	buf_add(&a->b, s, len);
	buf_add(&a->b, "\n", 1);
	a->pending++;
	if (a->b.len >= ARCHIVE_FLUSH)
		archive_flush(a);
}

/* The lines @off bytes into the buffer did not reach the file whole. */
static uint64_t lines_from(const struct archive *a, size_t off)
{
	uint64_t n = 0;
	size_t i;

	for (i = off; i < a->b.len; i++)
		n += a->b.p[i] == '\n';
	return n;
}

void archive_flush(struct archive *a)
{
	size_t off = 0;
	ssize_t n = 0;

	if (!a->b.len)
		return;
	while (off < a->b.len) {
		n = write(a->fd, a->b.p + off, a->b.len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	if (off < a->b.len) {
		uint64_t lost = lines_from(a, off);

		if (!a->failing)
			warnx_("%s: %s: archive lines not written (counted, as archive_failed)",
			       a->path, n < 0 ? strerror(errno) : "short write");
		a->failing = true;
		a->failed += lost;
		a->written += a->pending - lost;
	} else {
		if (a->failing)
			warnx_("%s: written again", a->path);
		a->failing = false;
		a->written += a->pending;
	}
	a->b.len = 0;
	a->pending = 0;
}

bool archive_close(struct archive *a)
{
	bool all;

	archive_flush(a);
	all = !a->failed;
	if (!all)
		warnx_("%s: %llu line(s) not archived (write errors), %llu archived",
		       a->path, (unsigned long long)a->failed,
		       (unsigned long long)a->written);
	close(a->fd);
	buf_free(&a->b);
	free(a->path);
	memset(a, 0, sizeof(*a));
	a->fd = -1;
	return all;
}
