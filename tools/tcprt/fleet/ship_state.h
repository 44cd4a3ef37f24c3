/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tcprt ship's account of its epoch, kept where a kill cannot take it: a
 * file mapped shared (--state), updated by plain stores as records are
 * read, sent, dropped and refused.  A SIGKILL or an OOM kill leaves every
 * store made in the page cache, so the next ship on the host finds the
 * dead epoch's counters there and closes its account for it (final 2:
 * frame.h).  A power loss can leave the file as it was last written
 * back: ship syncs it at each control message, so it is then at most one
 * --interval old, and the module's load (and its numbers) are gone anyway.
 *
 * The file: a header, then two epochs' areas: the running one and the
 * dead one still to close.  Each area has the epoch's counters (frame.h's
 * C1) and a table of slots, one per (module load, CPU) the epoch read
 * numbered records from (log_ext's seq), with L1's counters.
 *
 * Only one ship uses a state file at a time (flock).
 */
#ifndef TCPRT_SHIP_STATE_H
#define TCPRT_SHIP_STATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "frame.h"

#define SHIP_STATE_SLOTS	4096

/*
 * Between two stores to the state whose order a kill may split: the
 * compiler keeps them in program order (a kill stops this thread
 * between two instructions; no other reads the map meanwhile).
 */
#define STATE_ORDER()	atomic_signal_fence(memory_order_seq_cst)

/* One (load, CPU) of an epoch: L1's counters (frame.h), as they stand. */
struct ship_slot {
	uint64_t load_id;	/* 0: unknown (no status file says it) */
	int32_t cpu;
	uint32_t used;		/* 0: free; 1: taken; 2: a numbered record read */
	uint64_t first;		/* module seq of the first numbered record read */
	uint64_t read_next;	/* one past the highest read from the relay */
	uint64_t sent_next;	/* below it: handed over, or counted */
	uint64_t relay_skipped, cap_dropped, refused;
	/* of relay_skipped, those at or past sent_next (L1's unsent_skipped) */
	uint64_t unsent_skipped;
	/* one past the number of the last line handed on (ship_line) */
	uint64_t line_next;
	uint64_t reported;	/* the counters' sum when last sent in an L1 */
	/* the end of a line cut at a chunk's end, for its seq */
	uint32_t tail_len;
	char tail[44];
};

struct ship_epoch {
	char host[HOST_ID_MAX + 1];
	char pad[7];
	uint64_t epoch;		/* 0: none */
	uint64_t closed;	/* its final control message was sent */
	uint64_t start_us, interval_us, ctl_seq;
	uint64_t next_seq, sent_seq, cap_dropped, refused, bad;
	uint64_t module_known, ow_start, ow_now, so_start, so_now;
	uint64_t slots_full;	/* numbered records of no slot (table full) */
	struct ship_slot slot[SHIP_STATE_SLOTS];
};

struct ship_state {
	char magic[8];
	uint32_t version, size;
	struct ship_epoch cur;
	struct ship_epoch dead;	/* killed before its final; epoch 0: none */
};

/*
 * Map @path (created 0600 when missing; never through a link), locked for
 * this process; NULL @path: an anonymous map (nothing kept).  A file of
 * another format is started anew, with a warning.  NULL, with why in
 * @err ("state file PATH: ..."), when the file cannot be used.  If the file holds an epoch not closed,
 * it moves to ->dead (unless a dead one is still there: then the older
 * is dropped, counted in *@dropped) and ->cur is cleared.
 */
struct ship_state *ship_state_open(const char *path, uint64_t *dropped,
				   char *err, size_t len);

/* Write the file back to disk (fdatasync); false on an error (said once). */
bool ship_state_sync(struct ship_state *st);

void ship_state_close(struct ship_state *st);

/* The slot of (@load_id, @cpu) in @e, taken if new; NULL when full. */
struct ship_slot *ship_slot_of(struct ship_epoch *e, uint64_t load_id, int cpu);

/*
 * The slot's sent_next moves to @to, past @handled numbered lines handed
 * on since it was last moved: the numbers skipped in between leave
 * unsent_skipped (they are below sent_next now).
 */
void ship_slot_sent(struct ship_slot *s, uint64_t to, uint64_t handled);

/*
 * The module seq a log line ends with (" seq=N" last), or false when it
 * has none (or N is 2^64 - 1, which no record reaches: one past it would
 * wrap).  @line: the line without its newline.
 */
bool ship_line_seq(const char *line, size_t len, uint64_t *seq);

/*
 * A chunk read from a log file, before its lines are handed on: every
 * numbered line in it is now read.  Moves the slot's first, read_next
 * and relay_skipped (numbers that never came between two read: the relay
 * overwrote them, or another reader consumed them).  A line cut at the
 * chunk's end counts once its end comes (tcp_rt hands out whole records
 * only; a recorded file may cut one: the slot keeps the end of its start).
 * A number below one read before on that slot is counted in *@backwards,
 * and otherwise ignored.
 */
void ship_chunk(struct ship_slot *slot, const char *buf, size_t len,
		uint64_t *backwards);

#endif
