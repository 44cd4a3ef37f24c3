// SPDX-License-Identifier: GPL-2.0
/*
 * The task engine: the tracked connections and the state machine that cuts
 * each into tasks, one request and its response, by following sequence
 * numbers only (docs/records.md has the definitions).  The hooks
 * (tcp_rt_hooks.c) hand it the kernel's events - a connection established
 * or closed, a segment sent, an ACK processed or data received - and it
 * hands finished tasks and connection events to the sinks: the records
 * (tcp_rt_log.c), the stats (tcp_rt_stats.c) and the series
 * (tcp_rt_series.c).  It knows nothing of text, of stats tables or of
 * series buckets, and no sink calls back into it.
 *
 * Concurrency and what protects what:
 *   - Per-connection state (struct tcp_rt_conn) is only touched from the
 *     hooks, and each of them runs with the socket lock held (owned by a
 *     process or spinlocked in softirq), so one connection's state is never
 *     updated concurrently.  It is found in a fixed table of RCU hash
 *     chains keyed by the socket pointer: a chain is changed under its own
 *     bit spinlock (tcp_rt_table_locks) with interrupts off, lookups run
 *     under RCU and the state is freed with call_rcu(), so a lookup never
 *     sees freed memory.  Nothing the hooks do allocates or takes a lock
 *     that sleeps on PREEMPT_RT: states come from per-CPU pools (raw
 *     spinlocks) that a work item refills in process context.
 *   - Hot counters are per CPU; rare ones (alloc_failed, pool_empty,
 *     client_cut, conns_sampled_out, fastopen_missed, released,
 *     released_open) are atomics.
 *   - Whether a connection is logged (log_sample), and the extension
 *     fields its records end with (log_ext, whether they are numbered
 *     included), are decided once, before it is published in the table,
 *     and only read after.  The numbers are the log's (tcp_rt_log.c).
 *   - The time breakdown's state (struct tcp_rt_bd) is per connection,
 *     changed by its hooks only, the two that see the application's reads
 *     and writes included: they too run with the socket lock held.
 *   - A connection's series_state is claimed by cmpxchg() when a series
 *     run starts, then changed by its hooks only (see "open-task gauge");
 *     the series counters are tcp_rt_series.c's.
 *   - Release (deactivate=2) is serialised by tcp_rt_release_mutex, which
 *     also guards tcp_rt_release_live.  It touches a connection's state as
 *     a softirq hook would: under the socket's spinlock, with no owner.
 *   - Each tracked connection holds a module reference, so the module can
 *     only go away once no state is left.
 */

#define pr_fmt(fmt) "tcp_rt: " fmt

#include <linux/atomic.h>
#include <linux/bitmap.h>
#include <linux/delay.h>
#include <linux/error-injection.h>
#include <linux/hash.h>
#include <linux/jhash.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rculist.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <net/inet_sock.h>
#include <net/ipv6.h>
#include <net/tcp.h>
/* after what defines cpu_relax(), which it uses and does not include (6.12) */
#include <linux/bit_spinlock.h>

#include "include/tcp_rt.h"
#include "include/tcp_rt_compat.h"

enum tcp_rt_role {
	TCP_RT_SERVER,
	TCP_RT_CLIENT,
};

enum tcp_rt_phase {
	TCP_RT_IDLE,		/* no task open */
	TCP_RT_REQUEST,		/* request flowing (in for a server) */
	TCP_RT_RESPONSE,	/* response flowing */
};

/*
 * The time breakdown of a connection's tasks (log_ext's TCP_RT_EXT_BD
 * fields; docs/records.md defines them).  Times are tcp_clock_us() (the
 * read and write hooks) or the hooks' tp->tcp_mstamp: the same clock.
 *
 * The parts of process time come from two stamps: the write candidate,
 * the start of the first write call of the task that queued data (a call
 * that queued nothing - write_seq not past w_seq at the next call - is
 * replaced), and the last read that consumed data before it.  The
 * transfer (a server's download, a client's upload) is accounted at every
 * hook of the connection: the interval since the previous one goes to
 * what the kernel's chronograph holds at this one (RWND or SNDBUF
 * limited), or, when everything written was sent at the previous one, to
 * app-limited time pending until the application writes again (then it
 * was waited for: committed; else it was the network's).
 */
enum tcp_rt_xf {
	TCP_RT_XF_RWND,
	TCP_RT_XF_SNDBUF,
	TCP_RT_XF_APP,
	TCP_RT_XF_MAX,
};

enum tcp_rt_part {
	TCP_RT_PART_RQ,
	TCP_RT_PART_APP,
	TCP_RT_PART_SQ,
	TCP_RT_PART_MAX,
};

struct tcp_rt_bd {
	/*
	 * server: the task's last read that consumed data; client: the read
	 * that consumed all of the response so far (0: none)
	 */
	u64 rd_us;
	u64 w_us;		/* the write candidate's start */
	u64 w_rd_us;		/* rd_us when it was taken */
	u64 xf_last;		/* the transfer account's last hook */
	u32 copied;		/* tp->copied_seq at the last read */
	u32 w_seq;		/* tp->write_seq before the candidate */
	u32 w_rd_seq;		/* copied when it was taken */
	u32 xf_written;		/* tp->write_seq at the last hook */
	u32 xf[TCP_RT_XF_MAX];	/* µs, committed */
	u32 xf_pending;		/* app-limited µs not yet committed */
	u32 xf_snap[TCP_RT_XF_MAX];	/* xf at T3 (server), S1 (client) */
	u32 part[TCP_RT_PART_MAX];	/* the task's, once known */
	u32 gen;		/* tcp_rt_bd_gen when established */
	u16 mask;		/* its records' TCP_RT_EXT_BD fields */
	u8 w_set;		/* a write candidate is held */
	u8 xf_on;		/* the transfer is accounted */
	u8 xf_idle;		/* everything written was sent at xf_last */
	u8 xf_blocked;		/* the application waited for room then */
};

/*
 * Times are tcp_clock_us(); t1..t3 are offsets from t0, saturated at
 * about 71 minutes.  Server: T0..T3 of the spec.  Client: t0 = S0,
 * t1 = S1, t2 = F, t3 = L.  Sequence numbers exclude SYN and FIN.
 *
 * Out-of-order arrival is judged on rcv_ooopack from ooo_mark, the moment
 * the task's input could begin: a server's next request may arrive as
 * soon as its response starts, so segments of it can be queued out of
 * order before its first in-order byte opens the task.  A client's input
 * (the response) can only follow its request.
 */
struct tcp_rt_conn {
	struct hlist_node node;
	const struct sock *sk;		/* key; only compared once freed */
	u64 estab_us;
	u64 t0;
	u32 t1, t2, t3;
	u64 rcv_bytes;		/* in-order data received since established */
	u64 snd_bytes;		/* new data sent since established */
	u64 task_rcv;		/* rcv_bytes at the task's start */
	u64 task_snd;		/* snd_bytes at the task's request/response */
	u32 rcv_data;		/* end of the in-order data received (seq) */
	u32 snd_data;		/* end of the new data sent (seq) */
	u32 snd_una;		/* last acknowledgment seen */
	u32 retrans_base;	/* tp->total_retrans when established */
	u32 task_retrans;
	u32 ooo_mark;		/* tp->rcv_ooopack when the task's input began */
	u32 task_segs;		/* tp->data_segs_out at the task's start */
	u32 task_min_rtt;
	u32 conn_min_rtt;
	u32 task_seq;
	u32 key;		/* the port it counts under (stats, series) */
	u32 segs_in;		/* tp->data_segs_in when data last came in */
	u32 series_state;	/* series run generation << 1 | task open */
	u8 role;
	u8 phase;
	u8 req_ooo;		/* a server's request came out of order */
	u8 logged;		/* its records go to the logs (log_sample) */
	struct rcu_head rcu;
	/* log_ext as established: what its records carry of it */
	struct tcp_rt_log_conn log;
	struct tcp_rt_bd bd;
};

/*
 * The connection table: a fixed array of RCU hash chains, sized at load.
 * It is written from the state-change tracepoint, where preemption is off
 * and, on PREEMPT_RT, neither an allocation nor a sleeping lock may be
 * taken: so no rhashtable (its bucket lock disables bottom halves, a
 * sleeping lock on RT, and it may allocate to grow).  A chain is locked by
 * its own bit spinlock, bit i of tcp_rt_table_locks for chain i, with
 * interrupts off, as the tracepoint runs in process and softirq context
 * alike; lookups take no lock.  (Not hlist_bl, whose lock bit lives in the
 * head: its RCU accessors fail sparse's address-space check.)  Past
 * max_tracked / TCP_RT_TABLE_LOAD connections per bucket (max_tracked
 * raised after load) chains only grow longer.
 */
#define TCP_RT_TABLE_LOAD	4
#define TCP_RT_TABLE_MIN	1024U
#define TCP_RT_TABLE_MAX	BIT(22)

static struct hlist_head *tcp_rt_table __read_mostly;
static unsigned long *tcp_rt_table_locks __read_mostly;
static unsigned int tcp_rt_table_bits __read_mostly;

/*
 * The key is a pointer, of kernel memory no peer chooses: a multiplicative
 * hash of it spreads it as well as jhash would, at a fraction of the cost,
 * on each of the few lookups every segment of a tracked connection makes.
 */
static inline u32 tcp_rt_bucket(const struct sock *sk)
{
	return hash_ptr(sk, tcp_rt_table_bits);
}

static struct kmem_cache *tcp_rt_conn_cache __read_mostly;
static atomic_t tcp_rt_tracked = ATOMIC_INIT(0);
static atomic_long_t tcp_rt_alloc_failed = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_pool_empty = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_client_cut = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_conns_sampled_out = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_fastopen_missed = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_released = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_released_open = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_bd_early_write = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_bd_no_write = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_bd_clamped = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_bd_unread = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_bd_partial = ATOMIC_LONG_INIT(0);
static DEFINE_PER_CPU(u64, tcp_rt_records_sampled_out);

/* Every caller holds rcu_read_lock(): no second one inside. */
static struct tcp_rt_conn *tcp_rt_conn_find(const struct sock *sk)
{
	struct tcp_rt_conn *c;

	hlist_for_each_entry_rcu(c, &tcp_rt_table[tcp_rt_bucket(sk)], node)
		if (c->sk == sk)
			return c;
	return NULL;
}

/* Publish @c, unless its socket is in the table already. */
static bool tcp_rt_conn_insert(struct tcp_rt_conn *c)
{
	u32 b = tcp_rt_bucket(c->sk);
	struct tcp_rt_conn *o;
	unsigned long flags;
	bool dup = false;

	local_irq_save(flags);
	bit_spin_lock(b, tcp_rt_table_locks);
	hlist_for_each_entry(o, &tcp_rt_table[b], node)
		dup |= o->sk == c->sk;
	if (!dup)
		hlist_add_head_rcu(&c->node, &tcp_rt_table[b]);
	bit_spin_unlock(b, tcp_rt_table_locks);
	local_irq_restore(flags);
	return !dup;
}

static void tcp_rt_conn_unlink(struct tcp_rt_conn *c)
{
	u32 b = tcp_rt_bucket(c->sk);
	unsigned long flags;

	local_irq_save(flags);
	bit_spin_lock(b, tcp_rt_table_locks);
	hlist_del_rcu(&c->node);
	bit_spin_unlock(b, tcp_rt_table_locks);
	local_irq_restore(flags);
}

/* Every connection held a module reference: the table is empty by now. */
static void tcp_rt_table_free(void)
{
	bitmap_free(tcp_rt_table_locks);
	tcp_rt_table_locks = NULL;
	kvfree(tcp_rt_table);
	tcp_rt_table = NULL;
}

static int tcp_rt_table_init(unsigned int max_tracked)
{
	unsigned int n = clamp_t(unsigned int,
				 roundup_pow_of_two(max_tracked) /
				 TCP_RT_TABLE_LOAD, TCP_RT_TABLE_MIN,
				 TCP_RT_TABLE_MAX);
	unsigned int i;

	tcp_rt_table = kvmalloc_array(n, sizeof(*tcp_rt_table), GFP_KERNEL);
	tcp_rt_table_locks = bitmap_zalloc(n, GFP_KERNEL);
	if (!tcp_rt_table || !tcp_rt_table_locks) {
		tcp_rt_table_free();
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		INIT_HLIST_HEAD(&tcp_rt_table[i]);
	tcp_rt_table_bits = ilog2(n);
	return 0;
}

/*
 * Connection states are taken from a per-CPU pool that a work item fills
 * in process context: the tracepoint that opens a connection may not
 * allocate on PREEMPT_RT.  A pool is a stack under a raw spinlock, taken
 * with interrupts off (the tracepoint runs in process and softirq context;
 * the refill runs on any CPU).  Where the kernel allows an atomic
 * allocation (not PREEMPT_RT: TCP_RT_ATOMIC_ALLOC), an empty pool falls
 * back to one; either way the empty pool is counted (pool_empty), and a
 * connection that got no state is counted in alloc_failed.
 */
#define TCP_RT_POOL_SIZE	64
#define TCP_RT_POOL_LOW		48	/* refill below this */

struct tcp_rt_pool {
	raw_spinlock_t lock;
	unsigned int n;
	struct tcp_rt_conn *obj[TCP_RT_POOL_SIZE];
};

static DEFINE_PER_CPU(struct tcp_rt_pool, tcp_rt_pools);
static void tcp_rt_pool_refill(struct work_struct *work);
static DECLARE_WORK(tcp_rt_pool_work, tcp_rt_pool_refill);

/* Top up every CPU's pool; returns false if memory ran out. */
static bool tcp_rt_pool_fill(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct tcp_rt_pool *pool = per_cpu_ptr(&tcp_rt_pools, cpu);

		while (READ_ONCE(pool->n) < TCP_RT_POOL_SIZE) {
			struct tcp_rt_conn *c;
			unsigned long flags;

			c = kmem_cache_zalloc(tcp_rt_conn_cache, GFP_KERNEL);
			if (!c)
				return false;
			raw_spin_lock_irqsave(&pool->lock, flags);
			if (pool->n < TCP_RT_POOL_SIZE) {
				pool->obj[pool->n++] = c;
				c = NULL;
			}
			raw_spin_unlock_irqrestore(&pool->lock, flags);
			if (c)
				kmem_cache_free(tcp_rt_conn_cache, c);
		}
		cond_resched();
	}
	return true;
}

static void tcp_rt_pool_refill(struct work_struct *work)
{
	if (!tcp_rt_pool_fill())
		pr_warn_ratelimited("no memory to refill the connection pool\n");
}

static int tcp_rt_pool_init(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		raw_spin_lock_init(&per_cpu_ptr(&tcp_rt_pools, cpu)->lock);
	return tcp_rt_pool_fill() ? 0 : -ENOMEM;
}

/* Once the hooks are gone: nothing takes from the pools any more. */
static void tcp_rt_pool_free(void)
{
	int cpu;

	cancel_work_sync(&tcp_rt_pool_work);
	for_each_possible_cpu(cpu) {
		struct tcp_rt_pool *pool = per_cpu_ptr(&tcp_rt_pools, cpu);

		while (pool->n)
			kmem_cache_free(tcp_rt_conn_cache,
					pool->obj[--pool->n]);
	}
}

/* A zeroed state from this CPU's pool (preemption is off here). */
static struct tcp_rt_conn *tcp_rt_pool_take(void)
{
	struct tcp_rt_pool *pool = this_cpu_ptr(&tcp_rt_pools);
	struct tcp_rt_conn *c = NULL;
	unsigned long flags;
	unsigned int n;

	raw_spin_lock_irqsave(&pool->lock, flags);
	n = pool->n;
	if (n)
		c = pool->obj[--pool->n];
	raw_spin_unlock_irqrestore(&pool->lock, flags);
	if (n <= TCP_RT_POOL_LOW)
		queue_work(system_wq, &tcp_rt_pool_work);
	if (c)
		return c;
	atomic_long_inc(&tcp_rt_pool_empty);
	if (TCP_RT_ATOMIC_ALLOC)
		return kmem_cache_zalloc(tcp_rt_conn_cache, GFP_ATOMIC);
	return NULL;
}

static u32 tcp_rt_since(const struct tcp_rt_conn *c, u64 now)
{
	return now > c->t0 ? min_t(u64, now - c->t0, U32_MAX) : 0;
}

static u32 tcp_rt_min_rtt(const struct tcp_sock *tp, u32 sample)
{
	u32 rtt = sample != U32_MAX ? sample : tcp_min_rtt(tp);

	return rtt != ~0U ? rtt : 0;
}

/*
 * What the connection's close leaves behind, seen by the socket rather
 * than the wire: data the application wrote that the peer never
 * acknowledged, sent or not, and data received that the application never
 * read.
 */
struct tcp_rt_close {
	u32 written;		/* end of the data the application wrote */
	u32 unacked;		/* of it, not acknowledged by the peer */
	bool unread;		/* received data left unread */
};

/*
 * write_seq counts a FIN once it is queued, which the states an orderly
 * close or shutdown(SHUT_WR) leads to have (tcp_close_state() moves there
 * before tcp_send_fin()); an abortive close (unread data, SO_LINGER 0, a
 * reset) queues none.
 */
#define TCP_RT_FIN_QUEUED	(TCPF_FIN_WAIT1 | TCPF_FIN_WAIT2 | TCPF_CLOSING | \
				 TCPF_LAST_ACK | TCPF_TIME_WAIT)

static void tcp_rt_close_state(const struct tcp_rt_conn *c,
			       const struct sock *sk, int oldstate,
			       struct tcp_rt_close *cl)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	s32 d;

	cl->written = tp->write_seq - !!((1 << oldstate) & TCP_RT_FIN_QUEUED);
	d = (s32)(cl->written - tp->snd_una);
	cl->unacked = d > 0 ? d : 0;
	cl->unread = after(c->rcv_data, tp->copied_seq);
}

/* Did the task's input (request or response) arrive out of order? */
static bool tcp_rt_ooo(const struct tcp_rt_conn *c, const struct tcp_sock *tp)
{
	/* a server's request ended where its response began */
	if (c->role == TCP_RT_SERVER && c->phase == TCP_RT_RESPONSE)
		return c->req_ooo;
	return tp->rcv_ooopack != c->ooo_mark;
}

/* The end of what the application wrote: write_seq, less a queued FIN. */
static u32 tcp_rt_written(const struct sock *sk)
{
	return tcp_sk(sk)->write_seq -
	       !!((1 << sk->sk_state) & TCP_RT_FIN_QUEUED);
}

/* ------------------------------------------------------------------------
 * The time breakdown (struct tcp_rt_bd)
 */

static inline bool tcp_rt_bd(const struct tcp_rt_conn *c)
{
	return static_branch_unlikely(&tcp_rt_bd_on) && c->bd.mask;
}

static inline u32 tcp_rt_us(u64 from, u64 to)
{
	return to > from ? min_t(u64, to - from, U32_MAX) : 0;
}

/* A sum of µs that stops at about 71 minutes, as the task's times do. */
static inline void tcp_rt_us_add(u32 *sum, u32 us)
{
	*sum = min_t(u64, (u64)*sum + us, U32_MAX);
}

/*
 * The application waits for room in the send buffer.  SOCK_NOSPACE is what
 * the kernel's own SNDBUF_LIMITED test reads (tcp_cwnd_validate()): set by
 * a write that waits for room and by a poll that found none, cleared when
 * an ACK makes room (after the ACK hook).  The socket lock, held at every
 * hook, keeps sk_socket (sock_orphan() clears it under that lock).
 */
static inline bool tcp_rt_app_blocked(const struct sock *sk)
{
	return sk->sk_socket && test_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
}

/* The transfer starts (T2, S0): account it from @now. */
static void tcp_rt_bd_xf_start(struct tcp_rt_bd *b, const struct sock *sk,
			       u64 now)
{
	memset(b->xf, 0, sizeof(b->xf));
	memset(b->xf_snap, 0, sizeof(b->xf_snap));
	b->xf_pending = 0;
	b->xf_last = now;
	b->xf_written = tcp_sk(sk)->write_seq;
	b->xf_on = 1;
}

/* At a hook's start: the interval since the previous one. */
static void tcp_rt_bd_account(struct tcp_rt_bd *b, const struct sock *sk,
			      u64 now)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	bool blocked;
	u32 dt;

	if (!b->xf_on || now <= b->xf_last)
		return;
	dt = tcp_rt_us(b->xf_last, now);
	b->xf_last = now;
	blocked = tcp_rt_app_blocked(sk);
	switch (tp->chrono_type) {
	case TCP_CHRONO_RWND_LIMITED:
		tcp_rt_us_add(&b->xf[TCP_RT_XF_RWND], dt);
		break;
	case TCP_CHRONO_SNDBUF_LIMITED:
		tcp_rt_us_add(&b->xf[TCP_RT_XF_SNDBUF], dt);
		break;
	default:
		/*
		 * All written was sent and the application is (or was, until
		 * an ACK made room) blocked on the full buffer: it blocks
		 * right after the push that emptied the write queue, a push
		 * that sent something and so never started the kernel's own
		 * SNDBUF_LIMITED chronograph (docs/records.md).
		 */
		if (b->xf_idle && (b->xf_blocked || blocked))
			tcp_rt_us_add(&b->xf[TCP_RT_XF_SNDBUF], dt);
		else if (b->xf_idle)
			tcp_rt_us_add(&b->xf_pending, dt);
	}
	/* the application wrote again: the sender was waiting for it */
	if (tp->write_seq != b->xf_written) {
		tcp_rt_us_add(&b->xf[TCP_RT_XF_APP], b->xf_pending);
		b->xf_pending = 0;
		b->xf_written = tp->write_seq;
	}
}

/*
 * At a hook's end: was everything written sent, and was the application
 * blocked on the send buffer?
 */
static inline void tcp_rt_bd_end(struct tcp_rt_conn *c, const struct sock *sk)
{
	if (tcp_rt_bd(c)) {
		c->bd.xf_idle = !after(tcp_rt_written(sk), c->snd_data);
		c->bd.xf_blocked = tcp_rt_app_blocked(sk);
	}
}

/* The offset of @us in the task, within [@lo, @hi]; counts a clamp. */
static u32 tcp_rt_bd_clamp(const struct tcp_rt_conn *c, u64 us, u32 lo,
			   u32 hi, bool count)
{
	u32 v = tcp_rt_since(c, us);

	if (v >= lo && v <= hi)
		return v;
	if (count)
		atomic_long_inc(&tcp_rt_bd_clamped);
	return v < lo ? lo : hi;
}

/*
 * A server's response began (T2): split process time at the write and
 * the last read before it.  rq_wait + app + sq_wait == t2 - t1.
 */
static void tcp_rt_bd_split(struct tcp_rt_conn *c, const struct sock *sk)
{
	struct tcp_rt_bd *b = &c->bd;
	bool wrote = b->w_set && after(tcp_sk(sk)->write_seq, b->w_seq);
	u64 rd = wrote ? b->w_rd_us : b->rd_us;
	u32 w = c->t2, r = c->t1;
	bool early = false;

	if (wrote) {
		early = before(b->w_rd_seq, c->rcv_data);
		/* a write before T1 is one before the request was whole */
		w = tcp_rt_bd_clamp(c, b->w_us, c->t1, c->t2, !early);
	} else {
		atomic_long_inc(&tcp_rt_bd_no_write);
	}
	if (early)
		atomic_long_inc(&tcp_rt_bd_early_write);
	/* a read of all of the request before T1: clocks that disagree */
	if (rd)
		r = tcp_rt_bd_clamp(c, rd, c->t1, w, !early);
	b->part[TCP_RT_PART_RQ] = r - c->t1;
	b->part[TCP_RT_PART_APP] = w - r;
	b->part[TCP_RT_PART_SQ] = c->t2 - w;
	b->w_set = 0;
}

/* A client's request began (S0, now): how long it waited to leave. */
static void tcp_rt_bd_request(struct tcp_rt_conn *c, const struct sock *sk,
			      u64 now)
{
	struct tcp_rt_bd *b = &c->bd;

	if (b->w_set && after(tcp_sk(sk)->write_seq, b->w_seq)) {
		b->part[TCP_RT_PART_SQ] = tcp_rt_us(b->w_us, now);
	} else {
		b->part[TCP_RT_PART_SQ] = 0;
		atomic_long_inc(&tcp_rt_bd_no_write);
	}
	b->w_set = 0;
	b->rd_us = 0;
}

/* The read hook: the application consumed data (or peeked). */
static void tcp_rt_bd_read(struct tcp_rt_conn *c, const struct sock *sk,
			   u64 now)
{
	struct tcp_rt_bd *b = &c->bd;
	u32 copied = tcp_sk(sk)->copied_seq;

	if (copied == b->copied)
		return;
	b->copied = copied;
	if (c->role == TCP_RT_SERVER) {
		if (c->phase == TCP_RT_REQUEST)
			b->rd_us = now;
	} else if (c->phase == TCP_RT_RESPONSE &&
		   !before(copied, c->rcv_data)) {
		b->rd_us = now;
	}
}

/*
 * The write hook, before the call queues anything.  A server's candidate
 * is taken while its request is open, a client's while none is.
 */
static void tcp_rt_bd_write(struct tcp_rt_conn *c, const struct sock *sk,
			    u64 now)
{
	struct tcp_rt_bd *b = &c->bd;
	u32 seq = tcp_sk(sk)->write_seq;
	bool open = c->phase == TCP_RT_REQUEST;

	if (c->role == TCP_RT_SERVER ? !open : open)
		return;
	if (b->w_set && seq != b->w_seq)
		return;
	b->w_set = 1;
	b->w_us = now;
	b->w_seq = seq;
	b->w_rd_us = b->rd_us;
	b->w_rd_seq = b->copied;
}

/*
 * The fields of a record of type @type, or NULL: none asked for, or the
 * hooks went while the connection was open (counted).
 */
static const struct tcp_rt_ext_task *
tcp_rt_bd_fields(const struct tcp_rt_conn *c, enum tcp_rt_rec type, u64 now,
		 struct tcp_rt_ext_task *xt)
{
	const struct tcp_rt_bd *b = &c->bd;
	const u32 *xf = type == TCP_RT_REC_W ? b->xf : b->xf_snap;

	if (likely(!b->mask))
		return NULL;
	if (b->gen != READ_ONCE(tcp_rt_bd_gen)) {
		atomic_long_inc(&tcp_rt_bd_partial);
		return NULL;
	}
	xt->mask = b->mask;
	xt->v[TCP_RT_EXT_RQ_WAIT - TCP_RT_EXT_TASK_FIRST] = b->part[TCP_RT_PART_RQ];
	xt->v[TCP_RT_EXT_APP - TCP_RT_EXT_TASK_FIRST] = b->part[TCP_RT_PART_APP];
	xt->v[TCP_RT_EXT_SQ_WAIT - TCP_RT_EXT_TASK_FIRST] = b->part[TCP_RT_PART_SQ];
	xt->v[TCP_RT_EXT_RWND - TCP_RT_EXT_TASK_FIRST] = xf[TCP_RT_XF_RWND];
	xt->v[TCP_RT_EXT_SNDBUF - TCP_RT_EXT_TASK_FIRST] = xf[TCP_RT_XF_SNDBUF];
	xt->v[TCP_RT_EXT_APP_LIMITED - TCP_RT_EXT_TASK_FIRST] = xf[TCP_RT_XF_APP];
	if (type == TCP_RT_REC_P) {
		/* the response waited from L to the read of its end */
		u64 l = c->t0 + c->t3;

		xt->mask &= ~BIT(TCP_RT_EXT_APP);
		if (!b->rd_us)
			atomic_long_inc(&tcp_rt_bd_unread);
		xt->v[TCP_RT_EXT_RQ_WAIT - TCP_RT_EXT_TASK_FIRST] =
			tcp_rt_us(l, b->rd_us ? b->rd_us : now);
	}
	return xt;
}

/* ------------------------------------------------------------------------
 * Tasks
 */

static __always_inline void tcp_rt_task_start(struct tcp_rt_conn *c,
					      const struct tcp_sock *tp,
					      u64 now)
{
	c->task_seq++;
	c->t0 = now;
	c->t1 = 0;
	c->t2 = 0;
	c->t3 = 0;
	c->task_rcv = c->rcv_bytes;
	c->task_snd = c->snd_bytes;
	c->task_retrans = tp->total_retrans;
	c->task_segs = tp->data_segs_out;
	c->task_min_rtt = U32_MAX;
	c->phase = TCP_RT_REQUEST;
	if (tcp_rt_bd(c)) {
		c->bd.rd_us = 0;
		c->bd.xf_on = 0;
	}
	tcp_rt_series_add_at(c->key, now, TCP_RT_SER_STARTED, 1);
}

/* The port a connection is accounted under in the stats and series. */
static u32 tcp_rt_conn_key(enum tcp_rt_role role, const struct sock *sk)
{
	const struct inet_sock *inet = inet_sk(sk);

	if (role == TCP_RT_CLIENT)
		return TCP_RT_KEY_VALID | TCP_RT_KEY_PEER | ntohs(inet->inet_dport);
	return TCP_RT_KEY_VALID | ntohs(inet->inet_sport);
}

/* A record, unless log_sample left the connection out of the logs. */
static __always_inline void
tcp_rt_conn_log(const struct tcp_rt_conn *c, const struct sock *sk,
		enum tcp_rt_rec type, u64 start_us, const u64 *f, unsigned int n,
		const struct tcp_rt_ext_task *xt)
{
	if (likely(c->logged) && xt)
		tcp_rt_log_record_bd(sk, type, start_us, f, n, &c->log, xt);
	else if (likely(c->logged))
		tcp_rt_log_record(sk, type, start_us, f, n, &c->log);
	else
		this_cpu_inc(tcp_rt_records_sampled_out);
}

/*
 * A task completed: R for a server, P for a client.  The two records share
 * their layout; only the meaning of the times differs (see struct
 * tcp_rt_conn).
 */
static void tcp_rt_emit_done(const struct tcp_rt_conn *c,
			     const struct sock *sk, enum tcp_rt_rec type,
			     u64 now)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct tcp_rt_task_sample t;
	struct tcp_rt_ext_task xt;
	u64 f[10];

	t.sent = c->snd_bytes - c->task_snd;
	t.recv = c->rcv_bytes - c->task_rcv;
	t.rtt = tcp_rt_min_rtt(tp, c->task_min_rtt);
	t.retrans = tp->total_retrans - c->task_retrans;
	t.segs = tp->data_segs_out - c->task_segs;
	t.process = c->t2 - c->t1;
	t.upload = c->t1;
	/* a server's task ends at the last ACK of its response */
	t.duration = type == TCP_RT_REC_R ? max(c->t3, c->t2) : c->t3;

	f[0] = t.sent;
	f[1] = t.duration;
	f[2] = t.rtt;
	f[3] = t.retrans;
	f[4] = c->task_seq;
	f[5] = t.process;
	f[6] = type == TCP_RT_REC_R ? c->t1 : c->t3 - c->t2;
	f[7] = t.recv;
	f[8] = tcp_rt_ooo(c, tp);
	f[9] = tp->mss_cache;
	tcp_rt_conn_log(c, sk, type, c->t0, f, 10,
			tcp_rt_bd_fields(c, type, now, &xt));
	tcp_rt_stats_add(c->key, &t);
	tcp_rt_series_done(c->key, c->t0, c->t0 + t.duration, now);
}

static void tcp_rt_emit_w(const struct tcp_rt_conn *c, const struct sock *sk,
			  u32 unacked, u64 now)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct tcp_rt_ext_task xt;
	u64 f[9];

	f[0] = c->snd_bytes - c->task_snd;
	f[1] = tcp_rt_since(c, now);
	f[2] = tcp_rt_min_rtt(tp, c->task_min_rtt);
	f[3] = tp->total_retrans - c->task_retrans;
	f[4] = c->task_seq;
	f[5] = c->t2 - c->t1;
	f[6] = c->t1;
	f[7] = unacked;
	f[8] = tp->mss_cache;
	tcp_rt_conn_log(c, sk, TCP_RT_REC_W, c->t0, f, 9,
			tcp_rt_bd_fields(c, TCP_RT_REC_W, now, &xt));
	tcp_rt_stats_add(c->key, NULL);
	tcp_rt_series_add_at(c->key, now, TCP_RT_SER_W, 1);
}

static void tcp_rt_emit_n(const struct tcp_rt_conn *c, const struct sock *sk,
			  u64 now)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u64 f[5];

	f[0] = c->task_seq;
	f[1] = tcp_rt_since(c, now);
	f[2] = c->rcv_bytes - c->task_rcv;
	f[3] = tcp_rt_ooo(c, tp);
	f[4] = tp->mss_cache;
	tcp_rt_conn_log(c, sk, TCP_RT_REC_N, c->t0, f, 5, NULL);
	tcp_rt_series_add_at(c->key, now, TCP_RT_SER_N, 1);
}

static void tcp_rt_emit_e(const struct tcp_rt_conn *c, const struct sock *sk,
			  u32 unacked)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u64 f[6];

	f[0] = c->task_seq;
	f[1] = c->snd_bytes;
	f[2] = unacked;
	f[3] = c->rcv_bytes;
	f[4] = tp->total_retrans - c->retrans_base;
	f[5] = tcp_rt_min_rtt(tp, c->conn_min_rtt);
	tcp_rt_conn_log(c, sk, TCP_RT_REC_E, c->estab_us, f, 6, NULL);
}

/*
 * Byte counts are 64-bit: a connection, or one response, may move more
 * than the 4 GiB a sequence number difference can tell.  Sequence numbers
 * only ever advance here by what one hook saw move, far less than 2^31.
 */
static inline void tcp_rt_rcv_to(struct tcp_rt_conn *c, u32 end)
{
	c->rcv_bytes += end - c->rcv_data;
	c->rcv_data = end;
}

static inline void tcp_rt_snd_add(struct tcp_rt_conn *c, u32 len)
{
	c->snd_bytes += len;
	c->snd_data += len;
}

/* The peer acknowledged more of our data. */
static void tcp_rt_on_ack(struct tcp_rt_conn *c, const struct tcp_sock *tp,
			  u64 now)
{
	/* Data acknowledged: the ACK of our FIN is one sequence number past. */
	u32 una = before(tp->snd_una, c->snd_data) ? tp->snd_una : c->snd_data;
	u32 rtt = tp->rack.rtt_us;
	/* bytes sent and acknowledged, in snd_bytes' terms */
	u64 acked = c->snd_bytes - min_t(u64, c->snd_data - una, c->snd_bytes);

	if (rtt) {
		c->task_min_rtt = min(c->task_min_rtt, rtt);
		c->conn_min_rtt = min(c->conn_min_rtt, rtt);
	}
	/* T3 is the last ACK that covered more of the response's data. */
	if (c->role == TCP_RT_SERVER && c->phase == TCP_RT_RESPONSE &&
	    acked > c->task_snd && after(una, c->snd_una)) {
		c->t3 = tcp_rt_since(c, now);
		if (tcp_rt_bd(c))
			memcpy(c->bd.xf_snap, c->bd.xf, sizeof(c->bd.xf));
	}
	c->snd_una = tp->snd_una;
}

/* New in-order data arrived, ending at @end. */
static void tcp_rt_on_data_in(struct tcp_rt_conn *c, const struct sock *sk,
			      u32 end, u64 now)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	tcp_rt_series_bytes(c->key, sk, false, end - c->rcv_data);
	tcp_rt_series_add(c->key, TCP_RT_SER_SEGS_IN,
			  tp->data_segs_in - c->segs_in);
	c->segs_in = tp->data_segs_in;

	if (c->role == TCP_RT_SERVER) {
		if (c->phase == TCP_RT_RESPONSE)
			tcp_rt_emit_done(c, sk, TCP_RT_REC_R, now);
		if (c->phase != TCP_RT_REQUEST)
			tcp_rt_task_start(c, tp, now);
		tcp_rt_rcv_to(c, end);
		c->t1 = tcp_rt_since(c, now);
		return;
	}

	/* Client: data before any request (a greeting) opens no task. */
	if (c->phase == TCP_RT_REQUEST) {
		c->phase = TCP_RT_RESPONSE;
		c->t2 = tcp_rt_since(c, now);
		if (tcp_rt_bd(c))
			c->bd.xf_on = 0;	/* the upload ended */
	}
	if (c->phase == TCP_RT_RESPONSE) {
		c->t3 = tcp_rt_since(c, now);
		if (tcp_rt_bd(c))
			c->bd.rd_us = 0;	/* more of it to read */
	}
	tcp_rt_rcv_to(c, end);
}

/* New data of @len bytes left, starting at c->snd_data. */
static void tcp_rt_on_data_out(struct tcp_rt_conn *c, const struct sock *sk,
			       u32 len, u64 now)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	if (len)
		tcp_rt_series_bytes(c->key, sk, true, len);

	if (c->role == TCP_RT_CLIENT) {
		if (c->phase == TCP_RT_RESPONSE)
			tcp_rt_emit_done(c, sk, TCP_RT_REC_P, now);
		if (c->phase != TCP_RT_REQUEST) {
			tcp_rt_task_start(c, tp, now);
			c->ooo_mark = tp->rcv_ooopack;
			if (tcp_rt_bd(c)) {
				tcp_rt_bd_request(c, sk, now);
				tcp_rt_bd_xf_start(&c->bd, sk, now);
			}
		}
		tcp_rt_snd_add(c, len);
		c->t1 = tcp_rt_since(c, now);
		if (tcp_rt_bd(c))
			memcpy(c->bd.xf_snap, c->bd.xf, sizeof(c->bd.xf));
		return;
	}

	/* Server: data sent while no request is open (a greeting) is no task. */
	if (c->phase == TCP_RT_REQUEST) {
		c->phase = TCP_RT_RESPONSE;
		c->req_ooo = tp->rcv_ooopack != c->ooo_mark;
		c->ooo_mark = tp->rcv_ooopack;
		c->task_snd = c->snd_bytes;
		c->t2 = tcp_rt_since(c, now);
		if (tcp_rt_bd(c)) {
			tcp_rt_bd_split(c, sk);
			tcp_rt_bd_xf_start(&c->bd, sk, now);
		}
	}
	tcp_rt_snd_add(c, len);
}

/*
 * End of the data sent: snd_nxt, less the FIN once it went out.  Without a
 * FIN queued (a reset), SEND_SHUTDOWN with nothing unsent also takes one
 * off, which only ever makes the result smaller: it is used to catch up,
 * never to go back.
 */
static u32 tcp_rt_snd_end(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	return tp->snd_nxt - ((sk->sk_shutdown & SEND_SHUTDOWN) &&
			      tp->snd_nxt == tp->write_seq);
}

/*
 * Catch up with what the socket processed.  A FIN occupies one sequence
 * number and sets SOCK_DONE in the same step, so it is taken out of
 * rcv_nxt.  New data sent that the transmit hook missed (counted in
 * probe_missed) is taken in first, so that a missed response still ends
 * its task when the next request comes.
 */
static void tcp_rt_sync(struct tcp_rt_conn *c, const struct sock *sk, u64 now)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u32 end = tcp_rt_snd_end(sk);

	if (tcp_rt_bd(c))
		tcp_rt_bd_account(&c->bd, sk, now);
	if (after(end, c->snd_data))
		tcp_rt_on_data_out(c, sk, end - c->snd_data, now);
	if (tp->snd_una != c->snd_una)
		tcp_rt_on_ack(c, tp, now);
	end = tp->rcv_nxt - sock_flag(sk, SOCK_DONE);
	if (after(end, c->rcv_data))
		tcp_rt_on_data_in(c, sk, end, now);
}

/*
 * The open-task gauge of a series run (tcp_rt_series.c).  A server's task
 * is open from its request's first byte until its response is all
 * acknowledged; a client's from its request's first byte to its
 * response's first (where the rest of a response ends, only the next
 * request tells).  A closed connection's phase is IDLE, so that the walk
 * does not look into the socket of one that closed just before the run.
 *
 * series_state holds the generation of the run the connection was last
 * accounted in and whether its task counted as open there.  At a run's
 * start, whichever of the table walk and the connection's own hooks sees
 * the new generation first claims the connection with cmpxchg() and counts
 * its task in the run's initial gauge if open; the loser sees the new
 * generation and leaves it.  From then on only the hooks, serialised by
 * the socket lock, change it, and each hook corrects the gauge when the
 * task's openness changed, including after a claim by the walk that read
 * the connection while one of its hooks was changing it.
 */
static bool tcp_rt_task_open(const struct tcp_rt_conn *c)
{
	const struct sock *sk = c->sk;
	u32 written;

	if (c->phase == TCP_RT_REQUEST)
		return true;
	if (c->role != TCP_RT_SERVER || c->phase != TCP_RT_RESPONSE)
		return false;
	/*
	 * Written, not only sent: an ACK that catches up with what was sent
	 * while more waits in the socket does not end the response.
	 */
	written = tcp_rt_written(sk);
	return before(c->snd_una, written);
}

/* Claim @c for run @gen, unless someone changed it since @old was read. */
static void tcp_rt_series_claim(struct tcp_rt_conn *c, u32 gen, u32 old)
{
	/* The walk reads a connection its hooks may be changing. */
	bool open = data_race(tcp_rt_task_open(c));

	if (cmpxchg(&c->series_state, old, gen << 1 | open) == old && open)
		tcp_rt_series_initial(gen, c->key);
}

/* From the hooks, before and after they change @c, when a run is active. */
static void __tcp_rt_series_sync(struct tcp_rt_conn *c, u64 now, bool gone)
{
	u32 gen = tcp_rt_series_gen_active();
	u32 st, open;

	if (!gen)
		return;
	/*
	 * Pairs with the walk's cmpxchg(): once its claim is seen, what it
	 * read of @c precedes whatever this hook changes next.
	 */
	st = smp_load_acquire(&c->series_state);
	if (st >> 1 != gen) {
		tcp_rt_series_claim(c, gen, st);
		st = READ_ONCE(c->series_state);
	}
	open = !gone && tcp_rt_task_open(c);
	if (open == (st & 1))
		return;
	WRITE_ONCE(c->series_state, st ^ 1);
	tcp_rt_series_add_at(c->key, now, TCP_RT_SER_OPEN, open ? 1 : -1);
}

static inline void tcp_rt_series_sync(struct tcp_rt_conn *c, u64 now,
				      bool gone)
{
	if (static_branch_unlikely(&tcp_rt_series_on))
		__tcp_rt_series_sync(c, now, gone);
}

/*
 * At the start of series run @gen (tcp_rt_main.c): claim every tracked
 * connection not claimed yet.
 */
void tcp_rt_task_enroll_all(u32 gen)
{
	unsigned int i, n = 1U << tcp_rt_table_bits;

	for (i = 0; i < n; i++) {
		struct tcp_rt_conn *c;

		/* a chain at a time: claims are idempotent, chains stay put */
		rcu_read_lock();
		hlist_for_each_entry_rcu(c, &tcp_rt_table[i], node) {
			u32 st = READ_ONCE(c->series_state);

			if (st >> 1 != gen)
				tcp_rt_series_claim(c, gen, st);
		}
		rcu_read_unlock();
		if (!(i % 1024))
			cond_resched();
	}
}

/*
 * Kept out of line and open to error injection (fail_function), so tests
 * can make it fail under traffic.
 */
static noinline struct tcp_rt_conn *tcp_rt_conn_alloc(void)
{
	return tcp_rt_pool_take();
}

ALLOW_ERROR_INJECTION(tcp_rt_conn_alloc, NULL);

static void tcp_rt_conn_free_rcu(struct rcu_head *head)
{
	kmem_cache_free(tcp_rt_conn_cache,
			container_of(head, struct tcp_rt_conn, rcu));
}

/*
 * Whether a new connection's records go to the logs: one connection in
 * log_sample, chosen by a hash of its addresses and ports keyed at load,
 * so that a logged connection keeps every record and consecutive
 * task_seq, and which ones are logged cannot be steered from outside.
 */
static bool tcp_rt_log_sampled(const struct sock *sk)
{
	const struct inet_sock *inet = inet_sk(sk);
	unsigned int n = READ_ONCE(tcp_rt_log_sample);
	u32 h;

	if (n == 1)
		return true;
	h = tcp_rt_log_sample_seed ^ ((__force u32)inet->inet_sport << 16 |
				      (__force u16)inet->inet_dport);
#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6 && !ipv6_addr_v4mapped(&sk->sk_v6_daddr))
		h = __ipv6_addr_jhash(&sk->sk_v6_daddr,
				      __ipv6_addr_jhash(&sk->sk_v6_rcv_saddr, h));
	else
#endif
		h = jhash_3words((__force u32)inet->inet_daddr,
				 (__force u32)inet->inet_rcv_saddr, h, 0);
	return reciprocal_scale(h, n) == 0;
}

/*
 * TCP Fast Open: a request that rode in the SYN (received by a server,
 * sent by a client) was exchanged, and maybe answered, before the
 * connection became ESTABLISHED, where tracking starts: that first task
 * has no record, and is counted in fastopen_missed instead.
 */
static bool tcp_rt_fastopen_data(enum tcp_rt_role role,
				 const struct tcp_sock *tp)
{
	return role == TCP_RT_SERVER ? tp->syn_data_acked : tp->syn_data;
}

/* A connection of a watched port became ESTABLISHED: track it if listed. */
/*
 * log_ext as the connection is established is what its records carry:
 * the fields that belong to it are formatted now, once; whether they are
 * numbered (seq) is kept, their numbers are the log's to give.
 */
static void tcp_rt_conn_ext(struct tcp_rt_conn *c, const struct sock *sk)
{
	u32 gen = READ_ONCE(tcp_rt_bd_gen);
	unsigned int mask;

	/* the generation before the mask: tcp_rt_main.c moves it after */
	smp_rmb();
	mask = READ_ONCE(tcp_rt_log_ext);
	tcp_rt_log_conn_init(&c->log, sk, mask);
	if (unlikely(mask & TCP_RT_EXT_BD)) {
		c->bd.mask = mask & TCP_RT_EXT_BD;
		c->bd.gen = gen;
		c->bd.copied = tcp_sk(sk)->copied_seq;
	}
}

void tcp_rt_task_estab(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct tcp_rt_conn *c;
	enum tcp_rt_role role;

	if (!READ_ONCE(tcp_rt_active))
		return;
	switch (tcp_rt_ports_match(sk)) {
	case TCP_RT_MATCH_LOCAL:
		role = TCP_RT_SERVER;
		break;
	case TCP_RT_MATCH_PEER:
		role = TCP_RT_CLIENT;
		break;
	default:
		return;
	}

	if (atomic_inc_return(&tcp_rt_tracked) > READ_ONCE(tcp_rt_max_tracked))
		goto fail_count;
	if (!try_module_get(THIS_MODULE))
		goto fail_count;
	c = tcp_rt_conn_alloc();
	if (!c)
		goto fail_module;

	c->sk = sk;
	c->role = role;
	c->key = tcp_rt_conn_key(role, sk);
	c->logged = tcp_rt_log_sampled(sk);
	if (c->logged)
		tcp_rt_conn_ext(c, sk);
	/*
	 * c->segs_in stays 0: a data segment counted before ESTABLISHED is
	 * the one completing the handshake, whose data is queued after it.
	 */
	c->estab_us = tcp_clock_us();
	c->rcv_data = tp->rcv_nxt;
	c->snd_data = tp->snd_nxt;
	c->snd_una = tp->snd_una;
	c->retrans_base = tp->total_retrans;
	c->ooo_mark = tp->rcv_ooopack;
	c->task_min_rtt = U32_MAX;
	c->conn_min_rtt = U32_MAX;

	if (static_branch_unlikely(&tcp_rt_series_on))
		c->series_state = tcp_rt_series_gen_active() << 1;

	if (!tcp_rt_conn_insert(c))
		goto fail_free;
	if (!c->logged)
		atomic_long_inc(&tcp_rt_conns_sampled_out);
	if (tcp_rt_fastopen_data(role, tp))
		atomic_long_inc(&tcp_rt_fastopen_missed);
	tcp_rt_series_add_at(c->key, c->estab_us, TCP_RT_SER_ESTAB, 1);
	return;

fail_free:
	/* no slab call from here on PREEMPT_RT: freed from RCU's context */
	call_rcu(&c->rcu, tcp_rt_conn_free_rcu);
fail_module:
	module_put(THIS_MODULE);
fail_count:
	atomic_dec(&tcp_rt_tracked);
	atomic_long_inc(&tcp_rt_alloc_failed);
}

/*
 * The connection closes: write the record of the task still open.  A
 * server whose response is not all delivered - written and unsent, or sent
 * and unacknowledged - failed it: W.  One that wrote a response none of
 * which could leave (a closed window) was answering all the same: its
 * response began at the close, as far as the wire could tell.  A client
 * that left response data unread gave up on the response: no P.
 */
static void tcp_rt_emit_last(struct tcp_rt_conn *c, const struct sock *sk,
			     const struct tcp_rt_close *cl, u64 now)
{
	if (c->phase == TCP_RT_IDLE)
		return;
	if (c->role == TCP_RT_CLIENT) {
		/* A request that got no response is no task (see E). */
		if (c->phase != TCP_RT_RESPONSE)
			return;
		if (cl->unread)
			atomic_long_inc(&tcp_rt_client_cut);
		else
			tcp_rt_emit_done(c, sk, TCP_RT_REC_P, now);
		return;
	}
	if (c->phase == TCP_RT_REQUEST && after(cl->written, c->snd_data))
		tcp_rt_on_data_out(c, sk, 0, now);
	if (c->phase == TCP_RT_REQUEST)
		tcp_rt_emit_n(c, sk, now);
	else if (cl->unacked)
		tcp_rt_emit_w(c, sk, cl->unacked, now);
	else
		tcp_rt_emit_done(c, sk, TCP_RT_REC_R, now);
}

/* A tracked connection (or another of a watched port) closed. */
void tcp_rt_task_close(const struct sock *sk, int oldstate)
{
	struct tcp_rt_close cl;
	struct tcp_rt_conn *c;
	u64 now;

	rcu_read_lock();
	c = tcp_rt_conn_find(sk);
	if (!c) {
		rcu_read_unlock();
		return;
	}
	tcp_rt_conn_unlink(c);

	now = tcp_clock_us();
	tcp_rt_series_sync(c, now, false);
	tcp_rt_sync(c, sk, now);
	tcp_rt_close_state(c, sk, oldstate, &cl);
	tcp_rt_emit_last(c, sk, &cl, now);
	if (c->task_seq)
		tcp_rt_emit_e(c, sk, cl.unacked);
	tcp_rt_series_sync(c, now, true);
	tcp_rt_series_add_at(c->key, now, TCP_RT_SER_CLOSED, 1);
	WRITE_ONCE(c->phase, TCP_RT_IDLE);
	rcu_read_unlock();

	call_rcu(&c->rcu, tcp_rt_conn_free_rcu);
	atomic_dec(&tcp_rt_tracked);
	module_put(THIS_MODULE);
}

/* An ACK was processed or in-order data received: catch up with it. */
void tcp_rt_task_sync(struct sock *sk)
{
	struct tcp_rt_conn *c;

	rcu_read_lock();
	c = tcp_rt_conn_find(sk);
	if (c) {
		u64 now = tcp_sk(sk)->tcp_mstamp;

		tcp_rt_series_sync(c, now, false);
		tcp_rt_sync(c, sk, now);
		tcp_rt_series_sync(c, now, false);
		tcp_rt_bd_end(c, sk);
	}
	rcu_read_unlock();
}

/*
 * The application read (@write false) or is about to write (true): the
 * breakdown's hooks.  The engine catches up first, as at every hook, at
 * the socket's time; the stamp is the clock's now.
 */
static void tcp_rt_task_app(struct sock *sk, bool write)
{
	struct tcp_rt_conn *c;

	rcu_read_lock();
	c = tcp_rt_conn_find(sk);
	if (c && tcp_rt_bd(c)) {
		u64 now = tcp_sk(sk)->tcp_mstamp;
		u64 stamp = tcp_clock_us();

		tcp_rt_series_sync(c, now, false);
		tcp_rt_sync(c, sk, now);
		tcp_rt_series_sync(c, now, false);
		tcp_rt_bd_account(&c->bd, sk, stamp);
		if (write)
			tcp_rt_bd_write(c, sk, stamp);
		else
			tcp_rt_bd_read(c, sk, stamp);
		tcp_rt_bd_end(c, sk);
	}
	rcu_read_unlock();
}

void tcp_rt_task_read(struct sock *sk)
{
	tcp_rt_task_app(sk, false);
}

void tcp_rt_task_write(struct sock *sk)
{
	tcp_rt_task_app(sk, true);
}

/* A segment left: new data, or a retransmission (as tp->total_retrans). */
static inline void tcp_rt_series_segs_out(const struct tcp_rt_conn *c,
					  const struct sk_buff *skb, u32 len,
					  const struct tcp_sock *tp)
{
	const struct tcp_skb_cb *scb = TCP_SKB_CB(skb);

	if (len)
		tcp_rt_series_add(c->key, TCP_RT_SER_SEGS_OUT,
				  tcp_skb_pcount(skb));
	else if (before(scb->seq, tp->snd_nxt))
		tcp_rt_series_add(c->key, TCP_RT_SER_RETRANS,
				  tcp_skb_pcount(skb));
}

/* Segment @skb is leaving, with @len bytes of new data (from snd_nxt). */
void tcp_rt_task_xmit(struct sock *sk, const struct sk_buff *skb, u32 len)
{
	const struct tcp_skb_cb *scb = TCP_SKB_CB(skb);
	const struct tcp_sock *tp = tcp_sk(sk);
	struct tcp_rt_conn *c;

	rcu_read_lock();
	c = tcp_rt_conn_find(sk);
	if (c) {
		/*
		 * A receive whose ACK this segment carries comes first, and
		 * a retransmission may be carrying it too.
		 */
		tcp_rt_series_sync(c, tp->tcp_mstamp, false);
		tcp_rt_sync(c, sk, tp->tcp_mstamp);
		if (len) {
			/* the segment starts where the data sent ends */
			c->snd_bytes += (s32)(scb->seq - c->snd_data);
			c->snd_data = scb->seq;
			tcp_rt_on_data_out(c, sk, len, tp->tcp_mstamp);
		}
		tcp_rt_series_sync(c, tp->tcp_mstamp, false);
		tcp_rt_series_segs_out(c, skb, len, tp);
		tcp_rt_bd_end(c, sk);
	}
	tcp_rt_series_seg_out(c ? c->key : 0, sk, skb, len);
	rcu_read_unlock();
}

/* A segment arrived for @sk (a series run's receive hooks). */
void tcp_rt_task_seg_in(const struct sock *sk, const struct sk_buff *skb)
{
	struct tcp_rt_conn *c;

	rcu_read_lock();
	c = tcp_rt_conn_find(sk);
	tcp_rt_series_seg_in(c ? c->key : 0, sk, skb);
	rcu_read_unlock();
}

/*
 * Release (deactivate=2): a connection still open leaves tracking.  What
 * its state makes a whole record is written: a server's response all
 * acknowledged (R), a client's response all read (P), then E with the
 * totals so far.  A task still open (a request arriving, a response not
 * all acknowledged or not all read) has no record and is counted in
 * released_open; the connection in released.  Called with the socket's
 * spinlock held and no owner (as a softirq hook runs), bottom halves and
 * preemption off and rcu_read_lock() held: no hook of the connection runs
 * meanwhile.
 */
static void tcp_rt_conn_release(struct tcp_rt_conn *c, const struct sock *sk)
{
	struct tcp_rt_close cl;
	u64 now = tcp_clock_us();
	bool done;

	tcp_rt_conn_unlink(c);
	tcp_rt_series_sync(c, now, false);
	tcp_rt_sync(c, sk, now);
	tcp_rt_close_state(c, sk, sk->sk_state, &cl);
	done = c->phase == TCP_RT_RESPONSE &&
	       (c->role == TCP_RT_CLIENT ? !cl.unread : !cl.unacked);
	if (done)
		tcp_rt_emit_done(c, sk, c->role == TCP_RT_CLIENT ?
				 TCP_RT_REC_P : TCP_RT_REC_R, now);
	else if (c->phase != TCP_RT_IDLE)
		atomic_long_inc(&tcp_rt_released_open);
	if (c->task_seq)
		tcp_rt_emit_e(c, sk, cl.unacked);
	tcp_rt_series_sync(c, now, true);
	tcp_rt_series_add_at(c->key, now, TCP_RT_SER_CLOSED, 1);
	WRITE_ONCE(c->phase, TCP_RT_IDLE);

	call_rcu(&c->rcu, tcp_rt_conn_free_rcu);
	atomic_long_inc(&tcp_rt_released);
	atomic_dec(&tcp_rt_tracked);
	module_put(THIS_MODULE);
}

#define TCP_RT_RELEASE_WAITS	500	/* of 1 to 2 ms, for a closing one */
/* a socket its owner holds: walks again for so long, then left */
#define TCP_RT_RELEASE_HELD_MS	500
#define TCP_RT_RELEASE_AGAIN_MS	10

enum tcp_rt_release_step {
	TCP_RT_RELEASE_EMPTY,	/* no connection at that place in the chain */
	TCP_RT_RELEASE_DONE,	/* it went */
	TCP_RT_RELEASE_GONE,	/* it is closing, or went meanwhile */
	TCP_RT_RELEASE_HELD,	/* a process owns its socket */
};

/*
 * Release the connection at place @skip of chain @b (those before it are
 * held by their owners).  Its socket is pinned (sockets are freed only
 * after an RCU grace period, and a socket whose count fell to 0 is
 * closing: its close hook removes it), then locked as a softirq locks it:
 * the spinlock, and only while no process owns the socket (else it is
 * held: a send() may hold it for as long as a page fault of its buffer
 * takes).  Not lock_sock(): a connection still in its listener's accept
 * queue is closed by inet_csk_listen_stop() under the spinlock alone,
 * which would run its close hook on the state being released (and WARN
 * that the child is owned).  The state is looked up again under the
 * lock, as the close may have come first, or the memory be a new socket.
 * Preemption is off around the engine, as in a hook: on PREEMPT_RT
 * neither the spinlock nor bottom halves disable it.
 */
static enum tcp_rt_release_step tcp_rt_release_nth(struct hlist_head *b,
						   unsigned int skip)
{
	enum tcp_rt_release_step step = TCP_RT_RELEASE_HELD;
	struct tcp_rt_conn *c;
	struct sock *sk = NULL;
	unsigned int i = 0;
	bool pinned = false;

	rcu_read_lock();
	hlist_for_each_entry_rcu(c, b, node) {
		if (i++ < skip)
			continue;
		sk = (struct sock *)c->sk;
		pinned = refcount_inc_not_zero(&sk->sk_refcnt);
		break;
	}
	rcu_read_unlock();
	if (!sk)
		return TCP_RT_RELEASE_EMPTY;
	if (!pinned)
		return TCP_RT_RELEASE_GONE;
	local_bh_disable();
	bh_lock_sock(sk);
	if (!sock_owned_by_user(sk)) {
		preempt_disable();
		rcu_read_lock();
		c = tcp_rt_conn_find(sk);
		if (c)
			tcp_rt_conn_release(c, sk);
		step = c ? TCP_RT_RELEASE_DONE : TCP_RT_RELEASE_GONE;
		rcu_read_unlock();
		preempt_enable();
	}
	bh_unlock_sock(sk);
	local_bh_enable();
	sock_put(sk);
	return step;
}

/*
 * Release what chain @b holds but connections a process owns; returns
 * how many of those it stepped over.  A closing one is waited for (a
 * close takes microseconds), TCP_RT_RELEASE_WAITS tries at most.
 */
static unsigned int tcp_rt_release_chain(struct hlist_head *b)
{
	enum tcp_rt_release_step step;
	unsigned int skip = 0, waits = 0;

	while ((step = tcp_rt_release_nth(b, skip))) {
		switch (step) {
		case TCP_RT_RELEASE_DONE:
			waits = 0;
			cond_resched();
			break;
		case TCP_RT_RELEASE_GONE:
			if (++waits <= TCP_RT_RELEASE_WAITS) {
				usleep_range(1000, 2000);
				break;
			}
			fallthrough;
		default:
			/* held: the rest of the chain is not held up by it */
			waits = 0;
			skip++;
			break;
		}
	}
	return skip;
}

/* One walk of the whole table; returns the connections left tracked. */
static unsigned int tcp_rt_release_walk(void)
{
	unsigned int i, n = 1U << tcp_rt_table_bits, left = 0;

	for (i = 0; i < n; i++)
		left += tcp_rt_release_chain(&tcp_rt_table[i]);
	return left;
}

/*
 * The table exists from init to exit; a parameter write can come before
 * init (a load-time value) or during exit, hence the flag, set and read
 * under the mutex.
 */

static DEFINE_MUTEX(tcp_rt_release_mutex);
static bool tcp_rt_release_live;

/*
 * deactivate=2 (tcp_rt_main.c), once tcp_rt_active is cleared: let go of
 * every connection tracked now, so that one idle pooled connection no
 * longer holds an unload or an upgrade.  Every hook runs with preemption
 * off, so a grace period first lets a connection's ESTABLISHED hook that
 * saw tcp_rt_active set finish its insert (the walk would pass its
 * chain), and one after lets a close that unlinked its state finish its
 * count: when this returns, nothing is tracked but connections whose
 * sockets a process held for the whole walk.  Those are stepped over, the
 * rest of their chain released, and the table walked again every
 * TCP_RT_RELEASE_AGAIN_MS for TCP_RT_RELEASE_HELD_MS at most: the write
 * runs under the module's parameter lock, which every read and write of
 * its parameters waits for, so it must not wait on a page fault that
 * may last (userfaultfd, FUSE, a hung NFS mapping).  What is left is said
 * in the log, and status's tracked counts it.
 */
void tcp_rt_task_release_all(void)
{
	unsigned long until;
	unsigned int left;
	long before;

	mutex_lock(&tcp_rt_release_mutex);
	if (!tcp_rt_release_live)
		goto out;
	synchronize_rcu();
	before = atomic_long_read(&tcp_rt_released);
	until = jiffies + msecs_to_jiffies(TCP_RT_RELEASE_HELD_MS);
	left = tcp_rt_release_walk();
	while (left && time_before(jiffies, until)) {
		msleep(TCP_RT_RELEASE_AGAIN_MS);
		left = tcp_rt_release_walk();
	}
	synchronize_rcu();
	pr_info("released %ld tracked connection(s)\n",
		atomic_long_read(&tcp_rt_released) - before);
	if (left)
		pr_warn("release: %u connection(s) left tracked: a process holds their socket (a send() waiting on a page fault?); write 2 again once it lets go\n",
			left);
out:
	mutex_unlock(&tcp_rt_release_mutex);
}

void tcp_rt_task_release_live(bool live)
{
	mutex_lock(&tcp_rt_release_mutex);
	tcp_rt_release_live = live;
	mutex_unlock(&tcp_rt_release_mutex);
}

/* The engine's counters, for the status file. */
void tcp_rt_task_counts(struct tcp_rt_task_counts *n)
{
	int cpu;

	n->tracked = atomic_read(&tcp_rt_tracked);
	n->alloc_failed = atomic_long_read(&tcp_rt_alloc_failed);
	n->pool_empty = atomic_long_read(&tcp_rt_pool_empty);
	n->client_cut = atomic_long_read(&tcp_rt_client_cut);
	n->conns_sampled_out = atomic_long_read(&tcp_rt_conns_sampled_out);
	n->fastopen_missed = atomic_long_read(&tcp_rt_fastopen_missed);
	n->released = atomic_long_read(&tcp_rt_released);
	n->released_open = atomic_long_read(&tcp_rt_released_open);
	n->bd_early_write = atomic_long_read(&tcp_rt_bd_early_write);
	n->bd_no_write = atomic_long_read(&tcp_rt_bd_no_write);
	n->bd_clamped = atomic_long_read(&tcp_rt_bd_clamped);
	n->bd_unread = atomic_long_read(&tcp_rt_bd_unread);
	n->bd_partial = atomic_long_read(&tcp_rt_bd_partial);
	n->records_sampled_out = 0;
	for_each_possible_cpu(cpu)
		n->records_sampled_out += *per_cpu_ptr(&tcp_rt_records_sampled_out,
						       cpu);
	n->conn_state_bytes = kmem_cache_size(tcp_rt_conn_cache);
	n->conn_table_buckets = 1U << tcp_rt_table_bits;
}

/* Before the hooks: the state cache, the table and full pools. */
int tcp_rt_task_init(void)
{
	int err;

	tcp_rt_conn_cache = KMEM_CACHE(tcp_rt_conn, 0);
	if (!tcp_rt_conn_cache)
		return -ENOMEM;
	err = tcp_rt_table_init(READ_ONCE(tcp_rt_max_tracked));
	if (err)
		goto err_cache;
	err = tcp_rt_pool_init();
	if (err)
		goto err_pool;
	return 0;

err_pool:
	/* what a fill that ran out of memory put in the pools */
	tcp_rt_pool_free();
	tcp_rt_table_free();
err_cache:
	kmem_cache_destroy(tcp_rt_conn_cache);
	return err;
}

/* Once the hooks are gone; every connection held a reference: none left. */
void tcp_rt_task_exit(void)
{
	tcp_rt_pool_free();
	tcp_rt_table_free();
	rcu_barrier();
	kmem_cache_destroy(tcp_rt_conn_cache);
}
