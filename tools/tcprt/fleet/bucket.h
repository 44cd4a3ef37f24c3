/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tcprt ship's cap: a token bucket in bytes (LTTng's max-bandwidth).  It
 * holds at most @burst bytes and starts full; it gains @rate bytes per
 * second of the caller's clock, continuously (kept in byte-microseconds,
 * so no fraction is lost between two calls); a record of @cost bytes
 * passes when the bucket holds at least @cost, which it then takes, and is
 * dropped otherwise, taking nothing.  A dropped record is never retried:
 * the caller counts it.  rate 0: no cap.
 */
#ifndef TCPRT_BUCKET_H
#define TCPRT_BUCKET_H

#include <stdbool.h>
#include <stdint.h>

struct bucket {
	uint64_t rate;		/* bytes per second; 0: every record passes */
	uint64_t burst;		/* bytes */
	uint64_t level;		/* byte-microseconds: bytes * 1e6 */
	uint64_t last_us;
};

void bucket_init(struct bucket *b, uint64_t rate, uint64_t burst,
		 uint64_t now_us);
/* Refill up to @now_us (a clock that never goes back), then take @cost. */
bool bucket_take(struct bucket *b, uint64_t cost, uint64_t now_us);

#endif
