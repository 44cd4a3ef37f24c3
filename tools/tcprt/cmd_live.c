// SPDX-License-Identifier: GPL-2.0
/*
 * tcprt live: sliding windows of the tasks (window.c), kept as the records
 * arrive, shown in a terminal (live_view.c), asked for on a local socket
 * (live_socket.c) or printed once as JSON.  One loop, one thread: read the
 * logs, move the windows' clock, answer the questions that came, redraw.
 * The windows go on whether or not anybody looks or asks.
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "container.h"
#include "input.h"
#include "live_socket.h"
#include "live_view.h"
#include "util.h"
#include "window.h"

static const char help[] =
"usage: tcprt live [--windows LIST] [--by port|container|netns|peer]\n"
"                  [--port P] [--netns N] [--container ID] [--max-keys N]\n"
"                  [--socket PATH [--socket-group GROUP]] [--no-view]\n"
"                  [--once] [--measure M] [--sort tasks|p99|bytes|key]\n"
"                  [--dir DIR] [--input-format F] [--clock wall|records]\n"
"\n"
"Sliding windows of the tasks, live: per service port and role (and what\n"
"--by adds), over several window lengths at once (default 10 s, 1 min and\n"
"5 min), updated as each record arrives: tasks and tasks/s, bytes/s each\n"
"way and each key's share of the bytes, p50/p90/p99/max of duration,\n"
"process, upload and download time, min RTT and the time breakdown's\n"
"parts, RTT mean and spread, retransmissions per 1000 segments sent and\n"
"failures (W) per 1000 tasks (R + W).  A window of W seconds holds the\n"
"tasks that started in the current second and the W - 1 before it, and\n"
"its rates divide by the time it covers.  Percentiles within 0.79 %.\n"
"\n"
"On a terminal: a view redrawn every second, a row per key, the windows\n"
"side by side (q quits, s changes the order, m the measure).  --socket:\n"
"a local socket where a program asks, a line each, \"port=P [role=R]\n"
"[key=K] [window=W]\", \"keys\" or \"status\" and gets a line of JSON\n"
"(docs/live.md).  --once: read what the logs hold, print every key's\n"
"windows as JSON lines, exit.  Reading the module's logs consumes them:\n"
"one reader at a time (not beside tcprt export, ship or read).\n"
"\n"
"  -w, --windows LIST   window lengths, comma-separated: 10s,1m,5m (the\n"
"                       default); each 1 s .. 1 h, at most 4\n"
"  -b, --by KEY         the rows: port (default); container (as tcprt read\n"
"                       names it); netns (its number); peer (the peer's\n"
"                       address)\n"
"  -p, --port P         only service port P\n"
"  -n, --netns N        only records of network namespace N\n"
"  -c, --container ID   only records of container ID\n"
"  -k, --max-keys N     at most N keys (default 1024); tasks of further keys\n"
"                       are counted under port \"other\", key \"other\"\n"
"  -s, --socket PATH    answer questions on the local socket PATH (mode\n"
"                       0660; a stale socket there is replaced)\n"
"  -g, --socket-group G the socket's group (name or number), for the\n"
"                       programs that may ask\n"
"  -V, --no-view        no terminal view (with --socket: a service)\n"
"  -1, --once           print every key's windows as JSON lines and exit\n"
"  -m, --measure M      the view's measure: duration (default), process,\n"
"                       upload, download, min_rtt, rq_wait, app, sq_wait,\n"
"                       rwnd_limited, sndbuf_limited, app_limited, sending\n"
"  -S, --sort S         the view's order: tasks (default: tasks/s of the\n"
"                       shortest window), p99, bytes, key\n"
"  -d, --dir DIR        read the rt-network-log* files of DIR (kept being\n"
"                       read as they grow)\n"
INPUT_FORMAT_HELP
"  -C, --clock C        what moves the windows: wall (the clock; the\n"
"                       default for the module's logs) or records (the\n"
"                       latest task's start; the default for --dir)\n"
"  -h, --help           this text\n";

#define DEFAULT_MAX_KEYS	1024
#define READ_EVERY_US		200000ULL	/* the logs' polling */
#define DRAW_EVERY_US		1000000ULL
/* a record may start this far after the wall clock (clocks of CPUs) */
#define MAX_AHEAD_US		1000000ULL

enum by { BY_PORT, BY_CONTAINER, BY_NETNS, BY_PEER, BY_N };
static const char *const by_names[BY_N] = { "port", "container", "netns", "peer" };
static const char *const by_title[BY_N] = { "-", "CONTAINER", "NETNS", "PEER" };

struct live {
	struct win_table t;
	enum by by;
	int port;			/* -1: all */
	struct ct_filter ctf;
	bool wall;			/* the clock: the wall's, else the records' */
	struct input in;
	struct lsock sock;
	bool serving;
};

/* ---- records in ------------------------------------------------------------ */

static const char *key_of(const struct live *l, const struct record *r,
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

static void add(const struct record *r, void *arg)
{
	struct live *l = arg;
	char buf[32];

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

static void answer_keys(const struct live *l, struct buf *b)
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

static void answer_status(const struct live *l, struct buf *b)
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
		   (unsigned long long)l->in.bad, l->sock.nclients,
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
static void answer_query(const struct live *l, char *q, struct buf *b)
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
	struct live *l = ctx;
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
static void print_all(const struct live *l)
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

/* ---- options --------------------------------------------------------------- */

static unsigned int opt_windows(const char *arg, unsigned int len[WIN_MAX])
{
	char *s = strdup(arg), *tok, *save = NULL;
	unsigned int n = 0, i, j, v;

	if (!s)
		die(EXIT_RUNTIME, "out of memory");
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		v = parse_len(tok);
		if (!v)
			usage_error("live", "--windows: '%s' is not a length of 1 s to 1 h (10, 10s, 5m, 1h)",
				    tok);
		for (i = 0; i < n && len[i] != v; i++)
			;
		if (i < n)
			continue;
		if (n == WIN_MAX)
			usage_error("live", "--windows: at most %d lengths", WIN_MAX);
		len[n++] = v;
	}
	free(s);
	if (!n)
		usage_error("live", "--windows: no length given");
	for (i = 1; i < n; i++)	/* ascending: few, insertion sort */
		for (j = i; j > 0 && len[j - 1] > len[j]; j--) {
			v = len[j];
			len[j] = len[j - 1];
			len[j - 1] = v;
		}
	return n;
}

static enum by opt_by(const char *arg)
{
	int i = name_index(by_names, BY_N, arg);

	if (i < 0)
		usage_error("live", "--by: '%s' is not port, container, netns or peer", arg);
	return (enum by)i;
}

static enum wm opt_measure(const char *arg)
{
	int i = name_index(wm_name, WM_N, arg);

	if (i < 0)
		usage_error("live", "--measure: '%s' is not a measure (see --help)", arg);
	return (enum wm)i;
}

static enum view_sort opt_sort(const char *arg)
{
	int i = name_index(view_sort_name, SORT_N, arg);

	if (i < 0)
		usage_error("live", "--sort: '%s' is not tasks, p99, bytes or key", arg);
	return (enum view_sort)i;
}

static gid_t opt_group(const char *arg)
{
	struct group *g = getgrnam(arg);
	uint64_t v;

	if (g)
		return g->gr_gid;
	if (parse_u64(arg, strlen(arg), &v) && v < (gid_t)-1)
		return (gid_t)v;
	usage_error("live", "--socket-group: no group '%s'", arg);
}

/* ---- the loop -------------------------------------------------------------- */

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

static void run(struct live *l, struct live_view *v, bool view)
{
	struct pollfd pfd[2 + LSOCK_CLIENTS];
	uint64_t next_read = 0, next_draw = 0, now, wait;
	unsigned int n, tick = 0, base;

	while (!stop_requested) {
		now = mono_us();
		if (now >= next_read) {
			if (++tick % 5 == 0)
				input_rescan(&l->in);
			input_read(&l->in);
			next_read = now + READ_EVERY_US;
		}
		if (l->wall)
			win_advance(&l->t, now_us());
		if (view && now >= next_draw) {
			v->bad_lines = l->in.bad;
			view_draw(v, &l->t);
			next_draw = now + DRAW_EVERY_US;
		}
		n = 0;
		if (view && v->tty_in)
			pfd[n++] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
		base = n;
		if (l->serving)
			n += lsock_pollfds(&l->sock, pfd + n);
		now = mono_us();
		wait = next_read > now ? next_read - now : 0;
		if (view && next_draw > now && next_draw - now < wait)
			wait = next_draw - now;
		if (poll(pfd, n, (int)(wait / 1000)) <= 0)
			continue;
		if (base && (pfd[0].revents & POLLIN) && !read_keys(v))
			break;
		if (l->serving)
			lsock_service(&l->sock, pfd + base, n - base);
	}
}

int cmd_live(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "windows", required_argument, NULL, 'w' },
		{ "by", required_argument, NULL, 'b' },
		{ "port", required_argument, NULL, 'p' },
		{ "netns", required_argument, NULL, 'n' },
		{ "container", required_argument, NULL, 'c' },
		{ "max-keys", required_argument, NULL, 'k' },
		{ "socket", required_argument, NULL, 's' },
		{ "socket-group", required_argument, NULL, 'g' },
		{ "no-view", no_argument, NULL, 'V' },
		{ "once", no_argument, NULL, '1' },
		{ "measure", required_argument, NULL, 'm' },
		{ "sort", required_argument, NULL, 'S' },
		{ "dir", required_argument, NULL, 'd' },
		{ "input-format", required_argument, NULL, OPT_INPUT_FORMAT },
		{ "clock", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned int len[WIN_MAX] = { 10, 60, 300 }, nwin = 3;
	struct live l = { .port = -1 };
	struct live_view v = { 0 };
	const char *dir = NULL, *sock = NULL, *clock = NULL;
	enum input_format infmt = INPUT_AUTO;
	bool once = false, no_view = false, view;
	gid_t gid = (gid_t)-1;
	uint64_t max_keys = DEFAULT_MAX_KEYS;
	int o, st;

	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":w:b:p:n:c:k:s:g:V1m:S:d:C:h", opts, NULL)) != -1) {
		switch (o) {
		case 'w': nwin = opt_windows(optarg, len); break;
		case 'b': l.by = opt_by(optarg); break;
		case 'p': l.port = opt_port("live", optarg); break;
		case 'n':
			l.ctf.netns_set = true;
			l.ctf.netns = opt_netns("live", optarg);
			break;
		case 'c': l.ctf.container = opt_container("live", optarg); break;
		case 'k':
			if (!parse_u64(optarg, strlen(optarg), &max_keys) ||
			    !max_keys || max_keys > 1000000)
				usage_error("live", "--max-keys: a number 1..1000000, not '%s'",
					    optarg);
			break;
		case 's': sock = optarg; break;
		case 'g': gid = opt_group(optarg); break;
		case 'V': no_view = true; break;
		case '1': once = true; break;
		case 'm': v.measure = opt_measure(optarg); break;
		case 'S': v.sort = opt_sort(optarg); break;
		case 'd': dir = optarg; break;
		case OPT_INPUT_FORMAT:
			infmt = opt_input_format("live", optarg);
			break;
		case 'C':
			if (strcmp(optarg, "wall") && strcmp(optarg, "records"))
				usage_error("live", "--clock: wall or records, not '%s'", optarg);
			clock = optarg;
			break;
		case 'h': fputs(help, stdout); return EXIT_OK;
		default: bad_option("live", o, argv);
		}
	}
	if (optind < argc)
		usage_error("live", "unexpected argument '%s'", argv[optind]);
	if (gid != (gid_t)-1 && !sock)
		usage_error("live", "--socket-group needs --socket");
	if (once && sock)
		usage_error("live", "--once prints and exits: no --socket with it");
	view = !once && !no_view && isatty(STDOUT_FILENO);
	if (!view && !once && !sock)
		usage_error("live", "nothing to do: no terminal for the view (or --no-view), no --socket, no --once");
	l.wall = clock ? !strcmp(clock, "wall") : !dir;
	v.by = by_title[l.by];

	signals_init();
	win_init(&l.t, len, nwin, (size_t)max_keys);
	st = input_open(&l.in, dir, false, infmt, add, &l);
	if (st != EXIT_OK)
		goto out;
	if (l.wall) {
		win_advance(&l.t, now_us());
		l.t.max_ahead_us = MAX_AHEAD_US;
	}
	if (sock) {
		if (lsock_open(&l.sock, sock, gid, answer, &l) < 0) {
			st = EXIT_RUNTIME;
			goto out;
		}
		l.serving = true;
	}
	if (once) {
		input_read(&l.in);
		input_finish(&l.in);
		if (l.wall)
			win_advance(&l.t, now_us());
		print_all(&l);
	} else {
		if (view)
			view_open(&v);
		run(&l, &v, view);
		if (view)
			view_close(&v);
	}
	input_report(&l.in);
	if (l.t.late)
		warnx_("live: %llu task%s older than the longest window when read: not counted",
		       (unsigned long long)l.t.late, l.t.late == 1 ? "" : "s");
	if (l.t.future)
		warnx_("live: %llu task%s starting more than 1 s after the clock: not counted",
		       (unsigned long long)l.t.future, l.t.future == 1 ? "" : "s");
	if (l.t.overflow)
		warnx_("live: %llu task%s past --max-keys counted under port \"other\"",
		       (unsigned long long)l.t.overflow, l.t.overflow == 1 ? "" : "s");
	if (l.serving && (l.sock.refused || l.sock.oversized || l.sock.slow))
		warnx_("live: socket: %llu client%s refused (too many), %llu closed for an overlong question, %llu for not reading their answers",
		       (unsigned long long)l.sock.refused, l.sock.refused == 1 ? "" : "s",
		       (unsigned long long)l.sock.oversized,
		       (unsigned long long)l.sock.slow);
out:
	if (l.serving)
		lsock_close(&l.sock);
	input_close(&l.in);
	win_free(&l.t);
	ct_free();
	return st;
}
