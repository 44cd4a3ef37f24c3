/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The central store: ClickHouse over its HTTP interface, through libcurl.
 * Queries send their SQL as the request body and read TabSeparated
 * answers; inserts send the SQL in the URL's query parameter and the rows,
 * TabSeparated, as the body.  An error is kept as one sentence that says
 * what is wrong - store unreachable, schema missing or of another version,
 * credentials refused, ClickHouse's own message otherwise - for the
 * caller to print.
 */
#ifndef TCPRT_CLICKHOUSE_H
#define TCPRT_CLICKHOUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define CH_DEFAULT_URL		"http://127.0.0.1:8123/"

/*
 * How to reach the store, from the options every command of the store
 * shares (CH_LONG_OPTIONS).  The password never comes from the command
 * line: from --password-file (a file no other user may read), else
 * $TCPRT_CLICKHOUSE_PASSWORD, else systemd's credential
 * $CREDENTIALS_DIRECTORY/clickhouse-password (LoadCredential=).  It is
 * sent in the HTTP Basic Authorization header (ClickHouse 18.16 reads no
 * X-ClickHouse-User/-Key header), never in a URL, never in a message.
 */
struct ch_conn {
	const char *url;
	const char *user;		/* --user, or the URL's user */
	const char *password_file;	/* --password-file */
	const char *cacert;		/* --cacert: the CA of an https:// store */
	bool plaintext;			/* --plaintext: http:// to another host */
};

/* The long options of struct ch_conn, for getopt_long's table. */
enum { CH_OPT_USER = 0x200, CH_OPT_PASSWORD_FILE, CH_OPT_CACERT, CH_OPT_PLAINTEXT };
#define CH_LONG_OPTIONS \
	{ "user", required_argument, NULL, CH_OPT_USER }, \
	{ "password-file", required_argument, NULL, CH_OPT_PASSWORD_FILE }, \
	{ "cacert", required_argument, NULL, CH_OPT_CACERT }, \
	{ "plaintext", no_argument, NULL, CH_OPT_PLAINTEXT }
/* getopt_long's @o: one of them (true, @k set), or another option. */
bool ch_conn_option(struct ch_conn *k, int o, const char *arg);
/* The options' help, for the commands' --help. */
#define CH_CONN_HELP \
"  -u, --url URL        ClickHouse's HTTP interface (default\n" \
"                       " CH_DEFAULT_URL "); http:// only to this host\n" \
"                       unless --plaintext, https:// otherwise\n" \
"      --user NAME      ClickHouse's user (default: the URL's, or none)\n" \
"      --password-file F  its password, alone in F (no access for group\n" \
"                       or others); else $TCPRT_CLICKHOUSE_PASSWORD, else\n" \
"                       $CREDENTIALS_DIRECTORY/clickhouse-password\n" \
"      --cacert FILE    the CA certificate(s) an https:// store is checked\n" \
"                       against (default: the system's)\n" \
"      --plaintext      allow http:// to another host (the password and\n" \
"                       the records cross the network in clear)\n"

#define CH_CLUSTER_MAX	64	/* a cluster's name, its '\0' included */

struct ch {
	char *url;		/* ends with '/' or has a '?' */
	char *shown;		/* the URL as messages show it: no user, no query */
	char *user, *password;	/* NULL: none */
	char *cacert;
	void *curl;
	long timeout_s;		/* of a whole request */
	char err[1024];
	/* the last error came from the store being unreachable: retry later */
	bool unreachable;
	int code;		/* ClickHouse's code of the last error, or 0 */
	int version;		/* the schema's, once ch_check_schema() passed */
	/* the cluster the store is on, from tcprt.meta ("": one server),
	 * once ch_check_schema() or ch_init_schema() passed */
	char cluster[CH_CLUSTER_MAX];
};

/*
 * Returns false (err set, naming the option) when the options do not make
 * a store to reach - a password in the URL, a password file others may
 * read, http:// to another host without --plaintext - or libcurl cannot
 * start; *usage then tells an error of the options (exit 2) from one of
 * the machine (exit 1).
 */
bool ch_open(struct ch *c, const struct ch_conn *k, long timeout_s, bool *usage);
void ch_close(struct ch *c);

/* A statement whose answer (if any) lands in @out (may be NULL). */
bool ch_query(struct ch *c, const char *sql, struct buf *out);
/*
 * A TabSeparated answer, row by row: the next row of @ans from *@pos
 * (cut in place; NULL after the last), and a row cut in place into at most
 * @max fields (their number).  Fields are as ClickHouse wrote them:
 * tcprt's queries select no text that needs unescaping.
 */
char *ch_row(struct buf *ans, size_t *pos);
size_t ch_fields(char *row, char **f, size_t max);
/* A query whose answer is one number (the first row's), into *@v (0 when
 * there is no row); false when the store fails. */
bool ch_query_u64(struct ch *c, const char *sql, uint64_t *v);

/* INSERT: @sql is "INSERT INTO ... FORMAT TabSeparated", @len bytes of
 * rows at @rows the body. */
bool ch_insert(struct ch *c, const char *sql, const char *rows, size_t len);

/*
 * After a failed request: whether ClickHouse refused what it was sent for
 * a reason of the data itself, which sending the same data again would
 * meet again (false: the store failed as a whole - unreachable, read-only,
 * busy, out of memory or space, credentials or schema - and the same data
 * may be taken later).
 */
bool ch_refused_data(const struct ch *c);

/*
 * The schema is there, of version @need or later, and not newer than this
 * tcprt's (store.h).
 */
bool ch_check_schema(struct ch *c, int need);

/* What ch_init_schema() found and did. */
struct ch_init {
	int from;		/* the version it found; 0: none */
	const char *cluster;	/* in: fleet init --cluster's, or NULL */
	unsigned int added[3];	/* columns it added, per table of store_tables */
};

/*
 * Create the schema (fleet/schema.sql), or upgrade a store of an older
 * version in place: add the columns each table lacks, then run the
 * schema's statements, whose last writes the version.  Stopped anywhere,
 * it completes the work when run again.  A store of a newer version, or
 * of a version that is no number, is left as it is (false).  On a
 * cluster (@done->cluster for a new store, tcprt.meta's for one made) the
 * cluster's statements (store_cluster_sql()), each ON CLUSTER; a store of
 * one server does not become a cluster's, nor one cluster's another's.
 */
bool ch_init_schema(struct ch *c, struct ch_init *done);

/*
 * Retention (store.h's store_keep_of): how long each table keeps its rows,
 * from tcprt.meta: @found[t] false when the store says nothing for table t
 * (kept for ever); and the tables @set writes.
 */
bool ch_keep_load(struct ch *c, uint64_t keep[], bool found[]);
bool ch_keep_store(struct ch *c, const uint64_t keep[], const bool set[]);
/*
 * A table of the store as a statement that changes its data names it:
 * tcprt.@table on one server; on a cluster, the nodes' own tables
 * (tcprt.@table_local ... ON CLUSTER name), except meta, which is not
 * distributed.  Into @b.
 */
void ch_table_for_ddl(const struct ch *c, struct buf *b, const char *table);
/*
 * The same table as system.tables and system.parts name it: @table, or
 * @table_local on a cluster; and the system table @sys (parts) to read
 * of every shard: system.@sys, or cluster('name', system, @sys).
 */
void ch_local_name(const struct ch *c, struct buf *b, const char *table);
void ch_system_table(const struct ch *c, struct buf *b, const char *sys);

/* The schema's text, as fleet/schema.sql has it. */
extern const char ch_schema_sql[];

#endif
