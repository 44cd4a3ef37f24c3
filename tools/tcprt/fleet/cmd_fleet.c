// SPDX-License-Identifier: GPL-2.0
/*
 * tcprt fleet: the central store's answers (docs/fleet.md).
 *
 *   init      create the schema (fleet/schema.sql) in ClickHouse, or
 *             upgrade an older one; its retention (--keep)
 *   schema    print it
 *   gaps      over a window: per host and epoch, sent, received, missing
 *             and why; per host, load and CPU, by the module's own
 *             numbers, alike
 *   reached   the share of the module's records stored, per host and hour
 *   summary   tcprt summary's table over the fleet's records, and its
 *             "where the time goes" blocks
 *   top       the slowest tasks (--series: with the series rows around
 *             each)
 *   series    the series runs shipped: the hosts' buckets side by side
 *
 * Every query reads with FINAL, or counts distinct numbers: a record
 * delivered twice counts once; and filters on the keys of the window it
 * reads (the records' time, the controls' arrival).
 * ClickHouse counts and buckets; the percentiles are computed here, from
 * the same log-linear histogram as tcprt summary (hist.h: within 0.79 %).
 * The time breakdown's splits likewise: ClickHouse sums the parts per
 * bucket of their totals, the bands and the rounding are split.c's.
 * summary asks for all of it in one query: one pass over one snapshot of
 * the records in view (summary_series).  And gaps' accounts: ClickHouse
 * counts the numbers stored per bucket (stored.c), acct.c decides what is
 * lost where.  fleet key and fleet expire are in files of their own.
 */
#define _XOPEN_SOURCE 700
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acct.h"
#include "breakdown.h"
#include "clickhouse.h"
#include "cmd.h"
#include "frame.h"
#include "hist.h"
#include "output.h"
#include "plot.h"
#include "record.h"
#include "series_line.h"
#include "store.h"
#include "stored.h"
#include "util.h"

static const char help[] =
"usage: tcprt fleet init    [--cluster NAME] [--keep D|TABLE=D,...] [--url URL]\n"
"       tcprt fleet expire  [--dry-run] [--url URL]\n"
"       tcprt fleet schema  [--cluster NAME]\n"
"       tcprt fleet key     --master FILE --host ID --out FILE\n"
"       tcprt fleet gaps    [--since T] [--until T] [--host H] [--ranges N]\n"
"                           [--format F] [--by epoch|seq|both] [--ended-after S]\n"
"                           [--lag S] [--url URL]\n"
"       tcprt fleet reached [--since T] [--until T] [--host H] [--format F]\n"
"                           [--url URL]\n"
"       tcprt fleet summary [--by port|host|port,host] [--since T] [--until T]\n"
"                           [--port P] [--host H] [--format F] [--url URL]\n"
"       tcprt fleet top     [--port P] [--host H] [-n N] [--since T]\n"
"                           [--until T] [--format F] [--series] [--url URL]\n"
"       tcprt fleet series  [--since T] [--until T] [--host H]\n"
"                           [--port P|P<port>|'*'] [--measure NAME]\n"
"                           [--format F] [--plot PNG] [--url URL]\n"
"\n"
"Queries of the central store that tcprt ingest loads (ClickHouse, over\n"
"HTTP).  A record delivered twice counts once.\n"
"\n"
"  init     create the database tcprt and its tables, or upgrade those of\n"
"           an older schema in place (idempotent: run it again if it\n"
"           stopped halfway); --keep sets how long tables keep rows\n"
"           (a duration - 30d, 12h, forever - for all, or per table:\n"
"           records=30d,controls=90d; a new store: records 30d, the\n"
"           others 90d; an upgraded one: forever until told);\n"
"           --cluster makes a new store on a ClickHouse cluster of that\n"
"           name (remote_servers): replicated tables on its nodes, one\n"
"           Distributed table over them, sharded by host; ingest and\n"
"           the queries then work through any node (docs/fleet.md,\n"
"           \"Scaling out\")\n"
"  expire   drop what is older than the retention (tcprt fleet expire\n"
"           --help)\n"
"  schema   print the schema's SQL (--cluster: a cluster's)\n"
"  key      write a host's frame key, derived from the fleet's master key\n"
"           (tcprt fleet key --help)\n"
"  gaps     by epoch: per host and epoch (one run of tcprt ship), records\n"
"           sent (the last control message's next sequence number),\n"
"           received, missing, and the missing split by cause: dropped by\n"
"           the cap (CAP), refused by the host's rsyslog (REFUSED), read\n"
"           and not handed to rsyslog when the sender died (SENDER) or\n"
"           not yet (INFLIGHT, the epoch lives), refused by ClickHouse\n"
"           (STORE: kept in bad_messages), lost in transport (the rest);\n"
"           malformed lines shipped; the module's own losses in the epoch\n"
"           (log sub-buffers overwritten, records sampled out); the\n"
"           missing sequence ranges; records received past the last\n"
"           control message (not yet accounted).  state: final once the\n"
"           epoch's final control message arrived; closed when its\n"
"           successor sent it (the sender was killed); ended when none\n"
"           came for --ended-after; open before; none when no control\n"
"           message arrived (sent unknown).\n"
"           by module seq (records numbered by the module, log_ext's\n"
"           seq; schema 4): per host, load and CPU, the numbers the module\n"
"           gave (MADE), stored, missing, and the missing split: never\n"
"           read by ship (RELAY: overwritten in the relay, or read by\n"
"           another reader), CAP, REFUSED, SENDER, INFLIGHT, lost between\n"
"           the host's rsyslog and the store (TRANSPORT: the rest); the\n"
"           missing numbers.  Each line says which accounting it is\n"
"  reached  per host and hour of the records' own time: the module's\n"
"           records stored, made, and the share stored (the view\n"
"           tcprt.reached, which a dashboard can query; schema 4)\n"
"  summary  per port, role and task type (or host, or both): count, rate\n"
"           (count / the window's length) and p50/p90/p99/max of\n"
"           duration, process, upload, download and min RTT in\n"
"           microseconds, as tcprt summary computes them (within 0.79 %);\n"
"           in text, then tcprt summary's \"where the time goes\" block for\n"
"           each R and P row whose records carry tcp_rt's time breakdown\n"
"  top      the slowest tasks (by duration), with host, peer and parts;\n"
"           --series (text, json): after each, the series rows its host\n"
"           shipped (ship --series) around it, from 10 ms before to 10 ms\n"
"           after: its port's line (P<port>: a client task's) and the\n"
"           host's ('*'), '*' marking a bucket that overlaps the task\n"
"           (json: its array \"series\", in_task; 1000 rows at most)\n"
"  series   the series runs shipped (ship --series), the hosts' buckets\n"
"           side by side: per bucket start and width (us), a column per\n"
"           host holding the measure (--measure) of its line of --port,\n"
"           '-' when it has no row there (nothing counted in that bucket,\n"
"           or no run); csv and json a row per bucket and host; 1000000\n"
"           rows read at most.  --plot draws it (16 hosts at most)\n"
"\n"
CH_CONN_HELP
"  -s, --since T      from T: Unix seconds, YYYY-MM-DDTHH:MM:SSZ (UTC), or\n"
"                     an age: 30s, 15m, 2h, 7d (default, before --until:\n"
"                     gaps and reached 1d, summary, top and series 1h;\n"
"                     gaps --since 0: the whole store)\n"
"  -U, --until T      to T, excluded (default: now)\n"
"  -H, --host H       only host H\n"
"  -p, --port P       only service port P; series: the line of port P,\n"
"                     P<port> (a peer port: client connections) or '*'\n"
"                     (the host's, the default)\n"
"  -m, --measure NAME series: bytes_in (default), bytes_out, segs_in,\n"
"                     segs_out, retrans, started, done, W, N, estab,\n"
"                     closed, open, or series_ext's ce_bytes, ce_segs, ece,\n"
"                     dup_bytes, dup_segs, flows, far_bytes_in,\n"
"                     far_bytes_out (0 where the run did not keep it)\n"
"  -P, --plot PNG     series: draw it into PNG (with gnuplot), one colour\n"
"                     a host; the table then only with --format\n"
"      --series       top: the series rows around each task (see top)\n"
"  -b, --by KEYS      summary's rows: port (default), host, or port,host\n"
"  -n, --count N      top: how many (default 20)\n"
"  -r, --ranges N     gaps: missing ranges shown per line (default 20;\n"
"                     all are counted)\n"
"  -b, --by A         gaps: epoch, seq (by module seq) or both (default;\n"
"                     csv: epoch, one table a CSV)\n"
"  -l, --lag S        gaps: records read in the window may have been made\n"
"                     up to S before it (or before what it accounts from)\n"
"                     and after it (the host's clock); older ones are not\n"
"                     looked for (default 1h)\n"
"  -e, --ended-after S  gaps: an epoch whose control messages stopped S\n"
"                     seconds before its central's spool was loaded to\n"
"                     (tcprt.centrals; the store's clock) has ended:\n"
"                     what it had not handed over is lost (SENDER), not\n"
"                     in flight (default: 6 of its sender's intervals,\n"
"                     60 s when unknown)\n"
"  -o, --format F     text (default), json (one object per line), csv\n"
"  -h, --help         this text\n"
"\n"
"reached, summary, top and series take times by the records' own clocks\n"
"(sec; series: the buckets' starts).\n"
"gaps' window is by the central's clock: the epochs with a control\n"
"message received in it (or a record made in it), each accounted from\n"
"the first number it had not handed over when the window began (its last\n"
"control message before it says) to the next_seq of its last one in it;\n"
"by module seq the logs they read, likewise from their accounts (L1).  A\n"
"line says where its window starts (from seq N).  gaps, top and series\n"
"read a store of schema 1 too (gaps by epoch alone before schema 4); summary\n"
"needs schema 2, reached (and tcprt ingest) schema 4: run fleet init to\n"
"upgrade.\n";

#define DEFAULT_TOP	20
#define DEFAULT_RANGES	20
#define DEFAULT_AGE	3600
#define REACHED_AGE	86400	/* fleet reached: the last day */
#define GAPS_AGE	86400	/* fleet gaps: the last day */
#define GAPS_LAG	3600	/* fleet gaps --lag */
#define SQL_MAX		8192

struct opts {
	struct ch_conn store;
	enum format fmt;
	uint64_t since, until;		/* Unix seconds */
	bool since_set;
	const char *host;
	int port;
	bool by_port, by_host;		/* summary --by */
	bool by_epoch, by_seq;		/* gaps --by */
	uint64_t count, ranges;
	uint64_t ended_after;		/* gaps --ended-after, s; 0: default */
	uint64_t lag;			/* gaps --lag, s */
	uint64_t keep[STORE_NKEEP];	/* init --keep, s */
	const char *cluster;		/* init --cluster */
	bool keep_set[STORE_NKEEP];
	bool fmt_set;			/* --format given */
	/* series --port: role host (the line '*'), server (port) or client
	 * (P<port>), the port in port; as the line names it in series_key */
	const char *series_role;
	char series_key[8];
	int measure;			/* series --measure: series_field_name's */
	const char *png;		/* series --plot */
	bool series;			/* top --series */
};

enum { OPT_SERIES = 0x100 };	/* top --series: long only */

/* ---- options ----------------------------------------------------------------- */

static uint64_t opt_count(const char *opt, const char *arg)
{
	uint64_t v;

	if (!parse_u64(arg, strlen(arg), &v) || v > 1000000)
		usage_error("fleet", "%s: '%s' is not a count (0..1000000)", opt, arg);
	return v;
}

/* gaps --by: the accounting, by epoch, by module seq, or both */
static void opt_gaps_by(struct opts *o, const char *arg)
{
	if (!strcmp(arg, "epoch"))
		o->by_epoch = true;
	else if (!strcmp(arg, "seq"))
		o->by_seq = true;
	else if (!strcmp(arg, "both"))
		o->by_epoch = o->by_seq = true;
	else
		usage_error("fleet", "gaps --by: '%s' is not epoch, seq or both", arg);
}

static void opt_by(struct opts *o, const char *sub, const char *arg)
{
	if (!strcmp(sub, "gaps")) {
		opt_gaps_by(o, arg);
		return;
	}
	if (!strcmp(arg, "port")) {
		o->by_port = true;
	} else if (!strcmp(arg, "host")) {
		o->by_host = true;
	} else if (!strcmp(arg, "port,host") || !strcmp(arg, "host,port")) {
		o->by_port = true;
		o->by_host = true;
	} else {
		usage_error("fleet", "--by: '%s' is not port, host or port,host", arg);
	}
}

/* series --port: a port, P<port> (a peer port) or '*' (the host's line) */
static void opt_series_port(struct opts *o, const char *arg)
{
	bool peer = arg[0] == 'P';
	uint16_t port;

	if (!strcmp(arg, "*")) {
		o->series_role = "host";
		snprintf(o->series_key, sizeof(o->series_key), "*");
		return;
	}
	if (!parse_port(arg + peer, &port))
		usage_error("fleet", "series --port: '%s' is not a port (1..65535), P<port> (a peer port) or '*' (the host)",
			    arg);
	o->series_role = peer ? "client" : "server";
	o->port = port;
	snprintf(o->series_key, sizeof(o->series_key), "%s%u", peer ? "P" : "",
		 port);
}

/* series --measure: a field of the series lines, by its name */
static void opt_measure(struct opts *o, const char *arg)
{
	char names[256];
	size_t k, n = 0;

	for (k = 0; k < SERIES_NFIELDS; k++)
		if (!strcmp(arg, series_field_name[k])) {
			o->measure = (int)k;
			return;
		}
	names[0] = '\0';
	for (k = 0; k < SERIES_NFIELDS && n < sizeof(names); k++)
		n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s",
				      k ? ", " : "", series_field_name[k]);
	usage_error("fleet", "--measure: '%s' is not one of %s", arg, names);
}

/* An option of one query alone: a usage error in the others */
static void only_for(const char *sub, const char *for_sub, const char *opt)
{
	if (strcmp(sub, for_sub))
		usage_error("fleet", "%s is for fleet %s", opt, for_sub);
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	const char *sub = argv[1];
	static const struct option lopts[] = {
		{ "url", required_argument, NULL, 'u' },
		{ "since", required_argument, NULL, 's' },
		{ "until", required_argument, NULL, 'U' },
		{ "host", required_argument, NULL, 'H' },
		{ "port", required_argument, NULL, 'p' },
		{ "by", required_argument, NULL, 'b' },
		{ "count", required_argument, NULL, 'n' },
		{ "ranges", required_argument, NULL, 'r' },
		{ "ended-after", required_argument, NULL, 'e' },
		{ "lag", required_argument, NULL, 'l' },
		{ "keep", required_argument, NULL, 'k' },
		{ "cluster", required_argument, NULL, 'C' },
		{ "format", required_argument, NULL, 'o' },
		{ "measure", required_argument, NULL, 'm' },
		{ "plot", required_argument, NULL, 'P' },
		{ "series", no_argument, NULL, OPT_SERIES },
		{ "help", no_argument, NULL, 'h' },
		CH_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	uint64_t now = now_us() / USEC_PER_SEC;
	bool until_set = false;
	int c;

	*o = (struct opts){ .port = -1,
			    .count = DEFAULT_TOP, .ranges = DEFAULT_RANGES,
			    .lag = GAPS_LAG, .until = now + 1,
			    .series_role = "host", .series_key = "*" };
	optind = 2;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":u:s:U:H:p:b:n:r:e:l:k:C:o:m:P:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'u': o->store.url = optarg; break;
		case 's':
			o->since = opt_when("fleet", "--since", optarg, now);
			o->since_set = true;
			break;
		case 'U':
			o->until = opt_when("fleet", "--until", optarg, now);
			until_set = true;
			break;
		case 'H':
			if (!frame_host_ok(optarg))
				usage_error("fleet", "--host: '%s' is not a host id (1 to 64 of [A-Za-z0-9._-])",
					    optarg);
			o->host = optarg;
			break;
		case 'p':
			if (!strcmp(sub, "series"))
				opt_series_port(o, optarg);
			else
				o->port = opt_port("fleet", optarg);
			break;
		case 'b': opt_by(o, sub, optarg); break;
		case 'n': o->count = opt_count("--count", optarg); break;
		case 'r': o->ranges = opt_count("--ranges", optarg); break;
		case 'e':
			o->ended_after = opt_seconds("fleet", "--ended-after", optarg,
						     false);
			/* whole seconds: the central's clock stamps arrivals so */
			o->ended_after = (o->ended_after + USEC_PER_SEC - 1) / USEC_PER_SEC;
			break;
		case 'l':
			o->lag = opt_seconds("fleet", "--lag", optarg, true);
			/* whole seconds, as the records' time */
			o->lag = (o->lag + USEC_PER_SEC - 1) / USEC_PER_SEC;
			break;
		case 'C':
			if (strcmp(sub, "init"))
				usage_error("fleet", "--cluster is fleet init's and fleet schema's");
			if (!store_cluster_name_ok(optarg))
				usage_error("fleet", "--cluster: '%s' is not a cluster's name (1 to %d of [A-Za-z0-9_], as remote_servers has it)",
					    optarg, STORE_CLUSTER_MAX - 1);
			o->cluster = optarg;
			break;
		case 'k': {
			char err[200];

			if (strcmp(sub, "init"))
				usage_error("fleet", "--keep is fleet init's");
			if (!store_keep_parse(optarg, o->keep, o->keep_set, err, sizeof(err)))
				usage_error("fleet", "--keep: %s", err);
			break;
		}
		case 'o':
			if (format_of(optarg) < 0)
				usage_error("fleet", "--format: '%s' is not text, json or csv",
					    optarg);
			o->fmt = (enum format)format_of(optarg);
			o->fmt_set = true;
			break;
		case 'm':
			only_for(sub, "series", "--measure");
			opt_measure(o, optarg);
			break;
		case 'P':
			only_for(sub, "series", "--plot");
			if (strchr(optarg, '\'') || strchr(optarg, '\n'))
				usage_error("fleet", "--plot: a file name without quotes or newlines, please");
			o->png = optarg;
			break;
		case OPT_SERIES:
			only_for(sub, "top", "--series");
			o->series = true;
			break;
		case 'h': fputs(help, stdout); exit(EXIT_OK);
		default:
			if (!ch_conn_option(&o->store, c, optarg))
				bad_option("fleet", c, argv);
		}
	}
	if (optind < argc)
		usage_error("fleet", "unexpected argument '%s'", argv[optind]);
	if (!o->by_port && !o->by_host)
		o->by_port = true;
	/* gaps: both accountings, but one table a CSV */
	if (!strcmp(sub, "gaps") && !o->by_epoch && !o->by_seq) {
		o->by_epoch = true;
		o->by_seq = o->fmt != FMT_CSV;
	}
	if (o->fmt == FMT_CSV && o->by_epoch && o->by_seq)
		usage_error("fleet", "gaps --format csv prints one table: --by epoch or --by seq");
	if (o->fmt == FMT_CSV && o->series)
		usage_error("fleet", "top --series: text or json (csv prints one table)");
	/* the default window: the last day (gaps, reached) or hour before
	 * --until */
	if (!o->since_set) {
		uint64_t age = !strcmp(sub, "gaps") ? GAPS_AGE :
			       !strcmp(sub, "reached") ? REACHED_AGE : DEFAULT_AGE;

		o->since = o->until > age ? o->until - age : 0;
	}
	if (o->since >= o->until)
		usage_error("fleet", "--since must be before --until%s",
			    until_set ? "" : " (now)");
}

/* ---- answers -------------------------------------------------------------------- */

/* The store, of schema version @need or later (gaps and top read a store
 * of the oldest version: they need none of the columns added since). */
static void open_store(struct ch *c, const struct opts *o)
{
	bool usage;

	if (!ch_open(c, &o->store, 600, &usage)) {
		if (usage)
			usage_error("fleet", "%s", c->err);
		die(EXIT_RUNTIME, "fleet: %s", c->err);
	}
}

static void connect_store(struct ch *c, const struct opts *o, int need)
{
	open_store(c, o);
	if (!ch_check_schema(c, need))
		die(EXIT_RUNTIME, "fleet: %s", c->err);
}

static void query(struct ch *c, const char *sql, struct buf *out)
{
	if (!ch_query(c, sql, out))
		die(EXIT_RUNTIME, "fleet: %s", c->err);
}

static uint64_t u64(const char *s)
{
	uint64_t v = 0;

	parse_u64(s, strlen(s), &v);
	return v;
}

/* " AND host = 'H'" when --host; the host id's characters need no quoting */
static void where_host(struct buf *q, const struct opts *o)
{
	if (o->host)
		buf_printf(q, " AND host = '%s'", o->host);
}

/* ---- gaps ---------------------------------------------------------------------- */

/*
 * How far each central's spool is loaded (tcprt.centrals, schema 6): an
 * epoch whose last control message a central stored is silent until that
 * central's loaded_to, not until now, while its loader is stalled or
 * behind - its messages may wait in the spool (issue 65, F8).
 */
struct central {
	char *name;		/* '<host>:<spool>/', as controls.central */
	uint64_t loaded_to, at;	/* the store's clock, s */
};

struct centrals {
	struct central *c;
	size_t n;
	uint64_t store_now;	/* the store's clock when read */
	uint64_t now_s;		/* the states' clock: it, or the window's end */
};

static void centrals_load(struct ch *c, struct centrals *cs, uint64_t store_now)
{
	struct buf ans = { 0 };
	char *row, *f[4];
	size_t pos = 0;

	cs->store_now = cs->now_s = store_now;
	if (c->version < STORE_CENTRALS)
		return;
	query(c, "SELECT central, max(loaded_to), toUInt32(max(at)) FROM tcprt.centrals GROUP BY central FORMAT TabSeparated",
	      &ans);
	while ((row = ch_row(&ans, &pos))) {
		if (ch_fields(row, f, 4) != 3)
			continue;
		cs->c = xrealloc(cs->c, cs->n + 1, sizeof(*cs->c));
		cs->c[cs->n++] = (struct central){
			.name = xstrdup(f[0]), .loaded_to = u64(f[1]), .at = u64(f[2]),
		};
	}
	buf_free(&ans);
}

static void centrals_free(struct centrals *cs)
{
	size_t i;

	for (i = 0; i < cs->n; i++)
		free(cs->c[i].name);
	free(cs->c);
}

/*
 * Until when an epoch whose last control message @central stored
 * (controls.central) is silent (acct_silent_until()): the states' clock
 * for a central unknown (a row of before schema 6).
 */
static uint64_t silent_until(const struct centrals *cs, const char *central)
{
	size_t i;

	for (i = 0; i < cs->n; i++)
		if (!strcmp(cs->c[i].name, central))
			return acct_silent_until(cs->now_s, cs->store_now,
						 cs->c[i].at, cs->c[i].loaded_to);
	return cs->now_s;
}

struct account {
	char key[96];		/* "host\tepoch" */
	char host[72];
	uint64_t epoch;
	bool has_ctl, final_last, final_closed;
	uint64_t ctl[CTL_NFIELDS];	/* the account: frame.h's C1 fields */
	bool has_base;		/* a control message arrived before --since */
	uint64_t base[CTL_NFIELDS];	/* the last of them: the window's start */
	uint64_t lo;		/* the window's first number: base's sent_seq */
	uint64_t base_s;	/* when the base arrived (the central's clock) */
	uint64_t received, after, malformed, max_seq;
	uint64_t unsent_stored;	/* numbers of [sent_seq, next_seq) stored */
	uint64_t store;		/* records ClickHouse refused (bad_messages) */
	uint64_t last_s;	/* its last control message's arrival (the
				 * central's clock), or its last record's */
	bool concurrent;	/* ran while another epoch of its host id did */
	bool idle;		/* no control message nor record in the window */
	uint64_t until_s;	/* its silence runs to (silent_until()) */
	struct spans set;	/* the numbers stored from lo on */
	/* decided (acct.h) */
	enum acct_state state;
	uint64_t idle_s, after_s;	/* silent for, ended after */
	uint64_t behind_s;	/* its central's loader behind the clock by */
	struct acct_split split;
};

/* keyidx: an item begins with its key */
_Static_assert(offsetof(struct account, key) == 0, "account: key first");

struct accounts {
	struct account *a;
	size_t n;
	struct keyidx idx;	/* by key, until sorted for print */
	const struct centrals *cs;
};

static struct account *account_of(struct accounts *as, const char *host,
				  uint64_t epoch)
{
	char key[sizeof(as->a[0].key)];
	size_t i;

	snprintf(key, sizeof(key), "%s\t%llu", host, (unsigned long long)epoch);
	i = keyidx_find(&as->idx, key, as->a, as->n, sizeof(*as->a));
	if (i < as->n)
		return &as->a[i];
	as->a = xrealloc(as->a, as->n + 1, sizeof(*as->a));
	as->a[as->n] = (struct account){ .epoch = epoch };
	snprintf(as->a[as->n].key, sizeof(as->a[0].key), "%s", key);
	snprintf(as->a[as->n].host, sizeof(as->a[0].host), "%s", host);
	return &as->a[as->n++];
}

static int account_cmp(const void *x, const void *y)
{
	const struct account *a = x, *b = y;
	int c = strcmp(a->host, b->host);

	if (c)
		return c;
	/* an epoch's place: when it started (its numbers are random) */
	if (a->ctl[CTL_START_US] != b->ctl[CTL_START_US])
		return a->ctl[CTL_START_US] < b->ctl[CTL_START_US] ? -1 : 1;
	return a->epoch < b->epoch ? -1 : a->epoch > b->epoch;
}

/*
 * The window's bound on the records' own time: those made from --lag
 * before @from_s (--since, or an older start of what the window accounts
 * for) to --lag after --until (the records read in the window were made
 * before they were read, and the host's clock may differ from the
 * central's); none with --since 0, the whole store.
 */
static void records_bound(const struct opts *o, uint64_t from_s, uint64_t to_s,
			  struct buf *q)
{
	q->len = 0;
	if (!o->since) {
		buf_printf(q, "1");
		return;
	}
	if (from_s > o->since)
		from_s = o->since;
	buf_printf(q, "time >= toDateTime(%llu) AND time < toDateTime(%llu)",
		   (unsigned long long)(from_s > o->lag ? from_s - o->lag : 0),
		   (unsigned long long)to_s);
}

static void records_time(const struct opts *o, uint64_t from_s, struct buf *q)
{
	records_bound(o, from_s, o->until + o->lag, q);
}

/*
 * What brings an epoch or a load into view by its records: one made in
 * the window, or --lag before it; not after it (an epoch that started
 * after the window's end is not the window's).
 */
static void view_time(const struct opts *o, struct buf *q)
{
	records_bound(o, o->since, o->until, q);
}

/*
 * The last control message of each epoch in view (@in) received before
 * @before (Unix seconds), and from @after on (0: any): its account (ctl),
 * or with @base the window's start (base, and when it arrived).  Fields
 * named as on the wire; final once any said so.
 */
static void gaps_controls(struct ch *c, const char *in, uint64_t before,
			  uint64_t after, bool base, struct accounts *as)
{
	struct buf q = { 0 }, ans = { 0 };
	/* the fields a store of before schema 4 has */
	size_t nctl = c->version >= STORE_SEQ ? CTL_NFIELDS : CTL_NFIELDS_V1;
	char *row, *f[24];
	size_t pos = 0, i;

	buf_printf(&q, "SELECT host, epoch");
	for (i = 0; i < nctl; i++) {
		if (i == CTL_FINAL)
			buf_printf(&q, ", max(%s)", ctl_field_name[i]);
		else if (i == CTL_SENT_SEQ)
			/* a sender of before sent_seq: all it read was sent */
			buf_printf(&q, ", argMax(if(sent_known = 1, sent_seq, next_seq), ctl_seq)");
		else
			buf_printf(&q, ", argMax(%s, ctl_seq)", ctl_field_name[i]);
	}
	buf_printf(&q, ", max(final = %d), max(final = %d), toUInt32(max(received)), %s FROM tcprt.controls FINAL WHERE received < toDateTime(%llu) AND received >= toDateTime(%llu) AND %s GROUP BY host, epoch FORMAT TabSeparated",
		   FINAL_LAST, FINAL_CLOSED,
		   c->version >= STORE_CENTRALS ? "argMax(central, received)" : "''",
		   (unsigned long long)before, (unsigned long long)after, in);
	query(c, q.p, &ans);
	while ((row = ch_row(&ans, &pos))) {
		struct account *a;
		uint64_t *v;

		if (ch_fields(row, f, 24) != 6 + nctl)
			continue;
		a = account_of(as, f[0], u64(f[1]));
		v = base ? a->base : a->ctl;
		for (i = 0; i < nctl; i++)
			v[i] = u64(f[2 + i]);
		if (nctl < CTL_NFIELDS)
			v[CTL_SENT_SEQ] = v[CTL_NEXT_SEQ];
		if (base) {
			a->has_base = true;
			a->base_s = u64(f[4 + nctl]);
			continue;
		}
		a->has_ctl = true;
		a->final_last = u64(f[2 + nctl]);
		a->final_closed = u64(f[3 + nctl]);
		a->last_s = u64(f[4 + nctl]);
		a->until_s = silent_until(as->cs, f[5 + nctl]);
	}
	buf_free(&q);
	buf_free(&ans);
}

/* Each account's stored numbers from its lo on, and its malformed ones. */
static void gaps_numbers(struct ch *c, const struct opts *o, struct accounts *as)
{
	struct buf t = { 0 }, bound = { 0 };
	struct stored_of of = { .keys = "host, epoch", .nkeys = 2, .num = "seq" };
	struct stored *s;
	size_t i, pass;

	if (!as->n)
		return;
	/* per epoch: from --lag before its base arrived (what it had not
	 * handed over then was made before), else before --since */
	if (o->since)
		buf_printf(&t, "time < toDateTime(%llu)",
			   (unsigned long long)(o->until + o->lag));
	else
		buf_printf(&t, "1");
	of.time = t.p;
	s = xrealloc(NULL, as->n, sizeof(*s));
	for (i = 0; i < as->n; i++) {
		struct account *a = &as->a[i];

		s[i] = (struct stored){ .lo = a->lo };
		snprintf(s[i].key, sizeof(s[i].key), "%s", a->key);
		records_time(o, a->has_base ? a->base_s : o->since, &bound);
		snprintf(s[i].term, sizeof(s[i].term), "host = '%s' AND epoch = %llu AND %s",
			 a->host, (unsigned long long)a->epoch, bound.p);
	}
	/* every row, then the malformed ones: the same keys, sets emptied */
	for (pass = 0; pass < 2; pass++) {
		of.rows = pass ? "valid = 0" : "1";
		if (!stored_find(c, &of, s, as->n))
			die(EXIT_RUNTIME, "fleet: %s", c->err);
		for (i = 0; i < as->n; i++) {
			struct account *a = &as->a[i];
			struct stored *k = stored_key(s, as->n, a->key);

			if (pass) {
				a->malformed = a->has_ctl ?
					spans_count_in(&k->set, a->lo, a->ctl[CTL_NEXT_SEQ]) :
					spans_count(&k->set);
				continue;
			}
			a->set = k->set;	/* the account's now */
			k->set = (struct spans){ 0 };
		}
	}
	stored_free(s, as->n);
	buf_free(&t);
	buf_free(&bound);
}

/* Records ClickHouse refused, kept in bad_messages (schema 3), per epoch. */
static void gaps_refused(struct ch *c, const char *in, struct accounts *as)
{
	struct buf q = { 0 }, ans = { 0 };
	char *row, *f[8];
	size_t pos = 0;

	if (c->version < STORE_REFUSED)
		return;
	buf_printf(&q, "SELECT host, epoch, seq, max(records) FROM tcprt.bad_messages FINAL WHERE records > 0 AND %s GROUP BY host, epoch, seq FORMAT TabSeparated",
		   in);
	query(c, q.p, &ans);
	while ((row = ch_row(&ans, &pos))) {
		struct account *a;
		uint64_t seq;

		if (ch_fields(row, f, 8) != 4)
			continue;
		a = account_of(as, f[0], u64(f[1]));
		seq = u64(f[2]);
		if (seq >= a->lo && (!a->has_ctl || seq < a->ctl[CTL_NEXT_SEQ]))
			a->store += u64(f[3]);
	}
	buf_free(&q);
	buf_free(&ans);
}

/* When the last record of each epoch without control messages arrived. */
static void gaps_silent(struct ch *c, const struct opts *o, struct accounts *as)
{
	struct buf q = { 0 }, ans = { 0 }, t = { 0 };
	char *row, *f[4];
	size_t i = 0, n, pos;

	records_time(o, o->since, &t);
	while (i < as->n) {
		q.len = 0;
		buf_printf(&q, "SELECT host, epoch, toUInt32(max(received)) FROM tcprt.records WHERE %s AND (0", t.p);
		for (n = 0; i < as->n && n < STORED_TERMS; i++) {
			if (as->a[i].has_ctl)
				continue;
			buf_printf(&q, " OR (host = '%s' AND epoch = %llu)",
				   as->a[i].host, (unsigned long long)as->a[i].epoch);
			n++;
		}
		if (!n)
			break;
		buf_printf(&q, ") GROUP BY host, epoch FORMAT TabSeparated");
		query(c, q.p, &ans);
		for (pos = 0; (row = ch_row(&ans, &pos));) {
			if (ch_fields(row, f, 4) == 3)
				account_of(as, f[0], u64(f[1]))->last_s = u64(f[2]);
		}
	}
	buf_free(&q);
	buf_free(&ans);
	buf_free(&t);
}

/*
 * The epochs in view, into @as, and the SQL that selects them into @in:
 * those with a control message received in the window (the central's
 * clock), or a record in the window's time bound (records_time): an
 * epoch whose control messages were lost shows so.  The latter are
 * named one by one in @in (there are few: the others have controls).
 */
#define VIEW_NAMED_BYTES	32768
static void gaps_view(struct ch *c, const struct opts *o, struct accounts *as,
		      struct buf *in)
{
	struct buf q = { 0 }, ans = { 0 }, t = { 0 }, ctl = { 0 };
	char *row, *f[4];
	size_t pos = 0, named = 0;

	view_time(o, &t);
	buf_printf(&ctl, "SELECT host, epoch FROM tcprt.controls WHERE received >= toDateTime(%llu) AND received < toDateTime(%llu)",
		   (unsigned long long)o->since, (unsigned long long)o->until);
	where_host(&ctl, o);
	buf_printf(&q, "SELECT host, epoch, max(c) FROM (SELECT host, epoch, 1 AS c FROM (%s) UNION ALL SELECT host, epoch, 0 AS c FROM tcprt.records WHERE %s",
		   ctl.p, t.p);
	where_host(&q, o);
	buf_printf(&q, ") GROUP BY host, epoch FORMAT TabSeparated");
	query(c, q.p, &ans);
	in->len = 0;
	buf_printf(in, "((host, epoch) IN (%s)", ctl.p);
	while ((row = ch_row(&ans, &pos))) {
		if (ch_fields(row, f, 4) != 3)
			continue;
		account_of(as, f[0], u64(f[1]));
		/* in a query up to four times: well under max_query_size */
		if (u64(f[2]) || (named++ && in->len >= VIEW_NAMED_BYTES))
			continue;
		buf_printf(in, named > 1 ? ", ('%s', %s)" : " OR (host, epoch) IN (('%s', %s)",
			   f[0], f[1]);
	}
	if (in->len >= VIEW_NAMED_BYTES) {
		/* too many to name: select them again */
		in->len = 0;
		buf_printf(in, "((host, epoch) IN (%s UNION ALL SELECT host, epoch FROM tcprt.records WHERE %s",
			   ctl.p, t.p);
		where_host(in, o);
	}
	buf_printf(in, named ? "))" : ")");
	buf_free(&q);
	buf_free(&ans);
	buf_free(&t);
	buf_free(&ctl);
}

/*
 * The epochs in view and their accounts over the window: the numbers
 * from the first the epoch had not handed over when the window began
 * (its last control message before --since said so: sent_seq) to the
 * next_seq of its last one before --until.  An epoch with no control
 * message before the window is accounted from its start.
 */
/*
 * gaps_controls() of the epochs in view that the bounded read found no
 * control message of (@base: no base), from any time: named one by one,
 * or, too many to name, as @in selects them.
 */
static void gaps_controls_rest(struct ch *c, const char *in, uint64_t before,
			       bool base, struct accounts *as)
{
	struct buf named = { 0 };
	size_t i, n = 0;

	for (i = 0; i < as->n && named.len < VIEW_NAMED_BYTES; i++) {
		const struct account *a = &as->a[i];

		if (base ? a->has_base : a->has_ctl)
			continue;
		buf_printf(&named, n++ ? ", ('%s', %llu)" : "(host, epoch) IN (('%s', %llu)",
			   a->host, (unsigned long long)a->epoch);
	}
	if (n && named.len < VIEW_NAMED_BYTES) {
		buf_printf(&named, ")");
		gaps_controls(c, named.p, before, 0, base, as);
	} else if (n) {
		gaps_controls(c, in, before, 0, base, as);
	}
	buf_free(&named);
}

/* @t less @d seconds, not below 0 */
static uint64_t before_by(uint64_t t, uint64_t d)
{
	return t > d ? t - d : 0;
}

/*
 * The controls of a window: an epoch in view by a control message has
 * one received in the window, so its last before --until arrived in it -
 * read from --lag before it (a copy of an older message that arrived
 * late), by the partitions of the days it spans; a live epoch sends one
 * every --interval of its sender (10 s by default), so its last before
 * --since arrived within the hour before (GAPS_BASE_LOOK, or --lag if
 * longer).  The others (in view by their records alone; started in the
 * window; silent before it) are read again, named, from any time.  The
 * whole store (--since 0): one read each.
 */
#define GAPS_BASE_LOOK	3600
static void gaps_window_controls(struct ch *c, const struct opts *o,
				 const char *in, struct accounts *as)
{
	uint64_t look = o->lag > GAPS_BASE_LOOK ? o->lag : GAPS_BASE_LOOK;

	if (!o->since) {
		gaps_controls(c, in, o->until, 0, false, as);
		return;
	}
	gaps_controls(c, in, o->until, before_by(o->since, o->lag), false, as);
	gaps_controls_rest(c, in, o->until, false, as);
	gaps_controls(c, in, o->since, before_by(o->since, look), true, as);
	gaps_controls_rest(c, in, o->since, true, as);
}

static void gaps_load(struct ch *c, const struct opts *o, const char *in,
		      struct accounts *as)
{
	size_t i;

	gaps_window_controls(c, o, in, as);
	for (i = 0; i < as->n; i++) {
		struct account *a = &as->a[i];

		if (a->has_base && a->has_ctl)
			a->lo = a->base[CTL_SENT_SEQ] < a->ctl[CTL_NEXT_SEQ] ?
				a->base[CTL_SENT_SEQ] : a->ctl[CTL_NEXT_SEQ];
	}
	gaps_numbers(c, o, as);
	gaps_refused(c, in, as);
	gaps_silent(c, o, as);
	for (i = 0; i < as->n; i++) {
		struct account *a = &as->a[i];
		uint64_t n = a->ctl[CTL_NEXT_SEQ];

		if (a->set.n)
			a->max_seq = a->set.s[a->set.n - 1].hi - 1;
		if (!a->has_ctl) {
			a->after = spans_count(&a->set);
			continue;
		}
		a->received = spans_count_in(&a->set, a->lo, n);
		a->after = spans_count_in(&a->set, n, UINT64_MAX);
		/* in view for its records made before the window: known */
		a->idle = a->has_base && !a->after &&
			  !memcmp(a->base, a->ctl, sizeof(a->ctl));
		a->unsent_stored = spans_count_in(&a->set,
			a->ctl[CTL_SENT_SEQ] > a->lo ? a->ctl[CTL_SENT_SEQ] : a->lo, n);
	}
}

/* A counter of the window: the account's less the base's. */
static uint64_t in_window(const struct account *a, unsigned int field)
{
	if (!a->has_base || a->base[field] > a->ctl[field])
		return a->ctl[field];
	return a->ctl[field] - a->base[field];
}

struct range_out {
	FILE *out;
	enum format fmt;
	uint64_t shown, max;
};

static void print_range(uint64_t lo, uint64_t hi, void *arg)
{
	struct range_out *r = arg;

	if (r->shown++ >= r->max)
		return;
	switch (r->fmt) {
	case FMT_TEXT:
		if (lo == hi)
			fprintf(r->out, " %llu", (unsigned long long)lo);
		else
			fprintf(r->out, " %llu-%llu", (unsigned long long)lo,
				(unsigned long long)hi);
		break;
	case FMT_JSON:
		fprintf(r->out, "%s[%llu,%llu]", r->shown > 1 ? "," : "",
			(unsigned long long)lo, (unsigned long long)hi);
		break;
	case FMT_CSV:
		fprintf(r->out, "%s%llu-%llu", r->shown > 1 ? ";" : "",
			(unsigned long long)lo, (unsigned long long)hi);
		break;
	}
}

static uint64_t delta(uint64_t start, uint64_t now)
{
	/* a module loaded again during the epoch restarts its counters */
	return now >= start ? now - start : now;
}

/* Each account's state, and its losses split (acct.h); @now_s the central's clock. */
static void gaps_decide(const struct opts *o, struct accounts *as, uint64_t now_s)
{
	size_t i;

	for (i = 0; i < as->n; i++) {
		struct account *a = &as->a[i];
		uint64_t sent = a->ctl[CTL_SENT_SEQ];
		/* the window's numbers, [lo, next_seq), counted from lo */
		struct acct_sent in = {
			.next_seq = a->ctl[CTL_NEXT_SEQ] - a->lo,
			.sent_seq = (sent > a->lo ? sent : a->lo) - a->lo,
			.cap_dropped = in_window(a, CTL_CAP_DROPPED),
			.refused = in_window(a, CTL_REFUSED),
			.received = a->received,
			.unsent_stored = a->unsent_stored,
			.store = a->store,
		};

		uint64_t until = a->has_ctl ? a->until_s : now_s;

		a->idle_s = until > a->last_s ? until - a->last_s : 0;
		a->behind_s = now_s - until;
		a->after_s = acct_ended_after(a->ctl[CTL_INTERVAL_US], o->ended_after);
		a->state = acct_state_of(a->has_ctl, a->final_last, a->final_closed,
					 a->idle_s, a->after_s);
		in.live = acct_live(a->state, a->idle_s, a->after_s);
		acct_epoch(&in, &a->split);
	}
}

/* The text line's notes after its figures. */
static void gaps_notes(const struct account *a, const char *start)
{
	printf("  by epoch, started %s", start);
	if (a->lo)
		printf(", from seq %llu (the window's start)", (unsigned long long)a->lo);
	if (a->state == ACCT_ENDED)
		printf(", ended: no control message for %llu s (ended after %llu s)",
		       (unsigned long long)a->idle_s, (unsigned long long)a->after_s);
	else if (a->state == ACCT_OPEN && a->idle_s + a->behind_s > a->after_s)
		printf(", open: its central's spool is loaded only to %llu s ago (tcprt.centrals; its loader stalled or behind)",
		       (unsigned long long)a->behind_s);
	else if (a->state == ACCT_CLOSED)
		printf(", closed by its successor (the sender was killed)");
	if (a->after)
		printf(", %llu past the last control", (unsigned long long)a->after);
	if (a->split.over)
		printf(", the host counts more losses than are missing");
	if (a->concurrent)
		printf(", ran while another epoch of this host id did (two ships, or cloned machines)");
	printf("\n");
}

static void gaps_print(const struct opts *o, struct account *a)
{
	uint64_t next = a->ctl[CTL_NEXT_SEQ], sent = next - a->lo;
	uint64_t cap = in_window(a, CTL_CAP_DROPPED), refused = in_window(a, CTL_REFUSED);
	const struct acct_split *x = &a->split;
	/* the module's counters over the window: from the base's values */
	uint64_t ow = delta(a->has_base ? a->base[CTL_OVERWRITTEN] :
			    a->ctl[CTL_OVERWRITTEN_START], a->ctl[CTL_OVERWRITTEN]);
	uint64_t so = delta(a->has_base ? a->base[CTL_SAMPLED] :
			    a->ctl[CTL_SAMPLED_START], a->ctl[CTL_SAMPLED]);
	bool mod = a->ctl[CTL_MODULE_KNOWN];
	struct range_out r = { .out = stdout, .fmt = o->fmt, .max = o->ranges };
	const char *state = acct_state_name[a->state];
	char start[32] = "";

	if (a->has_ctl)
		fmt_time(start, sizeof(start), a->ctl[CTL_START_US], false);
	switch (o->fmt) {
	case FMT_TEXT:
		if (!a->has_ctl) {
			printf("%-20s %16llu %-6s %10s %10llu %10s %8s %8s %8s %8s %10s %6llu %9llu %6s %6s  by epoch (no control message: max seq %llu)\n",
			       a->host, (unsigned long long)a->epoch, state, "-",
			       (unsigned long long)a->after, "-", "-", "-", "-", "-", "-",
			       (unsigned long long)a->store,
			       (unsigned long long)a->malformed, "-", "-",
			       (unsigned long long)a->max_seq);
			return;
		}
		printf("%-20s %16llu %-6s %10llu %10llu %10llu %8llu %8llu %8llu %8llu %10llu %6llu %9llu",
		       a->host, (unsigned long long)a->epoch, state,
		       (unsigned long long)sent,
		       (unsigned long long)a->received,
		       (unsigned long long)x->missing,
		       (unsigned long long)cap,
		       (unsigned long long)refused,
		       (unsigned long long)x->sender,
		       (unsigned long long)x->in_flight,
		       (unsigned long long)x->transport,
		       (unsigned long long)a->store,
		       (unsigned long long)a->malformed);
		if (mod)
			printf(" %6llu %6llu", (unsigned long long)ow,
			       (unsigned long long)so);
		else
			printf(" %6s %6s", "-", "-");
		gaps_notes(a, start);
		if (x->missing) {
			uint64_t n;

			printf("    missing:");
			n = spans_each_gap(&a->set, a->lo, next, print_range, &r);
			if (n > o->ranges)
				printf(" ... (%llu ranges)", (unsigned long long)n);
			printf("\n");
		}
		return;
	case FMT_JSON:
		printf("{\"accounting\":\"epoch\",\"host\":\"%s\",\"epoch\":%llu,\"state\":\"%s\"",
		       a->host, (unsigned long long)a->epoch, state);
		if (a->has_ctl)
			printf(",\"started\":\"%s\",\"sent\":%llu,\"received\":%llu,\"missing\":%llu,\"cap_dropped\":%llu,\"refused\":%llu,\"sender_lost\":%llu,\"in_flight\":%llu,\"transport_lost\":%llu",
			       start, (unsigned long long)sent,
			       (unsigned long long)a->received,
			       (unsigned long long)x->missing,
			       (unsigned long long)cap,
			       (unsigned long long)refused,
			       (unsigned long long)x->sender,
			       (unsigned long long)x->in_flight,
			       (unsigned long long)x->transport);
		printf(",\"silent_s\":%llu,\"ended_after_s\":%llu,\"central_behind_s\":%llu",
		       (unsigned long long)a->idle_s, (unsigned long long)a->after_s,
		       (unsigned long long)a->behind_s);
		if (a->concurrent)
			printf(",\"concurrent\":true");
		printf(",\"store_refused\":%llu,\"malformed\":%llu,\"past_last_control\":%llu",
		       (unsigned long long)a->store,
		       (unsigned long long)a->malformed,
		       (unsigned long long)a->after);
		if (mod)
			printf(",\"module_overwritten\":%llu,\"module_sampled_out\":%llu",
			       (unsigned long long)ow, (unsigned long long)so);
		if (a->has_ctl) {
			uint64_t n;

			printf(",\"missing_ranges\":[");
			n = spans_each_gap(&a->set, a->lo, next, print_range, &r);
			printf("],\"missing_range_count\":%llu", (unsigned long long)n);
		}
		if (a->lo)
			printf(",\"from_seq\":%llu", (unsigned long long)a->lo);
		printf("}\n");
		return;
	case FMT_CSV:
		printf("%s,%llu,%s", a->host, (unsigned long long)a->epoch, state);
		if (a->has_ctl)
			printf(",%s,%llu,%llu,%llu,%llu,%llu,%llu", start,
			       (unsigned long long)sent,
			       (unsigned long long)a->received,
			       (unsigned long long)x->missing,
			       (unsigned long long)cap,
			       (unsigned long long)refused,
			       (unsigned long long)x->transport);
		else
			printf(",,,,,,,");
		printf(",%llu,%llu,%llu,", (unsigned long long)a->store,
		       (unsigned long long)a->malformed,
		       (unsigned long long)a->after);
		if (mod)
			printf("%llu,%llu,", (unsigned long long)ow,
			       (unsigned long long)so);
		else
			printf(",,");
		if (a->has_ctl)
			spans_each_gap(&a->set, a->lo, next, print_range, &r);
		/* added after the columns of before, so that they keep their place */
		if (a->has_ctl)
			printf(",%llu,%llu", (unsigned long long)x->sender,
			       (unsigned long long)x->in_flight);
		else
			printf(",,");
		printf(",%llu,epoch\n", (unsigned long long)a->lo);
		return;
	}
}

/*
 * Epochs of one host id whose spans (start to the last control message)
 * overlap: two ships at once on one host, or two machines under one id -
 * clones that share /etc/machine-id.  Each keeps its own account (their
 * epochs differ); this says the host id names more than one sender.
 * @as is sorted by host, then start.
 */
static void mark_concurrent(struct accounts *as)
{
	size_t i, j;

	for (i = 0; i < as->n; i++) {
		struct account *a = &as->a[i];

		for (j = i + 1; j < as->n && a->has_ctl; j++) {
			struct account *b = &as->a[j];

			if (strcmp(a->host, b->host))
				break;
			if (b->has_ctl && b->ctl[CTL_START_US] < a->ctl[CTL_NOW_US])
				a->concurrent = b->concurrent = true;
		}
	}
}

/* A footer line: text on stdout, else on stderr (the rows stay rows). */
static void gaps_note(const struct opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void gaps_note(const struct opts *o, const char *fmt, ...)
{
	FILE *f = o->fmt == FMT_TEXT ? stdout : stderr;
	va_list ap;

	if (o->fmt != FMT_TEXT)
		fputs("tcprt: fleet gaps: ", f);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
}

/*
 * What reached the store as no record: lines the loader could not read,
 * and (schema 3) messages not signed by the host they claim, per host id
 * claimed - a sender using an id that is not its own.
 */
static void gaps_bad(struct ch *c, const struct opts *o)
{
	bool v3 = c->version >= STORE_REFUSED;
	struct buf q = { 0 }, ans = { 0 }, hosts = { 0 };
	size_t pos = 0;
	uint64_t total = 0;
	char *row, *f[4];

	buf_printf(&q, "SELECT count() FROM tcprt.bad_messages FINAL WHERE received >= toDateTime(%llu)%s FORMAT TabSeparated",
		   (unsigned long long)o->since,
		   v3 ? " AND records = 0 AND reason NOT LIKE 'unauthenticated:%'" : "");
	query(c, q.p, &ans);
	row = ch_row(&ans, &pos);
	if (row && u64(row))
		gaps_note(o, "%llu messages the loader could not read (table tcprt.bad_messages)\n",
			  (unsigned long long)u64(row));
	if (!v3)
		goto out;
	q.len = 0;
	buf_printf(&q, "SELECT host, count() FROM tcprt.bad_messages FINAL WHERE received >= toDateTime(%llu) AND reason LIKE 'unauthenticated:%%'",
		   (unsigned long long)o->since);
	where_host(&q, o);
	buf_printf(&q, " GROUP BY host ORDER BY host FORMAT TabSeparated");
	query(c, q.p, &ans);
	for (pos = 0; (row = ch_row(&ans, &pos));) {
		if (ch_fields(row, f, 4) != 2)
			continue;
		total += u64(f[1]);
		buf_printf(&hosts, " %s %llu", f[0], (unsigned long long)u64(f[1]));
	}
	if (total)
		gaps_note(o, "%llu messages not signed by the host they claim, refused (table tcprt.bad_messages):%s\n",
			  (unsigned long long)total, hosts.p);
out:
	buf_free(&q);
	buf_free(&ans);
	buf_free(&hosts);
}

/* ---- gaps by module seq ------------------------------------------------------- */

/* One log: one CPU's log file of one load of the module on one host. */
struct mlog {
	char key[96];			/* "host\tload_id\tcpu" */
	char host[72];
	uint64_t load_id;
	int cpu;
	struct acct_read *e;		/* the epochs that read it */
	size_t n;
	struct spans stored;
	struct acct_log a;
};

_Static_assert(offsetof(struct mlog, key) == 0, "mlog: key first");

struct mlogs {
	struct mlog *l;
	size_t n;
	struct keyidx idx;
	uint64_t from_s;	/* the oldest base's arrival of an epoch
				 * active in the window, or --since */
};

static struct mlog *mlog_of(struct mlogs *ls, const char *host, uint64_t load_id,
			    int cpu)
{
	char key[sizeof(ls->l[0].key)];
	size_t i;

	snprintf(key, sizeof(key), "%s\t%llu\t%d", host,
		 (unsigned long long)load_id, cpu);
	i = keyidx_find(&ls->idx, key, ls->l, ls->n, sizeof(*ls->l));
	if (i < ls->n)
		return &ls->l[i];
	ls->l = xrealloc(ls->l, ls->n + 1, sizeof(*ls->l));
	ls->l[ls->n] = (struct mlog){ .load_id = load_id, .cpu = cpu };
	snprintf(ls->l[ls->n].key, sizeof(ls->l[0].key), "%s", key);
	snprintf(ls->l[ls->n].host, sizeof(ls->l[0].host), "%s", host);
	return &ls->l[ls->n++];
}

/* An epoch's read of a log: a log has few readers. */
static struct acct_read *read_of(struct mlog *l, uint64_t epoch)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->e[i].epoch == epoch)
			return &l->e[i];
	l->e = xrealloc(l->e, l->n + 1, sizeof(*l->e));
	l->e[l->n] = (struct acct_read){ .epoch = epoch };
	return &l->e[l->n++];
}

static int mlog_cmp(const void *x, const void *y)
{
	const struct mlog *a = x, *b = y;
	int c = strcmp(a->host, b->host);

	if (c)
		return c;
	if (a->load_id != b->load_id)
		return a->load_id < b->load_id ? -1 : 1;
	return a->cpu - b->cpu;
}

static int cpu_of(const char *s)
{
	return !strcmp(s, "-1") ? -1 : (int)u64(s);
}

/*
 * The loads in view: those that an epoch in view (@in) read, with every
 * epoch that read them, in view or not: a load's account in the window
 * needs all of them (one that stopped before the window adds nothing).
 */
static void seq_loads(const struct opts *o, const char *in, struct buf *q)
{
	struct buf t = { 0 };

	view_time(o, &t);
	q->len = 0;
	buf_printf(q, "(host, load_id) IN (SELECT host, load_id FROM tcprt.records WHERE numbered = 1 AND load_id != 0 AND %s AND %s UNION ALL SELECT host, load_id FROM tcprt.cpu_accounts WHERE %s)",
		   t.p, in, in);
	buf_free(&t);
}

/*
 * The last account (L1) of each epoch of each log received before
 * @before (Unix seconds); with @base, that before the window: the
 * epoch's account is then the window's own (window_read).
 */
static void seq_accounts(struct ch *c, const char *loads, uint64_t before,
			 uint64_t after, bool base, struct mlogs *ls)
{
	struct buf q = { 0 }, ans = { 0 };
	char *row, *f[16];
	size_t pos = 0, i;

	buf_printf(&q, "SELECT host, load_id, cpu, epoch");
	for (i = 0; i < CPU_NFIELDS; i++)
		buf_printf(&q, ", argMax(%s, ctl_seq)", cpu_field_name[i]);
	buf_printf(&q, ", toUInt32(max(received)) FROM tcprt.cpu_accounts FINAL WHERE received < toDateTime(%llu) AND received >= toDateTime(%llu) AND %s GROUP BY host, load_id, cpu, epoch FORMAT TabSeparated",
		   (unsigned long long)before, (unsigned long long)after, loads);
	query(c, q.p, &ans);
	while ((row = ch_row(&ans, &pos))) {
		struct acct_read *e;

		if (ch_fields(row, f, 16) != 5 + CPU_NFIELDS)
			continue;
		e = read_of(mlog_of(ls, f[0], u64(f[1]), cpu_of(f[2])), u64(f[3]));
		if (base) {
			e->base_s = u64(f[4 + CPU_NFIELDS]);
			e->has_base = true;
			for (i = 0; i < CPU_NFIELDS; i++)
				e->base[i] = u64(f[4 + i]);
			continue;
		}
		e->has_l1 = true;
		for (i = 0; i < CPU_NFIELDS; i++)
			e->v[i] = u64(f[4 + i]);
	}
	buf_free(&q);
	buf_free(&ans);
}

/*
 * An epoch's account of a log over the window: from the first number it
 * had not handed over when the window began (the base's sent_next), the
 * counters less the base's.  What it skipped there and had not handed
 * over (the base's unsent_skipped) is the window's.
 */
static void window_read(struct acct_read *e)
{
	static const unsigned int counters[] = {
		CPU_RELAY_SKIPPED, CPU_CAP_DROPPED, CPU_REFUSED,
	};
	uint64_t *v = e->v, *b = e->base;
	size_t i;

	if (!e->has_base || !e->has_l1)
		return;
	if (!memcmp(v, b, sizeof(e->v))) {
		/* nothing new in the window: not a reader of it */
		e->has_l1 = false;
		e->has_base = true;
		return;
	}
	e->has_base = false;
	v[CPU_FIRST] = b[CPU_SENT_NEXT] > v[CPU_FIRST] ? b[CPU_SENT_NEXT] : v[CPU_FIRST];
	for (i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		unsigned int k = counters[i];

		v[k] = v[k] >= b[k] ? v[k] - b[k] : v[k];
	}
	v[CPU_RELAY_SKIPPED] += b[CPU_UNSENT_SKIPPED];
	if (v[CPU_SENT_NEXT] < v[CPU_FIRST])
		v[CPU_SENT_NEXT] = v[CPU_FIRST];
	if (v[CPU_READ_NEXT] < v[CPU_SENT_NEXT])
		v[CPU_READ_NEXT] = v[CPU_SENT_NEXT];
}

struct last_seen {
	char key[96];		/* "host\tepoch" */
	char host[72];
	uint64_t epoch, last_s;
	bool has_ctl, final_last, final_closed;
	uint64_t interval_us;
	uint64_t until_s;	/* as struct account's */
};

_Static_assert(offsetof(struct last_seen, key) == 0, "last_seen: key first");

struct seen {
	struct last_seen *s;
	size_t n;
	struct keyidx idx;
	const struct centrals *cs;
};

static struct last_seen *seen_of(struct seen *sn, const char *host,
				 uint64_t epoch)
{
	char key[sizeof(sn->s[0].key)];
	size_t i;

	snprintf(key, sizeof(key), "%s\t%llu", host, (unsigned long long)epoch);
	i = keyidx_find(&sn->idx, key, sn->s, sn->n, sizeof(*sn->s));
	if (i < sn->n)
		return &sn->s[i];
	sn->s = xrealloc(sn->s, sn->n + 1, sizeof(*sn->s));
	sn->s[sn->n] = (struct last_seen){ .epoch = epoch };
	snprintf(sn->s[sn->n].key, sizeof(sn->s[0].key), "%s", key);
	snprintf(sn->s[sn->n].host, sizeof(sn->s[0].host), "%s", host);
	return &sn->s[sn->n++];
}

/* The numbers each epoch stored of each log in the window's time bound:
 * their span; and when its last record arrived (for an epoch without
 * control messages). */
static void seq_rows(struct ch *c, const struct opts *o, const char *loads,
		     struct mlogs *ls, struct seen *sn)
{
	struct buf q = { 0 }, ans = { 0 }, t = { 0 };
	char *row, *f[8];
	size_t pos = 0;

	records_time(o, ls->from_s, &t);
	buf_printf(&q, "SELECT host, load_id, cpu, epoch, min(rseq), max(rseq), toUInt32(max(received)) FROM tcprt.records WHERE numbered = 1 AND load_id != 0 AND %s AND %s GROUP BY host, load_id, cpu, epoch FORMAT TabSeparated",
		   t.p, loads);
	query(c, q.p, &ans);
	while ((row = ch_row(&ans, &pos))) {
		struct last_seen *x;
		struct acct_read *e;
		uint64_t hi;

		if (ch_fields(row, f, 8) != 7)
			continue;
		e = read_of(mlog_of(ls, f[0], u64(f[1]), cpu_of(f[2])), u64(f[3]));
		hi = u64(f[5]) + 1;
		if (!hi)
			continue;	/* 2^64 - 1: no range holds it */
		e->rows_lo = u64(f[4]);
		e->rows_hi = hi;
		x = seen_of(sn, f[0], e->epoch);
		if (u64(f[6]) > x->last_s)
			x->last_s = u64(f[6]);
	}
	buf_free(&q);
	buf_free(&ans);
	buf_free(&t);
}

/*
 * "(host, epoch) IN (...)" of the epochs of @ls's accounts that @want
 * says (their pairs once each; @ls sorted by host), into @b: false when
 * there are none, or too many to name (VIEW_NAMED_BYTES).
 */
static bool seq_named(const struct mlogs *ls, bool (*want)(const struct acct_read *),
		      struct buf *b)
{
	struct buf seen = { 0 };
	char pair[128];
	size_t i, j, n = 0;

	b->len = 0;
	for (i = 0; i < ls->n && b->len < VIEW_NAMED_BYTES; i++)
		for (j = 0; j < ls->l[i].n; j++) {
			if (!want(&ls->l[i].e[j]))
				continue;
			snprintf(pair, sizeof(pair), "('%s', %llu)", ls->l[i].host,
				 (unsigned long long)ls->l[i].e[j].epoch);
			/* the same epoch reads several logs */
			if (seen.p && strstr(seen.p, pair))
				continue;
			buf_printf(&seen, "%s", pair);
			buf_printf(b, n++ ? ", %s" : "(host, epoch) IN (%s", pair);
		}
	buf_printf(b, ")");
	buf_free(&seen);
	return n && b->len < VIEW_NAMED_BYTES;
}

static bool read_without_base(const struct acct_read *e)
{
	return e->has_l1 && !e->has_base;
}

static bool any_read(const struct acct_read *e)
{
	(void)e;
	return true;
}

/* Whether each epoch that read a log in view lives (acct_live). */
static void seq_life(struct ch *c, const struct opts *o, const char *loads,
		     struct mlogs *ls, struct seen *sn, uint64_t now_s)
{
	struct buf q = { 0 }, ans = { 0 }, t = { 0 };
	char *row, *f[8];
	size_t pos = 0, i, j;

	/*
	 * the readers left (drop_idle) by name: each sent an account in the
	 * window, and with it a control message, so their last arrived from
	 * the hour (--lag) before it on (seq_window_accounts()); too many to
	 * name, as the loads select them, from any time
	 */
	if (seq_named(ls, any_read, &t)) {
		buf_printf(&t, " AND received >= toDateTime(%llu)",
			   (unsigned long long)before_by(o->since, o->lag > GAPS_BASE_LOOK ?
						       o->lag : GAPS_BASE_LOOK));
	} else {
		t.len = 0;
		records_time(o, ls->from_s, &q);
		buf_printf(&t, "(host, epoch) IN (SELECT host, epoch FROM tcprt.cpu_accounts WHERE %s UNION ALL SELECT host, epoch FROM tcprt.records WHERE numbered = 1 AND load_id != 0 AND %s AND %s)",
			   loads, q.p, loads);
		q.len = 0;
	}
	buf_printf(&q, "SELECT host, epoch, max(final = %d), max(final = %d), toUInt32(max(received)), argMax(interval_us, ctl_seq), %s FROM tcprt.controls FINAL WHERE received < toDateTime(%llu) AND %s GROUP BY host, epoch FORMAT TabSeparated",
		   FINAL_LAST, FINAL_CLOSED,
		   c->version >= STORE_CENTRALS ? "argMax(central, received)" : "''",
		   (unsigned long long)o->until, t.p);
	query(c, q.p, &ans);
	while ((row = ch_row(&ans, &pos))) {
		struct last_seen *x;

		if (ch_fields(row, f, 8) != 7)
			continue;
		x = seen_of(sn, f[0], u64(f[1]));
		x->has_ctl = true;
		x->final_last = u64(f[2]);
		x->final_closed = u64(f[3]);
		x->last_s = u64(f[4]);
		x->interval_us = u64(f[5]);
		x->until_s = silent_until(sn->cs, f[6]);
	}
	for (i = 0; i < ls->n; i++) {
		struct mlog *l = &ls->l[i];

		for (j = 0; j < l->n; j++) {
			/* no control nor row seen: silent since ever */
			struct last_seen *x = seen_of(sn, l->host, l->e[j].epoch);
			uint64_t until = x->has_ctl ? x->until_s : now_s;
			uint64_t idle = until > x->last_s ? until - x->last_s : 0;
			uint64_t after = acct_ended_after(x->interval_us, o->ended_after);
			enum acct_state st = acct_state_of(x->has_ctl, x->final_last,
							   x->final_closed, idle, after);

			l->e[j].live = acct_live(st, idle, after);
		}
	}
	buf_free(&q);
	buf_free(&ans);
	buf_free(&t);
}

/*
 * The epochs whose account of a log did not change in the window
 * (window_read left has_base set) are not its readers there (their rows in
 * the window's time bound, if any, were accounted before it); a log left
 * with none is not in the window.  The logs' index is rebuilt after.
 */
static void drop_idle(struct mlogs *ls)
{
	size_t i, j, n = 0, k;

	for (i = 0; i < ls->n; i++) {
		struct mlog *l = &ls->l[i];

		for (j = 0, k = 0; j < l->n; j++)
			if (!l->e[j].has_base)
				l->e[k++] = l->e[j];
		l->n = k;
		if (k)
			ls->l[n++] = *l;
		else
			free(l->e);
	}
	ls->n = n;
	keyidx_free(&ls->idx);
	for (i = 0; i < ls->n; i++)
		keyidx_find(&ls->idx, ls->l[i].key, ls->l, i, sizeof(*ls->l));
}

/*
 * A log's first number in the window: 0 for the whole store; else the
 * least its epochs' window reads start at (an epoch with no account: its
 * first row in the window's time bound).
 */
static uint64_t window_from(const struct opts *o, const struct mlog *l)
{
	uint64_t from = UINT64_MAX;
	size_t j;

	if (!o->since)
		return 0;
	for (j = 0; j < l->n; j++) {
		const struct acct_read *e = &l->e[j];
		uint64_t lo = e->has_l1 ? e->v[CPU_FIRST] : e->rows_lo;

		if ((e->has_l1 || e->rows_hi) && lo < from)
			from = lo;
	}
	return from == UINT64_MAX ? 0 : from;
}

/* The numbers each log has stored from its window's first on. */
static void seq_stored(struct ch *c, const struct opts *o, struct mlogs *ls)
{
	struct stored_of of = { .keys = "host, load_id, cpu", .nkeys = 3,
				.num = "rseq", .rows = "numbered = 1 AND load_id != 0" };
	struct buf t = { 0 };
	struct stored *s;
	size_t i;

	if (!ls->n)
		return;
	records_time(o, ls->from_s, &t);
	of.time = t.p;
	s = xrealloc(NULL, ls->n, sizeof(*s));
	for (i = 0; i < ls->n; i++) {
		struct mlog *l = &ls->l[i];

		s[i] = (struct stored){ .lo = window_from(o, l) };
		snprintf(s[i].key, sizeof(s[i].key), "%s", l->key);
		snprintf(s[i].term, sizeof(s[i].term), "host = '%s' AND load_id = %llu AND cpu = %d",
			 l->host, (unsigned long long)l->load_id, l->cpu);
	}
	if (!stored_find(c, &of, s, ls->n))
		die(EXIT_RUNTIME, "fleet: %s", c->err);
	for (i = 0; i < ls->n; i++) {
		struct stored *k = stored_key(s, ls->n, ls->l[i].key);

		ls->l[i].stored = k->set;
		k->set = (struct spans){ 0 };
	}
	stored_free(s, ls->n);
	buf_free(&t);
}

/*
 * The accounts (L1) of the logs in view over the window, as the epochs'
 * controls (gaps_window_controls()): an epoch that read a log in the
 * window sends its account every --interval, so its last before --until
 * and its last before --since arrived from GAPS_BASE_LOOK (or --lag)
 * before the window on; one that sent none then stopped before the
 * window, and adds nothing to it.  The epochs with an account in it and
 * none in the hour before (the central away) are read again, named, from
 * any time.  The whole store (--since 0): one read.
 */
static void seq_window_accounts(struct ch *c, const struct opts *o,
				const char *loads, struct mlogs *ls)
{
	uint64_t look = o->lag > GAPS_BASE_LOOK ? o->lag : GAPS_BASE_LOOK;
	uint64_t after = o->since ? before_by(o->since, look) : 0;
	struct buf named = { 0 }, q = { 0 };

	seq_accounts(c, loads, o->until, after, false, ls);
	if (!o->since)
		return;
	seq_accounts(c, loads, o->since, after, true, ls);
	if (seq_named(ls, read_without_base, &named)) {
		buf_printf(&q, "%s AND %s", loads, named.p);
		seq_accounts(c, q.p, o->since, 0, true, ls);
	} else if (named.len >= VIEW_NAMED_BYTES) {
		seq_accounts(c, loads, o->since, 0, true, ls);
	}
	buf_free(&named);
	buf_free(&q);
}

static void seq_load(struct ch *c, const struct opts *o, const char *in,
		     struct mlogs *ls, const struct centrals *cs, uint64_t now_s)
{
	struct seen sn = { .cs = cs };
	struct buf loads = { 0 };
	size_t i, j;

	seq_loads(o, in, &loads);
	ls->from_s = o->since;
	seq_window_accounts(c, o, loads.p, ls);
	for (i = 0; i < ls->n; i++)
		for (j = 0; j < ls->l[i].n; j++) {
			struct acct_read *e = &ls->l[i].e[j];
			bool based = e->has_base;

			window_read(e);
			/* what an epoch active in the window had not handed
			 * over at its start was made before its base arrived */
			if (based && !e->has_base && e->base_s < ls->from_s)
				ls->from_s = e->base_s;
		}
	seq_rows(c, o, loads.p, ls, &sn);
	drop_idle(ls);
	seq_life(c, o, loads.p, ls, &sn, now_s);
	seq_stored(c, o, ls);
	for (i = 0; i < ls->n; i++) {
		struct mlog *l = &ls->l[i];
		uint64_t from = window_from(o, l);

		for (j = 0; j < l->n; j++)
			if (l->e[j].rows_hi && l->e[j].rows_lo < from)
				l->e[j].rows_lo = from;
		acct_log(l->e, l->n, from, &l->stored, &l->a);
	}
	keyidx_free(&ls->idx);
	qsort(ls->l, ls->n, sizeof(*ls->l), mlog_cmp);
	keyidx_free(&sn.idx);
	free(sn.s);
	buf_free(&loads);
}

static void seq_header(const struct opts *o)
{
	if (o->fmt == FMT_TEXT)
		printf("%-20s %20s %5s %10s %10s %10s %8s %8s %8s %8s %8s %10s\n",
		       "HOST", "LOAD", "CPU", "MADE", "STORED", "MISSING", "RELAY",
		       "CAP", "REFUSED", "SENDER", "INFLIGHT", "TRANSPORT");
	else if (o->fmt == FMT_CSV)
		printf("host,load_id,cpu,made,stored,missing,relay,cap_dropped,refused,sender_lost,in_flight,transport_lost,epochs,missing_ranges,from,accounting\n");
}

static void seq_print(const struct opts *o, struct mlog *l)
{
	const struct acct_log *a = &l->a;
	uint64_t missing = a->made - a->stored, n;
	struct range_out r = { .out = stdout, .fmt = o->fmt, .max = o->ranges };

	switch (o->fmt) {
	case FMT_TEXT:
		printf("%-20s %20llu %5d %10llu %10llu %10llu %8llu %8llu %8llu %8llu %8llu %10llu  by module seq, %u epoch%s",
		       l->host, (unsigned long long)l->load_id, l->cpu,
		       (unsigned long long)a->made, (unsigned long long)a->stored,
		       (unsigned long long)missing, (unsigned long long)a->relay,
		       (unsigned long long)a->cap_dropped,
		       (unsigned long long)a->refused, (unsigned long long)a->sender,
		       (unsigned long long)a->in_flight,
		       (unsigned long long)a->transport, a->epochs,
		       a->epochs == 1 ? "" : "s");
		if (a->no_l1)
			printf(", %u with records and no account (L1)", a->no_l1);
		if (a->overlap)
			printf(", epochs read numbers in common (two readers of one log: a number one skipped may be the other's)");
		if (a->over)
			printf(", the host counts more losses than are missing");
		if (a->from)
			printf(", from %llu (the window's start)", (unsigned long long)a->from);
		printf("\n");
		if (missing) {
			printf("    missing:");
			n = spans_each_gap(&l->stored, a->from, a->from + a->made,
					   print_range, &r);
			if (n > o->ranges)
				printf(" ... (%llu ranges)", (unsigned long long)n);
			printf("\n");
		}
		return;
	case FMT_JSON:
		printf("{\"accounting\":\"module_seq\",\"host\":\"%s\",\"load_id\":%llu,\"cpu\":%d,\"made\":%llu,\"stored\":%llu,\"missing\":%llu,\"relay\":%llu,\"cap_dropped\":%llu,\"refused\":%llu,\"sender_lost\":%llu,\"in_flight\":%llu,\"transport_lost\":%llu,\"epochs\":%u,\"without_account\":%u",
		       l->host, (unsigned long long)l->load_id, l->cpu,
		       (unsigned long long)a->made, (unsigned long long)a->stored,
		       (unsigned long long)missing, (unsigned long long)a->relay,
		       (unsigned long long)a->cap_dropped,
		       (unsigned long long)a->refused, (unsigned long long)a->sender,
		       (unsigned long long)a->in_flight,
		       (unsigned long long)a->transport, a->epochs, a->no_l1);
		if (a->overlap)
			printf(",\"overlap\":true");
		if (a->from)
			printf(",\"from\":%llu", (unsigned long long)a->from);
		printf(",\"missing_ranges\":[");
		n = spans_each_gap(&l->stored, a->from, a->from + a->made,
				   print_range, &r);
		printf("],\"missing_range_count\":%llu", (unsigned long long)n);
		printf("}\n");
		return;
	case FMT_CSV:
		printf("%s,%llu,%d,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%u,",
		       l->host, (unsigned long long)l->load_id, l->cpu,
		       (unsigned long long)a->made, (unsigned long long)a->stored,
		       (unsigned long long)missing, (unsigned long long)a->relay,
		       (unsigned long long)a->cap_dropped,
		       (unsigned long long)a->refused, (unsigned long long)a->sender,
		       (unsigned long long)a->in_flight,
		       (unsigned long long)a->transport, a->epochs);
		spans_each_gap(&l->stored, a->from, a->from + a->made, print_range, &r);
		printf(",%llu,module seq\n", (unsigned long long)a->from);
		return;
	}
}

static void seq_free(struct mlogs *ls)
{
	size_t i;

	for (i = 0; i < ls->n; i++) {
		free(ls->l[i].e);
		spans_free(&ls->l[i].stored);
	}
	free(ls->l);
}

/* ClickHouse's clock, which stamped every arrival (received). */
static uint64_t store_now(struct ch *c)
{
	uint64_t now;

	if (!ch_query_u64(c, "SELECT toUInt32(now()) FORMAT TabSeparated", &now))
		die(EXIT_RUNTIME, "fleet: %s", c->err);
	return now;
}

/*
 * A window that reaches before what the records' retention keeps starts
 * where it does (they were dropped: counted missing, they would show as
 * lost): from --lag after now - keep.records.  Said once.
 */
static void gaps_horizon(struct ch *c, struct opts *o, uint64_t now_s)
{
	uint64_t keep[STORE_NKEEP], h;
	bool found[STORE_NKEEP];
	char when[32], d[32];

	if (!ch_keep_load(c, keep, found))
		die(EXIT_RUNTIME, "fleet: %s", c->err);
	if (!found[KEEP_RECORDS] || !keep[KEEP_RECORDS] || keep[KEEP_RECORDS] >= now_s)
		return;
	h = now_s - keep[KEEP_RECORDS] + o->lag;
	if (o->since >= h)
		return;
	o->since = h;
	if (o->since >= o->until)
		o->until = o->since + 1;
	fmt_time(when, sizeof(when), h * USEC_PER_SEC, false);
	store_keep_fmt(keep[KEEP_RECORDS], d, sizeof(d));
	gaps_note(o, "the window starts at %s: the records' retention (%s) keeps none older (tcprt fleet init --keep)\n",
		  when, d);
}

static int fleet_gaps(const struct opts *opts)
{
	struct opts window = *opts, *o = &window;
	struct centrals cs = { 0 };
	struct accounts as = { .cs = &cs };
	struct mlogs ls = { 0 };
	struct buf in = { 0 };
	struct ch c;
	uint64_t now_s;
	size_t i;

	connect_store(&c, o, STORE_OLDEST);
	now_s = store_now(&c);
	centrals_load(&c, &cs, now_s);
	gaps_horizon(&c, o, now_s);
	/* states as at the window's end */
	if (now_s > o->until)
		now_s = o->until;
	cs.now_s = now_s;
	gaps_view(&c, o, &as, &in);
	if (o->by_epoch) {
		gaps_load(&c, o, in.p, &as);
		keyidx_free(&as.idx);
		gaps_decide(o, &as, now_s);
		qsort(as.a, as.n, sizeof(*as.a), account_cmp);
		mark_concurrent(&as);
		if (o->fmt == FMT_TEXT)
			printf("%-20s %16s %-6s %10s %10s %10s %8s %8s %8s %8s %10s %6s %9s %6s %6s\n",
			       "HOST", "EPOCH", "STATE", "SENT", "RECEIVED", "MISSING",
			       "CAP", "REFUSED", "SENDER", "INFLIGHT", "TRANSPORT",
			       "STORE", "MALFORMED", "MOD_OW", "MOD_SO");
		else if (o->fmt == FMT_CSV)
			printf("host,epoch,state,started,sent,received,missing,cap_dropped,refused,transport_lost,store_refused,malformed,past_last_control,module_overwritten,module_sampled_out,missing_ranges,sender_lost,in_flight,from_seq,accounting\n");
		for (i = 0; i < as.n; i++)
			if (!as.a[i].idle)
				gaps_print(o, &as.a[i]);
	}
	/* the module's numbers: schema 4's, when any log has some */
	if (o->by_seq && !o->by_epoch && c.version < STORE_SEQ)
		gaps_note(o, "the store is of schema %d: records carry the module's numbers from schema %d on (tcprt fleet init)\n",
			  c.version, STORE_SEQ);
	if (o->by_seq && c.version >= STORE_SEQ) {
		seq_load(&c, o, in.p, &ls, &cs, now_s);
		if (ls.n && o->fmt == FMT_TEXT && o->by_epoch)
			printf("\n");
		if (ls.n || !o->by_epoch)
			seq_header(o);
		for (i = 0; i < ls.n; i++)
			seq_print(o, &ls.l[i]);
		seq_free(&ls);
	}
	gaps_bad(&c, o);
	for (i = 0; i < as.n; i++)
		spans_free(&as.a[i].set);
	keyidx_free(&as.idx);
	free(as.a);
	centrals_free(&cs);
	buf_free(&in);
	ch_close(&c);
	return EXIT_OK;
}

/* ---- summary ----------------------------------------------------------------- */

static const unsigned int quantiles[] = { 500, 900, 990, 1000 };

struct srow {
	char key[160];		/* the group's columns, tab-separated */
	uint64_t count;
	struct hist h[M_NMETRICS];
	struct breakdown *bd;	/* its time breakdown, once it has one */
};

struct srows {
	struct srow *r;
	size_t n;
	struct bd_bad bad;	/* the records left out of a split */
};

static struct srow *srow_of(struct srows *s, const char *key)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->r[i].key, key))
			return &s->r[i];
	s->r = xrealloc(s->r, s->n + 1, sizeof(*s->r));
	s->r[s->n] = (struct srow){ 0 };
	snprintf(s->r[s->n].key, sizeof(s->r[0].key), "%s", key);
	return &s->r[s->n++];
}

static void group_cols(struct buf *q, const struct opts *o)
{
	if (o->by_host)
		buf_printf(q, "host, ");
	if (o->by_port)
		buf_printf(q, "port, ");
	buf_printf(q, "role, type");
}

/*
 * The rows of [@from, @to) (Unix seconds): by sec, and by time too, which
 * is toDateTime(sec) and which the partitions (every schema) and, from
 * schema 5, the sort key are on, so that ClickHouse reads the window's
 * parts and granules only.  The same rows while the window ends within
 * DateTime's range (2106): a sec past it wraps in time, and then sec alone
 * decides.
 */
static void sec_where(struct buf *q, uint64_t from, uint64_t to)
{
	buf_printf(q, "sec >= %llu AND sec < %llu", (unsigned long long)from,
		   (unsigned long long)to);
	if (to <= UINT32_MAX)
		buf_printf(q, " AND time >= toDateTime(%llu) AND time < toDateTime(%llu)",
			   (unsigned long long)from, (unsigned long long)to);
}

/* The tasks in view */
static void task_where(struct buf *q, const struct opts *o)
{
	buf_printf(q, "valid = 1 AND type IN ('R', 'W', 'N', 'P') AND ");
	sec_where(q, o->since, o->until);
	if (o->port >= 0)
		buf_printf(q, " AND port = %d", o->port);
	where_host(q, o);
}

static size_t ngroup(const struct opts *o)
{
	return 2 + o->by_host + o->by_port;
}

/* Join the first @n fields back with tabs, as a row's key. */
static void key_of(char **f, size_t n, char *key, size_t size)
{
	size_t i, o = 0;

	key[0] = '\0';
	for (i = 0; i < n && o < size; i++)
		o += (size_t)snprintf(key + o, size - o, "%s%s", i ? "\t" : "", f[i]);
}

/*
 * hist_index() in SQL: v itself below 128; above, with e = floor(log2 v),
 * (e - 6) * 64 + (v >> (e - 6)).  log2 is a Float64: e is corrected when
 * it is off by one (v >> (e - 6) must be in [64, 128)).  It is the log2 of
 * v | 1, the same e for v >= 2 but for that rounding: ClickHouse (18.16)
 * evaluates every branch of multiIf, and v = 0 would give toUInt8 log2's
 * -inf, a conversion C++ leaves undefined (the time breakdown's parts are
 * often 0).
 */
static void bucket_sql(struct buf *q, const char *v)
{
	buf_printf(q,
		   "multiIf(%s < 128, toUInt64(%s), "
		   "bitShiftRight(%s, toUInt8(floor(log2(bitOr(%s, 1)))) - 6) >= 128, "
		   "toUInt64((floor(log2(bitOr(%s, 1))) - 5) * 64 + bitShiftRight(%s, toUInt8(floor(log2(bitOr(%s, 1)))) - 5)), "
		   "bitShiftRight(%s, toUInt8(floor(log2(bitOr(%s, 1)))) - 6) < 64, "
		   "toUInt64((floor(log2(bitOr(%s, 1))) - 7) * 64 + bitShiftRight(%s, toUInt8(floor(log2(bitOr(%s, 1)))) - 7)), "
		   "toUInt64((floor(log2(bitOr(%s, 1))) - 6) * 64 + bitShiftRight(%s, toUInt8(floor(log2(bitOr(%s, 1)))) - 6)))",
		   v, v, v, v, v, v, v, v, v, v, v, v, v, v, v);
}

/* A bucket row of the answer: its group's row, and the rest. */
struct bucket {
	struct srow *row;
	struct bd_bad *bad;		/* the records left out of a split, all rows' */
	const char *type;		/* the row's type: "R", "P", ... */
	unsigned int idx;
	uint64_t count, min, max;
	uint64_t sum[SPLIT_MAX_PARTS + 1];
};

/* The tasks per group, and the records left out of a split (sum 0, 1). */
static void add_counts(const struct bucket *b, unsigned int arg)
{
	(void)arg;
	b->row->count = b->count;
	b->bad->process += b->sum[0];
	b->bad->transfer += b->sum[1];
}

static void add_metric(const struct bucket *b, unsigned int m)
{
	hist_add_bucket(&b->row->h[m], b->idx, b->count, b->min, b->max);
}

/* ---- summary: where the time goes ---------------------------------------------- */

/* The breakdown of @b's row, created with it (R or P). */
static struct breakdown *bd_of(const struct bucket *b)
{
	if (!b->row->bd)
		b->row->bd = bd_new(rec_type_of(b->type[0]) == REC_P ? REC_P : REC_R);
	return b->row->bd;
}

static void add_part(const struct bucket *b, unsigned int e)
{
	hist_add_bucket(&bd_of(b)->part[e - EXT_BREAKDOWN], b->idx, b->count,
			b->min, b->max);
}

static void add_process(const struct bucket *b, unsigned int arg)
{
	(void)arg;
	split_add_bucket(&bd_of(b)->process, b->idx, b->count, b->min, b->max,
			 b->sum);
}

/* sum[3] is the transfers' sum: sending is what the limited parts leave */
static void add_transfer(const struct bucket *b, unsigned int arg)
{
	uint64_t sum[NTRANSFER_PARTS];

	(void)arg;
	memcpy(sum, b->sum, sizeof(sum));
	sum[PART_SENDING] = b->sum[PART_SENDING] - sum[PART_RWND] -
			    sum[PART_SNDBUF] - sum[PART_APP_LIMITED];
	split_add_bucket(&bd_of(b)->transfer, b->idx, b->count, b->min, b->max,
			 sum);
}

/* ---- summary: the query ---------------------------------------------------------- */

/*
 * One series of summary's query, in SQL: the tasks in view it takes
 * (cond), the value it buckets (v) and what it sums per bucket (NULL: 0);
 * add takes each of its buckets, with arg.  bd: the time breakdown's,
 * which only text prints (and asks for).
 */
struct series {
	const char *cond, *v, *sum[SPLIT_MAX_PARTS];
	void (*add)(const struct bucket *b, unsigned int arg);
	unsigned int arg;
	bool bd;
};

/* the bits the series spell: record.h's metrics, store.h's breakdown */
_Static_assert(M_DURATION == 0 && M_PROCESS == 1 && M_UPLOAD == 2 &&
	       M_DOWNLOAD == 3 && M_MIN_RTT == 4 && M_NMETRICS == 5 &&
	       EXT_APP == EXT_RQ_WAIT + 1 && EXT_SQ_WAIT == EXT_RQ_WAIT + 2 &&
	       EXT_RWND_LIMITED == EXT_RQ_WAIT + 3 &&
	       EXT_SNDBUF_LIMITED == EXT_RQ_WAIT + 4 &&
	       EXT_APP_LIMITED == EXT_RQ_WAIT + 5 &&
	       EXT_BD_END == EXT_RQ_WAIT + 6 && STORE_BD_FIELDS == 0x3f &&
	       STORE_BD_PROCESS == 0x40 && STORE_BD_TRANSFER == 0x80,
	       "summary_series spells these bits");

#define RP	"type IN ('R', 'P') AND "

static const struct series summary_series[] = {
	/*
	 * Every task, once (v 0: one bucket); and the records tcprt summary
	 * leaves out of a split (bd_add): R with the three process fields
	 * and a process time whose split does not hold; R and P with the
	 * three limited fields and a transfer whose split does not.
	 */
	{ "1", "0", {
		"type = 'R' AND bitAnd(breakdown, 7) = 7 AND bitAnd(metrics, 2) != 0 AND bitAnd(breakdown, 64) = 0",
		RP "bitAnd(breakdown, 56) = 56 AND bitAnd(metrics, if(type = 'P', 4, 8)) != 0 AND bitAnd(breakdown, 128) = 0",
	  }, add_counts, 0, false },
	{ "bitAnd(metrics, 1) != 0", "duration", { NULL }, add_metric, M_DURATION, false },
	{ "bitAnd(metrics, 2) != 0", "process", { NULL }, add_metric, M_PROCESS, false },
	{ "bitAnd(metrics, 4) != 0", "upload", { NULL }, add_metric, M_UPLOAD, false },
	{ "bitAnd(metrics, 8) != 0", "download", { NULL }, add_metric, M_DOWNLOAD, false },
	{ "bitAnd(metrics, 16) != 0", "min_rtt", { NULL }, add_metric, M_MIN_RTT, false },
	/* the time breakdown of R and P: each field's own values */
	{ RP "bitAnd(breakdown, 1) != 0", "rq_wait", { NULL }, add_part, EXT_RQ_WAIT, true },
	{ RP "bitAnd(breakdown, 2) != 0", "app", { NULL }, add_part, EXT_APP, true },
	{ RP "bitAnd(breakdown, 4) != 0", "sq_wait", { NULL }, add_part, EXT_SQ_WAIT, true },
	{ RP "bitAnd(breakdown, 8) != 0", "rwnd_limited", { NULL }, add_part, EXT_RWND_LIMITED, true },
	{ RP "bitAnd(breakdown, 16) != 0", "sndbuf_limited", { NULL }, add_part, EXT_SNDBUF_LIMITED, true },
	{ RP "bitAnd(breakdown, 32) != 0", "app_limited", { NULL }, add_part, EXT_APP_LIMITED, true },
	/* the process split (R), per bucket of the process time */
	{ "type = 'R' AND bitAnd(breakdown, 64) != 0", "process",
	  { "rq_wait", "app", "sq_wait" }, add_process, 0, true },
	/* the transfer split (R: download, P: upload), per bucket of it */
	{ RP "bitAnd(breakdown, 128) != 0", "if(type = 'P', upload, download)",
	  { "rwnd_limited", "sndbuf_limited", "app_limited",
	    "if(type = 'P', upload, download)" }, add_transfer, 0, true },
};

#undef RP

#define NSERIES		(sizeof(summary_series) / sizeof(summary_series[0]))
#define NSUMS		SPLIT_MAX_PARTS

/* Whether the query asks for @se: the time breakdown's in text only. */
static bool series_asked(const struct opts *o, const struct series *se)
{
	return !se->bd || o->fmt == FMT_TEXT;
}

/*
 * The array of column @col of the series asked: 0 their conditions, 1
 * their values, 2 + i their sums i; -1 their ids.  One type each
 * (ClickHouse's arrays have one).
 */
static void series_array(struct buf *q, const struct opts *o, int col)
{
	const char *sep = "[";
	size_t i;

	for (i = 0; i < NSERIES; i++) {
		const struct series *se = &summary_series[i];

		if (!series_asked(o, se))
			continue;
		if (col < 0)
			buf_printf(q, "%s%zu", sep, i);
		else if (col == 0)
			buf_printf(q, "%stoUInt8(%s)", sep, se->cond);
		else
			buf_printf(q, "%stoUInt64(%s)", sep, col == 1 ? se->v :
				   se->sum[col - 2] ? se->sum[col - 2] : "0");
		sep = ", ";
	}
	buf_printf(q, "]");
}

/*
 * The query: each task in view becomes one row per series (ARRAY JOIN of
 * the series' parallel arrays); those that take it count, per group and
 * series and bucket b of its value, with count(), min(v), max(v) and the
 * sums.  One pass over one snapshot of the store, whatever it holds: the
 * figures of one summary agree with each other.
 */
static void summary_query(struct buf *q, const struct opts *o)
{
	unsigned int i;

	buf_printf(q, "SELECT ");
	group_cols(q, o);
	buf_printf(q, ", sid, ");
	bucket_sql(q, "v");
	buf_printf(q, " AS b, count(), min(v), max(v)");
	for (i = 0; i < NSUMS; i++)
		buf_printf(q, ", sum(s%u)", i);
	buf_printf(q, " FROM (SELECT ");
	group_cols(q, o);
	buf_printf(q, ", ");
	series_array(q, o, -1);
	buf_printf(q, " AS sid, ");
	series_array(q, o, 0);
	buf_printf(q, " AS ok, ");
	series_array(q, o, 1);
	buf_printf(q, " AS v");
	for (i = 0; i < NSUMS; i++) {
		buf_printf(q, ", ");
		series_array(q, o, 2 + (int)i);
		buf_printf(q, " AS s%u", i);
	}
	buf_printf(q, " FROM tcprt.records FINAL WHERE ");
	task_where(q, o);
	buf_printf(q, ") ARRAY JOIN sid, ok, v");
	for (i = 0; i < NSUMS; i++)
		buf_printf(q, ", s%u", i);
	buf_printf(q, " WHERE ok = 1 GROUP BY ");
	group_cols(q, o);
	buf_printf(q, ", sid, b FORMAT TabSeparated");
}

/* Each bucket of the answer to its series' adder. */
static void summary_load(struct ch *c, const struct opts *o, struct srows *s)
{
	struct buf q = { 0 }, ans = { 0 };
	char *row, *f[16], key[160];
	size_t pos = 0, g = ngroup(o), i;

	summary_query(&q, o);
	query(c, q.p, &ans);
	while ((row = ch_row(&ans, &pos))) {
		const struct series *se;
		struct bucket b;
		uint64_t sid;

		if (ch_fields(row, f, 16) != g + 5 + NSUMS)
			continue;
		sid = u64(f[g]);
		if (sid >= NSERIES)
			continue;
		se = &summary_series[sid];
		key_of(f, g, key, sizeof(key));
		b = (struct bucket){ .row = srow_of(s, key), .bad = &s->bad,
				     .type = f[g - 1],
				     .idx = (unsigned int)u64(f[g + 1]),
				     .count = u64(f[g + 2]), .min = u64(f[g + 3]),
				     .max = u64(f[g + 4]) };
		for (i = 0; i < NSUMS; i++)
			b.sum[i] = u64(f[g + 5 + i]);
		se->add(&b, se->arg);
	}
	buf_free(&q);
	buf_free(&ans);
}

/* A row named for its block: "port 7700 server R", "host web-1 port 80 server R". */
static void row_label(const struct opts *o, char **f, char *buf, size_t len)
{
	if (o->by_host && o->by_port)
		snprintf(buf, len, "host %s port %s %s %s", f[0], f[1], f[2], f[3]);
	else
		snprintf(buf, len, "%s %s %s %s", o->by_host ? "host" : "port",
			 f[0], f[1], f[2]);
}

/* After the table, as tcprt summary: each row's "where the time goes". */
static void summary_blocks(const struct opts *o, const struct srows *s)
{
	char key[160], label[256], *f[4];
	bool first = true;
	size_t i;

	for (i = 0; i < s->n; i++) {
		const struct srow *r = &s->r[i];

		if (!r->bd)
			continue;
		snprintf(key, sizeof(key), "%s", r->key);
		if (ch_fields(key, f, 4) != ngroup(o))
			continue;
		if (first)
			putchar('\n');
		first = false;
		row_label(o, f, label, sizeof(label));
		bd_print(stdout, r->bd, label, r->count);
		putchar('\n');
	}
}

static int srow_cmp(const void *x, const void *y)
{
	const struct srow *a = x, *b = y;

	return strcmp(a->key, b->key);
}

static void summary_print(const struct opts *o, struct srows *s)
{
	uint64_t span = o->until - o->since;
	char *f[4], key[160];
	size_t i, g = ngroup(o), k;
	unsigned int m, q;

	if (o->fmt == FMT_TEXT) {
		char a[32], b[32];

		fmt_time(a, sizeof(a), o->since * USEC_PER_SEC, false);
		fmt_time(b, sizeof(b), o->until * USEC_PER_SEC, false);
		printf("# fleet %s .. %s (%llu s); times in microseconds\n", a, b,
		       (unsigned long long)span);
		if (o->by_host)
			printf("%-20s ", "HOST");
		if (o->by_port)
			printf("%-6s ", "PORT");
		printf("%-6s %-4s %10s %10s  %-9s %9s %9s %9s %9s\n", "ROLE",
		       "TYPE", "COUNT", "RATE/S", "METRIC", "P50", "P90", "P99",
		       "MAX");
	} else if (o->fmt == FMT_CSV) {
		printf("%s%srole,type,count,rate", o->by_host ? "host," : "",
		       o->by_port ? "port," : "");
		for (m = 0; m < M_NMETRICS; m++)
			printf(",%s_p50,%s_p90,%s_p99,%s_max", metric_name[m],
			       metric_name[m], metric_name[m], metric_name[m]);
		printf("\n");
	}
	for (i = 0; i < s->n; i++) {
		struct srow *r = &s->r[i];
		uint64_t rate_milli = r->count * 1000 / span;

		snprintf(key, sizeof(key), "%s", r->key);
		k = ch_fields(key, f, 4);
		if (k != g)
			continue;
		switch (o->fmt) {
		case FMT_TEXT:
			for (m = 0; m < M_NMETRICS; m++) {
				/* every line whole, as tcprt summary prints them */
				for (k = 0; k < g - 2; k++)
					printf(k == 0 && o->by_host ? "%-20s " : "%-6s ", f[k]);
				printf("%-6s %-4s %10llu %6llu.%03llu", f[g - 2],
				       f[g - 1], (unsigned long long)r->count,
				       (unsigned long long)(rate_milli / 1000),
				       (unsigned long long)(rate_milli % 1000));
				printf("  %-9s", metric_name[m]);
				for (q = 0; q < 4; q++) {
					if (r->h[m].n)
						printf(" %9llu", (unsigned long long)
						       hist_quantile(&r->h[m], quantiles[q]));
					else
						printf(" %9s", "-");
				}
				printf("\n");
			}
			break;
		case FMT_JSON:
			printf("{");
			if (o->by_host)
				printf("\"host\":\"%s\",", f[0]);
			if (o->by_port)
				printf("\"port\":%s,", f[o->by_host]);
			printf("\"role\":\"%s\",\"type\":\"%s\",\"count\":%llu,\"rate\":%llu.%03llu,\"since\":%llu,\"until\":%llu",
			       f[g - 2], f[g - 1], (unsigned long long)r->count,
			       (unsigned long long)(rate_milli / 1000),
			       (unsigned long long)(rate_milli % 1000),
			       (unsigned long long)o->since,
			       (unsigned long long)o->until);
			for (m = 0; m < M_NMETRICS; m++) {
				if (!r->h[m].n)
					continue;
				printf(",\"%s\":{\"n\":%llu", metric_name[m],
				       (unsigned long long)r->h[m].n);
				for (q = 0; q < 4; q++)
					printf(",\"%s\":%llu",
					       q == 3 ? "max" : q == 0 ? "p50" : q == 1 ? "p90" : "p99",
					       (unsigned long long)hist_quantile(&r->h[m], quantiles[q]));
				printf("}");
			}
			printf("}\n");
			break;
		case FMT_CSV:
			for (k = 0; k < g; k++)
				printf("%s,", f[k]);
			printf("%llu,%llu.%03llu", (unsigned long long)r->count,
			       (unsigned long long)(rate_milli / 1000),
			       (unsigned long long)(rate_milli % 1000));
			for (m = 0; m < M_NMETRICS; m++)
				for (q = 0; q < 4; q++) {
					if (r->h[m].n)
						printf(",%llu", (unsigned long long)
						       hist_quantile(&r->h[m], quantiles[q]));
					else
						printf(",");
				}
			printf("\n");
			break;
		}
	}
}

static int fleet_summary(const struct opts *o)
{
	struct srows s = { 0 };
	struct ch c;
	size_t i;
	unsigned int m;

	connect_store(&c, o, STORE_BREAKDOWN);
	summary_load(&c, o, &s);
	qsort(s.r, s.n, sizeof(*s.r), srow_cmp);
	summary_print(o, &s);
	/* the time breakdown's blocks: text only, as tcprt summary's */
	if (o->fmt == FMT_TEXT)
		summary_blocks(o, &s);
	fflush(stdout);
	if (o->fmt == FMT_TEXT)
		bd_report_bad(&s.bad);
	for (i = 0; i < s.n; i++) {
		for (m = 0; m < M_NMETRICS; m++)
			hist_reset(&s.r[i].h[m]);
		bd_free(s.r[i].bd);
	}
	free(s.r);
	ch_close(&c);
	return EXIT_OK;
}

/* ---- series ---------------------------------------------------------------------- */

#define SERIES_ROWS_MAX	1000000	/* fleet series: rows read at most */
#define PLOT_HOSTS	16	/* fleet series --plot: hosts drawn at most */

/*
 * The series runs shipped (ship --series, docs/fleet.md): a row of type S
 * per line, role host ('*'), server (a port) or client (P<port>), sec and
 * usec the bucket's start, duration its width.  A run shipped twice (a
 * ship killed mid-run sends it again under a new epoch) has its lines
 * twice, under other numbers, which FINAL does not merge: so one row per
 * bucket of a host's series line first, any of its copies (l), and only
 * then what is asked of them.  @where: the rows' condition.
 */
static void series_dedup(struct buf *q, const char *where)
{
	buf_printf(q, "(SELECT host, role, port, sec, usec, duration, any(line) AS l FROM tcprt.records FINAL WHERE valid = 1 AND type = 'S' AND %s GROUP BY host, sec, usec, role, port, duration)",
		   where);
}

/* The series line of @role ("host": '*') and @port; with @host_too, and the
 * host's line besides. */
static void series_key_where(struct buf *q, const char *role, int port,
			     bool host_too)
{
	if (!strcmp(role, "host"))
		buf_printf(q, " AND role = 'host'");
	else if (host_too)
		buf_printf(q, " AND ((role = '%s' AND port = %d) OR role = 'host')",
			   role, port);
	else
		buf_printf(q, " AND role = '%s' AND port = %d", role, port);
}

/* Measure @k of series_field_name in the line l: the first 12 by position
 * (after sec, usec and port), series_ext's by name (0 when the run did not
 * keep it). */
static void measure_sql(struct buf *q, int k)
{
	if (k < SERIES_NBASE)
		buf_printf(q, "toInt64OrZero(splitByChar(' ', l)[%d])", k + 4);
	else
		buf_printf(q, "toInt64OrZero(extract(l, ' %s=([0-9]+)'))",
			   series_field_name[k]);
}

/* fleet series: per instant, width and host, the measure; one more row
 * than the cap, which says it was hit */
static void series_query(struct buf *q, const struct opts *o)
{
	struct buf w = { 0 };

	sec_where(&w, o->since, o->until);
	series_key_where(&w, o->series_role, o->port, false);
	where_host(&w, o);
	buf_printf(q, "SELECT sec, usec, duration, host, sum(");
	measure_sql(q, o->measure);
	buf_printf(q, ") FROM ");
	series_dedup(q, w.p);
	buf_printf(q, " GROUP BY sec, usec, duration, host ORDER BY sec, usec, duration, host LIMIT %d FORMAT TabSeparated",
		   SERIES_ROWS_MAX + 1);
	buf_free(&w);
}

struct spoint {
	uint64_t t_us, width_us;	/* the bucket */
	size_t col;			/* its host's column */
	long long v;
};

struct scol {
	char host[72];		/* keyidx: the key first */
	size_t id;		/* its column as loaded */
	int width;		/* text: the widest of the name and the values */
};

struct sgrid {
	struct spoint *p;	/* by instant, width, host */
	size_t n, cap;
	struct scol *c;		/* once loaded, by host name */
	size_t nc;
	struct keyidx idx;
	uint64_t cut_us;	/* the cap hit: the first instant left out */
	bool capped;
};

static size_t scol_of(struct sgrid *g, const char *host)
{
	char key[sizeof(g->c->host)];
	size_t i;

	/* looked up as it is kept, a host id too long for it cut alike */
	snprintf(key, sizeof(key), "%s", host);
	i = keyidx_find(&g->idx, key, g->c, g->nc, sizeof(*g->c));
	if (i == g->nc) {
		g->c = xrealloc(g->c, g->nc + 1, sizeof(*g->c));
		g->c[i] = (struct scol){ .id = i, .width = 1 };
		memcpy(g->c[i].host, key, sizeof(key));
		g->nc++;
	}
	return i;
}

/* The cap hit by the row of instant @t_us, width @width_us: what is shown
 * ends before that instant, so that its hosts show all or none. */
static void series_cut(struct sgrid *g, uint64_t t_us, uint64_t width_us)
{
	g->capped = true;
	g->cut_us = t_us;
	while (g->n && g->p[g->n - 1].t_us == t_us &&
	       g->p[g->n - 1].width_us == width_us)
		g->n--;
}

static void series_add(struct sgrid *g, char **f)
{
	uint64_t t_us = u64(f[0]) * USEC_PER_SEC + u64(f[1]);
	uint64_t width_us = u64(f[2]);
	struct spoint *p;
	int len;

	if (g->n == SERIES_ROWS_MAX) {
		if (!g->capped)
			series_cut(g, t_us, width_us);
		return;
	}
	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 1024;
		g->p = xrealloc(g->p, g->cap, sizeof(*g->p));
	}
	p = &g->p[g->n++];
	*p = (struct spoint){ .t_us = t_us, .width_us = width_us,
			      .col = scol_of(g, f[3]),
			      .v = strtoll(f[4], NULL, 10) };
	len = snprintf(NULL, 0, "%lld", p->v);
	if (len > g->c[p->col].width)
		g->c[p->col].width = len;
}

static int scol_cmp(const void *x, const void *y)
{
	return strcmp(((const struct scol *)x)->host, ((const struct scol *)y)->host);
}

/* The columns by host name, the rows' with them; the index is done with.
 * The header's name is the widest too. */
static void scol_sort(struct sgrid *g)
{
	size_t *to = xcalloc(g->nc ? g->nc : 1, sizeof(*to));
	size_t i;

	keyidx_free(&g->idx);
	qsort(g->c, g->nc, sizeof(*g->c), scol_cmp);
	for (i = 0; i < g->nc; i++) {
		to[g->c[i].id] = i;
		if ((int)strlen(g->c[i].host) > g->c[i].width)
			g->c[i].width = (int)strlen(g->c[i].host);
	}
	for (i = 0; i < g->n; i++)
		g->p[i].col = to[g->p[i].col];
	free(to);
}

static void series_load(struct ch *c, const struct opts *o, struct sgrid *g)
{
	struct buf q = { 0 }, ans = { 0 };
	char *row, *f[6];
	size_t pos = 0;

	series_query(&q, o);
	query(c, q.p, &ans);
	while ((row = ch_row(&ans, &pos)))
		if (ch_fields(row, f, 6) == 5)
			series_add(g, f);
	scol_sort(g);
	buf_free(&q);
	buf_free(&ans);
}

static bool same_instant(const struct spoint *a, const struct spoint *b)
{
	return a->t_us == b->t_us && a->width_us == b->width_us;
}

/* text: a line per instant and width, a column per host ('-': no row) */
static void series_text(const struct sgrid *g)
{
	bool *has = xcalloc(g->nc ? g->nc : 1, sizeof(*has));
	long long *v = xcalloc(g->nc ? g->nc : 1, sizeof(*v));
	char when[40];
	size_t i, j, k;

	printf("%-27s %6s", "TIME", "WIDTH");
	for (k = 0; k < g->nc; k++)
		printf(" %*s", g->c[k].width, g->c[k].host);
	printf("\n");
	for (i = 0; i < g->n; i = j) {
		for (j = i; j < g->n && same_instant(&g->p[i], &g->p[j]); j++) {
			has[g->p[j].col] = true;
			v[g->p[j].col] = g->p[j].v;
		}
		fmt_time(when, sizeof(when), g->p[i].t_us, true);
		printf("%-27s %6llu", when, (unsigned long long)g->p[i].width_us);
		for (k = 0; k < g->nc; k++)
			if (has[k])
				printf(" %*lld", g->c[k].width, v[k]);
			else
				printf(" %*s", g->c[k].width, "-");
		printf("\n");
		for (k = i; k < j; k++)
			has[g->p[k].col] = false;
	}
	free(has);
	free(v);
}

static void series_print(const struct opts *o, const struct sgrid *g)
{
	const char *m = series_field_name[o->measure];
	size_t i;

	if (o->fmt == FMT_TEXT) {
		series_text(g);
		return;
	}
	if (o->fmt == FMT_CSV)
		printf("sec,usec,width_us,host,%s\n", m);
	for (i = 0; i < g->n; i++) {
		const struct spoint *p = &g->p[i];
		unsigned long long sec = p->t_us / USEC_PER_SEC;
		unsigned long long usec = p->t_us % USEC_PER_SEC;

		if (o->fmt == FMT_CSV)
			printf("%llu,%llu,%llu,%s,%lld\n", sec, usec,
			       (unsigned long long)p->width_us,
			       g->c[p->col].host, p->v);
		else
			printf("{\"sec\":%llu,\"usec\":%llu,\"width_us\":%llu,\"host\":\"%s\",\"%s\":%lld}\n",
			       sec, usec, (unsigned long long)p->width_us,
			       g->c[p->col].host, m, p->v);
	}
}

/* The plot's data: a block per host drawn ($h0 ...), each bar at its
 * host's share of its bucket, so that the hosts of one instant stand side
 * by side. */
static void plot_data(FILE *gp, const struct sgrid *g, size_t nplot)
{
	uint64_t t0 = g->p[0].t_us;
	size_t k, i;

	for (k = 0; k < nplot; k++) {
		fprintf(gp, "$h%zu << EOD\n", k);
		for (i = 0; i < g->n; i++) {
			const struct spoint *p = &g->p[i];

			if (p->col != k)
				continue;
			fprintf(gp, "%.4f %lld\n", ((double)(p->t_us - t0) +
				(double)p->width_us * ((double)k + 0.5) /
				(double)nplot) / 1000.0, p->v);
		}
		fprintf(gp, "EOD\n");
	}
}

/* --plot: the measure per host along the window (ms from its first row) */
static int series_plot(const struct opts *o, const struct sgrid *g)
{
	size_t nplot = g->nc < PLOT_HOSTS ? g->nc : PLOT_HOSTS, k;
	char a[40], b[40], first[40];
	FILE *gp;

	if (g->nc > nplot)
		warnx_("the plot draws %zu hosts of %zu, the first by name (--host picks one)",
		       nplot, g->nc);
	gp = gnuplot_open();
	if (!gp)
		return -1;
	fmt_time(a, sizeof(a), o->since * USEC_PER_SEC, false);
	fmt_time(b, sizeof(b), o->until * USEC_PER_SEC, false);
	fmt_time(first, sizeof(first), g->p[0].t_us, true);
	fprintf(gp, "set terminal pngcairo noenhanced size 1200,600 font ',10'\n"
		"set output '%s'\n", o->png);
	plot_data(gp, g, nplot);
	fprintf(gp, "set title 'tcprt fleet series: %s of port %s, %s to %s'\n"
		"set grid\n"
		"set key top right\n"
		"set lmargin 12\n"
		"set ylabel '%s'\n"
		"set xlabel 'ms from %s (a bucket: the hosts side by side)'\n"
		"plot ", series_field_name[o->measure], o->series_key, a, b,
		series_field_name[o->measure], first);
	for (k = 0; k < nplot; k++)
		fprintf(gp, "%s$h%zu using 1:2 with impulses lw 2 title '%s'",
			k ? ", " : "", k, g->c[k].host);
	fprintf(gp, "\n");
	return gnuplot_close(gp, o->png);
}

static void sgrid_free(struct sgrid *g)
{
	free(g->p);
	free(g->c);
}

/*
 * The hosts' buckets side by side: per instant and width, the measure of
 * each host's line of the port asked.  With --plot, the table only when
 * --format asks for it (as tcprt series).
 */
static int fleet_series(const struct opts *o)
{
	struct sgrid g = { 0 };
	char when[40];
	struct ch c;
	int ret = EXIT_OK;

	connect_store(&c, o, STORE_OLDEST);
	series_load(&c, o, &g);
	ch_close(&c);
	if (!o->png || o->fmt_set)
		series_print(o, &g);
	if (fflush(stdout) == EOF)
		die(EXIT_RUNTIME, "fleet: writing the output: %s", strerror(errno));
	if (g.capped) {
		fmt_time(when, sizeof(when), g.cut_us, true);
		warnx_("fleet series: %d rows read at most: none shown from %s on (narrow --since/--until, or --host)",
		       SERIES_ROWS_MAX, when);
	}
	if (!g.n) {
		warnx_("no series rows in the window (ship --series ships the runs tcprt series --every keeps)%s",
		       o->png ? ": no plot" : "");
		ret = o->png ? EXIT_RUNTIME : EXIT_OK;
	} else if (o->png && series_plot(o, &g) < 0) {
		ret = EXIT_RUNTIME;
	}
	sgrid_free(&g);
	return ret;
}

/* ---- top ------------------------------------------------------------------------- */

static const char *const top_cols[] = {
	"host", "epoch", "seq", "sec", "usec", "type", "role", "port",
	"peer_addr", "peer_port", "local_addr", "local_port", "duration",
	"upload", "process", "download", "min_rtt", "sent_bytes",
	"recv_bytes", "retrans",
};

#define NTOP (sizeof(top_cols) / sizeof(top_cols[0]))

static bool top_numeric(size_t i)
{
	return i != 0 && i != 5 && i != 6 && i != 8 && i != 10;
}

#define AROUND_US	10000	/* top --series: from 10 ms before a task to
				 * 10 ms after it */
#define AROUND_MAX	1000	/* its series rows shown at most */

/* top --series' columns of a series row: series_field_name's bytes_in ...
 * done, and open; and their width in text */
static const int around_field[] = { 0, 1, 2, 3, 4, 5, 6, 11 };
static const int around_width[] = { 10, 10, 7, 8, 7, 7, 5, 5 };

#define NAROUND (sizeof(around_field) / sizeof(around_field[0]))

/*
 * The series rows of @host's line of @role's @port and of its '*' line
 * whose bucket overlaps [@lo, @hi) (us): the seconds around it bound the
 * rows read (a bucket is 10 ms wide at most: series_us), the buckets' own
 * start and width the rows kept.
 */
static void around_query(struct buf *q, const char *host, const char *role,
			 int port, uint64_t lo, uint64_t hi)
{
	uint64_t lo_s = lo / USEC_PER_SEC;
	struct buf w = { 0 };

	sec_where(&w, lo_s ? lo_s - 1 : 0, hi / USEC_PER_SEC + 1);
	buf_printf(&w, " AND host = '%s'", host);
	series_key_where(&w, role, port, true);
	buf_printf(q, "SELECT l, duration FROM ");
	series_dedup(q, w.p);
	buf_printf(q, " WHERE sec * 1000000 + usec < %llu AND sec * 1000000 + usec + duration > %llu ORDER BY sec, usec, role = 'host', duration LIMIT %d FORMAT TabSeparated",
		   (unsigned long long)hi, (unsigned long long)lo, AROUND_MAX + 1);
	buf_free(&w);
}

/* One series row around a task; @in: its bucket overlaps the task */
static void around_print(const struct opts *o, const struct series_row *r,
			 size_t n, bool in)
{
	char when[40];
	size_t i;

	if (o->fmt == FMT_JSON) {
		printf("%s{\"sec\":%llu,\"usec\":%llu,\"port\":\"%s\",\"width_us\":%llu",
		       n ? "," : "", (unsigned long long)(r->t_us / USEC_PER_SEC),
		       (unsigned long long)(r->t_us % USEC_PER_SEC), r->port,
		       (unsigned long long)r->width_us);
		for (i = 0; i < NAROUND; i++)
			printf(",\"%s\":%lld", series_field_name[around_field[i]],
			       r->v[around_field[i]]);
		printf(",\"in_task\":%s}", in ? "true" : "false");
		return;
	}
	if (!n) {
		printf("      %-27s %6s %6s", "time", "port", "width");
		for (i = 0; i < NAROUND; i++)
			printf(" %*s", around_width[i], series_field_name[around_field[i]]);
		printf("\n");
	}
	fmt_time(when, sizeof(when), r->t_us, true);
	printf("    %c %-27s %6s %6llu", in ? '*' : ' ', when, r->port,
	       (unsigned long long)r->width_us);
	for (i = 0; i < NAROUND; i++)
		printf(" %*lld", around_width[i], r->v[around_field[i]]);
	printf("\n");
}

/*
 * top --series: the stored series rows of the task's host around the task
 * (@f: top_cols), its port's line (the task's role and port: a client
 * task's is P<port>) and the host's; text after its line, json as its
 * array "series".
 */
static void top_around(struct ch *c, const struct opts *o, char **f)
{
	uint64_t start = u64(f[3]) * USEC_PER_SEC + u64(f[4]);
	uint64_t end = start + u64(f[12]);
	const char *role = !strcmp(f[6], "server") || !strcmp(f[6], "client") ?
			   f[6] : "host";
	struct buf q = { 0 }, ans = { 0 };
	struct series_row r;
	unsigned int ext;
	size_t pos = 0, n = 0;
	char *row, *g[3];
	bool more = false;

	/* a host id the store holds is one (ingest checks them): else none */
	if (frame_host_ok(f[0])) {
		around_query(&q, f[0], role, (int)u64(f[7]),
			     start > AROUND_US ? start - AROUND_US : 0,
			     end + AROUND_US);
		query(c, q.p, &ans);
	}
	if (o->fmt == FMT_JSON)
		printf(",\"series\":[");
	while ((row = ch_row(&ans, &pos))) {
		ext = 0;
		if (ch_fields(row, g, 3) != 2 || !series_line_parse(g[0], &r, &ext))
			continue;
		if (n == AROUND_MAX) {
			more = true;
			break;
		}
		r.width_us = u64(g[1]);
		around_print(o, &r, n++, r.t_us < end && r.t_us + r.width_us > start);
	}
	if (o->fmt == FMT_JSON)
		printf("]");
	else if (!n)
		printf("   (no series rows around it)\n");
	else if (more)
		printf("   (the first %d series rows around it)\n", AROUND_MAX);
	buf_free(&q);
	buf_free(&ans);
}

static int fleet_top(const struct opts *o)
{
	struct buf q = { 0 }, ans = { 0 };
	char *row, *f[NTOP + 1], when[40];
	size_t pos = 0, i;
	struct ch c;

	connect_store(&c, o, STORE_OLDEST);
	buf_printf(&q, "SELECT ");
	for (i = 0; i < NTOP; i++)
		buf_printf(&q, "%s%s", i ? ", " : "", top_cols[i]);
	buf_printf(&q, " FROM tcprt.records FINAL WHERE ");
	task_where(&q, o);
	buf_printf(&q, " AND bitAnd(metrics, 1) != 0 ORDER BY duration DESC, host, epoch, seq LIMIT %llu FORMAT TabSeparated",
		   (unsigned long long)o->count);
	query(&c, q.p, &ans);
	if (o->fmt == FMT_TEXT)
		printf("%-27s %-20s %-4s %-6s %5s %-24s %10s %10s %10s %10s %8s\n",
		       "START", "HOST", "TYPE", "ROLE", "PORT", "PEER",
		       "DURATION", "UPLOAD", "PROCESS", "DOWNLOAD", "MIN_RTT");
	else if (o->fmt == FMT_CSV)
		for (i = 0; i < NTOP; i++)
			printf("%s%s", top_cols[i], i + 1 < NTOP ? "," : "\n");
	while ((row = ch_row(&ans, &pos))) {
		if (ch_fields(row, f, NTOP + 1) != NTOP)
			continue;
		switch (o->fmt) {
		case FMT_TEXT: {
			char peer[80];
			bool v6 = strchr(f[8], ':') != NULL;

			fmt_time(when, sizeof(when), u64(f[3]) * USEC_PER_SEC + u64(f[4]), true);
			snprintf(peer, sizeof(peer), "%s%s%s:%s", v6 ? "[" : "", f[8],
				 v6 ? "]" : "", f[9]);
			printf("%-27s %-20s %-4s %-6s %5s %-24s %10s %10s %10s %10s %8s\n",
			       when, f[0], f[5], f[6], f[7], peer, f[12], f[13],
			       f[14], f[15], f[16]);
			if (o->series)
				top_around(&c, o, f);
			break;
		}
		case FMT_JSON:
			printf("{");
			for (i = 0; i < NTOP; i++)
				printf(top_numeric(i) ? "%s\"%s\":%s" : "%s\"%s\":\"%s\"",
				       i ? "," : "", top_cols[i], f[i]);
			if (o->series)
				top_around(&c, o, f);
			printf("}\n");
			break;
		case FMT_CSV:
			for (i = 0; i < NTOP; i++)
				printf("%s%s", f[i], i + 1 < NTOP ? "," : "\n");
			break;
		}
	}
	buf_free(&q);
	buf_free(&ans);
	ch_close(&c);
	return EXIT_OK;
}

/* ---- reached ------------------------------------------------------------------- */

/*
 * The share of the module's records that reached the store, per host and
 * hour: the view tcprt.reached (fleet/schema.sql), which a dashboard
 * queries alike, so that both say the same.
 */
static int fleet_reached(const struct opts *o)
{
	struct buf q = { 0 }, ans = { 0 };
	char *row, *f[6], when[40];
	size_t pos = 0;
	struct ch c;

	connect_store(&c, o, STORE_SEQ);
	/* the hours that hold [since, until) */
	buf_printf(&q, "SELECT host, toUInt32(hour), stored, made FROM tcprt.reached WHERE hour >= toStartOfHour(toDateTime(%llu)) AND hour < toDateTime(%llu)",
		   (unsigned long long)o->since, (unsigned long long)o->until);
	where_host(&q, o);
	buf_printf(&q, " ORDER BY host, hour FORMAT TabSeparated");
	query(&c, q.p, &ans);
	if (o->fmt == FMT_TEXT)
		printf("%-20s %-20s %12s %12s %9s\n", "HOST", "HOUR", "STORED", "MADE",
		       "REACHED");
	else if (o->fmt == FMT_CSV)
		printf("host,hour,stored,made,share\n");
	while ((row = ch_row(&ans, &pos))) {
		uint64_t stored, made;
		double share;

		if (ch_fields(row, f, 6) != 4)
			continue;
		fmt_time(when, sizeof(when), u64(f[1]) * USEC_PER_SEC, false);
		stored = u64(f[2]);
		made = u64(f[3]);
		share = made ? (double)stored / (double)made : 0;
		switch (o->fmt) {
		case FMT_TEXT:
			printf("%-20s %-20s %12llu %12llu %8.3f%%\n", f[0], when,
			       (unsigned long long)stored, (unsigned long long)made,
			       100 * share);
			break;
		case FMT_JSON:
			printf("{\"host\":\"%s\",\"hour\":\"%s\",\"stored\":%llu,\"made\":%llu,\"share\":%.6f}\n",
			       f[0], when, (unsigned long long)stored,
			       (unsigned long long)made, share);
			break;
		case FMT_CSV:
			printf("%s,%s,%llu,%llu,%.6f\n", f[0], when,
			       (unsigned long long)stored, (unsigned long long)made,
			       share);
			break;
		}
	}
	buf_free(&q);
	buf_free(&ans);
	ch_close(&c);
	return EXIT_OK;
}

/* ---- init, schema ------------------------------------------------------------ */

/*
 * Retention: what --keep says; on a new store, the defaults (an upgraded
 * one keeps its rows until told: no surprise on upgrade).  Then say it.
 */
static void init_keep(struct ch *c, const struct opts *o, bool new_store)
{
	uint64_t keep[STORE_NKEEP];
	bool set[STORE_NKEEP], given = false;
	char d[32];
	size_t t;

	for (t = 0; t < STORE_NKEEP; t++) {
		given |= o->keep_set[t];
		keep[t] = new_store && !o->keep_set[t] ? store_keep_of[t].dflt : o->keep[t];
		set[t] = new_store || o->keep_set[t];
	}
	if ((given || new_store) && !ch_keep_store(c, keep, set))
		die(EXIT_RUNTIME, "fleet init: %s", c->err);
	if (!ch_keep_load(c, keep, set))
		die(EXIT_RUNTIME, "fleet init: %s", c->err);
	printf("retention:");
	for (t = 0; t < STORE_NKEEP; t++) {
		store_keep_fmt(set[t] ? keep[t] : 0, d, sizeof(d));
		printf("%s %s %s", t ? "," : "", store_keep_of[t].table, d);
	}
	printf(" (tcprt fleet expire drops what is older; fleet init --keep changes it)\n");
}

static int fleet_init(const struct opts *o)
{
	struct ch_init done;
	struct ch c;
	size_t t;

	open_store(&c, o);
	done.cluster = o->cluster;
	if (!ch_init_schema(&c, &done))
		die(EXIT_RUNTIME, "fleet init: %s", c.err);
	if (!ch_check_schema(&c, STORE_VERSION))
		die(EXIT_RUNTIME, "fleet init: %s", c.err);
	for (t = 0; t < store_ntables; t++)
		if (done.added[t])
			printf("tcprt.%s: %u column%s added\n", store_tables[t],
			       done.added[t], done.added[t] == 1 ? "" : "s");
	if (done.from && done.from < STORE_VERSION)
		printf("tcprt schema upgraded from %d to %d: the new columns are 0 in the rows loaded before\n",
		       done.from, STORE_VERSION);
	printf("tcprt schema %d ready in ClickHouse at %s", STORE_VERSION, c.shown);
	if (c.cluster[0])
		printf(", on its cluster %s", c.cluster);
	printf("\n");
	init_keep(&c, o, !done.from);
	ch_close(&c);
	return EXIT_OK;
}

/* fleet schema [--cluster NAME]: the SQL fleet init runs on a new store */
static int fleet_schema(int argc, char **argv)
{
	struct buf sql = { 0 };
	char err[200];

	if (argc == 2) {
		fputs(ch_schema_sql, stdout);
		return EXIT_OK;
	}
	if (argc != 4 || strcmp(argv[2], "--cluster"))
		usage_error("fleet", "fleet schema takes --cluster NAME alone");
	if (!store_cluster_name_ok(argv[3]))
		usage_error("fleet", "--cluster: '%s' is not a cluster's name (1 to %d of [A-Za-z0-9_], as remote_servers has it)",
			    argv[3], STORE_CLUSTER_MAX - 1);
	if (!store_cluster_sql(ch_schema_sql, argv[3], &sql, err, sizeof(err)))
		die(EXIT_RUNTIME, "fleet schema: %s", err);
	fwrite(sql.p, 1, sql.len, stdout);
	buf_free(&sql);
	return EXIT_OK;
}

int cmd_fleet(int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : NULL;
	struct opts o;

	if (!sub)
		usage_error("fleet", "which query? init, schema, key, expire, gaps, reached, summary, top or series");
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h")) {
		fputs(help, stdout);
		return EXIT_OK;
	}
	if (!strcmp(sub, "schema"))
		return fleet_schema(argc, argv);
	if (!strcmp(sub, "key"))
		return fleet_key(argc, argv);
	if (!strcmp(sub, "expire"))
		return fleet_expire(argc, argv);
	if (strcmp(sub, "init") && strcmp(sub, "gaps") && strcmp(sub, "summary") &&
	    strcmp(sub, "top") && strcmp(sub, "reached") && strcmp(sub, "series"))
		usage_error("fleet", "no query '%s' (init, schema, key, expire, gaps, reached, summary, top, series)", sub);
	parse_opts(argc, argv, &o);
	if (!strcmp(sub, "init"))
		return fleet_init(&o);
	if (!strcmp(sub, "gaps"))
		return fleet_gaps(&o);
	if (!strcmp(sub, "summary"))
		return fleet_summary(&o);
	if (!strcmp(sub, "reached"))
		return fleet_reached(&o);
	if (!strcmp(sub, "series"))
		return fleet_series(&o);
	return fleet_top(&o);
}
