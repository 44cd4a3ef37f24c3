/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A sink: where the records one reader reads go (docs/agent.md).  Each of
 * tcprt's host commands is one reader (input.c) and one sink; tcprt agent
 * is to be one reader and every sink configured.  Records go one way: the
 * reader hands each to record(), which never blocks and never calls the
 * reader back; what the reader knows of itself (its counts, the module's
 * status) reaches the sink with output(), once an interval.
 */
#ifndef TCPRT_SINK_H
#define TCPRT_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"

/* A numeric line of tcp_rt's status file. */
struct sink_status {
	char key[64];
	uint64_t value;
};

#define SINK_STATUS_MAX	64

/* What the reader tells every sink at output time. */
struct sink_input {
	uint64_t records;	/* valid lines read since start */
	uint64_t bad;		/* malformed lines skipped */
	const struct sink_status *status;	/* the module's, this interval */
	unsigned int nstatus;
};

struct sink_ops {
	const char *name;
	/* One valid record read. */
	void (*record)(void *priv, const struct record *r);
	/*
	 * The interval's output (@last: the final one, before stop): 0, or
	 * -1 after saying why on stderr; a failed output is tried again at
	 * the next interval.
	 */
	int (*output)(void *priv, const struct sink_input *in, bool last);
	/* Between intervals: what waits to be retried, when its time came. */
	void (*idle)(void *priv);
	/*
	 * Stop and free: whether everything handed to the sink was delivered
	 * (what was not is said on stderr).
	 */
	bool (*stop)(void *priv);
};

struct sink {
	const struct sink_ops *ops;
	void *priv;
};

#endif
