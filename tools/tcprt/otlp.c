// SPDX-License-Identifier: GPL-2.0
/*
 * tcprt export's aggregation as OTLP protobuf messages: see otlp.h, and
 * docs/otlp.md for the names.  The messages are built from protobuf-c's
 * generated structures, every piece of them from a per-message arena
 * freed once packed; strings point into the caller's data (packing only
 * reads them).
 */
#include "otlp.h"

#include <stdlib.h>
#include <string.h>

#include "opentelemetry/proto/collector/logs/v1/logs_service.pb-c.h"
#include "opentelemetry/proto/collector/metrics/v1/metrics_service.pb-c.h"
#include "util.h"

#ifndef TCPRT_VERSION
#error "TCPRT_VERSION undefined: build tcprt with its Makefile"
#endif

/* protobuf-c's names, shortened */
typedef Opentelemetry__Proto__Common__V1__KeyValue pb_kv;
typedef Opentelemetry__Proto__Common__V1__AnyValue pb_any;
typedef Opentelemetry__Proto__Common__V1__InstrumentationScope pb_scope;
typedef Opentelemetry__Proto__Resource__V1__Resource pb_resource;
typedef Opentelemetry__Proto__Metrics__V1__Metric pb_metric;
typedef Opentelemetry__Proto__Metrics__V1__Sum pb_sum;
typedef Opentelemetry__Proto__Metrics__V1__Gauge pb_gauge;
typedef Opentelemetry__Proto__Metrics__V1__Histogram pb_hist;
typedef Opentelemetry__Proto__Metrics__V1__ExponentialHistogram pb_ehist;
typedef Opentelemetry__Proto__Metrics__V1__NumberDataPoint pb_ndp;
typedef Opentelemetry__Proto__Metrics__V1__HistogramDataPoint pb_hdp;
typedef Opentelemetry__Proto__Metrics__V1__ExponentialHistogramDataPoint pb_edp;
typedef Opentelemetry__Proto__Metrics__V1__ExponentialHistogramDataPoint__Buckets pb_ebuckets;
typedef Opentelemetry__Proto__Metrics__V1__ScopeMetrics pb_scope_metrics;
typedef Opentelemetry__Proto__Metrics__V1__ResourceMetrics pb_resource_metrics;
typedef Opentelemetry__Proto__Collector__Metrics__V1__ExportMetricsServiceRequest pb_metrics_req;
typedef Opentelemetry__Proto__Logs__V1__LogRecord pb_log;
typedef Opentelemetry__Proto__Logs__V1__ScopeLogs pb_scope_logs;
typedef Opentelemetry__Proto__Logs__V1__ResourceLogs pb_resource_logs;
typedef Opentelemetry__Proto__Collector__Logs__V1__ExportLogsServiceRequest pb_logs_req;

#define CUMULATIVE \
	OPENTELEMETRY__PROTO__METRICS__V1__AGGREGATION_TEMPORALITY__AGGREGATION_TEMPORALITY_CUMULATIVE

/* Everything a message is made of, freed together after packing. */
struct arena {
	void **p;
	size_t n, cap;
};

static void *anew(struct arena *a, size_t n, size_t size)
{
	void *p = xcalloc(n ? n : 1, size);

	if (a->n == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 256;
		a->p = xrealloc(a->p, a->cap, sizeof(*a->p));
	}
	a->p[a->n++] = p;
	return p;
}

static void afree(struct arena *a)
{
	while (a->n)
		free(a->p[--a->n]);
	free(a->p);
}

/* ---- attributes --------------------------------------------------------- */

static pb_kv *kv_new(struct arena *a, const char *key)
{
	pb_kv *kv = anew(a, 1, sizeof(*kv));
	pb_any *v = anew(a, 1, sizeof(*v));

	opentelemetry__proto__common__v1__key_value__init(kv);
	opentelemetry__proto__common__v1__any_value__init(v);
	kv->key = (char *)key;
	kv->value = v;
	return kv;
}

static pb_kv *kv_str(struct arena *a, const char *key, const char *val)
{
	pb_kv *kv = kv_new(a, key);

	kv->value->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
	kv->value->string_value = (char *)val;
	return kv;
}

static pb_kv *kv_int(struct arena *a, const char *key, int64_t val)
{
	pb_kv *kv = kv_new(a, key);

	kv->value->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
	kv->value->int_value = val;
	return kv;
}

static pb_kv *kv_double(struct arena *a, const char *key, double val)
{
	pb_kv *kv = kv_new(a, key);

	kv->value->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_DOUBLE_VALUE;
	kv->value->double_value = val;
	return kv;
}

#define MAX_ATTRS	24	/* a log record has up to 15 */

/*
 * What export names a series by, OpenTelemetry's names where it has them:
 * network.transport, server.port (0: the ports past --max-ports),
 * tcp_rt.role, tcp_rt.task.type (not for E), and its container:
 * container.id for a container's id, k8s.pod.uid for its pod, else
 * tcp_rt.container (a systemd unit, "host", a cgroup path or number,
 * "other" past --max-containers).  Returns the number put in @kv.
 */
static size_t series_attrs(struct arena *a, pb_kv **kv, uint16_t port,
			   enum role role, enum rec_type type,
			   const char *container, bool other, bool ct_id,
			   const char *pod)
{
	size_t n = 0;

	kv[n++] = kv_str(a, "network.transport", "tcp");
	kv[n++] = kv_int(a, "server.port", port);
	kv[n++] = kv_str(a, "tcp_rt.role", role_name(role));
	if (type != REC_E)
		kv[n++] = kv_str(a, "tcp_rt.task.type", rec_desc[type].name);
	if (other)
		kv[n++] = kv_str(a, "tcp_rt.container", "other");
	else if (container && container[0])
		kv[n++] = kv_str(a, ct_id ? "container.id" : "tcp_rt.container",
				 container);
	if (pod && pod[0])
		kv[n++] = kv_str(a, "k8s.pod.uid", pod);
	return n;
}

static size_t attrs_of(struct arena *a, pb_kv **kv, const struct series *s)
{
	const struct exp_val *v = s->val;

	return series_attrs(a, kv, s->port, s->role, s->type, s->key,
			    s->other_key, v->ct_id, v->pod);
}

/* host.name, service.name, service.version: OpenTelemetry's. */
static pb_resource *resource(struct arena *a, const char *host)
{
	pb_resource *r = anew(a, 1, sizeof(*r));

	opentelemetry__proto__resource__v1__resource__init(r);
	r->attributes = anew(a, 3, sizeof(*r->attributes));
	r->attributes[r->n_attributes++] = kv_str(a, "host.name", host);
	r->attributes[r->n_attributes++] = kv_str(a, "service.name", OTLP_SERVICE_NAME);
	r->attributes[r->n_attributes++] = kv_str(a, "service.version", TCPRT_VERSION);
	return r;
}

static pb_scope *scope(struct arena *a)
{
	pb_scope *s = anew(a, 1, sizeof(*s));

	opentelemetry__proto__common__v1__instrumentation_scope__init(s);
	s->name = (char *)OTLP_SERVICE_NAME;
	s->version = (char *)TCPRT_VERSION;
	return s;
}

/* ---- metrics ------------------------------------------------------------ */

enum value { V_RECORDS, V_SENT, V_RECV, V_RETRANS };

/*
 * The module's counters: monotonic cumulative sums.  tcp_rt.io is one
 * metric of two directions (network.io.direction, OpenTelemetry's
 * attribute): sent bytes are transmit, received bytes receive.
 */
static const struct otlp_sum {
	const char *name, *unit, *desc;
	unsigned int types;
	enum value value;
} sums[] = {
	{ "tcp_rt.tasks", "{task}", "Tasks: R, W, N and P records of tcp_rt.",
	  T(R) | T(W) | T(N) | T(P), V_RECORDS },
	{ "tcp_rt.task.failures", "{task}",
	  "Failed tasks: W (closed with the response unacknowledged) and N (closed during the request).",
	  T(W) | T(N), V_RECORDS },
	{ "tcp_rt.connections", "{connection}", "Tracked connections closed (E records).",
	  T(E), V_RECORDS },
	{ "tcp_rt.io", "By", "Bytes the tasks sent (transmit) and received (receive).",
	  EXP_SENT_TYPES | EXP_RECV_TYPES, V_SENT },
	{ "tcp_rt.retransmissions", "{segment}", "Segments retransmitted during the tasks.",
	  EXP_RETRANS_TYPES, V_RETRANS },
};
#define NSUMS	(sizeof(sums) / sizeof(sums[0]))

const char *const otlp_hist_name[NHIST] = {
	[H_DURATION] = "tcp_rt.task.duration",
	[H_PROCESS] = "tcp_rt.task.process_time",
	[H_UPLOAD] = "tcp_rt.task.upload_time",
	[H_DOWNLOAD] = "tcp_rt.task.download_time",
	[H_RQ_WAIT] = "tcp_rt.task.rq_wait",
	[H_APP] = "tcp_rt.task.app",
	[H_SQ_WAIT] = "tcp_rt.task.sq_wait",
	[H_RWND_LIMITED] = "tcp_rt.task.rwnd_limited",
	[H_SNDBUF_LIMITED] = "tcp_rt.task.sndbuf_limited",
	[H_APP_LIMITED] = "tcp_rt.task.app_limited",
};

static const char *const hist_desc[NHIST] = {
	[H_DURATION] = "Task duration: first request byte to last response byte acknowledged (P: received).",
	[H_PROCESS] = "Process time: last request byte to first response byte (P: service time).",
	[H_UPLOAD] = "Upload time: first to last request byte.",
	[H_DOWNLOAD] = "Download time: duration - upload - process (P: response time).",
	[H_RQ_WAIT] = "Process time in the receive queue (tcp_rt's log_ext breakdown).",
	[H_APP] = "Process time in the application (log_ext breakdown).",
	[H_SQ_WAIT] = "Process time in the send queue (log_ext breakdown).",
	[H_RWND_LIMITED] = "Download (P: upload) time held by the peer's receive window (log_ext breakdown).",
	[H_SNDBUF_LIMITED] = "Download (P: upload) time held by a full send buffer (log_ext breakdown).",
	[H_APP_LIMITED] = "Download (P: upload) time waiting for the application's writes (log_ext breakdown).",
};

/* A metric of @n data points to come, of its kind's case. */
static pb_metric *metric(struct arena *a, const char *name, const char *unit,
			 const char *desc)
{
	pb_metric *m = anew(a, 1, sizeof(*m));

	opentelemetry__proto__metrics__v1__metric__init(m);
	m->name = (char *)name;
	m->unit = (char *)unit;
	m->description = (char *)desc;
	return m;
}

static pb_sum *sum_of(struct arena *a, pb_metric *m, size_t n)
{
	pb_sum *s = anew(a, 1, sizeof(*s));

	opentelemetry__proto__metrics__v1__sum__init(s);
	s->aggregation_temporality = CUMULATIVE;
	s->is_monotonic = 1;
	s->data_points = anew(a, n, sizeof(*s->data_points));
	m->data_case = OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_SUM;
	m->sum = s;
	return s;
}

static pb_ndp *int_point(struct arena *a, const struct otlp_metrics *x,
			 uint64_t value)
{
	pb_ndp *p = anew(a, 1, sizeof(*p));

	opentelemetry__proto__metrics__v1__number_data_point__init(p);
	p->start_time_unix_nano = x->start_ns;
	p->time_unix_nano = x->time_ns;
	p->value_case = OPENTELEMETRY__PROTO__METRICS__V1__NUMBER_DATA_POINT__VALUE_AS_INT;
	p->as_int = (int64_t)value;
	return p;
}

/* The points of counter @c: one per series of its types (tcp_rt.io: two). */
static pb_metric *sum_metric(struct arena *a, const struct otlp_metrics *x,
			     const struct otlp_sum *c)
{
	pb_metric *m = metric(a, c->name, c->unit, c->desc);
	pb_sum *s = sum_of(a, m, 2 * x->t->n);
	size_t i;

	for (i = 0; i < x->t->n; i++) {
		const struct series *se = &x->t->s[i];
		const struct exp_val *v = se->val;
		uint64_t val[] = { v->records, v->sent, v->recv, v->retrans };
		unsigned int bit = 1u << se->type;
		pb_kv **kv;
		pb_ndp *p;
		size_t n;

		if (!(c->types & bit))
			continue;
		if (c->value != V_SENT) {
			p = int_point(a, x, val[c->value]);
			p->attributes = anew(a, MAX_ATTRS, sizeof(*kv));
			p->n_attributes = attrs_of(a, p->attributes, se);
			s->data_points[s->n_data_points++] = p;
			continue;
		}
		/* tcp_rt.io: transmit where the type sends, receive where it receives */
		if (bit & EXP_SENT_TYPES) {
			p = int_point(a, x, v->sent);
			kv = p->attributes = anew(a, MAX_ATTRS, sizeof(*kv));
			n = attrs_of(a, kv, se);
			kv[n++] = kv_str(a, "network.io.direction", "transmit");
			p->n_attributes = n;
			s->data_points[s->n_data_points++] = p;
		}
		if (bit & EXP_RECV_TYPES) {
			p = int_point(a, x, v->recv);
			kv = p->attributes = anew(a, MAX_ATTRS, sizeof(*kv));
			n = attrs_of(a, kv, se);
			kv[n++] = kv_str(a, "network.io.direction", "receive");
			p->n_attributes = n;
			s->data_points[s->n_data_points++] = p;
		}
	}
	return s->n_data_points ? m : NULL;
}

/* An explicit-bounds point: export's Renard bounds, in seconds. */
static pb_hdp *hist_point(struct arena *a, const struct otlp_metrics *x,
			  const struct prom_hist *h, double *bounds)
{
	pb_hdp *p = anew(a, 1, sizeof(*p));

	opentelemetry__proto__metrics__v1__histogram_data_point__init(p);
	p->start_time_unix_nano = x->start_ns;
	p->time_unix_nano = x->time_ns;
	p->count = h->count;
	p->_sum_case = OPENTELEMETRY__PROTO__METRICS__V1__HISTOGRAM_DATA_POINT___SUM_SUM;
	p->sum = (double)h->sum_us / 1e6;
	p->n_explicit_bounds = x->b->n;
	p->explicit_bounds = bounds;
	p->n_bucket_counts = x->b->n + 1;
	/* not cumulative in OTLP either; a series with no value has no array */
	p->bucket_counts = h->bucket ? h->bucket :
			   anew(a, x->b->n + 1, sizeof(*p->bucket_counts));
	return p;
}

static pb_edp *expo_point(struct arena *a, const struct otlp_metrics *x,
			  const struct expo_hist *e)
{
	pb_edp *p = anew(a, 1, sizeof(*p));
	pb_ebuckets *b = anew(a, 1, sizeof(*b));

	opentelemetry__proto__metrics__v1__exponential_histogram_data_point__init(p);
	opentelemetry__proto__metrics__v1__exponential_histogram_data_point__buckets__init(b);
	p->start_time_unix_nano = x->start_ns;
	p->time_unix_nano = x->time_ns;
	p->count = e->count;
	p->_sum_case = OPENTELEMETRY__PROTO__METRICS__V1__EXPONENTIAL_HISTOGRAM_DATA_POINT___SUM_SUM;
	p->sum = (double)e->sum_us / 1e6;
	p->scale = EXPO_SCALE;
	p->zero_count = e->zero;
	p->zero_threshold = 0;
	b->offset = e->offset;
	b->n_bucket_counts = e->n;
	b->bucket_counts = e->bucket;
	p->positive = b;
	return p;
}

static pb_metric *hist_metric(struct arena *a, const struct otlp_metrics *x,
			      unsigned int h, double *bounds)
{
	pb_metric *m = metric(a, otlp_hist_name[h], "s", hist_desc[h]);
	void **points = anew(a, x->t->n, sizeof(void *));
	size_t i, n = 0;

	for (i = 0; i < x->t->n; i++) {
		const struct series *s = &x->t->s[i];
		const struct exp_val *v = s->val;
		pb_kv **kv;
		size_t nkv;

		if (!exp_hist_written(s, h))
			continue;
		kv = anew(a, MAX_ATTRS, sizeof(*kv));
		nkv = attrs_of(a, kv, s);
		if (x->exponential) {
			pb_edp *p = expo_point(a, x, &v->e[h]);

			p->attributes = kv;
			p->n_attributes = nkv;
			points[n++] = p;
		} else {
			pb_hdp *p = hist_point(a, x, &v->h[h], bounds);

			p->attributes = kv;
			p->n_attributes = nkv;
			points[n++] = p;
		}
	}
	if (!n)
		return NULL;
	if (x->exponential) {
		pb_ehist *e = anew(a, 1, sizeof(*e));

		opentelemetry__proto__metrics__v1__exponential_histogram__init(e);
		e->aggregation_temporality = CUMULATIVE;
		e->n_data_points = n;
		e->data_points = (pb_edp **)points;
		m->data_case = OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_EXPONENTIAL_HISTOGRAM;
		m->exponential_histogram = e;
	} else {
		pb_hist *e = anew(a, 1, sizeof(*e));

		opentelemetry__proto__metrics__v1__histogram__init(e);
		e->aggregation_temporality = CUMULATIVE;
		e->n_data_points = n;
		e->data_points = (pb_hdp **)points;
		m->data_case = OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_HISTOGRAM;
		m->histogram = e;
	}
	return m;
}

/* A counter of tcprt's own, without attributes. */
static pb_metric *self_metric(struct arena *a, const struct otlp_metrics *x,
			      const char *name, const char *unit,
			      const char *desc, uint64_t value)
{
	pb_metric *m = metric(a, name, unit, desc);
	pb_sum *s = sum_of(a, m, 1);

	s->data_points[s->n_data_points++] = int_point(a, x, value);
	return m;
}

/* Lines of a status file: a gauge, each line's key as attribute @attr. */
static pb_metric *status_metric(struct arena *a, const struct otlp_metrics *x,
				const char *name, const char *desc,
				const char *attr, const struct sink_status *st,
				unsigned int n)
{
	pb_metric *m = metric(a, name, "", desc);
	pb_gauge *g = anew(a, 1, sizeof(*g));
	unsigned int i;

	opentelemetry__proto__metrics__v1__gauge__init(g);
	g->data_points = anew(a, n, sizeof(*g->data_points));
	for (i = 0; i < n; i++) {
		pb_ndp *p = int_point(a, x, st[i].value);

		p->start_time_unix_nano = 0;	/* a gauge has no start */
		p->attributes = anew(a, 1, sizeof(*p->attributes));
		p->attributes[p->n_attributes++] = kv_str(a, attr, st[i].key);
		g->data_points[g->n_data_points++] = p;
	}
	m->data_case = OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_GAUGE;
	m->gauge = g;
	return m;
}

#define MAX_METRICS	(NSUMS + NHIST + 16)

static size_t self_metrics(struct arena *a, const struct otlp_metrics *x,
			   pb_metric **m)
{
	const struct otlp_self *s = &x->self;
	size_t n = 0;

	m[n++] = self_metric(a, x, "tcprt.records_read", "{record}",
			     "Valid lines tcprt read.", s->records_read);
	m[n++] = self_metric(a, x, "tcprt.malformed_lines", "{line}",
			     "Malformed lines tcprt skipped.", s->malformed_lines);
	m[n++] = self_metric(a, x, "tcprt.container_overflow_records", "{record}",
			     "Records counted as tcp_rt.container=\"other\": past --max-containers.",
			     s->container_overflow);
	m[n++] = self_metric(a, x, "tcprt.otlp.requests_sent", "{request}",
			     "OTLP metrics requests the collector accepted before this one.",
			     s->requests_sent);
	m[n++] = self_metric(a, x, "tcprt.otlp.requests_failed", "{request}",
			     "OTLP requests that failed (each attempt): the next one carries the totals.",
			     s->requests_failed);
	m[n++] = self_metric(a, x, "tcprt.otlp.requests_dropped", "{request}",
			     "OTLP requests given up: the queue was full, the collector refused them, or tcprt stopped.",
			     s->requests_dropped);
	if (s->logs) {
		m[n++] = self_metric(a, x, "tcprt.otlp.log_records_sent", "{record}",
				     "Task log records the collector accepted.",
				     s->log_records_sent);
		m[n++] = self_metric(a, x, "tcprt.otlp.log_records_dropped", "{record}",
				     "Task log records not delivered: past --otlp-logs' rate, or their request lost.",
				     s->log_records_dropped);
	}
	return n;
}

/* A request in its wire form, in a buffer of its own (*@len bytes). */
static uint8_t *pack(const ProtobufCMessage *req, size_t *len)
{
	uint8_t *buf;

	*len = protobuf_c_message_get_packed_size(req);
	buf = xcalloc(*len ? *len : 1, 1);
	protobuf_c_message_pack(req, buf);
	return buf;
}

uint8_t *otlp_pack_metrics(const struct otlp_metrics *x, size_t *len)
{
	struct arena a = { 0 };
	pb_metrics_req req;
	pb_resource_metrics *rm = anew(&a, 1, sizeof(*rm));
	pb_scope_metrics *sm = anew(&a, 1, sizeof(*sm));
	double *bounds = anew(&a, x->b->n, sizeof(*bounds));
	pb_metric **m = anew(&a, MAX_METRICS, sizeof(*m));
	uint8_t *buf;
	unsigned int i;
	size_t n = 0;

	for (i = 0; i < x->b->n; i++)		/* tenths of a us -> s */
		bounds[i] = (double)x->b->bound[i] / 1e7;
	for (i = 0; i < NSUMS; i++)
		if ((m[n] = sum_metric(&a, x, &sums[i])))
			n++;
	for (i = 0; i < NHIST; i++)
		if ((m[n] = hist_metric(&a, x, i, bounds)))
			n++;
	n += self_metrics(&a, x, m + n);
	if (x->nstatus)
		m[n++] = status_metric(&a, x, "tcp_rt.module.status",
				       "The numeric lines of /sys/kernel/debug/tcp-rt/status.",
				       "tcp_rt.status.key", x->status, x->nstatus);
	if (x->nstats)
		m[n++] = status_metric(&a, x, "tcprt.agent.status",
				       "The numeric lines of tcprt agent's status file: each sink's counts.",
				       "tcprt.agent.key", x->stats, x->nstats);

	opentelemetry__proto__metrics__v1__scope_metrics__init(sm);
	sm->scope = scope(&a);
	sm->n_metrics = n;
	sm->metrics = m;
	opentelemetry__proto__metrics__v1__resource_metrics__init(rm);
	rm->resource = resource(&a, x->host);
	rm->n_scope_metrics = 1;
	rm->scope_metrics = &sm;
	opentelemetry__proto__collector__metrics__v1__export_metrics_service_request__init(&req);
	req.n_resource_metrics = 1;
	req.resource_metrics = &rm;

	buf = pack(&req.base, len);
	afree(&a);
	return buf;
}

/* ---- logs --------------------------------------------------------------- */

/* One task record: its series' attributes, its peer, its times and bytes. */
static pb_log *log_record(struct arena *a, const struct otlp_log *l)
{
	static const enum metric ms[] = { M_DURATION, M_PROCESS, M_UPLOAD, M_DOWNLOAD };
	const struct record *r = &l->r;
	pb_log *lr = anew(a, 1, sizeof(*lr));
	pb_kv **kv = anew(a, MAX_ATTRS, sizeof(*kv));
	bool failed = r->type == REC_W || r->type == REC_N;
	char *body = anew(a, 128, 1);
	uint64_t us = 0;
	size_t n;
	unsigned int i;

	opentelemetry__proto__logs__v1__log_record__init(lr);
	lr->time_unix_nano = rec_time_us(r) * 1000;
	lr->observed_time_unix_nano = l->observed_ns;
	lr->severity_number = failed ?
		OPENTELEMETRY__PROTO__LOGS__V1__SEVERITY_NUMBER__SEVERITY_NUMBER_WARN :
		OPENTELEMETRY__PROTO__LOGS__V1__SEVERITY_NUMBER__SEVERITY_NUMBER_INFO;
	lr->severity_text = (char *)(failed ? "WARN" : "INFO");
	n = series_attrs(a, kv, r->port, r->role, r->type, l->container, false,
			 l->ct_id, l->pod);
	kv[n++] = kv_str(a, "network.peer.address", r->peer_addr);
	kv[n++] = kv_int(a, "network.peer.port", r->peer_port);
	for (i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
		uint64_t v;

		if (rec_metric(r, ms[i], &v))
			kv[n++] = kv_double(a, otlp_hist_name[i], (double)v / 1e6);
	}
	kv[n++] = kv_int(a, "tcp_rt.task.sent_bytes", (int64_t)rec_sent_bytes(r));
	kv[n++] = kv_int(a, "tcp_rt.task.received_bytes", (int64_t)rec_recv_bytes(r));
	kv[n++] = kv_int(a, "tcp_rt.task.retransmissions", (int64_t)rec_retrans(r));
	lr->attributes = kv;
	lr->n_attributes = n;
	rec_metric(r, M_DURATION, &us);
	snprintf(body, 128, "%s %s port %u peer %s:%u duration %llu us",
		 rec_desc[r->type].name, role_name(r->role), r->port,
		 r->peer_addr, r->peer_port, (unsigned long long)us);
	lr->body = kv_str(a, "", body)->value;
	return lr;
}

uint8_t *otlp_pack_logs(const struct otlp_log *l, size_t n, const char *host,
			size_t *len)
{
	struct arena a = { 0 };
	pb_logs_req req;
	pb_resource_logs *rl = anew(&a, 1, sizeof(*rl));
	pb_scope_logs *sl = anew(&a, 1, sizeof(*sl));
	uint8_t *buf;
	size_t i;

	opentelemetry__proto__logs__v1__scope_logs__init(sl);
	sl->scope = scope(&a);
	sl->log_records = anew(&a, n, sizeof(*sl->log_records));
	for (i = 0; i < n; i++)
		sl->log_records[sl->n_log_records++] = log_record(&a, &l[i]);
	opentelemetry__proto__logs__v1__resource_logs__init(rl);
	rl->resource = resource(&a, host);
	rl->n_scope_logs = 1;
	rl->scope_logs = &sl;
	opentelemetry__proto__collector__logs__v1__export_logs_service_request__init(&req);
	req.n_resource_logs = 1;
	req.resource_logs = &rl;

	buf = pack(&req.base, len);
	afree(&a);
	return buf;
}
