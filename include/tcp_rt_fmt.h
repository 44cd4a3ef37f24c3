/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tcp_rt - the text of a log record (docs/records.md), made from its
 * binary form (tcp_rt_bin.h) by tcp_rt_fmt_bin(), and the primitives it
 * is made of.  One source for the module and for tcprt (through
 * tools/tcprt/kcompat.h), so that a line is the same bytes whoever
 * formats it, and the same bytes tcp_rt_log.c writes for the event.
 *
 * The primitives write forward from @p with no bounds check and return
 * the end: the caller has made room for the longest text first
 * (TCP_RT_FMT_MAX for a record), as tcp_rt_log.c reserves its room.
 * tcp_rt_fmt_ext() writes a fixed TCP_RT_FMT_EXT_NAME bytes for its name
 * (a few moves, not a copy of a length looked up), which the value's
 * digits then overwrite in part: within a record's room, never past it.
 */
#ifndef _TCP_RT_FMT_H
#define _TCP_RT_FMT_H

#ifdef __KERNEL__
#include <linux/bitops.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/string.h>
#include <linux/time64.h>
#include <linux/types.h>
#include <asm/byteorder.h>
#endif

#include "tcp_rt_bin.h"

#define TCP_RT_FMT_U64_LEN	20	/* digits of U64_MAX */
#define TCP_RT_FMT_U32_LEN	10	/* digits of U32_MAX */

/*
 * The longest line, its newline included: an IPv6 endpoint whose address
 * ends in IPv4 form (%pI6c does that for v4-mapped and ISATAP addresses),
 * every field at 20 digits, and every extension field at its widest.
 * docs/records.md gives it to readers: 351 bytes without log_ext's
 * fields, 547 with all of them.  A bound, as tcp_rt_log.c's: a dotted
 * tail follows at most "ffff:ffff:ffff:ffff:200:5efe:", a digit short of
 * six full groups, so a line reaches 2 bytes less (tests/test_fmt.c of
 * tools/tcprt).
 */
#define TCP_RT_FMT_EP_LONGEST	"[ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255]:65535"
#define TCP_RT_FMT_EP_LEN	(sizeof(TCP_RT_FMT_EP_LONGEST) - 1)
#define TCP_RT_FMT_BASE_MAX	(sizeof("V6 R ") - 1 + TCP_RT_FMT_U64_LEN +	\
				 sizeof(" 000000") - 1 +		\
				 2 * (1 + TCP_RT_FMT_EP_LEN) +		\
				 TCP_RT_BIN_FIELDS_MAX *		\
				 (1 + TCP_RT_FMT_U64_LEN) + 1)
#define TCP_RT_FMT_EXT_MAX	(sizeof(" netns= cgroup=") - 1 +	\
				 TCP_RT_FMT_U32_LEN + TCP_RT_FMT_U64_LEN + \
				 sizeof(" rq_wait= app= sq_wait=") - 1 +	\
				 sizeof(" rwnd_limited= sndbuf_limited= app_limited=") - 1 + \
				 TCP_RT_BIN_BD_N * TCP_RT_FMT_U32_LEN +	\
				 sizeof(" seq=") - 1 + TCP_RT_FMT_U64_LEN)
#define TCP_RT_FMT_MAX		(TCP_RT_FMT_BASE_MAX + TCP_RT_FMT_EXT_MAX)
static_assert(TCP_RT_FMT_BASE_MAX == 351);
static_assert(TCP_RT_FMT_MAX == 547);

/*
 * log_ext's fields, in the order a line carries them: enum tcp_rt_ext's
 * (tcp_rt.h), whose names tcp_rt_params.c gives.
 */
enum tcp_rt_fmt_ext {
	TCP_RT_FMT_EXT_NETNS,
	TCP_RT_FMT_EXT_CGROUP,
	TCP_RT_FMT_EXT_BD,	/* the breakdown's TCP_RT_BIN_BD_N, in order */
	TCP_RT_FMT_EXT_SEQ = TCP_RT_FMT_EXT_BD + TCP_RT_BIN_BD_N,
	TCP_RT_FMT_EXTS,
};

/* "00" to "99": two digits a division, with no NUL */
#define TCP_RT_FMT_PAIRS "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

static __always_inline void tcp_rt_fmt_pair(char *p, unsigned int v)
{
	static const char pairs[200] __nonstring = TCP_RT_FMT_PAIRS;

	memcpy(p, &pairs[v * 2], 2);
}

/*
 * Decimal digits of @v: log10 from log2 (1233 / 4096 ~ log10(2)), one
 * more where @v reaches the power of ten found.  @v | 1 has the digits of
 * @v and is never 0.
 */
static __always_inline unsigned int tcp_rt_fmt_dec_len(u64 v)
{
	static const u64 pow10[TCP_RT_FMT_U64_LEN] = {
		1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL,
		1000000ULL, 10000000ULL, 100000000ULL, 1000000000ULL,
		10000000000ULL, 100000000000ULL, 1000000000000ULL,
		10000000000000ULL, 100000000000000ULL,
		1000000000000000ULL, 10000000000000000ULL,
		100000000000000000ULL, 1000000000000000000ULL,
		10000000000000000000ULL,
	};
	unsigned int t = (fls64(v | 1) * 1233) >> 12;

	return t + ((v | 1) >= pow10[t]);
}

/* @v in decimal, without leading zeros: from the end, two digits a step */
static inline char *tcp_rt_fmt_u64(char *p, u64 v)
{
	char *end;
	u32 rem;

	/* most fields, and an IPv4 address's bytes, are short */
	if (v < 10) {
		*p = '0' + v;
		return p + 1;
	}
	if (v < 100) {
		tcp_rt_fmt_pair(p, v);
		return p + 2;
	}
	end = p + tcp_rt_fmt_dec_len(v);
	p = end;
	while (v >= 100) {
		v = div_u64_rem(v, 100, &rem);
		p -= 2;
		tcp_rt_fmt_pair(p, rem);
	}
	if (v >= 10)
		tcp_rt_fmt_pair(p - 2, v);
	else
		p[-1] = '0' + v;
	return end;
}

/* @usec < 10^6, as six digits */
static __always_inline char *tcp_rt_fmt_usec(char *p, u32 usec)
{
	tcp_rt_fmt_pair(p + 4, usec % 100);
	usec /= 100;
	tcp_rt_fmt_pair(p + 2, usec % 100);
	tcp_rt_fmt_pair(p, usec / 100);
	return p + 6;
}

/*
 * "<sec> <usec>" of a CLOCK_REALTIME time in ns, as tcp_rt_log.c prints
 * the timespec64 of it: the seconds floored (ns_to_timespec64()), and
 * printed as u64 as the module prints its time64_t.
 */
static inline char *tcp_rt_fmt_time(char *p, s64 ns)
{
	u64 sec;
	u32 rem;

	if (ns >= 0) {
		sec = div_u64_rem(ns, NSEC_PER_SEC, &rem);
	} else {
		/* -(ns + 1) never overflows; the second before, then up */
		sec = -div_u64_rem(-(ns + 1), NSEC_PER_SEC, &rem) - 1;
		rem = NSEC_PER_SEC - 1 - rem;
	}
	p = tcp_rt_fmt_u64(p, sec);
	*p++ = ' ';
	return tcp_rt_fmt_usec(p, rem / NSEC_PER_USEC);
}

/* @b, 4 bytes in network order, dotted */
static inline char *tcp_rt_fmt_ipv4(char *p, const u8 *b)
{
	unsigned int i;

	for (i = 0; i < 4; i++) {
		if (i)
			*p++ = '.';
		p = tcp_rt_fmt_u64(p, b[i]);
	}
	return p;
}

#ifdef __KERNEL__
/*
 * "[addr]", @a 16 bytes: the compressed form is the kernel's own %pI6c,
 * in the module.  sprintf()'s NUL lands where the port's ':' goes next.
 * tcprt has its own code for the same rules (tools/tcprt/kcompat.h).
 */
static inline char *tcp_rt_fmt_ipv6(char *p, const u8 *a)
{
	return p + sprintf(p, "[%pI6c]", a);
}
#endif

/* The peer's (@peer) or the local "addr:port" of @rec */
static inline char *tcp_rt_fmt_endpoint(char *p, const struct tcp_rt_bin *rec,
					bool peer)
{
	const void *addr = rec->data;

	if (rec->flags & TCP_RT_BIN_V6) {
		const struct tcp_rt_bin_ip6 *a = addr;

		p = tcp_rt_fmt_ipv6(p, peer ? a->daddr : a->saddr);
	} else {
		const struct tcp_rt_bin_ip4 *a = addr;

		p = tcp_rt_fmt_ipv4(p, (const u8 *)(peer ? &a->daddr :
							  &a->saddr));
	}
	*p++ = ':';
	return tcp_rt_fmt_u64(p, be16_to_cpu(peer ? rec->dport : rec->sport));
}

/*
 * " name=value" of log_ext's field @field.  The name is copied whole, all
 * TCP_RT_FMT_EXT_NAME bytes of it (two moves), and the digits start at
 * its length: the bytes past them are the next field's or the record's
 * room (each field's own room is at least TCP_RT_FMT_EXT_NAME bytes but
 * " app="'s, which is never the last field of a record).
 */
#define TCP_RT_FMT_EXT_NAME	16	/* " sndbuf_limited=", the longest */
static __always_inline char *tcp_rt_fmt_ext(char *p, enum tcp_rt_fmt_ext field,
					    u64 v)
{
#define TCP_RT_FMT_NAME(s)	{ s, sizeof(s) - 1 }
	static const struct {
		char s[TCP_RT_FMT_EXT_NAME] __nonstring;
		u8 len;
	} name[TCP_RT_FMT_EXTS] = {
		TCP_RT_FMT_NAME(" netns="),
		TCP_RT_FMT_NAME(" cgroup="),
		TCP_RT_FMT_NAME(" rq_wait="),
		TCP_RT_FMT_NAME(" app="),
		TCP_RT_FMT_NAME(" sq_wait="),
		TCP_RT_FMT_NAME(" rwnd_limited="),
		TCP_RT_FMT_NAME(" sndbuf_limited="),
		TCP_RT_FMT_NAME(" app_limited="),
		TCP_RT_FMT_NAME(" seq="),
	};
#undef TCP_RT_FMT_NAME

	memcpy(p, name[field].s, TCP_RT_FMT_EXT_NAME);
	return tcp_rt_fmt_u64(p + name[field].len, v);
}

/*
 * "V6 <type> <sec> <usec> " of a record of @type (enum tcp_rt_bin_type)
 * made at CLOCK_REALTIME @real_ns.
 */
static __always_inline char *tcp_rt_fmt_head(char *p, unsigned int type,
					     s64 real_ns)
{
	static const char letter[TCP_RT_BIN_TYPES] = {
		[TCP_RT_BIN_R] = 'R',
		[TCP_RT_BIN_W] = 'W',
		[TCP_RT_BIN_N] = 'N',
		[TCP_RT_BIN_P] = 'P',
		[TCP_RT_BIN_E] = 'E',
	};

	*p++ = 'V';
	*p++ = '6';
	*p++ = ' ';
	*p++ = letter[type];
	*p++ = ' ';
	p = tcp_rt_fmt_time(p, real_ns);
	*p++ = ' ';
	return p;
}

/*
 * The text line of @rec, its newline included, at @buf, which has room
 * for TCP_RT_FMT_MAX bytes (the bytes past the line within that room are
 * left undefined: a name's whole copy, sprintf()'s NUL); returns its
 * length.  @rec must have passed tcp_rt_bin_check().
 */
static inline unsigned int tcp_rt_fmt_bin(char *buf,
					  const struct tcp_rt_bin *rec)
{
	const u64 *f = tcp_rt_bin_fields(rec);
	const u64 *t = f + rec->nfields;
	char *p = buf;
	unsigned int i;

	p = tcp_rt_fmt_head(p, rec->type, rec->real_ns);
	p = tcp_rt_fmt_endpoint(p, rec, true);
	*p++ = ' ';
	p = tcp_rt_fmt_endpoint(p, rec, false);
	for (i = 0; i < rec->nfields; i++) {
		*p++ = ' ';
		p = tcp_rt_fmt_u64(p, f[i]);
	}
	if (rec->flags & TCP_RT_BIN_NETNS) {
		const struct tcp_rt_bin_netns *ns = (const void *)t;

		p = tcp_rt_fmt_ext(p, TCP_RT_FMT_EXT_NETNS, ns->netns);
		t += sizeof(*ns) / sizeof(u64);
	}
	if (rec->flags & TCP_RT_BIN_CGROUP)
		p = tcp_rt_fmt_ext(p, TCP_RT_FMT_EXT_CGROUP, *t++);
	if (rec->flags & TCP_RT_BIN_BD) {
		const struct tcp_rt_bin_bd *bd = (const void *)t;

		for (i = 0; i < TCP_RT_BIN_BD_N; i++)
			if (rec->bd_mask & BIT(i))
				p = tcp_rt_fmt_ext(p, TCP_RT_FMT_EXT_BD + i,
						   bd->v[i]);
		t += sizeof(*bd) / sizeof(u64);
	}
	if (rec->flags & TCP_RT_BIN_NUMBERED)
		p = tcp_rt_fmt_ext(p, TCP_RT_FMT_EXT_SEQ, *t);
	*p++ = '\n';
	return p - buf;
}

#endif /* _TCP_RT_FMT_H */
