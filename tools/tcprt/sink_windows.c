// SPDX-License-Identifier: GPL-2.0
/*
 * The windows sink (sink_windows.h): each task record added to the
 * windows of its key as it is read; the windows' clock moved to the wall
 * clock every tick (or by the records themselves); questions on the
 * socket answered, and the view redrawn, between reads.  One thread: the
 * reader's.  The windows go on whether or not anybody looks or asks.
 */
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "container.h"
#include "live_socket.h"
#include "live_view.h"
#include "sink_windows.h"
#include "util.h"
#include "window.h"

#define DRAW_EVERY_US		1000000ULL
/* a record may start this far after the wall clock (clocks of CPUs) */
#define MAX_AHEAD_US		1000000ULL

/* the view's terminal, the socket and its clients */
_Static_assert(SINK_POLL_MAX >= 1 + 1 + LSOCK_CLIENTS, "SINK_POLL_MAX");

static const char *const by_names[BY_N] = { "port", "container", "netns", "peer" };
static const char *const by_title[BY_N] = { "-", "CONTAINER", "NETNS", "PEER" };

struct windows {
	struct win_table t;
	enum win_by by;
	int port;			/* -1: all */
	struct ct_filter ctf;
	bool wall;			/* the clock: the wall's, else the records' */
	uint64_t bad_lines;		/* the reader's, as last told */
	struct lsock sock;
	bool serving;
	struct live_view v;
	bool view, view_open, print_at_end;
	uint64_t next_draw;
	uint64_t handed;
};

/* ---- records in ------------------------------------------------------------ */

static const char *key_of(const struct windows *l, const struct record *r,
			  char *buf, size_t len)
{
	switch (l->by) {
	case BY_CONTAINER:
		return ct_of_record(r)->key;
	case BY_NETNS:
		if (!rec_has_ext(r, EXT_NETNS))
			return "-";
		snprintf(buf, len, "%llu", (unsigned long long)r->ext[EXT_NETNS]);
		return buf;
	case BY_PEER:
		return r->peer_addr;
	case BY_PORT:
	case BY_N:
		break;
	}
	return "";
}

static void windows_record(void *priv, const struct record *r)
{
	struct windows *l = priv;
	char buf[32];

	l->handed++;
	if (!rec_is_task(r->type))
		return;
	if (l->port >= 0 && r->port != l->port)
		return;
	if (!ct_match(&l->ctf, r))
		return;
	/* the wall clock as the record comes, not as the last loop saw it */
	if (l->wall && rec_time_us(r) > l->t.clock_us)
		win_advance(&l->t, now_us());
	win_add(&l->t, r, key_of(l, r, buf, sizeof(buf)));
}

/* ---- answers --------------------------------------------------------------- */

static void clock_json(const struct win_table *t, struct buf *b)
{
	buf_printf(b, "\"clock\":%llu.%06llu",
		   (unsigned long long)(t->clock_us / USEC_PER_SEC),
		   (unsigned long long)(t->clock_us % USEC_PER_SEC));
}

/* The key's members and its windows (all, or window @only); @k NULL: a
 * key not seen, whose figures are those of no task. */
static void key_json(const struct win_table *t, const struct wkey *k,
		     uint16_t port, enum role role, const char *name, int only,
		     struct buf *b)
{
	struct wkey none = { .port = port, .role = role, .name = (char *)name };
	struct wfig f;
	unsigned int w;
	bool first = true;

	win_json_key(b, k ? k : &none);
	buf_printf(b, ",\"windows\":[");
	for (w = 0; w < t->nwin; w++) {
		if (only >= 0 && (unsigned int)only != w)
			continue;
		win_figures(t, k, w, &f);
		if (!first)
			buf_add(b, ",", 1);
		win_json(b, &f);
		first = false;
	}
	buf_add(b, "]", 1);
}

static void answer_error(struct buf *b, const char *what)
{
	buf_printf(b, "{\"ok\":false,\"error\":\"%s\"}\n", what);
}

static void answer_keys(const struct windows *l, struct buf *b)
{
	size_t i;

	buf_printf(b, "{\"ok\":true,");
	clock_json(&l->t, b);
	buf_printf(b, ",\"keys\":[");
	for (i = 0; i < l->t.nkeys; i++) {
		buf_add(b, i ? ",{" : "{", i ? 2 : 1);
		win_json_key(b, &l->t.key[i]);
		buf_add(b, "}", 1);
	}
	buf_printf(b, "]}\n");
}

static void answer_status(const struct windows *l, struct buf *b)
{
	unsigned int w;

	buf_printf(b, "{\"ok\":true,");
	clock_json(&l->t, b);
	buf_printf(b, ",\"by\":\"%s\",\"windows\":[", by_names[l->by]);
	for (w = 0; w < l->t.nwin; w++)
		buf_printf(b, "%s%u", w ? "," : "", l->t.len[w]);
	buf_printf(b, "],\"keys\":%zu,\"tasks\":%llu,\"late\":%llu,\"future\":%llu,\"overflow\":%llu,"
		   "\"expired\":%llu,\"bad_lines\":%llu,\"clients\":%u,\"answered\":%llu,"
		   "\"refused\":%llu,\"oversized\":%llu,\"slow\":%llu}\n",
		   l->t.nkeys, (unsigned long long)l->t.records,
		   (unsigned long long)l->t.late,
		   (unsigned long long)l->t.future,
		   (unsigned long long)l->t.overflow,
		   (unsigned long long)l->t.expired,
		   (unsigned long long)l->bad_lines, l->sock.nclients,
		   (unsigned long long)l->sock.answered,
		   (unsigned long long)l->sock.refused,
		   (unsigned long long)l->sock.oversized,
		   (unsigned long long)l->sock.slow);
}

/* A window length as --windows takes it: 10, 10s, 2m, 1h; 0 if bad. */
static unsigned int parse_len(const char *s)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return 0;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || v > WIN_MAX_SEC)
		return 0;
	if (!strcmp(end, "m"))
		v *= 60;
	else if (!strcmp(end, "h"))
		v *= 3600;
	else if (*end && strcmp(end, "s"))
		return 0;
	return v <= WIN_MAX_SEC ? (unsigned int)v : 0;
}

/* port=P [role=R] [key=K] [window=W] */
static void answer_query(const struct windows *l, char *q, struct buf *b)
{
	const char *key = "";
	bool have_port = false, have_key = false;
	enum role role = ROLE_SERVER;
	const struct wkey *k;
	uint16_t port = 0;
	int only = -1;
	unsigned int w, len;
	char *tok, *save = NULL;

	for (tok = strtok_r(q, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (!strncmp(tok, "port=", 5)) {
			if (!parse_port(tok + 5, &port))
				return answer_error(b, "port: a number 1..65535");
			have_port = true;
		} else if (!strcmp(tok, "role=server")) {
			role = ROLE_SERVER;
		} else if (!strcmp(tok, "role=client")) {
			role = ROLE_CLIENT;
		} else if (!strncmp(tok, "key=", 4)) {
			key = tok + 4;
			have_key = true;
		} else if (!strncmp(tok, "window=", 7)) {
			len = parse_len(tok + 7);
			for (w = 0; w < l->t.nwin && l->t.len[w] != len; w++)
				;
			if (w == l->t.nwin)
				return answer_error(b, "window: not one of the lengths kept (status lists them)");
			only = (int)w;
		} else {
			return answer_error(b, "not a question: port=P [role=server|client] [key=K] [window=W], keys, or status");
		}
	}
	if (!have_port)
		return answer_error(b, "port=P missing");
	if (l->by != BY_PORT && !have_key)
		return answer_error(b, "key=K missing: the keys are not ports alone (keys lists them)");
	k = win_find(&l->t, port, role, key);
	buf_printf(b, "{\"ok\":true,");
	clock_json(&l->t, b);
	/* never seen: the figures of an empty key, so that "no traffic"
	 * reads as such, and "seen" says it */
	buf_printf(b, ",\"seen\":%s,", k ? "true" : "false");
	key_json(&l->t, k, port, role, key, only, b);
	buf_printf(b, "}\n");
}

static void answer(const char *line, struct buf *b, void *ctx)
{
	struct windows *l = ctx;
	char q[LSOCK_LINE_MAX + 1];

	snprintf(q, sizeof(q), "%s", line);
	if (!strcmp(q, "keys"))
		answer_keys(l, b);
	else if (!strcmp(q, "status"))
		answer_status(l, b);
	else
		answer_query(l, q, b);
}

/* ---- --once ---------------------------------------------------------------- */

static int cmp_keys(const void *a, const void *b)
{
	return win_key_cmp(*(const struct wkey *const *)a,
			   *(const struct wkey *const *)b);
}

/* Every key's windows, a JSON line each, by port, role and key. */
static void print_all(const struct windows *l)
{
	const struct wkey **k = xcalloc(l->t.nkeys + 1, sizeof(*k));
	struct buf b = { 0 };
	size_t i;

	for (i = 0; i < l->t.nkeys; i++)
		k[i] = &l->t.key[i];
	qsort(k, l->t.nkeys, sizeof(*k), cmp_keys);
	for (i = 0; i < l->t.nkeys; i++) {
		b.len = 0;
		buf_add(&b, "{", 1);
		clock_json(&l->t, &b);
		buf_add(&b, ",", 1);
		key_json(&l->t, k[i], 0, ROLE_SERVER, "", -1, &b);
		buf_add(&b, "}\n", 2);
		fwrite(b.p, 1, b.len, stdout);
	}
	buf_free(&b);
	free(k);
}


/* ---- the sink -------------------------------------------------------------- */

/* The wall clock's second moves the windows; the view is redrawn. */
static void windows_tick(void *priv, uint64_t now, const struct sink_input *in)
{
	struct windows *l = priv;

	l->bad_lines = in->bad;
	if (l->wall)
		win_advance(&l->t, now_us());
	if (!l->view)
		return;
	if (!l->view_open) {
		view_open(&l->v);
		l->view_open = true;
	}
	if (now >= l->next_draw) {
		l->v.bad_lines = in->bad;
		view_draw(&l->v, &l->t);
		l->next_draw = now + DRAW_EVERY_US;
	}
}

static uint64_t windows_next_tick(const void *priv)
{
	const struct windows *l = priv;

	return l->view ? l->next_draw : 0;
}

/* The view's keys (a terminal), the socket and its clients. */
static unsigned int windows_pollfds(void *priv, struct pollfd *pfd)
{
	struct windows *l = priv;
	unsigned int n = 0;

	if (l->view_open && l->v.tty_in)
		pfd[n++] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
	if (l->serving)
		n += lsock_pollfds(&l->sock, pfd + n);
	return n;
}

/* What the view's keys say; false: quit. */
static bool read_keys(struct live_view *v)
{
	char c[16];
	ssize_t n, i;

	n = read(STDIN_FILENO, c, sizeof(c));
	for (i = 0; i < n; i++)
		if (!view_key(v, c[i]))
			return false;
	return true;
}

static bool windows_serve(void *priv, const struct pollfd *pfd, unsigned int n)
{
	struct windows *l = priv;
	unsigned int base = 0;

	if (l->view_open && l->v.tty_in) {
		base = 1;
		if ((pfd[0].revents & POLLIN) && !read_keys(&l->v))
			return false;
	}
	if (l->serving)
		lsock_service(&l->sock, pfd + base, n - base);
	return true;
}

/* Only the last output does something: --once's JSON lines. */
static int windows_output(void *priv, const struct sink_input *in, bool last)
{
	struct windows *l = priv;

	l->bad_lines = in->bad;
	if (last && l->print_at_end) {
		if (l->wall)
			win_advance(&l->t, now_us());
		print_all(l);
	}
	return 0;
}

/* What was not counted or not served, said; everything freed. */
static bool windows_stop(void *priv)
{
	struct windows *l = priv;

	if (l->view_open)
		view_close(&l->v);
	if (l->t.late)
		warnx_("live: %llu task%s older than the longest window when read: not counted",
		       (unsigned long long)l->t.late, l->t.late == 1 ? "" : "s");
	if (l->t.future)
		warnx_("live: %llu task%s starting more than 1 s after the clock: not counted",
		       (unsigned long long)l->t.future, l->t.future == 1 ? "" : "s");
	if (l->t.overflow)
		warnx_("live: %llu task%s past --max-keys counted under port \"other\"",
		       (unsigned long long)l->t.overflow, l->t.overflow == 1 ? "" : "s");
	if (l->serving && (l->sock.refused || l->sock.oversized || l->sock.slow))
		warnx_("live: socket: %llu client%s refused (too many), %llu closed for an overlong question, %llu for not reading their answers",
		       (unsigned long long)l->sock.refused, l->sock.refused == 1 ? "" : "s",
		       (unsigned long long)l->sock.oversized,
		       (unsigned long long)l->sock.slow);
	if (l->serving)
		lsock_close(&l->sock);
	win_free(&l->t);
	free((char *)l->ctf.container);
	free(l);
	return true;
}

/* What it was handed, kept and not, and its socket's guards. */
static void windows_stats(void *priv, FILE *out)
{
	struct windows *l = priv;

	sink_stat(out, "windows", "records", l->handed);
	sink_stat(out, "windows", "tasks", l->t.records);
	sink_stat(out, "windows", "keys", l->t.nkeys);
	sink_stat(out, "windows", "late", l->t.late);
	sink_stat(out, "windows", "future", l->t.future);
	sink_stat(out, "windows", "overflow", l->t.overflow);
	sink_stat(out, "windows", "expired", l->t.expired);
	if (!l->serving)
		return;
	sink_stat(out, "windows", "clients", l->sock.nclients);
	sink_stat(out, "windows", "answered", l->sock.answered);
	sink_stat(out, "windows", "refused", l->sock.refused);
	sink_stat(out, "windows", "oversized", l->sock.oversized);
	sink_stat(out, "windows", "slow", l->sock.slow);
}

static const struct sink_ops windows_ops = {
	.name = "windows",
	.record = windows_record,
	.output = windows_output,
	.tick = windows_tick,
	.next_tick = windows_next_tick,
	.pollfds = windows_pollfds,
	.serve = windows_serve,
	.stats = windows_stats,
	.stop = windows_stop,
};

int windows_sink_start(struct sink *s, const struct windows_conf *c,
		       bool dir_input)
{
	struct windows *l = xcalloc(1, sizeof(*l));

	l->by = c->by;
	l->port = c->port;
	l->ctf = c->ctf;
	if (c->ctf.container)
		l->ctf.container = xstrdup(c->ctf.container);
	l->wall = c->wall >= 0 ? c->wall : !dir_input;
	l->view = c->view;
	l->v.measure = c->measure;
	l->v.sort = c->sort;
	l->v.by = by_title[l->by];
	l->print_at_end = c->print_at_end;
	win_init(&l->t, c->len, c->nwin, (size_t)c->max_keys);
	if (l->wall) {
		win_advance(&l->t, now_us());
		l->t.max_ahead_us = MAX_AHEAD_US;
	}
	if (c->socket) {
		if (lsock_open(&l->sock, c->socket, c->gid, answer, l) < 0) {
			windows_stop(l);
			return -1;
		}
		l->serving = true;
	}
	s->ops = &windows_ops;
	s->priv = l;
	return 0;
}

/* ---- the settings ---------------------------------------------------------- */

void windows_conf_init(struct windows_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->len[0] = 10;
	c->len[1] = 60;
	c->len[2] = 300;
	c->nwin = 3;
	c->port = -1;
	c->max_keys = WINDOWS_MAX_KEYS;
	c->gid = (gid_t)-1;
	c->wall = -1;
}

/* "10s,1m,5m": at most WIN_MAX lengths, kept ascending, each once. */
static int set_lengths(struct windows_conf *c, const char *arg, char *err,
		       size_t len)
{
	unsigned int n = 0, i, j, v, lens[WIN_MAX];
	char *s = xstrdup(arg), *tok, *save = NULL;
	int st = 0;

	for (tok = strtok_r(s, ",", &save); tok && !st; tok = strtok_r(NULL, ",", &save)) {
		v = parse_len(tok);
		if (!v) {
			snprintf(err, len, "'%s' is not a length of 1 s to 1 h (10, 10s, 5m, 1h)",
				 tok);
			st = -1;
			break;
		}
		for (i = 0; i < n && lens[i] != v; i++)
			;
		if (i < n)
			continue;
		if (n == WIN_MAX) {
			snprintf(err, len, "at most %d lengths", WIN_MAX);
			st = -1;
			break;
		}
		lens[n++] = v;
	}
	free(s);
	if (st)
		return st;
	if (!n) {
		snprintf(err, len, "no length given");
		return -1;
	}
	for (i = 1; i < n; i++)	/* ascending: few, insertion sort */
		for (j = i; j > 0 && lens[j - 1] > lens[j]; j--) {
			v = lens[j];
			lens[j] = lens[j - 1];
			lens[j - 1] = v;
		}
	memcpy(c->len, lens, sizeof(lens[0]) * n);
	c->nwin = n;
	return 0;
}

/* A group by name or number. */
static int set_group(struct windows_conf *c, const char *arg, char *err,
		     size_t len)
{
	struct group *g = getgrnam(arg);
	uint64_t v;

	if (g) {
		c->gid = g->gr_gid;
		return 0;
	}
	if (parse_u64(arg, strlen(arg), &v) && v < (gid_t)-1) {
		c->gid = (gid_t)v;
		return 0;
	}
	snprintf(err, len, "no group '%s'", arg);
	return -1;
}

/* The settings of what is kept: the keys, their filter, the clock. */
static int set_keys(struct windows_conf *c, const char *name, const char *v,
		    char *err, size_t len)
{
	int i;

	if (!strcmp(name, "by")) {
		i = name_index(by_names, BY_N, v);
		if (i < 0) {
			snprintf(err, len, "'%s' is not port, container, netns or peer", v);
			return -1;
		}
		c->by = (enum win_by)i;
	} else if (!strcmp(name, "max-keys")) {
		if (!parse_u64(v, strlen(v), &c->max_keys) || !c->max_keys ||
		    c->max_keys > 1000000) {
			snprintf(err, len, "a number 1..1000000, not '%s'", v);
			return -1;
		}
	} else if (!strcmp(name, "clock")) {
		if (strcmp(v, "wall") && strcmp(v, "records")) {
			snprintf(err, len, "wall or records, not '%s'", v);
			return -1;
		}
		c->wall = !strcmp(v, "wall");
	} else {
		return set_filter(name, v, &c->port, &c->ctf, err, len);
	}
	return 0;
}

int windows_set(struct windows_conf *c, const char *name, const char *value,
		char *err, size_t len)
{
	if (!strcmp(name, "windows"))
		return set_lengths(c, value, err, len);
	if (!strcmp(name, "socket")) {
		free(c->socket);
		c->socket = xstrdup(value);
		return 0;
	}
	if (!strcmp(name, "socket-group"))
		return set_group(c, value, err, len);
	return set_keys(c, name, value, err, len);
}

int windows_check(const struct windows_conf *c, char *err, size_t len)
{
	if (c->gid != (gid_t)-1 && !c->socket) {
		snprintf(err, len, "--socket-group needs --socket");
		return -1;
	}
	return 0;
}

void windows_conf_free(struct windows_conf *c)
{
	free(c->socket);
	free((char *)c->ctf.container);
	memset(c, 0, sizeof(*c));
}
