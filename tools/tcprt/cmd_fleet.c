// SPDX-License-Identifier: GPL-2.0
/*
 * tcprt fleet: the central store's answers (docs/fleet.md).
 *
 *   init      create the schema (fleet/schema.sql) in ClickHouse, or
 *             upgrade an older one
 *   schema    print it
 *   gaps      per host and epoch: sent, received, missing and why; per
 *             host, load and CPU, by the module's own numbers, alike
 *   reached   the share of the module's records stored, per host and hour
 *   summary   tcprt summary's table over the fleet's records, and its
 *             "where the time goes" blocks
 *   top       the slowest tasks
 *
 * Every query reads with FINAL: a record delivered twice counts once.
 * ClickHouse counts and buckets; the percentiles are computed here, from
 * the same log-linear histogram as tcprt summary (hist.h: within 0.79 %).
 * The time breakdown's splits likewise: ClickHouse sums the parts per
 * bucket of their totals, the bands and the rounding are split.c's.
 * summary asks for all of it in one query: one pass over one snapshot of
 * the records in view (summary_series).  And gaps' accounts: ClickHouse
 * counts and finds the runs of numbers stored, acct.c decides what is
 * lost where.
 */
#define _XOPEN_SOURCE 700
#include <ctype.h>
#include <getopt.h>
#include <stdarg.h>
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
#include "record.h"
#include "store.h"
#include "util.h"

static const char help[] =
"usage: tcprt fleet init    [--url URL]\n"
"       tcprt fleet schema\n"
"       tcprt fleet key     --master FILE --host ID --out FILE\n"
"       tcprt fleet gaps    [--since T] [--host H] [--ranges N] [--format F]\n"
"                           [--by epoch|seq|both] [--ended-after S] [--url URL]\n"
"       tcprt fleet reached [--since T] [--until T] [--host H] [--format F]\n"
"                           [--url URL]\n"
"       tcprt fleet summary [--by port|host|port,host] [--since T] [--until T]\n"
"                           [--port P] [--host H] [--format F] [--url URL]\n"
"       tcprt fleet top     [--port P] [--host H] [-n N] [--since T]\n"
"                           [--until T] [--format F] [--url URL]\n"
"\n"
"Queries of the central store that tcprt ingest loads (ClickHouse, over\n"
"HTTP).  A record delivered twice counts once.\n"
"\n"
"  init     create the database tcprt and its tables, or upgrade those of\n"
"           an older schema in place (idempotent: run it again if it\n"
"           stopped halfway)\n"
"  schema   print the schema's SQL\n"
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
"  top      the slowest tasks (by duration), with host, peer and parts\n"
"\n"
CH_CONN_HELP
"  -s, --since T      from T: Unix seconds, YYYY-MM-DDTHH:MM:SSZ (UTC), or\n"
"                     an age: 30s, 15m, 2h, 7d (default: gaps everything,\n"
"                     reached 1d, summary and top 1h)\n"
"  -U, --until T      to T, excluded (default: now)\n"
"  -H, --host H       only host H\n"
"  -p, --port P       only service port P\n"
"  -b, --by KEYS      summary's rows: port (default), host, or port,host\n"
"  -n, --count N      top: how many (default 20)\n"
"  -r, --ranges N     gaps: missing ranges shown per line (default 20;\n"
"                     all are counted)\n"
"  -b, --by A         gaps: epoch, seq (by module seq) or both (default;\n"
"                     csv: epoch, one table a CSV)\n"
"  -e, --ended-after S  gaps: an epoch whose control messages stopped S\n"
"                     seconds ago (by the central's clock) has ended:\n"
"                     what it had not handed over is lost (SENDER), not\n"
"                     in flight (default: 6 of its sender's intervals,\n"
"                     60 s when unknown)\n"
"  -o, --format F     text (default), json (one object per line), csv\n"
"  -h, --help         this text\n"
"\n"
"reached, summary and top take times by the records' own clocks (sec);\n"
"gaps --since selects the epochs with a control message or a record\n"
"received (by the central's clock) since T, and by module seq the loads\n"
"they read, whole.  gaps and top read a store of schema 1 too (gaps by\n"
"epoch alone before schema 4); summary needs schema 2, reached (and\n"
"tcprt ingest) schema 4: run fleet init to upgrade.\n";

#define DEFAULT_TOP	20
#define DEFAULT_RANGES	20
#define DEFAULT_AGE	3600
#define REACHED_AGE	86400	/* fleet reached: the last day */
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
};

/* ---- options ----------------------------------------------------------------- */

/* Unix seconds, an ISO UTC time, or an age before @now. */
static bool parse_when(const char *s, uint64_t now, uint64_t *t)
{
	static const struct { char unit; uint64_t sec; } units[] = {
		{ 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 },
	};
	size_t len = strlen(s), i;
	struct tm tm = { 0 };
	char *end;
	uint64_t v;

	if (len > 1)
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (s[len - 1] == units[i].unit &&
			    parse_u64(s, len - 1, &v) && v < now / units[i].sec) {
				*t = now - v * units[i].sec;
				return true;
			}
	if (parse_u64(s, len, t))
		return true;
	end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!end || (*end && strcmp(end, "Z")))
		return false;
	*t = (uint64_t)timegm(&tm);
	return true;
}

static uint64_t opt_when(const char *opt, const char *arg, uint64_t now)
{
	uint64_t t;

	if (!parse_when(arg, now, &t))
		usage_error("fleet", "%s: '%s' is not a time (Unix seconds, YYYY-MM-DDTHH:MM:SSZ, or an age like 15m, 2h, 7d)",
			    opt, arg);
	return t;
}

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
		{ "format", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		CH_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	uint64_t now = now_us() / USEC_PER_SEC;
	bool until_set = false;
	int c;

	*o = (struct opts){ .port = -1,
			    .count = DEFAULT_TOP, .ranges = DEFAULT_RANGES,
			    .until = now + 1 };
	optind = 2;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":u:s:U:H:p:b:n:r:e:o:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'u': o->store.url = optarg; break;
		case 's':
			o->since = opt_when("--since", optarg, now);
			o->since_set = true;
			break;
		case 'U':
			o->until = opt_when("--until", optarg, now);
			until_set = true;
			break;
		case 'H':
			if (!frame_host_ok(optarg))
				usage_error("fleet", "--host: '%s' is not a host id (1 to 64 of [A-Za-z0-9._-])",
					    optarg);
			o->host = optarg;
			break;
		case 'p': o->port = opt_port("fleet", optarg); break;
		case 'b': opt_by(o, sub, optarg); break;
		case 'n': o->count = opt_count("--count", optarg); break;
		case 'r': o->ranges = opt_count("--ranges", optarg); break;
		case 'e':
			o->ended_after = opt_seconds("fleet", "--ended-after", optarg,
						     false);
			/* whole seconds: the central's clock stamps arrivals so */
			o->ended_after = (o->ended_after + USEC_PER_SEC - 1) / USEC_PER_SEC;
			break;
		case 'o':
			if (format_of(optarg) < 0)
				usage_error("fleet", "--format: '%s' is not text, json or csv",
					    optarg);
			o->fmt = (enum format)format_of(optarg);
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
	if (!o->since_set)
		o->since = now > DEFAULT_AGE ? now - DEFAULT_AGE : 0;
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

/* Cut TabSeparated row @line (in place) into @max fields; their number. */
static size_t fields(char *line, char **f, size_t max)
{
	size_t n = 0;

	while (n < max) {
		f[n++] = line;
		line = strchr(line, '\t');
		if (!line)
			break;
		*line++ = '\0';
	}
	return n;
}

/* The next row of @ans from *@pos, or NULL. */
static char *next_row(struct buf *ans, size_t *pos)
{
	char *row, *nl;

	if (!ans->p || *pos >= ans->len)
		return NULL;
	row = ans->p + *pos;
	nl = strchr(row, '\n');
	if (nl) {
		*nl = '\0';
		*pos = (size_t)(nl - ans->p) + 1;
	} else {
		*pos = ans->len;
	}
	return row;
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

struct account {
	char host[72];
	uint64_t epoch;
	bool has_ctl, final_last, final_closed;
	uint64_t ctl[CTL_NFIELDS];	/* the account: frame.h's C1 fields */
	uint64_t received, after, malformed, max_seq;
	uint64_t unsent_stored;	/* numbers of [sent_seq, next_seq) stored */
	uint64_t store;		/* records ClickHouse refused (bad_messages) */
	uint64_t last_s;	/* its last control message's arrival (the
				 * central's clock), or its last record's */
	bool concurrent;	/* ran while another epoch of its host id did */
	uint64_t *starts, *ends;	/* runs of present numbers, for ranges */
	size_t nstarts, nends;
	/* decided (acct.h) */
	enum acct_state state;
	uint64_t idle_s, after_s;	/* silent for, ended after */
	struct acct_split split;
};

struct accounts {
	struct account *a;
	size_t n;
};

static struct account *account_of(struct accounts *as, const char *host,
				  uint64_t epoch)
{
	size_t i;

	for (i = 0; i < as->n; i++)
		if (as->a[i].epoch == epoch && !strcmp(as->a[i].host, host))
			return &as->a[i];
	as->a = xrealloc(as->a, as->n + 1, sizeof(*as->a));
	as->a[as->n] = (struct account){ .epoch = epoch };
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

static int u64_cmp(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* The epochs in view: controls or records received since --since. */
static void gaps_epochs(const struct opts *o, struct buf *q)
{
	q->len = 0;
	buf_printf(q, "(host, epoch) IN (SELECT host, epoch FROM tcprt.controls WHERE received >= toDateTime(%llu)",
		   (unsigned long long)o->since);
	where_host(q, o);
	buf_printf(q, " UNION ALL SELECT host, epoch FROM tcprt.records WHERE received >= toDateTime(%llu)",
		   (unsigned long long)o->since);
	where_host(q, o);
	buf_printf(q, ")");
}

static void gaps_load(struct ch *c, const struct opts *o, struct accounts *as)
{
	struct buf q = { 0 }, in = { 0 }, ans = { 0 };
	/* the fields a store of before schema 4 has */
	size_t nctl = c->version >= STORE_SEQ ? CTL_NFIELDS : CTL_NFIELDS_V1;
	char *row, *f[24];
	size_t pos = 0, i;

	gaps_epochs(o, &in);
	/*
	 * the account: the control message of the highest ctl_seq, its
	 * fields named as on the wire; final once any said so
	 */
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
	buf_printf(&q, ", max(final = %d), max(final = %d), toUInt32(max(received)) FROM tcprt.controls FINAL WHERE %s GROUP BY host, epoch FORMAT TabSeparated",
		   FINAL_LAST, FINAL_CLOSED, in.p);
	query(c, q.p, &ans);
	while ((row = next_row(&ans, &pos))) {
		struct account *a;

		if (fields(row, f, 24) != 5 + nctl)
			continue;
		a = account_of(as, f[0], u64(f[1]));
		a->has_ctl = true;
		for (i = 0; i < nctl; i++)
			a->ctl[i] = u64(f[2 + i]);
		if (nctl < CTL_NFIELDS)
			a->ctl[CTL_SENT_SEQ] = a->ctl[CTL_NEXT_SEQ];
		a->final_last = u64(f[2 + nctl]);
		a->final_closed = u64(f[3 + nctl]);
		a->last_s = u64(f[4 + nctl]);
	}
	/*
	 * records under and past each account's next_seq, and those of
	 * [sent_seq, next_seq) (handed over by a sender killed before it
	 * could count them), in one query
	 */
	q.len = 0;
	buf_printf(&q, "SELECT host, epoch, countIf(seq < n), countIf(seq >= n), countIf(valid = 0 AND seq < n), max(seq), countIf(seq >= s AND seq < n) FROM tcprt.records FINAL ANY INNER JOIN (SELECT host, epoch, argMax(next_seq, ctl_seq) AS n, %s AS s FROM tcprt.controls FINAL WHERE %s GROUP BY host, epoch) USING (host, epoch) WHERE %s GROUP BY host, epoch FORMAT TabSeparated",
		   c->version >= STORE_SEQ ?
		   "argMax(if(sent_known = 1, sent_seq, next_seq), ctl_seq)" : "n",
		   in.p, in.p);
	query(c, q.p, &ans);
	pos = 0;
	while ((row = next_row(&ans, &pos))) {
		struct account *a;

		if (fields(row, f, 20) != 7)
			continue;
		a = account_of(as, f[0], u64(f[1]));
		a->received = u64(f[2]);
		a->after = u64(f[3]);
		a->malformed = u64(f[4]);
		a->max_seq = u64(f[5]);
		a->unsent_stored = u64(f[6]);
	}
	/* records ClickHouse refused, kept in bad_messages (schema 3) */
	if (c->version >= STORE_REFUSED) {
		q.len = 0;
		buf_printf(&q, "SELECT host, epoch, sum(records) FROM tcprt.bad_messages FINAL WHERE records > 0 AND %s GROUP BY host, epoch FORMAT TabSeparated",
			   in.p);
		query(c, q.p, &ans);
		pos = 0;
		while ((row = next_row(&ans, &pos))) {
			if (fields(row, f, 20) == 3)
				account_of(as, f[0], u64(f[1]))->store = u64(f[2]);
		}
	}
	/* epochs with records and no control message at all */
	q.len = 0;
	buf_printf(&q, "SELECT host, epoch, count(), countIf(valid = 0), max(seq), toUInt32(max(received)) FROM tcprt.records FINAL WHERE %s GROUP BY host, epoch FORMAT TabSeparated",
		   in.p);
	query(c, q.p, &ans);
	pos = 0;
	while ((row = next_row(&ans, &pos))) {
		struct account *a;

		if (fields(row, f, 20) != 6)
			continue;
		a = account_of(as, f[0], u64(f[1]));
		if (a->has_ctl)
			continue;
		a->after = u64(f[2]);
		a->malformed = u64(f[3]);
		a->max_seq = u64(f[4]);
		a->last_s = u64(f[5]);
	}
	buf_free(&q);
	buf_free(&in);
	buf_free(&ans);
}

/*
 * The missing ranges of every accounted epoch: the numbers below next_seq
 * that have no record.  ClickHouse gives the runs' ends (s present, s + 1
 * not) and starts (s present, s - 1 not); a gap lies between an end and
 * the next start.
 */
static void gaps_runs(struct ch *c, const struct opts *o, struct accounts *as)
{
	struct buf q = { 0 }, in = { 0 }, ans = { 0 };
	char *row, *f[8];
	size_t pos = 0;
	int pass;

	gaps_epochs(o, &in);
	for (pass = 0; pass < 2; pass++) {
		q.len = 0;
		buf_printf(&q, "SELECT DISTINCT host, epoch, seq FROM tcprt.records WHERE %s AND (host, epoch, toUInt64(seq %s) NOT IN (SELECT host, epoch, seq FROM tcprt.records WHERE %s)%s FORMAT TabSeparated",
			   in.p, pass ? "- 1)" : "+ 1)", in.p,
			   pass ? " AND seq > 0" : "");
		query(c, q.p, &ans);
		pos = 0;
		while ((row = next_row(&ans, &pos))) {
			struct account *a;
			uint64_t s;

			if (fields(row, f, 8) != 3)
				continue;
			a = account_of(as, f[0], u64(f[1]));
			s = u64(f[2]);
			if (!a->has_ctl)
				continue;
			if (pass) {
				a->starts = xrealloc(a->starts, a->nstarts + 1, 8);
				a->starts[a->nstarts++] = s;
			} else {
				a->ends = xrealloc(a->ends, a->nends + 1, 8);
				a->ends[a->nends++] = s;
			}
		}
	}
	buf_free(&q);
	buf_free(&in);
	buf_free(&ans);
}

/*
 * Call @fn for each missing range [lo, hi] of @a below next_seq, in order;
 * returns their number.  Every run of present numbers has an end; all but
 * one starting at 0 have a start: 0 is present when there are more ends
 * than starts.  The i-th start and the i-th end bound the i-th run.
 */
static uint64_t each_range(struct account *a,
			   void (*fn)(uint64_t lo, uint64_t hi, void *ctx),
			   void *ctx)
{
	uint64_t next = a->ctl[CTL_NEXT_SEQ], lo = 0, n = 0;
	bool zero = a->nends > a->nstarts;
	size_t i;

	qsort(a->starts, a->nstarts, 8, u64_cmp);
	qsort(a->ends, a->nends, 8, u64_cmp);
	for (i = 0; i < a->nends; i++) {
		uint64_t s = zero ? (i ? a->starts[i - 1] : 0) : a->starts[i];

		if (s >= next)
			break;
		if (s > lo) {
			fn(lo, s - 1, ctx);
			n++;
		}
		lo = a->ends[i] + 1;
	}
	if (lo < next) {
		fn(lo, next - 1, ctx);
		n++;
	}
	return n;
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
		struct acct_sent in = {
			.next_seq = a->ctl[CTL_NEXT_SEQ],
			.sent_seq = a->ctl[CTL_SENT_SEQ],
			.cap_dropped = a->ctl[CTL_CAP_DROPPED],
			.refused = a->ctl[CTL_REFUSED],
			.received = a->received,
			.unsent_stored = a->unsent_stored,
			.store = a->store,
		};

		a->idle_s = now_s > a->last_s ? now_s - a->last_s : 0;
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
	if (a->state == ACCT_ENDED)
		printf(", ended: no control message for %llu s (ended after %llu s)",
		       (unsigned long long)a->idle_s, (unsigned long long)a->after_s);
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
	uint64_t sent = a->ctl[CTL_NEXT_SEQ];
	const struct acct_split *x = &a->split;
	uint64_t ow = delta(a->ctl[CTL_OVERWRITTEN_START], a->ctl[CTL_OVERWRITTEN]);
	uint64_t so = delta(a->ctl[CTL_SAMPLED_START], a->ctl[CTL_SAMPLED]);
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
		       (unsigned long long)a->ctl[CTL_CAP_DROPPED],
		       (unsigned long long)a->ctl[CTL_REFUSED],
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
			n = each_range(a, print_range, &r);
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
			       (unsigned long long)a->ctl[CTL_CAP_DROPPED],
			       (unsigned long long)a->ctl[CTL_REFUSED],
			       (unsigned long long)x->sender,
			       (unsigned long long)x->in_flight,
			       (unsigned long long)x->transport);
		printf(",\"silent_s\":%llu,\"ended_after_s\":%llu",
		       (unsigned long long)a->idle_s, (unsigned long long)a->after_s);
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
			n = each_range(a, print_range, &r);
			printf("],\"missing_range_count\":%llu", (unsigned long long)n);
		}
		printf("}\n");
		return;
	case FMT_CSV:
		printf("%s,%llu,%s", a->host, (unsigned long long)a->epoch, state);
		if (a->has_ctl)
			printf(",%s,%llu,%llu,%llu,%llu,%llu,%llu", start,
			       (unsigned long long)sent,
			       (unsigned long long)a->received,
			       (unsigned long long)x->missing,
			       (unsigned long long)a->ctl[CTL_CAP_DROPPED],
			       (unsigned long long)a->ctl[CTL_REFUSED],
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
			each_range(a, print_range, &r);
		/* added after the columns of before, so that they keep their place */
		if (a->has_ctl)
			printf(",%llu,%llu", (unsigned long long)x->sender,
			       (unsigned long long)x->in_flight);
		else
			printf(",,");
		printf(",epoch\n");
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
	row = next_row(&ans, &pos);
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
	for (pos = 0; (row = next_row(&ans, &pos));) {
		if (fields(row, f, 4) != 2)
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
	char host[72];
	uint64_t load_id;
	int cpu;
	struct acct_read *e;		/* the epochs that read it */
	size_t n;
	uint64_t *starts, *ends;	/* runs of stored numbers */
	size_t nstarts, nends;
	struct spans stored;
	bool runs_bad;			/* the runs did not pair up */
	struct acct_log a;
};

struct mlogs {
	struct mlog *l;
	size_t n;
};

static struct mlog *mlog_of(struct mlogs *ls, const char *host, uint64_t load_id,
			    int cpu)
{
	size_t i;

	for (i = 0; i < ls->n; i++)
		if (ls->l[i].load_id == load_id && ls->l[i].cpu == cpu &&
		    !strcmp(ls->l[i].host, host))
			return &ls->l[i];
	ls->l = xrealloc(ls->l, ls->n + 1, sizeof(*ls->l));
	ls->l[ls->n] = (struct mlog){ .load_id = load_id, .cpu = cpu };
	snprintf(ls->l[ls->n].host, sizeof(ls->l[0].host), "%s", host);
	return &ls->l[ls->n++];
}

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
 * The loads in view: those that an epoch in view (gaps_epochs) read,
 * with every epoch that read them, in view or not: a load's account
 * needs all its numbers.
 */
static void seq_loads(const struct opts *o, struct buf *q)
{
	struct buf in = { 0 };

	gaps_epochs(o, &in);
	q->len = 0;
	buf_printf(q, "(host, load_id) IN (SELECT host, load_id FROM tcprt.records WHERE numbered = 1 AND load_id != 0 AND %s UNION ALL SELECT host, load_id FROM tcprt.cpu_accounts WHERE %s)",
		   in.p, in.p);
	buf_free(&in);
}

/* The last account (L1) of each epoch of each log. */
static void seq_accounts(struct ch *c, const char *loads, struct mlogs *ls)
{
	struct buf q = { 0 }, ans = { 0 };
	char *row, *f[16];
	size_t pos = 0, i;

	buf_printf(&q, "SELECT host, load_id, cpu, epoch");
	for (i = 0; i < CPU_NFIELDS; i++)
		buf_printf(&q, ", argMax(%s, ctl_seq)", cpu_field_name[i]);
	buf_printf(&q, " FROM tcprt.cpu_accounts FINAL WHERE %s GROUP BY host, load_id, cpu, epoch FORMAT TabSeparated",
		   loads);
	query(c, q.p, &ans);
	while ((row = next_row(&ans, &pos))) {
		struct acct_read *e;

		if (fields(row, f, 16) != 4 + CPU_NFIELDS)
			continue;
		e = read_of(mlog_of(ls, f[0], u64(f[1]), cpu_of(f[2])), u64(f[3]));
		e->has_l1 = true;
		for (i = 0; i < CPU_NFIELDS; i++)
			e->v[i] = u64(f[4 + i]);
	}
	buf_free(&q);
	buf_free(&ans);
}

struct last_seen {
	char host[72];
	uint64_t epoch, last_s;
	bool has_ctl, final_last, final_closed;
	uint64_t interval_us;
};

static struct last_seen *seen_of(struct last_seen **seen, size_t *nseen,
				 const char *host, uint64_t epoch)
{
	size_t i;

	for (i = 0; i < *nseen; i++)
		if ((*seen)[i].epoch == epoch && !strcmp((*seen)[i].host, host))
			return &(*seen)[i];
	*seen = xrealloc(*seen, *nseen + 1, sizeof(**seen));
	(*seen)[*nseen] = (struct last_seen){ .epoch = epoch };
	snprintf((*seen)[*nseen].host, sizeof((*seen)[0].host), "%s", host);
	return &(*seen)[(*nseen)++];
}

/* The numbers each epoch stored of each log: their span; and when its
 * last record arrived (for an epoch without control messages). */
static void seq_rows(struct ch *c, const char *loads, struct mlogs *ls,
		     struct last_seen **seen, size_t *nseen)
{
	struct buf q = { 0 }, ans = { 0 };
	char *row, *f[8];
	size_t pos = 0;

	buf_printf(&q, "SELECT host, load_id, cpu, epoch, min(rseq), max(rseq), toUInt32(max(received)) FROM tcprt.records WHERE numbered = 1 AND load_id != 0 AND %s GROUP BY host, load_id, cpu, epoch FORMAT TabSeparated",
		   loads);
	query(c, q.p, &ans);
	while ((row = next_row(&ans, &pos))) {
		struct last_seen *x;
		struct acct_read *e;
		uint64_t hi;

		if (fields(row, f, 8) != 7)
			continue;
		e = read_of(mlog_of(ls, f[0], u64(f[1]), cpu_of(f[2])), u64(f[3]));
		hi = u64(f[5]) + 1;
		if (!hi)
			continue;	/* 2^64 - 1: no range holds it */
		e->rows_lo = u64(f[4]);
		e->rows_hi = hi;
		x = seen_of(seen, nseen, f[0], e->epoch);
		if (u64(f[6]) > x->last_s)
			x->last_s = u64(f[6]);
	}
	buf_free(&q);
	buf_free(&ans);
}

/* Whether each epoch that read a log in view lives (acct_live). */
static void seq_life(struct ch *c, const struct opts *o, const char *loads,
		     struct mlogs *ls, struct last_seen **seen, size_t *nseen,
		     uint64_t now_s)
{
	struct buf q = { 0 }, ans = { 0 };
	char *row, *f[8];
	size_t pos = 0, i, j;

	buf_printf(&q, "SELECT host, epoch, max(final = %d), max(final = %d), toUInt32(max(received)), argMax(interval_us, ctl_seq) FROM tcprt.controls FINAL WHERE (host, epoch) IN (SELECT host, epoch FROM tcprt.cpu_accounts WHERE %s UNION ALL SELECT host, epoch FROM tcprt.records WHERE numbered = 1 AND load_id != 0 AND %s) GROUP BY host, epoch FORMAT TabSeparated",
		   FINAL_LAST, FINAL_CLOSED, loads, loads);
	query(c, q.p, &ans);
	while ((row = next_row(&ans, &pos))) {
		struct last_seen *x;

		if (fields(row, f, 8) != 6)
			continue;
		x = seen_of(seen, nseen, f[0], u64(f[1]));
		x->has_ctl = true;
		x->final_last = u64(f[2]);
		x->final_closed = u64(f[3]);
		x->last_s = u64(f[4]);
		x->interval_us = u64(f[5]);
	}
	for (i = 0; i < ls->n; i++) {
		struct mlog *l = &ls->l[i];

		for (j = 0; j < l->n; j++) {
			/* no control nor row seen: silent since ever */
			struct last_seen *x = seen_of(seen, nseen, l->host, l->e[j].epoch);
			uint64_t idle = now_s > x->last_s ? now_s - x->last_s : 0;
			uint64_t after = acct_ended_after(x->interval_us, o->ended_after);
			enum acct_state st = acct_state_of(x->has_ctl, x->final_last,
							   x->final_closed, idle, after);

			l->e[j].live = acct_live(st, idle, after);
		}
	}
	buf_free(&q);
	buf_free(&ans);
}

/*
 * The runs of numbers each log has stored: ClickHouse gives their ends
 * (n stored, n + 1 not) and starts (n stored, n - 1 not, n > 0), as
 * gaps_runs does for an epoch's.
 */
static void seq_runs(struct ch *c, const char *loads, struct mlogs *ls)
{
	struct buf q = { 0 }, ans = { 0 };
	char *row, *f[8];
	size_t pos;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		q.len = 0;
		buf_printf(&q, "SELECT DISTINCT host, load_id, cpu, rseq FROM tcprt.records WHERE numbered = 1 AND load_id != 0 AND %s%s AND (host, load_id, cpu, toUInt64(rseq %s)) NOT IN (SELECT host, load_id, cpu, rseq FROM tcprt.records WHERE numbered = 1 AND load_id != 0 AND %s) FORMAT TabSeparated",
			   loads, pass ? " AND rseq > 0" : "", pass ? "- 1" : "+ 1",
			   loads);
		query(c, q.p, &ans);
		pos = 0;
		while ((row = next_row(&ans, &pos))) {
			struct mlog *l;
			uint64_t v;

			if (fields(row, f, 8) != 4)
				continue;
			l = mlog_of(ls, f[0], u64(f[1]), cpu_of(f[2]));
			v = u64(f[3]);
			if (pass) {
				l->starts = xrealloc(l->starts, l->nstarts + 1, 8);
				l->starts[l->nstarts++] = v;
			} else {
				l->ends = xrealloc(l->ends, l->nends + 1, 8);
				l->ends[l->nends++] = v;
			}
		}
	}
	buf_free(&q);
	buf_free(&ans);
}

static void seq_load(struct ch *c, const struct opts *o, struct mlogs *ls,
		     uint64_t now_s)
{
	struct last_seen *seen = NULL;
	struct buf loads = { 0 };
	size_t nseen = 0, i;

	seq_loads(o, &loads);
	seq_accounts(c, loads.p, ls);
	seq_rows(c, loads.p, ls, &seen, &nseen);
	seq_life(c, o, loads.p, ls, &seen, &nseen, now_s);
	seq_runs(c, loads.p, ls);
	for (i = 0; i < ls->n; i++) {
		struct mlog *l = &ls->l[i];

		l->runs_bad = !spans_of_runs(&l->stored, l->starts, l->nstarts,
					     l->ends, l->nends);
		acct_log(l->e, l->n, &l->stored, &l->a);
	}
	qsort(ls->l, ls->n, sizeof(*ls->l), mlog_cmp);
	free(seen);
	buf_free(&loads);
}

static void seq_header(const struct opts *o)
{
	if (o->fmt == FMT_TEXT)
		printf("%-20s %20s %5s %10s %10s %10s %8s %8s %8s %8s %8s %10s\n",
		       "HOST", "LOAD", "CPU", "MADE", "STORED", "MISSING", "RELAY",
		       "CAP", "REFUSED", "SENDER", "INFLIGHT", "TRANSPORT");
	else if (o->fmt == FMT_CSV)
		printf("host,load_id,cpu,made,stored,missing,relay,cap_dropped,refused,sender_lost,in_flight,transport_lost,epochs,missing_ranges,accounting\n");
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
		if (l->runs_bad)
			printf(", the store changed while gaps read it: run it again");
		printf("\n");
		if (missing && !l->runs_bad) {
			printf("    missing:");
			n = spans_each_gap(&l->stored, a->made, print_range, &r);
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
		if (l->runs_bad)
			printf(",\"store_changed\":true");
		else {
			printf(",\"missing_ranges\":[");
			n = spans_each_gap(&l->stored, a->made, print_range, &r);
			printf("],\"missing_range_count\":%llu", (unsigned long long)n);
		}
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
		if (!l->runs_bad)
			spans_each_gap(&l->stored, a->made, print_range, &r);
		printf(",module seq\n");
		return;
	}
}

static void seq_free(struct mlogs *ls)
{
	size_t i;

	for (i = 0; i < ls->n; i++) {
		free(ls->l[i].e);
		free(ls->l[i].starts);
		free(ls->l[i].ends);
		spans_free(&ls->l[i].stored);
	}
	free(ls->l);
}

/* ClickHouse's clock, which stamped every arrival (received). */
static uint64_t store_now(struct ch *c)
{
	struct buf ans = { 0 };
	uint64_t now;

	query(c, "SELECT toUInt32(now()) FORMAT TabSeparated", &ans);
	now = ans.p ? u64(strtok(ans.p, "\n")) : 0;
	buf_free(&ans);
	return now;
}

static int fleet_gaps(const struct opts *o)
{
	struct accounts as = { 0 };
	struct mlogs ls = { 0 };
	struct ch c;
	uint64_t now_s;
	size_t i;

	connect_store(&c, o, STORE_OLDEST);
	now_s = store_now(&c);
	if (o->by_epoch) {
		gaps_load(&c, o, &as);
		gaps_runs(&c, o, &as);
		gaps_decide(o, &as, now_s);
		qsort(as.a, as.n, sizeof(*as.a), account_cmp);
		mark_concurrent(&as);
		if (o->fmt == FMT_TEXT)
			printf("%-20s %16s %-6s %10s %10s %10s %8s %8s %8s %8s %10s %6s %9s %6s %6s\n",
			       "HOST", "EPOCH", "STATE", "SENT", "RECEIVED", "MISSING",
			       "CAP", "REFUSED", "SENDER", "INFLIGHT", "TRANSPORT",
			       "STORE", "MALFORMED", "MOD_OW", "MOD_SO");
		else if (o->fmt == FMT_CSV)
			printf("host,epoch,state,started,sent,received,missing,cap_dropped,refused,transport_lost,store_refused,malformed,past_last_control,module_overwritten,module_sampled_out,missing_ranges,sender_lost,in_flight,accounting\n");
		for (i = 0; i < as.n; i++) {
			gaps_print(o, &as.a[i]);
			free(as.a[i].starts);
			free(as.a[i].ends);
		}
	}
	/* the module's numbers: schema 4's, when any log has some */
	if (o->by_seq && !o->by_epoch && c.version < STORE_SEQ)
		gaps_note(o, "the store is of schema %d: records carry the module's numbers from schema %d on (tcprt fleet init)\n",
			  c.version, STORE_SEQ);
	if (o->by_seq && c.version >= STORE_SEQ) {
		seq_load(&c, o, &ls, now_s);
		if (ls.n && o->fmt == FMT_TEXT && o->by_epoch)
			printf("\n");
		if (ls.n || !o->by_epoch)
			seq_header(o);
		for (i = 0; i < ls.n; i++)
			seq_print(o, &ls.l[i]);
		seq_free(&ls);
	}
	gaps_bad(&c, o);
	free(as.a);
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
 * The tasks in view: by sec, and by time too, which is toDateTime(sec)
 * and which the partitions (every schema) and, from schema 5, the sort key
 * are on, so that ClickHouse reads the window's parts and granules only.
 * The same rows while the window ends within DateTime's range (2106): a
 * sec past it wraps in time, and then sec alone decides.
 */
static void task_where(struct buf *q, const struct opts *o)
{
	buf_printf(q, "valid = 1 AND type IN ('R', 'W', 'N', 'P') AND sec >= %llu AND sec < %llu",
		   (unsigned long long)o->since, (unsigned long long)o->until);
	if (o->until <= UINT32_MAX)
		buf_printf(q, " AND time >= toDateTime(%llu) AND time < toDateTime(%llu)",
			   (unsigned long long)o->since,
			   (unsigned long long)o->until);
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
	while ((row = next_row(&ans, &pos))) {
		const struct series *se;
		struct bucket b;
		uint64_t sid;

		if (fields(row, f, 16) != g + 5 + NSUMS)
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
		if (fields(key, f, 4) != ngroup(o))
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
		k = fields(key, f, 4);
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
	while ((row = next_row(&ans, &pos))) {
		if (fields(row, f, NTOP + 1) != NTOP)
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
			break;
		}
		case FMT_JSON:
			printf("{");
			for (i = 0; i < NTOP; i++)
				printf(top_numeric(i) ? "%s\"%s\":%s" : "%s\"%s\":\"%s\"",
				       i ? "," : "", top_cols[i], f[i]);
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
	while ((row = next_row(&ans, &pos))) {
		uint64_t stored, made;
		double share;

		if (fields(row, f, 6) != 4)
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

static int fleet_init(const struct opts *o)
{
	struct ch_init done;
	struct ch c;
	size_t t;

	open_store(&c, o);
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
	printf("tcprt schema %d ready in ClickHouse at %s\n", STORE_VERSION, c.shown);
	ch_close(&c);
	return EXIT_OK;
}

int cmd_fleet(int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : NULL;
	struct opts o;

	if (!sub)
		usage_error("fleet", "which query? init, schema, key, gaps, reached, summary or top");
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h")) {
		fputs(help, stdout);
		return EXIT_OK;
	}
	if (!strcmp(sub, "schema")) {
		fputs(ch_schema_sql, stdout);
		return EXIT_OK;
	}
	if (!strcmp(sub, "key"))
		return fleet_key(argc, argv);
	if (strcmp(sub, "init") && strcmp(sub, "gaps") && strcmp(sub, "summary") &&
	    strcmp(sub, "top") && strcmp(sub, "reached"))
		usage_error("fleet", "no query '%s' (init, schema, key, gaps, reached, summary, top)", sub);
	parse_opts(argc, argv, &o);
	if (!o.since_set && !strcmp(sub, "gaps"))
		o.since = 0;
	if (!o.since_set && !strcmp(sub, "reached"))
		o.since = o.until > REACHED_AGE ? o.until - REACHED_AGE : 0;
	if (!strcmp(sub, "init"))
		return fleet_init(&o);
	if (!strcmp(sub, "gaps"))
		return fleet_gaps(&o);
	if (!strcmp(sub, "summary"))
		return fleet_summary(&o);
	if (!strcmp(sub, "reached"))
		return fleet_reached(&o);
	return fleet_top(&o);
}
