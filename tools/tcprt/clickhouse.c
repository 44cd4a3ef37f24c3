// SPDX-License-Identifier: GPL-2.0
/* The central store over ClickHouse's HTTP interface: see clickhouse.h. */
#include "clickhouse.h"

#include <curl/curl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "store.h"
#include "util.h"

const char ch_schema_sql[] =
#include "schema.h"
	;

/* ---- buffers ---------------------------------------------------------------- */

static void buf_room(struct buf *b, size_t more)
{
	size_t need = b->len + more + 1;

	if (need <= b->cap)
		return;
	b->cap = b->cap ? b->cap : 4096;
	while (b->cap < need)
		b->cap *= 2;
	b->p = xrealloc(b->p, b->cap, 1);
}

void buf_add(struct buf *b, const void *p, size_t len)
{
	buf_room(b, len);
	memcpy(b->p + b->len, p, len);
	b->len += len;
	b->p[b->len] = '\0';
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	buf_room(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void buf_tsv(struct buf *b, const char *s, size_t len)
{
	size_t i;

	buf_room(b, 2 * len);
	for (i = 0; i < len; i++) {
		char c = s[i];

		if (c == '\\' || c == '\t' || c == '\n') {
			b->p[b->len++] = '\\';
			c = c == '\t' ? 't' : c == '\n' ? 'n' : '\\';
		}
		b->p[b->len++] = c;
	}
	b->p[b->len] = '\0';
}

void buf_free(struct buf *b)
{
	free(b->p);
	*b = (struct buf){ 0 };
}

/* ---- requests ------------------------------------------------------------------ */

bool ch_open(struct ch *c, const char *url, long timeout_s)
{
	size_t n = strlen(url);

	memset(c, 0, sizeof(*c));
	c->timeout_s = timeout_s;
	c->url = xcalloc(n + 2, 1);
	memcpy(c->url, url, n);
	if (!strchr(url, '?') && (!n || url[n - 1] != '/'))
		c->url[n] = '/';
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(c->err, sizeof(c->err), "libcurl cannot start");
		return false;
	}
	c->curl = curl_easy_init();
	if (!c->curl) {
		snprintf(c->err, sizeof(c->err), "libcurl cannot start");
		return false;
	}
	return true;
}

void ch_close(struct ch *c)
{
	if (c->curl)
		curl_easy_cleanup(c->curl);
	free(c->url);
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
			 c->url, c->url);
		return;
	}
	if (code == 192 || code == 193 || code == 194 || code == 516) {
		snprintf(c->err, sizeof(c->err),
			 "ClickHouse at %s refused the user or password (give them in the URL: http://user:password@host:8123/)",
			 c->url);
		return;
	}
	if (ex)
		text = ex + strlen("DB::Exception: ");
	len = strcspn(text, "\n");
	if (len > 600)
		len = 600;
	snprintf(c->err, sizeof(c->err), "ClickHouse at %s answered HTTP %ld: %.*s",
		 c->url, http, (int)len, text);
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
	rc = curl_easy_perform(c->curl);
	curl_slist_free_all(hdr);
	if (rc != CURLE_OK) {
		c->unreachable = true;
		snprintf(c->err, sizeof(c->err), "ClickHouse at %s is unreachable: %s",
			 c->url, curl_easy_strerror(rc));
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

bool ch_insert(struct ch *c, const char *sql, const struct buf *rows)
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
	ok = post(c, url.p, rows->p ? rows->p : "", rows->len, NULL);
	buf_free(&url);
	return ok;
}

/* The version in tcprt.meta: its text in @v. */
static bool read_version(struct ch *c, struct buf *v)
{
	return ch_query(c, "SELECT value FROM tcprt.meta FINAL WHERE key = 'schema' FORMAT TabSeparated",
			v);
}

static size_t line_len(const struct buf *v)
{
	return v->p ? strcspn(v->p, "\n") : 0;
}

bool ch_check_schema(struct ch *c, int need)
{
	struct buf v = { 0 };
	bool ok = read_version(c, &v) &&
		  store_version_ok(v.p, line_len(&v), need, c->url, c->err,
				   sizeof(c->err));

	buf_free(&v);
	return ok;
}

/* The version of the store, 0 when it has none (no meta table, or no row). */
static bool found_version(struct ch *c, int *from)
{
	struct buf v = { 0 };
	bool ok = read_version(c, &v);

	*from = 0;
	if (ok) {
		*from = store_version_of(v.p, line_len(&v));
		if (*from < 0 || *from > STORE_VERSION) {
			store_version_ok(v.p, line_len(&v), STORE_VERSION, c->url,
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

/* Add to tcprt.records the columns it lacks (none when it does not exist). */
static bool add_columns(struct ch *c, unsigned int *added)
{
	char sql[STORE_UPGRADE_MAX];
	struct buf have = { 0 };
	bool ok = ch_query(c, "SELECT name FROM system.columns WHERE database = 'tcprt' AND table = 'records' FORMAT TabSeparated",
			   &have);

	if (ok) {
		*added = store_upgrade_sql(have.p ? have.p : "", sql, sizeof(sql));
		if (*added)
			ok = ch_query(c, sql, NULL);
	}
	buf_free(&have);
	return ok;
}

/* Run the schema's statements, in order. */
static bool run_schema(struct ch *c)
{
	const char *p = ch_schema_sql;

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
		if (!blank)
			ok = ch_query(c, stmt.p, NULL);
		buf_free(&stmt);
		if (!ok)
			return false;
		p = end ? end + 2 : p + len;
	}
	return true;
}

bool ch_init_schema(struct ch *c, struct ch_init *done)
{
	*done = (struct ch_init){ 0 };
	return found_version(c, &done->from) && add_columns(c, &done->added) &&
	       run_schema(c);
}
