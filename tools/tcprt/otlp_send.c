// SPDX-License-Identifier: GPL-2.0
/* OTLP/HTTP requests: the queue, the backoff, libcurl.  See otlp_send.h. */
#include "otlp_send.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

static void *sender(void *arg);

int otlp_queue_init(struct otlp_queue *q, const char *url, const char *what,
		    const char *header, const struct otlp_tls *tls,
		    uint64_t interval_us, bool cumulative, char *err, size_t len)
{
	struct curl_slist *h = NULL;
	pthread_condattr_t ca;
	int e;

	memset(q, 0, sizeof(*q));
	pthread_mutex_init(&q->lock, NULL);
	/* the backoff's times are mono_us()'s */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->wake, &ca);
	pthread_cond_init(&q->passed, &ca);
	pthread_condattr_destroy(&ca);
	q->url = url;
	q->what = what;
	q->tls = tls;
	q->cumulative = cumulative;
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
	e = pthread_create(&q->thread, NULL, sender, q);
	if (e) {
		snprintf(err, len, "no thread to send: %s", strerror(e));
		return -1;
	}
	q->thread_on = true;
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

	pthread_mutex_lock(&q->lock);
	if (q->n == OTLP_QUEUE_MAX)
		drop_head(q);
	r = &q->q[(q->head + q->n) % OTLP_QUEUE_MAX];
	r->buf = buf;
	r->len = len;
	r->records = records;
	q->n++;
	pthread_cond_signal(&q->wake);
	pthread_mutex_unlock(&q->lock);
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

/*
 * A request that failed and may be tried again goes back to the head -
 * unless the queue filled meanwhile: it is the oldest, and dropped.
 */
static void put_back(struct otlp_queue *q, struct otlp_req *r)
{
	if (q->n == OTLP_QUEUE_MAX) {
		q->dropped++;
		q->records_dropped += r->records;
		req_free(r);
		return;
	}
	q->head = (q->head + OTLP_QUEUE_MAX - 1) % OTLP_QUEUE_MAX;
	q->q[q->head] = *r;
	q->n++;
}

/*
 * Send what is queued, oldest first: until the queue is empty, a request
 * fails, or OTLP_FLUSH_BUDGET_US went by.  Called and returning with the
 * lock held; each request is taken out of the ring and sent without it.
 */
static void pass(struct otlp_queue *q)
{
	uint64_t start = mono_us();
	struct otlp_req r;
	enum outcome o;

	while (q->n && !q->stopping && mono_us() - start < OTLP_FLUSH_BUDGET_US) {
		r = q->q[q->head];
		q->q[q->head].buf = NULL;
		q->head = (q->head + 1) % OTLP_QUEUE_MAX;
		q->n--;
		pthread_mutex_unlock(&q->lock);
		o = post(q, &r);
		pthread_mutex_lock(&q->lock);
		switch (o) {
		case SENT:
			q->sent++;
			q->records_sent += r.records;
			req_free(&r);
			q->backoff_us = q->next_try_us = 0;
			set_state(q, OTLP_OK);
			break;
		case REFUSED:
			q->failed++;
			set_state(q, OTLP_REFUSING);
			q->dropped++;
			q->records_dropped += r.records;
			req_free(&r);
			break;
		case RETRY:
			q->failed++;
			set_state(q, OTLP_AWAY);
			backoff(q);
			put_back(q, &r);
			return;
		}
	}
}

/* Wait on @c until @until (mono_us()), or a signal. */
static void wait_until_us(pthread_cond_t *c, pthread_mutex_t *m, uint64_t until)
{
	struct timespec ts = {
		.tv_sec = (time_t)(until / USEC_PER_SEC),
		.tv_nsec = (long)(until % USEC_PER_SEC) * 1000,
	};

	pthread_cond_timedwait(c, m, &ts);
}

/*
 * The queue's thread: a pass when a request waits and no backoff holds it,
 * or when one is forced; else asleep until the backoff ends or a request,
 * a forced pass or the stop comes.
 */
static void *sender(void *arg)
{
	struct otlp_queue *q = arg;
	uint64_t gen;

	pthread_mutex_lock(&q->lock);
	while (!q->stopping) {
		if (q->passed_gen < q->force_gen) {
			gen = q->force_gen;
			pass(q);
			q->passed_gen = gen;
			pthread_cond_broadcast(&q->passed);
		} else if (q->n && (!q->next_try_us || mono_us() >= q->next_try_us)) {
			pass(q);
		} else if (q->n) {
			wait_until_us(&q->wake, &q->lock, q->next_try_us);
		} else {
			pthread_cond_wait(&q->wake, &q->lock);
		}
	}
	/* whoever waits for a forced pass is not left waiting */
	q->passed_gen = q->force_gen;
	pthread_cond_broadcast(&q->passed);
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

void otlp_queue_flush(struct otlp_queue *q, bool force)
{
	uint64_t gen;

	if (!force || !q->thread_on)
		return;
	pthread_mutex_lock(&q->lock);
	gen = ++q->force_gen;
	pthread_cond_signal(&q->wake);
	while (q->passed_gen < gen)
		pthread_cond_wait(&q->passed, &q->lock);
	pthread_mutex_unlock(&q->lock);
}

void otlp_queue_counts(struct otlp_queue *q, struct otlp_counts *c)
{
	pthread_mutex_lock(&q->lock);
	*c = (struct otlp_counts){
		.sent = q->sent, .failed = q->failed, .dropped = q->dropped,
		.records_sent = q->records_sent,
		.records_dropped = q->records_dropped, .queued = q->n,
	};
	pthread_mutex_unlock(&q->lock);
}

void otlp_queue_stop(struct otlp_queue *q)
{
	if (!q->thread_on)
		return;
	pthread_mutex_lock(&q->lock);
	q->stopping = true;
	pthread_cond_signal(&q->wake);
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->thread, NULL);
	q->thread_on = false;
}

void otlp_queue_close(struct otlp_queue *q)
{
	bool tried;

	otlp_queue_stop(q);
	tried = q->sent || q->failed || q->dropped || q->n;

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
	pthread_cond_destroy(&q->wake);
	pthread_cond_destroy(&q->passed);
	pthread_mutex_destroy(&q->lock);
}
