// SPDX-License-Identifier: GPL-2.0
/*
 * OTLP tests: exponential bucket indices against a model (the definition
 * in long double, and values on either side of every bound); then, when
 * tcprt was built with OTLP, a known aggregation packed by otlp.c and
 * unpacked again with protobuf-c's generated functions: names, units,
 * attributes, temporality, counts, bounds, bucket counts and exponential
 * indices; and a task record as a log record.
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "expo.h"
#include "export.h"
#include "tap.h"

/* The model: the definition, base^i < v <= base^(i+1), in long double. */
static int32_t model_index(uint64_t us, int scale, bool *sure)
{
	long double l = log2l((long double)us / 1e6L) * (long double)(1 << scale);
	long double c = ceill(l);

	/* too near a bound for long double to say which side: no answer */
	*sure = fabsl(l - roundl(l)) > 1e-9L;
	return (int32_t)c - 1;
}

static void test_expo_index(void)
{
	static const struct { uint64_t us; int32_t i; } known[] = {
		{ 1000000, -1 },	/* 1 s is base^0: the bucket below */
		{ 1000001, 0 }, { 999999, -1 },
		{ 2000000, 7 }, { 2000001, 8 },	/* 2 s = base^8 */
		{ 500000, -9 }, { 500001, -8 },	/* 0.5 s = base^-8 */
		{ 1090507, 0 }, { 1090508, 1 },	/* base = 1.0905077327 */
		{ 1, -160 }, { 4294967295ULL, 96 }, { UINT64_MAX, 352 },
	};
	unsigned int i, bad = 0, slow_bad = 0, checked = 0, edge_bad = 0;
	uint64_t us;
	bool sure;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (expo_index(known[i].us, 3) != known[i].i ||
		    expo_index_slow(known[i].us, 3) != known[i].i) {
			diag("%llu us: %d, expected %d",
			     (unsigned long long)known[i].us,
			     expo_index(known[i].us, 3), known[i].i);
			bad++;
		}
	ok(bad == 0, "expo: %u values on and next to bounds at scale 3",
	   (unsigned int)(sizeof(known) / sizeof(known[0])));

	for (i = 0, bad = 0; i < 100000; i++) {
		int scale = (int)(rnd() % (EXPO_MAX_SCALE + 1));
		int32_t m;

		us = rnd() >> (rnd() % 64);
		if (!us)
			continue;
		m = model_index(us, scale, &sure);
		if (!sure)
			continue;
		checked++;
		if (expo_index(us, scale) != m)
			bad++;
		if (i < 3000 && expo_index_slow(us, scale) != m)
			slow_bad++;
	}
	ok(bad == 0 && slow_bad == 0 && checked > 90000,
	   "expo: %u random values at scales 0..%d agree with the model (%u off, %u off slow)",
	   checked, EXPO_MAX_SCALE, bad, slow_bad);

	/* either side of each bound from 1 us to 71 min at scale 3 */
	for (us = 1; us < 4294967296ULL; us += us / 50 + 1) {
		int32_t a = expo_index(us, 3), b = expo_index(us + 1, 3);

		/* from 12 us on, us + 1 is less than base times us */
		if (b < a || (us >= 12 && b > a + 1) || expo_index_slow(us, 3) != a)
			edge_bad++;
	}
	ok(edge_bad == 0, "expo: indices never go back, skip no bucket, agree with the definition");
}

static void test_expo_hist(void)
{
	struct expo_hist h = { 0 };

	expo_hist_add(&h, 0);
	expo_hist_add(&h, 1000000);	/* -1 */
	expo_hist_add(&h, 2000001);	/* 8 */
	expo_hist_add(&h, 1000001);	/* 0 */
	expo_hist_add(&h, 500000);	/* -9 */
	ok(h.count == 5 && h.zero == 1 && h.sum_us == 4500002,
	   "expo hist: count, zero bucket, sum");
	ok(h.offset == -9 && h.n == 18 && h.bucket[0] == 1 && h.bucket[8] == 1 &&
	   h.bucket[9] == 1 && h.bucket[17] == 1,
	   "expo hist: offset -9, 18 buckets, the counts at -9, -1, 0, 8");
	expo_hist_free(&h);
}

#ifdef TCPRT_OTLP
#include "opentelemetry/proto/collector/logs/v1/logs_service.pb-c.h"
#include "opentelemetry/proto/collector/metrics/v1/metrics_service.pb-c.h"
#include "otlp.h"

typedef Opentelemetry__Proto__Common__V1__KeyValue pb_kv;
typedef Opentelemetry__Proto__Metrics__V1__Metric pb_metric;
typedef Opentelemetry__Proto__Collector__Metrics__V1__ExportMetricsServiceRequest pb_req;

#define CUMULATIVE \
	OPENTELEMETRY__PROTO__METRICS__V1__AGGREGATION_TEMPORALITY__AGGREGATION_TEMPORALITY_CUMULATIVE
#define STR OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE
#define INT OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE

static const pb_kv *attr(pb_kv *const *kv, size_t n, const char *key)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(kv[i]->key, key))
			return kv[i];
	return NULL;
}

static bool attr_is(pb_kv *const *kv, size_t n, const char *key, const char *v)
{
	const pb_kv *a = attr(kv, n, key);

	return a && a->value->value_case == STR && !strcmp(a->value->string_value, v);
}

static bool attr_int(pb_kv *const *kv, size_t n, const char *key, int64_t v)
{
	const pb_kv *a = attr(kv, n, key);

	return a && a->value->value_case == INT && a->value->int_value == v;
}

static const pb_metric *find(const pb_req *r, const char *name)
{
	const Opentelemetry__Proto__Metrics__V1__ScopeMetrics *sm =
		r->resource_metrics[0]->scope_metrics[0];
	size_t i;

	for (i = 0; i < sm->n_metrics; i++)
		if (!strcmp(sm->metrics[i]->name, name))
			return sm->metrics[i];
	return NULL;
}

/* The point of @m (a sum) of port, type, and direction when given. */
static const Opentelemetry__Proto__Metrics__V1__NumberDataPoint *
sum_point(const pb_metric *m, int port, const char *type, const char *dir)
{
	size_t i;

	for (i = 0; m && i < m->sum->n_data_points; i++) {
		const Opentelemetry__Proto__Metrics__V1__NumberDataPoint *p =
			m->sum->data_points[i];

		if (attr_int(p->attributes, p->n_attributes, "server.port", port) &&
		    (!type || attr_is(p->attributes, p->n_attributes, "tcp_rt.task.type", type)) &&
		    (!dir || attr_is(p->attributes, p->n_attributes, "network.io.direction", dir)))
			return p;
	}
	return NULL;
}

/* The aggregation: R on 7100 (a container's, in a pod), P on 6379, E. */
static const uint64_t r_dur[] = { 1000, 2000, 2000, 150000, 0 };

static void fill(struct series_table *t, const struct prom_buckets *b)
{
	struct exp_val *v;
	struct series *s;
	unsigned int i;
	static const char id[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

	series_init(t, sizeof(struct exp_val), 64, 64);
	v = series_get_key(t, 7100, id, ROLE_SERVER, REC_R, &s);
	v->ct_id = true;
	snprintf(v->pod, sizeof(v->pod), "11111111-2222-3333-4444-555555555555");
	for (i = 0; i < sizeof(r_dur) / sizeof(r_dur[0]); i++) {
		v->records++;
		v->sent += 5000;
		v->recv += 300;
		v->retrans += 1;
		prom_hist_add(&v->h[H_DURATION], b, r_dur[i]);
		expo_hist_add(&v->e[H_DURATION], r_dur[i]);
		prom_hist_add(&v->h[H_PROCESS], b, 500);
		expo_hist_add(&v->e[H_PROCESS], 500);
	}
	v = series_get_key(t, 7100, "nginx.service", ROLE_SERVER, REC_W, NULL);
	v->records = 2;
	v = series_get(t, 6379, ROLE_CLIENT, REC_P);
	v->records = 3;
	v->sent = 30;
	v->recv = 4000;
	v = series_get(t, 7100, ROLE_SERVER, REC_E);
	v->records = 4;
}

static pb_req *pack_unpack(const struct series_table *t,
			   const struct prom_buckets *b, bool exponential)
{
	struct sink_status st = { .key = "tracked", .value = 7 };
	struct sink_status ag[] = { { .key = "metrics_records", .value = 13 },
				    { .key = "ship_refused", .value = 2 } };
	struct otlp_metrics m = {
		.t = t, .b = b, .exponential = exponential, .host = "host-a",
		.start_ns = 1000, .time_ns = 2000, .status = &st, .nstatus = 1,
		.stats = ag, .nstats = 2,
		.self = { .records_read = 13, .malformed_lines = 1,
			  .requests_failed = 2, .requests_dropped = 1 },
	};
	uint8_t *buf;
	size_t len;
	pb_req *r;

	buf = otlp_pack_metrics(&m, &len);
	r = opentelemetry__proto__collector__metrics__v1__export_metrics_service_request__unpack(NULL, len, buf);
	free(buf);
	return r;
}

static void test_resource(const pb_req *r)
{
	const Opentelemetry__Proto__Resource__V1__Resource *res;

	ok(r && r->n_resource_metrics == 1 &&
	   r->resource_metrics[0]->n_scope_metrics == 1, "metrics: unpacked, one resource, one scope");
	res = r->resource_metrics[0]->resource;
	ok(attr_is(res->attributes, res->n_attributes, "host.name", "host-a") &&
	   attr_is(res->attributes, res->n_attributes, "service.name", "tcprt"),
	   "resource: host.name, service.name");
	ok(!strcmp(r->resource_metrics[0]->scope_metrics[0]->scope->name, "tcprt"),
	   "scope: tcprt");
}

static void test_sums(const pb_req *r)
{
	static const struct { const char *name, *unit; } names[] = {
		{ "tcp_rt.tasks", "{task}" }, { "tcp_rt.task.failures", "{task}" },
		{ "tcp_rt.connections", "{connection}" }, { "tcp_rt.io", "By" },
		{ "tcp_rt.retransmissions", "{segment}" },
		{ "tcprt.records_read", "{record}" },
		{ "tcprt.malformed_lines", "{line}" },
		{ "tcprt.otlp.requests_failed", "{request}" },
		{ "tcprt.otlp.requests_dropped", "{request}" },
	};
	const Opentelemetry__Proto__Metrics__V1__NumberDataPoint *p;
	const pb_metric *m;
	unsigned int i, bad = 0;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		m = find(r, names[i].name);
		if (!m || strcmp(m->unit, names[i].unit) ||
		    m->data_case != OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_SUM ||
		    m->sum->aggregation_temporality != CUMULATIVE ||
		    !m->sum->is_monotonic || !m->sum->n_data_points ||
		    m->sum->data_points[0]->start_time_unix_nano != 1000 ||
		    m->sum->data_points[0]->time_unix_nano != 2000) {
			diag("%s: missing, or not a cumulative monotonic sum in %s",
			     names[i].name, names[i].unit);
			bad++;
		}
	}
	ok(bad == 0, "sums: names, units, cumulative, monotonic, start and time");

	m = find(r, "tcp_rt.tasks");
	p = sum_point(m, 7100, "R", NULL);
	ok(m && m->sum->n_data_points == 3 && p && p->as_int == 5,
	   "tcp_rt.tasks: 3 series (R W P), 5 R");
	ok(p && attr_is(p->attributes, p->n_attributes, "network.transport", "tcp") &&
	   attr_is(p->attributes, p->n_attributes, "tcp_rt.role", "server") &&
	   attr_is(p->attributes, p->n_attributes, "container.id",
		   "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef") &&
	   attr_is(p->attributes, p->n_attributes, "k8s.pod.uid",
		   "11111111-2222-3333-4444-555555555555") &&
	   !attr(p->attributes, p->n_attributes, "tcp_rt.container"),
	   "attributes: transport, role, container.id, k8s.pod.uid");
	p = sum_point(m, 7100, "W", NULL);
	ok(p && p->as_int == 2 &&
	   attr_is(p->attributes, p->n_attributes, "tcp_rt.container", "nginx.service") &&
	   !attr(p->attributes, p->n_attributes, "container.id"),
	   "attributes: a systemd unit is tcp_rt.container");
	p = sum_point(m, 6379, "P", NULL);
	ok(p && p->as_int == 3 &&
	   attr_is(p->attributes, p->n_attributes, "tcp_rt.role", "client") &&
	   p->n_attributes == 4, "attributes: a client's P, no container");

	m = find(r, "tcp_rt.task.failures");
	ok(m && m->sum->n_data_points == 1 && sum_point(m, 7100, "W", NULL),
	   "tcp_rt.task.failures: W only");
	m = find(r, "tcp_rt.connections");
	p = m ? m->sum->data_points[0] : NULL;
	ok(p && m->sum->n_data_points == 1 && p->as_int == 4 &&
	   !attr(p->attributes, p->n_attributes, "tcp_rt.task.type"),
	   "tcp_rt.connections: E, no task type");
	m = find(r, "tcp_rt.io");
	ok(m && sum_point(m, 7100, "R", "transmit")->as_int == 25000 &&
	   sum_point(m, 7100, "R", "receive")->as_int == 1500 &&
	   sum_point(m, 6379, "P", "transmit")->as_int == 30 &&
	   sum_point(m, 6379, "P", "receive")->as_int == 4000 &&
	   sum_point(m, 7100, "W", "transmit") && !sum_point(m, 7100, "W", "receive"),
	   "tcp_rt.io: transmit and receive per type");
	m = find(r, "tcp_rt.retransmissions");
	ok(m && sum_point(m, 7100, "R", NULL)->as_int == 5, "tcp_rt.retransmissions");
	m = find(r, "tcprt.records_read");
	ok(m && m->sum->data_points[0]->as_int == 13 &&
	   !m->sum->data_points[0]->n_attributes, "tcprt.records_read, no attributes");
	m = find(r, "tcp_rt.module.status");
	ok(m && m->data_case == OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_GAUGE &&
	   m->gauge->data_points[0]->as_int == 7 &&
	   attr_is(m->gauge->data_points[0]->attributes, 1, "tcp_rt.status.key", "tracked"),
	   "tcp_rt.module.status: a gauge per status line");
	m = find(r, "tcprt.agent.status");
	ok(m && m->data_case == OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_GAUGE &&
	   m->gauge->n_data_points == 2 && m->gauge->data_points[1]->as_int == 2 &&
	   attr_is(m->gauge->data_points[1]->attributes, 1, "tcprt.agent.key", "ship_refused"),
	   "tcprt.agent.status: a gauge per line of the agent's sinks' counts");
}

static void test_hist(const pb_req *r, const struct prom_buckets *b)
{
	const Opentelemetry__Proto__Metrics__V1__HistogramDataPoint *p = NULL;
	const pb_metric *m = find(r, "tcp_rt.task.duration");
	unsigned int i, bad = 0;
	uint64_t total = 0;

	ok(m && !strcmp(m->unit, "s") &&
	   m->data_case == OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_HISTOGRAM &&
	   m->histogram->aggregation_temporality == CUMULATIVE,
	   "tcp_rt.task.duration: a cumulative histogram in s");
	if (!m)
		return;
	/* R, W and P have a duration; the E series none */
	ok(m->histogram->n_data_points == 3, "histogram: a point per R W P series");
	for (i = 0; i < m->histogram->n_data_points; i++)
		if (attr_is(m->histogram->data_points[i]->attributes,
			    m->histogram->data_points[i]->n_attributes,
			    "tcp_rt.task.type", "R"))
			p = m->histogram->data_points[i];
	if (!ok(p != NULL, "histogram: the R point"))
		return;
	ok(p->n_explicit_bounds == b->n && p->n_bucket_counts == b->n + 1,
	   "histogram: %u bounds, %u counts", b->n, b->n + 1);
	for (i = 0; i < b->n; i++)
		if (fabs(p->explicit_bounds[i] - (double)b->bound[i] / 1e7) > 1e-15)
			bad++;
	ok(bad == 0 && p->explicit_bounds[0] == 0.00001 && p->explicit_bounds[b->n - 1] == 100,
	   "histogram: the bounds are --buckets', 10 us .. 100 s");
	for (i = 0; i < p->n_bucket_counts; i++)
		total += p->bucket_counts[i];
	ok(p->count == 5 && total == 5 && fabs(p->sum - 0.155) < 1e-12 &&
	   p->_sum_case == OPENTELEMETRY__PROTO__METRICS__V1__HISTOGRAM_DATA_POINT___SUM_SUM,
	   "histogram: count 5, the counts add up to it, sum 0.155 s");
	/* 0 and 1000 us in (.., 10 us] and (0.0008, 0.001]; 2000 us twice in (.., 0.002]; 0.15 s in (0.125, 0.16] */
	for (i = 0, bad = 0; i < b->n; i++) {
		double hi = p->explicit_bounds[i];
		uint64_t want = (hi == 0.00001) + (hi == 0.001) + 2 * (hi == 0.002) + (hi == 0.16);

		if (p->bucket_counts[i] != want)
			bad++;
	}
	ok(bad == 0 && p->bucket_counts[b->n] == 0,
	   "histogram: each value in the bucket of the bound above it, none past 100 s");
	ok(find(r, "tcp_rt.task.process_time") && !find(r, "tcp_rt.task.rq_wait"),
	   "histogram: process_time; no breakdown histogram without its fields");
}

static void test_expo_points(const pb_req *r)
{
	const Opentelemetry__Proto__Metrics__V1__ExponentialHistogramDataPoint *p = NULL;
	const pb_metric *m = find(r, "tcp_rt.task.duration");
	unsigned int i, bad = 0;

	ok(m && m->data_case == OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_EXPONENTIAL_HISTOGRAM &&
	   m->exponential_histogram->aggregation_temporality == CUMULATIVE,
	   "exponential: a cumulative exponential histogram");
	if (!m || m->data_case != OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_EXPONENTIAL_HISTOGRAM)
		return;
	for (i = 0; i < m->exponential_histogram->n_data_points; i++)
		if (attr_is(m->exponential_histogram->data_points[i]->attributes,
			    m->exponential_histogram->data_points[i]->n_attributes,
			    "tcp_rt.task.type", "R"))
			p = m->exponential_histogram->data_points[i];
	if (!ok(p != NULL, "exponential: the R point"))
		return;
	ok(p->scale == EXPO_SCALE && p->count == 5 && p->zero_count == 1 &&
	   fabs(p->sum - 0.155) < 1e-12, "exponential: scale 3, count 5, one zero, sum");
	/* the model's indices: 1000 us, 2000 us (x2), 150000 us */
	for (i = 0; i < sizeof(r_dur) / sizeof(r_dur[0]); i++) {
		bool sure;
		int32_t k;

		if (!r_dur[i])
			continue;
		k = model_index(r_dur[i], EXPO_SCALE, &sure) - p->positive->offset;
		if (k < 0 || (size_t)k >= p->positive->n_bucket_counts ||
		    !p->positive->bucket_counts[k])
			bad++;
	}
	ok(bad == 0 && p->positive->offset == model_index(1000, EXPO_SCALE, &(bool){ 0 }) &&
	   p->positive->n_bucket_counts ==
		(size_t)(model_index(150000, EXPO_SCALE, &(bool){ 0 }) -
			 model_index(1000, EXPO_SCALE, &(bool){ 0 }) + 1) &&
	   p->positive->bucket_counts[model_index(2000, EXPO_SCALE, &(bool){ 0 }) -
				      p->positive->offset] == 2,
	   "exponential: offset, span and counts at the model's indices");
}

static void test_logs(void)
{
	typedef Opentelemetry__Proto__Collector__Logs__V1__ExportLogsServiceRequest pb_logs;
	struct otlp_log l = { .observed_ns = 5 };
	const Opentelemetry__Proto__Logs__V1__LogRecord *lr;
	uint8_t *buf;
	size_t len;
	pb_logs *r;

	l.r.type = REC_W;
	l.r.role = ROLE_SERVER;
	l.r.sec = 1795218000;
	l.r.usec = 7;
	l.r.port = 7100;
	l.r.peer_port = 40000;
	snprintf(l.r.peer_addr, sizeof(l.r.peer_addr), "10.0.0.2");
	snprintf(l.container, sizeof(l.container), "nginx.service");
	buf = otlp_pack_logs(&l, 1, "host-a", &len);
	r = opentelemetry__proto__collector__logs__v1__export_logs_service_request__unpack(NULL, len, buf);
	free(buf);
	if (!ok(r && r->n_resource_logs == 1 && r->resource_logs[0]->n_scope_logs == 1 &&
		r->resource_logs[0]->scope_logs[0]->n_log_records == 1, "logs: one record"))
		return;
	lr = r->resource_logs[0]->scope_logs[0]->log_records[0];
	ok(lr->time_unix_nano == 1795218000000007000ULL && lr->observed_time_unix_nano == 5 &&
	   lr->severity_number == OPENTELEMETRY__PROTO__LOGS__V1__SEVERITY_NUMBER__SEVERITY_NUMBER_WARN,
	   "logs: the task's start, when read, WARN for a W");
	ok(attr_int(lr->attributes, lr->n_attributes, "server.port", 7100) &&
	   attr_is(lr->attributes, lr->n_attributes, "tcp_rt.task.type", "W") &&
	   attr_is(lr->attributes, lr->n_attributes, "tcp_rt.container", "nginx.service") &&
	   attr_is(lr->attributes, lr->n_attributes, "network.peer.address", "10.0.0.2") &&
	   attr_int(lr->attributes, lr->n_attributes, "network.peer.port", 40000),
	   "logs: the series' attributes and the peer");
	ok(lr->body && lr->body->value_case == STR &&
	   !strncmp(lr->body->string_value, "W server port 7100", 18), "logs: a body");
	opentelemetry__proto__collector__logs__v1__export_logs_service_request__free_unpacked(r, NULL);
}

static void test_otlp(void)
{
	const struct prom_buckets *b = prom_buckets_of("r10");
	struct series_table t;
	pb_req *r;

	fill(&t, b);
	r = pack_unpack(&t, b, false);
	if (!ok(r != NULL, "metrics: packed and unpacked"))
		return;
	test_resource(r);
	test_sums(r);
	test_hist(r, b);
	opentelemetry__proto__collector__metrics__v1__export_metrics_service_request__free_unpacked(r, NULL);
	r = pack_unpack(&t, b, true);
	test_expo_points(r);
	opentelemetry__proto__collector__metrics__v1__export_metrics_service_request__free_unpacked(r, NULL);
	series_free(&t, exp_val_free);
	test_logs();
}
#endif

int main(void)
{
	test_expo_index();
	test_expo_hist();
#ifdef TCPRT_OTLP
	test_otlp();
#else
	printf("ok %d - otlp messages # SKIP built without OTLP: %s\n", ++tap_n,
	       TCPRT_NO_OTLP);
#endif
	return done_testing();
}
