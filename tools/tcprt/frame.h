/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The messages of the fleet path (docs/fleet.md): what tcprt ship hands to
 * the local rsyslog and tcprt ingest reads from the central's spool, one
 * syslog message each, printable ASCII only (so rsyslog passes them
 * unchanged):
 *
 *   D1 <host> <epoch> <seq> <cpu> <n> <item>|<item>|...|
 *	n records of one log file, of sequence numbers seq .. seq+n-1.  An
 *	item is the record's line as tcp_rt (or the vendor) wrote it; an E
 *	record's line is followed by "~s" or "~c", the role of its connection
 *	as the reader inferred it (server or client: the line alone cannot
 *	tell); a malformed line is "!" and its bytes, each outside 0x20..0x7e
 *	and each '|', '\' and '~' as \xHH.  cpu: the log file's number, -1
 *	when its name has none.
 *
 *   C1 <host> <epoch> <ctl_seq> <start_us> <now_us> <next_seq> <cap_dropped>
 *      <refused> <bad> <module_known> <overwritten_start> <overwritten>
 *      <sampled_out_start> <sampled_out> <final>
 *	the sender's counters, cumulative over the epoch: the next sequence
 *	number (every number below it was given to a record), records dropped
 *	by the cap, records the local rsyslog refused, malformed lines among
 *	those shipped; the module's log_subbufs_overwritten and
 *	records_sampled_out at the epoch's start and now (module_known 0: no
 *	status file to read); final 1 for the last one of the epoch.
 *
 * host: 1 to 64 of [A-Za-z0-9._-]; epoch: a random number drawn at each
 * start of tcprt ship, so that a restart never reuses (epoch, seq).
 */
#ifndef TCPRT_FRAME_H
#define TCPRT_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse.h"
#include "record.h"

#define FRAME_MAX	4000	/* bytes of a message, at most */
#define HOST_ID_MAX	64
/* a malformed line of PARSE_LINE_MAX bytes, each escaped, and its "!" */
#define FRAME_ITEM_MAX	(1 + 4 * PARSE_LINE_MAX)

struct frame_hdr {
	char host[HOST_ID_MAX + 1];
	uint64_t epoch;
	uint64_t seq;		/* of the first item */
	int cpu;
	unsigned int n;
};

enum ctl_field {
	CTL_START_US, CTL_NOW_US, CTL_NEXT_SEQ, CTL_CAP_DROPPED, CTL_REFUSED,
	CTL_BAD, CTL_MODULE_KNOWN, CTL_OVERWRITTEN_START, CTL_OVERWRITTEN,
	CTL_SAMPLED_START, CTL_SAMPLED, CTL_FINAL, CTL_NFIELDS
};

struct frame_ctl {
	char host[HOST_ID_MAX + 1];
	uint64_t epoch, ctl_seq;
	uint64_t v[CTL_NFIELDS];
};

extern const char *const ctl_field_name[CTL_NFIELDS];

/* A valid host id: 1..64 of [A-Za-z0-9._-]. */
bool frame_host_ok(const char *s);

/* One item: @line (@len bytes) with its record @r, or NULL if malformed.
 * Writes at most FRAME_ITEM_MAX bytes to @out (no terminator); returns
 * the length. */
size_t frame_item(char *out, const char *line, size_t len,
		  const struct record *r);

/* The header of a data message, "D1 ... <n> " (at most 128 bytes). */
size_t frame_data_hdr(char *out, size_t size, const struct frame_hdr *h);

/* A control message; returns its length (at most 400 bytes). */
size_t frame_ctl(char *out, size_t size, const struct frame_ctl *c);

/*
 * Parsing, for the loader.  frame_kind: 'D', 'C', or 0 for anything else.
 * frame_parse_data checks the header and cuts the items: @items gets
 * pointers to each and @lens their lengths (at most @max; false if there
 * are more than @max, or not the n the header says).  false with @why set
 * on any defect.
 */
char frame_kind(const char *msg, size_t len);
bool frame_parse_data(const char *msg, size_t len, struct frame_hdr *h,
		      const char **items, size_t *lens, unsigned int max,
		      char why[PARSE_WHY_MAX]);
bool frame_parse_ctl(const char *msg, size_t len, struct frame_ctl *c,
		     char why[PARSE_WHY_MAX]);

/*
 * An item back to the line it carries: @line (PARSE_LINE_MAX bytes) gets
 * its bytes, unescaped, and *@len their number; *@role the role an E
 * record's item says (-1 when none: not E).  Returns 1 for a record's
 * item, 0 for a malformed line's ("!..."), -1 when the item itself is
 * defective.
 */
int frame_item_line(const char *item, size_t ilen, char *line, size_t *len,
		    int *role);

#endif
