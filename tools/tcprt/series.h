/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A table of series keyed by (service port, role, record type), each with a
 * caller-sized value, kept sorted for output.  The number of ports is
 * bounded: once @max_ports ports are in, records of further ports go to
 * port 0, printed "other".  This bounds memory (and, for the exporter, the
 * number of time series a scrape sees).
 */
#ifndef TCPRT_SERIES_H
#define TCPRT_SERIES_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"

#define SERIES_OTHER	0	/* the port of the overflow series */

struct series {
	uint16_t port;
	enum role role;
	enum rec_type type;
	void *val;
};

struct series_table {
	struct series *s;
	size_t n, cap;
	size_t val_size;
	unsigned int max_ports, nports;
};

void series_init(struct series_table *t, size_t val_size,
		 unsigned int max_ports);
/* The value of a series, created zeroed if new. */
void *series_get(struct series_table *t, uint16_t port, enum role role,
		 enum rec_type type);
/* Free the values with @fn (may be NULL), then the table. */
void series_free(struct series_table *t, void (*fn)(void *val));

#endif
