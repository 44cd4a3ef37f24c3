// SPDX-License-Identifier: GPL-2.0
/*
 * tcprt live: sliding windows of the tasks, shown in a terminal, asked for
 * on a local socket or printed once as JSON.  One reader (reader.c) and
 * one sink, the windows sink (sink_windows.c), which keeps them; this file
 * is the options and their checks.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "container.h"
#include "reader.h"
#include "sink_windows.h"
#include "util.h"

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

#define READ_EVERY_US		200000ULL	/* the logs' polling */
#define OUTPUT_NEVER_US		(UINT64_MAX / 4)	/* no output but the last */

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
	struct reader *rd = xcalloc(1, sizeof(*rd));
	struct windows_conf c;
	const char *dir = NULL, *name;
	enum input_format infmt = INPUT_AUTO;
	bool once = false, no_view = false;
	struct sink sink;
	char err[512];
	int o, st;

	windows_conf_init(&c);
	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":w:b:p:n:c:k:s:g:V1m:S:d:C:h", opts, NULL)) != -1) {
		switch (o) {
		case 'V': no_view = true; break;
		case '1': once = true; break;
		case 'm': c.measure = opt_measure(optarg); break;
		case 'S': c.sort = opt_sort(optarg); break;
		case 'd': dir = optarg; break;
		case OPT_INPUT_FORMAT:
			infmt = opt_input_format("live", optarg);
			break;
		case 'h': fputs(help, stdout); free(rd); return EXIT_OK;
		case ':': case '?': bad_option("live", o, argv);
		default:
			/* the sink's own: its settings */
			name = opt_long_name(opts, o);
			if (windows_set(&c, name, optarg, err, sizeof(err)))
				usage_error("live", "--%s: %s", name, err);
		}
	}
	if (optind < argc)
		usage_error("live", "unexpected argument '%s'", argv[optind]);
	if (windows_check(&c, err, sizeof(err)) < 0)
		usage_error("live", "%s", err);
	if (once && c.socket)
		usage_error("live", "--once prints and exits: no --socket with it");
	c.view = !once && !no_view && isatty(STDOUT_FILENO);
	if (!c.view && !once && !c.socket)
		usage_error("live", "nothing to do: no terminal for the view (or --no-view), no --socket, no --once");
	c.print_at_end = once;

	signals_init();
	st = reader_open(rd, dir, infmt, NULL);
	if (st == EXIT_OK) {
		if (windows_sink_start(&sink, &c, dir != NULL) < 0)
			st = EXIT_RUNTIME;
		else
			reader_add_sink(rd, &sink);
	}
	if (st == EXIT_OK)
		st = reader_run(rd, READ_EVERY_US, OUTPUT_NEVER_US, once);
	reader_close(rd);
	windows_conf_free(&c);
	ct_free();
	free(rd);
	return st;
}
