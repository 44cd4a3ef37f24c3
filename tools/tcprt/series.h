/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A table of series keyed by (service port, key, role, record type), each
 * with a caller-sized value, kept sorted for output.  The key is a string
 * (a container, a peer address...) or none.  The number of ports is
 * bounded: once @max_ports ports are in, records of further ports go to
 * port 0, printed "other".  So is the number of keys: once @max_keys
 * distinct keys are in, records of further keys go to the key "other"
 * (series.other_key), and are counted in key_overflow.  This bounds memory
 * (and, for the exporter, the number of time series a scrape sees).
 */
#ifndef TCPRT_SERIES_H
#define TCPRT_SERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"

#define SERIES_OTHER	0	/* the port of the overflow series */

struct series {
	uint16_t port;
	char *key;		/* owned; NULL: no key, or other_key */
	bool other_key;		/* the key's overflow series */
	enum role role;
	enum rec_type type;
	void *val;
};

struct series_table {
	struct series *s;
	size_t n, cap;
	size_t val_size;
	unsigned int max_ports, nports;
	unsigned int max_keys, nkeys;
	uint64_t key_overflow;	/* gets that went to the key "other" */
};

void series_init(struct series_table *t, size_t val_size,
		 unsigned int max_ports, unsigned int max_keys);
/* The value of a series without a key, created zeroed if new. */
void *series_get(struct series_table *t, uint16_t port, enum role role,
		 enum rec_type type);
/*
 * The value of a series of @key (NULL: none), created zeroed if new; the
 * series itself in *@sp when @sp is not NULL.
 */
void *series_get_key(struct series_table *t, uint16_t port, const char *key,
		     enum role role, enum rec_type type, struct series **sp);
/* Free the values with @fn (may be NULL), then the table. */
void series_free(struct series_table *t, void (*fn)(void *val));

#endif
