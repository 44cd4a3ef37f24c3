/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The metrics sink: counters and histograms per series (port, container,
 * role, type) since start, written every interval as a Prometheus text
 * file for node_exporter's textfile collector and/or sent as OTLP/HTTP to
 * a collector, with each task as an OTLP log record if asked (tcprt
 * export is this sink behind its options; docs/otlp.md).
 */
#ifndef TCPRT_SINK_METRICS_H
#define TCPRT_SINK_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "container.h"
#include "otlp_send.h"
#include "prom.h"
#include "sink.h"

struct metrics_conf {
	const char *textfile;		/* the .prom file, or NULL */
	const struct prom_buckets *b;
	int port;			/* only this port; -1: all */
	struct ct_filter ctf;		/* only this netns, container */
	unsigned int max_ports, max_containers;	/* 0 containers: no label */
	uint64_t interval_us;
	/* OTLP, with otlp_url; what is below is checked by the caller */
	const char *otlp_url;
	const char *otlp_logs_url;	/* with log_rate */
	const char *otlp_header;	/* "Name: value", or NULL */
	struct otlp_tls tls;
	bool exponential;
	uint64_t log_rate;		/* task log records a second; 0: none */
};

/*
 * Start the sink of @c into @s: 0, or -1 with the reason in @err (the
 * sink is then stopped and freed; @s is left alone).
 */
int metrics_sink_start(struct sink *s, const struct metrics_conf *c,
		       char *err, size_t len);

#endif
