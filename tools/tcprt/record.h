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
 * docs/records.md): " name=value" after a record's documented fields, in
 * this order (the table's).  Their values are kept in record.ext; a
 * name=value of any other name is accepted and ignored (a field of a later
 * tcp_rt).  Adding one here is adding its name to rec_ext_name and the
 * types that carry it to rec_ext_types (record.c).
 *
 * From EXT_RQ_WAIT on, the time breakdown ("where the time goes"), in
 * microseconds: rq_wait + app + sq_wait split a server task's process
 * time; rwnd_limited, sndbuf_limited and app_limited are what held the
 * sender during the transfer (R W: the download, P: the upload), the rest
 * of it being sending.
 *
 * seq: the record's number in its CPU's log, consecutive from 0 per CPU
 * since the module's load (status says which load: load_id), on every
 * type; tcprt ship and the fleet's accounts follow it.
 */
enum rec_ext {
	EXT_NETNS, EXT_CGROUP,
	EXT_RQ_WAIT, EXT_APP, EXT_SQ_WAIT,
	EXT_RWND_LIMITED, EXT_SNDBUF_LIMITED, EXT_APP_LIMITED,
	EXT_SEQ,
	REC_EXT_N
};
#define EXT_BREAKDOWN	EXT_RQ_WAIT	/* the first field of the breakdown */
#define EXT_BD_END	EXT_SEQ		/* one past its last */
/* ext_present's bits of the breakdown */
#define EXT_BD_MASK	(((1u << EXT_BD_END) - 1) & ~((1u << EXT_BREAKDOWN) - 1))

/* The parts rec_process_parts() and rec_transfer_parts() give. */
enum { PART_RQ_WAIT, PART_APP, PART_SQ_WAIT, NPROCESS_PARTS };
enum { PART_RWND, PART_SNDBUF, PART_APP_LIMITED, PART_SENDING, NTRANSFER_PARTS };

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
/* "netns", "cgroup", "rq_wait", ...: the names on the line, enum rec_ext order */
extern const char *const rec_ext_name[REC_EXT_N];
/* The types that may carry each (a mask of 1 << REC_x). */
extern const unsigned int rec_ext_types[REC_EXT_N];
/* "rq_wait", "app", "sq_wait"; "rwnd_limited", ..., "sending" */
extern const char *const process_part_name[NPROCESS_PARTS];
extern const char *const transfer_part_name[NTRANSFER_PARTS];

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

/* True when the line had netns or cgroup: the fields that name a container. */
static inline bool rec_has_ct(const struct record *r)
{
	return rec_has_ext(r, EXT_NETNS) || rec_has_ext(r, EXT_CGROUP);
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

/*
 * A record's time breakdown, when its line has every field of it:
 *   rec_process_parts   R W: rq_wait, app, sq_wait, whose sum is the
 *                       process time (docs/records.md's invariant), in
 *                       *@total
 *   rec_transfer_parts  R W: the download, P: the upload, split into
 *                       rwnd_limited, sndbuf_limited, app_limited and
 *                       sending (the rest); *@total gets the transfer time
 * SPLIT_BAD when the fields break the contract (the parts do not add up to
 * the process time; the limited parts exceed the transfer): the record's
 * parts are then not to be trusted.
 */
enum split_state { SPLIT_NONE, SPLIT_OK, SPLIT_BAD };
enum split_state rec_process_parts(const struct record *r, uint64_t *total,
				   uint64_t part[NPROCESS_PARTS]);
enum split_state rec_transfer_parts(const struct record *r, uint64_t *total,
				    uint64_t part[NTRANSFER_PARTS]);

/* Bytes, retransmissions and MSS of a record (0 where its line has none). */
uint64_t rec_sent_bytes(const struct record *r);
uint64_t rec_recv_bytes(const struct record *r);
uint64_t rec_retrans(const struct record *r);
uint64_t rec_mss(const struct record *r);

#endif
