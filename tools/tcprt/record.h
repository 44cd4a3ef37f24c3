/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One tcp_rt record (a task record of rt-network-log<cpu> or a line of
 * rt-network-stats), its field names as docs/records.md gives them, and the
 * derived quantities tcprt reports (download time, role, service port).
 */
#ifndef TCPRT_RECORD_H
#define TCPRT_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum rec_type { REC_R, REC_W, REC_N, REC_P, REC_E, REC_STATS, REC_NTYPES };

/* server: a connection accepted on a local port; client: opened to a peer port */
enum role { ROLE_SERVER, ROLE_CLIENT };

/*
 * Who wrote a line: tcp_rt, or the vendor's TCP-RT (Alibaba Cloud Linux),
 * told apart by the line's form (see parse.h); unknown for stats lines,
 * which both write alike.
 */
enum source { SRC_UNKNOWN, SRC_TCP_RT, SRC_VENDOR };

/* The times tcprt aggregates; see rec_metric() for their definitions. */
enum metric { M_DURATION, M_PROCESS, M_UPLOAD, M_DOWNLOAD, M_MIN_RTT, M_NMETRICS };

#define REC_ADDR_MAX	48	/* an IPv6 address in text, without brackets */
#define REC_FIELDS_MAX	10

/*
 * The extension fields tcprt knows (tcp_rt's log_ext parameter,
 * docs/records.md): " name=value" after a record's documented fields.
 * Their values are kept in record.ext; a name=value of any other name is
 * accepted and ignored (a field of a later tcp_rt).  Adding one here is
 * adding its name to rec_ext_name (record.c).
 */
enum rec_ext { EXT_NETNS, EXT_CGROUP, REC_EXT_N };

struct record {
	enum rec_type type;
	enum role role;
	/*
	 * task start; E: connection start (tcp_rt) or last task's start
	 * (vendor); stats: the line's time
	 */
	uint64_t sec, usec;
	uint16_t port;		/* the service port: local for server, peer for client */
	uint16_t peer_port, local_port;
	int cpu;		/* from the file name; -1 for stats lines */
	enum source source;
	char peer_addr[REC_ADDR_MAX], local_addr[REC_ADDR_MAX];
	unsigned int nfields;	/* fields after the header on the line */
	unsigned int present;	/* bit i: f[i] was on the line */
	uint64_t f[REC_FIELDS_MAX];	/* the type's fields, rec_desc order */
	unsigned int ext_present;	/* bit i: ext[i] was on the line */
	uint64_t ext[REC_EXT_N];	/* extension fields, enum rec_ext order */
};

/* Where records go: the next stage of a pipeline. */
typedef void (*record_fn)(const struct record *r, void *ctx);

/*
 * A type's fields, in the order tcp_rt writes them.  A line of another
 * layout (the vendor's W and older P, see parse.c) fills those it has, by
 * name: W's out_of_order is only on the vendor's lines; the vendor's older
 * P lack service_time, response_time and recv_bytes, the oldest also
 * duration and out_of_order.
 */
struct rec_desc {
	char letter;		/* R W N P E; 0 for stats */
	const char *name;	/* "R" ... "E", "stats" */
	unsigned int nfields;
	const char *const *fields;
};

extern const struct rec_desc rec_desc[REC_NTYPES];
extern const char *const metric_name[M_NMETRICS];
/* "netns", "cgroup": the names on the line, enum rec_ext order */
extern const char *const rec_ext_name[REC_EXT_N];

static inline const char *role_name(enum role r)
{
	return r == ROLE_CLIENT ? "client" : "server";
}

/* "tcp_rt", "vendor", or NULL when unknown. */
static inline const char *source_name(enum source s)
{
	return s == SRC_TCP_RT ? "tcp_rt" : s == SRC_VENDOR ? "vendor" : NULL;
}

/* True when field @i (rec_desc order) was on the record's line. */
static inline bool rec_has(const struct record *r, unsigned int i)
{
	return i < REC_FIELDS_MAX && (r->present >> i & 1);
}

/* True when extension field @e was on the record's line. */
static inline bool rec_has_ext(const struct record *r, enum rec_ext e)
{
	return r->ext_present >> e & 1;
}

/* The extension field named @name (@len bytes), or -1 when tcprt has none. */
int rec_ext_of(const char *name, size_t len);

/* The record type of a letter (R W N P E), or -1. */
int rec_type_of(char letter);

/* Start time in microseconds since the epoch: the merge order. */
static inline uint64_t rec_time_us(const struct record *r)
{
	return r->sec * 1000000ULL + r->usec;
}

/* True for the types that are tasks: R W N P. */
static inline bool rec_is_task(enum rec_type t)
{
	return t <= REC_P;
}

/*
 * A time of the record, in microseconds, when the type has it:
 *   duration  R W N P
 *   process   R W: process_time;  P: service_time
 *   upload    R W: upload_time;   P: duration - service - response (S1 - S0)
 *   download  R W: duration - upload - process;  P: response_time
 *   min_rtt   R W P E
 * Differences are clamped at 0.  False also when a field it needs was not
 * on the record's line.
 */
bool rec_metric(const struct record *r, enum metric m, uint64_t *v);

/* Bytes and retransmissions of a record (0 where its line has none). */
uint64_t rec_sent_bytes(const struct record *r);
uint64_t rec_recv_bytes(const struct record *r);
uint64_t rec_retrans(const struct record *r);

#endif
