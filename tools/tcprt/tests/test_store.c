// SPDX-License-Identifier: GPL-2.0
/*
 * store.c, the store's schema without ClickHouse: what a version found
 * means to a command; the upgrade of a store of schema 1
 * (tests/fleet-schema-1.sql, schema.sql as it was) - each table's columns
 * and the ones the ALTER TABLEs add are those of fleet/schema.sql, in
 * order, at any point where an upgrade could have stopped (schema 2 is
 * such a point: records upgraded, bad_messages not; so is schema 3), the
 * controls' too (schema 4's columns); the breakdown mask of a record, and
 * the rows ingest loads: as many fields as columns named, each where its
 * name says, the module's numbering (load_id, rseq, numbered) included.
 */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "parse.h"
#include "store.h"
#include "tap.h"
#include "util.h"

static const char schema_sql[] =
#include "schema.h"
	;

#define URL	"http://db:8123/"
#define MAXCOLS	64

static char err[1024];

static bool version_ok(const char *found, int need)
{
	return store_version_ok(found, strlen(found), need, URL, err, sizeof(err));
}

static void test_version(void)
{
	ok(store_version_of("", 0) == 0 && store_version_of("2", 1) == 2 &&
	   store_version_of("x", 1) == -1 && store_version_of("0", 1) == -1 &&
	   store_version_of("-1", 2) == -1, "versions: none, 2; x, 0 and -1 are none of them");
	ok(version_ok("1", STORE_OLDEST) && version_ok("6", STORE_OLDEST) &&
	   version_ok("6", STORE_VERSION) && !version_ok("5", STORE_VERSION) &&
	   version_ok("4", STORE_SEQ) && !version_ok("3", STORE_SEQ) &&
	   version_ok("6", STORE_CENTRALS) && !version_ok("5", STORE_CENTRALS),
	   "1 to 6 serve what needs 1; 6 what needs 6, 5 does not; 4 what needs 4");
	ok(!version_ok("1", STORE_SEQ) &&
	   strstr(err, "the tcprt schema in ClickHouse at " URL " is version 1, older than this needs (4): run 'tcprt fleet init --url " URL "' to upgrade the schema from 1 to 6"),
	   "1 where 4 is needed: run tcprt fleet init to upgrade from 1 to 6 (%s)", err);
	ok(!version_ok("7", STORE_OLDEST) &&
	   strstr(err, "is version 7; this tcprt " TCPRT_VERSION " knows version 6: a newer tcprt upgraded it, use that one"),
	   "7: a newer tcprt's (%s)", err);
	ok(!version_ok("abc", STORE_OLDEST) && strstr(err, "is version abc; this tcprt") &&
	   !strstr(err, "newer"), "not a number: said as it is (%s)", err);
	ok(!version_ok("", STORE_OLDEST) &&
	   !strcmp(err, "the tcprt schema in ClickHouse at " URL " has no version: run 'tcprt fleet init --url " URL "'"),
	   "none: run tcprt fleet init");
	ok(strstr(schema_sql, "\nINSERT INTO tcprt.meta (key, value) VALUES ('schema', '6');\n") &&
	   STORE_VERSION == 6, "schema.sql writes version 6, the version tcprt knows");
}

/* The columns of tcprt.@table in @sql, "name type" each, in order. */
static size_t columns_of(const char *sql, const char *table, char cols[][96])
{
	char head[128];
	const char *p, *end;
	size_t n = 0;

	snprintf(head, sizeof(head), "CREATE TABLE IF NOT EXISTS tcprt.%s (\n", table);
	p = strstr(sql, head);
	end = p ? strstr(p, "\n) ENGINE") : NULL;

	if (!end)
		return 0;
	p = strchr(p, '\n') + 1;
	while (p < end && n < MAXCOLS) {
		size_t len = strcspn(p, "\n");

		/* "    name Type[ DEFAULT ...][,]" */
		snprintf(cols[n++], sizeof(cols[0]), "%.*s",
			 (int)(len - 4 - (p[len - 1] == ',')), p + 4);
		p += len + 1;
	}
	return n;
}

/* The names of @cols, one a line, as system.columns answers. */
static void names_of(char cols[][96], size_t n, char *out, size_t size)
{
	size_t i, o = 0;

	out[0] = '\0';
	for (i = 0; i < n; i++)
		o += (size_t)snprintf(out + o, size - o, "%.*s\n",
				      (int)strcspn(cols[i], " "), cols[i]);
}

/* Apply @sql's ADD COLUMNs to @cols (@n of them): their new number. */
static size_t apply(const char *sql, char cols[][96], size_t n)
{
	const char *p = sql;

	while ((p = strstr(p, "ADD COLUMN ")) && n < MAXCOLS) {
		p += strlen("ADD COLUMN ");
		snprintf(cols[n++], sizeof(cols[0]), "%.*s", (int)strcspn(p, ","), p);
	}
	return n;
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s = xcalloc(1, 65536);

	if (f) {
		s[fread(s, 1, 65535, f)] = '\0';
		fclose(f);
	}
	return s;
}

/* The columns store_added adds to @table: their index in it, in order. */
static size_t added_to(const char *table, size_t idx[])
{
	size_t i, n = 0;

	for (i = 0; i < store_nadded; i++)
		if (!strcmp(store_added[i].table, table))
			idx[n++] = i;
	return n;
}

/* One table: schema 1's columns, then the added ones, from any point. */
static void test_upgrade_table(const char *old, const char *table,
			       size_t n1_want, const char *alter1)
{
	static char v1[MAXCOLS][96], vn[MAXCOLS][96], cols[MAXCOLS][96];
	char have[4096], sql[STORE_UPGRADE_MAX];
	size_t n1 = columns_of(old, table, v1), nn = columns_of(schema_sql, table, vn);
	size_t idx[MAXCOLS], nadd = added_to(table, idx), n, i, k;
	unsigned int added, bad = 0;

	ok(n1 == n1_want && nn == n1 + nadd, "%s: schema 1's has %zu columns, schema %d's %zu more",
	   table, n1_want, STORE_VERSION, nadd);
	for (i = 0; i < n1; i++)
		bad += strcmp(v1[i], vn[i]) != 0;
	ok(!bad, "%s: the new schema keeps schema 1's columns as they were, in order", table);
	for (i = 0; i < nadd; i++) {
		char want[96];

		snprintf(want, sizeof(want), "%s %s", store_added[idx[i]].name,
			 store_added[idx[i]].type);
		bad += strcmp(vn[n1 + i], want) != 0 ||
		       (i && store_added[idx[i]].version < store_added[idx[i - 1]].version);
	}
	ok(!bad, "%s: the columns the upgrade adds are schema.sql's last ones, name and type, by version",
	   table);

	/* stopped after k of the columns were added (k = 0: schema 1) */
	for (k = 0; k <= nadd; k++) {
		memcpy(cols, vn, sizeof(cols));
		names_of(cols, n1 + k, have, sizeof(have));
		added = store_upgrade_sql(table, have, sql, sizeof(sql));
		n = apply(sql, cols, n1 + k);
		bad += added != nadd - k || n != nn;
		for (i = 0; i < nn; i++)
			bad += strcmp(cols[i], vn[i]) != 0;
		if (k == 0)
			ok(!strcmp(sql, alter1), "%s, schema 1: %s", table, sql);
	}
	ok(!bad && !*sql, "%s: upgraded from schema 1, or from any point where an upgrade stopped: the new columns, in order; complete: nothing to add",
	   table);
}

static void test_upgrade(void)
{
	char *old = read_file("tests/fleet-schema-1.sql");
	char sql[STORE_UPGRADE_MAX];
	size_t i, n = 0;
	unsigned int bad = 0;

	test_upgrade_table(old, "records", 27,
			   "ALTER TABLE tcprt.records ADD COLUMN breakdown UInt8, ADD COLUMN rq_wait UInt64, ADD COLUMN app UInt64, ADD COLUMN sq_wait UInt64, ADD COLUMN rwnd_limited UInt64, ADD COLUMN sndbuf_limited UInt64, ADD COLUMN app_limited UInt64, ADD COLUMN load_id UInt64, ADD COLUMN rseq UInt64, ADD COLUMN numbered UInt8");
	test_upgrade_table(old, "bad_messages", 5,
			   "ALTER TABLE tcprt.bad_messages ADD COLUMN host String, ADD COLUMN epoch UInt64, ADD COLUMN seq UInt64, ADD COLUMN records UInt64");
	test_upgrade_table(old, "controls", 16,
			   "ALTER TABLE tcprt.controls ADD COLUMN sent_seq UInt64, ADD COLUMN interval_us UInt64, ADD COLUMN sent_known UInt8, ADD COLUMN central String");
	for (i = 0; i < EXT_BD_END - EXT_BREAKDOWN; i++)
		bad += strcmp(store_added[1 + i].name, rec_ext_name[EXT_BREAKDOWN + i]) != 0;
	ok(!bad && !strcmp(store_added[0].name, "breakdown"),
	   "records: breakdown, then the six named as on the line");
	for (i = 0; i < store_nadded; i++) {
		size_t t;

		for (t = 0; t < store_ntables; t++)
			n += !strcmp(store_added[i].table, store_tables[t]);
	}
	ok(n == store_nadded, "every added column is in a table the upgrade visits");
	ok(store_upgrade_sql("records", "host\nepoch\nseq", sql, sizeof(sql)) == 10 &&
	   store_upgrade_sql("records", "", sql, sizeof(sql)) == 0 && !*sql,
	   "the last name without a newline counts; no table: nothing to add (the schema creates it)");
	free(old);
}

static unsigned int mask_of(const char *line)
{
	char why[PARSE_WHY_MAX];
	struct record r;

	if (!parse_log_line(line, strlen(line), &r, why)) {
		diag("%s: %s", line, why);
		return 0xffff;
	}
	return store_breakdown(&r);
}

#define R_LINE	"V6 R 1795218000 000001 10.0.0.2:1 10.0.0.1:7700 5000 900 300 0 1 600 100 300 0 1448"
#define W_LINE	"V6 W 1795218000 000001 10.0.0.2:1 10.0.0.1:7700 5000 900 300 0 1 600 100 1000 1448"
#define P_LINE	"V6 P 1795218000 000002 10.0.0.1:6379 10.0.0.2:1 300 900 200 0 1 500 300 4000 0 1448"

static void test_mask(void)
{
	/* R: process 600, download 900 - 100 - 600 = 200 */
	ok(mask_of(R_LINE) == 0, "no field: 0");
	ok(mask_of(R_LINE " netns=5 cgroup=7") == 0, "netns and cgroup: 0");
	ok(mask_of(R_LINE " rq_wait=100 app=400 sq_wait=100 rwnd_limited=50 sndbuf_limited=50 app_limited=100") == 0xff,
	   "R, all six, both splits hold: 0xff");
	ok(mask_of(R_LINE " rq_wait=100 app=400 sq_wait=101 rwnd_limited=50 sndbuf_limited=50 app_limited=101") == 0x3f,
	   "R, both contracts broken by one: the fields, no split");
	ok(mask_of(R_LINE " app=400 app_limited=20") == 0x22, "R, app and app_limited: bits 1 and 5");
	ok(mask_of(W_LINE " rq_wait=100 app=400 sq_wait=100") == 0x47, "W, the process split: 0x47");
	/* P: upload 900 - 500 - 300 = 100 */
	ok(mask_of(P_LINE " rq_wait=1 sq_wait=3 rwnd_limited=20 sndbuf_limited=30 app_limited=50") == 0xbd,
	   "P, its five: no app, no process split, the upload's: 0xbd");
	ok(mask_of(P_LINE " rq_wait=1 sq_wait=3 rwnd_limited=20 sndbuf_limited=30 app_limited=51") == 0x3d,
	   "P, the limited parts past the upload: 0x3d");
	ok(mask_of("V6 N 1795218000 000003 10.0.0.2:1 10.0.0.1:7700 3 900 400 0 1448") == 0, "N: 0");
}

/* The value of column @name in the TabSeparated @row, or NULL. */
static const char *col(const char *row, const char *name, char *buf, size_t size)
{
	const char *c = store_records_cols, *f = row;

	for (;;) {
		size_t n = strcspn(c, ","), flen = strcspn(f, "\t\n");

		if (n == strlen(name) && !memcmp(c, name, n)) {
			snprintf(buf, size, "%.*s", (int)flen, f);
			return buf;
		}
		if (!c[n] || f[flen] != '\t')
			return NULL;
		c += n + 2;	/* ", " */
		f += flen + 1;
	}
}

/* Fields of the row, and the number of columns named. */
static void count(const char *row, size_t *fields, size_t *names)
{
	const char *p;

	*fields = 1;
	for (p = row; *p && *p != '\n'; p++)
		*fields += *p == '\t';
	*names = 1;
	for (p = store_records_cols; *p; p++)
		*names += *p == ',';
}

/* Each "column=value" of @want holds in @row (said when not). */
static bool cols_are(const char *row, const char *line, const char *want)
{
	char copy[512], *w, *save = NULL, v[800];
	bool good = true;

	snprintf(copy, sizeof(copy), "%s", want);
	for (w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(w, '=');

		*eq = '\0';
		if (!col(row, w, v, sizeof(v)) || strcmp(v, eq + 1)) {
			diag("%s: %s is '%s', not '%s'", line, w,
			     col(row, w, v, sizeof(v)) ? v : "?", eq + 1);
			good = false;
		}
	}
	return good;
}

#define BD	" rq_wait=100 app=400 sq_wait=100 rwnd_limited=50 sndbuf_limited=50 app_limited=100"

static void test_rows(void)
{
	static const struct {
		const char *line;
		int kind, role;
		const char *want;	/* "column=value ..." */
	} t[] = {
		{ R_LINE BD, 1, -1, "valid=1 type=R role=server port=7700 metrics=31 process=600 download=200 breakdown=255 rq_wait=100 app=400 sq_wait=100 rwnd_limited=50 sndbuf_limited=50 app_limited=100 load_id=99 rseq=0 numbered=0" },
		{ R_LINE BD " seq=18446744073709551615", 1, -1, "valid=1 type=R breakdown=255 app_limited=100 load_id=99 rseq=18446744073709551615 numbered=1" },
		{ R_LINE " seq=0", 1, -1, "valid=1 breakdown=0 load_id=99 rseq=0 numbered=1" },
		{ "V6 E 1795218000 000004 10.0.0.1:6379 10.0.0.2:40000 1 5000 0 300 0 300 seq=12", 1, ROLE_SERVER,
		  "valid=1 type=E role=server rseq=12 numbered=1" },
		{ R_LINE " app_limited=7", 1, -1, "valid=1 breakdown=32 rq_wait=0 app=0 app_limited=7" },
		{ R_LINE, 1, -1, "valid=1 breakdown=0 rq_wait=0 app_limited=0" },
		{ P_LINE " rq_wait=1 sq_wait=3 rwnd_limited=20 sndbuf_limited=30 app_limited=50", 1, -1,
		  "valid=1 type=P role=client port=6379 upload=100 breakdown=189 rq_wait=1 app=0 sq_wait=3 app_limited=50" },
		{ "V6 E 1795218000 000004 10.0.0.1:6379 10.0.0.2:40000 1 5000 0 300 0 300", 1, ROLE_CLIENT,
		  "valid=1 type=E role=client port=6379 breakdown=0" },
		{ R_LINE " app=400 rq_wait=100", 1, -1, "valid=0 type= port=0 breakdown=0 rq_wait=0 app=0" },
		{ "junk\tline", 0, -1, "valid=0 line=junk\\tline metrics=0 breakdown=0 app_limited=0 load_id=99 rseq=0 numbered=0" },
		{ R_LINE " seq=7 app=1", 1, -1, "valid=0 load_id=99 rseq=0 numbered=0" },
	};
	struct frame_hdr h = { .epoch = 77, .cpu = 3, .load_id = 99 };
	struct buf b = { 0 };
	unsigned int i;

	snprintf(h.host, sizeof(h.host), "web-1");
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		size_t fields, names;
		bool valid, good;
		uint64_t sec;
		char v[800];

		b.len = 0;
		sec = 1795217000;
		valid = store_record_row(&b, &h, 5 + i, t[i].line, strlen(t[i].line),
					 t[i].kind, t[i].role, NULL, &sec);
		count(b.p, &fields, &names);
		good = fields == names && b.p[b.len - 1] == '\n' &&
		       !strchr(b.p, '\n')[1] && valid == (t[i].want[6] == '1') &&
		       col(b.p, "host", v, sizeof(v)) && !strcmp(v, "web-1") &&
		       col(b.p, "seq", v, sizeof(v)) && (unsigned int)atoi(v) == 5 + i &&
		       col(b.p, "cpu", v, sizeof(v)) && !strcmp(v, "3") &&
		       col(b.p, "sec", v, sizeof(v)) &&
		       strtoull(v, NULL, 10) == (valid ? sec : 1795217000) &&
		       (!valid || sec != 1795217000);
		good = cols_are(b.p, t[i].line, t[i].want) && good;
		ok(good, "row of %.40s...: %zu fields for %zu columns; %s", t[i].line, fields, names,
		   t[i].want);
	}
	buf_free(&b);
}

/* The count of @needle in @hay. */
static unsigned int count_of(const char *hay, const char *needle)
{
	unsigned int n = 0;

	while ((hay = strstr(hay, needle))) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

/*
 * A cluster's schema: each table replicated on its shard's nodes with a
 * Distributed one over them, sharded by the column its copies share;
 * meta replicated on every node; every statement ON CLUSTER; the
 * statements otherwise as schema.sql's, comments and all.
 */
static void test_cluster(void)
{
	static const char *const tables[] = { "records", "controls", "cpu_accounts", "bad_messages", "centrals" };
	static const char *const keys[] = { "host", "host", "host", "file", "central" };
	struct buf b = { 0 };
	char want[512], e[200] = "";
	size_t i;
	bool good;

	ok(store_cluster_name_ok("tcprt_1") && !store_cluster_name_ok("") &&
	   !store_cluster_name_ok("a-b") && !store_cluster_name_ok("a b") &&
	   !store_cluster_name_ok("a'") &&
	   !store_cluster_name_ok("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
	   "cluster names: [A-Za-z0-9_], 1 to 63");
	good = store_cluster_sql(schema_sql, "c1", &b, e, sizeof(e));
	ok(good, "the schema's statements, for a cluster: %s", e);
	if (!good)
		return;
	ok(count_of(b.p, ";\n") == count_of(schema_sql, ";\n") + 5,
	   "one statement more per distributed table (5)");
	ok(count_of(b.p, " ON CLUSTER c1") == 13 && count_of(b.p, "CREATE ") == 13,
	   "every CREATE (13) ON CLUSTER");
	ok(strstr(b.p, "CREATE DATABASE IF NOT EXISTS tcprt ON CLUSTER c1;\n") != NULL,
	   "the database on every node");
	for (i = 0; i < 5; i++) {
		snprintf(want, sizeof(want), "CREATE TABLE IF NOT EXISTS tcprt.%s_local ON CLUSTER c1 (\n",
			 tables[i]);
		good = strstr(b.p, want) != NULL;
		snprintf(want, sizeof(want), ") ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/tcprt/c1/{shard}/%s', '{replica}')\n",
			 tables[i]);
		good &= strstr(b.p, want) != NULL;
		snprintf(want, sizeof(want), "CREATE TABLE IF NOT EXISTS tcprt.%s ON CLUSTER c1 AS tcprt.%s_local ENGINE = Distributed(c1, tcprt, %s_local, cityHash64(%s));\n",
			 tables[i], tables[i], tables[i], keys[i]);
		good &= strstr(b.p, want) != NULL;
		ok(good, "tcprt.%s: replicated per shard, Distributed by %s", tables[i], keys[i]);
	}
	ok(strstr(b.p, "CREATE TABLE IF NOT EXISTS tcprt.meta ON CLUSTER c1 (\n") &&
	   strstr(b.p, ") ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/tcprt/c1/meta', '{replica}')\nORDER BY key;\n"),
	   "tcprt.meta: replicated on every node, not sharded");
	ok(strstr(b.p, "CREATE VIEW IF NOT EXISTS tcprt.reached ON CLUSTER c1 AS\nSELECT") != NULL,
	   "the view on every node");
	ok(strstr(b.p, "\nINSERT INTO tcprt.meta (key, value) VALUES ('schema', '6'), ('cluster', 'c1');\n") != NULL,
	   "the version written last, with the cluster");
	ok(!strstr(b.p, "ENGINE = ReplacingMergeTree") &&
	   count_of(b.p, "\n-- ") == count_of(schema_sql, "\n-- "),
	   "no table left unreplicated; the comments kept");
	buf_free(&b);
	b = (struct buf){ 0 };
	ok(!store_cluster_sql("CREATE TABLE IF NOT EXISTS tcprt.other (\n x UInt8\n) ENGINE = ReplacingMergeTree\nORDER BY x;\n",
			      "c1", &b, e, sizeof(e)) && strstr(e, "tcprt.other: no shard key"),
	   "a table without a shard key: refused, named (%s)", e);
	buf_free(&b);
}

/* A series line's row: its columns, as store.h says. */
static void test_series_rows(void)
{
	static const struct {
		const char *line;
		int kind;
		const char *want;	/* "column=value ..." */
	} t[] = {
		{ "1795218000 001000 8080 100 2000 1 2 1 1 1 0 0 0 0 1", 1,
		  "valid=1 type=S source=tcp_rt role=server port=8080 sec=1795218000 usec=1000 recv_bytes=100 sent_bytes=2000 retrans=1 metrics=0 duration=1000 cpu=-1 numbered=0 load_id=0" },
		{ "1795218000 002000 P6379 5 6 1 1 0 0 0 0 0 0 0 0 flows=2", 1,
		  "valid=1 type=S role=client port=6379 usec=2000 recv_bytes=5 sent_bytes=6 retrans=0" },
		{ "1795218001 000000 * 7 8 1 1 3 0 0 0 0 2 1 0 ce_bytes=7 dup_segs=1", 1,
		  "valid=1 type=S role=host port=0 sec=1795218001 usec=0 retrans=3" },
		{ "1795218001 000000 * -7 8 1 1 3 0 0 0 0 2 1 0", 1, "valid=0 type= sec=1795218001" },
		{ "1795218000 001000 80x80 1 2 3 4 5 6 7 8 9 10 11 12", 1, "valid=0 type= port=0 sec=1795218001" },
		{ "junk\tline", 0, "valid=0 line=junk\\tline sec=1795218001" },
	};
	struct frame_hdr h = { .epoch = 77, .cpu = -1, .width_us = 1000 };
	struct buf b = { 0 };
	uint64_t sec = 1;
	unsigned int i;

	snprintf(h.host, sizeof(h.host), "web-1");
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		size_t fields, names;
		bool valid, good;

		b.len = 0;
		valid = store_series_row(&b, &h, 5 + i, t[i].line, strlen(t[i].line),
					 t[i].kind, NULL, &sec);
		count(b.p, &fields, &names);
		good = fields == names && b.p[b.len - 1] == '\n' &&
		       valid == (t[i].want[6] == '1');
		good = cols_are(b.p, t[i].line, t[i].want) && good;
		ok(good, "series row of %.40s: %zu fields for %zu columns; %s", t[i].line,
		   fields, names, t[i].want);
	}
	buf_free(&b);
}

/*
 * The times a message may claim: a record or series line inside its span
 * is stored as it is; one before or after it is malformed (valid 0, its
 * line kept, counted), its row at the span's nearest time, as every
 * invalid row of the message is.
 */
static void test_span(void)
{
	/* arrival 1795215600 (an hour's start), 30 days back */
	const uint64_t arrival = 1795215600, lo = arrival - 30 * 86400,
		       hi = arrival + STORE_SPAN_AHEAD_S;
	static const struct {
		uint64_t sec;
		bool valid;
	} t[] = {
		{ 1795215600 - 30 * 86400, true },
		{ 1795215600 - 30 * 86400 - 1, false },
		{ 1795215600 + 3600 + 86400 - 1, true },
		{ 1795215600 + 3600 + 86400, false },
		{ 1, false },
		{ 4102444800, false },		/* 2100-01-01 */
		{ 1795218000, true },
	};
	struct frame_hdr h = { .epoch = 77, .cpu = 0 };
	struct store_span span = { 0 };
	struct buf b = { 0 };
	char line[256], v[64], series[256];
	uint64_t sec, forever;
	unsigned int i;

	snprintf(h.host, sizeof(h.host), "web-1");
	store_span_of(&span, arrival, 30 * 86400);
	ok(span.lo == lo && span.hi == hi && !span.outside,
	   "span of an arrival: [%llu, %llu)", (unsigned long long)span.lo,
	   (unsigned long long)span.hi);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint64_t before = span.outside, want_sec;
		bool valid;

		snprintf(line, sizeof(line), "V6 R %llu 000001 10.0.0.2:40000 10.0.0.1:7700 5000 1000 300 0 1 500 100 300 0 1448",
			 (unsigned long long)t[i].sec);
		b.len = 0;
		sec = t[i].sec;		/* an invalid row's time: its own, or the arrival */
		valid = store_record_row(&b, &h, i, line, strlen(line), 1, -1,
					 &span, &sec);
		want_sec = t[i].valid ? t[i].sec : arrival;
		ok(valid == t[i].valid && span.outside == before + !t[i].valid &&
		   col(b.p, "valid", v, sizeof(v)) && atoi(v) == t[i].valid &&
		   col(b.p, "sec", v, sizeof(v)) &&
		   strtoull(v, NULL, 10) == want_sec,
		   "record at %llu: %s, its row's time %s", (unsigned long long)t[i].sec,
		   t[i].valid ? "valid" : "malformed at its arrival, counted", v);

		snprintf(series, sizeof(series), "%llu 001000 8080 100 2000 1 2 1 1 1 0 0 0 0 1",
			 (unsigned long long)t[i].sec);
		b.len = 0;
		before = span.outside;
		sec = t[i].sec;
		valid = store_series_row(&b, &h, i, series, strlen(series), 1,
					 &span, &sec);
		ok(valid == t[i].valid && span.outside == before + !t[i].valid &&
		   col(b.p, "sec", v, sizeof(v)) &&
		   strtoull(v, NULL, 10) == want_sec,
		   "series line at %llu: %s, its row's time %s",
		   (unsigned long long)t[i].sec,
		   t[i].valid ? "valid" : "malformed, counted", v);
	}
	ok(store_duration("forever", &forever) && !forever &&
	   store_duration("12h", &sec) && sec == 43200 &&
	   !store_duration("12x", &sec), "--max-age's durations");
	store_span_of(&span, arrival, forever);
	ok(span.lo == 0 && store_span_time(&span, 1) == 1 &&
	   store_span_time(&span, 4102444800) == arrival,
	   "forever: no lower bound, a day ahead still the upper one");
	ok(store_span_time(NULL, 4102444800) == 4102444800, "no span: no bound");
	buf_free(&b);
}

int main(void)
{
	test_version();
	test_cluster();
	test_upgrade();
	test_mask();
	test_rows();
	test_series_rows();
	test_span();
	return done_testing();
}
