// SPDX-License-Identifier: GPL-2.0
/*
 * The binary record (include/tcp_rt_bin.h) and its text
 * (include/tcp_rt_fmt.h's tcp_rt_fmt_bin(), the module's own code built
 * through kcompat.h), held to references written here without it:
 *
 *   - records are built byte by byte at the offsets the layout documents,
 *     not through the struct;
 *   - their text is made again with snprintf(), and IPv6 addresses by a
 *     second formatter of %pI6c's rules, itself held to fixed cases and,
 *     where the two agree, to glibc's inet_ntop();
 *   - the lines of docs/records.md, and random ones, go through tcprt's
 *     parser into a binary record and back, byte for byte;
 *   - every type, every log_ext field alone and together, the numbers'
 *     edges, and 1,000,000 random records; none longer than the bound
 *     the module reserves and docs/records.md gives readers.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcompat.h"
#include "../../include/tcp_rt_fmt.h"
#include "parse.h"
#include "tap.h"

/*
 * The room a record reserves in the module's log, the longest it can
 * take: tcp_rt_log.c's TCP_RT_REC_LEN + TCP_RT_REC_LEN_SEQ (549 + 44),
 * which a static_assert there holds TCP_RT_FMT_MAX to.
 */
#define MODULE_ROOM	593
/* docs/records.md: "at most 351 bytes, 547 with all of log_ext's fields" */
#define DOC_MAX_BASE	351
#define DOC_MAX		547

/* One event, as the writer sees it. */
struct ev {
	unsigned int type;
	bool v6;
	uint8_t peer[16], local[16];	/* IPv4: the first 4 bytes */
	uint16_t dport, sport;		/* host order */
	int64_t real_ns;
	uint64_t idx;
	unsigned int n;
	uint64_t f[10];
	bool has_netns, has_cgroup, has_bd, numbered;
	uint32_t netns;
	uint64_t cgroup;
	unsigned int bd_mask;
	uint32_t bd[6];
	uint64_t seq;
};

static const char type_letter[] = "RWNPE";
static const unsigned int type_fields[] = { 10, 9, 5, 10, 6 };
static const char *const bd_name[6] = {
	"rq_wait", "app", "sq_wait", "rwnd_limited", "sndbuf_limited",
	"app_limited",
};

/* ---- the binary record, from the layout's documented offsets ---- */

static void put(uint8_t *b, size_t at, const void *v, size_t len)
{
	memcpy(b + at, v, len);
}

/* Every byte written, pads 0; returns the length. */
static size_t build(const struct ev *e, uint8_t *b)
{
	uint8_t flags = (e->v6 ? 1 : 0) | (e->numbered ? 2 : 0) |
			(e->has_netns ? 4 : 0) | (e->has_cgroup ? 8 : 0) |
			(e->has_bd ? 16 : 0);
	uint16_t u16v, len, mask = (uint16_t)e->bd_mask;
	uint32_t zero = 0;
	uint8_t hdr[4] = { 1, (uint8_t)e->type, flags, (uint8_t)e->n };
	size_t at;
	unsigned int i;

	put(b, 0, hdr, 4);
	put(b, 6, &mask, 2);
	put(b, 8, &e->idx, 8);
	put(b, 16, &e->real_ns, 8);
	u16v = htons(e->dport);
	put(b, 24, &u16v, 2);
	u16v = htons(e->sport);
	put(b, 26, &u16v, 2);
	put(b, 28, &zero, 4);
	if (e->v6) {
		put(b, 32, e->peer, 16);
		put(b, 48, e->local, 16);
		at = 64;
	} else {
		put(b, 32, e->peer, 4);
		put(b, 36, e->local, 4);
		at = 40;
	}
	for (i = 0; i < e->n; i++, at += 8)
		put(b, at, &e->f[i], 8);
	if (e->has_netns) {
		put(b, at, &e->netns, 4);
		put(b, at + 4, &zero, 4);
		at += 8;
	}
	if (e->has_cgroup) {
		put(b, at, &e->cgroup, 8);
		at += 8;
	}
	if (e->has_bd) {
		for (i = 0; i < 6; i++, at += 4)
			put(b, at, (e->bd_mask >> i & 1) ? &e->bd[i] : &zero, 4);
	}
	if (e->numbered) {
		put(b, at, &e->seq, 8);
		at += 8;
	}
	len = (uint16_t)at;
	put(b, 4, &len, 2);
	return at;
}

/* ---- the reference text ---- */

/*
 * %pI6c's rules, written apart from kcompat.h's: groups as "%x", the
 * runs of zero groups measured from every start, the line joined from
 * the pieces on each side of the one compressed.
 */
static void ref_ip6(char *out, size_t size, const uint8_t *a)
{
	char g[8][8], s[64] = "";
	unsigned int w[8], i, j, limit, best_at = 0, best_len = 0;
	bool mapped, isatap;

	for (i = 0; i < 8; i++) {
		w[i] = (unsigned int)(a[2 * i] * 256 + a[2 * i + 1]);
		snprintf(g[i], sizeof(g[i]), "%x", w[i]);
	}
	mapped = w[0] == 0 && w[1] == 0 && w[2] == 0 && w[3] == 0 &&
		 w[4] == 0 && w[5] == 0xffff;
	isatap = (w[4] | 0x200) == 0x200 && w[5] == 0x5efe;
	limit = mapped || isatap ? 6 : 8;
	for (i = 0; i < limit; i++) {
		for (j = i; j < limit && w[j] == 0; j++)
			;
		if (j - i >= 2 && j - i > best_len) {
			best_len = j - i;
			best_at = i;
		}
	}
	for (i = 0; i < limit; i++) {
		if (best_len && i == best_at) {
			strcat(s, "::");
			i += best_len - 1;
			continue;
		}
		if (s[0] && s[strlen(s) - 1] != ':')
			strcat(s, ":");
		strcat(s, g[i]);
	}
	if (limit == 6) {
		char v4[16];

		snprintf(v4, sizeof(v4), "%u.%u.%u.%u", a[12], a[13], a[14],
			 a[15]);
		if (s[0] && s[strlen(s) - 1] != ':')
			strcat(s, ":");
		strcat(s, v4);
	}
	snprintf(out, size, "[%s]", s);
}

static void ref_endpoint(char *out, size_t size, bool v6, const uint8_t *a,
			 unsigned int port)
{
	char addr[64];

	if (v6)
		ref_ip6(addr, sizeof(addr), a);
	else
		snprintf(addr, sizeof(addr), "%u.%u.%u.%u", a[0], a[1], a[2],
			 a[3]);
	snprintf(out, size, "%s:%u", addr, port);
}

/* The line tcp_rt_log.c writes for @e. */
static size_t ref_line(const struct ev *e, char *out, size_t size)
{
	char peer[80], local[80];
	int64_t sec = e->real_ns / 1000000000, nsec = e->real_ns % 1000000000;
	size_t o;
	unsigned int i;

	/* a timespec64: the second at or before, the ns after it */
	if (nsec < 0) {
		sec--;
		nsec += 1000000000;
	}
	ref_endpoint(peer, sizeof(peer), e->v6, e->peer, e->dport);
	ref_endpoint(local, sizeof(local), e->v6, e->local, e->sport);
	o = (size_t)snprintf(out, size, "V6 %c %" PRIu64 " %06u %s %s",
			     type_letter[e->type], (uint64_t)sec,
			     (unsigned int)(nsec / 1000), peer, local);
	for (i = 0; i < e->n; i++)
		o += (size_t)snprintf(out + o, size - o, " %" PRIu64, e->f[i]);
	if (e->has_netns)
		o += (size_t)snprintf(out + o, size - o, " netns=%u", e->netns);
	if (e->has_cgroup)
		o += (size_t)snprintf(out + o, size - o, " cgroup=%" PRIu64,
				      e->cgroup);
	for (i = 0; e->has_bd && i < 6; i++)
		if (e->bd_mask >> i & 1)
			o += (size_t)snprintf(out + o, size - o, " %s=%u",
					      bd_name[i], e->bd[i]);
	if (e->numbered)
		o += (size_t)snprintf(out + o, size - o, " seq=%" PRIu64,
				      e->seq);
	o += (size_t)snprintf(out + o, size - o, "\n");
	return o;
}

/* ---- the formatter under test ---- */

/* 8-aligned, as records lie in a relay sub-buffer */
static uint64_t bin_store[TCP_RT_BIN_LEN_MAX / 8 + 1];
/* the line, with a guard after the room it may use */
static char text[TCP_RT_FMT_MAX + 64];

/* Build, check and format @e: the text's length, 0 if the check failed. */
static size_t fmt(const struct ev *e)
{
	uint8_t *b = (uint8_t *)bin_store;
	size_t len, tlen;

	memset(bin_store, 0xa5, sizeof(bin_store));
	len = build(e, b);
	if (tcp_rt_bin_check((const struct tcp_rt_bin *)b, len) != len)
		return 0;
	memset(text, 0x5a, sizeof(text));
	tlen = tcp_rt_fmt_bin(text, (const struct tcp_rt_bin *)b);
	/* nothing past the room (a name's whole copy may pass the line) */
	for (size_t i = TCP_RT_FMT_MAX; i < sizeof(text); i++)
		if (text[i] != 0x5a)
			return 0;
	return tlen;
}

static char why_not[2048];
static size_t longest, longest_base;

/* tcp_rt_fmt_bin() makes ref_line()'s bytes for @e, within the bounds. */
static bool same(const struct ev *e)
{
	char want[TCP_RT_FMT_MAX + 64];
	size_t wlen = ref_line(e, want, sizeof(want)), tlen = fmt(e);
	bool ext = e->has_netns || e->has_cgroup || e->has_bd || e->numbered;

	if (tlen > longest)
		longest = tlen;
	if (!ext && tlen > longest_base)
		longest_base = tlen;
	if (tlen && tlen == wlen && !memcmp(text, want, wlen) &&
	    tlen <= TCP_RT_FMT_MAX && (ext || tlen <= DOC_MAX_BASE))
		return true;
	snprintf(why_not, sizeof(why_not), "want %zu [%.*s] got %zu [%.*s]",
		 wlen, (int)wlen, want, tlen,
		 (int)(tlen < sizeof(text) ? tlen : 0), text);
	return false;
}

/* ---- events ---- */

static void ip4(uint8_t *a, unsigned int b0, unsigned int b1, unsigned int b2,
		unsigned int b3)
{
	memset(a, 0, 16);
	a[0] = (uint8_t)b0;
	a[1] = (uint8_t)b1;
	a[2] = (uint8_t)b2;
	a[3] = (uint8_t)b3;
}

static void ip6(uint8_t *a, const char *s)
{
	if (inet_pton(AF_INET6, s, a) != 1) {
		fprintf(stderr, "bad test address %s\n", s);
		exit(2);
	}
}

/* The docs' first R: 127.0.0.1:41252 -> :7100, fields 1..n */
static void base_ev(struct ev *e, unsigned int type)
{
	unsigned int i;

	memset(e, 0, sizeof(*e));
	e->type = type;
	ip4(e->peer, 127, 0, 0, 1);
	ip4(e->local, 127, 0, 0, 1);
	e->dport = 41252;
	e->sport = 7100;
	e->real_ns = 1795218248701232123LL;
	e->n = type_fields[type];
	for (i = 0; i < e->n; i++)
		e->f[i] = i + 1;
}

static const uint64_t edges[] = {
	0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 9999, 10000, 65535, 65536,
	999999, 1000000, 4294967295ULL, 4294967296ULL, 9999999999ULL,
	10000000000ULL, 999999999999999999ULL, 1000000000000000000ULL,
	9999999999999999999ULL, 10000000000000000000ULL,
	18446744073709551615ULL,
};
#define NEDGES	(sizeof(edges) / sizeof(edges[0]))

/* A number of any length, edges often. */
static uint64_t rnd_num(void)
{
	uint64_t r = rnd();

	if (r % 4 == 0)
		return edges[(r >> 8) % NEDGES];
	return rnd() >> (rnd() % 64);
}

static uint32_t rnd_u32(void)
{
	uint64_t r = rnd();

	if (r % 4 == 0)
		return (uint32_t)edges[(r >> 8) % 18];
	return (uint32_t)(rnd() >> (32 + rnd() % 32));
}

/* IPv6 addresses rich in zero runs, short groups and dotted forms. */
static void rnd_ip6(uint8_t *a)
{
	unsigned int i, shape = (unsigned int)(rnd() % 8);

	for (i = 0; i < 8; i++) {
		uint64_t r = rnd();
		unsigned int w;

		switch (r % 4) {
		case 0:
		case 1:
			w = 0;
			break;
		case 2:
			w = (unsigned int)(r >> 8) & (0xfu << 4 * (r >> 4 & 3));
			w |= (unsigned int)(r >> 32) & 0xf;
			break;
		default:
			w = (unsigned int)(r >> 16) & 0xffff;
		}
		a[2 * i] = (uint8_t)(w >> 8);
		a[2 * i + 1] = (uint8_t)w;
	}
	if (shape == 0) {		/* v4-mapped */
		memset(a, 0, 10);
		a[10] = a[11] = 0xff;
	} else if (shape == 1) {	/* ISATAP, either form */
		a[8] = rnd() & 1 ? 0x02 : 0;
		a[9] = 0;
		a[10] = 0x5e;
		a[11] = 0xfe;
	} else if (shape == 2) {	/* v4-compatible */
		memset(a, 0, 12);
	}
}

static void rnd_ev(struct ev *e)
{
	uint64_t r = rnd();
	unsigned int i;

	memset(e, 0, sizeof(*e));
	e->type = (unsigned int)(r % 5);
	e->v6 = r >> 4 & 1;
	if (e->v6) {
		rnd_ip6(e->peer);
		rnd_ip6(e->local);
	} else {
		uint64_t p = rnd(), l = rnd();

		memcpy(e->peer, &p, 4);
		memcpy(e->local, &l, 4);
		if (r >> 5 & 1)
			ip4(e->peer, (unsigned int)edges[(p >> 32) % 8],
			    (unsigned int)edges[(p >> 40) % 8], 0, 255);
	}
	e->dport = (uint16_t)(r >> 8 & 3 ? rnd() : edges[(r >> 12) % 13]);
	e->sport = (uint16_t)rnd();
	switch (r >> 20 & 7) {
	case 0:
		e->real_ns = (int64_t)rnd();
		break;
	case 1:
		e->real_ns = (int64_t)(rnd() % 4000000000ULL) *
			     (rnd() & 1 ? 999999 : 1000000);
		break;
	default:
		e->real_ns = 1700000000000000000LL +
			     (int64_t)(rnd() % 200000000000000000ULL);
	}
	e->idx = rnd();
	e->n = r >> 24 & 7 ? type_fields[e->type] :
			     (unsigned int)(rnd() % 11);
	for (i = 0; i < e->n; i++)
		e->f[i] = rnd_num();
	/* mostly what the module writes there, which tcprt's parser checks */
	if (e->n == type_fields[e->type] && rnd() % 8) {
		if (e->type == TCP_RT_BIN_R || e->type == TCP_RT_BIN_P)
			e->f[8] &= 1;
		else if (e->type == TCP_RT_BIN_N)
			e->f[3] &= 1;
	}
	e->has_netns = r >> 28 & 1;
	e->has_cgroup = r >> 29 & 1;
	e->has_bd = r >> 30 & 1;
	e->numbered = r >> 31 & 1;
	e->netns = rnd_u32();
	e->cgroup = rnd_num();
	e->bd_mask = e->has_bd ? (unsigned int)(r >> 32 & 63) : 0;
	for (i = 0; i < 6; i++)
		e->bd[i] = rnd_u32();
	e->seq = rnd_num();
}

/* ---- parse -> binary -> text ---- */

/* The event of a parsed record, as the module stores it. */
static bool rec_to_ev(const struct record *r, struct ev *e)
{
	unsigned int i;

	memset(e, 0, sizeof(*e));
	if (r->type > REC_E || r->source != SRC_TCP_RT ||
	    r->sec > 9000000000ULL)
		return false;
	e->type = r->type;
	e->v6 = strchr(r->peer_addr, ':') != NULL;
	if (inet_pton(e->v6 ? AF_INET6 : AF_INET, r->peer_addr, e->peer) != 1 ||
	    inet_pton(e->v6 ? AF_INET6 : AF_INET, r->local_addr, e->local) != 1)
		return false;
	e->dport = r->peer_port;
	e->sport = r->local_port;
	e->real_ns = (int64_t)(r->sec * 1000000000ULL + r->usec * 1000 + 999);
	for (i = 0; i < REC_FIELDS_MAX; i++)
		if (r->present >> i & 1)
			e->f[e->n++] = r->f[i];
	e->has_netns = rec_has_ext(r, EXT_NETNS);
	e->netns = (uint32_t)r->ext[EXT_NETNS];
	e->has_cgroup = rec_has_ext(r, EXT_CGROUP);
	e->cgroup = r->ext[EXT_CGROUP];
	for (i = 0; i < 6; i++) {
		if (!rec_has_ext(r, (enum rec_ext)(EXT_RQ_WAIT + i)))
			continue;
		e->has_bd = true;
		e->bd_mask |= 1u << i;
		e->bd[i] = (uint32_t)r->ext[EXT_RQ_WAIT + i];
	}
	e->numbered = rec_has_ext(r, EXT_SEQ);
	e->seq = r->ext[EXT_SEQ];
	return true;
}

/* @line (with its '\n') parsed, made binary and formatted again. */
static bool round_trip(const char *line, size_t len)
{
	struct record r;
	char why[PARSE_WHY_MAX];
	struct ev e;
	size_t tlen;

	if (!len || line[len - 1] != '\n' ||
	    !parse_log_line(line, len - 1, &r, why)) {
		snprintf(why_not, sizeof(why_not), "parse: %s: %.*s",
			 len ? why : "empty", (int)len, line);
		return false;
	}
	if (!rec_to_ev(&r, &e)) {
		snprintf(why_not, sizeof(why_not), "not the module's: %.*s",
			 (int)len, line);
		return false;
	}
	tlen = fmt(&e);
	if (tlen == len && !memcmp(text, line, len))
		return true;
	snprintf(why_not, sizeof(why_not), "[%.*s] came back [%.*s]",
		 (int)len, line, (int)(tlen < sizeof(text) ? tlen : 0), text);
	return false;
}

/* Whether parse can take the line of @e back (tcp_rt's form exactly). */
static bool parseable(const struct ev *e)
{
	unsigned int oo = e->type == TCP_RT_BIN_N ? 3 : 8;

	if (e->type != TCP_RT_BIN_W && e->type != TCP_RT_BIN_E &&
	    e->n > oo && e->f[oo] > 1)
		return false;
	return e->n == type_fields[e->type] && e->dport && e->sport &&
	       e->real_ns >= 0 && e->real_ns < 9000000000000000000LL &&
	       (!e->has_bd || (e->type != TCP_RT_BIN_N &&
			       e->type != TCP_RT_BIN_E &&
			       (e->type != TCP_RT_BIN_P || !(e->bd_mask & 2))));
}

/* ---- the tests ---- */

static void test_layout(void)
{
	struct ev e;
	uint8_t *b = (uint8_t *)bin_store;

	ok(sizeof(struct tcp_rt_bin) == 32 &&
	   offsetof(struct tcp_rt_bin, len) == 4 &&
	   offsetof(struct tcp_rt_bin, bd_mask) == 6 &&
	   offsetof(struct tcp_rt_bin, idx) == 8 &&
	   offsetof(struct tcp_rt_bin, real_ns) == 16 &&
	   offsetof(struct tcp_rt_bin, dport) == 24 &&
	   offsetof(struct tcp_rt_bin, sport) == 26 &&
	   offsetof(struct tcp_rt_bin, data) == 32,
	   "layout: the header's offsets");
	ok(tcp_rt_bin_size(0, 10) == 120 &&
	   tcp_rt_bin_size(TCP_RT_BIN_V6, 10) == 144 &&
	   tcp_rt_bin_size(TCP_RT_BIN_FLAGS, 10) == TCP_RT_BIN_LEN_MAX &&
	   TCP_RT_BIN_LEN_MAX == 192,
	   "layout: an R is 120 bytes, 144 in IPv6, 192 at most");

	base_ev(&e, TCP_RT_BIN_R);
	e.has_netns = e.has_cgroup = e.has_bd = e.numbered = true;
	e.v6 = true;
	ip6(e.peer, "2001:db8::1");
	ip6(e.local, "2001:db8::2");
	e.bd_mask = 0x3f;
	ok(build(&e, b) == 192 &&
	   tcp_rt_bin_check((const struct tcp_rt_bin *)b, 192) == 192 &&
	   !tcp_rt_bin_check((const struct tcp_rt_bin *)b, 191),
	   "check: a whole record passes, one byte short does not");

	struct {
		size_t at;
		uint8_t v;
		const char *what;
	} bad[] = {
		{ 0, 2, "version 2" },
		{ 0, 0, "version 0" },
		{ 1, 5, "type 5" },
		{ 2, 0x20, "an unknown flag" },
		{ 2, 0x0f, "flags without the breakdown's block" },
		{ 3, 11, "11 fields" },
		{ 3, 9, "a length that is not the blocks'" },
		{ 4, 184, "len short of the blocks" },
		{ 6, 0x40, "a breakdown bit past the six" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		build(&e, b);
		b[bad[i].at] = bad[i].v;
		ok(!tcp_rt_bin_check((const struct tcp_rt_bin *)b, 192),
		   "check refuses %s", bad[i].what);
	}
	e.has_bd = false;
	e.bd_mask = 1;
	build(&e, b);
	ok(!tcp_rt_bin_check((const struct tcp_rt_bin *)b, 192),
	   "check refuses a breakdown mask without its block");
	ok(!tcp_rt_bin_check((const struct tcp_rt_bin *)b, 16),
	   "check refuses less than a header");
}

/* The IPv6 text: kcompat.h's and ref_ip6(), each against fixed cases. */
static void test_ip6_fixed(void)
{
	static const struct {
		const char *addr, *want;
	} c[] = {
		{ "::", "::" },
		{ "::1", "::1" },
		{ "1::", "1::" },
		{ "::ffff:1.2.3.4", "::ffff:1.2.3.4" },
		{ "::ffff:0.0.0.0", "::ffff:0.0.0.0" },
		{ "1:0:0:2:0:0:3:4", "1::2:0:0:3:4" },
		{ "1:0:0:2:0:0:0:4", "1:0:0:2::4" },
		{ "1:0:2:3:4:5:6:7", "1:0:2:3:4:5:6:7" },
		{ "0:1:2:3:4:5:6:0", "0:1:2:3:4:5:6:0" },
		{ "2001:db8::1", "2001:db8::1" },
		{ "2001:0db8:0000:0001:0000:0000:0000:0001", "2001:db8:0:1::1" },
		{ "fe80::ABCD:0:0:1", "fe80::abcd:0:0:1" },
		{ "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8" },
		{ "f:f0:f00:f000:0:1:10:100", "f:f0:f00:f000:0:1:10:100" },
		/* v4-compatible: not dotted (glibc: ::1.2.3.4) */
		{ "::1.2.3.4", "::102:304" },
		/* ISATAP, both forms, any prefix */
		{ "fe80::5efe:c000:201", "fe80::5efe:192.0.2.1" },
		{ "fe80::200:5efe:c000:201", "fe80::200:5efe:192.0.2.1" },
		{ "2001:db8:1:2:0:5efe:a00:1", "2001:db8:1:2:0:5efe:10.0.0.1" },
		{ "::5efe:0:0", "::5efe:0.0.0.0" },
		{ "1:2:3:4:200:5efe:0:1", "1:2:3:4:200:5efe:0.0.0.1" },
		{ "ffff:ffff:ffff:ffff:200:5efe:ffff:ffff",
		  "ffff:ffff:ffff:ffff:200:5efe:255.255.255.255" },
		/* not ISATAP: 0100:5efe, 0200:5eff */
		{ "fe80::100:5efe:c000:201", "fe80::100:5efe:c000:201" },
		{ "fe80::200:5eff:c000:201", "fe80::200:5eff:c000:201" },
		/* not v4-mapped: ffff elsewhere, or a prefix */
		{ "::ffff:0:1:2", "::ffff:0:1:2" },
		{ "1::ffff:1.2.3.4", "1::ffff:102:304" },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		uint8_t a[16];
		char got[80], ref[80], want[80];

		ip6(a, c[i].addr);
		*tcp_rt_fmt_ipv6(got, a) = '\0';
		ref_ip6(ref, sizeof(ref), a);
		snprintf(want, sizeof(want), "[%s]", c[i].want);
		ok(!strcmp(got, want) && !strcmp(ref, want),
		   "ipv6 %s -> %s (got %s, reference %s)", c[i].addr, want,
		   got, ref);
	}
}

/* Where glibc's inet_ntop() writes what %pI6c does: neither dotted form. */
static bool glibc_agrees(const uint8_t *a)
{
	static const uint8_t zero[12];

	if (!memcmp(a, zero, 12) && (a[12] | a[13]))
		return false;		/* glibc: ::a.b.c.d */
	if ((a[8] | 2) == 2 && !a[9] && a[10] == 0x5e && a[11] == 0xfe)
		return false;		/* ISATAP: glibc hex */
	return true;
}

static void test_ip6_random(void)
{
	unsigned int i, bad = 0, bad_glibc = 0, glibc = 0, dotted = 0, n = 200000;
	char why[256] = "", why_g[256] = "";

	for (i = 0; i < n; i++) {
		uint8_t a[16];
		char got[80], ref[80], g[80];

		rnd_ip6(a);
		*tcp_rt_fmt_ipv6(got, a) = '\0';
		ref_ip6(ref, sizeof(ref), a);
		if (strchr(got, '.'))
			dotted++;
		if (strcmp(got, ref) && !bad++)
			snprintf(why, sizeof(why), "%s vs %s", got, ref);
		if (!glibc_agrees(a))
			continue;
		glibc++;
		g[0] = '[';
		inet_ntop(AF_INET6, a, g + 1, sizeof(g) - 2);
		strcat(g, "]");
		if (strcmp(got, g) && !bad_glibc++)
			snprintf(why_g, sizeof(why_g), "%s vs glibc %s", got, g);
	}
	ok(!bad, "ipv6: %u random addresses (%u dotted) as the second formatter: %u differ %s",
	   n, dotted, bad, why);
	ok(!bad_glibc, "ipv6: %u of them as glibc's inet_ntop: %u differ %s",
	   glibc, bad_glibc, why_g);
}

/* Each type, IPv4 and IPv6, with every subset of log_ext's fields. */
static void test_types_ext(void)
{
	unsigned int type, v6, set, mask;

	for (type = 0; type < 5; type++) {
		for (v6 = 0; v6 < 2; v6++) {
			unsigned int n = 0, bad = 0;
			char why[sizeof(why_not)] = "";

			for (set = 0; set < 16; set++) {
				for (mask = 0; mask < 64; mask++) {
					struct ev e;

					if (!(set & 4) && mask)
						break;
					base_ev(&e, type);
					if (v6) {
						e.v6 = true;
						ip6(e.peer, "2001:db8::a:1");
						ip6(e.local, "::1");
					}
					e.has_netns = set & 1;
					e.netns = 4026532198u;
					e.has_cgroup = set & 2;
					e.cgroup = 250;
					e.has_bd = set & 4;
					e.bd_mask = mask;
					for (unsigned int i = 0; i < 6; i++)
						e.bd[i] = 100 * i + 7;
					e.numbered = set & 8;
					e.seq = 41 + set;
					n++;
					if (!same(&e) && !bad++)
						memcpy(why, why_not, sizeof(why));
				}
			}
			ok(!bad, "%c %s: %u mixes of netns, cgroup, the breakdown's six and seq: %u differ %s",
			   type_letter[type], v6 ? "IPv6" : "IPv4", n, bad, why);
		}
	}
}

/* Every field, and each extension field, at each edge. */
static void test_edges(void)
{
	static const int64_t times[] = {
		0, 999, 1000, 999999, 1000000, 999999999, 1000000000,
		1795218248000000000LL, 1795218248999999999LL,
		1795218248000999999LL, INT64_MAX, -1, -999, -1000, -1000000000,
		-1000000001, INT64_MIN,
	};
	unsigned int i, j, bad = 0, n = 0;
	char why[sizeof(why_not)] = "";
	struct ev e;
	bool good;

	for (i = 0; i < NEDGES; i++) {
		for (j = 0; j < 5; j++) {
			base_ev(&e, j);
			for (unsigned int k = 0; k < e.n; k++)
				e.f[k] = edges[i];
			e.has_netns = e.has_cgroup = e.numbered = true;
			e.has_bd = j != TCP_RT_BIN_N && j != TCP_RT_BIN_E;
			e.bd_mask = e.has_bd ? 0x3f : 0;
			e.netns = (uint32_t)edges[i];
			e.cgroup = edges[i];
			for (unsigned int k = 0; k < 6; k++)
				e.bd[k] = (uint32_t)edges[i];
			e.seq = edges[i];
			n++;
			if (!same(&e) && !bad++)
				memcpy(why, why_not, sizeof(why));
		}
	}
	ok(!bad, "numbers: %u records of every field at 0, 9, 10, 99, 100 ... 2^32-1 ... 2^64-1: %u differ %s",
	   n, bad, why);

	bad = 0;
	for (i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
		base_ev(&e, TCP_RT_BIN_E);
		e.real_ns = times[i];
		if (!same(&e) && !bad++)
			memcpy(why, why_not, sizeof(why));
	}
	ok(!bad, "time: usec 000000 and 999999, the second's edges, before 1970 and at s64's ends: %u differ %s",
	   bad, why);

	base_ev(&e, TCP_RT_BIN_R);
	e.real_ns = 1795218248000000000LL;
	same(&e);
	ok(!strncmp(text, "V6 R 1795218248 000000 ", 23), "usec 0 is 000000: %.40s", text);
	e.real_ns = 1795218248999999999LL;
	same(&e);
	ok(!strncmp(text, "V6 R 1795218248 999999 ", 23), "usec 999999: %.40s", text);

	bad = 0;
	for (i = 0; i < 65536; i++) {
		base_ev(&e, TCP_RT_BIN_N);
		ip4(e.peer, i & 255, i >> 8, (i * 7) & 255, 255 - (i & 255));
		e.dport = (uint16_t)i;
		e.sport = (uint16_t)(65535 - i);
		if (!same(&e) && !bad++)
			memcpy(why, why_not, sizeof(why));
	}
	ok(!bad, "IPv4: every byte value in each place, every port: %u differ %s",
	   bad, why);

	/*
	 * The longest lines there are.  The bound counts an endpoint of six
	 * full groups and a dotted tail; a dotted tail comes only after
	 * ::ffff: or an ISATAP "0:5efe:"/"200:5efe:", so the longest is one
	 * character less an endpoint: 2 less a line than the bound.
	 */
	base_ev(&e, TCP_RT_BIN_R);
	e.v6 = true;
	ip6(e.peer, "ffff:ffff:ffff:ffff:200:5efe:255.255.255.255");
	ip6(e.local, "ffff:ffff:ffff:ffff:200:5efe:255.255.255.255");
	e.dport = e.sport = 65535;
	e.real_ns = -1;
	for (i = 0; i < 10; i++)
		e.f[i] = UINT64_MAX;
	good = same(&e);
	ok(good && longest_base == DOC_MAX_BASE - 2,
	   "the longest line without log_ext: %zu bytes (docs' bound: %d) %s",
	   longest_base, DOC_MAX_BASE, good ? "" : why_not);
	e.has_netns = e.has_cgroup = e.has_bd = e.numbered = true;
	e.netns = UINT32_MAX;
	e.cgroup = e.seq = UINT64_MAX;
	e.bd_mask = 0x3f;
	for (i = 0; i < 6; i++)
		e.bd[i] = UINT32_MAX;
	good = same(&e);
	ok(good && longest == DOC_MAX - 2 && TCP_RT_FMT_MAX == DOC_MAX &&
	   TCP_RT_FMT_MAX <= MODULE_ROOM,
	   "the longest line of all: %zu bytes, TCP_RT_FMT_MAX %d (docs %d, the module's room %d) %s",
	   longest, (int)TCP_RT_FMT_MAX, DOC_MAX, MODULE_ROOM,
	   good ? "" : why_not);
}

/* docs/records.md's record lines, found beside this program. */
static void test_docs(const char *argv0)
{
	char path[4096], line[1024];
	const char *slash = strrchr(argv0, '/');
	unsigned int n = 0, bad = 0;
	char why[sizeof(why_not)] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%.*s/../../../docs/records.md",
		 slash ? (int)(slash - argv0) : 1, slash ? argv0 : ".");
	f = fopen(path, "r");
	if (!ok(f != NULL, "docs/records.md at %s", path))
		return;
	while (fgets(line, sizeof(line), f)) {
		const char *l = line + strspn(line, " ");

		/* a record's line, not the header's template */
		if (l == line || strncmp(l, "V6 ", 3) || !l[3] ||
		    !strchr(type_letter, l[3]) || l[4] != ' ')
			continue;
		n++;
		if (!round_trip(l, strlen(l)) && !bad++)
			memcpy(why, why_not, sizeof(why));
	}
	fclose(f);
	ok(n >= 10 && !bad,
	   "docs/records.md: %u example lines parse -> binary -> text, byte for byte: %u differ %s",
	   n, bad, why);
}

/* Lines of the other tests' and of the module's forms, IPv6 among them. */
static void test_lines(void)
{
	static const char *const lines[] = {
		"V6 R 0 000000 1.2.3.4:1 5.6.7.8:65535 0 0 0 0 0 0 0 0 0 0\n",
		"V6 R 1 999999 1.2.3.4:1 5.6.7.8:2 18446744073709551615 0 0 0 0 0 0 0 0 0\n",
		"V6 R 1 000001 [2001:db8::1]:51234 [2001:db8::2]:443 1 2 3 4 5 6 7 8 0 10\n",
		"V6 E 1 000001 [::1]:7100 [::1]:40000 1 2 3 4 5 6\n",
		"V6 P 1 000001 [fe80::1:2:3:4]:6379 [fe80::aaaa:bbbb:cccc:dddd]:45678 1 2 3 4 5 6 7 8 0 10\n",
		"V6 R 1 000001 [ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535 [::ffff:10.0.0.1]:80 1 2 3 4 5 6 7 8 0 10\n",
		"V6 W 1732100000 250117 10.0.0.2:51234 10.0.0.1:80 5120 2301 180 2 1 2004 12 310 1448\n",
		"V6 N 1732100000 250117 10.0.0.2:51234 10.0.0.1:80 2 1500 400 1 1448 netns=1 seq=0\n",
		"V6 W 1 000001 [fe80::200:5efe:192.0.2.1]:1 [1::2:0:0:3:4]:2 1 2 3 4 5 6 7 8 9 cgroup=1 rq_wait=1 app=2 sq_wait=3 rwnd_limited=4 sndbuf_limited=5 app_limited=6 seq=18446744073709551615\n",
		"V6 P 1 000001 [::]:1 [::5efe:0.0.0.0]:2 1 2 3 4 5 6 7 8 1 10 netns=4294967295 cgroup=18446744073709551615 sndbuf_limited=0\n",
		"V6 E 1795218248 697287 127.0.0.1:41252 127.0.0.1:7100 1 5000 0 300 0 322 netns=4026531840 cgroup=1 seq=7\n",
	};
	unsigned int i;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		ok(round_trip(lines[i], strlen(lines[i])), "round trip: %.*s%s",
		   (int)strlen(lines[i]) - 1, lines[i],
		   round_trip(lines[i], strlen(lines[i])) ? "" : why_not);
}

static void test_random(unsigned int n)
{
	unsigned int i, bad = 0, rt = 0, bad_rt = 0, v6 = 0, ext = 0;
	char why[sizeof(why_not)] = "", why_rt[sizeof(why_not)] = "";
	char line[sizeof(text)];
	struct ev e;
	size_t len;

	for (i = 0; i < n; i++) {
		rnd_ev(&e);
		v6 += e.v6;
		ext += e.has_netns || e.has_cgroup || e.has_bd || e.numbered;
		if (!same(&e)) {
			if (!bad++)
				memcpy(why, why_not, sizeof(why));
			continue;
		}
		if (!parseable(&e))
			continue;
		rt++;
		/* text made by the formatter, read back by tcprt's parser */
		memcpy(line, text, sizeof(line));
		len = (size_t)((char *)memchr(line, '\n', sizeof(line)) -
			       line) + 1;
		if (!round_trip(line, len) && !bad_rt++)
			memcpy(why_rt, why_not, sizeof(why_rt));
	}
	ok(!bad, "%u random records (%u IPv6, %u with log_ext fields) as snprintf's: %u differ %s",
	   n, v6, ext, bad, why);
	ok(!bad_rt, "%u of them parse -> binary -> text, byte for byte: %u differ %s",
	   rt, bad_rt, why_rt);
	ok(longest <= TCP_RT_FMT_MAX && longest_base <= DOC_MAX_BASE,
	   "no line longer than %d bytes (%d without log_ext): longest %zu, %zu",
	   (int)TCP_RT_FMT_MAX, DOC_MAX_BASE, longest, longest_base);
}

int main(int argc, char **argv)
{
	(void)argc;
	test_layout();
	test_ip6_fixed();
	test_ip6_random();
	test_types_ext();
	test_edges();
	test_docs(argv[0]);
	test_lines();
	test_random(1000000);
	return done_testing();
}
