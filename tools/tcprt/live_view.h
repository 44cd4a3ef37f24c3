/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tcprt live's terminal view: a screen redrawn in place with plain ANSI
 * escapes (no curses: any terminal over ssh), a row per key, the window
 * lengths side by side - per window the tasks per second, p50 and p99 of
 * one measure, and the bytes per second both ways.  Keys: q quits, s
 * changes the order, m the measure.  It reads the windows; it never
 * changes them.
 */
#ifndef TCPRT_LIVE_VIEW_H
#define TCPRT_LIVE_VIEW_H

#include <stdbool.h>

#include "window.h"

enum view_sort { SORT_TASKS, SORT_P99, SORT_BYTES, SORT_KEY, SORT_N };

struct live_view {
	enum view_sort sort;
	enum wm measure;
	bool tty_in;		/* stdin is a terminal put in raw mode */
	const char *by;		/* the key column's title */
	/* what the header says besides the windows' own */
	uint64_t bad_lines;
};

extern const char *const view_sort_name[SORT_N];

/* Take the screen (alternate screen, cursor hidden, keys unbuffered). */
void view_open(struct live_view *v);
/* Give it back as it was. */
void view_close(struct live_view *v);
/* Redraw from @t. */
void view_draw(struct live_view *v, const struct win_table *t);
/* A key pressed: false when it asks to quit. */
bool view_key(struct live_view *v, char c);
/* Render the screen of @width x @height into @b (no escapes): tests. */
void view_render(const struct live_view *v, const struct win_table *t,
		 unsigned int width, unsigned int height, struct buf *b);

#endif
