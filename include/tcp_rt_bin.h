/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tcp_rt - a log record in binary, layout version 1: what a writer stores
 * when the event happens, turned into the text line of docs/records.md
 * when it is read (tcp_rt_fmt.h).  The module and tcprt share this file
 * (tcprt through tools/tcprt/kcompat.h), so it uses only the fixed-size
 * kernel types.  Version 1 is frozen once the binary form is the default:
 * a change after that is a new version.
 *
 * A record is a struct tcp_rt_bin, then blocks of whole u64s, in the
 * order their text comes in the line:
 *
 *   addresses  struct tcp_rt_bin_ip6 with TCP_RT_BIN_V6, else
 *              struct tcp_rt_bin_ip4
 *   fields     u64 f[nfields], the type's documented fields in order
 *   netns      struct tcp_rt_bin_netns, with TCP_RT_BIN_NETNS
 *   cgroup     u64, with TCP_RT_BIN_CGROUP
 *   breakdown  struct tcp_rt_bin_bd, with TCP_RT_BIN_BD
 *   seq        u64, with TCP_RT_BIN_NUMBERED
 *
 * and len is the sum: records follow each other 8-byte aligned.  Numbers
 * are in the writer's byte order; addresses and ports in network order,
 * as the socket holds them.  Every byte is written, pad fields as 0 (and
 * the breakdown's values outside bd_mask as 0): a record carries nothing
 * of the memory it was written over to whoever reads it.
 */
#ifndef _TCP_RT_BIN_H
#define _TCP_RT_BIN_H

#ifdef __KERNEL__
#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/stddef.h>
#include <linux/types.h>
#endif

#define TCP_RT_BIN_VER		1

/* Record types: the order of enum tcp_rt_rec (tcp_rt.h). */
enum tcp_rt_bin_type {
	TCP_RT_BIN_R,
	TCP_RT_BIN_W,
	TCP_RT_BIN_N,
	TCP_RT_BIN_P,
	TCP_RT_BIN_E,
	TCP_RT_BIN_TYPES,
};

/* What a record holds besides the fields: tcp_rt_bin.flags */
#define TCP_RT_BIN_V6		BIT(0)	/* IPv6 addresses, in brackets */
#define TCP_RT_BIN_NUMBERED	BIT(1)	/* log_ext's seq */
#define TCP_RT_BIN_NETNS	BIT(2)	/* log_ext's netns */
#define TCP_RT_BIN_CGROUP	BIT(3)	/* log_ext's cgroup */
#define TCP_RT_BIN_BD		BIT(4)	/* the time breakdown's block */
#define TCP_RT_BIN_FLAGS	(TCP_RT_BIN_V6 | TCP_RT_BIN_NUMBERED |	\
				 TCP_RT_BIN_NETNS | TCP_RT_BIN_CGROUP |	\
				 TCP_RT_BIN_BD)

/* At most as many fields as a record line has (TCP_RT_REC_FIELDS_MAX). */
#define TCP_RT_BIN_FIELDS_MAX	10
/*
 * The breakdown's values, in the order of their names in a line:
 * rq_wait, app, sq_wait, rwnd_limited, sndbuf_limited, app_limited.
 */
#define TCP_RT_BIN_BD_N		6
#define TCP_RT_BIN_BD_MASK	(BIT(TCP_RT_BIN_BD_N) - 1)

struct tcp_rt_bin {
	u8	ver;		/* TCP_RT_BIN_VER */
	u8	type;		/* enum tcp_rt_bin_type */
	u8	flags;		/* TCP_RT_BIN_* */
	u8	nfields;	/* u64s in the fields block */
	u16	len;		/* bytes of the whole record, a multiple of 8 */
	/*
	 * With TCP_RT_BIN_BD: bit i, the line carries bd[i]; a mask of 0
	 * prints none (a task whose breakdown has no field listed).
	 */
	u16	bd_mask;
	/*
	 * Every record's number in its CPU's log, numbered or not: gaps
	 * count the records lost.  Never in the text (seq is the text's).
	 */
	u64	idx;
	/* the line's time: CLOCK_REALTIME, taken when the record is made */
	s64	real_ns;
	__be16	dport;		/* the peer's port */
	__be16	sport;		/* the local port */
	u32	pad;		/* 0: aligns the addresses */
	u64	data[];		/* the blocks */
};

/* The peer's address, then the local one, as in the line. */
struct tcp_rt_bin_ip4 {
	__be32	daddr;
	__be32	saddr;
};

struct tcp_rt_bin_ip6 {
	u8	daddr[16];
	u8	saddr[16];
};

struct tcp_rt_bin_netns {
	u32	netns;
	u32	pad;		/* 0 */
};

struct tcp_rt_bin_bd {
	u32	v[TCP_RT_BIN_BD_N];	/* microseconds */
};

/* The offsets are the format: a change here is a new version. */
static_assert(offsetof(struct tcp_rt_bin, ver) == 0);
static_assert(offsetof(struct tcp_rt_bin, type) == 1);
static_assert(offsetof(struct tcp_rt_bin, flags) == 2);
static_assert(offsetof(struct tcp_rt_bin, nfields) == 3);
static_assert(offsetof(struct tcp_rt_bin, len) == 4);
static_assert(offsetof(struct tcp_rt_bin, bd_mask) == 6);
static_assert(offsetof(struct tcp_rt_bin, idx) == 8);
static_assert(offsetof(struct tcp_rt_bin, real_ns) == 16);
static_assert(offsetof(struct tcp_rt_bin, dport) == 24);
static_assert(offsetof(struct tcp_rt_bin, sport) == 26);
static_assert(offsetof(struct tcp_rt_bin, pad) == 28);
static_assert(offsetof(struct tcp_rt_bin, data) == 32);
static_assert(sizeof(struct tcp_rt_bin) == 32);
static_assert(offsetof(struct tcp_rt_bin_ip4, daddr) == 0);
static_assert(offsetof(struct tcp_rt_bin_ip4, saddr) == 4);
static_assert(sizeof(struct tcp_rt_bin_ip4) == 8);
static_assert(offsetof(struct tcp_rt_bin_ip6, daddr) == 0);
static_assert(offsetof(struct tcp_rt_bin_ip6, saddr) == 16);
static_assert(sizeof(struct tcp_rt_bin_ip6) == 32);
static_assert(offsetof(struct tcp_rt_bin_netns, netns) == 0);
static_assert(offsetof(struct tcp_rt_bin_netns, pad) == 4);
static_assert(sizeof(struct tcp_rt_bin_netns) == 8);
static_assert(sizeof(struct tcp_rt_bin_bd) == 24);

/* The longest record: IPv6, every field and every block. */
#define TCP_RT_BIN_LEN_MAX	(sizeof(struct tcp_rt_bin) +		\
				 sizeof(struct tcp_rt_bin_ip6) +	\
				 TCP_RT_BIN_FIELDS_MAX * sizeof(u64) +	\
				 sizeof(struct tcp_rt_bin_netns) +	\
				 sizeof(u64) +				\
				 sizeof(struct tcp_rt_bin_bd) +		\
				 sizeof(u64))
static_assert(TCP_RT_BIN_LEN_MAX == 192);

/* The length of a record of @flags with @nfields fields. */
static inline unsigned int tcp_rt_bin_size(unsigned int flags,
					   unsigned int nfields)
{
	return sizeof(struct tcp_rt_bin) +
	       (flags & TCP_RT_BIN_V6 ? sizeof(struct tcp_rt_bin_ip6) :
					sizeof(struct tcp_rt_bin_ip4)) +
	       nfields * sizeof(u64) +
	       (flags & TCP_RT_BIN_NETNS ? sizeof(struct tcp_rt_bin_netns) : 0) +
	       (flags & TCP_RT_BIN_CGROUP ? sizeof(u64) : 0) +
	       (flags & TCP_RT_BIN_BD ? sizeof(struct tcp_rt_bin_bd) : 0) +
	       (flags & TCP_RT_BIN_NUMBERED ? sizeof(u64) : 0);
}

/* The fields block of @rec. */
static inline const u64 *tcp_rt_bin_fields(const struct tcp_rt_bin *rec)
{
	return rec->data + (rec->flags & TCP_RT_BIN_V6 ?
			    sizeof(struct tcp_rt_bin_ip6) / sizeof(u64) :
			    sizeof(struct tcp_rt_bin_ip4) / sizeof(u64));
}

/*
 * The length of the record at @rec, of which @avail bytes are at hand,
 * or 0 if they do not hold a whole record of version 1 that the
 * formatter can print: a reader checks each record before it formats
 * it (tcp_rt_fmt_bin()) or steps over it.
 */
static inline unsigned int tcp_rt_bin_check(const struct tcp_rt_bin *rec,
					    size_t avail)
{
	if (avail < sizeof(*rec) || rec->ver != TCP_RT_BIN_VER ||
	    rec->type >= TCP_RT_BIN_TYPES || rec->flags & ~TCP_RT_BIN_FLAGS ||
	    rec->nfields > TCP_RT_BIN_FIELDS_MAX ||
	    rec->bd_mask & ~TCP_RT_BIN_BD_MASK ||
	    (rec->bd_mask && !(rec->flags & TCP_RT_BIN_BD)) ||
	    rec->len != tcp_rt_bin_size(rec->flags, rec->nfields) ||
	    rec->len > avail)
		return 0;
	return rec->len;
}

#endif /* _TCP_RT_BIN_H */
