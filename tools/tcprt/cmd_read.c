// SPDX-License-Identifier: GPL-2.0
/* tcprt read: print the records, merged into start-time order. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "container.h"
#include "input.h"
#include "merge.h"
#include "output.h"
#include "util.h"

static const char help[] =
"usage: tcprt read [--follow] [--format text|json|csv] [--type R,W,N,P,E]\n"
"                  [--port P] [--netns N] [--container ID] [--stats]\n"
"                  [--dir DIR] [--input-format F] [--reorder SECONDS]\n"
"       tcprt read --peek [--since SECONDS] [--format ...] [--type ...] ...\n"
"\n"
"Drain every rt-network-log<cpu> of /sys/kernel/debug/tcp-rt (reading\n"
"consumes them) and print the records, merged into start-time order.\n"
"What the module overwrote before it was read is said on stderr: records\n"
"of a binary log, exactly; sub-buffers of a text log.\n"
"\n"
"  -f, --follow        keep reading as records arrive, until SIGINT/SIGTERM\n"
"      --peek          print what the logs hold now without consuming it\n"
"                      (rt-network-peek<cpu>: a binary log, tcp_rt loaded\n"
"                      with log_format=both or binary): every record still\n"
"                      there, whether another reader (the agent, ship) has\n"
"                      read it or not, up to where each CPU's log was when\n"
"                      the peek began.  Records the module overwrote before\n"
"                      the peek reached them are said on stderr, with their\n"
"                      count.  Not with --follow, --dir or --input-format\n"
"      --since S       only records that started in the last S seconds\n"
"  -o, --format F      text (default): time, type, role, port, cpu, source,\n"
"                      then name=value for every field; json: one object per\n"
"                      line with the field names of docs/records.md; csv: a\n"
"                      header line, then one row per record (empty cells for\n"
"                      the fields a record does not have), then source,\n"
"                      netns, cgroup, cgroup_path, runtime, container, pod,\n"
"                      rq_wait, app, sq_wait, rwnd_limited, sndbuf_limited,\n"
"                      app_limited."
"                      source: tcp_rt or vendor (the vendor's TCP-RT), when\n"
"                      tcprt can tell.  Records with netns or cgroup (tcp_rt's\n"
"                      log_ext) get what they name on this host: cgroup_path,\n"
"                      runtime (docker, containerd, cri-o, podman,\n"
"                      kubernetes, systemd, host), container (its id, the\n"
"                      systemd service, the path, or the number when nothing\n"
"                      matches) and pod (a Kubernetes pod's UID)\n"
"  -t, --type LIST     only these record types, e.g. R,W\n"
"  -p, --port P        only records of service port P (the local port of\n"
"                      R/W/N, the peer port of P, that of the connection\n"
"                      for E)\n"
"  -n, --netns N       only records of network namespace N (its inode number,\n"
"                      or net:[N] as readlink /proc/PID/ns/net prints it)\n"
"  -c, --container ID  only records of container ID: its full id or a prefix\n"
"                      of at least 12 hex digits (not one of two running\n"
"                      containers), or a systemd service (NAME.service)\n"
"  -s, --stats         also the lines of rt-network-stats (type \"stats\"), or\n"
"                      of the vendor's older rt-network-real<cpu>\n"
"  -d, --dir DIR       read the rt-network-log* (and rt-network-stats) files\n"
"                      of DIR instead: recorded logs; nothing is consumed\n"
INPUT_FORMAT_HELP
"  -r, --reorder S     the reordering window, seconds (default 5): a record\n"
"                      is printed once a record that started S seconds later\n"
"                      has been read (with --follow: once the clock is S\n"
"                      past its start).  A record arriving later than that\n"
"                      is printed at once, out of order, and counted.  An E\n"
"                      record of tcp_rt carries its connection's start: the\n"
"                      E of a connection that lasted longer than S always\n"
"                      comes out of order (without a warning); the vendor's\n"
"                      carries its last task's start\n"
"  -h, --help          this text\n"
"\n"
"Every line is validated, as tcp_rt writes it or as the vendor's TCP-RT\n"
"does (a trailing space, unpadded usec, its W and older P); a malformed or\n"
"truncated one is skipped and reported on stderr with its file, line number\n"
"and reason.  A line may end with extension fields (tcp_rt's log_ext):\n"
"netns, cgroup and the time breakdown's rq_wait, app, sq_wait,\n"
"rwnd_limited, sndbuf_limited and app_limited (microseconds) are read and\n"
"printed; any other name=value is ignored.\n";

struct read_ctx {
	enum format fmt;
	uint64_t since_us;	/* records that started before it left out; 0: none */
	unsigned int types;	/* mask of 1 << REC_x; 0: all */
	int port;		/* -1: all */
	struct ct_filter ctf;	/* --netns, --container */
	struct merge merge;
	int write_errno;
};

/* input -> filter -> merge -> print */
static void filter(const struct record *r, void *arg)
{
	struct read_ctx *c = arg;

	if (r->type != REC_STATS && c->types && !(c->types & (1u << r->type)))
		return;
	if (c->since_us && r->sec * USEC_PER_SEC + r->usec < c->since_us)
		return;
	if (c->port >= 0 && r->port != c->port)
		return;
	if (!ct_match(&c->ctf, r))
		return;
	merge_push(r, &c->merge);
}

#define OPT_PEEK	0x2000
#define OPT_SINCE	0x2001

static void print(const struct record *r, void *arg)
{
	struct read_ctx *c = arg;

	if (c->write_errno)
		return;
	output_record(stdout, c->fmt, r);
	if (ferror(stdout))
		c->write_errno = errno ? errno : EIO;
}

/* The module's count of what it overwrote unread (input_loss_key()). */
struct loss_count {
	const char *key;
	bool records;		/* the key counts records, not sub-buffers */
	uint64_t value;
};

static void loss_count(const char *key, uint64_t value, void *ctx)
{
	struct loss_count *lc = ctx;

	if (!strcmp(key, lc->key))
		lc->value = value;
}

/*
 * What the module overwrote before it was read, on stderr, when it did:
 * since its load, and while this read ran (@before: the count at the
 * start, and its key).  Exact records from a binary log; a text log's
 * count is of sub-buffers.
 */
static void loss_report(const struct loss_count *before)
{
	struct loss_count lc = *before;
	uint64_t during;

	lc.value = 0;
	status_read(NULL, loss_count, &lc);
	if (!lc.value)
		return;
	/* less than at the start: the module was loaded again meanwhile */
	during = lc.value >= before->value ? lc.value - before->value : lc.value;
	if (lc.records)
		warnx_("the module overwrote %llu record%s before a reader got %s since it was loaded (status %s), %llu while this read ran",
		       (unsigned long long)lc.value, lc.value == 1 ? "" : "s",
		       lc.value == 1 ? "it" : "them", lc.key,
		       (unsigned long long)during);
	else
		warnx_("the module overwrote %llu sub-buffer%s of its logs before a reader got %s since it was loaded (status %s), %llu while this read ran; how many records, a text log cannot tell (log_format=binary counts them)",
		       (unsigned long long)lc.value, lc.value == 1 ? "" : "s",
		       lc.value == 1 ? "it" : "them", lc.key,
		       (unsigned long long)during);
}

/* A peek's losses, from the status counts before and after it. */
struct peek_counts {
	uint64_t skipped, cut;
};

static void peek_count(const char *key, uint64_t value, void *ctx)
{
	struct peek_counts *pc = ctx;

	if (!strcmp(key, "peek_records_skipped"))
		pc->skipped = value;
	else if (!strcmp(key, "peek_cut_short"))
		pc->cut = value;
}

/*
 * What the module overwrote before the peek read it, on stderr: the
 * status counts moved by this peek (and by any other one on this host
 * meanwhile).
 */
static void peek_report(const struct peek_counts *before)
{
	struct peek_counts after = *before;
	uint64_t skipped, cut;

	status_read(NULL, peek_count, &after);
	skipped = after.skipped - before->skipped;
	cut = after.cut - before->cut;
	if (skipped)
		warnx_("peek: %llu record%s overwritten by the module before the peek read %s",
		       (unsigned long long)skipped, skipped == 1 ? "" : "s",
		       skipped == 1 ? "it" : "them");
	if (cut)
		warnx_("peek: %llu CPU log%s cut short: the module overwrote the rest of %s before the peek read it (how many records, unknown)",
		       (unsigned long long)cut, cut == 1 ? "" : "s",
		       cut == 1 ? "its snapshot" : "their snapshots");
}

int cmd_read(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "follow", no_argument, NULL, 'f' },
		{ "format", required_argument, NULL, 'o' },
		{ "type", required_argument, NULL, 't' },
		{ "port", required_argument, NULL, 'p' },
		{ "netns", required_argument, NULL, 'n' },
		{ "container", required_argument, NULL, 'c' },
		{ "stats", no_argument, NULL, 's' },
		{ "dir", required_argument, NULL, 'd' },
		{ "input-format", required_argument, NULL, OPT_INPUT_FORMAT },
		{ "reorder", required_argument, NULL, 'r' },
		{ "peek", no_argument, NULL, OPT_PEEK },
		{ "since", required_argument, NULL, OPT_SINCE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct peek_counts peek0 = { 0, 0 };
	struct loss_count loss0 = { 0 };
	bool peek = false, infmt_set = false;
	uint64_t since = 0;
	struct read_ctx c = { .fmt = FMT_TEXT, .port = -1 };
	uint64_t reorder = DEFAULT_REORDER_US;
	const char *dir = NULL;
	enum input_format infmt = INPUT_AUTO;
	bool follow = false, stats = false;
	struct input in;
	unsigned int tick = 0;
	int o, st;

	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":fo:t:p:n:c:sd:r:h", opts, NULL)) != -1) {
		switch (o) {
		case 'f': follow = true; break;
		case 'o':
			if (format_of(optarg) < 0)
				usage_error("read", "--format: '%s' is not text, json or csv",
					    optarg);
			c.fmt = (enum format)format_of(optarg);
			break;
		case 't': c.types = opt_types("read", optarg); break;
		case 'p': c.port = opt_port("read", optarg); break;
		case 'n':
			c.ctf.netns_set = true;
			c.ctf.netns = opt_netns("read", optarg);
			break;
		case 'c': c.ctf.container = opt_container("read", optarg); break;
		case 's': stats = true; break;
		case 'd': dir = optarg; break;
		case OPT_INPUT_FORMAT:
			infmt = opt_input_format("read", optarg);
			infmt_set = true;
			break;
		case 'r': reorder = opt_seconds("read", "--reorder", optarg, true); break;
		case OPT_PEEK: peek = true; break;
		case OPT_SINCE: since = opt_seconds("read", "--since", optarg, false); break;
		case 'h': fputs(help, stdout); return EXIT_OK;
		default: bad_option("read", o, argv);
		}
	}
	if (optind < argc)
		usage_error("read", "unexpected argument '%s'", argv[optind]);
	if (peek && (follow || dir || infmt_set))
		usage_error("read", "--peek reads the module's logs once, as text: not with --%s",
			    follow ? "follow" : dir ? "dir" : "input-format");
	if (peek)
		infmt = INPUT_PEEK;
	if (since)
		c.since_us = now_us() > since ? now_us() - since : 0;

	signals_init();
	merge_init(&c.merge, reorder, DEFAULT_MAX_HELD, print, &c);
	st = input_open(&in, dir, stats, infmt, filter, &c);
	if (st != EXIT_OK) {
		input_close(&in);
		return st;
	}
	if (peek) {
		status_read(NULL, peek_count, &peek0);
	} else if (!dir) {
		loss0.key = input_loss_key(&in, &loss0.records);
		status_read(NULL, loss_count, &loss0);
	}
	output_header(stdout, c.fmt);
	input_read(&in);
	while (follow && !stop_requested && !c.write_errno) {
		merge_advance(&c.merge, now_us());
		fflush(stdout);
		sleep_us(DEFAULT_POLL_US);
		if (++tick % 5 == 0)
			input_rescan(&in);
		input_read(&in);
	}
	input_finish(&in);
	merge_flush(&c.merge);
	fflush(stdout);
	if (ferror(stdout) && !c.write_errno)
		c.write_errno = errno ? errno : EIO;

	input_report(&in);
	if (peek)
		peek_report(&peek0);
	else if (!dir)
		loss_report(&loss0);
	if (c.merge.late > c.merge.late_e)
		warnx_("%llu task record%s printed out of start-time order: they came more than the reordering window (%llu.%06llu s) after a later one",
		       (unsigned long long)(c.merge.late - c.merge.late_e),
		       c.merge.late - c.merge.late_e == 1 ? "" : "s",
		       (unsigned long long)(reorder / USEC_PER_SEC),
		       (unsigned long long)(reorder % USEC_PER_SEC));
	if (c.merge.forced)
		warnx_("%llu record%s released early: more than %d held for reordering",
		       (unsigned long long)c.merge.forced,
		       c.merge.forced == 1 ? "" : "s", DEFAULT_MAX_HELD);
	input_close(&in);
	merge_free(&c.merge);
	ct_free();
	if (c.write_errno && c.write_errno != EPIPE) {
		warnx_("writing the output: %s", strerror(c.write_errno));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}
