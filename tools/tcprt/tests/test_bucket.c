// SPDX-License-Identifier: GPL-2.0
/*
 * The cap's token bucket (bucket.h) against a model written here in
 * floating point: full at the start, refilled at rate per second up to
 * burst, a record passes when the level covers its cost.  Random costs and
 * clock steps; the two must agree on every record.  Also: rate 0 passes
 * everything, a record over the burst never passes, and a long idle spell
 * refills to the burst and no further.
 */
#include <stdbool.h>

#include "bucket.h"
#include "tap.h"

static void test_model(uint64_t rate, uint64_t burst)
{
	struct bucket b;
	double level = (double)burst;
	uint64_t t = 1000000, i, disagree = 0, passed = 0;

	bucket_init(&b, rate, burst, t);
	for (i = 0; i < 200000; i++) {
		uint64_t cost = 50 + rnd() % 400, dt = rnd() % 3000;
		bool model, got;

		t += dt;
		level += (double)dt * (double)rate / 1e6;
		if (level > (double)burst)
			level = (double)burst;
		/* exact integers: compare in byte-microseconds */
		model = level * 1e6 + 0.5 >= (double)cost * 1e6;
		if (model)
			level -= (double)cost;
		got = bucket_take(&b, cost, t);
		disagree += got != model;
		passed += got;
	}
	ok(!disagree && passed > 0 && passed < 200000,
	   "rate %llu B/s, burst %llu B: the model and the bucket agree on 200000 records (%llu passed)",
	   (unsigned long long)rate, (unsigned long long)burst,
	   (unsigned long long)passed);
}

int main(void)
{
	struct bucket b;
	uint64_t n = 0, i;

	test_model(100000, 20000);
	test_model(1000, 100000);
	test_model(1, 5000);

	bucket_init(&b, 0, 0, 0);
	for (i = 0; i < 1000; i++)
		n += bucket_take(&b, 1000000, i);
	ok(n == 1000, "rate 0: no cap");

	bucket_init(&b, 1000, 500, 0);
	ok(!bucket_take(&b, 501, 1000000000), "a record over the burst never passes");
	ok(bucket_take(&b, 500, 1000000000) && !bucket_take(&b, 1, 1000000000),
	   "full after a long idle spell, and not more than the burst");
	ok(bucket_take(&b, 1, 1001000000), "1 ms at 1000 B/s gives one byte");
	return done_testing();
}
