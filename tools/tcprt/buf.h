/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A growing byte buffer, always NUL-terminated: the SQL and rows tcprt
 * sends the store, and its answers.
 */
#ifndef TCPRT_BUF_H
#define TCPRT_BUF_H

#include <stddef.h>

struct buf {
	char *p;
	size_t len, cap;
};

void buf_add(struct buf *b, const void *p, size_t len);
void buf_printf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* @s as a TabSeparated field: \ tab newline escaped. */
void buf_tsv(struct buf *b, const char *s, size_t len);
/* @s as a JSON string: quoted, quotes, backslashes and control bytes escaped. */
void buf_json_str(struct buf *b, const char *s);
void buf_free(struct buf *b);

#endif
