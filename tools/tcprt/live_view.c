// SPDX-License-Identifier: GPL-2.0
/* tcprt live's terminal view: see live_view.h. */
#include "live_view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

const char *const view_sort_name[SORT_N] = {
	[SORT_TASKS] = "tasks", [SORT_P99] = "p99", [SORT_BYTES] = "bytes",
	[SORT_KEY] = "key",
};

#define KEY_W	22		/* PORT ROLE KEY */
#define WIN_W	39		/* one window's columns */

static struct termios saved;

void view_open(struct live_view *v)
{
	struct termios raw;

	v->tty_in = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0;
	if (v->tty_in) {
		raw = saved;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	}
	fputs("\033[?1049h\033[?25l", stdout);
	fflush(stdout);
}

void view_close(struct live_view *v)
{
	fputs("\033[?25h\033[?1049l", stdout);
	fflush(stdout);
	if (v->tty_in)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
}

bool view_key(struct live_view *v, char c)
{
	switch (c) {
	case 'q':
		return false;
	case 's':
		v->sort = (enum view_sort)((v->sort + 1) % SORT_N);
		break;
	case 'm':
		v->measure = (enum wm)((v->measure + 1) % WM_N);
		break;
	}
	return true;
}

/* 950us, 12.3ms, 1.50s: at most 7 characters. */
static void fmt_us(char *out, size_t len, uint64_t us, bool any)
{
	if (!any)
		snprintf(out, len, "-");
	else if (us < 10000)
		snprintf(out, len, "%lluus", (unsigned long long)us);
	else if (us < 10000000)
		snprintf(out, len, "%.1fms", (double)us / 1000);
	else
		snprintf(out, len, "%.2fs", (double)us / 1000000);
}

/* 512, 12.3k, 4.5M, 1.2G (per second): at most 6 characters. */
static void fmt_rate(char *out, size_t len, double r)
{
	if (r < 1000)
		snprintf(out, len, "%.0f", r);
	else if (r < 1e6)
		snprintf(out, len, "%.1fk", r / 1e3);
	else if (r < 1e9)
		snprintf(out, len, "%.1fM", r / 1e6);
	else
		snprintf(out, len, "%.1fG", r / 1e9);
}

struct row {
	const struct wkey *k;
	struct wfig f[WIN_MAX];
};

static enum view_sort sort_by;
static enum wm sort_measure;

static int cmp_rows(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	double dx = 0, dy = 0;

	switch (sort_by) {
	case SORT_TASKS:
		dx = x->f[0].tasks_per_s;
		dy = y->f[0].tasks_per_s;
		break;
	case SORT_P99:
		dx = (double)x->f[0].m[sort_measure].p99;
		dy = (double)y->f[0].m[sort_measure].p99;
		break;
	case SORT_BYTES:
		dx = x->f[0].in_per_s + x->f[0].out_per_s;
		dy = y->f[0].in_per_s + y->f[0].out_per_s;
		break;
	case SORT_KEY:
	case SORT_N:
		break;
	}
	if (dx != dy)
		return dx < dy ? 1 : -1;
	return win_key_cmp(x->k, y->k);
}

/* Append @s to @b cut at @width columns (all of it ASCII), then '\n'. */
static void put_line(struct buf *b, const char *s, unsigned int width)
{
	size_t n = strlen(s);

	buf_add(b, s, n < width ? n : width);
	buf_add(b, "\n", 1);
}

static void header(const struct live_view *v, const struct win_table *t,
		   unsigned int width, struct buf *b)
{
	char line[512], when[32];
	size_t o;
	unsigned int w;

	fmt_time(when, sizeof(when), t->clock_us, false);
	snprintf(line, sizeof(line),
		 "tcprt live  %s  %s  sort %s  keys %zu  tasks %llu  late %llu  bad lines %llu   q quit  s sort  m measure",
		 when, wm_name[v->measure], view_sort_name[v->sort], t->nkeys,
		 (unsigned long long)t->records, (unsigned long long)t->late,
		 (unsigned long long)v->bad_lines);
	put_line(b, line, width);
	o = (size_t)snprintf(line, sizeof(line), "%-*s", KEY_W, "");
	for (w = 0; w < t->nwin && o < sizeof(line); w++) {
		char title[32];

		snprintf(title, sizeof(title), " last %us ", t->len[w]);
		o += (size_t)snprintf(line + o, sizeof(line) - o, " %-*s",
				      WIN_W - 1, title);
	}
	put_line(b, line, width);
	o = (size_t)snprintf(line, sizeof(line), "%-5s %-6s %-9s", "PORT",
			     "ROLE", v->by);
	for (w = 0; w < t->nwin && o < sizeof(line); w++)
		o += (size_t)snprintf(line + o, sizeof(line) - o,
				      " %8s %7s %7s %6s %6s", "tasks/s", "p50",
				      "p99", "in/s", "out/s");
	put_line(b, line, width);
}

static void row_line(const struct row *r, unsigned int nwin, enum wm m,
		     char *line, size_t len)
{
	char port[8], name[10], p50[16], p99[16], in[16], out[16];
	unsigned int w;
	size_t o;

	if (r->k->port)
		snprintf(port, sizeof(port), "%u", r->k->port);
	else
		snprintf(port, sizeof(port), "other");
	snprintf(name, sizeof(name), "%s", *r->k->name ? r->k->name : "-");
	o = (size_t)snprintf(line, len, "%-5s %-6s %-9s", port,
			     role_name(r->k->role), name);
	for (w = 0; w < nwin && o < len; w++) {
		const struct wfig *f = &r->f[w];

		fmt_us(p50, sizeof(p50), f->m[m].p50, f->m[m].n);
		fmt_us(p99, sizeof(p99), f->m[m].p99, f->m[m].n);
		fmt_rate(in, sizeof(in), f->in_per_s);
		fmt_rate(out, sizeof(out), f->out_per_s);
		o += (size_t)snprintf(line + o, len - o, " %8.1f %7s %7s %6s %6s",
				      f->tasks_per_s, p50, p99, in, out);
	}
}

void view_render(const struct live_view *v, const struct win_table *t,
		 unsigned int width, unsigned int height, struct buf *b)
{
	struct row *rows = xcalloc(t->nkeys + 1, sizeof(*rows));
	char line[512];
	size_t i, shown;
	unsigned int w;

	for (i = 0; i < t->nkeys; i++) {
		rows[i].k = &t->key[i];
		for (w = 0; w < t->nwin; w++)
			win_figures(t, &t->key[i], w, &rows[i].f[w]);
	}
	sort_by = v->sort;
	sort_measure = v->measure;
	qsort(rows, t->nkeys, sizeof(*rows), cmp_rows);
	header(v, t, width, b);
	/* a line free at the bottom: the last newline must not scroll */
	shown = height > 5 ? height - 5 : 0;
	for (i = 0; i < t->nkeys && i < shown; i++) {
		row_line(&rows[i], t->nwin, v->measure, line, sizeof(line));
		put_line(b, line, width);
	}
	if (i < t->nkeys) {
		snprintf(line, sizeof(line), "... %zu more keys (a taller terminal shows them)",
			 t->nkeys - i);
		put_line(b, line, width);
	}
	free(rows);
}

void view_draw(struct live_view *v, const struct win_table *t)
{
	struct winsize ws = { .ws_col = 80, .ws_row = 24 };
	struct buf screen = { 0 }, out = { 0 };
	const char *p, *nl;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) < 0 || !ws.ws_col || !ws.ws_row) {
		ws.ws_col = 80;
		ws.ws_row = 24;
	}
	view_render(v, t, ws.ws_col, ws.ws_row, &screen);
	/* home, each line then clear to its end, then clear below: no flicker */
	buf_add(&out, "\033[H", 3);
	for (p = screen.p; p && *p; p = nl + 1) {
		nl = strchr(p, '\n');
		buf_add(&out, p, (size_t)(nl - p));
		buf_add(&out, "\033[K\r\n", 5);
	}
	buf_add(&out, "\033[J", 3);
	fwrite(out.p, 1, out.len, stdout);
	fflush(stdout);
	buf_free(&screen);
	buf_free(&out);
}
