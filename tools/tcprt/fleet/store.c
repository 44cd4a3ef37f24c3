// SPDX-License-Identifier: GPL-2.0
/* The central store's schema, without ClickHouse: see store.h. */
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cmd.h"
#include "parse.h"
#include "series_line.h"
#include "util.h"

/* fleet/schema.sql's last columns of each table (tests/test_store checks) */
const struct store_column store_added[] = {
	{ 2, "records", "breakdown", "UInt8" },
	{ 2, "records", "rq_wait", "UInt64" },
	{ 2, "records", "app", "UInt64" },
	{ 2, "records", "sq_wait", "UInt64" },
	{ 2, "records", "rwnd_limited", "UInt64" },
	{ 2, "records", "sndbuf_limited", "UInt64" },
	{ 2, "records", "app_limited", "UInt64" },
	{ 3, "bad_messages", "host", "String" },
	{ 3, "bad_messages", "epoch", "UInt64" },
	{ 3, "bad_messages", "seq", "UInt64" },
	{ 3, "bad_messages", "records", "UInt64" },
	{ 4, "records", "load_id", "UInt64" },
	{ 4, "records", "rseq", "UInt64" },
	{ 4, "records", "numbered", "UInt8" },
	{ 4, "controls", "sent_seq", "UInt64" },
	{ 4, "controls", "interval_us", "UInt64" },
	{ 4, "controls", "sent_known", "UInt8" },
	{ 6, "controls", "central", "String" },
};

const char *const store_tables[] = { "records", "bad_messages", "controls" };
const size_t store_ntables = sizeof(store_tables) / sizeof(store_tables[0]);
_Static_assert(sizeof(store_tables) / sizeof(store_tables[0]) ==
	       sizeof(((struct ch_init *)0)->added) / sizeof(unsigned int),
	       "ch_init counts the columns added to each of store_tables");

const size_t store_nadded = sizeof(store_added) / sizeof(store_added[0]);

int store_version_of(const char *found, size_t len)
{
	uint64_t v;

	if (!len)
		return 0;
	if (!parse_u64(found, len, &v) || v < 1 || v > 1000000)
		return -1;
	return (int)v;
}

bool store_version_ok(const char *found, size_t len, int need,
		      const char *url, char *err, size_t size)
{
	int v = store_version_of(found, len);

	if (!v) {
		snprintf(err, size, "the tcprt schema in ClickHouse at %s has no version: run 'tcprt fleet init --url %s'",
			 url, url);
		return false;
	}
	if (v < 0 || v > STORE_VERSION) {
		snprintf(err, size, "the tcprt schema in ClickHouse at %s is version %.*s; this tcprt %s knows version %d%s",
			 url, (int)(len > 32 ? 32 : len), found, TCPRT_VERSION,
			 STORE_VERSION, v > 0 ? ": a newer tcprt upgraded it, use that one" : "");
		return false;
	}
	if (v < need) {
		snprintf(err, size, "the tcprt schema in ClickHouse at %s is version %d, older than this needs (%d): run 'tcprt fleet init --url %s' to upgrade the schema from %d to %d",
			 url, v, need, url, v, STORE_VERSION);
		return false;
	}
	return true;
}

/* True when the line @name (@len bytes) is in @have, one name a line. */
static bool has_line(const char *have, const char *name)
{
	size_t n = strlen(name);

	while (*have) {
		size_t len = strcspn(have, "\n");

		if (len == n && !memcmp(have, name, n))
			return true;
		have += len + (have[len] == '\n');
	}
	return false;
}

unsigned int store_upgrade_sql(const char *table, const char *have, char *sql,
			       size_t size)
{
	unsigned int n = 0;
	size_t i, o = 0;

	sql[0] = '\0';
	if (!*have)
		return 0;
	for (i = 0; i < store_nadded; i++) {
		if (strcmp(store_added[i].table, table) ||
		    has_line(have, store_added[i].name))
			continue;
		o += (size_t)snprintf(sql + o, size - o, "%s%s ADD COLUMN %s %s",
				      n ? "," : "ALTER TABLE tcprt.",
				      n ? "" : table,
				      store_added[i].name, store_added[i].type);
		n++;
		if (o >= size)
			die(EXIT_RUNTIME, "store_upgrade_sql: %zu bytes are too few", size);
	}
	return n;
}

unsigned int store_breakdown(const struct record *r)
{
	uint64_t total, part[NTRANSFER_PARTS];
	unsigned int mask = (r->ext_present & EXT_BD_MASK) >> EXT_BREAKDOWN;

	if (!mask)
		return 0;
	if (rec_process_parts(r, &total, part) == SPLIT_OK)
		mask |= STORE_BD_PROCESS;
	if (rec_transfer_parts(r, &total, part) == SPLIT_OK)
		mask |= STORE_BD_TRANSFER;
	return mask;
}

const struct store_keep_of store_keep_of[STORE_NKEEP] = {
	[KEEP_RECORDS] = { "records", "time", 30 * 86400 },
	[KEEP_CONTROLS] = { "controls", "received", 90 * 86400 },
	[KEEP_CPU_ACCOUNTS] = { "cpu_accounts", "received", 90 * 86400 },
	[KEEP_BAD_MESSAGES] = { "bad_messages", "received", 90 * 86400 },
};

/* "30d", "forever": false if it is not a duration of at least a second */
static bool keep_duration(const char *s, size_t len, uint64_t *v)
{
	uint64_t unit;

	if (len == 7 && !memcmp(s, "forever", 7)) {
		*v = 0;
		return true;
	}
	if (!parse_age(s, len, v, &unit) || *v < 1 ||
	    *v > 100ULL * 365 * 86400 / unit)
		return false;
	*v *= unit;
	return true;
}

bool store_duration(const char *s, uint64_t *v)
{
	return keep_duration(s, strlen(s), v);
}

bool store_keep_parse(const char *spec, uint64_t keep[STORE_NKEEP],
		      bool set[STORE_NKEEP], char *err, size_t len)
{
	const char *p = spec;
	uint64_t v;
	size_t t;

	if (!strchr(spec, '=')) {
		if (!keep_duration(spec, strlen(spec), &v)) {
			snprintf(err, len, "'%s' is not a duration (30d, 12h, 90m, 3600s, or forever)", spec);
			return false;
		}
		for (t = 0; t < STORE_NKEEP; t++) {
			keep[t] = v;
			set[t] = true;
		}
		return true;
	}
	while (*p) {
		size_t n = strcspn(p, ","), name = strcspn(p, "=");

		for (t = 0; name < n && t < STORE_NKEEP; t++)
			if (strlen(store_keep_of[t].table) == name &&
			    !memcmp(p, store_keep_of[t].table, name))
				break;
		if (name >= n || t == STORE_NKEEP) {
			snprintf(err, len, "'%.*s' is not TABLE=DURATION with TABLE records, controls, cpu_accounts or bad_messages",
				 (int)n, p);
			return false;
		}
		if (!keep_duration(p + name + 1, n - name - 1, &v)) {
			snprintf(err, len, "'%.*s' is not a duration (30d, 12h, 90m, 3600s, or forever)",
				 (int)(n - name - 1), p + name + 1);
			return false;
		}
		keep[t] = v;
		set[t] = true;
		p += n + (p[n] == ',');
	}
	return true;
}

void store_keep_fmt(uint64_t s, char *buf, size_t len)
{
	if (!s)
		snprintf(buf, len, "forever");
	else if (!(s % 86400))
		snprintf(buf, len, "%llud", (unsigned long long)(s / 86400));
	else if (!(s % 3600))
		snprintf(buf, len, "%lluh", (unsigned long long)(s / 3600));
	else if (!(s % 60))
		snprintf(buf, len, "%llum", (unsigned long long)(s / 60));
	else
		snprintf(buf, len, "%llus", (unsigned long long)s);
}

bool store_cluster_name_ok(const char *name)
{
	size_t n = strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");

	return n && !name[n] && n < STORE_CLUSTER_MAX;
}

/*
 * Each table's shard key: a column all copies of one of its rows share
 * (the same record, control or account delivered twice), so that they
 * meet on one shard, where FINAL and the merges keep one.
 */
static const struct {
	const char *table, *key;
} shard_keys[] = {
	{ "records", "host" },
	{ "controls", "host" },
	{ "cpu_accounts", "host" },
	{ "bad_messages", "file" },
	{ "centrals", "central" },
};

static const char *shard_key(const char *table, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(shard_keys) / sizeof(shard_keys[0]); i++)
		if (strlen(shard_keys[i].table) == len &&
		    !memcmp(shard_keys[i].table, table, len))
			return shard_keys[i].key;
	return NULL;
}

/* Where the statement itself starts, after its comments and blank lines. */
static const char *stmt_head(const char *p, const char *end)
{
	while (p < end) {
		if (*p == '\n' || *p == ' ' || *p == '\t')
			p++;
		else if (p[0] == '-' && p + 1 < end && p[1] == '-')
			p = memchr(p, '\n', (size_t)(end - p)) ?: end;
		else
			break;
	}
	return p;
}

static bool starts(const char *p, const char *end, const char *s)
{
	size_t n = strlen(s);

	return (size_t)(end - p) >= n && !memcmp(p, s, n);
}

#define CREATE_TABLE	"CREATE TABLE IF NOT EXISTS tcprt."
#define ENGINE		") ENGINE = ReplacingMergeTree"

/*
 * CREATE TABLE tcprt.T (...) ENGINE = ReplacingMergeTree ...: tcprt.T_local
 * replicated within each shard, and tcprt.T, Distributed over them; meta
 * replicated on every node as it is.
 */
static bool cluster_table(const char *head, const char *end, const char *cluster,
			  struct buf *out, char *err, size_t len)
{
	const char *name = head + strlen(CREATE_TABLE);
	size_t n = strcspn(name, " (\n");
	const char *engine = strstr(name, ENGINE), *key;
	bool meta = n == 4 && !memcmp(name, "meta", 4);

	if (!engine || engine > end) {
		snprintf(err, len, "tcprt.%.*s: no ReplacingMergeTree", (int)n, name);
		return false;
	}
	key = shard_key(name, n);
	if (!meta && !key) {
		snprintf(err, len, "tcprt.%.*s: no shard key", (int)n, name);
		return false;
	}
	buf_printf(out, "%.*s%s ON CLUSTER %s%.*s", (int)(name + n - head), head,
		   meta ? "" : "_local", cluster, (int)(engine - name - n), name + n);
	if (meta)
		buf_printf(out, ") ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/tcprt/%s/meta', '{replica}')",
			   cluster);
	else
		buf_printf(out, ") ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/tcprt/%s/{shard}/%.*s', '{replica}')",
			   cluster, (int)n, name);
	engine += strlen(ENGINE);
	buf_printf(out, "%.*s;\n", (int)(end - engine), engine);
	if (!meta)
		buf_printf(out, "\n%.*s ON CLUSTER %s AS tcprt.%.*s_local ENGINE = Distributed(%s, tcprt, %.*s_local, cityHash64(%s));\n",
			   (int)(name + n - head), head, cluster, (int)n, name,
			   cluster, (int)n, name, key);
	return true;
}

/* One statement (@p to @end, before its ';'): the cluster's. */
static bool cluster_stmt(const char *p, const char *end, const char *cluster,
			 struct buf *out, char *err, size_t len)
{
	const char *head = stmt_head(p, end), *as;

	buf_add(out, p, (size_t)(head - p));
	if (head == end) {	/* a comment that ends with ';' */
		buf_add(out, ";\n", 2);
		return true;
	}
	if (starts(head, end, "CREATE DATABASE IF NOT EXISTS tcprt")) {
		buf_printf(out, "%.*s ON CLUSTER %s;\n", (int)(end - head), head, cluster);
		return true;
	}
	if (starts(head, end, CREATE_TABLE))
		return cluster_table(head, end, cluster, out, err, len);
	if (starts(head, end, "CREATE VIEW IF NOT EXISTS tcprt.")) {
		as = strstr(head, " AS\n");
		if (!as || as > end) {
			snprintf(err, len, "a view without AS");
			return false;
		}
		buf_printf(out, "%.*s ON CLUSTER %s%.*s;\n", (int)(as - head), head,
			   cluster, (int)(end - as), as);
		return true;
	}
	if (starts(head, end, "INSERT INTO tcprt.meta ")) {
		buf_printf(out, "%.*s, ('cluster', '%s');\n", (int)(end - head), head,
			   cluster);
		return true;
	}
	snprintf(err, len, "a statement of no known kind: %.40s", head);
	return false;
}

bool store_cluster_sql(const char *sql, const char *cluster, struct buf *out,
		       char *err, size_t len)
{
	const char *p = sql;

	while (*p) {
		const char *end = strstr(p, ";\n");

		if (!end) {
			buf_add(out, p, strlen(p));
			return true;
		}
		if (!cluster_stmt(p, end, cluster, out, err, len))
			return false;
		p = end + 2;
	}
	return true;
}

const char store_records_cols[] =
	"host, epoch, seq, valid, line, cpu, type, source, role, port, sec, usec, "
	"peer_addr, peer_port, local_addr, local_port, sent_bytes, recv_bytes, "
	"retrans, metrics, duration, process, upload, download, min_rtt, "
	"breakdown, rq_wait, app, sq_wait, rwnd_limited, sndbuf_limited, "
	"app_limited, load_id, rseq, numbered";

static void tsv_u(struct buf *b, uint64_t v)
{
	buf_printf(b, "\t%llu", (unsigned long long)v);
}

/* The time breakdown's columns: the mask, then the six values (0: absent). */
static void breakdown_cols(struct buf *b, const struct record *r)
{
	unsigned int e;

	tsv_u(b, store_breakdown(r));
	for (e = EXT_BREAKDOWN; e < EXT_BD_END; e++)
		tsv_u(b, rec_has_ext(r, (enum rec_ext)e) ? r->ext[e] : 0);
}

/* The module's numbering (version 4): load_id, rseq, numbered. */
static void seq_cols(struct buf *b, const struct frame_hdr *h,
		     const struct record *r)
{
	bool numbered = r && rec_has_ext(r, EXT_SEQ);

	tsv_u(b, h->load_id);
	tsv_u(b, numbered ? r->ext[EXT_SEQ] : 0);
	tsv_u(b, numbered);
}

void store_span_of(struct store_span *span, uint64_t arrival,
		   uint64_t max_age)
{
	span->at = arrival;
	span->lo = max_age && arrival > max_age ? arrival - max_age : 0;
	span->hi = arrival + STORE_SPAN_AHEAD_S;
}

uint64_t store_span_time(const struct store_span *span, uint64_t sec)
{
	if (!span || (sec >= span->lo && sec < span->hi))
		return sec;
	return span->at;
}

/* Whether @sec is a time @span takes; if not, counted. */
static bool span_takes(struct store_span *span, uint64_t sec)
{
	if (!span || (sec >= span->lo && sec < span->hi))
		return true;
	span->outside++;
	return false;
}

/* The columns from type on of a valid record. */
static void record_cols(struct buf *b, const struct record *r)
{
	uint64_t mv[M_NMETRICS] = { 0 };
	unsigned int m, mask = 0;

	for (m = 0; m < M_NMETRICS; m++)
		if (rec_metric(r, (enum metric)m, &mv[m]))
			mask |= 1u << m;
	buf_printf(b, "\t%s\t%s\t%s", rec_desc[r->type].name,
		   source_name(r->source) ? source_name(r->source) : "",
		   role_name(r->role));
	tsv_u(b, r->port);
	tsv_u(b, r->sec);
	tsv_u(b, r->usec);
	buf_printf(b, "\t%s\t%u\t%s\t%u", r->peer_addr, r->peer_port,
		   r->local_addr, r->local_port);
	tsv_u(b, rec_sent_bytes(r));
	tsv_u(b, rec_recv_bytes(r));
	tsv_u(b, rec_retrans(r));
	tsv_u(b, mask);
	for (m = 0; m < M_NMETRICS; m++)
		tsv_u(b, mv[m]);
	breakdown_cols(b, r);
}

/* host epoch seq valid line cpu: every row's first columns */
static void row_head(struct buf *b, const struct frame_hdr *h, uint64_t seq,
		     bool valid, const char *line, size_t len)
{
	buf_tsv(b, h->host, strlen(h->host));
	tsv_u(b, h->epoch);
	tsv_u(b, seq);
	tsv_u(b, valid);
	buf_add(b, "\t", 1);
	buf_tsv(b, line, len);
	buf_printf(b, "\t%d", h->cpu);
}

/*
 * The columns from type on of a line that is not what its message says:
 * empty or 0, but for its time, @sec; then the module's numbering, none.
 */
static void invalid_cols(struct buf *b, const struct frame_hdr *h,
			 uint64_t sec)
{
	/* type source role port sec usec, the addresses and ports, then
	 * bytes, retrans, metrics and the five metrics, then the
	 * breakdown's mask and six values */
	buf_printf(b, "\t\t\t\t0\t%llu\t0\t\t0\t\t0%s%s",
		   (unsigned long long)sec, "\t0\t0\t0\t0\t0\t0\t0\t0\t0",
		   "\t0\t0\t0\t0\t0\t0\t0");
	seq_cols(b, h, NULL);
	buf_add(b, "\n", 1);
}

bool store_record_row(struct buf *b, const struct frame_hdr *h, uint64_t seq,
		      const char *line, size_t len, int kind, int role,
		      struct store_span *span, uint64_t *sec)
{
	char why[PARSE_WHY_MAX];
	struct record r;
	bool valid = kind == 1 && parse_log_line(line, len, &r, why) &&
		     span_takes(span, r.sec);

	row_head(b, h, seq, valid, line, len);
	if (!valid) {
		invalid_cols(b, h, store_span_time(span, *sec));
		return false;
	}
	if (r.type == REC_E && role >= 0) {
		r.role = (enum role)role;
		r.port = role == ROLE_CLIENT ? r.peer_port : r.local_port;
	}
	record_cols(b, &r);
	seq_cols(b, h, &r);
	buf_add(b, "\n", 1);
	*sec = r.sec;
	return true;
}

/* The columns from type on of a series line: see store_series_row(). */
static void series_cols(struct buf *b, const struct series_row *r,
			uint64_t width_us)
{
	const char *role = r->port[0] == '*' ? "host" :
			   r->port[0] == 'P' ? "client" : "server";
	unsigned long port = strtoul(r->port + (r->port[0] == 'P'), NULL, 10);

	buf_printf(b, "\tS\ttcp_rt\t%s\t%lu", role, port);
	tsv_u(b, r->t_us / USEC_PER_SEC);
	tsv_u(b, r->t_us % USEC_PER_SEC);
	/* no addresses; sent, received, retransmitted; no metric, duration
	 * the bucket's width; no breakdown */
	buf_printf(b, "\t\t0\t\t0");
	tsv_u(b, (uint64_t)r->v[1]);
	tsv_u(b, (uint64_t)r->v[0]);
	tsv_u(b, (uint64_t)r->v[4]);
	buf_printf(b, "\t0");
	tsv_u(b, width_us);
	buf_printf(b, "\t0\t0\t0\t0%s", "\t0\t0\t0\t0\t0\t0\t0");
}

bool store_series_row(struct buf *b, const struct frame_hdr *h, uint64_t seq,
		      const char *line, size_t len, int kind,
		      struct store_span *span, uint64_t *sec)
{
	char copy[PARSE_LINE_MAX + 1];
	struct series_row r;
	unsigned int ext = 0;
	bool valid;

	if (len > PARSE_LINE_MAX)
		len = PARSE_LINE_MAX;
	memcpy(copy, line, len);
	copy[len] = '\0';
	valid = kind == 1 && series_line_parse(copy, &r, &ext) &&
		r.v[0] >= 0 && r.v[1] >= 0 && r.v[4] >= 0 &&
		span_takes(span, r.t_us / USEC_PER_SEC);
	row_head(b, h, seq, valid, line, len);
	if (!valid) {
		invalid_cols(b, h, store_span_time(span, *sec));
		return false;
	}
	series_cols(b, &r, h->width_us);
	seq_cols(b, h, NULL);
	buf_add(b, "\n", 1);
	*sec = r.t_us / USEC_PER_SEC;
	return true;
}
