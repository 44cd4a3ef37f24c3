// SPDX-License-Identifier: GPL-2.0
/*
 * tcprt export: Prometheus metrics for node_exporter's textfile collector.
 *
 * Every interval: drain the logs, add the records to counters and
 * histograms kept since start, and rewrite the whole text file - written
 * to a temporary file in the same directory (a name node_exporter ignores:
 * it does not end in .prom), synced, then renamed over PATH, so a scrape
 * sees the old file or the new one, never half of one.
 *
 * With --otlp URL the same counts go to an OpenTelemetry collector every
 * interval as well (or instead): an OTLP/HTTP protobuf request of every
 * series, cumulative since start, and with --otlp-logs each task as a log
 * record (otlp.c builds the messages, otlp_send.c queues and sends them;
 * docs/otlp.md).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "container.h"
#include "export.h"
#include "input.h"
#ifdef TCPRT_OTLP
#include "otlp.h"
#endif
#include "otlp_send.h"
#include "prom.h"
#include "series.h"
#include "util.h"

static const char help[] =
"usage: tcprt export [--textfile PATH] [--otlp URL] [--interval SECONDS]\n"
"                    [--once] [--buckets r5|r10|r20] [--port P] [--max-ports N]\n"
"                    [--netns N] [--container ID] [--max-containers N]\n"
"                    [--archive FILE] [--dir DIR] [--input-format F] [--otlp-exponential]\n"
"                    [--otlp-logs RATE [--otlp-logs-url URL]]\n"
"                    [--otlp-header-file FILE] [--otlp-ca FILE]\n"
"                    [--otlp-cert FILE --otlp-key FILE] [--otlp-insecure]\n"
"\n"
"Drain the tcp_rt logs every SECONDS (default 15) and write Prometheus\n"
"metrics to PATH for node_exporter's textfile collector (point its\n"
"--collector.textfile.directory at PATH's folder; PATH must end in .prom).\n"
"The file is written to a temporary file and renamed: a scrape never sees\n"
"half a file.  Counters count from tcprt's start.  Labels: port, role\n"
"(server/client), type (R W N P); no addresses.  Records with netns or\n"
"cgroup (tcp_rt's log_ext) also get container (as tcprt read names it: the\n"
"container's id, the systemd service, the cgroup path, or the number when\n"
"nothing matches) and, for a Kubernetes pod's, pod (its UID).  With\n"
"--otlp, the same counts also (or only) go to an OpenTelemetry collector\n"
"(docs/otlp.md); at least one of --textfile and --otlp is needed.\n"
"\n"
"  -t, --textfile PATH  the .prom file to write\n"
"  -i, --interval S     seconds between updates (default 15)\n"
"  -1, --once           read once, write once, exit\n"
"  -b, --buckets B      histogram bounds per decade, 10 us .. 100 s: r5, r10\n"
"                       (default) or r20, the Renard series; histogram_quantile\n"
"                       is then within 60 %, 28 % or 13 % of the exact value\n"
"  -p, --port P         only service port P\n"
"  -m, --max-ports N    at most N ports get series of their own (default 64);\n"
"                       records of further ports are counted as port=\"other\"\n"
"  -n, --netns N        only records of network namespace N (N or net:[N])\n"
"  -c, --container ID   only records of container ID: its full id, a prefix\n"
"                       of at least 12 hex digits, or NAME.service\n"
"  -M, --max-containers N  at most N containers get series of their own\n"
"                       (default 64); records of further ones are counted as\n"
"                       container=\"other\" and in\n"
"                       tcprt_container_overflow_records_total; 0: no\n"
"                       container label\n"
"  -a, --archive FILE   also append every valid record line read to FILE\n"
"                       (reading consumes the logs: this keeps a copy)\n"
"  -d, --dir DIR        read recorded rt-network-log* files of DIR instead\n"
INPUT_FORMAT_HELP
"      --otlp URL       also (or instead of --textfile) POST the same counts,\n"
"                       cumulative, as OTLP/HTTP protobuf to URL every\n"
"                       interval, e.g. http://127.0.0.1:8428/opentelemetry/\n"
"                       v1/metrics (VictoriaMetrics); names in tcprt(8)\n"
"      --otlp-exponential  exponential histograms (scale 3) instead of\n"
"                       --buckets' bounds\n"
"      --otlp-logs RATE also each task as an OTLP log record, at most RATE\n"
"                       a second (the rest counted as dropped), to URL's\n"
"                       .../v1/logs or --otlp-logs-url URL\n"
"      --otlp-header-file FILE  one more HTTP header, \"Name: value\", read\n"
"                       from FILE (mode 0600: a token stays off the command\n"
"                       line)\n"
"      --otlp-ca FILE   verify the collector's certificate against FILE's\n"
"                       CAs (default: the system's)\n"
"      --otlp-cert FILE, --otlp-key FILE  tcprt's certificate and key, for a\n"
"                       collector that asks for one (the key mode 0600)\n"
"      --otlp-insecure  allow a collector on another machine over http://,\n"
"                       or over https:// without a certificate or header file\n"
"                       saying who tcprt is: by default refused\n"
"  -h, --help           this text\n"
"\n"
"Metrics (all with labels port, role, type unless said otherwise):\n"
"  tcprt_tasks_total                 tasks (R W N P records)\n"
"  tcprt_failed_tasks_total          W and N records\n"
"  tcprt_connections_total           closed connections (E), port and role\n"
"  tcprt_sent_bytes_total            bytes sent by the tasks (R W P)\n"
"  tcprt_received_bytes_total        bytes received by the tasks (R N P)\n"
"  tcprt_retransmissions_total       retransmitted segments (R W P)\n"
"  tcprt_duration_seconds            histogram: duration (R W N P)\n"
"  tcprt_process_seconds             histogram: process time (R W),\n"
"                                    service time (P)\n"
"  tcprt_upload_seconds              histogram: upload time (R W P)\n"
"  tcprt_download_seconds            histogram: download time (R W P)\n"
"  tcprt_rq_wait_seconds             histograms of the time breakdown\n"
"  tcprt_app_seconds                 (tcp_rt's log_ext, docs/records.md):\n"
"  tcprt_sq_wait_seconds             rq_wait, app, sq_wait (R W; P: no\n"
"  tcprt_rwnd_limited_seconds        app), rwnd_limited, sndbuf_limited,\n"
"  tcprt_sndbuf_limited_seconds      app_limited (R W P); a series only\n"
"  tcprt_app_limited_seconds         once a record of it had the field\n"
"  tcprt_records_read_total          valid lines read (no labels)\n"
"  tcprt_malformed_lines_total       malformed lines skipped (no labels)\n"
"  tcprt_container_overflow_records_total\n"
"                                    records counted as container=\"other\"\n"
"                                    (no labels)\n"
"  tcprt_module_status{key}          every numeric line of tcp_rt's status\n";

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
#define MAX_STATUS 64
#define DEFAULT_MAX_CONTAINERS	64
#define LABELS_MAX	8192	/* a series' labels, escaped */

struct exporter {
	const struct prom_buckets *b;
	int port;
	struct ct_filter ctf;	/* --netns, --container */
	bool containers;	/* the container label: --max-containers > 0 */
	struct series_table t;
	struct input in;
	struct exp_status status[MAX_STATUS];
	unsigned int nstatus;
	struct otlp_queue *oq, *lq;	/* --otlp's metrics, --otlp-logs' */
	struct otlp_tls tls;	/* their https: --otlp-ca, --otlp-cert, --otlp-key */
	bool exponential;		/* --otlp-exponential */
	uint64_t log_rate;		/* --otlp-logs RATE; 0: none */
	double log_tokens, log_burst;	/* the rate's token bucket */
	uint64_t log_refill_us;
	uint64_t log_capped;		/* records past the rate */
	struct otlp_log *logs;		/* read, not yet packed */
	size_t nlogs, logs_cap;
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

static void keep_log(struct exporter *x, const struct record *r,
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

static void add(const struct record *r, void *arg)
{
	struct exporter *x = arg;
	const struct ct_info *ci = NULL;
	struct series *se;
	struct exp_val *v;
	uint64_t val;
	unsigned int i;

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

static void status_line(const char *key, uint64_t value, void *arg)
{
	struct exporter *x = arg;

	if (x->nstatus == MAX_STATUS || strlen(key) >= sizeof(x->status[0].key))
		return;
	/* keys are [a-z_A-Z0-9]; anything else would need escaping */
	if (key[strspn(key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")])
		return;
	snprintf(x->status[x->nstatus].key, sizeof(x->status[0].key), "%s", key);
	x->status[x->nstatus++].value = value;
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

static bool any_series(const struct exporter *x, unsigned int types)
{
	size_t i;

	for (i = 0; i < x->t.n; i++)
		if (types & (1u << x->t.s[i].type))
			return true;
	return false;
}

static bool any_hist(const struct exporter *x, unsigned int h)
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
static void write_otlp_counters(FILE *out, const struct exporter *x)
{
	counter_line(out, "tcprt_otlp_requests_sent_total",
		     "OTLP metrics requests the collector accepted.", x->oq->sent);
	counter_line(out, "tcprt_otlp_requests_failed_total",
		     "OTLP metrics requests that failed (each attempt); the next one carries the totals.",
		     x->oq->failed);
	counter_line(out, "tcprt_otlp_requests_dropped_total",
		     "OTLP metrics requests given up (queue full, refused, or at exit).",
		     x->oq->dropped);
	if (!x->lq)
		return;
	counter_line(out, "tcprt_otlp_log_records_sent_total",
		     "Task log records the collector accepted.", x->lq->records_sent);
	counter_line(out, "tcprt_otlp_log_records_dropped_total",
		     "Task log records not delivered: past --otlp-logs' rate, or their request given up.",
		     x->lq->records_dropped + x->log_capped);
}

static void write_metrics(FILE *out, const struct exporter *x)
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
		(unsigned long long)x->in.records);
	fprintf(out, "# HELP tcprt_malformed_lines_total Malformed lines tcprt skipped.\n"
		"# TYPE tcprt_malformed_lines_total counter\n"
		"tcprt_malformed_lines_total %llu\n",
		(unsigned long long)x->in.bad);
	if (x->oq)
		write_otlp_counters(out, x);
	if (x->nstatus) {
		fprintf(out, "# HELP tcprt_module_status The numeric lines of /sys/kernel/debug/tcp-rt/status.\n"
			"# TYPE tcprt_module_status gauge\n");
		for (c = 0; c < x->nstatus; c++)
			fprintf(out, "tcprt_module_status{key=\"%s\"} %llu\n",
				x->status[c].key,
				(unsigned long long)x->status[c].value);
	}
}

/* Write to PATH's folder under a name node_exporter ignores, then rename. */
static int write_textfile(const char *path, const struct exporter *x)
{
	const char *slash = strrchr(path, '/');
	int dlen = slash ? (int)(slash - path + 1) : 0;
	char tmp[4096];
	FILE *f;
	int err = 0;

	/* "dir/name.prom" -> "dir/.name.prom.tmp.PID" */
	if (snprintf(tmp, sizeof(tmp), "%.*s.%s.tmp.%ld", dlen, path,
		     path + dlen, (long)getpid()) >= (int)sizeof(tmp)) {
		warnx_("%s: path too long", path);
		return -1;
	}
	f = fopen(tmp, "w");
	if (!f) {
		warnx_("%s: %s", tmp, strerror(errno));
		return -1;
	}
	write_metrics(f, x);
	if (fflush(f) || ferror(f) || fsync(fileno(f)))
		err = errno ? errno : EIO;
	if (fclose(f) && !err)
		err = errno;
	if (!err && chmod(tmp, 0644))
		err = errno;
	if (!err && rename(tmp, path))
		err = errno;
	if (err) {
		warnx_("writing %s: %s", path, strerror(err));
		unlink(tmp);
		return -1;
	}
	return 0;
}

static void update(struct exporter *x)
{
	input_read(&x->in);
	x->nstatus = 0;
	input_status(&x->in, status_line, x);
}

#ifdef TCPRT_OTLP
/* The logs requests of the records kept, LOG_BATCH records each. */
static void queue_logs(struct exporter *x)
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
static void publish(struct exporter *x, bool force)
{
	struct otlp_metrics m = {
		.t = &x->t, .b = x->b, .exponential = x->exponential,
		.host = x->host, .start_ns = x->start_ns,
		.time_ns = now_us() * 1000,
		.status = x->status, .nstatus = x->nstatus,
	};
	uint8_t *buf;
	size_t len;

	m.self = (struct otlp_self){
		.records_read = x->in.records, .malformed_lines = x->in.bad,
		.container_overflow = x->t.key_overflow,
		.requests_sent = x->oq->sent, .requests_failed = x->oq->failed,
		.requests_dropped = x->oq->dropped,
		.logs = x->lq != NULL,
	};
	if (x->lq) {
		m.self.log_records_sent = x->lq->records_sent;
		m.self.log_records_dropped = x->lq->records_dropped + x->log_capped;
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
static void publish(struct exporter *x, bool force)
{
	(void)x; (void)force;
}
#endif

/* Between intervals: retry what waits, when its backoff is over. */
static void retry(struct exporter *x)
{
	if (x->oq)
		otlp_queue_flush(x->oq, false);
	if (x->lq)
		otlp_queue_flush(x->lq, false);
}

/* Write the textfile and send the request of this interval. */
static int output(struct exporter *x, const char *path, bool last)
{
	int st = 0;

	if (path && write_textfile(path, x) < 0)
		st = -1;
	if (x->oq)
		publish(x, last);
	return st;
}

/* @opt's value: "http://..." or "https://..." with something after it. */
static const char *opt_url(const char *opt, const char *u)
{
	if ((!strncmp(u, "http://", 7) && u[7]) ||
	    (!strncmp(u, "https://", 8) && u[8]))
		return u;
	usage_error("export", "%s: '%s' is not an http:// or https:// URL", opt, u);
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
static char *read_header(const char *path)
{
	char err[512], *h = read_secret(path, "--otlp-header-file", err, sizeof(err));
	const char *colon;

	if (!h)
		usage_error("export", "%s", err);
	colon = strchr(h, ':');
	if (!colon || colon == h || strcspn(h, " \t") < (size_t)(colon - h))
		usage_error("export", "--otlp-header-file %s: not one \"Name: value\" line",
			    path);
	return h;
}

enum {
	O_OTLP = 256, O_OTLP_EXPONENTIAL, O_OTLP_LOGS, O_OTLP_LOGS_URL,
	O_OTLP_HEADER_FILE, O_OTLP_CA, O_OTLP_CERT, O_OTLP_KEY, O_OTLP_INSECURE,
};

/* What --otlp* set, checked once all options are read. */
struct otlp_opts {
	const char *url, *logs_url, *header_file;
	struct otlp_tls tls;
	bool exponential, any, insecure;
	uint64_t log_rate;
};

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
static void otlp_check_secure(const struct otlp_opts *o, const char *opt,
			      const char *url)
{
	if (!url || o->insecure || url_loopback(url))
		return;
	if (strncmp(url, "https://", 8))
		usage_error("export", "%s %s: not encrypted (http://) to another machine: use https://, or --otlp-insecure to send in clear",
			    opt, url);
	if (!o->tls.cert && !o->header_file)
		usage_error("export", "%s %s: tcprt would not say who it is: give --otlp-cert and --otlp-key, or --otlp-header-file with a token, or --otlp-insecure",
			    opt, url);
}

static void otlp_check(const struct otlp_opts *o, const char *path)
{
	if (!path && !o->url)
		usage_error("export", "--textfile PATH or --otlp URL is required");
	if (!o->any)
		return;
#ifndef TCPRT_OTLP
	die(EXIT_USAGE, "export: --otlp: this tcprt was built without OTLP: %s",
	    TCPRT_NO_OTLP);
#endif
	if (!o->url)
		usage_error("export", "--otlp-exponential, --otlp-logs, --otlp-logs-url and --otlp-header-file need --otlp URL");
	if (o->logs_url && !o->log_rate)
		usage_error("export", "--otlp-logs-url needs --otlp-logs RATE");
	if (!o->tls.cert != !o->tls.key)
		usage_error("export", "--otlp-cert and --otlp-key go together");
	if (o->tls.key) {
		char err[512];
		int fd = open_private(o->tls.key, "--otlp-key", err, sizeof(err));

		if (fd < 0)
			usage_error("export", "%s", err);
		close(fd);
	}
	otlp_check_secure(o, "--otlp", o->url);
	otlp_check_secure(o, "--otlp-logs-url", o->logs_url);
}

static int otlp_start(struct exporter *x, const struct otlp_opts *o,
		      uint64_t interval)
{
	char err[256], *header = NULL;
	char *logs_url = NULL;
	int st = EXIT_OK;

	if (o->header_file)
		header = read_header(o->header_file);
	if (o->log_rate) {
		logs_url = o->logs_url ? strdup(o->logs_url) : logs_url_of(o->url);
		if (!logs_url)
			usage_error("export", "--otlp-logs: '%s' does not end in /v1/metrics: give the logs endpoint with --otlp-logs-url",
				    o->url);
	}
	if (gethostname(x->host, sizeof(x->host) - 1))
		snprintf(x->host, sizeof(x->host), "unknown");
	x->start_ns = now_us() * 1000;
	x->exponential = o->exponential;
	x->oq = xcalloc(1, sizeof(*x->oq));
	x->tls = o->tls;
	if (otlp_queue_init(x->oq, o->url, "metrics", header, &x->tls, interval,
			    err, sizeof(err)) < 0) {
		warnx_("export: --otlp: %s", err);
		st = EXIT_RUNTIME;
	}
	x->oq->cumulative = true;
	if (st == EXIT_OK && logs_url) {
		x->lq = xcalloc(1, sizeof(*x->lq));
		x->log_rate = o->log_rate;
		/* the logs are drained once an interval: allow that burst */
		x->log_burst = (double)o->log_rate *
			       (interval > USEC_PER_SEC ? (double)interval / 1e6 : 1.0);
		x->log_tokens = x->log_burst;
		x->log_refill_us = mono_us();
		if (otlp_queue_init(x->lq, logs_url, "logs", header, &x->tls,
				    interval, err, sizeof(err)) < 0) {
			warnx_("export: --otlp-logs: %s", err);
			st = EXIT_RUNTIME;
		}
	}
	if (header) {
		explicit_bzero(header, strlen(header));
		free(header);
	}
	return st;
}

/* Say and count what never left; true when everything was delivered. */
static bool otlp_stop(struct exporter *x)
{
	bool all = true;

	if (x->lq) {
		if (x->log_capped)
			warnx_("export: OTLP logs: %llu task records past --otlp-logs' rate of %llu a second not sent",
			       (unsigned long long)x->log_capped,
			       (unsigned long long)x->log_rate);
		all = !x->lq->n && !x->lq->dropped;
		/* the summary's dropped records: the cap's too */
		x->lq->records_dropped += x->log_capped;
		otlp_queue_close(x->lq);
		free((char *)x->lq->url);
		free(x->lq);
	}
	if (x->oq) {
		all = all && !x->oq->n && !x->oq->dropped;
		otlp_queue_close(x->oq);
		free(x->oq);
	}
	free(x->logs);
	return all;
}

int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "textfile", required_argument, NULL, 't' },
		{ "interval", required_argument, NULL, 'i' },
		{ "once", no_argument, NULL, '1' },
		{ "buckets", required_argument, NULL, 'b' },
		{ "port", required_argument, NULL, 'p' },
		{ "max-ports", required_argument, NULL, 'm' },
		{ "netns", required_argument, NULL, 'n' },
		{ "container", required_argument, NULL, 'c' },
		{ "max-containers", required_argument, NULL, 'M' },
		{ "archive", required_argument, NULL, 'a' },
		{ "dir", required_argument, NULL, 'd' },
		{ "input-format", required_argument, NULL, OPT_INPUT_FORMAT },
		{ "otlp", required_argument, NULL, O_OTLP },
		{ "otlp-exponential", no_argument, NULL, O_OTLP_EXPONENTIAL },
		{ "otlp-logs", required_argument, NULL, O_OTLP_LOGS },
		{ "otlp-logs-url", required_argument, NULL, O_OTLP_LOGS_URL },
		{ "otlp-header-file", required_argument, NULL, O_OTLP_HEADER_FILE },
		{ "otlp-ca", required_argument, NULL, O_OTLP_CA },
		{ "otlp-cert", required_argument, NULL, O_OTLP_CERT },
		{ "otlp-key", required_argument, NULL, O_OTLP_KEY },
		{ "otlp-insecure", no_argument, NULL, O_OTLP_INSECURE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct exporter *x = xcalloc(1, sizeof(*x));
	uint64_t interval = 15 * USEC_PER_SEC, next, max_ports = DEFAULT_MAX_PORTS;
	uint64_t max_containers = DEFAULT_MAX_CONTAINERS;
	const char *path = NULL, *dir = NULL, *archive = NULL;
	enum input_format infmt = INPUT_AUTO;
	struct otlp_opts oo = { 0 };
	bool once = false;
	unsigned int tick = 0;
	int o, st = EXIT_OK;
	size_t plen;

	x->b = prom_buckets_of("r10");
	x->port = -1;
	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":t:i:1b:p:m:n:c:M:a:d:h", opts, NULL)) != -1) {
		switch (o) {
		case 't': path = optarg; break;
		case 'i': interval = opt_seconds("export", "--interval", optarg, false); break;
		case '1': once = true; break;
		case 'b':
			x->b = prom_buckets_of(optarg);
			if (!x->b)
				usage_error("export", "--buckets: '%s' is not r5, r10 or r20",
					    optarg);
			break;
		case 'p': x->port = opt_port("export", optarg); break;
		case 'm':
			if (!parse_u64(optarg, strlen(optarg), &max_ports) ||
			    max_ports < 1 || max_ports > 65535)
				usage_error("export", "--max-ports: '%s' is not 1..65535",
					    optarg);
			break;
		case 'n':
			x->ctf.netns_set = true;
			x->ctf.netns = opt_netns("export", optarg);
			break;
		case 'c': x->ctf.container = opt_container("export", optarg); break;
		case 'M':
			if (!parse_u64(optarg, strlen(optarg), &max_containers) ||
			    max_containers > 65535)
				usage_error("export", "--max-containers: '%s' is not 0..65535",
					    optarg);
			break;
		case 'a': archive = optarg; break;
		case 'd': dir = optarg; break;
		case OPT_INPUT_FORMAT:
			infmt = opt_input_format("export", optarg);
			break;
		case O_OTLP: oo.url = opt_url("--otlp", optarg); oo.any = true; break;
		case O_OTLP_EXPONENTIAL: oo.exponential = oo.any = true; break;
		case O_OTLP_LOGS:
			if (!parse_u64(optarg, strlen(optarg), &oo.log_rate) ||
			    oo.log_rate < 1 || oo.log_rate > 1000000)
				usage_error("export", "--otlp-logs: '%s' is not a rate of 1..1000000 records a second",
					    optarg);
			oo.any = true;
			break;
		case O_OTLP_LOGS_URL:
			oo.logs_url = opt_url("--otlp-logs-url", optarg);
			oo.any = true;
			break;
		case O_OTLP_HEADER_FILE: oo.header_file = optarg; oo.any = true; break;
		case O_OTLP_CA: oo.tls.ca = optarg; oo.any = true; break;
		case O_OTLP_CERT: oo.tls.cert = optarg; oo.any = true; break;
		case O_OTLP_KEY: oo.tls.key = optarg; oo.any = true; break;
		case O_OTLP_INSECURE: oo.insecure = oo.any = true; break;
		case 'h': fputs(help, stdout); free(x); return EXIT_OK;
		default: bad_option("export", o, argv);
		}
	}
	if (optind < argc)
		usage_error("export", "unexpected argument '%s'", argv[optind]);
	otlp_check(&oo, path);
	if (path) {
		plen = strlen(path);
		if (plen < 6 || strcmp(path + plen - 5, ".prom"))
			usage_error("export", "--textfile: '%s' does not end in .prom (node_exporter reads only *.prom)",
				    path);
	}

	signals_init();
	series_init(&x->t, sizeof(struct exp_val), (unsigned int)max_ports,
		    (unsigned int)max_containers);
	x->containers = max_containers > 0;
	if (oo.url)
		st = otlp_start(x, &oo, interval);
	if (st == EXIT_OK)
		st = input_open(&x->in, dir, false, infmt, add, x);
	if (st == EXIT_OK && archive) {
		x->in.archive = fopen(archive, "a");
		if (!x->in.archive) {
			warnx_("%s: %s", archive, strerror(errno));
			st = EXIT_RUNTIME;
		}
	}
	if (st != EXIT_OK)
		goto out;

	update(x);
	if (once)
		input_finish(&x->in);
	if (output(x, path, once) < 0) {
		st = EXIT_RUNTIME;
		goto out;
	}
	next = now_us() + interval;
	while (!once && !stop_requested) {
		uint64_t now = now_us();

		if (now < next) {
			retry(x);
			now = now_us();
			if (now < next)
				sleep_us(next - now < DEFAULT_POLL_US ? next - now : DEFAULT_POLL_US);
			continue;
		}
		next += interval;
		if (next <= now)	/* fell behind (suspend?): no burst */
			next = now + interval;
		if (++tick % 4 == 0 || x->in.gone)
			input_rescan(&x->in);
		update(x);
		output(x, path, false);	/* a failure is retried next time */
	}
	if (!once) {
		update(x);
		input_finish(&x->in);
		output(x, path, true);
	}
	input_report(&x->in);
out:
	if ((x->oq || x->lq) && !otlp_stop(x) && once && st == EXIT_OK)
		st = EXIT_RUNTIME;	/* --once: what was read did not all go */
	if (x->in.archive)
		fclose(x->in.archive);
	input_close(&x->in);
	series_free(&x->t, exp_val_free);
	ct_free();
	free(x);
	return st;
}
