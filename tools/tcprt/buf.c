// SPDX-License-Identifier: GPL-2.0
/* A growing byte buffer: see buf.h. */
#include "buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static void buf_room(struct buf *b, size_t more)
{
	size_t need = b->len + more + 1;

	if (need <= b->cap)
		return;
	b->cap = b->cap ? b->cap : 4096;
	while (b->cap < need)
		b->cap *= 2;
	b->p = xrealloc(b->p, b->cap, 1);
}

void buf_add(struct buf *b, const void *p, size_t len)
{
	buf_room(b, len);
	memcpy(b->p + b->len, p, len);
	b->len += len;
	b->p[b->len] = '\0';
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	buf_room(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void buf_tsv(struct buf *b, const char *s, size_t len)
{
	size_t i;

	buf_room(b, 2 * len);
	for (i = 0; i < len; i++) {
		char c = s[i];

		if (c == '\\' || c == '\t' || c == '\n') {
			b->p[b->len++] = '\\';
			c = c == '\t' ? 't' : c == '\n' ? 'n' : '\\';
		}
		b->p[b->len++] = c;
	}
	b->p[b->len] = '\0';
}

void buf_json_str(struct buf *b, const char *s)
{
	buf_add(b, "\"", 1);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			buf_printf(b, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			buf_printf(b, "\\u%04x", c);
		else
			buf_add(b, s, 1);
	}
	buf_add(b, "\"", 1);
}

void buf_free(struct buf *b)
{
	free(b->p);
	*b = (struct buf){ 0 };
}
