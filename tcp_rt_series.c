// SPDX-License-Identifier: GPL-2.0
/*
 * Fine-timescale series of the tracked ports, and of the whole host:
 * on-demand sampling runs in buckets of 100 us, 1 ms or 10 ms, and the
 * rt-network-series file.
 *
 * A run is started by writing 1 to the series_run parameter
 * (tcp_rt_main.c: tcp_rt_series_begin(), the engine's walk of the tasks
 * open then, tcp_rt_series_begun()).  It begins at the next wall-clock
 * multiple of the bucket width and ends by itself series_buckets buckets
 * later, when tcp_rt_main.c's delayed work retires it
 * (tcp_rt_series_end()): the hooks stop counting, the per-CPU arrays are
 * merged into one table and the table waits in tcp_rt_series_ready for one
 * reader, who takes it away on open (read-once, like the logs) and frees
 * it on release.
 *
 * What is counted comes two ways.  The engine hands over its tasks and
 * the data of tracked connections (tcp_rt_series_add(), _bytes()); the
 * hooks hand over segments, a tracked connection's or, in a run of the
 * whole host (series_host), any TCP connection's (tcp_rt_series_seg_in(),
 * _seg_out(), _conn()).  series_ext's measures of received segments (CE,
 * ECE, duplicates, active flows) need the receive hooks, which
 * tcp_rt_main.c attaches for the runs that count them.
 *
 * Cost outside a run: the hooks test tcp_rt_series_on (and, for untracked
 * connections, tcp_rt_series_host_on; for segments leaving,
 * tcp_rt_series_out_on), static keys, so each test is a no-op jump
 * patched in only while a run that needs it is active.
 *
 * Concurrency and what protects what:
 *   - tcp_rt_series_mutex serialises starting, stopping and retiring runs
 *     and guards tcp_rt_series_ready and tcp_rt_series_running.
 *   - The active run is published with RCU in tcp_rt_series_cur; the hooks
 *     count inside an RCU read-side section, and a run is retired only
 *     after a grace period, so no count can reach it once it is merged.
 *   - Counters are atomic_t in one array per CPU: the hooks of one CPU run
 *     in process and softirq context and may nest, and a hook preempted
 *     on PREEMPT_RT may finish on another CPU; atomics keep every count,
 *     and a CPU only ever writes to its own array's cache lines.
 *   - Those arrays exist for the online CPUs, not the possible ones (a
 *     host may have many more possible CPUs than it will ever bring up).
 *     tcp_rt_series_cpu_mutex guards tcp_rt_series_live, the runs whose
 *     arrays exist, and the writing of a run's cpu[] pointers: a run's
 *     arrays are taken for the online CPUs under cpus_read_lock(), which
 *     holds hotplug off, and the run joins the list before it is
 *     released; a CPU that comes online later gets its array from
 *     tcp_rt_series_cpu_prepare(), cpuhp's prepare stage, before it runs
 *     anything.  A run leaves the list before its arrays are merged.
 *     tcp_rt_series_cpu_mutex is innermost: taken under cpu_hotplug_lock
 *     (a run's preparation, the cpuhp callback) and under
 *     tcp_rt_series_mutex (retiring), nothing taken under it.  The
 *     callback does not take tcp_rt_series_mutex: static keys are
 *     switched under that one, and they take cpu_hotplug_lock.
 *   - A run's port slots are claimed with cmpxchg() and never released.
 *   - The active-flow table's entries are claimed with cmpxchg() and never
 *     released; an entry's marks are written only by the hooks of its
 *     socket, which run under the socket's lock, one at a time, and
 *     cleared by its close: a socket made later in its memory (the entry
 *     is its too) exists only once that one is gone.
 *   - The series_* settings (tcp_rt_params.c) are copied into a run when
 *     it starts; changing them affects the next run.
 *   - Starting and ending are serialised by their caller
 *     (tcp_rt_main.c's tcp_rt_ctl_mutex).
 */

#define pr_fmt(fmt) "tcp_rt: " fmt

#include <linux/atomic.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/hash.h>
#include <linux/jump_label.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/vmalloc.h>
#include <net/inet_ecn.h>
#include <net/tcp.h>

#include "include/tcp_rt.h"
#include "include/tcp_rt_compat.h"

/* Ports one run follows; events of further ports count in series_dropped. */
#define TCP_RT_SERIES_SLOTS	8
/* The most memory one run may take, per-CPU arrays included. */
#define TCP_RT_SERIES_MEM_MAX	(64UL << 20)
/* A field the run does not keep (run->col[]). */
#define TCP_RT_SER_OFF		0xff
/*
 * The active-flow table: 65536 sockets a run (1 MiB), each found within
 * 32 places of its hash.  A socket that finds none is not counted, and
 * status series_flows_missed says how many times that happened.
 */
#define TCP_RT_SERIES_FLOW_BITS	16
#define TCP_RT_SERIES_FLOW_PROBES 32

DEFINE_STATIC_KEY_FALSE(tcp_rt_series_on);
DEFINE_STATIC_KEY_FALSE(tcp_rt_series_host_on);
DEFINE_STATIC_KEY_FALSE(tcp_rt_series_out_on);

/* A socket that moved data in the run, and the last bucket it did so. */
struct tcp_rt_series_flow {
	unsigned long sk;	/* 0: free */
	u32 mark[2];		/* that bucket + 1: in its port's line, the host's */
};

struct tcp_rt_series_run {
	struct rcu_head rcu;
	struct list_head live;	/* in tcp_rt_series_live while it has arrays */
	atomic_long_t bytes;	/* what its arrays and flow table take */
	u32 gen;
	u32 width_us;
	u32 nbuckets;
	u32 nslots;		/* the ports' slots, then the host's */
	u32 nports;		/* slots 0 .. nports - 1 are ports' */
	int host;		/* the host's slot, or -1 */
	u32 ext;		/* series_ext's mask */
	u32 far_us;		/* series_far_us */
	u32 stride;		/* counters kept per slot and bucket */
	u8 col[TCP_RT_SER_MAX];	/* a field's counter, or TCP_RT_SER_OFF */
	u64 start_us;		/* tcp_clock_us() of bucket 0's start */
	u64 span_us;		/* nbuckets * width_us */
	u64 start_real_ns;	/* the same instant, wall clock */
	u32 key[TCP_RT_SERIES_SLOTS + 1];	/* 0: free */
	atomic_t initial[TCP_RT_SERIES_SLOTS];	/* tasks open at the start */
	/* [cpu][bucket][slot][stride] while running; NULL: not online */
	atomic_t **cpu;
	s32 *sum;		/* the same, merged, once retired */
	struct tcp_rt_series_flow *flows;	/* with series_ext's flows */
};

static DEFINE_MUTEX(tcp_rt_series_mutex);
static DEFINE_MUTEX(tcp_rt_series_cpu_mutex);
static LIST_HEAD(tcp_rt_series_live);
static int tcp_rt_series_cpuhp = -1;	/* our dynamic cpuhp state */
static struct tcp_rt_series_run __rcu *tcp_rt_series_cur;
static struct tcp_rt_series_run *tcp_rt_series_ready;
static bool tcp_rt_series_running;
static u32 tcp_rt_series_gen;

static atomic_long_t tcp_rt_series_nr_runs = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_series_nr_unread = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_series_nr_dropped = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_series_nr_flows_missed = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_series_nr_cpu_nomem = ATOMIC_LONG_INIT(0);

static size_t tcp_rt_series_cells(const struct tcp_rt_series_run *run)
{
	return (size_t)run->nbuckets * run->nslots * run->stride;
}

/* @run's arrays are no longer grown by CPUs coming online. */
static void tcp_rt_series_unlist(struct tcp_rt_series_run *run)
{
	mutex_lock(&tcp_rt_series_cpu_mutex);
	list_del_init(&run->live);
	mutex_unlock(&tcp_rt_series_cpu_mutex);
}

/* Called with @run unlisted. */
static void tcp_rt_series_free_cpu(struct tcp_rt_series_run *run)
{
	int cpu;

	if (!run->cpu)
		return;
	for_each_possible_cpu(cpu)
		vfree(run->cpu[cpu]);
	kvfree(run->cpu);
	run->cpu = NULL;
}

static void tcp_rt_series_free(struct tcp_rt_series_run *run)
{
	if (!run)
		return;
	tcp_rt_series_unlist(run);
	tcp_rt_series_free_cpu(run);
	vfree(run->flows);
	vfree(run->sum);
	kfree(run);
}

/* ------------------------------------------------------------------------
 * Counting, from the hooks
 */

/* The slot of @key in @run, claimed if new; -1 when all are taken. */
static int tcp_rt_series_slot(struct tcp_rt_series_run *run, u32 key)
{
	unsigned int i;

	for (i = 0; i < run->nports; i++) {
		u32 k = READ_ONCE(run->key[i]);

		if (k == key)
			return i;
		if (!k) {
			k = cmpxchg(&run->key[i], 0, key);
			if (!k || k == key)
				return i;
		}
	}
	return -1;
}

u32 tcp_rt_series_gen_active(void)
{
	struct tcp_rt_series_run *run;
	u32 gen = 0;

	rcu_read_lock();
	run = rcu_dereference(tcp_rt_series_cur);
	if (run)
		gen = run->gen;
	rcu_read_unlock();
	return gen;
}

/*
 * This CPU's counters of @run for the bucket of @now_us (tcp_clock_us()),
 * its slot 0, and the bucket's index; NULL outside the run.
 */
static atomic_t *tcp_rt_series_bucket(const struct tcp_rt_series_run *run,
				      u64 now_us, u32 *b)
{
	atomic_t *cpu;
	u64 off;

	if (now_us < run->start_us)
		return NULL;
	off = now_us - run->start_us;
	if (off >= run->span_us)
		return NULL;
	cpu = READ_ONCE(run->cpu[raw_smp_processor_id()]);
	if (unlikely(!cpu)) {
		/* online mid-run, and no memory was found for it */
		atomic_long_inc(&tcp_rt_series_nr_cpu_nomem);
		return NULL;
	}
	*b = div_u64(off, run->width_us);
	return cpu + (size_t)*b * run->nslots * run->stride;
}

/*
 * Under rcu_read_lock(): the run under way in *@run, and this CPU's
 * counters of the bucket now (its index in *@b); NULL outside a run.
 */
static atomic_t *tcp_rt_series_now(struct tcp_rt_series_run **run, u32 *b)
{
	*run = rcu_dereference(tcp_rt_series_cur);
	return *run ? tcp_rt_series_bucket(*run, tcp_clock_us(), b) : NULL;
}

/* The counters of @key's slot in @bucket, claimed if new; NULL if full. */
static atomic_t *tcp_rt_series_port(struct tcp_rt_series_run *run,
				    atomic_t *bucket, u32 key)
{
	int slot = tcp_rt_series_slot(run, key);

	if (slot < 0) {
		atomic_long_inc(&tcp_rt_series_nr_dropped);
		return NULL;
	}
	return bucket + slot * run->stride;
}

static inline void tcp_rt_series_put(const struct tcp_rt_series_run *run,
				     atomic_t *slot,
				     enum tcp_rt_series_field field, int n)
{
	u8 col = run->col[field];

	if (col != TCP_RT_SER_OFF && n)
		atomic_add(n, slot + col);
}

/* Bytes of @sk count as far: its min RTT, once known, is series_far_us+. */
static bool tcp_rt_series_far(const struct tcp_rt_series_run *run,
			      const struct sock *sk)
{
	u32 rtt = tcp_min_rtt(tcp_sk(sk));

	return rtt != ~0U && rtt >= run->far_us;
}

/*
 * @n bytes of @sk in @field (far_bytes_in or out) when the run keeps it
 * and @sk is far: the min RTT is read only then.
 */
static void tcp_rt_series_put_far(const struct tcp_rt_series_run *run,
				  atomic_t *slot,
				  enum tcp_rt_series_field field,
				  const struct sock *sk, u32 n)
{
	if (run->col[field] != TCP_RT_SER_OFF && n &&
	    tcp_rt_series_far(run, sk))
		atomic_add(n, slot + run->col[field]);
}

/*
 * @sk moved data in bucket @b: true the first time it does in that
 * bucket, for its port's line (@host false) or the host's.  The hooks of
 * one socket run one at a time, under its lock, in time order.
 */
static bool tcp_rt_series_flow(struct tcp_rt_series_run *run,
			       const struct sock *sk, u32 b, bool host)
{
	u32 mask = BIT(TCP_RT_SERIES_FLOW_BITS) - 1;
	u32 i = hash_ptr(sk, TCP_RT_SERIES_FLOW_BITS), n;
	unsigned long key = (unsigned long)sk;

	if (!run->flows)
		return false;
	for (n = 0; n < TCP_RT_SERIES_FLOW_PROBES; n++, i = (i + 1) & mask) {
		struct tcp_rt_series_flow *f = &run->flows[i];
		unsigned long k = READ_ONCE(f->sk);

		if (!k) {
			k = cmpxchg(&f->sk, 0, key);
			if (!k)
				k = key;
		}
		if (k != key)
			continue;
		if (READ_ONCE(f->mark[host]) == b + 1)
			return false;
		WRITE_ONCE(f->mark[host], b + 1);
		return true;
	}
	atomic_long_inc(&tcp_rt_series_nr_flows_missed);
	return false;
}

/*
 * @sk closes: its flow entry's marks are cleared, so that a socket made
 * later in its memory, which finds the entry as its own, is a flow of its
 * own (in the same bucket it would otherwise find the mark and not be
 * counted).  The entry stays: the next socket there takes it again, and
 * sockets one after another in one memory use one entry, not one each.
 */
void __tcp_rt_series_flow_end(const struct sock *sk)
{
	u32 mask = BIT(TCP_RT_SERIES_FLOW_BITS) - 1;
	u32 i = hash_ptr(sk, TCP_RT_SERIES_FLOW_BITS), n;
	unsigned long key = (unsigned long)sk;
	struct tcp_rt_series_run *run;

	rcu_read_lock();
	run = rcu_dereference(tcp_rt_series_cur);
	for (n = 0; run && run->flows && n < TCP_RT_SERIES_FLOW_PROBES;
	     n++, i = (i + 1) & mask) {
		unsigned long k = READ_ONCE(run->flows[i].sk);

		if (!k)
			break;
		if (k == key) {
			WRITE_ONCE(run->flows[i].mark[0], 0);
			WRITE_ONCE(run->flows[i].mark[1], 0);
			break;
		}
	}
	rcu_read_unlock();
}

/*
 * Count @n of @field for the port @key at @now_us (tcp_clock_us(); 0: now).
 * Only the open-task gauge counts before the first bucket: it is summed
 * from the run's start.
 *
 * Data and segments are counted at a clock read here rather than at the
 * socket's: tp->tcp_mstamp is refreshed once per transmit loop, and a
 * burst of segments sent in one loop would all land where it began.
 */
void __tcp_rt_series_add(u32 key, u64 now_us, enum tcp_rt_series_field field,
			 int n)
{
	struct tcp_rt_series_run *run;
	atomic_t *bucket, *slot;
	u32 b;

	if (!now_us)
		now_us = tcp_clock_us();
	rcu_read_lock();
	run = rcu_dereference(tcp_rt_series_cur);
	if (!run || now_us >= run->start_us + run->span_us)
		goto out;
	if (now_us < run->start_us) {
		int i;

		if (field != TCP_RT_SER_OPEN)
			goto out;
		i = tcp_rt_series_slot(run, key);
		if (i < 0)
			atomic_long_inc(&tcp_rt_series_nr_dropped);
		else
			atomic_add(n, &run->initial[i]);
		goto out;
	}
	bucket = tcp_rt_series_bucket(run, now_us, &b);
	slot = tcp_rt_series_port(run, bucket, key);
	if (slot)
		tcp_rt_series_put(run, slot, field, n);
out:
	rcu_read_unlock();
}

/* New data of tracked connection @key: @n bytes in (@out false) or out. */
void __tcp_rt_series_bytes(u32 key, const struct sock *sk, bool out, u32 n)
{
	struct tcp_rt_series_run *run;
	atomic_t *bucket, *slot;
	u32 b;

	rcu_read_lock();
	bucket = tcp_rt_series_now(&run, &b);
	if (!bucket)
		goto out;
	slot = tcp_rt_series_port(run, bucket, key);
	if (!slot)
		goto out;
	tcp_rt_series_put(run, slot, out ? TCP_RT_SER_BYTES_OUT :
					   TCP_RT_SER_BYTES_IN, n);
	tcp_rt_series_put_far(run, slot, out ? TCP_RT_SER_FAR_OUT :
					       TCP_RT_SER_FAR_IN, sk, n);
out:
	rcu_read_unlock();
}

/* What one received segment carries, for the series' measures. */
struct tcp_rt_series_in {
	u32 len;	/* data, SYN and FIN aside */
	u32 dup;	/* of it, data received before (below rcv_nxt) */
	u32 segs;	/* segments it stands for (GRO, backlog coalescing) */
	bool ce;	/* its IP header's ECN field says CE */
	bool ece;	/* ECE, with classic ECN negotiated */
};

/* The measures of a port's or the host's slot that both count alike. */
static void tcp_rt_series_in_common(struct tcp_rt_series_run *run,
				    atomic_t *slot,
				    const struct tcp_rt_series_in *in)
{
	u32 dup_segs = in->dup == in->len ? in->segs : 1;

	if (in->ce) {
		tcp_rt_series_put(run, slot, TCP_RT_SER_CE_BYTES, in->len);
		tcp_rt_series_put(run, slot, TCP_RT_SER_CE_SEGS, in->segs);
	}
	if (in->ece)
		tcp_rt_series_put(run, slot, TCP_RT_SER_ECE, in->segs);
	if (in->dup) {
		tcp_rt_series_put(run, slot, TCP_RT_SER_DUP_BYTES, in->dup);
		tcp_rt_series_put(run, slot, TCP_RT_SER_DUP_SEGS, dup_segs);
	}
}

/*
 * A segment arrived for @sk, before TCP handles it (rcv_nxt is what came
 * before it): @key's line (a tracked connection's; 0: none) counts what
 * the engine cannot see, the host's line all of it.  The host's bytes_in
 * is new data when it arrives, out of order or not.
 */
void __tcp_rt_series_seg_in(u32 key, const struct sock *sk,
			    const struct sk_buff *skb)
{
	const struct tcp_skb_cb *scb = TCP_SKB_CB(skb);
	const struct tcp_sock *tp = tcp_sk(sk);
	u32 seq = scb->seq + !!(scb->tcp_flags & TCPHDR_SYN);
	u32 end = scb->end_seq - !!(scb->tcp_flags & TCPHDR_FIN);
	u32 rcv_nxt = READ_ONCE(tp->rcv_nxt), b;
	struct tcp_rt_series_in in = {};
	struct tcp_rt_series_run *run;
	atomic_t *bucket, *slot;

	if (after(end, seq))
		in.len = end - seq;
	in.ece = (scb->tcp_flags & (TCPHDR_ECE | TCPHDR_SYN)) == TCPHDR_ECE &&
		 tcp_rt_ecn_classic(tp);
	if (!in.len && !in.ece)
		return;
	in.segs = max_t(u16, 1, skb_shinfo(skb)->gso_segs);
	if (in.len) {
		in.ce = INET_ECN_is_ce(scb->ip_dsfield);
		if (before(seq, rcv_nxt))
			in.dup = before(end, rcv_nxt) ? in.len : rcv_nxt - seq;
	}

	rcu_read_lock();
	bucket = tcp_rt_series_now(&run, &b);
	if (!bucket)
		goto out;
	if (key) {
		slot = tcp_rt_series_port(run, bucket, key);
		if (slot) {
			tcp_rt_series_in_common(run, slot, &in);
			if (in.len && tcp_rt_series_flow(run, sk, b, false))
				tcp_rt_series_put(run, slot, TCP_RT_SER_FLOWS, 1);
		}
	}
	if (run->host < 0)
		goto out;
	slot = bucket + run->host * run->stride;
	tcp_rt_series_in_common(run, slot, &in);
	if (!in.len)
		goto out;
	tcp_rt_series_put(run, slot, TCP_RT_SER_BYTES_IN, in.len - in.dup);
	tcp_rt_series_put(run, slot, TCP_RT_SER_SEGS_IN, in.segs);
	tcp_rt_series_put_far(run, slot, TCP_RT_SER_FAR_IN, sk,
			      in.len - in.dup);
	if (tcp_rt_series_flow(run, sk, b, true))
		tcp_rt_series_put(run, slot, TCP_RT_SER_FLOWS, 1);
out:
	rcu_read_unlock();
}

/*
 * A segment of @sk leaves with @len bytes of new data (0: a retransmission,
 * or a FIN or SYN alone): @key's line counts the flow, the host's line
 * what the engine counts for a tracked port (tcp_rt_task.c).
 */
void __tcp_rt_series_seg_out(u32 key, const struct sock *sk,
			     const struct sk_buff *skb, u32 len)
{
	const struct tcp_skb_cb *scb = TCP_SKB_CB(skb);
	const struct tcp_sock *tp = tcp_sk(sk);
	struct tcp_rt_series_run *run;
	atomic_t *bucket, *slot;
	bool data, retrans;
	u32 b;

	/* a SYN: the handshake's, Fast Open's data aside, counts nowhere */
	if (unlikely(scb->tcp_flags & TCPHDR_SYN)) {
		if (len <= 1)
			return;
		len--;
	}
	retrans = !len && before(scb->seq, tp->snd_nxt);
	if (!len && !retrans)
		return;
	data = len || after(scb->end_seq - !!(scb->tcp_flags & TCPHDR_FIN),
			    scb->seq + !!(scb->tcp_flags & TCPHDR_SYN));
	rcu_read_lock();
	bucket = tcp_rt_series_now(&run, &b);
	if (!bucket)
		goto out;
	if (key && data && run->flows) {
		slot = tcp_rt_series_port(run, bucket, key);
		if (slot && tcp_rt_series_flow(run, sk, b, false))
			tcp_rt_series_put(run, slot, TCP_RT_SER_FLOWS, 1);
	}
	if (run->host < 0)
		goto out;
	slot = bucket + run->host * run->stride;
	if (len) {
		tcp_rt_series_put(run, slot, TCP_RT_SER_BYTES_OUT, len);
		tcp_rt_series_put(run, slot, TCP_RT_SER_SEGS_OUT,
				  tcp_skb_pcount(skb));
		tcp_rt_series_put_far(run, slot, TCP_RT_SER_FAR_OUT, sk, len);
	} else {
		tcp_rt_series_put(run, slot, TCP_RT_SER_RETRANS,
				  tcp_skb_pcount(skb));
	}
	if (data && tcp_rt_series_flow(run, sk, b, true))
		tcp_rt_series_put(run, slot, TCP_RT_SER_FLOWS, 1);
out:
	rcu_read_unlock();
}

/* A TCP connection of the host was established, or one closed. */
void __tcp_rt_series_conn(bool estab)
{
	struct tcp_rt_series_run *run;
	atomic_t *bucket;
	u32 b;

	rcu_read_lock();
	bucket = tcp_rt_series_now(&run, &b);
	if (bucket && run->host >= 0)
		tcp_rt_series_put(run, bucket + run->host * run->stride,
				  estab ? TCP_RT_SER_ESTAB : TCP_RT_SER_CLOSED,
				  1);
	rcu_read_unlock();
}

/* A task open when run @gen started, found by the table walk or a hook. */
void tcp_rt_series_initial(u32 gen, u32 key)
{
	struct tcp_rt_series_run *run;
	int slot;

	rcu_read_lock();
	run = rcu_dereference(tcp_rt_series_cur);
	if (run && run->gen == gen) {
		slot = tcp_rt_series_slot(run, key);
		if (slot < 0)
			atomic_long_inc(&tcp_rt_series_nr_dropped);
		else
			atomic_inc(&run->initial[slot]);
	}
	rcu_read_unlock();
}

/* ------------------------------------------------------------------------
 * Runs
 */

/*
 * The fields @run keeps, in the order of a line: the base ones, then
 * those of series_ext; a field kept by none is TCP_RT_SER_OFF.
 */
static void tcp_rt_series_columns(struct tcp_rt_series_run *run)
{
	unsigned int f, n = 0;

	for (f = 0; f < TCP_RT_SER_MAX; f++)
		run->col[f] = f < TCP_RT_SER_BASE ||
			      run->ext & BIT(f - TCP_RT_SER_BASE) ?
			      n++ : TCP_RT_SER_OFF;
	run->stride = n;
}

/* The settings a run takes when it starts (tcp_rt_params.c). */
static struct tcp_rt_series_run *tcp_rt_series_config(void)
{
	struct tcp_rt_series_run *run;

	run = kzalloc(sizeof(*run), GFP_KERNEL);
	if (!run)
		return NULL;
	INIT_LIST_HEAD(&run->live);
	run->width_us = READ_ONCE(tcp_rt_series_us);
	run->nbuckets = READ_ONCE(tcp_rt_series_buckets);
	run->ext = READ_ONCE(tcp_rt_series_ext);
	run->far_us = READ_ONCE(tcp_rt_series_far_us);
	run->nports = clamp(tcp_rt_ports_configured(), 1U,
			    (unsigned int)TCP_RT_SERIES_SLOTS);
	run->nslots = run->nports;
	run->host = -1;
	if (READ_ONCE(tcp_rt_series_host)) {
		run->host = run->nslots++;
		run->key[run->host] = TCP_RT_KEY_HOST;
	}
	run->span_us = (u64)run->width_us * run->nbuckets;
	tcp_rt_series_columns(run);
	return run;
}

static size_t tcp_rt_series_flows_bytes(const struct tcp_rt_series_run *run)
{
	if (!(run->ext & BIT(TCP_RT_SER_FLOWS - TCP_RT_SER_BASE)))
		return 0;
	return sizeof(struct tcp_rt_series_flow) << TCP_RT_SERIES_FLOW_BITS;
}

/* Bytes of one CPU's counters. */
static size_t tcp_rt_series_cpu_bytes(const struct tcp_rt_series_run *run)
{
	return tcp_rt_series_cells(run) * sizeof(atomic_t);
}

/*
 * Bytes @run takes at most on @ncpus CPUs: their counters, and at its end
 * the merged table beside them, and the active-flow table.
 */
static unsigned long tcp_rt_series_mem(const struct tcp_rt_series_run *run,
				       unsigned int ncpus)
{
	return tcp_rt_series_cpu_bytes(run) * (ncpus + 1UL) +
	       tcp_rt_series_flows_bytes(run);
}

/* @cpu's counters of @run, zeroed on @cpu's node. */
static int tcp_rt_series_alloc_one(struct tcp_rt_series_run *run,
				   unsigned int cpu)
{
	size_t bytes = tcp_rt_series_cpu_bytes(run);
	atomic_t *a;

	lockdep_assert_held(&tcp_rt_series_cpu_mutex);
	a = vzalloc_node(bytes, cpu_to_node(cpu));
	if (!a)
		return -ENOMEM;
	WRITE_ONCE(run->cpu[cpu], a);
	atomic_long_add(bytes, &run->bytes);
	return 0;
}

/*
 * Under cpus_read_lock() (lockdep_assert_cpus_held() is not exported):
 * the online CPUs' counters, and the run listed so that a CPU coming
 * online gets its own.
 */
static int tcp_rt_series_alloc(struct tcp_rt_series_run *run)
{
	unsigned int cpu;
	int err = 0;

	run->cpu = kvcalloc(nr_cpu_ids, sizeof(*run->cpu), GFP_KERNEL);
	if (!run->cpu)
		return -ENOMEM;
	mutex_lock(&tcp_rt_series_cpu_mutex);
	for_each_online_cpu(cpu) {
		err = tcp_rt_series_alloc_one(run, cpu);
		if (err)
			break;
	}
	if (!err)
		list_add(&run->live, &tcp_rt_series_live);
	mutex_unlock(&tcp_rt_series_cpu_mutex);
	if (err)
		return err;
	if (tcp_rt_series_flows_bytes(run)) {
		run->flows = vzalloc(tcp_rt_series_flows_bytes(run));
		if (!run->flows)
			return -ENOMEM;
		atomic_long_add(tcp_rt_series_flows_bytes(run), &run->bytes);
	}
	return 0;
}

/*
 * cpuhp's prepare stage, on another CPU before @cpu runs anything: its
 * counters in each run that has arrays.  A CPU is never refused: without
 * memory, its events are counted in series_cpu_nomem instead.
 */
static int tcp_rt_series_cpu_prepare(unsigned int cpu)
{
	struct tcp_rt_series_run *run;

	mutex_lock(&tcp_rt_series_cpu_mutex);
	list_for_each_entry(run, &tcp_rt_series_live, live)
		if (!run->cpu[cpu] && tcp_rt_series_alloc_one(run, cpu))
			pr_warn("series: CPU %u came online mid-run with no memory for its counters; its events are counted in series_cpu_nomem\n",
				cpu);
	mutex_unlock(&tcp_rt_series_cpu_mutex);
	return 0;
}

/* Bucket 0 starts at the next multiple of the width, in wall-clock time. */
static void tcp_rt_series_align(struct tcp_rt_series_run *run)
{
	u64 mono = ktime_get_ns();
	u64 real = ktime_to_ns(ktime_mono_to_real(ns_to_ktime(mono)));
	u64 width_ns = (u64)run->width_us * NSEC_PER_USEC;
	u64 start = (div64_u64(real, width_ns) + 1) * width_ns;

	run->start_real_ns = start;
	run->start_us = div_u64(mono + (start - real), NSEC_PER_USEC);
}

/*
 * A run as the series_* settings say now, read once (a write racing the
 * start cannot make the hooks attached and the run disagree), its memory
 * taken: or an ERR_PTR, said in one line.  *@rcv: it needs the receive
 * hooks, which the caller attaches before tcp_rt_series_begin().
 */
struct tcp_rt_series_run *tcp_rt_series_prepare(bool *rcv)
{
	struct tcp_rt_series_run *run;
	unsigned int ncpus;
	unsigned long bytes;
	int err;

	run = tcp_rt_series_config();
	if (!run)
		return ERR_PTR(-ENOMEM);
	/* the CPUs counted are those the arrays are taken for */
	cpus_read_lock();
	ncpus = num_online_cpus();
	bytes = tcp_rt_series_mem(run, ncpus);
	if (bytes > TCP_RT_SERIES_MEM_MAX) {
		pr_err("series_run: %u buckets x %u lines x %u counters on %u online CPUs need %lu MiB (%zu KiB a CPU), more than %lu; use fewer series_buckets, ports or series_ext measures\n",
		       run->nbuckets, run->nslots, run->stride, ncpus,
		       DIV_ROUND_UP(bytes, 1UL << 20),
		       DIV_ROUND_UP(tcp_rt_series_cpu_bytes(run), 1024),
		       TCP_RT_SERIES_MEM_MAX >> 20);
		err = -EINVAL;
	} else {
		err = tcp_rt_series_alloc(run);
		if (err)
			pr_err("series_run: no memory for %u buckets x %u lines\n",
			       run->nbuckets, run->nslots);
	}
	cpus_read_unlock();
	if (err) {
		tcp_rt_series_free(run);
		return ERR_PTR(err);
	}
	*rcv = run->host >= 0 || run->ext & TCP_RT_SER_EXT_RCV;
	return run;
}

/* A run prepared and not begun. */
void tcp_rt_series_discard(struct tcp_rt_series_run *run)
{
	tcp_rt_series_free(run);
}

/*
 * Begin @run (tcp_rt_series_prepare()'s, taken over: freed on error):
 * from its return the hooks count into it.  The caller then adds the
 * tasks open now (tcp_rt_series_initial()) and calls
 * tcp_rt_series_begun().
 */
int tcp_rt_series_begin(struct tcp_rt_series_run *run, u32 *gen)
{
	int err = 0;

	mutex_lock(&tcp_rt_series_mutex);
	if (tcp_rt_series_running) {
		pr_err("series_run: a run is in progress; write 0 to end it\n");
		tcp_rt_series_free(run);
		err = -EBUSY;
		goto out;
	}

	/* The previous run's table goes, read or not. */
	if (tcp_rt_series_ready) {
		atomic_long_inc(&tcp_rt_series_nr_unread);
		tcp_rt_series_free(tcp_rt_series_ready);
		tcp_rt_series_ready = NULL;
	}

	run->gen = ++tcp_rt_series_gen ? : ++tcp_rt_series_gen;
	tcp_rt_series_align(run);
	rcu_assign_pointer(tcp_rt_series_cur, run);
	static_branch_enable(&tcp_rt_series_on);
	if (run->host >= 0)
		static_branch_enable(&tcp_rt_series_host_on);
	if (run->host >= 0 || run->flows)
		static_branch_enable(&tcp_rt_series_out_on);
	*gen = run->gen;
out:
	mutex_unlock(&tcp_rt_series_mutex);
	return err;
}

/*
 * The run begun last is under way: it is said to run once bucket 0
 * began, so that what the writer, or whoever sees series_run read 1, does
 * next is counted.  Returns the jiffies until its end, when the caller
 * calls tcp_rt_series_end().
 */
unsigned long tcp_rt_series_begun(void)
{
	struct tcp_rt_series_run *run;
	u64 now, end;

	mutex_lock(&tcp_rt_series_mutex);
	run = rcu_dereference_protected(tcp_rt_series_cur,
					lockdep_is_held(&tcp_rt_series_mutex));
	atomic_long_inc(&tcp_rt_series_nr_runs);
	now = tcp_clock_us();
	if (now < run->start_us)
		fsleep(run->start_us - now);
	WRITE_ONCE(tcp_rt_series_running, true);
	/* the walk of the open tasks may have outlasted a short run */
	end = run->start_us + run->span_us;
	now = tcp_clock_us();
	mutex_unlock(&tcp_rt_series_mutex);
	return now < end ? usecs_to_jiffies(end - now) + 1 : 1;
}

/* Sum every CPU's counts; the open gauge becomes a running total. */
static void tcp_rt_series_merge(struct tcp_rt_series_run *run)
{
	size_t i, cells = tcp_rt_series_cells(run);
	unsigned int b, s;
	int cpu;

	for_each_possible_cpu(cpu) {
		if (!run->cpu[cpu])	/* never online in the run */
			continue;
		for (i = 0; i < cells; i++)
			run->sum[i] += atomic_read(&run->cpu[cpu][i]);
	}

	for (s = 0; s < run->nports; s++) {
		s32 open = atomic_read(&run->initial[s]);

		for (b = 0; b < run->nbuckets; b++) {
			s32 *v = run->sum + ((size_t)b * run->nslots + s) *
					    run->stride;

			open += v[TCP_RT_SER_OPEN];
			v[TCP_RT_SER_OPEN] = open;
		}
	}
}

/* Called with tcp_rt_series_mutex held. */
static void tcp_rt_series_retire(struct tcp_rt_series_run *run)
{
	RCU_INIT_POINTER(tcp_rt_series_cur, NULL);
	static_branch_disable(&tcp_rt_series_out_on);
	static_branch_disable(&tcp_rt_series_host_on);
	static_branch_disable(&tcp_rt_series_on);
	/* Every hook that found the run has finished counting. */
	synchronize_rcu();
	/* and no CPU coming online adds an array to it */
	tcp_rt_series_unlist(run);

	/* Truncated when ended early: the buckets that began. */
	run->nbuckets = min_t(u64, run->nbuckets,
			      div_u64(max_t(s64, tcp_clock_us() - run->start_us, 0) +
				      run->width_us - 1, run->width_us));
	run->sum = vzalloc(array_size(tcp_rt_series_cells(run), sizeof(s32)));
	if (run->sum) {
		tcp_rt_series_merge(run);
	} else {
		pr_err("series: no memory to merge the run; its counts are lost\n");
		atomic_long_inc(&tcp_rt_series_nr_unread);
	}
	tcp_rt_series_free_cpu(run);
	vfree(run->flows);
	run->flows = NULL;
	if (run->sum)
		tcp_rt_series_ready = run;
	else
		tcp_rt_series_free(run);
	WRITE_ONCE(tcp_rt_series_running, false);
}

/*
 * End the run: at once (@now), or only once its last bucket is over (the
 * caller's timer, which may be early, late or stale).  Returns the
 * jiffies until its end if it goes on, 0 once no run runs; its table is
 * then complete.
 */
unsigned long tcp_rt_series_end(bool now)
{
	struct tcp_rt_series_run *run;
	unsigned long left = 0;
	u64 t = tcp_clock_us();

	mutex_lock(&tcp_rt_series_mutex);
	run = rcu_dereference_protected(tcp_rt_series_cur,
					lockdep_is_held(&tcp_rt_series_mutex));
	if (run && !now && t < run->start_us + run->span_us)
		left = usecs_to_jiffies(min_t(u64, run->start_us +
					      run->span_us - t, UINT_MAX)) + 1;
	else if (run)
		tcp_rt_series_retire(run);
	mutex_unlock(&tcp_rt_series_mutex);
	return left;
}

bool tcp_rt_series_is_running(void)
{
	return READ_ONCE(tcp_rt_series_running);
}

/* ------------------------------------------------------------------------
 * rt-network-series
 */

static void *tcp_rt_series_seq_start(struct seq_file *m, loff_t *pos)
{
	const struct tcp_rt_series_run *run = m->private;

	if (!run || *pos >= (loff_t)run->nbuckets * run->nslots)
		return NULL;
	return pos;
}

static void *tcp_rt_series_seq_next(struct seq_file *m, void *v, loff_t *pos)
{
	++*pos;
	return tcp_rt_series_seq_start(m, pos);
}

static void tcp_rt_series_seq_stop(struct seq_file *m, void *v)
{
}

static bool tcp_rt_series_empty(const struct tcp_rt_series_run *run,
				const s32 *v)
{
	unsigned int i;

	for (i = 0; i < run->stride; i++)
		if (v[i])
			return false;
	return true;
}

/*
 * One line per port (and the host) per bucket that saw an event or had a
 * task open: the base fields, then series_ext's as " name=value".
 */
static int tcp_rt_series_seq_show(struct seq_file *m, void *v)
{
	const struct tcp_rt_series_run *run = m->private;
	loff_t pos = *(loff_t *)v;
	u32 b = div_u64(pos, run->nslots), s = pos - (loff_t)b * run->nslots;
	const s32 *val = run->sum + (size_t)pos * run->stride;
	u32 key = run->key[s];
	struct timespec64 ts;
	unsigned int f;

	if (!key || tcp_rt_series_empty(run, val))
		return 0;
	ts = ns_to_timespec64(run->start_real_ns +
			      (u64)b * run->width_us * NSEC_PER_USEC);
	seq_printf(m, "%lld %06ld ", (long long)ts.tv_sec,
		   ts.tv_nsec / NSEC_PER_USEC);
	if (key & TCP_RT_KEY_HOST)
		seq_putc(m, '*');
	else
		seq_printf(m, "%s%u", key & TCP_RT_KEY_PEER ? "P" : "",
			   key & 0xffff);
	for (f = 0; f < TCP_RT_SER_BASE; f++)
		seq_printf(m, " %d", val[f]);
	for (; f < TCP_RT_SER_MAX; f++)
		if (run->col[f] != TCP_RT_SER_OFF)
			seq_printf(m, " %s=%d",
				   tcp_rt_series_ext_names[f - TCP_RT_SER_BASE],
				   val[run->col[f]]);
	seq_putc(m, '\n');
	return 0;
}

static const struct seq_operations tcp_rt_series_seq_ops = {
	.start	= tcp_rt_series_seq_start,
	.next	= tcp_rt_series_seq_next,
	.stop	= tcp_rt_series_seq_stop,
	.show	= tcp_rt_series_seq_show,
};

/* The reader takes the finished run: the next open finds nothing. */
static int tcp_rt_series_open(struct inode *inode, struct file *file)
{
	struct seq_file *m;
	int err;

	err = seq_open(file, &tcp_rt_series_seq_ops);
	if (err)
		return err;
	m = file->private_data;
	mutex_lock(&tcp_rt_series_mutex);
	m->private = tcp_rt_series_ready;
	tcp_rt_series_ready = NULL;
	mutex_unlock(&tcp_rt_series_mutex);
	return 0;
}

static int tcp_rt_series_release(struct inode *inode, struct file *file)
{
	struct seq_file *m = file->private_data;

	tcp_rt_series_free(m->private);
	return seq_release(inode, file);
}

static const struct file_operations tcp_rt_series_fops = {
	.owner		= THIS_MODULE,
	.open		= tcp_rt_series_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= tcp_rt_series_release,
};

/* What the run under way takes now; 0 outside a run. */
static long tcp_rt_series_cur_bytes(void)
{
	const struct tcp_rt_series_run *run;
	long bytes = 0;

	rcu_read_lock();
	run = rcu_dereference(tcp_rt_series_cur);
	if (run)
		bytes = atomic_long_read(&run->bytes);
	rcu_read_unlock();
	return bytes;
}

void tcp_rt_series_status(struct seq_file *m)
{
	seq_printf(m, "series_runs %ld\n",
		   atomic_long_read(&tcp_rt_series_nr_runs));
	seq_printf(m, "series_unread %ld\n",
		   atomic_long_read(&tcp_rt_series_nr_unread));
	seq_printf(m, "series_dropped %ld\n",
		   atomic_long_read(&tcp_rt_series_nr_dropped));
	seq_printf(m, "series_flows_missed %ld\n",
		   atomic_long_read(&tcp_rt_series_nr_flows_missed));
	seq_printf(m, "series_cpu_nomem %ld\n",
		   atomic_long_read(&tcp_rt_series_nr_cpu_nomem));
	seq_printf(m, "series_bytes %ld\n", tcp_rt_series_cur_bytes());
}

/*
 * Before any run can be prepared: CPUs coming online get their counters
 * in the runs under way.  Returns 0 or the error, said in one line.
 */
int tcp_rt_series_init(struct dentry *dir)
{
	int ret;

	ret = cpuhp_setup_state_nocalls(CPUHP_BP_PREPARE_DYN,
					"net/tcp_rt:series_prepare",
					tcp_rt_series_cpu_prepare, NULL);
	if (ret < 0) {
		pr_err("series: no CPU hotplug state for the runs' counters (%d)\n",
		       ret);
		return ret;
	}
	tcp_rt_series_cpuhp = ret;
	debugfs_create_file("rt-network-series", 0400, dir, NULL,
			    &tcp_rt_series_fops);
	return 0;
}

/*
 * After the hooks are gone and the file removed (no reader: it pins us),
 * and no run can start any more (tcp_rt_ctl_exit()).
 */
void tcp_rt_series_exit(void)
{
	tcp_rt_series_end(true);
	mutex_lock(&tcp_rt_series_mutex);
	if (tcp_rt_series_ready)
		pr_info("series: unloaded with a run's table never read\n");
	tcp_rt_series_free(tcp_rt_series_ready);
	tcp_rt_series_ready = NULL;
	mutex_unlock(&tcp_rt_series_mutex);
	if (tcp_rt_series_cpuhp >= 0)
		cpuhp_remove_state_nocalls(tcp_rt_series_cpuhp);
	tcp_rt_series_cpuhp = -1;
}
