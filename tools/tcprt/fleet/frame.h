/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The messages of the fleet path (docs/fleet.md): what tcprt ship hands to
 * the local rsyslog and tcprt ingest reads from the central's spool, one
 * syslog message each, printable ASCII only (so rsyslog passes them
 * unchanged):
 *
 *   D1 <host> <epoch> <seq> <cpu> <n> <item>|<item>|...|
 *   D2 <host> <epoch> <seq> <cpu> <load_id> <n> <item>|<item>|...|
 *	n records of one log file, of sequence numbers seq .. seq+n-1.  An
 *	item is the record's line as tcp_rt (or the vendor) wrote it; an E
 *	record's line is followed by "~s" or "~c", the role of its connection
 *	as the reader inferred it (server or client: the line alone cannot
 *	tell); a malformed line is "!" and its bytes, each outside 0x20..0x7e
 *	and each '|', '\' and '~' as \xHH.  cpu: the log file's number, -1
 *	when its name has none.  D2 when the sender knows the load of the
 *	module that wrote the log (its status's load_id, never 0), which
 *	the module's own record numbers (a line's seq=) belong to; D1 when
 *	it does not.
 *
 *   D3 <host> <epoch> <seq> <width_us> <n> <item>|<item>|...|
 *	n lines of a series run kept on disk (tcprt series --every), of
 *	sequence numbers seq .. seq+n-1 of the same numbering as records,
 *	whose buckets are width_us wide (1 .. SERIES_WIDTH_MAX_US).  An item
 *	is the line as the module wrote it, or "!" and its bytes escaped as
 *	a malformed record line's.
 *
 *   C1 <host> <epoch> <ctl_seq> <start_us> <now_us> <next_seq> <cap_dropped>
 *      <refused> <bad> <module_known> <overwritten_start> <overwritten>
 *      <sampled_out_start> <sampled_out> <final> [<sent_seq> <interval_us>]
 *	the sender's counters, cumulative over the epoch: the next sequence
 *	number (every number below it was given to a record), records dropped
 *	by the cap, records the local rsyslog refused, malformed lines among
 *	those shipped; the module's log_subbufs_overwritten and
 *	records_sampled_out at the epoch's start and now (module_known 0: no
 *	status file to read); final 1 for the last one of the epoch, 2 when
 *	the epoch's successor sent it from the state the killed sender left
 *	(closed by its successor); sent_seq: every number below it was
 *	handed to rsyslog's socket or counted as cap_dropped or refused (so
 *	[sent_seq, next_seq) were read and not yet handed over); interval_us:
 *	the sender's --interval.  The last two are absent in a C1 of a tcprt
 *	before them: then sent_seq is next_seq and interval_us 0 (unknown).
 *
 *   L1 <host> <epoch> <ctl_seq> <load_id> <cpu> <first> <read_next>
 *      <sent_next> <relay_skipped> <cap_dropped> <refused> <final>
 *      <unsent_skipped>
 *	the epoch's account of one log (load_id, cpu) by the module's own
 *	record numbers, cumulative, sent with the C1 of the same ctl_seq
 *	when it changed (and with every final one): first, the number of
 *	the first numbered record the epoch read from it; read_next, one
 *	past the highest number it read; every number of [first, sent_next)
 *	was handed to rsyslog or is counted in relay_skipped (numbers the
 *	epoch never saw between two it read: overwritten in the relay, or
 *	read by another reader), cap_dropped or refused (numbered records
 *	dropped by the cap, refused by rsyslog); [sent_next, read_next) were
 *	read and not yet handed over.  first <= sent_next <= read_next; final
 *	as C1's.  unsent_skipped: those of relay_skipped at or past
 *	sent_next (skipped between numbers read and not yet handed over), so
 *	that a dead sender's [sent_next, read_next) counts them once, as
 *	skipped; at most relay_skipped (and read_next - sent_next, but
 *	for a sender killed between two stores: the account clamps it).
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
#define FRAME_HDR_MAX	160	/* of a data message's header, at most */
#define HOST_ID_MAX	64
/* C1's interval_us, at most: a year, ship's longest --interval */
#define FRAME_INTERVAL_MAX_US	(86400ULL * 365 * 1000000)
/* a malformed line of PARSE_LINE_MAX bytes, each escaped, and its "!" */
#define FRAME_ITEM_MAX	(1 + 4 * PARSE_LINE_MAX)
/* D3's width_us, at most: a minute (the module's buckets are 100 us to 1 s) */
#define SERIES_WIDTH_MAX_US	60000000ULL

struct frame_hdr {
	char host[HOST_ID_MAX + 1];
	uint64_t epoch;
	uint64_t seq;		/* of the first item */
	int cpu;
	uint64_t load_id;	/* D2's; 0: unknown (D1) */
	uint64_t width_us;	/* D3's: a series run's; 0: records (D1, D2) */
	unsigned int n;
};

enum ctl_field {
	CTL_START_US, CTL_NOW_US, CTL_NEXT_SEQ, CTL_CAP_DROPPED, CTL_REFUSED,
	CTL_BAD, CTL_MODULE_KNOWN, CTL_OVERWRITTEN_START, CTL_OVERWRITTEN,
	CTL_SAMPLED_START, CTL_SAMPLED, CTL_FINAL, CTL_SENT_SEQ,
	CTL_INTERVAL_US, CTL_NFIELDS
};

/* The fields of a C1 of a tcprt before sent_seq and interval_us. */
#define CTL_NFIELDS_V1	CTL_SENT_SEQ

/* final: the epoch's last account, or its successor's (state file) */
#define FINAL_LAST	1
#define FINAL_CLOSED	2

struct frame_ctl {
	char host[HOST_ID_MAX + 1];
	uint64_t epoch, ctl_seq;
	uint64_t v[CTL_NFIELDS];
	/* parsed: the message had sent_seq and interval_us (false: a C1
	 * of before them, which frame_parse_ctl completes as said above) */
	bool sent_known;
};

extern const char *const ctl_field_name[CTL_NFIELDS];

/* L1's fields after host, epoch, ctl_seq, load_id and cpu */
enum cpu_field {
	CPU_FIRST, CPU_READ_NEXT, CPU_SENT_NEXT, CPU_RELAY_SKIPPED,
	CPU_CAP_DROPPED, CPU_REFUSED, CPU_FINAL, CPU_UNSENT_SKIPPED, CPU_NFIELDS
};

struct frame_cpu {
	char host[HOST_ID_MAX + 1];
	uint64_t epoch, ctl_seq, load_id;
	int cpu;
	uint64_t v[CPU_NFIELDS];
};

/* as the store's columns (tcprt.cpu_accounts) name them */
extern const char *const cpu_field_name[CPU_NFIELDS];

/* A valid host id: 1..64 of [A-Za-z0-9._-]. */
bool frame_host_ok(const char *s);

/* One item: @line (@len bytes) with its record @r, or NULL if malformed.
 * Writes at most FRAME_ITEM_MAX bytes to @out (no terminator); returns
 * the length. */
size_t frame_item(char *out, const char *line, size_t len,
		  const struct record *r);

/* One item of a D3: a series line, @valid when it read as one (else
 * escaped as a malformed line).  At most FRAME_ITEM_MAX bytes. */
size_t frame_series_item(char *out, const char *line, size_t len, bool valid);

/* The header of a data message, "D2 ... <n> " (at most FRAME_HDR_MAX
 * bytes); D1 when h->load_id is 0; D3 when h->width_us is not 0. */
size_t frame_data_hdr(char *out, size_t size, const struct frame_hdr *h);

/* A control message, C1 of every field; returns its length (at most 400
 * bytes). */
size_t frame_ctl(char *out, size_t size, const struct frame_ctl *c);

/* A log's account, L1; returns its length (at most 400 bytes). */
size_t frame_cpu(char *out, size_t size, const struct frame_cpu *c);

/*
 * Parsing, for the loader.  frame_kind: 'D' (D1, D2 or D3), 'C', 'L', or 0 for
 * anything else.  frame_parse_data checks the header and cuts the items:
 * @items gets pointers to each and @lens their lengths (at most @max; false
 * if there are more than @max, or not the n the header says).  false with
 * @why set on any defect: a field out of its range, or fields that
 * contradict each other (C1's sent_seq past next_seq; L1's first,
 * sent_next and read_next out of order, or more numbers counted lost than
 * it read; C1's cap_dropped and refused past sent_seq, bad past next_seq).
 */
char frame_kind(const char *msg, size_t len);
bool frame_parse_data(const char *msg, size_t len, struct frame_hdr *h,
		      const char **items, size_t *lens, unsigned int max,
		      char why[PARSE_WHY_MAX]);
bool frame_parse_ctl(const char *msg, size_t len, struct frame_ctl *c,
		     char why[PARSE_WHY_MAX]);
bool frame_parse_cpu(const char *msg, size_t len, struct frame_cpu *c,
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
