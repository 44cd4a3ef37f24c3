/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The series sink: the module's fine-timescale sampling runs (its
 * parameters series_us, series_buckets, series_ext, series_host,
 * series_run; docs/series.md), one at every multiple of a period of the
 * wall clock and, with the trigger, one when the stats (or, in tcprt
 * agent, the records) show an anomaly (anomaly.h), each kept in a store
 * (series_store.c).  A state machine its tick() drives - waiting for the
 * boundary or an anomaly, a run going (series_run polled), the run kept;
 * records reach it only for the trigger, in the agent.  tcprt
 * series --every is this sink ticked alone (series_every()); tcprt
 * agent's [series] section configures it with the same names
 * (series_set()).
 */
#ifndef TCPRT_SINK_SERIES_H
#define TCPRT_SINK_SERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sink.h"

/* The module's file of a run's rows, in its debugfs folder. */
#define SERIES_FILE	"rt-network-series"
/* The recorder's coarse ring, read without consuming it. */
#define COARSE_FILE	"rt-network-recorder-coarse"
/* The recorder's slow tasks' windows, one an open (docs/series.md). */
#define WINDOWS_FILE	"rt-network-windows"

struct series_conf {
	/* a run's settings; NULL, false: the module's own */
	char *us, *buckets, *ext;
	bool host;
	/* always on */
	uint64_t period_us;	/* every; 0: not always on */
	/* recorder: the module's recorder on, a window of every task this
	 * long kept; 0: none */
	uint64_t recorder_us;
	/* the recorder's coarse ring, its buckets (recorder_coarse); 0: the
	 * module's setting */
	uint64_t coarse;
	char *store;
	uint64_t keep_s, keep_bytes;
	bool trigger, trigger_set;	/* set: a trigger option was given */
	double factor;
	uint64_t fail_per_1000, gap_us;
	uint64_t interval_us;	/* from records: an interval's length */
	/*
	 * The caller's: the sink is handed the records (tcprt agent), and
	 * the trigger reads their p99 rather than the stats (anomaly.h).
	 */
	bool records;
};

/* The defaults: the module's run settings, keep 3 days and 1 GB, the
 * trigger off (factor 4, 50 failures per 1000, 60 s apart; intervals of
 * records of ANOMALY_INTERVAL_S). */
void series_conf_init(struct series_conf *c);

/*
 * Set @name (a long option's name, without "--": us, buckets, ext, host,
 * every, recorder, store, keep, keep-bytes, trigger, trigger-factor,
 * trigger-fail, trigger-gap, coarse; and the agent's trigger-interval) to @value (NULL: a flag given alone): 0; 1 when @name is
 * none of these; -1 with the reason in @err.
 */
int series_set(struct series_conf *c, const char *name, const char *value,
	       char *err, size_t len);

/* For the sink (always on), once every setting is set: 0, or -1 with the
 * reason in @err. */
int series_check(const struct series_conf *c, char *err, size_t len);

void series_conf_free(struct series_conf *c);

/*
 * Start the sink of @c into @s (its store made, mode 0750): 0, or -1
 * with the reason in @err.  The sink keeps what it needs of @c.
 */
int series_sink_start(struct sink *s, const struct series_conf *c,
		      char *err, size_t len);

/* tcprt series --every or --recorder: the sink of @c alone until
 * SIGTERM; an exit status. */
int series_every(const struct series_conf *c);

/*
 * One run with @c's settings, waited for (SIGINT ends it early): 0, or -1
 * after saying why.  Its rows are then in the module's series file.
 */
int series_run_once(const struct series_conf *c);

#endif
