// SPDX-License-Identifier: GPL-2.0
/* The arithmetic of tcprt fleet gaps: see acct.h. */
#include "acct.h"

#include <stdlib.h>

#include "util.h"

/* ---- sets of numbers --------------------------------------------------------- */

void spans_add(struct spans *s, uint64_t lo, uint64_t hi)
{
	if (lo >= hi)
		return;
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 16;
		s->s = xrealloc(s->s, s->cap, sizeof(*s->s));
	}
	s->s[s->n++] = (struct span){ lo, hi };
}

static int span_cmp(const void *x, const void *y)
{
	const struct span *a = x, *b = y;

	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

void spans_union(struct spans *s)
{
	size_t i, w = 0;

	qsort(s->s, s->n, sizeof(*s->s), span_cmp);
	for (i = 0; i < s->n; i++) {
		if (w && s->s[i].lo <= s->s[w - 1].hi) {
			if (s->s[i].hi > s->s[w - 1].hi)
				s->s[w - 1].hi = s->s[i].hi;
			continue;
		}
		s->s[w++] = s->s[i];
	}
	s->n = w;
}

void spans_free(struct spans *s)
{
	free(s->s);
	*s = (struct spans){ 0 };
}

uint64_t spans_count(const struct spans *s)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < s->n; i++)
		n += s->s[i].hi - s->s[i].lo;
	return n;
}

/* The first span of @s that ends after @x (s->n when none). */
static size_t first_after(const struct spans *s, uint64_t x)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->s[mid].hi <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint64_t spans_count_in(const struct spans *s, uint64_t lo, uint64_t hi)
{
	uint64_t n = 0;
	size_t i;

	if (lo >= hi)
		return 0;
	for (i = first_after(s, lo); i < s->n && s->s[i].lo < hi; i++) {
		uint64_t a = s->s[i].lo > lo ? s->s[i].lo : lo;
		uint64_t b = s->s[i].hi < hi ? s->s[i].hi : hi;

		n += b - a;
	}
	return n;
}

uint64_t spans_count_common(const struct spans *a, const struct spans *b)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < a->n; i++)
		n += spans_count_in(b, a->s[i].lo, a->s[i].hi);
	return n;
}

uint64_t spans_each_gap(const struct spans *s, uint64_t from, uint64_t below,
			void (*fn)(uint64_t lo, uint64_t hi, void *ctx),
			void *ctx)
{
	uint64_t at = from, n = 0;
	size_t i;

	for (i = 0; i < s->n && at < below; i++) {
		if (s->s[i].hi <= at)
			continue;
		if (s->s[i].lo > at) {
			fn(at, (s->s[i].lo < below ? s->s[i].lo : below) - 1, ctx);
			n++;
		}
		at = s->s[i].hi;
	}
	if (at < below) {
		fn(at, below - 1, ctx);
		n++;
	}
	return n;
}

/* ---- an epoch's state -------------------------------------------------------- */

const char *const acct_state_name[] = {
	[ACCT_NONE] = "none",
	[ACCT_OPEN] = "open",
	[ACCT_ENDED] = "ended",
	[ACCT_FINAL] = "final",
	[ACCT_CLOSED] = "closed",
};

uint64_t acct_ended_after(uint64_t interval_us, uint64_t ended_after_s)
{
	if (ended_after_s)
		return ended_after_s;
	if (!interval_us)
		return ACCT_ENDED_UNKNOWN_S;
	/* interval_us is at most a year (frame.h): no overflow */
	return (ACCT_ENDED_INTERVALS * interval_us + USEC_PER_SEC - 1) / USEC_PER_SEC;
}

enum acct_state acct_state_of(bool has_ctl, bool final_last, bool final_closed,
			      uint64_t idle_s, uint64_t after_s)
{
	if (!has_ctl)
		return ACCT_NONE;
	if (final_last)
		return ACCT_FINAL;
	if (final_closed)
		return ACCT_CLOSED;
	return idle_s > after_s ? ACCT_ENDED : ACCT_OPEN;
}

uint64_t acct_silent_until(uint64_t now_s, uint64_t store_now, uint64_t at,
			   uint64_t loaded_to)
{
	if (store_now > at && store_now - at > ACCT_CENTRAL_SILENT_S)
		return now_s;
	return loaded_to < now_s ? loaded_to : now_s;
}

bool acct_live(enum acct_state st, uint64_t idle_s, uint64_t after_s)
{
	return st == ACCT_OPEN || (st == ACCT_NONE && idle_s <= after_s);
}

/* ---- by epoch ---------------------------------------------------------------- */

/* a + b, at most UINT64_MAX (forged counts must not wrap into small ones) */
static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

void acct_epoch(const struct acct_sent *in, struct acct_split *out)
{
	uint64_t sent = in->sent_seq < in->next_seq ? in->sent_seq : in->next_seq;
	uint64_t unsent = sub0(in->next_seq - sent, in->unsent_stored);
	uint64_t known;

	*out = (struct acct_split){ .missing = sub0(in->next_seq, in->received) };
	if (in->live)
		out->in_flight = unsent;
	else
		out->sender = unsent;
	known = add_sat(add_sat(add_sat(in->cap_dropped, in->refused), in->store),
			unsent);
	out->transport = sub0(out->missing, known);
	out->over = known > out->missing;
}

/* ---- by module seq ----------------------------------------------------------- */

void acct_log(const struct acct_read *e, size_t n, uint64_t from,
	      const struct spans *stored, struct acct_log *out)
{
	struct spans read = { 0 };
	uint64_t ranges = 0, end = from, lost, known, both;
	size_t i;

	*out = (struct acct_log){ .epochs = (unsigned int)n, .from = from };
	for (i = 0; i < n; i++) {
		uint64_t lo, hi, sent, unsent;

		if (e[i].has_l1) {
			lo = e[i].v[CPU_FIRST];
			hi = e[i].v[CPU_READ_NEXT];
			sent = e[i].v[CPU_SENT_NEXT];
			out->relay = add_sat(out->relay, e[i].v[CPU_RELAY_SKIPPED]);
			out->cap_dropped = add_sat(out->cap_dropped, e[i].v[CPU_CAP_DROPPED]);
			out->refused = add_sat(out->refused, e[i].v[CPU_REFUSED]);
		} else {
			lo = e[i].rows_lo;
			hi = e[i].rows_hi;
			sent = lo;
			out->no_l1++;
		}
		/* its rows past its account: read after it */
		if (e[i].rows_hi) {
			lo = e[i].rows_lo < lo ? e[i].rows_lo : lo;
			hi = e[i].rows_hi > hi ? e[i].rows_hi : hi;
		}
		/* the window's part of it */
		lo = lo < from ? from : lo;
		hi = hi < lo ? lo : hi;
		sent = sent < lo ? lo : sent > hi ? hi : sent;
		unsent = (hi - sent) - spans_count_in(stored, sent, hi);
		/* skipped there: RELAY already */
		if (e[i].has_l1)
			unsent = sub0(unsent, e[i].v[CPU_UNSENT_SKIPPED]);
		if (e[i].live)
			out->in_flight = add_sat(out->in_flight, unsent);
		else
			out->sender = add_sat(out->sender, unsent);
		spans_add(&read, lo, hi);
		ranges = add_sat(ranges, hi - lo);
		if (hi > end)
			end = hi;
	}
	spans_union(&read);
	out->overlap = ranges > spans_count(&read);
	if (stored->n && stored->s[stored->n - 1].hi > end)
		end = stored->s[stored->n - 1].hi;
	out->made = end - from;
	out->stored = spans_count_in(stored, from, end);
	/* [from, end) outside every epoch's range and not stored */
	both = spans_count(&read) + out->stored - spans_count_common(&read, stored);
	out->relay = add_sat(out->relay, out->made - both);
	spans_free(&read);

	lost = out->made - out->stored;
	known = add_sat(add_sat(add_sat(add_sat(out->relay, out->cap_dropped),
					out->refused), out->sender),
			out->in_flight);
	out->transport = sub0(lost, known);
	out->over = known > lost;
}
