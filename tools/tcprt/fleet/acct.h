/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The arithmetic of tcprt fleet gaps (docs/fleet.md, "Loss: where each
 * kind shows"), without ClickHouse: ClickHouse gives the counts and the
 * runs of numbers stored, this decides what they mean.
 *
 * Two accountings:
 *
 *   by epoch (one run of tcprt ship): the numbers ship gave the lines it
 *   read, [0, next_seq) of its last control message (C1).  What is not
 *   stored is dropped by the cap, refused by the host's rsyslog, refused
 *   by ClickHouse (STORE), not yet handed over ([sent_seq, next_seq):
 *   in flight while the epoch lives, lost with the sender once it ended
 *   or was closed), or lost in transport (the rest).
 *
 *   by module seq (per host, load and CPU: one log of one load of the
 *   module): the numbers the module gave its records, [0, made).  Each
 *   epoch that read the log says (L1) which it read, [first, read_next),
 *   and which of those it handed over, [first, sent_next), less those it
 *   counted skipped (overwritten in the relay, or read by another
 *   reader), dropped by the cap or refused.  What is not stored is
 *   RELAY (skipped, or outside every epoch's range: overwritten while no
 *   ship read, or read by a reader that is not ship), CAP, REFUSED,
 *   SENDER or IN FLIGHT (read, not handed over: [sent_next, read_next)
 *   less what the store has of it, for the store may have rows a killed
 *   sender handed over before it could count them), or TRANSPORT (the
 *   rest: handed over, not stored).
 *
 * An epoch is live until its final control message arrives (final 1:
 * its own last; 2: sent by its successor from the state the killed
 * sender left, "closed"), or until no control message came for longer
 * than --ended-after: then it has "ended", and what it had not handed
 * over is lost with it.
 */
#ifndef TCPRT_ACCT_H
#define TCPRT_ACCT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame.h"

/* ---- sets of numbers --------------------------------------------------------- */

/* [lo, hi) */
struct span {
	uint64_t lo, hi;
};

/* A set of numbers: after spans_union(), sorted, disjoint, not touching. */
struct spans {
	struct span *s;
	size_t n, cap;
};

/* Add [lo, hi) (nothing when empty); spans_union() puts the set in order. */
void spans_add(struct spans *s, uint64_t lo, uint64_t hi);
void spans_union(struct spans *s);
void spans_free(struct spans *s);
/* How many numbers: all of them, those in [lo, hi), those of both sets. */
uint64_t spans_count(const struct spans *s);
uint64_t spans_count_in(const struct spans *s, uint64_t lo, uint64_t hi);
uint64_t spans_count_common(const struct spans *a, const struct spans *b);

/*
 * Call @fn with each range [lo, hi] (inclusive) of [@from, @below) that @s
 * (in order) does not hold; returns how many.
 */
uint64_t spans_each_gap(const struct spans *s, uint64_t from, uint64_t below,
			void (*fn)(uint64_t lo, uint64_t hi, void *ctx),
			void *ctx);

/* ---- an epoch's state -------------------------------------------------------- */

enum acct_state {
	ACCT_NONE,	/* no control message arrived */
	ACCT_OPEN,	/* live */
	ACCT_ENDED,	/* no control message for longer than --ended-after */
	ACCT_FINAL,	/* its final control message arrived */
	ACCT_CLOSED,	/* closed by its successor (final 2) */
};

extern const char *const acct_state_name[];

/* Default --ended-after: 6 intervals of the sender's, 60 s when unknown. */
#define ACCT_ENDED_INTERVALS	6
#define ACCT_ENDED_UNKNOWN_S	60

/*
 * The seconds of silence after which an epoch of --interval @interval_us
 * (0: unknown) has ended: @ended_after_s when given (not 0), else the
 * defaults above (rounded up to a second).
 */
uint64_t acct_ended_after(uint64_t interval_us, uint64_t ended_after_s);

/*
 * The state of an epoch: whether a control message arrived, whether one
 * was final 1 or final 2, how many seconds since the last message of the
 * epoch arrived, and its ended-after.
 */
enum acct_state acct_state_of(bool has_ctl, bool final_last, bool final_closed,
			      uint64_t idle_s, uint64_t after_s);

/*
 * A central's loader (tcprt.centrals, schema 6) that wrote no row for this
 * long is gone (taken out of the fleet, its spool elsewhere): the epochs
 * whose last control message it stored are judged by the clock again.
 */
#define ACCT_CENTRAL_SILENT_S	86400

/*
 * Until when an epoch's silence runs, judged at @now_s (the store's clock,
 * s, or the window's end): to @loaded_to, how far the central that stored
 * its last control message has its spool loaded, when that is earlier and
 * the central's last row (written at @at) is younger than
 * ACCT_CENTRAL_SILENT_S at @store_now; else to @now_s.
 */
uint64_t acct_silent_until(uint64_t now_s, uint64_t store_now, uint64_t at,
			   uint64_t loaded_to);

/* Live: what it has not handed over is in flight, not lost.  An epoch
 * with no control message lives while its records keep coming. */
bool acct_live(enum acct_state st, uint64_t idle_s, uint64_t after_s);

/* ---- by epoch ---------------------------------------------------------------- */

struct acct_sent {
	uint64_t next_seq, sent_seq;	/* its last control message's */
	uint64_t cap_dropped, refused;
	uint64_t received;	/* distinct numbers below next_seq stored */
	uint64_t unsent_stored;	/* ... and of them, in [sent_seq, next_seq) */
	uint64_t store;		/* records ClickHouse refused */
	bool live;
};

struct acct_split {
	uint64_t missing;	/* next_seq - received */
	uint64_t sender, in_flight, transport;
	bool over;		/* the losses counted are more than missing */
};

void acct_epoch(const struct acct_sent *in, struct acct_split *out);

/* ---- by module seq ----------------------------------------------------------- */

/* What one epoch did with one log. */
struct acct_read {
	uint64_t epoch;
	bool has_l1;		/* an account (L1) of the log arrived */
	uint64_t v[CPU_NFIELDS];	/* the last one's fields (frame.h) */
	bool has_base;		/* one arrived before a window (--since) */
	uint64_t base[CPU_NFIELDS];	/* the last of those */
	uint64_t base_s;	/* when it arrived (the central's clock) */
	uint64_t rows_lo, rows_hi;	/* the module numbers of its rows
					 * stored: [lo, hi); hi 0: none */
	bool live;		/* acct_live() */
};

struct acct_log {
	uint64_t from;		/* the first number accounted (a window's) */
	uint64_t made;		/* numbers the module gave from it, as far
				 * as known: [from, from + made) */
	uint64_t stored;	/* distinct numbers stored */
	uint64_t relay, cap_dropped, refused, sender, in_flight, transport;
	unsigned int epochs;	/* that read the log */
	unsigned int no_l1;	/* of them, with rows and no account */
	bool overlap;		/* two epochs read numbers in common */
	bool over;		/* the losses counted are more than missing */
};

/*
 * The account of a log from the @n epochs that read it and the set
 * @stored of its numbers in the store (in order).  An epoch's range runs
 * to its highest row if that is past its account's read_next (read after
 * its last account, which had not arrived or not been sent): what it lacks
 * there is in flight while the epoch lives, lost with the sender once it
 * is not.  An epoch with rows and no account at all: its rows' range,
 * nothing of it known handed over.  Only the numbers from @from on are
 * accounted (a window's: tcprt fleet gaps --since); the epochs' counters
 * are then the window's own.
 */
void acct_log(const struct acct_read *e, size_t n, uint64_t from,
	      const struct spans *stored, struct acct_log *out);

#endif
