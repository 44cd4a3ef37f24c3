/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the module's shared headers (../../include/tcp_rt_bin.h and
 * tcp_rt_fmt.h) take from the kernel, for user space: its fixed-size
 * types, the few helpers they call, and the compressed IPv6 text of the
 * kernel's %pI6c, so that tcprt formats a binary record with the
 * module's own code.  Include this, then those headers.
 */
#ifndef TCPRT_KCOMPAT_H
#define TCPRT_KCOMPAT_H

#include <arpa/inet.h>
#include <assert.h>
#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s64 s64;

#define BIT(n)		(1UL << (n))
#define NSEC_PER_SEC	1000000000L
#define NSEC_PER_USEC	1000L

#ifndef __always_inline
#define __always_inline	inline __attribute__((__always_inline__))
#endif
/* a char array that holds no NUL on purpose */
#if defined(__has_attribute)
#if __has_attribute(__nonstring__)
#define __nonstring	__attribute__((__nonstring__))
#endif
#endif
#ifndef __nonstring
#define __nonstring
#endif

#define be16_to_cpu(x)	ntohs(x)

/* The last (most significant) bit set, from 1; 0 for 0. */
static inline unsigned int fls64(u64 x)
{
	return x ? 64 - (unsigned int)__builtin_clzll(x) : 0;
}

static inline u64 div_u64_rem(u64 dividend, u32 divisor, u32 *remainder)
{
	*remainder = (u32)(dividend % divisor);
	return dividend / divisor;
}

/*
 * "[addr]" of the 16 bytes at @a, as the kernel's %pI6c writes it:
 *   - the 16-bit groups in lowercase hex, without leading zeros, ':'
 *     between them;
 *   - the first of the longest runs of two or more zero groups written
 *     "::" (a lone zero group stays "0");
 *   - a v4-mapped address (::ffff:0:0/96) and an ISATAP one (any prefix,
 *     then 0000:5efe or 0200:5efe) end with their last 32 bits as a
 *     dotted IPv4 address, and only their first six groups are looked
 *     at for the run;
 *   - nothing else is dotted: ::1.2.3.4 (v4-compatible) is "::102:304",
 *     where glibc's inet_ntop() writes "::1.2.3.4".
 * Written from those rules; tests/test_fmt.c holds it to a second,
 * separately written version and to fixed cases.
 */
static inline char *tcp_rt_fmt_ipv6(char *p, const u8 *a)
{
	static const char hex[] = "0123456789abcdef";
	unsigned int g[8], ngroups = 8, i, run = 0, best = 1, at = 8;
	bool dotted, sep = false;

	for (i = 0; i < 8; i++)
		g[i] = (unsigned int)a[2 * i] << 8 | a[2 * i + 1];
	dotted = (!g[0] && !g[1] && !g[2] && !g[3] && !g[4] &&
		  g[5] == 0xffff) ||
		 ((g[4] == 0 || g[4] == 0x200) && g[5] == 0x5efe);
	if (dotted)
		ngroups = 6;
	/* the first longest run of zero groups, if longer than one */
	for (i = 0; i < ngroups; i++) {
		run = g[i] ? 0 : run + 1;
		if (run > best) {
			best = run;
			at = i + 1 - run;
		}
	}
	*p++ = '[';
	for (i = 0; i < ngroups; i++) {
		if (i == at) {
			*p++ = ':';
			*p++ = ':';
			i += best - 1;
			sep = false;
			continue;
		}
		if (sep)
			*p++ = ':';
		if (g[i] >> 12)
			*p++ = hex[g[i] >> 12];
		if (g[i] >> 8)
			*p++ = hex[g[i] >> 8 & 15];
		if (g[i] >> 4)
			*p++ = hex[g[i] >> 4 & 15];
		*p++ = hex[g[i] & 15];
		sep = true;
	}
	if (dotted) {
		if (sep)
			*p++ = ':';
		for (i = 12; i < 16; i++) {
			if (i > 12)
				*p++ = '.';
			if (a[i] >= 100)
				*p++ = '0' + a[i] / 100;
			if (a[i] >= 10)
				*p++ = '0' + a[i] / 10 % 10;
			*p++ = '0' + a[i] % 10;
		}
	}
	*p++ = ']';
	return p;
}

#endif
