// SPDX-License-Identifier: GPL-2.0
/*
 * tcprt fleet expire: the store's retention (docs/fleet.md, "Retention").
 * Each table keeps its rows as long as tcprt.meta says (fleet init
 * --keep); what is older goes whole: a partitioned table (by day, or by
 * month for tcprt.records of schemas 3 and 4) loses the partitions whose
 * newest row is older than that, ClickHouse's own DROP PARTITION, which
 * frees the disk at once.  A table without partitions (tcprt.bad_messages;
 * the others of a store made before schema 5) has its older rows deleted
 * by ALTER TABLE ... DELETE, which ClickHouse carries out in the
 * background by rewriting the table's parts.  ClickHouse's clock decides
 * what is older.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "clickhouse.h"
#include "cmd.h"
#include "store.h"
#include "util.h"

static const char help[] =
"usage: tcprt fleet expire [--dry-run] [--url URL]\n"
"\n"
"Drop what the store holds past its retention (tcprt fleet init --keep):\n"
"for each table, the partitions (days) whose newest row is older than\n"
"the table keeps rows - tcprt.records by the records' own time, the\n"
"others by their arrival; a table without partitions (bad_messages, and\n"
"the tables of a store made before schema 5) has its older rows deleted\n"
"(ALTER TABLE DELETE: ClickHouse rewrites its parts in the background).\n"
"Prints a line per table.  Run it daily (the unit tcprt-expire.timer).\n"
"\n"
CH_CONN_HELP
"  -n, --dry-run      say what would go, change nothing\n"
"  -h, --help         this text\n";

struct expire {
	struct ch c;
	bool dry;
	uint64_t now;		/* ClickHouse's clock, Unix seconds */
};

static uint64_t num(const char *s)
{
	uint64_t v = 0;

	parse_u64(s, strlen(s), &v);
	return v;
}

static void query(struct expire *x, const char *sql, struct buf *out)
{
	if (!ch_query(&x->c, sql, out))
		die(EXIT_RUNTIME, "fleet expire: %s", x->c.err);
}

/* The table's partition key ("" when it has none), or false: no table. */
static bool partition_key(struct expire *x, const char *table, char *key,
			  size_t len)
{
	struct buf q = { 0 }, ans = { 0 };
	size_t pos = 0;
	char *row;

	/* on a cluster, the nodes' table's (every node has the same) */
	buf_printf(&q, "SELECT partition_key FROM system.tables WHERE database = 'tcprt' AND name = '");
	ch_local_name(&x->c, &q, table);
	buf_printf(&q, "' FORMAT TabSeparated");
	query(x, q.p, &ans);
	row = ch_row(&ans, &pos);
	if (row)
		snprintf(key, len, "%s", row);
	buf_free(&q);
	buf_free(&ans);
	return row;
}

/* Drop the partitions of @t whose newest row is older than @cutoff. */
static void drop_partitions(struct expire *x, const struct store_keep_of *t,
			    uint64_t cutoff, const char *keep)
{
	struct buf q = { 0 }, ans = { 0 }, alter = { 0 };
	uint64_t parts = 0, rows = 0, newest = 0;
	char *row, *f[4], when[32];
	size_t pos = 0;

	/*
	 * newest row on a day before the cutoff's: a day's partition
	 * straddling the cutoff could still take a late row newer than it,
	 * which the drop would take with it
	 */
	buf_printf(&q, "SELECT partition_id, toUInt32(max(max_time)), sum(rows) FROM ");
	/* on a cluster: one replica of each shard's */
	ch_system_table(&x->c, &q, "parts");
	buf_printf(&q, " WHERE active AND database = 'tcprt' AND table = '");
	ch_local_name(&x->c, &q, t->table);
	buf_printf(&q, "' GROUP BY partition_id HAVING toStartOfDay(max(max_time)) < toStartOfDay(toDateTime(%llu)) ORDER BY partition_id FORMAT TabSeparated",
		   (unsigned long long)cutoff);
	query(x, q.p, &ans);
	while ((row = ch_row(&ans, &pos))) {
		if (ch_fields(row, f, 4) != 3)
			continue;
		if (!x->dry) {
			alter.len = 0;
			buf_printf(&alter, "ALTER TABLE ");
			ch_table_for_ddl(&x->c, &alter, t->table);
			buf_printf(&alter, " DROP PARTITION ID '%s'", f[0]);
			query(x, alter.p, NULL);
		}
		parts++;
		rows += num(f[2]);
		if (num(f[1]) > newest)
			newest = num(f[1]);
	}
	if (!parts) {
		printf("tcprt.%s: kept %s: nothing older\n", t->table, keep);
	} else {
		fmt_time(when, sizeof(when), newest * USEC_PER_SEC, false);
		printf("tcprt.%s: kept %s: %llu partition%s %s (%llu row%s, the newest of %s)\n",
		       t->table, keep, (unsigned long long)parts, parts == 1 ? "" : "s",
		       x->dry ? "would be dropped" : "dropped",
		       (unsigned long long)rows, rows == 1 ? "" : "s", when);
	}
	buf_free(&q);
	buf_free(&ans);
	buf_free(&alter);
}

/* A table without partitions: delete its rows older than @cutoff. */
static void delete_rows(struct expire *x, const struct store_keep_of *t,
			uint64_t cutoff, const char *keep)
{
	struct buf q = { 0 }, ans = { 0 };
	uint64_t rows;
	size_t pos = 0;
	char *row;

	buf_printf(&q, "SELECT count() FROM tcprt.%s WHERE %s < toDateTime(%llu) FORMAT TabSeparated",
		   t->table, t->time_col, (unsigned long long)cutoff);
	query(x, q.p, &ans);
	row = ch_row(&ans, &pos);
	rows = row ? num(row) : 0;
	if (rows && !x->dry) {
		q.len = 0;
		buf_printf(&q, "ALTER TABLE ");
		ch_table_for_ddl(&x->c, &q, t->table);
		buf_printf(&q, " DELETE WHERE %s < toDateTime(%llu)", t->time_col,
			   (unsigned long long)cutoff);
		query(x, q.p, NULL);
	}
	if (!rows)
		printf("tcprt.%s: kept %s: nothing older\n", t->table, keep);
	else
		printf("tcprt.%s: kept %s: %llu row%s %s (no partitions: ALTER TABLE DELETE, carried out in the background)\n",
		       t->table, keep, (unsigned long long)rows, rows == 1 ? "" : "s",
		       x->dry ? "would be deleted" : "deleted");
	buf_free(&q);
	buf_free(&ans);
}

static void expire_table(struct expire *x, const struct store_keep_of *t,
			 uint64_t keep, bool found)
{
	char key[256], d[32];

	store_keep_fmt(found ? keep : 0, d, sizeof(d));
	if (!partition_key(x, t->table, key, sizeof(key))) {
		printf("tcprt.%s: no such table\n", t->table);
		return;
	}
	if (!found || !keep || keep >= x->now) {
		printf("tcprt.%s: kept %s\n", t->table, d);
		return;
	}
	/* partitions by the time that decides, else rows one by one */
	if (*key && strstr(key, t->time_col))
		drop_partitions(x, t, x->now - keep, d);
	else
		delete_rows(x, t, x->now - keep, d);
}

int fleet_expire(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "url", required_argument, NULL, 'u' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		CH_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct ch_conn conn = { 0 };
	struct expire x = { 0 };
	uint64_t keep[STORE_NKEEP];
	bool found[STORE_NKEEP], usage;
	struct buf ans = { 0 };
	size_t t, pos = 0;
	char *row;
	int o;

	optind = 2;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":u:nh", opts, NULL)) != -1) {
		switch (o) {
		case 'u': conn.url = optarg; break;
		case 'n': x.dry = true; break;
		case 'h': fputs(help, stdout); return EXIT_OK;
		default:
			if (!ch_conn_option(&conn, o, optarg))
				bad_option("fleet", o, argv);
		}
	}
	if (optind < argc)
		usage_error("fleet", "expire: unexpected argument '%s'", argv[optind]);
	if (!ch_open(&x.c, &conn, 600, &usage)) {
		if (usage)
			usage_error("fleet", "%s", x.c.err);
		die(EXIT_RUNTIME, "fleet expire: %s", x.c.err);
	}
	if (!ch_check_schema(&x.c, STORE_OLDEST) || !ch_keep_load(&x.c, keep, found))
		die(EXIT_RUNTIME, "fleet expire: %s", x.c.err);
	query(&x, "SELECT toUInt32(now()) FORMAT TabSeparated", &ans);
	row = ch_row(&ans, &pos);
	x.now = row ? num(row) : 0;
	buf_free(&ans);
	for (t = 0; t < STORE_NKEEP; t++)
		expire_table(&x, &store_keep_of[t], keep[t], found[t]);
	ch_close(&x.c);
	return EXIT_OK;
}
