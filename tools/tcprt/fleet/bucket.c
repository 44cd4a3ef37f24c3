// SPDX-License-Identifier: GPL-2.0
/* The token bucket of tcprt ship's cap: see bucket.h. */
#include "bucket.h"

#define SCALE	1000000ULL	/* byte-microseconds per byte */

void bucket_init(struct bucket *b, uint64_t rate, uint64_t burst,
		 uint64_t now_us)
{
	b->rate = rate;
	b->burst = burst;
	b->level = burst * SCALE;
	b->last_us = now_us;
}

bool bucket_take(struct bucket *b, uint64_t cost, uint64_t now_us)
{
	uint64_t cap = b->burst * SCALE;

	if (!b->rate)
		return true;
	if (now_us > b->last_us) {
		uint64_t dt = now_us - b->last_us;

		/* a full refill needs at most burst / rate seconds */
		if (dt >= cap / b->rate || b->level + dt * b->rate >= cap)
			b->level = cap;
		else
			b->level += dt * b->rate;
		b->last_us = now_us;
	}
	if (cost > b->burst || b->level < cost * SCALE)
		return false;
	b->level -= cost * SCALE;
	return true;
}
