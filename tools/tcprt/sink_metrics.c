// SPDX-License-Identifier: GPL-2.0
/*
 * The metrics sink (sink_metrics.h): every record added to the counters
 * and histograms of its series, kept since start; every interval the
 * whole text file rewritten - written to a temporary file in the same
 * directory (a name node_exporter ignores: it does not end in .prom),
 * synced, then renamed over PATH, so a scrape sees the old file or the
 * new one, never half of one - and/or the same counts sent to an
 * OpenTelemetry collector: an OTLP/HTTP protobuf request of every series,
 * cumulative since start, and each task as a log record if asked
 * (otlp.c builds the messages, otlp_send.c queues and sends them).
 *
 * One thread: the reader's.  record() only adds; the files and requests
 * are made in output(), sent or retried in output() and idle().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "container.h"
#include "export.h"
#ifdef TCPRT_OTLP
#include "otlp.h"
#endif
#include "otlp_send.h"
#include "prom.h"
#include "series.h"
#include "sink_metrics.h"
#include "util.h"

static const enum metric hist_metric[NMETRIC_HIST] = {
	M_DURATION, M_PROCESS, M_UPLOAD, M_DOWNLOAD,
};

/* The extension field of histogram @h (>= NMETRIC_HIST). */
static enum rec_ext hist_ext(unsigned int h)
{
	return (enum rec_ext)(EXT_BREAKDOWN + h - NMETRIC_HIST);
}

enum value { V_RECORDS, V_SENT, V_RECV, V_RETRANS };

static const struct counter {
	const char *name, *help;
	unsigned int types;
	enum value value;
} counters[] = {
	{ "tcprt_tasks_total", "Tasks: R, W, N and P records of tcp_rt.",
	  T(R) | T(W) | T(N) | T(P), V_RECORDS },
	{ "tcprt_failed_tasks_total",
	  "Failed tasks: W (closed with the response unacknowledged) and N (closed during the request).",
	  T(W) | T(N), V_RECORDS },
	{ "tcprt_connections_total", "Tracked connections closed (E records).",
	  T(E), V_RECORDS },
	{ "tcprt_sent_bytes_total", "Bytes sent by the tasks.",
	  EXP_SENT_TYPES, V_SENT },
	{ "tcprt_received_bytes_total", "Bytes received by the tasks.",
	  EXP_RECV_TYPES, V_RECV },
	{ "tcprt_retransmissions_total", "Segments retransmitted during the tasks.",
	  EXP_RETRANS_TYPES, V_RETRANS },
};

static const struct histogram {
	const char *name, *help;
} histograms[NHIST] = {
	[H_DURATION] = { "tcprt_duration_seconds",
		"Task duration: first request byte to last response byte acknowledged (P: received)." },
	[H_PROCESS] = { "tcprt_process_seconds",
		"Process time: last request byte to first response byte (P: service time)." },
	[H_UPLOAD] = { "tcprt_upload_seconds",
		"Upload time: first to last request byte." },
	[H_DOWNLOAD] = { "tcprt_download_seconds",
		"Download time: duration - upload - process (P: response time)." },
	[H_RQ_WAIT] = { "tcprt_rq_wait_seconds",
		"Process time spent in the receive queue: last request byte to the application's read of it (P: the response, last byte to its read)." },
	[H_APP] = { "tcprt_app_seconds",
		"Process time spent in the application: its read of the request to its first write of the response." },
	[H_SQ_WAIT] = { "tcprt_sq_wait_seconds",
		"Process time spent in the send queue: the first write of the response to its first transmission (P: of the request)." },
	[H_RWND_LIMITED] = { "tcprt_rwnd_limited_seconds",
		"Download (P: upload) time during which the peer's receive window stopped the sender." },
	[H_SNDBUF_LIMITED] = { "tcprt_sndbuf_limited_seconds",
		"Download (P: upload) time during which the application was blocked on a full send buffer." },
	[H_APP_LIMITED] = { "tcprt_app_limited_seconds",
		"Download (P: upload) time during which everything written was sent and the application wrote more later." },
};

#define NCOUNTERS (sizeof(counters) / sizeof(counters[0]))

#ifndef TCPRT_OTLP
struct otlp_log { int unused; };
#endif
#define LABELS_MAX	8192	/* a series' labels, escaped */

struct metrics {
	char *textfile;
	const struct prom_buckets *b;
	int port;
	struct ct_filter ctf;	/* --netns, --container */
	bool containers;	/* the container label: --max-containers > 0 */
	struct series_table t;
	struct otlp_queue *oq, *lq;	/* --otlp's metrics, --otlp-logs' */
	struct otlp_tls tls;	/* their https: --otlp-ca, --otlp-cert, --otlp-key */
	bool exponential;		/* --otlp-exponential */
	uint64_t log_rate;		/* --otlp-logs RATE; 0: none */
	double log_tokens, log_burst;	/* the rate's token bucket */
	uint64_t log_refill_us;
	uint64_t log_capped;		/* records past the rate */
	struct otlp_log *logs;		/* read, not yet packed */
	size_t nlogs, logs_cap;
	char *url, *logs_url;		/* the queues' */
	uint64_t handed, textfile_failed;
	char host[256];
	uint64_t start_ns;
};

/*
 * --otlp-logs: keep a copy of task @r for the next logs request, if the
 * rate allows - a token bucket of RATE a second, bursts of RATE x interval
 * (the logs are drained in bursts) - and fewer than LOG_PENDING_MAX wait
 * (as many as the logs queue holds); else count it as capped.
 */
#define LOG_BATCH		1024	/* records in a logs request */
#define LOG_PENDING_MAX		(OTLP_QUEUE_MAX * LOG_BATCH)

static void keep_log(struct metrics *x, const struct record *r,
		     const struct series *se)
{
#ifdef TCPRT_OTLP
	const struct exp_val *v = se->val;
	uint64_t now = mono_us();
	struct otlp_log *l;

	x->log_tokens += (double)(now - x->log_refill_us) / 1e6 * (double)x->log_rate;
	if (x->log_tokens > x->log_burst)
		x->log_tokens = x->log_burst;
	x->log_refill_us = now;
	if (x->log_tokens < 1) {
		x->log_capped++;
		return;
	}
	if (x->nlogs == LOG_PENDING_MAX) {	/* memory: a long interval, a high rate */
		x->log_capped++;
		return;
	}
	x->log_tokens -= 1;
	if (x->nlogs == x->logs_cap) {
		x->logs_cap = x->logs_cap ? 2 * x->logs_cap : 256;
		x->logs = xrealloc(x->logs, x->logs_cap, sizeof(*x->logs));
	}
	l = &x->logs[x->nlogs++];
	memset(l, 0, sizeof(*l));
	l->r = *r;
	l->observed_ns = now_us() * 1000;
	if (se->other_key)
		snprintf(l->container, sizeof(l->container), "other");
	else if (se->key)
		snprintf(l->container, sizeof(l->container), "%s", se->key);
	snprintf(l->pod, sizeof(l->pod), "%s", v->pod);
	l->ct_id = v->ct_id;
#else
	(void)x; (void)r; (void)se;
#endif
}

static void metrics_record(void *priv, const struct record *r)
{
	struct metrics *x = priv;
	const struct ct_info *ci = NULL;
	struct series *se;
	struct exp_val *v;
	uint64_t val;
	unsigned int i;

	x->handed++;
	if (r->type == REC_STATS)
		return;
	if (x->port >= 0 && r->port != x->port)
		return;
	if (!ct_match(&x->ctf, r))
		return;
	if (x->containers && rec_has_ct(r))
		ci = ct_of_record(r);
	v = series_get_key(&x->t, r->port, ci && ci->any ? ci->key : NULL,
			   r->role, r->type, &se);
	if (ci && !se->other_key && !v->pod[0]) {
		snprintf(v->pod, sizeof(v->pod), "%s", ci->name.pod);
		v->ct_id = ct_is_container(ci->name.runtime) && ci->name.id[0];
	}
	if (x->log_rate && rec_is_task(r->type))
		keep_log(x, r, se);
	v->records++;
	v->sent += rec_sent_bytes(r);
	v->recv += rec_recv_bytes(r);
	v->retrans += rec_retrans(r);
	if (r->type == REC_E)
		return;
	for (i = 0; i < NHIST; i++) {
		if (i < NMETRIC_HIST) {
			if (!rec_metric(r, hist_metric[i], &val))
				continue;
		} else {
			if (!rec_has_ext(r, hist_ext(i)))
				continue;
			val = r->ext[hist_ext(i)];
		}
		prom_hist_add(&v->h[i], x->b, val);
		if (x->exponential)
			expo_hist_add(&v->e[i], val);
	}
}

/* A label value: backslash, double quote and line feed escaped. */
static size_t label_value(char *buf, size_t len, const char *v)
{
	size_t o = 0;

	for (; *v && o + 3 < len; v++) {
		if (*v == '\\' || *v == '"' || *v == '\n') {
			buf[o++] = '\\';
			buf[o++] = *v == '\n' ? 'n' : *v;
		} else {
			buf[o++] = *v;
		}
	}
	buf[o] = '\0';
	return o;
}

/* port, then container and pod when the series has them, role, type. */
static void labels(char *buf, size_t len, const struct series *s)
{
	const struct exp_val *v = s->val;
	char port[8], ct[LABELS_MAX / 2], pod[CT_POD_MAX + 16] = "";
	char ctl[LABELS_MAX / 2 + 16] = "";

	if (s->port == SERIES_OTHER)
		snprintf(port, sizeof(port), "other");
	else
		snprintf(port, sizeof(port), "%u", s->port);
	if (s->key || s->other_key) {
		label_value(ct, sizeof(ct), s->other_key ? "other" : s->key);
		snprintf(ctl, sizeof(ctl), ",container=\"%s\"", ct);
	}
	if (v->pod[0])
		snprintf(pod, sizeof(pod), ",pod=\"%s\"", v->pod);
	if (s->type == REC_E)
		snprintf(buf, len, "port=\"%s\"%s%s,role=\"%s\"", port, ctl, pod,
			 role_name(s->role));
	else
		snprintf(buf, len, "port=\"%s\"%s%s,role=\"%s\",type=\"%s\"", port,
			 ctl, pod, role_name(s->role), rec_desc[s->type].name);
}

static bool any_series(const struct metrics *x, unsigned int types)
{
	size_t i;

	for (i = 0; i < x->t.n; i++)
		if (types & (1u << x->t.s[i].type))
			return true;
	return false;
}

static bool any_hist(const struct metrics *x, unsigned int h)
{
	size_t i;

	for (i = 0; i < x->t.n; i++)
		if (exp_hist_written(&x->t.s[i], h))
			return true;
	return false;
}

static void counter_line(FILE *out, const char *name, const char *what,
			 uint64_t v)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n", name, what,
		name, name, (unsigned long long)v);
}

/* --otlp beside --textfile: its losses where the user already looks. */
static void write_otlp_counters(FILE *out, const struct metrics *x)
{
	struct otlp_counts m, l;

	otlp_queue_counts(x->oq, &m);
	counter_line(out, "tcprt_otlp_requests_sent_total",
		     "OTLP metrics requests the collector accepted.", m.sent);
	counter_line(out, "tcprt_otlp_requests_failed_total",
		     "OTLP metrics requests that failed (each attempt); the next one carries the totals.",
		     m.failed);
	counter_line(out, "tcprt_otlp_requests_dropped_total",
		     "OTLP metrics requests given up (queue full, refused, or at exit).",
		     m.dropped);
	if (!x->lq)
		return;
	otlp_queue_counts(x->lq, &l);
	counter_line(out, "tcprt_otlp_log_records_sent_total",
		     "Task log records the collector accepted.", l.records_sent);
	counter_line(out, "tcprt_otlp_log_records_dropped_total",
		     "Task log records not delivered: past --otlp-logs' rate, or their request given up.",
		     l.records_dropped + x->log_capped);
}

/* Lines of a status file, @n of them: a gauge @name, the key its label. */
static void status_gauge(FILE *out, const char *name, const char *help,
			 const struct sink_status *st, unsigned int n)
{
	unsigned int i;

	if (!n)
		return;
	fprintf(out, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
	for (i = 0; i < n; i++)
		fprintf(out, "%s{key=\"%s\"} %llu\n", name, st[i].key,
			(unsigned long long)st[i].value);
}

static void write_metrics(FILE *out, const struct metrics *x,
			  const struct sink_input *in)
{
	static char lab[LABELS_MAX];
	unsigned int c, h;
	size_t i;

	for (c = 0; c < NCOUNTERS; c++) {
		const struct counter *k = &counters[c];

		if (!any_series(x, k->types))
			continue;
		fprintf(out, "# HELP %s %s\n# TYPE %s counter\n", k->name,
			k->help, k->name);
		for (i = 0; i < x->t.n; i++) {
			const struct series *s = &x->t.s[i];
			const struct exp_val *v = s->val;
			uint64_t val[] = { v->records, v->sent, v->recv, v->retrans };

			if (!(k->types & (1u << s->type)))
				continue;
			labels(lab, sizeof(lab), s);
			fprintf(out, "%s{%s} %llu\n", k->name, lab,
				(unsigned long long)val[k->value]);
		}
	}
	for (h = 0; h < NHIST; h++) {
		const struct histogram *k = &histograms[h];

		if (!any_hist(x, h))
			continue;
		fprintf(out, "# HELP %s %s\n# TYPE %s histogram\n", k->name,
			k->help, k->name);
		for (i = 0; i < x->t.n; i++) {
			const struct series *s = &x->t.s[i];
			const struct exp_val *v = s->val;

			if (!exp_hist_written(s, h))
				continue;
			labels(lab, sizeof(lab), s);
			prom_hist_write(out, k->name, lab, &v->h[h], x->b);
		}
	}
	fprintf(out, "# HELP tcprt_container_overflow_records_total Records counted as container=\"other\": more than --max-containers containers had series.\n"
		"# TYPE tcprt_container_overflow_records_total counter\n"
		"tcprt_container_overflow_records_total %llu\n",
		(unsigned long long)x->t.key_overflow);
	fprintf(out, "# HELP tcprt_records_read_total Valid lines tcprt read.\n"
		"# TYPE tcprt_records_read_total counter\n"
		"tcprt_records_read_total %llu\n",
		(unsigned long long)in->records);
	fprintf(out, "# HELP tcprt_malformed_lines_total Malformed lines tcprt skipped.\n"
		"# TYPE tcprt_malformed_lines_total counter\n"
		"tcprt_malformed_lines_total %llu\n",
		(unsigned long long)in->bad);
	if (x->oq)
		write_otlp_counters(out, x);
	status_gauge(out, "tcprt_module_status",
		     "The numeric lines of /sys/kernel/debug/tcp-rt/status.",
		     in->status, in->nstatus);
	status_gauge(out, "tcprt_agent_status",
		     "The numeric lines of tcprt agent's status file: each sink's counts, as this interval's output began.",
		     in->stats, in->nstats);
}

/* The text file's content (write_file_atomic()'s @fill). */
struct metrics_out {
	const struct metrics *x;
	const struct sink_input *in;
};

static void fill_textfile(FILE *f, void *arg)
{
	const struct metrics_out *o = arg;

	write_metrics(f, o->x, o->in);
}

#ifdef TCPRT_OTLP
/* The logs requests of the records kept, LOG_BATCH records each. */
static void queue_logs(struct metrics *x)
{
	size_t i, n, len;
	uint8_t *buf;

	for (i = 0; i < x->nlogs; i += n) {
		n = x->nlogs - i < LOG_BATCH ? x->nlogs - i : LOG_BATCH;
		buf = otlp_pack_logs(x->logs + i, n, x->host, &len);
		otlp_queue_push(x->lq, buf, len, n);
	}
	x->nlogs = 0;
}

/* This interval's metrics request, queued; then send what is queued. */
static void publish(struct metrics *x, const struct sink_input *in,
		    bool force)
{
	struct otlp_metrics m = {
		.t = &x->t, .b = x->b, .exponential = x->exponential,
		.host = x->host, .start_ns = x->start_ns,
		.time_ns = now_us() * 1000,
		.status = in->status, .nstatus = in->nstatus,
		.stats = in->stats, .nstats = in->nstats,
	};
	struct otlp_counts c;
	uint8_t *buf;
	size_t len;

	otlp_queue_counts(x->oq, &c);
	m.self = (struct otlp_self){
		.records_read = in->records, .malformed_lines = in->bad,
		.container_overflow = x->t.key_overflow,
		.requests_sent = c.sent, .requests_failed = c.failed,
		.requests_dropped = c.dropped,
		.logs = x->lq != NULL,
	};
	if (x->lq) {
		otlp_queue_counts(x->lq, &c);
		m.self.log_records_sent = c.records_sent;
		m.self.log_records_dropped = c.records_dropped + x->log_capped;
	}
	buf = otlp_pack_metrics(&m, &len);
	otlp_queue_push(x->oq, buf, len, 0);
	otlp_queue_flush(x->oq, force);
	if (x->lq) {
		queue_logs(x);
		otlp_queue_flush(x->lq, force);
	}
}
#else
static void publish(struct metrics *x, const struct sink_input *in,
		    bool force)
{
	(void)x; (void)in; (void)force;
}
#endif

/* Between intervals: retry what waits, when its backoff is over. */
static void metrics_tick(void *priv, uint64_t now, const struct sink_input *in)
{
	struct metrics *x = priv;

	(void)now;
	(void)in;
	if (x->oq)
		otlp_queue_flush(x->oq, false);
	if (x->lq)
		otlp_queue_flush(x->lq, false);
}

/* Write the textfile and send the request of this interval. */
static int metrics_output(void *priv, const struct sink_input *in, bool last)
{
	struct metrics *x = priv;
	struct metrics_out o = { .x = x, .in = in };
	int st = 0;

	if (x->textfile && write_file_atomic(x->textfile, fill_textfile, &o) < 0) {
		x->textfile_failed++;
		st = -1;
	}
	if (x->oq)
		publish(x, in, last);
	return st;
}


/* Say and count what never left, free everything: true when all went. */
static bool metrics_stop(void *priv)
{
	struct metrics *x = priv;
	bool all = true;

	if (x->lq) {
		if (x->log_capped)
			warnx_("export: OTLP logs: %llu task records past --otlp-logs' rate of %llu a second not sent",
			       (unsigned long long)x->log_capped,
			       (unsigned long long)x->log_rate);
		otlp_queue_stop(x->lq);
		all = !x->lq->n && !x->lq->dropped;
		/* the summary's dropped records: the cap's too */
		x->lq->records_dropped += x->log_capped;
		otlp_queue_close(x->lq);
		free(x->lq);
	}
	if (x->oq) {
		otlp_queue_stop(x->oq);
		all = all && !x->oq->n && !x->oq->dropped;
		otlp_queue_close(x->oq);
		free(x->oq);
	}
	free(x->logs);
	free(x->url);
	free(x->logs_url);
	free((char *)x->tls.ca);
	free((char *)x->tls.cert);
	free((char *)x->tls.key);
	free(x->textfile);
	free((char *)x->ctf.container);
	series_free(&x->t, exp_val_free);
	free(x);
	return all;
}

/* What it was handed, its series, and what did not go, by cause. */
static void metrics_stats(void *priv, FILE *out)
{
	struct metrics *x = priv;
	struct otlp_counts c;

	sink_stat(out, "metrics", "records", x->handed);
	sink_stat(out, "metrics", "series", x->t.n);
	sink_stat(out, "metrics", "container_overflow", x->t.key_overflow);
	sink_stat(out, "metrics", "textfile_failed", x->textfile_failed);
	if (x->oq) {
		otlp_queue_counts(x->oq, &c);
		sink_stat(out, "metrics", "otlp_requests_sent", c.sent);
		sink_stat(out, "metrics", "otlp_requests_failed", c.failed);
		sink_stat(out, "metrics", "otlp_requests_dropped", c.dropped);
		sink_stat(out, "metrics", "otlp_requests_queued", c.queued);
	}
	if (x->lq) {
		otlp_queue_counts(x->lq, &c);
		sink_stat(out, "metrics", "otlp_log_records_sent", c.records_sent);
		sink_stat(out, "metrics", "otlp_log_records_dropped", c.records_dropped);
		sink_stat(out, "metrics", "otlp_log_records_capped", x->log_capped);
	}
}

static const struct sink_ops metrics_ops = {
	.name = "metrics",
	.record = metrics_record,
	.output = metrics_output,
	.tick = metrics_tick,
	.stats = metrics_stats,
	.stop = metrics_stop,
};

/* --otlp and --otlp-logs' queues: 0, or -1 with the reason in @err. */
static int metrics_otlp_start(struct metrics *x, const struct metrics_conf *c,
			      char *err, size_t len)
{
	char why[256];

	if (gethostname(x->host, sizeof(x->host) - 1))
		snprintf(x->host, sizeof(x->host), "unknown");
	x->start_ns = now_us() * 1000;
	x->exponential = c->exponential;
	x->tls.ca = c->tls.ca ? xstrdup(c->tls.ca) : NULL;
	x->tls.cert = c->tls.cert ? xstrdup(c->tls.cert) : NULL;
	x->tls.key = c->tls.key ? xstrdup(c->tls.key) : NULL;
	x->url = xstrdup(c->otlp_url);
	x->oq = xcalloc(1, sizeof(*x->oq));
	if (otlp_queue_init(x->oq, x->url, "metrics", c->header, &x->tls,
			    c->interval_us, true, why, sizeof(why)) < 0) {
		snprintf(err, len, "--otlp: %s", why);
		return -1;
	}
	if (!c->log_rate)
		return 0;
	x->logs_url = xstrdup(c->logs_url);
	x->lq = xcalloc(1, sizeof(*x->lq));
	x->log_rate = c->log_rate;
	/* the logs are drained once an interval: allow that burst */
	x->log_burst = (double)c->log_rate *
		       (c->interval_us > USEC_PER_SEC ? (double)c->interval_us / 1e6 : 1.0);
	x->log_tokens = x->log_burst;
	x->log_refill_us = mono_us();
	if (otlp_queue_init(x->lq, x->logs_url, "logs", c->header, &x->tls,
			    c->interval_us, false, why, sizeof(why)) < 0) {
		snprintf(err, len, "--otlp-logs: %s", why);
		return -1;
	}
	return 0;
}

int metrics_sink_start(struct sink *s, const struct metrics_conf *c,
		       char *err, size_t len)
{
	struct metrics *x = xcalloc(1, sizeof(*x));

	x->textfile = c->textfile ? xstrdup(c->textfile) : NULL;
	x->b = c->b;
	x->port = c->port;
	x->ctf = c->ctf;
	if (c->ctf.container)
		x->ctf.container = xstrdup(c->ctf.container);
	series_init(&x->t, sizeof(struct exp_val), (unsigned int)c->max_ports,
		    (unsigned int)c->max_containers);
	x->containers = c->max_containers > 0;
	if (c->otlp_url && metrics_otlp_start(x, c, err, len) < 0) {
		metrics_stop(x);
		return -1;
	}
	s->ops = &metrics_ops;
	s->priv = x;
	return 0;
}

/* ---- the settings ---------------------------------------------------- */

void metrics_conf_init(struct metrics_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->b = prom_buckets_of("r10");
	c->port = -1;
	c->max_ports = DEFAULT_MAX_PORTS;
	c->max_containers = DEFAULT_MAX_CONTAINERS;
}

/* "http://..." or "https://..." with something after it. */
static int set_url(char **to, const char *v, char *err, size_t len)
{
	if ((strncmp(v, "http://", 7) || !v[7]) &&
	    (strncmp(v, "https://", 8) || !v[8])) {
		snprintf(err, len, "'%s' is not an http:// or https:// URL", v);
		return -1;
	}
	set_str(to, v);
	return 0;
}

/* A number of 0 or @min to @max: 0, or -1 with "'V' is not @what". */
static int set_u64(uint64_t *to, const char *v, uint64_t min, uint64_t max,
		   const char *what, char *err, size_t len)
{
	uint64_t n;

	if (!parse_u64(v, strlen(v), &n) || n < min || n > max) {
		snprintf(err, len, "'%s' is not %s", v, what);
		return -1;
	}
	*to = n;
	return 0;
}

/* The settings of the text file and the series. */
static int set_series(struct metrics_conf *c, const char *name, const char *v,
		      char *err, size_t len)
{
	if (!strcmp(name, "textfile")) {
		set_str(&c->textfile, v);
	} else if (!strcmp(name, "buckets")) {
		c->b = prom_buckets_of(v);
		if (!c->b) {
			snprintf(err, len, "'%s' is not r5, r10 or r20", v);
			return -1;
		}
	} else if (!strcmp(name, "max-ports")) {
		return set_u64(&c->max_ports, v, 1, 65535, "1..65535", err, len);
	} else if (!strcmp(name, "max-containers")) {
		return set_u64(&c->max_containers, v, 0, 65535, "0..65535", err, len);
	} else {
		return set_filter(name, v, &c->port, &c->ctf, err, len);
	}
	return 0;
}

/* The settings of OTLP (all "otlp*"). */
static int set_otlp(struct metrics_conf *c, const char *name, const char *v,
		    char *err, size_t len)
{
	char **path = NULL;

	c->otlp_any = true;
	if (!strcmp(name, "otlp"))
		return set_url(&c->otlp_url, v, err, len);
	if (!strcmp(name, "otlp-logs-url"))
		return set_url(&c->otlp_logs_url, v, err, len);
	if (!strcmp(name, "otlp-exponential"))
		return set_flag(&c->exponential, v, err, len);
	if (!strcmp(name, "otlp-insecure"))
		return set_flag(&c->insecure, v, err, len);
	if (!strcmp(name, "otlp-logs"))
		return set_u64(&c->log_rate, v, 1, 1000000,
			       "a rate of 1..1000000 records a second", err, len);
	if (!strcmp(name, "otlp-header-file"))
		path = &c->otlp_header_file;
	else if (!strcmp(name, "otlp-ca"))
		path = (char **)&c->tls.ca;
	else if (!strcmp(name, "otlp-cert"))
		path = (char **)&c->tls.cert;
	else if (!strcmp(name, "otlp-key"))
		path = (char **)&c->tls.key;
	else
		return 1;
	set_str(path, v);
	return 0;
}

int metrics_set(struct metrics_conf *c, const char *name, const char *value,
		char *err, size_t len)
{
	bool flag = !strcmp(name, "otlp-exponential") ||
		    !strcmp(name, "otlp-insecure");

	if (!value && !flag) {
		snprintf(err, len, "needs a value");
		return -1;
	}
	if (!strncmp(name, "otlp", 4))
		return set_otlp(c, name, value, err, len);
	return set_series(c, name, value, err, len);
}

/* URL's .../v1/metrics as .../v1/logs: the collector's logs endpoint. */
static char *logs_url_of(const char *url)
{
	static const char tail[] = "/v1/metrics";
	size_t n = strlen(url), t = sizeof(tail) - 1;
	char *u;

	if (n < t || strcmp(url + n - t, tail))
		return NULL;
	u = xcalloc(n, 1);
	snprintf(u, n, "%.*s/v1/logs", (int)(n - t), url);
	return u;
}

/* --otlp-header-file: one "Name: value" line, mode 0600. */
static int read_header(struct metrics_conf *c, char *err, size_t len)
{
	const char *colon;

	c->header = read_secret(c->otlp_header_file, "--otlp-header-file", err, len);
	if (!c->header)
		return -1;
	colon = strchr(c->header, ':');
	if (!colon || colon == c->header ||
	    strcspn(c->header, " \t") < (size_t)(colon - c->header)) {
		snprintf(err, len, "--otlp-header-file %s: not one \"Name: value\" line",
			 c->otlp_header_file);
		return -1;
	}
	return 0;
}

/* The URL's host is this machine: localhost, 127.0.0.0/8 or [::1]. */
static bool url_loopback(const char *url)
{
	const char *h = strstr(url, "://") + 3;
	size_t n = strcspn(h, ":/?#");

	if (*h == '[')
		return !strncmp(h, "[::1]", 5);
	return (n == 9 && !strncmp(h, "localhost", 9)) || !strncmp(h, "127.", 4);
}

/*
 * Secure by default: what goes to another machine is encrypted (https)
 * and tcprt shows who it is (a client certificate, or the header file's
 * token); --otlp-insecure says otherwise.  A collector on this machine
 * (the usual agent) needs neither.
 */
static int check_secure(const struct metrics_conf *c, const char *opt,
			const char *url, char *err, size_t len)
{
	if (!url || c->insecure || url_loopback(url))
		return 0;
	if (strncmp(url, "https://", 8)) {
		snprintf(err, len, "%s %s: not encrypted (http://) to another machine: use https://, or --otlp-insecure to send in clear",
			 opt, url);
		return -1;
	}
	if (!c->tls.cert && !c->otlp_header_file) {
		snprintf(err, len, "%s %s: tcprt would not say who it is: give --otlp-cert and --otlp-key, or --otlp-header-file with a token, or --otlp-insecure",
			 opt, url);
		return -1;
	}
	return 0;
}

/* The OTLP settings together, and the files they name. */
static int check_otlp(struct metrics_conf *c, char *err, size_t len)
{
	int fd;

#ifndef TCPRT_OTLP
	snprintf(err, len, "--otlp: this tcprt was built without OTLP: %s",
		 TCPRT_NO_OTLP);
	return -1;
#endif
	if (!c->otlp_url) {
		snprintf(err, len, "--otlp-exponential, --otlp-logs, --otlp-logs-url and --otlp-header-file need --otlp URL");
		return -1;
	}
	if (c->otlp_logs_url && !c->log_rate) {
		snprintf(err, len, "--otlp-logs-url needs --otlp-logs RATE");
		return -1;
	}
	if (!c->tls.cert != !c->tls.key) {
		snprintf(err, len, "--otlp-cert and --otlp-key go together");
		return -1;
	}
	if (c->tls.key) {
		fd = open_private(c->tls.key, "--otlp-key", err, len);
		if (fd < 0)
			return -1;
		close(fd);
	}
	if (check_secure(c, "--otlp", c->otlp_url, err, len) < 0 ||
	    check_secure(c, "--otlp-logs-url", c->otlp_logs_url, err, len) < 0)
		return -1;
	return 0;
}

/* What the OTLP settings name, once all are known good. */
static int otlp_files(struct metrics_conf *c, char *err, size_t len)
{
	if (c->otlp_header_file && read_header(c, err, len) < 0)
		return -1;
	if (!c->log_rate)
		return 0;
	c->logs_url = c->otlp_logs_url ? xstrdup(c->otlp_logs_url) :
					 logs_url_of(c->otlp_url);
	if (!c->logs_url) {
		snprintf(err, len, "--otlp-logs: '%s' does not end in /v1/metrics: give the logs endpoint with --otlp-logs-url",
			 c->otlp_url);
		return -1;
	}
	return 0;
}

int metrics_check(struct metrics_conf *c, char *err, size_t len)
{
	size_t n;

	if (!c->textfile && !c->otlp_url) {
		snprintf(err, len, "--textfile PATH or --otlp URL is required");
		return -1;
	}
	if (c->otlp_any && check_otlp(c, err, len) < 0)
		return -1;
	n = c->textfile ? strlen(c->textfile) : 0;
	if (c->textfile && (n < 6 || strcmp(c->textfile + n - 5, ".prom"))) {
		snprintf(err, len, "--textfile: '%s' does not end in .prom (node_exporter reads only *.prom)",
			 c->textfile);
		return -1;
	}
	return c->otlp_url ? otlp_files(c, err, len) : 0;
}

void metrics_conf_free(struct metrics_conf *c)
{
	if (c->header)
		explicit_bzero(c->header, strlen(c->header));
	free(c->header);
	free(c->logs_url);
	free(c->textfile);
	free((char *)c->ctf.container);
	free(c->otlp_url);
	free(c->otlp_logs_url);
	free(c->otlp_header_file);
	free((char *)c->tls.ca);
	free((char *)c->tls.cert);
	free((char *)c->tls.key);
	memset(c, 0, sizeof(*c));
}
