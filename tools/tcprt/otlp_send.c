// SPDX-License-Identifier: GPL-2.0
/* OTLP/HTTP requests: the queue, the backoff, libcurl.  See otlp_send.h. */
#include "otlp_send.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* The start of the collector's answer, for the messages. */
struct answer {
	char text[160];
	size_t n;
};

static size_t on_answer(char *p, size_t size, size_t nmemb, void *arg)
{
	struct answer *a = arg;
	size_t len = size * nmemb, room = sizeof(a->text) - 1 - a->n;
	size_t i, take = len < room ? len : room;

	/* one line of it: newlines and other controls become spaces */
	for (i = 0; i < take; i++)
		a->text[a->n++] = (unsigned char)p[i] < ' ' ? ' ' : p[i];
	a->text[a->n] = '\0';
	return len;
}

int otlp_queue_init(struct otlp_queue *q, const char *url, const char *what,
		    const char *header, const struct otlp_tls *tls,
		    uint64_t interval_us, char *err, size_t len)
{
	struct curl_slist *h = NULL;

	memset(q, 0, sizeof(*q));
	q->url = url;
	q->what = what;
	q->tls = tls;
	/* no point waiting longer than a few intervals: the totals move on */
	q->backoff_max_us = 4 * interval_us;
	if (q->backoff_max_us > OTLP_BACKOFF_MAX_US)
		q->backoff_max_us = OTLP_BACKOFF_MAX_US;
	if (q->backoff_max_us < OTLP_BACKOFF_MIN_US)
		q->backoff_max_us = OTLP_BACKOFF_MIN_US;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    !(q->curl = curl_easy_init())) {
		snprintf(err, len, "libcurl cannot start");
		return -1;
	}
	h = curl_slist_append(h, "Content-Type: application/x-protobuf");
	if (h && header)
		h = curl_slist_append(h, header);
	if (!h) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	q->hdr = h;
	return 0;
}

static void req_free(struct otlp_req *r)
{
	free(r->buf);
	r->buf = NULL;
}

/* Give up the request at the head: counted as dropped. */
static void drop_head(struct otlp_queue *q)
{
	struct otlp_req *r = &q->q[q->head];

	q->dropped++;
	q->records_dropped += r->records;
	req_free(r);
	q->head = (q->head + 1) % OTLP_QUEUE_MAX;
	q->n--;
}

void otlp_queue_push(struct otlp_queue *q, uint8_t *buf, size_t len,
		     uint64_t records)
{
	struct otlp_req *r;

	if (q->n == OTLP_QUEUE_MAX)
		drop_head(q);
	r = &q->q[(q->head + q->n) % OTLP_QUEUE_MAX];
	r->buf = buf;
	r->len = len;
	r->records = records;
	q->n++;
}

enum outcome { SENT, RETRY, REFUSED };

/* POST @r: what became of it, and why in q->err when it failed. */
static enum outcome post(struct otlp_queue *q, const struct otlp_req *r)
{
	struct answer ans = { .n = 0 };
	CURL *c = q->curl;
	long http = 0;
	CURLcode rc;

	ans.text[0] = '\0';
	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, q->url);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, (const char *)r->buf);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->len);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, (struct curl_slist *)q->hdr);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_answer);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &ans);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, OTLP_CONNECT_TIMEOUT_MS);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, OTLP_TIMEOUT_MS);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	/* libcurl verifies the peer and its name by default; these add to it */
	if (q->tls && q->tls->ca)
		curl_easy_setopt(c, CURLOPT_CAINFO, q->tls->ca);
	if (q->tls && q->tls->cert) {
		curl_easy_setopt(c, CURLOPT_SSLCERT, q->tls->cert);
		curl_easy_setopt(c, CURLOPT_SSLKEY, q->tls->key);
	}
	rc = curl_easy_perform(c);
	if (rc != CURLE_OK) {
		snprintf(q->err, sizeof(q->err), "%s", curl_easy_strerror(rc));
		return RETRY;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &http);
	if (http >= 200 && http < 300)
		return SENT;
	snprintf(q->err, sizeof(q->err), "HTTP %ld%s%s", http,
		 ans.n ? ": " : "", ans.text);
	if (http == 429 || http == 502 || http == 503 || http == 504)
		return RETRY;
	return REFUSED;
}

/* Say a change of state once, with what was counted since the last one. */
static void set_state(struct otlp_queue *q, enum otlp_state st)
{
	uint64_t f = q->failed - q->failed_then, d = q->dropped - q->dropped_then;

	if (st == q->state)
		return;
	if (st == OTLP_AWAY)
		warnx_("export: OTLP %s: collector away (%s): %s; retrying with backoff, up to %u requests queued",
		       q->what, q->url, q->err, OTLP_QUEUE_MAX);
	else if (st == OTLP_REFUSING)
		warnx_("export: OTLP %s: the collector (%s) refuses requests: %s; dropping them",
		       q->what, q->url, q->err);
	else if (q->cumulative)
		warnx_("export: OTLP %s: collector back (%s) after %llu failed requests, %llu dropped; no count lost: this request has the totals",
		       q->what, q->url, (unsigned long long)f,
		       (unsigned long long)d);
	else
		warnx_("export: OTLP %s: collector back (%s) after %llu failed requests, %llu dropped; %llu log records dropped so far",
		       q->what, q->url, (unsigned long long)f,
		       (unsigned long long)d,
		       (unsigned long long)q->records_dropped);
	q->state = st;
	/* the attempt that brought the change counts in the next state's */
	q->failed_then = q->failed - (st != OTLP_OK);
	q->dropped_then = q->dropped;
}

static void backoff(struct otlp_queue *q)
{
	q->backoff_us = q->backoff_us ? q->backoff_us * 2 : OTLP_BACKOFF_MIN_US;
	if (q->backoff_us > q->backoff_max_us)
		q->backoff_us = q->backoff_max_us;
	q->next_try_us = mono_us() + q->backoff_us;
}

void otlp_queue_flush(struct otlp_queue *q, bool force)
{
	uint64_t start = mono_us();

	if (!force && q->next_try_us && start < q->next_try_us)
		return;
	while (q->n && mono_us() - start < OTLP_FLUSH_BUDGET_US) {
		struct otlp_req *r = &q->q[q->head];

		switch (post(q, r)) {
		case SENT:
			q->sent++;
			q->records_sent += r->records;
			req_free(r);
			q->head = (q->head + 1) % OTLP_QUEUE_MAX;
			q->n--;
			q->backoff_us = q->next_try_us = 0;
			set_state(q, OTLP_OK);
			break;
		case REFUSED:
			q->failed++;
			set_state(q, OTLP_REFUSING);
			drop_head(q);
			break;
		case RETRY:
			q->failed++;
			set_state(q, OTLP_AWAY);
			backoff(q);
			return;
		}
	}
}

void otlp_queue_close(struct otlp_queue *q)
{
	bool tried = q->sent || q->failed || q->dropped || q->n;

	while (q->n)
		drop_head(q);
	if (!tried)
		;	/* nothing was read: nothing to say */
	else if (q->records_sent || q->records_dropped)
		warnx_("export: OTLP %s to %s: %llu requests sent, %llu failed, %llu dropped; %llu log records sent, %llu dropped",
		       q->what, q->url, (unsigned long long)q->sent,
		       (unsigned long long)q->failed,
		       (unsigned long long)q->dropped,
		       (unsigned long long)q->records_sent,
		       (unsigned long long)q->records_dropped);
	else
		warnx_("export: OTLP %s to %s: %llu requests sent, %llu failed, %llu dropped",
		       q->what, q->url, (unsigned long long)q->sent,
		       (unsigned long long)q->failed,
		       (unsigned long long)q->dropped);
	if (q->curl)
		curl_easy_cleanup(q->curl);
	curl_slist_free_all(q->hdr);
	q->curl = q->hdr = NULL;
}
