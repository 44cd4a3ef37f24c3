// SPDX-License-Identifier: GPL-2.0
/*
 * fleet gaps' arithmetic (acct.h), without ClickHouse.  Sets of numbers
 * against a bitmap of them: their union, counts, intersections, the runs
 * ClickHouse reports and the gaps between them.  An epoch's state and
 * when it has ended.  Both accounts against a model that decides the fate
 * of every number on its own - the epochs' reading, skipping, dropping,
 * refusing and handing over, the store keeping or losing what was handed
 * over, a sender killed with numbers read and not sent, some of which it
 * had sent all the same - and the accounts must name each cause exactly:
 * made = stored + RELAY + CAP + REFUSED + SENDER + IN FLIGHT + TRANSPORT,
 * each term the model's.
 */
#include <stdlib.h>
#include <string.h>

#include "acct.h"
#include "tap.h"

#define UNIV	300

static uint64_t pick(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* ---- sets ---------------------------------------------------------------------- */

/* A random set of [0, UNIV), as a bitmap and as spans added in disorder. */
static void random_set(bool *bits, struct spans *s)
{
	unsigned int i, k = (unsigned int)pick(12);

	memset(bits, 0, UNIV);
	for (i = 0; i < k; i++) {
		uint64_t lo = pick(UNIV), hi = lo + pick(40);
		uint64_t j;

		if (hi > UNIV)
			hi = UNIV;
		for (j = lo; j < hi; j++)
			bits[j] = true;
		spans_add(s, lo, hi);
	}
	spans_union(s);
}

static uint64_t bits_in(const bool *bits, uint64_t lo, uint64_t hi)
{
	uint64_t n = 0;

	for (; lo < hi && lo < UNIV; lo++)
		n += bits[lo];
	return n;
}

struct gaps_seen {
	bool hole[UNIV];
	bool bad;
	uint64_t last;
};

static void note_gap(uint64_t lo, uint64_t hi, void *ctx)
{
	struct gaps_seen *g = ctx;

	if (lo > hi || hi >= UNIV || (g->last && lo <= g->last))
		g->bad = true;
	for (; lo <= hi && lo < UNIV; lo++)
		g->hole[lo] = true;
	g->last = hi + 1;
}

static void test_sets(void)
{
	unsigned int t, bad_union = 0, bad_count = 0, bad_common = 0;
	unsigned int bad_gaps = 0;

	for (t = 0; t < 2000; t++) {
		bool a[UNIV], b[UNIV];
		struct spans sa = { 0 }, sb = { 0 };
		uint64_t lo = pick(UNIV), hi = pick(UNIV + 10);
		uint64_t common = 0, below = pick(UNIV + 1), from = pick(UNIV + 1);
		size_t i;
		struct gaps_seen g = { .last = 0 };

		random_set(a, &sa);
		random_set(b, &sb);
		for (i = 0; i < sa.n; i++)
			bad_union += sa.s[i].lo >= sa.s[i].hi ||
				     (i && sa.s[i].lo <= sa.s[i - 1].hi);
		bad_count += spans_count(&sa) != bits_in(a, 0, UNIV) ||
			     spans_count_in(&sa, lo, hi) != bits_in(a, lo, hi);
		for (i = 0; i < UNIV; i++)
			common += a[i] && b[i];
		bad_common += spans_count_common(&sa, &sb) != common;

		spans_each_gap(&sa, from, below, note_gap, &g);
		for (i = 0; i < UNIV; i++)
			g.bad |= g.hole[i] != (i >= from && i < below && !a[i]);
		bad_gaps += g.bad;
		spans_free(&sa);
		spans_free(&sb);
	}
	ok(!bad_union, "union: sorted, disjoint, not touching (2000 random sets)");
	ok(!bad_count, "counts, and counts in a range, as the bitmap's");
	ok(!bad_common, "the numbers two sets share, as the bitmaps'");
	ok(!bad_gaps, "the gaps between two bounds: exactly the numbers missing, in order");
}

/* ---- states -------------------------------------------------------------------- */

static void test_state(void)
{
	ok(acct_ended_after(10000000, 0) == 60 && acct_ended_after(0, 0) == 60 &&
	   acct_ended_after(1500000, 0) == 9 && acct_ended_after(1, 0) == 1 &&
	   acct_ended_after(10000000, 5) == 5 &&
	   acct_ended_after(FRAME_INTERVAL_MAX_US, 0) == 6ULL * 86400 * 365,
	   "ended after 6 intervals (rounded up to a second), 60 s when unknown, or as given");
	ok(acct_state_of(true, false, false, 60, 60) == ACCT_OPEN &&
	   acct_state_of(true, false, false, 61, 60) == ACCT_ENDED &&
	   acct_state_of(true, true, false, 1000, 60) == ACCT_FINAL &&
	   acct_state_of(true, false, true, 0, 60) == ACCT_CLOSED &&
	   acct_state_of(true, true, true, 0, 60) == ACCT_FINAL &&
	   acct_state_of(false, false, false, 0, 60) == ACCT_NONE,
	   "states: open until silent past ended-after, then ended; final 1 final, final 2 closed; none without control");
	ok(acct_live(ACCT_OPEN, 0, 60) && !acct_live(ACCT_ENDED, 0, 60) &&
	   !acct_live(ACCT_FINAL, 0, 60) && !acct_live(ACCT_CLOSED, 0, 60) &&
	   acct_live(ACCT_NONE, 60, 60) && !acct_live(ACCT_NONE, 61, 60),
	   "live: open; without control, while records keep coming");
	ok(acct_silent_until(1000000, 1000000, 1000000 - 86400, 900000) == 900000 &&
	   acct_silent_until(1000000, 1000000, 1000000 - 86401, 900000) == 1000000 &&
	   acct_silent_until(1000000, 1000005, 1000005, 0) == 0 &&
	   acct_silent_until(1000000, 1000005, 1000005, 1000003) == 1000000,
	   "silent until the central's loaded_to, behind or never loaded whole, until a day without a row; never past now");
	ok(!strcmp(acct_state_name[ACCT_ENDED], "ended") &&
	   !strcmp(acct_state_name[ACCT_CLOSED], "closed"), "state names");
}

/* ---- by epoch ------------------------------------------------------------------ */

static void test_epoch(void)
{
	struct acct_sent in = { .next_seq = 100, .sent_seq = 90, .cap_dropped = 3,
				.refused = 2, .received = 85, .unsent_stored = 6,
				.store = 1 };
	struct acct_split s;

	acct_epoch(&in, &s);
	ok(s.missing == 15 && s.sender == 4 && s.in_flight == 0 && s.transport == 5 && !s.over,
	   "ended: 15 missing = 3 cap + 2 refused + 1 store + 4 sender (10 unsent, 6 of them stored) + 5 transport");
	in.live = true;
	acct_epoch(&in, &s);
	ok(s.sender == 0 && s.in_flight == 4 && s.transport == 5, "live: the 4 in flight");
	in.received = 98;
	acct_epoch(&in, &s);
	ok(s.missing == 2 && s.transport == 0 && s.over,
	   "more counted lost than missing: said, transport 0");
	in = (struct acct_sent){ .next_seq = 5, .sent_seq = 9, .received = 5 };
	acct_epoch(&in, &s);
	ok(s.missing == 0 && s.sender == 0 && !s.over, "sent_seq past next_seq (forged): taken as next_seq");
	in = (struct acct_sent){ .next_seq = 10, .sent_seq = 10, .cap_dropped = UINT64_MAX,
				 .refused = UINT64_MAX };
	acct_epoch(&in, &s);
	ok(s.transport == 0 && s.over, "counts that would wrap when added: said as too many, not wrapped");
}

/* ---- by module seq ------------------------------------------------------------- */

enum fate { F_STORED, F_RELAY, F_CAP, F_REFUSED, F_UNSENT, F_TRANSPORT, NFATES };

struct model {
	uint64_t made;
	enum fate fate[UNIV];
	bool live_of[UNIV];	/* an unsent number: its epoch lives */
	struct acct_read e[8];
	size_t n;
};

/*
 * A log of @m->made numbers: stretches no epoch read, then epochs, one
 * after the other, each reading a range: skipping some numbers, handing
 * the rest over but for those the cap dropped or rsyslog refused, up to
 * its sent_next, the rest read and not handed over (some stored all the
 * same: sent before the kill).  What was handed over is stored or lost in
 * transport.  The last epoch may have read past its last account, and
 * one may have sent no account at all.
 */
static void model_log(struct model *m)
{
	uint64_t at = 0, j;
	size_t k;

	memset(m, 0, sizeof(*m));
	m->made = 1 + pick(UNIV - 1);
	while (at < m->made && m->n < 8) {
		struct acct_read *e = &m->e[m->n];
		uint64_t gap = pick(3) ? 0 : pick(20), lo, hi, sent, past;
		bool live = pick(2), no_l1 = !pick(8);

		for (j = at; j < at + gap && j < m->made; j++)
			m->fate[j] = F_RELAY;
		lo = at + gap;
		if (lo >= m->made)
			break;
		hi = lo + 1 + pick(m->made - lo);
		sent = lo + pick(hi - lo + 1);
		/* read past its last account: the last epoch alone */
		past = hi < m->made && !pick(3) ? pick(m->made - hi + 1) : 0;
		*e = (struct acct_read){ .epoch = 1000 + m->n, .has_l1 = !no_l1, .live = live };
		e->v[CPU_FIRST] = lo;
		e->v[CPU_READ_NEXT] = hi;
		e->v[CPU_SENT_NEXT] = no_l1 ? lo : sent;
		for (j = lo; j < hi + past; j++) {
			unsigned int r = (unsigned int)pick(10);

			m->live_of[j] = live;
			if (!no_l1 && j >= e->v[CPU_SENT_NEXT] && j > lo && j < hi - 1 &&
			    r == 4) {
				/* skipped between numbers read and not
				 * handed over: the relay's, once */
				m->fate[j] = F_RELAY;
				e->v[CPU_UNSENT_SKIPPED]++;
			} else if (no_l1 || j >= e->v[CPU_SENT_NEXT]) {
				/* read, not handed over, or handed over just
				 * before the kill, and stored */
				m->fate[j] = r < 4 ? F_STORED : F_UNSENT;
			} else if (j == lo || j == hi - 1) {
				m->fate[j] = F_STORED;	/* read: its range's ends */
			} else {
				m->fate[j] = r < 5 ? F_STORED : r == 5 ? F_RELAY :
					     r == 6 ? F_CAP : r == 7 ? F_REFUSED :
					     F_TRANSPORT;
			}
			if (!no_l1 && j < hi) {
				e->v[CPU_RELAY_SKIPPED] += m->fate[j] == F_RELAY;
				e->v[CPU_CAP_DROPPED] += m->fate[j] == F_CAP;
				e->v[CPU_REFUSED] += m->fate[j] == F_REFUSED;
			}
			if (m->fate[j] == F_STORED) {
				if (!e->rows_hi)
					e->rows_lo = j;
				e->rows_hi = j + 1;
			}
		}
		/* past its account, its range reaches its last row only */
		for (j = e->rows_hi > hi ? e->rows_hi : hi; j < hi + past; j++)
			m->fate[j] = F_RELAY, m->live_of[j] = false;
		/* without an account, its range is that of its rows */
		if (no_l1) {
			for (j = lo; j < hi + past; j++)
				if (j < e->rows_lo || j >= e->rows_hi)
					m->fate[j] = F_RELAY;
			if (!e->rows_hi) {
				/* no row, no account: no epoch the store knows */
				continue;
			}
		}
		at = hi + past;
		m->n++;
		if (past)
			break;
	}
	for (j = at; j < m->made; j++)
		m->fate[j] = F_RELAY;
	/* the numbers past the last row of the log are unknown to the store */
	for (j = m->made; j-- > 0 && m->fate[j] != F_STORED;) {
		bool counted = false;

		for (k = 0; k < m->n; k++)
			counted |= m->e[k].has_l1 && j < m->e[k].v[CPU_READ_NEXT];
		if (counted)
			break;
		m->made = j;
	}
}

static void test_log_model(void)
{
	unsigned int t, bad = 0, shown = 0;
	uint64_t total[NFATES + 1] = { 0 }, no_l1 = 0, past = 0;

	for (t = 0; t < 5000; t++) {
		struct model m;
		struct spans stored = { 0 };
		struct acct_log a;
		uint64_t want[NFATES + 1] = { 0 }, j;

		model_log(&m);
		for (j = 0; j < m.made; j++) {
			enum fate f = m.fate[j];

			if (f == F_STORED)
				spans_add(&stored, j, j + 1);
			if (f == F_UNSENT && m.live_of[j])
				want[NFATES]++;
			else
				want[f]++;
		}
		spans_union(&stored);
		acct_log(m.e, m.n, 0, &stored, &a);
		for (j = 0; j <= NFATES; j++)
			total[j] += want[j];
		no_l1 += a.no_l1;
		for (j = 0; j < m.n; j++)
			past += m.e[j].rows_hi > m.e[j].v[CPU_READ_NEXT] && m.e[j].has_l1;
		if (a.made != m.made || a.stored != want[F_STORED] ||
		    a.relay != want[F_RELAY] || a.cap_dropped != want[F_CAP] ||
		    a.refused != want[F_REFUSED] || a.sender != want[F_UNSENT] ||
		    a.in_flight != want[NFATES] || a.transport != want[F_TRANSPORT] ||
		    a.overlap || a.over) {
			if (shown++ < 3)
				diag("made %llu/%llu stored %llu/%llu relay %llu/%llu cap %llu/%llu refused %llu/%llu sender %llu/%llu in flight %llu/%llu transport %llu/%llu (got/want) overlap %d over %d, %zu epochs",
				     (unsigned long long)a.made, (unsigned long long)m.made,
				     (unsigned long long)a.stored, (unsigned long long)want[F_STORED],
				     (unsigned long long)a.relay, (unsigned long long)want[F_RELAY],
				     (unsigned long long)a.cap_dropped, (unsigned long long)want[F_CAP],
				     (unsigned long long)a.refused, (unsigned long long)want[F_REFUSED],
				     (unsigned long long)a.sender, (unsigned long long)want[F_UNSENT],
				     (unsigned long long)a.in_flight, (unsigned long long)want[NFATES],
				     (unsigned long long)a.transport, (unsigned long long)want[F_TRANSPORT],
				     a.overlap, a.over, m.n);
			bad++;
		}
		spans_free(&stored);
	}
	diag("numbers of the model: %llu stored, %llu relay, %llu cap, %llu refused, %llu sender, %llu in flight, %llu transport; %llu epochs without an account, %llu read past theirs",
	     (unsigned long long)total[F_STORED], (unsigned long long)total[F_RELAY],
	     (unsigned long long)total[F_CAP], (unsigned long long)total[F_REFUSED],
	     (unsigned long long)total[F_UNSENT], (unsigned long long)total[NFATES],
	     (unsigned long long)total[F_TRANSPORT], (unsigned long long)no_l1,
	     (unsigned long long)past);
	ok(!bad, "5000 modelled logs: made, stored and each cause exactly the model's (%u differ)", bad);
}

static void test_log_cases(void)
{
	struct acct_read e[2] = { { .has_l1 = true } , { .has_l1 = true } };
	struct spans stored = { 0 };
	struct acct_log a;

	/* 0..9 read by one, 5..14 by another: read twice */
	e[0].v[CPU_FIRST] = 0;
	e[0].v[CPU_READ_NEXT] = e[0].v[CPU_SENT_NEXT] = 10;
	e[1].v[CPU_FIRST] = 5;
	e[1].v[CPU_READ_NEXT] = e[1].v[CPU_SENT_NEXT] = 15;
	spans_add(&stored, 0, 15);
	spans_union(&stored);
	acct_log(e, 2, 0, &stored, &a);
	ok(a.overlap && a.made == 15 && a.stored == 15 && a.transport == 0 && !a.over,
	   "two epochs reading the same numbers: said");

	/* a killed sender: read 0..19, handed over 0..9, of 10..19 the
	 * store has 10 and 11 (sent before the kill): 8 lost with it */
	e[0].v[CPU_READ_NEXT] = 20;
	e[0].v[CPU_SENT_NEXT] = 10;
	e[0].rows_lo = 0;
	e[0].rows_hi = 12;
	stored.n = 0;
	spans_add(&stored, 0, 12);
	acct_log(e, 1, 0, &stored, &a);
	ok(a.made == 20 && a.stored == 12 && a.sender == 8 && a.transport == 0 && !a.over,
	   "killed with 10 read and not sent, 2 of which it had sent: SENDER 8, nothing counted twice");
	e[0].live = true;
	acct_log(e, 1, 0, &stored, &a);
	ok(a.in_flight == 8 && a.sender == 0, "live: IN FLIGHT 8");

	/* nothing read by ship, the store's rows from a reader it does not
	 * know (no epoch): the rest of [0, made) is RELAY */
	stored.n = 0;
	spans_add(&stored, 3, 5);
	acct_log(e, 0, 0, &stored, &a);
	ok(a.made == 5 && a.stored == 2 && a.relay == 3 && a.transport == 0,
	   "rows without an epoch: made from them, the numbers before them RELAY");

	/* a window from 100: the epoch's window read 100..149 (first 100,
	 * the numbers before it handed over before the window), 2 skipped
	 * in the relay, 1 capped; stored 50..59 (before the window: not
	 * counted) and 100..139 but 120..124; 140..149 read, not sent, live */
	e[0] = (struct acct_read){ .has_l1 = true, .live = true };
	e[0].v[CPU_FIRST] = 100;
	e[0].v[CPU_READ_NEXT] = 150;
	e[0].v[CPU_SENT_NEXT] = 140;
	e[0].v[CPU_RELAY_SKIPPED] = 2;
	e[0].v[CPU_CAP_DROPPED] = 1;
	stored.n = 0;
	spans_add(&stored, 50, 60);
	spans_add(&stored, 100, 120);
	spans_add(&stored, 125, 140);
	spans_union(&stored);
	acct_log(e, 1, 100, &stored, &a);
	ok(a.from == 100 && a.made == 50 && a.stored == 35 && a.in_flight == 10 &&
	   a.relay == 2 && a.cap_dropped == 1 && a.transport == 2 && !a.over,
	   "a window: made 50 from 100, stored 35, in flight 10, relay 2, cap 1, transport 2 (%llu %llu %llu %llu)",
	   (unsigned long long)a.made, (unsigned long long)a.stored,
	   (unsigned long long)a.in_flight, (unsigned long long)a.transport);
	spans_free(&stored);
}

int main(void)
{
	test_sets();
	test_state();
	test_epoch();
	test_log_model();
	test_log_cases();
	return done_testing();
}
