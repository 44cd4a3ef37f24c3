/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tcprt export's aggregation as OTLP messages (docs/otlp.md): an
 * ExportMetricsServiceRequest of every series, cumulative since tcprt
 * started, and an ExportLogsServiceRequest of task records.  The messages
 * are protobuf-c's, generated at build time from OpenTelemetry's .proto
 * files (Makefile); this file only fills them in.  Built only with OTLP
 * (TCPRT_OTLP).
 */
#ifndef TCPRT_OTLP_H
#define TCPRT_OTLP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "export.h"
#include "record.h"
#include "sink.h"

#define OTLP_SERVICE_NAME	"tcprt"

/* tcprt's own counters, sent beside the module's. */
struct otlp_self {
	uint64_t records_read, malformed_lines, container_overflow;
	uint64_t requests_sent, requests_failed, requests_dropped;
	uint64_t log_records_sent, log_records_dropped;
	bool logs;		/* --otlp-logs: the log record counters too */
};

struct otlp_metrics {
	const struct series_table *t;	/* of struct exp_val */
	const struct prom_buckets *b;
	bool exponential;	/* exponential histograms, not explicit bounds */
	const char *host;	/* host.name */
	uint64_t start_ns, time_ns;	/* tcprt's start, now */
	struct otlp_self self;
	const struct sink_status *status;
	unsigned int nstatus;
	const struct sink_status *stats;	/* tcprt agent's sinks' */
	unsigned int nstats;
};

/*
 * The ExportMetricsServiceRequest of @m, packed into a buffer the caller
 * frees; its size in *@len.
 */
uint8_t *otlp_pack_metrics(const struct otlp_metrics *m, size_t *len);

/* A task record as a log record, with what export names its series by. */
struct otlp_log {
	struct record r;
	char container[CT_ID_MAX + 1];	/* export's container, or "" */
	char pod[CT_POD_MAX + 1];
	bool ct_id;		/* container is a container's id */
	uint64_t observed_ns;	/* when tcprt read it */
};

/* The ExportLogsServiceRequest of @n records, packed as above. */
uint8_t *otlp_pack_logs(const struct otlp_log *l, size_t n, const char *host,
			size_t *len);

/* The OTLP name of histogram @h ("tcp_rt.task.duration"). */
extern const char *const otlp_hist_name[NHIST];

#endif
