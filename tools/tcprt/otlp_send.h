/* SPDX-License-Identifier: GPL-2.0 */
/*
 * OTLP/HTTP requests to a collector, through libcurl: a bounded queue,
 * sent by a thread of its own with retries, exponential backoff and short
 * timeouts, so that the reader (tcprt export, the agent) never waits for
 * a collector that is slow, away or hung: it only queues (docs/otlp.md).
 *
 * Locking: q->lock protects the ring (q, head, n), the counters and the
 * backoff; the thread alone uses curl, err and the request it is sending,
 * which it takes out of the ring while it sends, without the lock.
 *
 * A request is POSTed as application/x-protobuf; 2xx is delivered.  A
 * failure to connect, a timeout, HTTP 429, 502, 503 or 504 (OTLP's
 * retryable answers) leave it at the head of the queue and wait: 1 s
 * after the first failure, doubling, at most OTLP_BACKOFF_MAX_US or four
 * intervals, whichever is less.  Any other answer drops it (the collector
 * will not take it).  When a request arrives while OTLP_QUEUE_MAX wait,
 * the oldest is dropped.  Every attempt that failed counts in failed,
 * every request given up in dropped, and a logs request's records in
 * records_dropped; the state changes (collector away, back, refusing)
 * are said on stderr once each.
 */
#ifndef TCPRT_OTLP_SEND_H
#define TCPRT_OTLP_SEND_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OTLP_QUEUE_MAX		16
#define OTLP_BACKOFF_MIN_US	(1 * 1000000ULL)
#define OTLP_BACKOFF_MAX_US	(30 * 1000000ULL)
#define OTLP_CONNECT_TIMEOUT_MS	2000L
#define OTLP_TIMEOUT_MS		5000L
/* a flush sends queued requests for at most this long */
#define OTLP_FLUSH_BUDGET_US	(5 * 1000000ULL)

struct otlp_req {
	uint8_t *buf;
	size_t len;
	uint64_t records;	/* log records it carries (0: metrics) */
};

enum otlp_state { OTLP_OK, OTLP_AWAY, OTLP_REFUSING };

/*
 * TLS for https:// URLs, each NULL for the default: the CA bundle the
 * collector's certificate is verified against (default: the system's),
 * and tcprt's own certificate and key when the collector asks for one.
 */
struct otlp_tls {
	const char *ca, *cert, *key;
};

struct otlp_queue {
	const char *url, *what;		/* "metrics", "logs" */
	const struct otlp_tls *tls;
	bool cumulative;	/* a request's counts are in the next one too */
	void *curl;
	void *hdr;			/* struct curl_slist */
	pthread_mutex_t lock;
	pthread_cond_t wake;		/* a request, a forced pass, the stop */
	pthread_cond_t passed;		/* a forced pass done */
	pthread_t thread;
	bool thread_on, stopping;
	uint64_t force_gen, passed_gen;	/* forced passes asked, done */
	struct otlp_req q[OTLP_QUEUE_MAX];
	unsigned int head, n;
	uint64_t sent, failed, dropped;		/* requests */
	uint64_t records_sent, records_dropped;	/* log records */
	uint64_t backoff_us, backoff_max_us, next_try_us;	/* mono_us() */
	enum otlp_state state;
	uint64_t failed_then, dropped_then;	/* at the last state change */
	char err[256];
};

/* What the queue counted, taken under its lock. */
struct otlp_counts {
	uint64_t sent, failed, dropped;		/* requests */
	uint64_t records_sent, records_dropped;	/* log records */
	unsigned int queued;
};

/*
 * Set up @q for @url (@what names it in messages) and start its thread.
 * @header: one more HTTP header ("Name: value", e.g. a token read from a
 * file), or NULL.  @tls (kept, not copied) for https.  @interval_us bounds
 * the backoff.  @cumulative: a request's counts are in the next one too
 * (said when the collector is back).  -1 with @err set when libcurl or
 * the thread fails; otlp_queue_close() frees what was made.
 */
int otlp_queue_init(struct otlp_queue *q, const char *url, const char *what,
		    const char *header, const struct otlp_tls *tls,
		    uint64_t interval_us, bool cumulative, char *err, size_t len);

/*
 * Queue a request (@buf is taken) for the thread to send: the oldest is
 * dropped when full.  Never waits for the collector.
 */
void otlp_queue_push(struct otlp_queue *q, uint8_t *buf, size_t len,
		     uint64_t records);

/*
 * With @force (the last output, at exit), a pass now even while backing
 * off - what is queued sent oldest first until the queue is empty, a
 * request fails or OTLP_FLUSH_BUDGET_US went by - and wait for it; else
 * nothing: the thread sends as its backoff allows.
 */
void otlp_queue_flush(struct otlp_queue *q, bool force);

void otlp_queue_counts(struct otlp_queue *q, struct otlp_counts *c);

/* Stop the thread: @q is the caller's alone after. */
void otlp_queue_stop(struct otlp_queue *q);

/* Stop the thread, drop (and count) what is still queued, say the totals. */
void otlp_queue_close(struct otlp_queue *q);

#endif
