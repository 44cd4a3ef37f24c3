// SPDX-License-Identifier: GPL-2.0
/*
 * Task records and the per-CPU relay logs.
 *
 * One relay channel, one buffer per CPU, one debugfs file per buffer
 * (rt-network-log<cpu>).  The channel runs in flight-recorder mode: when a
 * buffer is full the oldest sub-buffer is overwritten, and the overwrite is
 * counted so that the status file shows the loss.
 *
 * With log_format=both (load time; docs/records.md, "Binary records") a
 * second channel, rt-network-bin<cpu>, gets the same event as a binary
 * record (include/tcp_rt_bin.h), written right after its text line, with
 * the same seq; its own overwrites are counted apart.  Its buffers are
 * also read as text, made from the records when they are read
 * (rt-network-text<cpu>, tcp_rt_relay.c).  Off (text, the default), a
 * static key skips it.  With log_format=binary the binary channel is the
 * only one: a second static key skips the text, the binary record takes
 * the seq, and rt-network-log<cpu> is the binary buffer's text view.
 *
 * Concurrency: a record is formatted into the current CPU's buffer with
 * interrupts off, as relay_write() copies one, so records from softirq and
 * process context on one CPU never interleave, and a record is never split
 * across sub-buffers; its binary form goes to that CPU's binary buffer in
 * the same section.  The overwrite counters are bumped from relay's
 * sub-buffer switch, which runs inside that same section on any CPU, hence
 * atomics.  The records written are counted per CPU, by type.  Each CPU's
 * next record number (log_ext's seq) and next binary record index are
 * read and raised only by its own writer, in that same section.
 *
 * The files are read through tcp_rt_relay.c's operations, which hand out
 * whole records only: lines of the text files, records of the binary, and
 * lines made from them.
 */

#define pr_fmt(fmt) "tcp_rt: " fmt

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/in6.h>
#include <linux/ipv6.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/relay.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <net/inet_sock.h>
#include <net/ipv6.h>
#include <net/sock.h>

#include "include/tcp_rt.h"
#include "include/tcp_rt_relay.h"
#include "include/tcp_rt_compat.h"
#include "include/tcp_rt_fmt.h"

#define TCP_RT_LOG_SUBBUF_SIZE	(256 * 1024)

static struct rchan *tcp_rt_log_chan;
static atomic_long_t tcp_rt_log_overwrites = ATOMIC_LONG_INIT(0);
/*
 * log_format=both and binary: the binary channel, and its own overwrites;
 * binary: no text channel
 */
static DEFINE_STATIC_KEY_FALSE(tcp_rt_log_bin_on);
static DEFINE_STATIC_KEY_FALSE(tcp_rt_log_text_off);
static struct rchan *tcp_rt_log_bin_chan;
static atomic_long_t tcp_rt_log_bin_overwrites = ATOMIC_LONG_INIT(0);
/* the index the CPU's binary log gives its next record, from 0 at load */
static DEFINE_PER_CPU(u64, tcp_rt_log_bin_idx);
static DEFINE_PER_CPU(u64 [TCP_RT_REC_MAX], tcp_rt_log_nr);
/*
 * The number the CPU's log gives its next numbered record (log_ext's
 * seq), from 0 at load: taken only once the record has its room, so every
 * number taken is in the log, in order, and a gap a reader finds is
 * records lost after they were made.
 */
static DEFINE_PER_CPU(u64, tcp_rt_log_seq);

/*
 * Called by relay before it starts writing a sub-buffer.  Returning 1 always
 * is what makes the channel a flight recorder; a full buffer at that point
 * means the sub-buffer about to be reused was never read.
 */
static int tcp_rt_log_subbuf_start(TCP_RT_SUBBUF_START_ARGS)
{
	if (prev_subbuf && relay_buf_full(buf))
		atomic_long_inc(&tcp_rt_log_overwrites);
	return 1;
}

static struct dentry *tcp_rt_log_create_file(const char *filename,
					     struct dentry *parent,
					     umode_t mode,
					     struct rchan_buf *buf,
					     int *is_global)
{
	return tcp_rt_relay_create_file(filename, parent, mode, buf);
}

static tcp_rt_relay_cb_const struct rchan_callbacks tcp_rt_log_callbacks = {
	.subbuf_start		= tcp_rt_log_subbuf_start,
	.create_buf_file	= tcp_rt_log_create_file,
	.remove_buf_file	= tcp_rt_relay_remove_file,
};

/*
 * And the index of the record about to be written, the sub-buffer's
 * first (tcp_rt_relay.c, "Records lost"): the switch runs in the writer's
 * section, on the buffer's CPU.  Not at the buffer's creation (no
 * previous sub-buffer): its first index is 0, as the array starts.
 */
static int tcp_rt_log_bin_subbuf_start(TCP_RT_SUBBUF_START_ARGS)
{
	if (!prev_subbuf)
		return 1;
	if (relay_buf_full(buf))
		atomic_long_inc(&tcp_rt_log_bin_overwrites);
	tcp_rt_relay_first_idx(buf, subbuf, __this_cpu_read(tcp_rt_log_bin_idx));
	return 1;
}

static struct dentry *tcp_rt_log_bin_create_file(const char *filename,
						 struct dentry *parent,
						 umode_t mode,
						 struct rchan_buf *buf,
						 int *is_global)
{
	char text_name[sizeof("rt-network-text") + TCP_RT_FMT_U32_LEN];
	char peek_name[sizeof("rt-network-peek") + TCP_RT_FMT_U32_LEN];
	unsigned int cpu;

	/*
	 * relay names the file after the channel and the buffer's CPU, and
	 * sets buf->cpu only once this returns
	 */
	if (kstrtouint(filename + strlen("rt-network-bin"), 10, &cpu))
		return NULL;
	/* binary: the text view is the log readers know */
	snprintf(text_name, sizeof(text_name), "%s%u",
		 tcp_rt_log_format == TCP_RT_LOG_BINARY ? "rt-network-log" :
							 "rt-network-text",
		 cpu);
	snprintf(peek_name, sizeof(peek_name), "rt-network-peek%u", cpu);
	return tcp_rt_relay_create_bin_file(filename, text_name, peek_name,
					    parent, mode, buf, cpu);
}

static tcp_rt_relay_cb_const struct rchan_callbacks tcp_rt_log_bin_callbacks = {
	.subbuf_start		= tcp_rt_log_bin_subbuf_start,
	.create_buf_file	= tcp_rt_log_bin_create_file,
	.remove_buf_file	= tcp_rt_relay_remove_file,
};

/*
 * Records are formatted by hand, straight into the relay buffer: they are
 * written on the packet path, where vsnprintf() would cost several times
 * what these few conversions do, and a copy through the stack another
 * pass over the record.  The conversions are tcp_rt_fmt.h's, which tcprt
 * shares to make the same text from a binary record.  Room for the
 * longest record possible is made before formatting starts, so the
 * writers below need no bounds checks.
 */
#if IS_ENABLED(CONFIG_IPV6)
/* Printed as IPv6: not a v4-mapped address (the TCP-RT tools expect IPv4). */
static bool tcp_rt_is_ipv6(const struct sock *sk)
{
	return sk->sk_family == AF_INET6 &&
	       !ipv6_addr_v4mapped(&sk->sk_v6_daddr);
}

static char *tcp_rt_put_ipv6(char *p, const struct sock *sk, bool peer)
{
	return tcp_rt_fmt_ipv6(p, peer ? sk->sk_v6_daddr.s6_addr :
					 sk->sk_v6_rcv_saddr.s6_addr);
}

static void tcp_rt_log_bin_ip6(struct tcp_rt_bin_ip6 *a, const struct sock *sk)
{
	memcpy(a->daddr, sk->sk_v6_daddr.s6_addr, sizeof(a->daddr));
	memcpy(a->saddr, sk->sk_v6_rcv_saddr.s6_addr, sizeof(a->saddr));
}
#else
static bool tcp_rt_is_ipv6(const struct sock *sk)
{
	return false;
}

static char *tcp_rt_put_ipv6(char *p, const struct sock *sk, bool peer)
{
	return p;
}

static void tcp_rt_log_bin_ip6(struct tcp_rt_bin_ip6 *a, const struct sock *sk)
{
}
#endif

/*
 * "addr:port".  A v4-mapped IPv6 socket's inet_daddr/inet_rcv_saddr hold
 * its IPv4 addresses.
 */
static char *tcp_rt_put_endpoint(char *p, const struct sock *sk, bool peer)
{
	const struct inet_sock *inet = inet_sk(sk);
	u16 port = ntohs(peer ? inet->inet_dport : inet->inet_sport);

	if (tcp_rt_is_ipv6(sk))
		p = tcp_rt_put_ipv6(p, sk, peer);
	else
		p = tcp_rt_fmt_ipv4(p, (const u8 *)(peer ? &inet->inet_daddr :
							 &inet->inet_rcv_saddr));
	*p++ = ':';
	return tcp_rt_fmt_u64(p, port);
}

/*
 * The room a record reserves: without, then with the time breakdown; a
 * numbered one (seq) TCP_RT_REC_LEN_SEQ more, for its padded prefix and
 * 20 digits, so that a record without it reserves what it did before.
 */
#define TCP_RT_REC_LEN_BASE (sizeof("V6 R ") - 1 + TCP_RT_FMT_U64_LEN +	\
			     sizeof(" 000000 ") - 1 + 2 * TCP_RT_FMT_EP_LEN + 1 + \
			     TCP_RT_REC_FIELDS_MAX * (1 + TCP_RT_FMT_U64_LEN) + \
			     TCP_RT_EXT_CONN_LEN + 1)
#define TCP_RT_REC_LEN	(TCP_RT_REC_LEN_BASE + TCP_RT_EXT_TASK_LEN +	\
			 TCP_RT_FMT_EXT_NAME)
#define TCP_RT_REC_LEN_SEQ	(TCP_RT_FMT_EXT_NAME + TCP_RT_FMT_U64_LEN)

/*
 * The text tcp_rt_fmt_bin() makes of a binary record must be this file's
 * line of the same event, so the layout's constants are held to the
 * module's here.
 */
static_assert(TCP_RT_REC_MAX == (int)TCP_RT_BIN_TYPES &&
	      TCP_RT_REC_R == (int)TCP_RT_BIN_R &&
	      TCP_RT_REC_W == (int)TCP_RT_BIN_W &&
	      TCP_RT_REC_N == (int)TCP_RT_BIN_N &&
	      TCP_RT_REC_P == (int)TCP_RT_BIN_P &&
	      TCP_RT_REC_E == (int)TCP_RT_BIN_E);
static_assert(TCP_RT_REC_FIELDS_MAX == TCP_RT_BIN_FIELDS_MAX);
static_assert(TCP_RT_EXT_TASK_N == TCP_RT_BIN_BD_N);
static_assert(TCP_RT_EXT_NETNS == (int)TCP_RT_FMT_EXT_NETNS &&
	      TCP_RT_EXT_CGROUP == (int)TCP_RT_FMT_EXT_CGROUP &&
	      TCP_RT_EXT_TASK_FIRST == (int)TCP_RT_FMT_EXT_BD &&
	      TCP_RT_EXT_SEQ == (int)TCP_RT_FMT_EXT_SEQ &&
	      TCP_RT_EXT_MAX == (int)TCP_RT_FMT_EXTS);
/* a formatted record fits the room a record of the most reserves */
static_assert(TCP_RT_REC_LEN + TCP_RT_REC_LEN_SEQ >= TCP_RT_FMT_MAX);

/*
 * log_ext's names are tcp_rt_params.c's, which the parameter takes, and
 * tcp_rt_fmt.h's, which records carry: one table for each side of the
 * interface, held to each other once at load.
 */
static int tcp_rt_ext_names_check(void)
{
	char got[TCP_RT_FMT_EXT_NAME + 2], want[sizeof(got)];
	unsigned int i;

	for (i = 0; i < TCP_RT_EXT_MAX; i++) {
		*tcp_rt_fmt_ext(got, i, 0) = '\0';
		snprintf(want, sizeof(want), " %s=0", tcp_rt_ext_names[i]);
		if (WARN_ON(strcmp(got, want)))
			return -EINVAL;
	}
	return 0;
}

/*
 * The flags and length of the binary records of a connection of log_ext
 * @mask, but for their fields and breakdown: what each record would
 * otherwise work out again.
 */
static void tcp_rt_log_conn_bin(struct tcp_rt_log_conn *lc,
				const struct sock *sk, unsigned int mask)
{
	unsigned int flags = 0;

	if (tcp_rt_is_ipv6(sk))
		flags |= TCP_RT_BIN_V6;
	if (mask & BIT(TCP_RT_EXT_SEQ))
		flags |= TCP_RT_BIN_NUMBERED;
	if (mask & BIT(TCP_RT_EXT_NETNS))
		flags |= TCP_RT_BIN_NETNS;
	if (mask & BIT(TCP_RT_EXT_CGROUP))
		flags |= TCP_RT_BIN_CGROUP;
	/* the longest: IPv6, netns, cgroup and seq */
	BUILD_BUG_ON(tcp_rt_bin_size(TCP_RT_BIN_FLAGS & ~TCP_RT_BIN_BD, 0) > U8_MAX);
	lc->bin_flags = flags;
	lc->bin_len = tcp_rt_bin_size(flags, 0);
}

/*
 * What the records of a connection established now carry of it, log_ext
 * being @mask: whether they are numbered, and its fields of the
 * connection rather than of a task (TCP_RT_EXT_CONN), as numbers and as
 * the text every record line of it ends with - formatted once, so that a
 * record only copies them.
 */
void tcp_rt_log_conn_init(struct tcp_rt_log_conn *lc, const struct sock *sk,
			  unsigned int mask)
{
	char *p = lc->ext;

	/* the longest: both fields at their widest */
	BUILD_BUG_ON(sizeof(" netns=4294967295 cgroup=18446744073709551615") - 1 >
		     TCP_RT_EXT_CONN_LEN);
	/* and the padded copy of the second prefix */
	BUILD_BUG_ON(sizeof(" netns=4294967295") - 1 + TCP_RT_FMT_EXT_NAME >
		     TCP_RT_EXT_CONN_LEN);
	lc->numbered = !!(mask & BIT(TCP_RT_EXT_SEQ));
	lc->netns = 0;
	lc->cgroup = 0;
	tcp_rt_log_conn_bin(lc, sk, mask);
	if (likely(!(mask & TCP_RT_EXT_CONN))) {
		lc->ext_len = 0;
		return;
	}
	if (mask & BIT(TCP_RT_EXT_NETNS)) {
		lc->netns = tcp_rt_sk_netns(sk);
		p = tcp_rt_fmt_ext(p, TCP_RT_FMT_EXT_NETNS, lc->netns);
	}
	if (mask & BIT(TCP_RT_EXT_CGROUP)) {
		lc->cgroup = tcp_rt_sk_cgroup(sk);
		p = tcp_rt_fmt_ext(p, TCP_RT_FMT_EXT_CGROUP, lc->cgroup);
	}
	lc->ext_len = p - lc->ext;
}

/* The task's fields of the time breakdown, in the table's order. */
static char *tcp_rt_put_ext_task(char *p, const struct tcp_rt_ext_task *xt)
{
	unsigned int i;

	/* the names, then " =" and 10 digits each */
	BUILD_BUG_ON(sizeof("rq_waitappsq_waitrwnd_limitedsndbuf_limitedapp_limited") - 1 +
		     TCP_RT_EXT_TASK_N * 12 > TCP_RT_EXT_TASK_LEN);
	for (i = 0; i < TCP_RT_EXT_TASK_N; i++)
		if (xt->mask & BIT(TCP_RT_EXT_TASK_FIRST + i))
			p = tcp_rt_fmt_ext(p, TCP_RT_FMT_EXT_BD + i,
					   xt->v[i]);
	return p;
}

static __always_inline char *
tcp_rt_format(char *p, const struct sock *sk, enum tcp_rt_rec type,
	      s64 real_ns, const u64 *fields, unsigned int n,
	      const struct tcp_rt_log_conn *lc,
	      const struct tcp_rt_ext_task *xt, bool numbered, u64 seq)
{
	unsigned int i;

	/* " seq=" and its digits, or the padded prefix, in the room added */
	BUILD_BUG_ON(sizeof(" seq=18446744073709551615") - 1 >
		     TCP_RT_REC_LEN_SEQ);
	BUILD_BUG_ON(TCP_RT_FMT_EXT_NAME > TCP_RT_REC_LEN_SEQ);

	p = tcp_rt_fmt_head(p, type, real_ns);
	p = tcp_rt_put_endpoint(p, sk, true);
	*p++ = ' ';
	p = tcp_rt_put_endpoint(p, sk, false);
	for (i = 0; i < n; i++) {
		*p++ = ' ';
		p = tcp_rt_fmt_u64(p, fields[i]);
	}
	/*
	 * The connection's extension text, copied whole (a fixed size is a
	 * few moves; the record has room for it), kept to its length.
	 */
	if (lc->ext_len) {
		memcpy(p, lc->ext, TCP_RT_EXT_CONN_LEN);
		p += lc->ext_len;
	}
	if (xt)
		p = tcp_rt_put_ext_task(p, xt);
	/* last: the table's order, and the one field made as it is written */
	if (numbered)
		p = tcp_rt_fmt_ext(p, TCP_RT_FMT_EXT_SEQ, seq);
	*p++ = '\n';
	return p;
}

/*
 * The record in binary, into this CPU's binary log, with the binary log's
 * own index: with log_format=both, the record just written as text, its
 * fields and @seq; with binary (@alone), the record itself, which takes
 * its number (a record that got no room takes none).  Whether it was
 * written.  Interrupts are off (tcp_rt_log_write()).  Every byte of it is
 * written: nothing of the memory it overwrites is handed out.
 */
static noinline bool
tcp_rt_log_bin(const struct sock *sk, enum tcp_rt_rec type, s64 real_ns,
	       const u64 *fields, unsigned int n,
	       const struct tcp_rt_log_conn *lc,
	       const struct tcp_rt_ext_task *xt, bool numbered, u64 seq,
	       bool alone)
{
	struct rchan_buf *buf = *this_cpu_ptr(tcp_rt_log_bin_chan->buf);
	const struct inet_sock *inet = inet_sk(sk);
	unsigned int flags = lc->bin_flags, len, i;
	struct tcp_rt_bin *rec;
	u64 *t;

	/* the connection's part worked out once (tcp_rt_log_conn_bin()) */
	len = lc->bin_len + n * sizeof(u64);
	if (xt) {
		flags |= TCP_RT_BIN_BD;
		len += sizeof(struct tcp_rt_bin_bd);
	}
	rec = (void *)tcp_rt_relay_reserve(buf, len);
	if (unlikely(!rec))
		return false;
	if (alone && numbered)
		seq = (*this_cpu_ptr(&tcp_rt_log_seq))++;
	rec->ver = TCP_RT_BIN_VER;
	rec->type = type;
	rec->flags = flags;
	rec->nfields = n;
	rec->len = len;
	rec->bd_mask = xt ? (xt->mask >> TCP_RT_EXT_TASK_FIRST) &
			    TCP_RT_BIN_BD_MASK : 0;
	rec->idx = (*this_cpu_ptr(&tcp_rt_log_bin_idx))++;
	rec->real_ns = real_ns;
	rec->dport = inet->inet_dport;
	rec->sport = inet->inet_sport;
	rec->pad = 0;
	t = rec->data;
	if (flags & TCP_RT_BIN_V6) {
		struct tcp_rt_bin_ip6 *a = (void *)t;

		tcp_rt_log_bin_ip6(a, sk);
		t += sizeof(*a) / sizeof(u64);
	} else {
		struct tcp_rt_bin_ip4 *a = (void *)t;

		a->daddr = inet->inet_daddr;
		a->saddr = inet->inet_rcv_saddr;
		t += sizeof(*a) / sizeof(u64);
	}
	/* at most 10 moves: less than memcpy()'s call for so few bytes */
	for (i = 0; i < n; i++)
		*t++ = fields[i];
	if (flags & TCP_RT_BIN_NETNS) {
		struct tcp_rt_bin_netns *ns = (void *)t;

		ns->netns = lc->netns;
		ns->pad = 0;
		t += sizeof(*ns) / sizeof(u64);
	}
	if (flags & TCP_RT_BIN_CGROUP)
		*t++ = lc->cgroup;
	if (flags & TCP_RT_BIN_BD) {
		struct tcp_rt_bin_bd *bd = (void *)t;

		for (i = 0; i < TCP_RT_BIN_BD_N; i++)
			bd->v[i] = rec->bd_mask & BIT(i) ? xt->v[i] : 0;
		t += sizeof(*bd) / sizeof(u64);
	}
	if (numbered)
		*t++ = seq;
	tcp_rt_relay_commit(buf, (char *)t);
	return true;
}

/*
 * Write one record.  @start_us is a tcp_clock_us() time; records carry the
 * wall-clock time of that instant, from the current offset between the
 * two clocks: reading a clock can cost microseconds (an emulated HPET).
 * @lc is what the connection's records carry of it; @xt, if not NULL, the
 * task's fields of the time breakdown; @numbered, whether it ends with
 * its number in this CPU's log (seq: @lc's, passed apart so that each
 * copy of the writer knows it).
 *
 * This is relay_write() with the record formatted in place: room for the
 * longest record is made (a sub-buffer switch leaves the rest of the old
 * one as padding, which reads skip), then only what was written is taken.
 * Interrupts are off throughout, as in relay_write(), so that nothing
 * else writes this CPU's buffers, or takes a number of its log, meanwhile.
 */
static __always_inline void
tcp_rt_log_write(const struct sock *sk, enum tcp_rt_rec type, u64 start_us,
		 const u64 *fields, unsigned int n,
		 const struct tcp_rt_log_conn *lc,
		 const struct tcp_rt_ext_task *xt, bool numbered)
{
	unsigned int len = (xt ? TCP_RT_REC_LEN : TCP_RT_REC_LEN_BASE) +
			   (numbered ? TCP_RT_REC_LEN_SEQ : 0);
	ktime_t start = ns_to_ktime(start_us * NSEC_PER_USEC);
	struct rchan *chan = tcp_rt_log_chan;
	struct rchan_buf *buf;
	unsigned long flags;
	s64 real_ns;
	u64 seq = 0;
	char *rec;

	if (WARN_ON_ONCE(n > TCP_RT_REC_FIELDS_MAX))
		n = TCP_RT_REC_FIELDS_MAX;
	real_ns = ktime_to_ns(ktime_mono_to_real(start));

	local_irq_save(flags);
	if (static_branch_unlikely(&tcp_rt_log_text_off)) {
		if (tcp_rt_log_bin(sk, type, real_ns, fields, n, lc, xt,
				   numbered, 0, true))
			this_cpu_inc(tcp_rt_log_nr[type]);
		local_irq_restore(flags);
		return;
	}
	buf = *this_cpu_ptr(chan->buf);
	/* room for its longest form; a flight recorder always switches */
	rec = tcp_rt_relay_reserve(buf, len);
	if (unlikely(!rec)) {
		local_irq_restore(flags);
		return;
	}
	/* only now: a record that got no room takes no number */
	if (numbered)
		seq = (*this_cpu_ptr(&tcp_rt_log_seq))++;
	tcp_rt_relay_commit(buf, tcp_rt_format(rec, sk, type, real_ns, fields, n,
					       lc, xt, numbered, seq));
	if (static_branch_unlikely(&tcp_rt_log_bin_on))
		tcp_rt_log_bin(sk, type, real_ns, fields, n, lc, xt, numbered,
			       seq, false);
	local_irq_restore(flags);
	this_cpu_inc(tcp_rt_log_nr[type]);
}

/*
 * Two copies of the writer: the time breakdown's fields cost nothing to a
 * record without them (the same code as before they existed, the same
 * room reserved).  Each is two again, with and without seq: a record of a
 * connection that is not numbered costs one test of the flag more, and
 * nothing else.
 */
void tcp_rt_log_record(const struct sock *sk, enum tcp_rt_rec type,
		       u64 start_us, const u64 *fields, unsigned int n,
		       const struct tcp_rt_log_conn *lc)
{
	if (lc->numbered)
		tcp_rt_log_write(sk, type, start_us, fields, n, lc, NULL, true);
	else
		tcp_rt_log_write(sk, type, start_us, fields, n, lc, NULL, false);
}

void tcp_rt_log_record_bd(const struct sock *sk, enum tcp_rt_rec type,
			  u64 start_us, const u64 *fields, unsigned int n,
			  const struct tcp_rt_log_conn *lc,
			  const struct tcp_rt_ext_task *xt)
{
	if (lc->numbered)
		tcp_rt_log_write(sk, type, start_us, fields, n, lc, xt, true);
	else
		tcp_rt_log_write(sk, type, start_us, fields, n, lc, xt, false);
}

/* Records of @type written, on every CPU. */
u64 tcp_rt_log_records(enum tcp_rt_rec type)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu(tcp_rt_log_nr, cpu)[type];
	return sum;
}

/* The sub-buffers overwritten unread of the buffers rt-network-log reads. */
unsigned long tcp_rt_log_overwritten(void)
{
	if (tcp_rt_log_format == TCP_RT_LOG_BINARY)
		return tcp_rt_log_bin_overwritten();
	return atomic_long_read(&tcp_rt_log_overwrites);
}

/* The binary log's (log_format=both or binary). */
unsigned long tcp_rt_log_bin_overwritten(void)
{
	return atomic_long_read(&tcp_rt_log_bin_overwrites);
}

/* The binary log's records overwritten unread, exact (0: no binary log). */
u64 tcp_rt_log_bin_records_overwritten(void)
{
	return tcp_rt_relay_records_lost(tcp_rt_log_bin_chan);
}

/* The same, of @cpu's log only. */
u64 tcp_rt_log_bin_records_overwritten_cpu(unsigned int cpu)
{
	return tcp_rt_relay_records_lost_cpu(tcp_rt_log_bin_chan, cpu);
}

int tcp_rt_log_init(struct dentry *dir, unsigned int n_subbufs)
{
	BUILD_BUG_ON(TCP_RT_REC_LEN + TCP_RT_REC_LEN_SEQ >
		     TCP_RT_LOG_SUBBUF_SIZE);
	BUILD_BUG_ON(TCP_RT_BIN_LEN_MAX > TCP_RT_LOG_SUBBUF_SIZE);
	if (tcp_rt_ext_names_check())
		return -EINVAL;
	if (tcp_rt_log_format != TCP_RT_LOG_BINARY) {
		tcp_rt_log_chan = tcp_rt_relay_open("rt-network-log", dir,
						    TCP_RT_LOG_SUBBUF_SIZE,
						    n_subbufs,
						    &tcp_rt_log_callbacks,
						    false);
		if (!tcp_rt_log_chan) {
			pr_err("cannot create the rt-network-log relay channel\n");
			return -ENOMEM;
		}
	}
	if (tcp_rt_log_format == TCP_RT_LOG_TEXT)
		return 0;
	tcp_rt_log_bin_chan = tcp_rt_relay_open("rt-network-bin", dir,
						TCP_RT_LOG_SUBBUF_SIZE,
						n_subbufs,
						&tcp_rt_log_bin_callbacks, true);
	if (!tcp_rt_log_bin_chan) {
		pr_err("log_format=%s: cannot create the rt-network-bin relay channel\n",
		       tcp_rt_log_format_names[tcp_rt_log_format]);
		tcp_rt_log_exit();
		return -ENOMEM;
	}
	if (tcp_rt_log_format == TCP_RT_LOG_BINARY)
		static_branch_enable(&tcp_rt_log_text_off);
	else
		static_branch_enable(&tcp_rt_log_bin_on);
	return 0;
}

/* Once no record can be written any more (the hooks are gone). */
void tcp_rt_log_exit(void)
{
	static_branch_disable(&tcp_rt_log_bin_on);
	static_branch_disable(&tcp_rt_log_text_off);
	tcp_rt_relay_close(tcp_rt_log_bin_chan);
	tcp_rt_log_bin_chan = NULL;
	tcp_rt_relay_close(tcp_rt_log_chan);
	tcp_rt_log_chan = NULL;
}
