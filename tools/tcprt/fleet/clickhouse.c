// SPDX-License-Identifier: GPL-2.0
/* The central store over ClickHouse's HTTP interface: see clickhouse.h. */
#include "clickhouse.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "store.h"
#include "util.h"

const char ch_schema_sql[] =
#include "schema.h"
	;

/* ---- requests ------------------------------------------------------------------ */

/* ---- how to reach the store ------------------------------------------------ */

#define PASSWORD_ENV	"TCPRT_CLICKHOUSE_PASSWORD"
#define CREDENTIAL	"clickhouse-password"

bool ch_conn_option(struct ch_conn *k, int o, const char *arg)
{
	switch (o) {
	case CH_OPT_USER: k->user = arg; return true;
	case CH_OPT_PASSWORD_FILE: k->password_file = arg; return true;
	case CH_OPT_CACERT: k->cacert = arg; return true;
	case CH_OPT_PLAINTEXT: k->plaintext = true; return true;
	default: return false;
	}
}

/* The parts of an http(s) URL that matter here, as offsets into it. */
struct url_parts {
	bool https;
	size_t auth, auth_end;		/* scheme://[AUTH]... */
	size_t user_end;		/* the userinfo, with '@' at user_end; or auth */
	size_t host, host_end;
};

static bool url_split(const char *url, struct url_parts *u)
{
	const char *p, *at, *colon;
	size_t i;

	if (!strncasecmp(url, "http://", 7)) {
		u->https = false;
		u->auth = 7;
	} else if (!strncasecmp(url, "https://", 8)) {
		u->https = true;
		u->auth = 8;
	} else {
		return false;
	}
	u->auth_end = u->auth + strcspn(url + u->auth, "/?#");
	u->user_end = u->auth;
	for (i = u->auth; i < u->auth_end; i++)
		if (url[i] == '@')
			u->user_end = i;
	u->host = u->user_end == u->auth && url[u->auth] != '@' ? u->auth :
		  u->user_end + 1;
	p = url + u->host;
	if (*p == '[') {
		at = memchr(p, ']', u->auth_end - u->host);
		if (!at)
			return false;
		u->host_end = (size_t)(at - url) + 1;
	} else {
		colon = memchr(p, ':', u->auth_end - u->host);
		u->host_end = colon ? (size_t)(colon - url) : u->auth_end;
	}
	return u->host_end > u->host;
}

/* ClickHouse's "?password=..." (or "&password=") in the query. */
static bool query_has_password(const char *q)
{
	const char *p = strchr(q, '?');

	while (p) {
		if (!strncasecmp(p + 1, "password=", 9))
			return true;
		p = strchr(p + 1, '&');
	}
	return false;
}

/* This machine: the records and the password never leave it. */
static bool loopback(const char *h, size_t n)
{
	size_t i;

	if ((n == 9 && !strncasecmp(h, "localhost", 9)) ||
	    (n == 5 && !memcmp(h, "[::1]", 5)))
		return true;
	if (n < 4 || memcmp(h, "127.", 4))
		return false;
	for (i = 4; i < n; i++)
		if (h[i] != '.' && (h[i] < '0' || h[i] > '9'))
			return false;
	return true;
}

/*
 * The password, from the first of its places that has one (none: NULL);
 * false with err set when the place named cannot give it.
 */
static bool find_password(struct ch *c, const struct ch_conn *k)
{
	const char *env = getenv(PASSWORD_ENV), *dir;
	char path[4200];

	if (k->password_file) {
		c->password = read_secret(k->password_file, "--password-file",
					  c->err, sizeof(c->err));
		return c->password;
	}
	if (env && *env) {
		c->password = strdup(env);
		return c->password;
	}
	dir = getenv("CREDENTIALS_DIRECTORY");
	if (dir && *dir) {
		snprintf(path, sizeof(path), "%s/%s", dir, CREDENTIAL);
		if (access(path, F_OK))
			return true;
		c->password = read_secret(path, "systemd credential", c->err,
					  sizeof(c->err));
		return c->password;
	}
	return true;
}

static char *xstrndup(const char *s, size_t n)
{
	char *d = strndup(s, n);

	if (!d)
		die(EXIT_RUNTIME, "out of memory");
	return d;
}

/* The URL to request (no userinfo), the one to show, and the user. */
static bool take_url(struct ch *c, const struct ch_conn *k, bool *usage)
{
	const char *url = k->url ? k->url : CH_DEFAULT_URL;
	size_t n = strlen(url), q;
	struct url_parts u;
	struct buf b = { 0 };

	*usage = true;
	if (!url_split(url, &u)) {
		snprintf(c->err, sizeof(c->err),
			 "--url: '%.200s' is not http://HOST[:PORT]/ or https://HOST[:PORT]/",
			 url);
		return false;
	}
	if ((u.user_end > u.auth && memchr(url + u.auth, ':', u.user_end - u.auth)) ||
	    query_has_password(url + u.auth_end)) {
		snprintf(c->err, sizeof(c->err),
			 "--url: the URL holds a password, which would show in ps and in messages: give it in --password-file FILE (mode 0600) or $%s, and the user in --user",
			 PASSWORD_ENV);
		return false;
	}
	if (!u.https && !k->plaintext && !loopback(url + u.host, u.host_end - u.host)) {
		snprintf(c->err, sizeof(c->err),
			 "--url: http:// to %.*s would cross the network unencrypted%s: use https:// (--cacert for a private CA), or --plaintext to allow it",
			 (int)(u.host_end - u.host), url + u.host,
			 c->password ? ", the password too" : "");
		return false;
	}
	if (u.https && k->plaintext) {
		snprintf(c->err, sizeof(c->err), "--plaintext: the URL is https://");
		return false;
	}
	if (!u.https && k->cacert) {
		snprintf(c->err, sizeof(c->err), "--cacert: the URL is http://, no certificate is checked");
		return false;
	}
	if (k->user) {
		c->user = xstrndup(k->user, strlen(k->user));
	} else if (u.user_end > u.auth) {
		char *d = curl_easy_unescape(c->curl, url + u.auth,
					     (int)(u.user_end - u.auth), NULL);

		if (!d)
			die(EXIT_RUNTIME, "out of memory");
		c->user = xstrndup(d, strlen(d));
		curl_free(d);
	}
	/* without the userinfo: the user goes in the header */
	buf_add(&b, url, u.auth);
	buf_add(&b, url + u.host, n - u.host);
	if (!strchr(b.p, '?') && b.p[b.len - 1] != '/')
		buf_add(&b, "/", 1);
	c->url = b.p;
	q = strcspn(c->url, "?#");
	c->shown = xstrndup(c->url, q);
	*usage = false;
	return true;
}

bool ch_open(struct ch *c, const struct ch_conn *k, long timeout_s, bool *usage)
{
	memset(c, 0, sizeof(*c));
	c->timeout_s = timeout_s;
	*usage = false;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    !(c->curl = curl_easy_init())) {
		snprintf(c->err, sizeof(c->err), "libcurl cannot start");
		return false;
	}
	if (!find_password(c, k))
		return false;
	if (!take_url(c, k, usage))
		return false;
	if (k->cacert) {
		if (access(k->cacert, R_OK)) {
			snprintf(c->err, sizeof(c->err), "--cacert %s: %s",
				 k->cacert, strerror(errno));
			return false;
		}
		c->cacert = xstrndup(k->cacert, strlen(k->cacert));
	}
	if (c->password && !c->user)
		c->user = xstrndup("default", 7);	/* ClickHouse's */
	return true;
}

static void wipe(char *s)
{
	if (s)
		explicit_bzero(s, strlen(s));
	free(s);
}

void ch_close(struct ch *c)
{
	if (c->curl)
		curl_easy_cleanup(c->curl);
	free(c->url);
	free(c->shown);
	free(c->user);
	wipe(c->password);
	free(c->cacert);
	memset(c, 0, sizeof(*c));
}

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
	buf_add(arg, p, size * n);
	return size * n;
}

/* ClickHouse's "Code: N, e.displayText() = DB::Exception: text, ..." */
static void store_error(struct ch *c, long http, const struct buf *body)
{
	const char *text = body->p ? body->p : "";
	const char *ex = strstr(text, "DB::Exception: ");
	int code = 0;
	size_t len;

	sscanf(text, "Code: %d", &code);
	c->code = code;
	if (code == 60 || code == 81) {
		snprintf(c->err, sizeof(c->err),
			 "the tcprt schema is missing in ClickHouse at %s: run 'tcprt fleet init --url %s'",
			 c->shown, c->shown);
		return;
	}
	if (code == 192 || code == 193 || code == 194 || code == 516) {
		snprintf(c->err, sizeof(c->err),
			 "ClickHouse at %s refused the user%s%s%s (--user, --password-file)",
			 c->shown, c->user ? " '" : "", c->user ? c->user : "",
			 c->user ? "' or its password" : " or password");
		return;
	}
	if (ex)
		text = ex + strlen("DB::Exception: ");
	len = strcspn(text, "\n");
	if (len > 600)
		len = 600;
	snprintf(c->err, sizeof(c->err), "ClickHouse at %s answered HTTP %ld: %.*s",
		 c->shown, http, (int)len, text);
	/*
	 * An ON CLUSTER statement some node did not run in time: a node down,
	 * or one whose DDL worker stopped - 18.16's ends for good when it
	 * cannot reach ZooKeeper, until the server restarts
	 */
	if (code == 159 && strstr(text, "distributed_ddl_task_timeout"))
		snprintf(c->err + strlen(c->err), sizeof(c->err) - strlen(c->err),
			 " (a node of the cluster did not run it: one down, or, on ClickHouse 18.16, one whose DDL worker stopped when ZooKeeper was away - restart that server; docs/fleet.md, \"Scaling out\")");
}

/* POST @body to @url; the answer in @out. */
static bool post(struct ch *c, const char *url, const char *body, size_t blen,
		 struct buf *out)
{
	struct buf sink = { 0 };
	struct buf *ans = out ? out : &sink;
	struct curl_slist *hdr = NULL;
	long http = 0;
	CURLcode rc;
	bool ok;

	c->unreachable = false;
	c->code = 0;
	c->err[0] = '\0';
	ans->len = 0;
	curl_easy_reset(c->curl);
	hdr = curl_slist_append(hdr, "Content-Type: text/plain");
	curl_easy_setopt(c->curl, CURLOPT_URL, url);
	curl_easy_setopt(c->curl, CURLOPT_POST, 1L);
	curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)blen);
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, ans);
	curl_easy_setopt(c->curl, CURLOPT_TIMEOUT, c->timeout_s);
	curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
	/* never follow a redirect: the credentials would go with it */
	curl_easy_setopt(c->curl, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	if (c->user) {
		curl_easy_setopt(c->curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(c->curl, CURLOPT_USERNAME, c->user);
		curl_easy_setopt(c->curl, CURLOPT_PASSWORD,
				 c->password ? c->password : "");
	}
	if (c->cacert)
		curl_easy_setopt(c->curl, CURLOPT_CAINFO, c->cacert);
	rc = curl_easy_perform(c->curl);
	curl_slist_free_all(hdr);
	if (rc != CURLE_OK) {
		c->unreachable = true;
		snprintf(c->err, sizeof(c->err), "ClickHouse at %s is unreachable: %s",
			 c->shown, curl_easy_strerror(rc));
		ok = false;
	} else {
		curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &http);
		ok = http == 200;
		if (!ok)
			store_error(c, http, ans);
		/* 5xx other than a query's own error: the server is not well */
		if (!ok && http >= 500 && !strstr(ans->p ? ans->p : "", "Code: "))
			c->unreachable = true;
	}
	buf_free(&sink);
	return ok;
}

bool ch_query(struct ch *c, const char *sql, struct buf *out)
{
	return post(c, c->url, sql, strlen(sql), out);
}

bool ch_query_u64(struct ch *c, const char *sql, uint64_t *v)
{
	struct buf ans = { 0 };
	size_t pos = 0;
	char *row;
	bool ok = ch_query(c, sql, &ans);

	*v = 0;
	if (ok && (row = ch_row(&ans, &pos)))
		parse_u64(row, strlen(row), v);
	buf_free(&ans);
	return ok;
}

char *ch_row(struct buf *ans, size_t *pos)
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

size_t ch_fields(char *row, char **f, size_t max)
{
	size_t n = 0;

	while (n < max) {
		f[n++] = row;
		row = strchr(row, '\t');
		if (!row)
			break;
		*row++ = '\0';
	}
	return n;
}

bool ch_insert(struct ch *c, const char *sql, const char *rows, size_t len)
{
	char *q = curl_easy_escape(c->curl, sql, 0);
	struct buf url = { 0 };
	bool ok;

	if (!q) {
		snprintf(c->err, sizeof(c->err), "out of memory");
		return false;
	}
	buf_printf(&url, "%s%squery=%s", c->url, strchr(c->url, '?') ? "&" : "?", q);
	curl_free(q);
	ok = post(c, url.p, rows ? rows : "", len, NULL);
	buf_free(&url);
	return ok;
}

/*
 * ClickHouse's error codes of a store that fails whatever it is sent (its
 * ErrorCodes.cpp): the schema missing or changed (60, 81; a column gone
 * or renamed: 10, 16, 47), time and socket limits (159, 209, 210),
 * read-only (164, 242), credentials and rights (192, 193, 194, 291, 497,
 * 516), too many queries or connections (202, 203), ZooKeeper (225, 999),
 * cancelled (236, 394), memory (241), disk space (243), an insert whose
 * fate it does not know (319), the system (425), and a request cut short
 * (3); on a cluster, a shard none of whose replicas answers (279, its
 * nodes' 210 inside), too few replicas alive or a quorum not reached
 * (285, 286).  A code not listed that every row of a load meets is taken as the
 * store's too (load.h).
 */
static const int store_wide_codes[] = {
	3, 10, 16, 47, 60, 81, 159, 164, 192, 193, 194, 202, 203, 209, 210,
	225, 236, 241, 242, 243, 279, 285, 286, 291, 319, 394, 425, 497, 516,
	999,
};

bool ch_refused_data(const struct ch *c)
{
	size_t i;

	/* no code: not ClickHouse's own refusal (a proxy, a server unwell) */
	if (c->unreachable || !c->code)
		return false;
	/* 252 is both "too many parts" (merges behind: wait) and "too many
	 * partitions for single INSERT block" (this load: split it) */
	if (c->code == 252)
		return strstr(c->err, "partitions") != NULL;
	for (i = 0; i < sizeof(store_wide_codes) / sizeof(store_wide_codes[0]); i++)
		if (c->code == store_wide_codes[i])
			return false;
	return true;
}

/*
 * The store is on the cluster @name: every request from now on carries
 * the settings a cluster needs (18.16 has no INSERT ... SETTINGS: they
 * are the request's).  insert_distributed_sync: an insert returns once
 * every shard has its rows - by default the Distributed table queues them
 * on the node asked, and a failed insert can be half applied, half
 * queued.  distributed_product_mode: a query's IN and JOIN over another
 * Distributed table run once, on the node asked, their answer sent to
 * every shard (ClickHouse refuses them otherwise; bad_messages is not
 * sharded by host, so a shard's own rows would not do).
 */
static void set_cluster(struct ch *c, const char *name)
{
	struct buf url = { 0 };

	if (!strcmp(c->cluster, name))
		return;
	snprintf(c->cluster, sizeof(c->cluster), "%s", name);
	buf_printf(&url, "%s%sinsert_distributed_sync=1&distributed_product_mode=global",
		   c->url, strchr(c->url, '?') ? "&" : "?");
	free(c->url);
	c->url = xstrndup(url.p, url.len);
	buf_free(&url);
}

/*
 * What tcprt.meta says of the store: its version's text into @v ("" when
 * there is none) and its cluster (set_cluster()).
 */
static bool read_meta(struct ch *c, struct buf *v)
{
	struct buf ans = { 0 };
	size_t pos = 0;
	char *row, *f[3];
	bool ok = ch_query(c, "SELECT key, value FROM tcprt.meta FINAL WHERE key IN ('schema', 'cluster') FORMAT TabSeparated",
			   &ans);

	v->len = 0;
	buf_add(v, "", 0);
	while (ok && (row = ch_row(&ans, &pos))) {
		if (ch_fields(row, f, 3) != 2)
			continue;
		if (!strcmp(f[0], "schema"))
			buf_printf(v, "%s", f[1]);
		else if (store_cluster_name_ok(f[1]))
			set_cluster(c, f[1]);
	}
	buf_free(&ans);
	return ok;
}

bool ch_check_schema(struct ch *c, int need)
{
	struct buf v = { 0 };
	bool ok = read_meta(c, &v) &&
		  store_version_ok(v.p, v.len, need, c->shown, c->err,
				   sizeof(c->err));

	if (ok)
		c->version = store_version_of(v.p, v.len);
	buf_free(&v);
	return ok;
}

/* The version of the store, 0 when it has none (no meta table, or no row). */
static bool found_version(struct ch *c, int *from)
{
	struct buf v = { 0 };
	bool ok = read_meta(c, &v);

	*from = 0;
	if (ok) {
		*from = store_version_of(v.p, v.len);
		if (*from < 0 || *from > STORE_VERSION) {
			store_version_ok(v.p, v.len, STORE_VERSION, c->shown,
					 c->err, sizeof(c->err));
			snprintf(c->err + strlen(c->err), sizeof(c->err) - strlen(c->err),
				 "; fleet init leaves it as it is");
			ok = false;
		}
	} else if (c->code == 60 || c->code == 81) {
		ok = true;	/* no table, no database: a new store */
	}
	buf_free(&v);
	return ok;
}

/*
 * The cluster the init runs on: the store's own once it has a version
 * (--cluster, if given, must name it); else --cluster's, and a store
 * without a version whose init on a cluster stopped halfway (nodes'
 * tables there) must be given it again.
 */
static bool init_cluster(struct ch *c, const struct ch_init *done)
{
	const char *want = done->cluster;
	struct buf ans = { 0 };
	bool ok;

	if (done->from && !c->cluster[0] && want) {
		snprintf(c->err, sizeof(c->err), "the store at %s is one server's (schema %d): --cluster makes a new store on a cluster, it does not move one",
			 c->shown, done->from);
		return false;
	}
	if (done->from && want && strcmp(want, c->cluster)) {
		snprintf(c->err, sizeof(c->err), "the store at %s is on the cluster %s, not %s",
			 c->shown, c->cluster, want);
		return false;
	}
	if (done->from || want) {
		if (!done->from)
			set_cluster(c, want);
		return true;
	}
	ok = ch_query(c, "SELECT count() FROM system.tables WHERE database = 'tcprt' AND match(name, '_local$') FORMAT TabSeparated",
		      &ans);
	if (ok && ans.p && strcmp(ans.p, "0\n")) {
		snprintf(c->err, sizeof(c->err), "the store at %s has a cluster's tables but no version: an init on a cluster stopped halfway; run fleet init --cluster NAME again",
			 c->shown);
		ok = false;
	}
	buf_free(&ans);
	return ok;
}

void ch_local_name(const struct ch *c, struct buf *b, const char *table)
{
	buf_printf(b, "%s%s", table, c->cluster[0] ? "_local" : "");
}

void ch_table_for_ddl(const struct ch *c, struct buf *b, const char *table)
{
	bool meta = !strcmp(table, "meta");

	buf_printf(b, "tcprt.%s%s", table, c->cluster[0] && !meta ? "_local" : "");
	if (c->cluster[0])
		buf_printf(b, " ON CLUSTER %s", c->cluster);
}

void ch_system_table(const struct ch *c, struct buf *b, const char *sys)
{
	if (c->cluster[0])
		buf_printf(b, "cluster('%s', system, %s)", c->cluster, sys);
	else
		buf_printf(b, "system.%s", sys);
}

/*
 * The columns @table (as system.columns names it: @name) lacks: their
 * number, and the ALTER TABLE that adds them in @sql.
 */
static bool missing_columns(struct ch *c, const char *table, const char *name,
			    char *sql, size_t size, unsigned int *n)
{
	struct buf have = { 0 }, q = { 0 };
	bool ok;

	buf_printf(&q, "SELECT name FROM system.columns WHERE database = 'tcprt' AND table = '%s' FORMAT TabSeparated",
		   name);
	ok = ch_query(c, q.p, &have);
	*n = ok ? store_upgrade_sql(table, have.p ? have.p : "", sql, size) : 0;
	buf_free(&have);
	buf_free(&q);
	return ok;
}

/*
 * Add to each table the columns it lacks (none to a table not there yet).
 * On a cluster, to the nodes' tables, ON CLUSTER; a Distributed table
 * that lacks some is dropped on every node, and the schema's statements
 * make it again from the nodes' table (ClickHouse 18.16 refuses an ALTER
 * ON CLUSTER of a table that is not replicated on a cluster whose shards
 * are; the Distributed table holds no rows: inserts are synchronous).
 */
static bool add_columns(struct ch *c, unsigned int added[])
{
	char sql[STORE_UPGRADE_MAX];
	struct buf name = { 0 }, q = { 0 };
	unsigned int n;
	bool ok = true;
	size_t t;

	for (t = 0; t < store_ntables && ok; t++) {
		name.len = 0;
		q.len = 0;
		ch_local_name(c, &name, store_tables[t]);
		ok = missing_columns(c, store_tables[t], name.p, sql, sizeof(sql),
				     &added[t]);
		if (ok && added[t]) {
			/* "ALTER TABLE tcprt.<table> ADD ...": the nodes' */
			buf_printf(&q, "ALTER TABLE ");
			ch_table_for_ddl(c, &q, store_tables[t]);
			buf_printf(&q, "%s", sql + strlen("ALTER TABLE tcprt.") +
					     strlen(store_tables[t]));
			ok = ch_query(c, q.p, NULL);
		}
		if (ok && c->cluster[0])
			ok = missing_columns(c, store_tables[t], store_tables[t],
					     sql, sizeof(sql), &n);
		if (ok && c->cluster[0] && n) {
			q.len = 0;
			buf_printf(&q, "DROP TABLE IF EXISTS tcprt.%s ON CLUSTER %s",
				   store_tables[t], c->cluster);
			ok = ch_query(c, q.p, NULL);
		}
	}
	buf_free(&name);
	buf_free(&q);
	return ok;
}

/*
 * A write to tcprt.meta, whose last row of a key is its value: on a
 * cluster it is a replicated table, which drops an insert whose rows are
 * those of an earlier one (a block's checksum kept in ZooKeeper) - the
 * version written again after a repair, --keep set back to what it was -
 * so these are sent without that.
 */
static bool meta_insert(struct ch *c, const char *sql)
{
	char *url = c->url;
	struct buf u = { 0 };
	bool ok;

	buf_printf(&u, "%s%sinsert_deduplicate=0", url, strchr(url, '?') ? "&" : "?");
	c->url = u.p;
	ok = ch_query(c, sql, NULL);
	c->url = url;
	buf_free(&u);
	return ok;
}

/* Run the schema's statements (@sql), in order. */
static bool run_schema(struct ch *c, const char *sql)
{
	const char *p = sql;

	/* statements end with ";\n" (schema.sql's rule) */
	while (*p) {
		const char *end = strstr(p, ";\n");
		size_t len = end ? (size_t)(end - p) : strlen(p);
		struct buf stmt = { 0 };
		bool blank = true, ok = true;
		size_t i;

		buf_add(&stmt, p, len);
		/* only comments and blanks: nothing to run */
		for (i = 0; i < len && blank; i++) {
			if (p[i] == '-' && i + 1 < len && p[i + 1] == '-')
				while (i < len && p[i] != '\n')
					i++;
			else if (p[i] != ' ' && p[i] != '\n' && p[i] != '\t')
				blank = false;
		}
		/* the schema's one INSERT writes tcprt.meta's version */
		if (!blank && strstr(stmt.p, "\nINSERT INTO tcprt.meta "))
			ok = meta_insert(c, stmt.p);
		else if (!blank)
			ok = ch_query(c, stmt.p, NULL);
		buf_free(&stmt);
		if (!ok)
			return false;
		p = end ? end + 2 : p + len;
	}
	return true;
}

bool ch_keep_load(struct ch *c, uint64_t keep[], bool found[])
{
	struct buf ans = { 0 };
	char *row, *f[4];
	size_t pos = 0, t;
	bool ok;

	for (t = 0; t < STORE_NKEEP; t++) {
		keep[t] = 0;
		found[t] = false;
	}
	ok = ch_query(c, "SELECT key, value FROM tcprt.meta FINAL WHERE key LIKE 'keep.%' FORMAT TabSeparated",
		      &ans);
	while (ok && (row = ch_row(&ans, &pos))) {
		uint64_t v;

		if (ch_fields(row, f, 4) != 2 ||
		    !parse_u64(f[1], strlen(f[1]), &v))
			continue;
		for (t = 0; t < STORE_NKEEP; t++)
			if (!strcmp(f[0] + strlen("keep."), store_keep_of[t].table)) {
				keep[t] = v;
				found[t] = true;
			}
	}
	buf_free(&ans);
	return ok;
}

bool ch_keep_store(struct ch *c, const uint64_t keep[], const bool set[])
{
	struct buf q = { 0 };
	size_t t, n = 0;
	bool ok = true;

	buf_printf(&q, "INSERT INTO tcprt.meta (key, value) VALUES ");
	for (t = 0; t < STORE_NKEEP; t++)
		if (set[t])
			buf_printf(&q, "%s('keep.%s', '%llu')", n++ ? ", " : "",
				   store_keep_of[t].table, (unsigned long long)keep[t]);
	if (n)
		ok = meta_insert(c, q.p);
	buf_free(&q);
	return ok;
}

bool ch_init_schema(struct ch *c, struct ch_init *done)
{
	struct buf sql = { 0 };
	bool ok;

	*done = (struct ch_init){ .cluster = done->cluster };
	if (!found_version(c, &done->from) || !init_cluster(c, done) ||
	    !add_columns(c, done->added))
		return false;
	if (!c->cluster[0])
		return run_schema(c, ch_schema_sql);
	ok = store_cluster_sql(ch_schema_sql, c->cluster, &sql, c->err,
			       sizeof(c->err)) && run_schema(c, sql.p);
	buf_free(&sql);
	return ok;
}
