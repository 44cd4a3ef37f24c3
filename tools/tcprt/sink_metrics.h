/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The metrics sink: counters and histograms per series (port, container,
 * role, type) since start, written every interval as a Prometheus text
 * file for node_exporter's textfile collector and/or sent as OTLP/HTTP to
 * a collector, with each task as an OTLP log record if asked (tcprt
 * export is this sink behind its options; docs/otlp.md).
 *
 * Its settings are named once, here: tcprt export's long options and the
 * keys of tcprt agent's [metrics] section are the same names, set through
 * metrics_set() and checked together by metrics_check().
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
	/* as set; the strings are the conf's own */
	char *textfile;			/* the .prom file, or NULL */
	const struct prom_buckets *b;
	int port;			/* only this port; -1: all */
	struct ct_filter ctf;		/* only this netns, container */
	uint64_t max_ports, max_containers;	/* 0 containers: no label */
	char *otlp_url, *otlp_logs_url, *otlp_header_file;
	struct otlp_tls tls;		/* --otlp-ca, --otlp-cert, --otlp-key */
	bool exponential, insecure;
	bool otlp_any;			/* some otlp-* was set */
	uint64_t log_rate;		/* task log records a second; 0: none */
	/* made by metrics_check() */
	char *header;			/* the header file's line: a secret */
	char *logs_url;			/* where the log records go */
	/* the caller's */
	uint64_t interval_us;
};

/* The defaults: every port, r10 buckets, 64 ports and 64 containers. */
void metrics_conf_init(struct metrics_conf *c);

/*
 * Set @name (a long option's name, without "--") to @value (NULL for a
 * flag given alone): 0; 1 when @name is none of the sink's; -1 with the
 * reason in @err ("'VALUE' is not ...").
 */
int metrics_set(struct metrics_conf *c, const char *name, const char *value,
		char *err, size_t len);

/*
 * Once every setting is set: what goes together, the files they name
 * (the header file read, the key's mode): 0, or -1 with the reason in
 * @err, which names the settings.
 */
int metrics_check(struct metrics_conf *c, char *err, size_t len);

/* Free what the conf owns (the header wiped first). */
void metrics_conf_free(struct metrics_conf *c);

/*
 * Start the sink of @c (checked) into @s: 0, or -1 with the reason in
 * @err (the sink is then stopped and freed; @s is left alone).  The sink
 * keeps what it needs of @c: @c may be freed after.
 */
int metrics_sink_start(struct sink *s, const struct metrics_conf *c,
		       char *err, size_t len);

#endif
