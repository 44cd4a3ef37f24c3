/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Merging the per-CPU streams into start-time order, with a bounded
 * reordering window.
 *
 * Records are written when a task ends, on the CPU that ended it, so each
 * file is in end order and the files interleave.  The merge holds records
 * in a min-heap on start time and releases one once the newest start time
 * seen (the "watermark"; with --follow also the clock) is at least the
 * window past its own start.  Every record whose start is less than the
 * window older than the watermark at its arrival therefore comes out in
 * order.  A record arriving later than that (a task longer than the window,
 * or the E record of a connection that lived longer: E carries the
 * connection's start) is released at once, out of order, and counted as
 * late.  At most @max records are held: beyond, the oldest is released
 * early (counted as forced), so memory stays bounded.
 */
#ifndef TCPRT_MERGE_H
#define TCPRT_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"

struct merge_item;

struct merge {
	struct merge_item *heap;
	size_t n, cap, max;
	uint64_t window_us;
	uint64_t watermark;	/* newest start (or clock) seen */
	uint64_t last_out;	/* start of the last record released */
	uint64_t seq;		/* arrival counter: equal starts keep their order */
	uint64_t late, late_e, forced;	/* late_e: late E records */
	record_fn out;
	void *ctx;
};

void merge_init(struct merge *m, uint64_t window_us, size_t max,
		record_fn out, void *ctx);
/* Add a record (a record_fn, for input_open); may release some. */
void merge_push(const struct record *r, void *merge);
/* The clock says @now_us: release what is the window older. */
void merge_advance(struct merge *m, uint64_t now_us);
/* Release everything (end of input). */
void merge_flush(struct merge *m);
void merge_free(struct merge *m);

#endif
