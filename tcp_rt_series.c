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
 * The recorder (recorder=1; docs/recorder.md) is a run that does not
 * end: a CPU's hooks count into a small ring of hot buckets of its own,
 * and a delayed work, the fold, moves the buckets at least
 * TCP_RT_REC_AGE old into one fine ring of series_buckets buckets, summed
 * over the CPUs, which rt-network-recorder shows without consuming it;
 * with recorder_coarse, each bucket the fold completes is also added into
 * a coarse ring of TCP_RT_REC_COARSE buckets each, for the minutes before,
 * which rt-network-recorder-coarse shows the same way.
 * A task at least recorder_slow_us long (or a write to recorder_freeze)
 * asks for the buckets around it,
 * from TCP_RT_REC_BEFORE_US before its start to TCP_RT_REC_AFTER_US past
 * its end: the fold copies them out of the fine ring into a frozen
 * window as it completes them, and queues the window for
 * rt-network-windows, read once.
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
 *     in process and softirq context, preemption off (tcp_rt_hooks.c),
 *     and may nest; atomics keep every count, and a CPU only ever writes
 *     to its own array's cache lines.
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
 *   - The recorder's hot buckets: a CPU's hooks claim a free one for the
 *     bucket of their clock with cmpxchg() on its tag, mark the lines
 *     they touch in its dirty word (set_bit()) and add as a run's hooks
 *     do; the fold, on another CPU, takes a bucket only once it is
 *     TCP_RT_REC_AGE old, xchg()s its dirty word and counters to 0 and
 *     frees its tag last (release).  Age alone does not keep a hook out:
 *     one stalled between its clock and its adds (an interrupt storm, a
 *     hypervisor's vCPU preempted for milliseconds), or counting at an
 *     older clock (__tcp_rt_series_add()), would add after the fold had
 *     emptied its place and leave its counts behind for a later bucket.
 *     So a hook holds its CPU's tcp_rt_rec_busy word from before it looks
 *     at the fold's progress (next_b) to after its adds, and the fold
 *     publishes next_b, then waits for each CPU's hooks of before that to
 *     end (tcp_rt_rec_quiesce()), then empties: a hook sees the new next_b
 *     or the fold sees the hook.  A hook whose bucket is below next_b (the
 *     hook late), or whose place still holds an older bucket (the fold
 *     late), counts nothing and says so in recorder_late.  Hooks run with
 *     preemption off, so a CPU's holds nest, innermost out first, and the
 *     fold waits on another CPU's: the word is that CPU's hooks' depth
 *     (the low byte) and the times it went back to 0 (the rest), each
 *     changed by its own CPU only.  tcp_rt_rec_mutex guards the
 *     fine and coarse rings and the fold's progress: the fold writes them,
 *     rt-network-recorder's (and -coarse's) open copies them; it is
 *     taken under tcp_rt_series_mutex, and the fold takes nothing else,
 *     so retiring (under tcp_rt_series_mutex) may cancel the fold
 *     synchronously.
 *   - The recorder's frozen windows: a slow task's hook widens the span
 *     wanted (tcp_rt_rec_want) under tcp_rt_rec_want_lock, a raw spinlock
 *     with interrupts off (hooks run in process and softirq context, and
 *     on PREEMPT_RT may sleep on no lock); the fold takes the span and
 *     turns it into windows.  The windows being copied (rec->wins), those
 *     waiting for a reader (tcp_rt_rec_ready) and their count are guarded
 *     by tcp_rt_rec_mutex; a reader takes one away on open and frees it
 *     on release.
 */

#define pr_fmt(fmt) "tcp_rt: " fmt

#include <linux/atomic.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/hash.h>
#include <linux/jump_label.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
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
/*
 * The recorder folds a hot bucket once it is this many buckets old, every
 * TCP_RT_REC_FOLD_BUCKETS buckets or every jiffy, the longer.  A CPU's hot
 * ring holds two fold periods, that age and two buckets more, and at
 * least TCP_RT_REC_HOT_MIN buckets (a power of two): what is left over is
 * how late the fold may run before a hook counts late (30 ms at 1 ms).
 */
#define TCP_RT_REC_AGE		2
#define TCP_RT_REC_FOLD_BUCKETS	4
#define TCP_RT_REC_HOT_MIN	32
/*
 * A slow task's window: from this long before its start to this long
 * after its end, at most the fine ring's length (a longer span is cut
 * into windows of that length).  At most TCP_RT_REC_WINDOWS windows are
 * being copied or wait for their reader; one more is not frozen, and
 * counted in recorder_windows_dropped.  A window complete waits the
 * after time again for a slow task that reaches it.
 */
#define TCP_RT_REC_BEFORE_US	200000
#define TCP_RT_REC_AFTER_US	100000
#define TCP_RT_REC_WINDOWS	8
/*
 * The coarse ring's buckets (recorder_coarse, 0: none) are this many fine
 * ones: 10 ms at series_us 1000, so that 6000 of them hold the last
 * minute in what 600 ms of fine buckets take.
 */
#define TCP_RT_REC_COARSE	10

DEFINE_STATIC_KEY_FALSE(tcp_rt_series_on);
DEFINE_STATIC_KEY_FALSE(tcp_rt_series_host_on);
DEFINE_STATIC_KEY_FALSE(tcp_rt_series_out_on);

/* A socket that moved data in the run, and the last bucket it did so. */
struct tcp_rt_series_flow {
	unsigned long sk;	/* 0: free */
	u32 mark[2];		/* that bucket + 1: in its port's line, the host's */
};

/*
 * One of the recorder's shared rings, the fold's: the fine one, of the
 * run's buckets, and the coarse one, of TCP_RT_REC_COARSE of them each.
 */
struct tcp_rt_rec_ring {
	u32 n;			/* places; 0: no such ring */
	u32 k;			/* fine buckets a bucket of it */
	s32 *v;			/* [n][slot][stride] */
	u64 *tag;		/* the bucket + 1 each place holds; 0: none */
};

/*
 * The recorder's part of a run.  A CPU's memory (run->cpu[cpu]) is then
 * its hot ring: hot tags (the bucket + 1 each place holds; 0: free), hot
 * dirty words (a bit per line touched), and hot x lines x stride counters.
 */
struct tcp_rt_series_rec {
	u32 hot;		/* places in a CPU's hot ring: a power of 2 */
	u32 nfine;		/* buckets in the fine ring (series_buckets) */
	unsigned long fold_jiffies;
	u64 next_b;		/* buckets below it are folded, or being */
	struct tcp_rt_rec_ring fine;	/* nfine places */
	struct tcp_rt_rec_ring coarse;	/* recorder_coarse places */
	s32 open[TCP_RT_SERIES_SLOTS];	/* open-gauge changes below next_b */
	struct list_head wins;	/* windows being copied, oldest first */
	u64 wins_hi;		/* buckets below it are in a window, or never */
};

/*
 * A frozen window: the recorder's buckets [lo, hi), copied out of the
 * fine ring as the fold completes them ([lo, copied) so far) into a
 * finished run's table, then queued for rt-network-windows.
 */
struct tcp_rt_rec_win {
	struct list_head node;	/* in rec->wins, then tcp_rt_rec_ready */
	struct tcp_rt_series_run *t;
	u64 lo, hi, copied;
	u64 floor;		/* it may grow back to here: the window before ends */
	size_t bytes;		/* its table's */
	u32 slow;		/* the slow tasks that asked for it */
	u32 freezes;		/* and the recorder_freeze writes */
	u32 clipped;		/* buckets gone from the ring before copied */
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
	struct tcp_rt_series_rec *rec;	/* the recorder's; NULL: a run */
};

/* Where a hook counts: this CPU's counters of the bucket of its clock. */
struct tcp_rt_series_at {
	atomic_t *bucket;	/* slot 0's counters */
	unsigned long *dirty;	/* the recorder's: the lines touched */
	u32 b;			/* the bucket's index in the run */
};

static DEFINE_MUTEX(tcp_rt_series_mutex);
static DEFINE_MUTEX(tcp_rt_series_cpu_mutex);
static LIST_HEAD(tcp_rt_series_live);
static int tcp_rt_series_cpuhp = -1;	/* our dynamic cpuhp state */
static struct tcp_rt_series_run __rcu *tcp_rt_series_cur;
static struct tcp_rt_series_run *tcp_rt_series_ready;
static bool tcp_rt_series_running;
static bool tcp_rt_series_recording;	/* the one running is the recorder */
static u32 tcp_rt_series_gen;

static void tcp_rt_rec_fold_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(tcp_rt_rec_fold_work, tcp_rt_rec_fold_fn);
static DEFINE_MUTEX(tcp_rt_rec_mutex);
/*
 * The recorder the fold works on: set before its first queueing, cleared
 * once it is cancelled.
 */
static struct tcp_rt_series_run *tcp_rt_rec_run;
static LIST_HEAD(tcp_rt_rec_ready);
static unsigned int tcp_rt_rec_nwins;	/* being copied or ready */
static long tcp_rt_rec_win_bytes;	/* what they take */

/* The span the slow tasks since the last fold want, in tcp_clock_us(). */
static DEFINE_RAW_SPINLOCK(tcp_rt_rec_want_lock);
static struct {
	u64 lo, hi;
	u32 n, freezes;		/* slow tasks, recorder_freeze writes */
} tcp_rt_rec_want;

static atomic_long_t tcp_rt_series_nr_runs = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_series_nr_unread = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_series_nr_dropped = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_series_nr_flows_missed = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_series_nr_cpu_nomem = ATOMIC_LONG_INIT(0);
/*
 * A CPU's recorder holds (see the top): the depth of its hooks between
 * their look at next_b and their last add in the low byte, above it the
 * times that depth went back to 0.
 */
#define TCP_RT_REC_DEPTH	0xffUL
static DEFINE_PER_CPU(unsigned long, tcp_rt_rec_busy);

static atomic_long_t tcp_rt_rec_nr_late = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_rec_nr_folds = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_rec_nr_slow = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_rec_nr_freezes = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_rec_nr_wins = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_rec_nr_wins_dropped = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_rec_nr_wins_clipped = ATOMIC_LONG_INIT(0);

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
	if (run->rec) {
		vfree(run->rec->fine.v);
		vfree(run->rec->fine.tag);
		vfree(run->rec->coarse.v);
		vfree(run->rec->coarse.tag);
		kfree(run->rec);
	}
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

/* A recorder's CPU memory: its hot tags, then dirty words, then counters. */
static unsigned long *tcp_rt_rec_dirty(const struct tcp_rt_series_run *run,
				       unsigned long *tags)
{
	return tags + run->rec->hot;
}

static atomic_t *tcp_rt_rec_counters(const struct tcp_rt_series_run *run,
				     unsigned long *tags, u32 place)
{
	return (atomic_t *)(tags + 2 * run->rec->hot) +
	       (size_t)place * run->nslots * run->stride;
}

/* This CPU's hooks hold the fold off their hot places (see the top). */
static void tcp_rt_rec_hold(void)
{
	this_cpu_inc(tcp_rt_rec_busy);
	/* pairs with the fold's: it sees this hold, or this hook its next_b */
	smp_mb();
}

static void tcp_rt_rec_unhold(void)
{
	/* the adds, before the fold may see the hold gone */
	smp_wmb();
	/* the outermost: depth back to 0 and the generation up, in one add */
	this_cpu_add(tcp_rt_rec_busy,
		     (this_cpu_read(tcp_rt_rec_busy) & TCP_RT_REC_DEPTH) == 1 ?
		     TCP_RT_REC_DEPTH : -1UL);
}

/*
 * The recorder: this CPU's hot place for bucket @b, claimed if free, held
 * until tcp_rt_series_at_end().  False when the fold has taken @b or is
 * taking it (the hook late), or the place still holds an older bucket
 * the fold has not taken yet (the fold late): the event is counted in
 * recorder_late, not in another bucket.
 */
static bool tcp_rt_rec_place(const struct tcp_rt_series_run *run,
			     unsigned long *tags, u64 b,
			     struct tcp_rt_series_at *at)
{
	u32 i = b & (run->rec->hot - 1);
	unsigned long t;

	tcp_rt_rec_hold();
	if (b < READ_ONCE(run->rec->next_b))
		goto late;
	t = READ_ONCE(tags[i]);
	if (t != b + 1) {
		if (t)
			goto late;
		t = cmpxchg(&tags[i], 0, b + 1);
		if (t && t != b + 1)
			goto late;
	}
	at->dirty = tcp_rt_rec_dirty(run, tags) + i;
	at->bucket = tcp_rt_rec_counters(run, tags, i);
	return true;
late:
	tcp_rt_rec_unhold();
	atomic_long_inc(&tcp_rt_rec_nr_late);
	return false;
}

/*
 * This CPU's counters of @run for the bucket of @now_us (tcp_clock_us())
 * in *@at; false outside the run.
 */
static bool tcp_rt_series_bucket(const struct tcp_rt_series_run *run,
				 u64 now_us, struct tcp_rt_series_at *at)
{
	atomic_t *cpu;
	u64 off, b;

	if (now_us < run->start_us)
		return false;
	off = now_us - run->start_us;
	if (off >= run->span_us)
		return false;
	cpu = READ_ONCE(run->cpu[raw_smp_processor_id()]);
	if (unlikely(!cpu)) {
		/* online mid-run, and no memory was found for it */
		atomic_long_inc(&tcp_rt_series_nr_cpu_nomem);
		return false;
	}
	b = div_u64(off, run->width_us);
	at->b = b;
	if (run->rec)
		return tcp_rt_rec_place(run, (unsigned long *)cpu, b, at);
	at->dirty = NULL;
	at->bucket = cpu + (size_t)b * run->nslots * run->stride;
	return true;
}

/* A hook's counting at @at, a true tcp_rt_series_bucket()'s, is over. */
static void tcp_rt_series_at_end(const struct tcp_rt_series_at *at)
{
	if (at->dirty)
		tcp_rt_rec_unhold();
}

/*
 * Under rcu_read_lock(): the run under way in *@run, and where this CPU
 * counts now in *@at, until tcp_rt_series_at_end(); false outside a run.
 */
static bool tcp_rt_series_now(struct tcp_rt_series_run **run,
			      struct tcp_rt_series_at *at)
{
	*run = rcu_dereference(tcp_rt_series_cur);
	return *run && tcp_rt_series_bucket(*run, tcp_clock_us(), at);
}

/* The counters of line @slot where @at is, marked for the recorder's fold. */
static atomic_t *tcp_rt_series_line(const struct tcp_rt_series_run *run,
				    const struct tcp_rt_series_at *at,
				    unsigned int slot)
{
	if (at->dirty && !test_bit(slot, at->dirty))
		set_bit(slot, at->dirty);
	return at->bucket + slot * run->stride;
}

/* The counters of @key's line where @at is, claimed if new; NULL if full. */
static atomic_t *tcp_rt_series_port(struct tcp_rt_series_run *run,
				    const struct tcp_rt_series_at *at, u32 key)
{
	int slot = tcp_rt_series_slot(run, key);

	if (slot < 0) {
		atomic_long_inc(&tcp_rt_series_nr_dropped);
		return NULL;
	}
	return tcp_rt_series_line(run, at, slot);
}

/* The counters of the host's line where @at is (run->host >= 0). */
static atomic_t *tcp_rt_series_host_line(const struct tcp_rt_series_run *run,
					 const struct tcp_rt_series_at *at)
{
	return tcp_rt_series_line(run, at, run->host);
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
	struct tcp_rt_series_at at;
	atomic_t *slot;

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
	if (!tcp_rt_series_bucket(run, now_us, &at))
		goto out;
	slot = tcp_rt_series_port(run, &at, key);
	if (slot)
		tcp_rt_series_put(run, slot, field, n);
	tcp_rt_series_at_end(&at);
out:
	rcu_read_unlock();
}

/*
 * The window around [@start_us, @end_us) (tcp_clock_us()) wanted: by a
 * slow task (@slow), or a recorder_freeze write.  The next fold takes it.
 */
static void tcp_rt_rec_want_span(u64 start_us, u64 end_us, bool slow)
{
	u64 lo = start_us > TCP_RT_REC_BEFORE_US ?
		 start_us - TCP_RT_REC_BEFORE_US : 0;
	u64 hi = end_us + TCP_RT_REC_AFTER_US;
	unsigned long flags;
	bool none;

	raw_spin_lock_irqsave(&tcp_rt_rec_want_lock, flags);
	none = !tcp_rt_rec_want.n && !tcp_rt_rec_want.freezes;
	if (none || lo < tcp_rt_rec_want.lo)
		tcp_rt_rec_want.lo = lo;
	if (none || hi > tcp_rt_rec_want.hi)
		tcp_rt_rec_want.hi = hi;
	if (slow)
		tcp_rt_rec_want.n++;
	else
		tcp_rt_rec_want.freezes++;
	raw_spin_unlock_irqrestore(&tcp_rt_rec_want_lock, flags);
}

/*
 * A task of @key done, from @start_us to @end_us, its record written at
 * @now_us: counted, and when the recorder runs and it was slow, the span
 * around it wanted (the next fold freezes it).
 */
void __tcp_rt_series_done(u32 key, u64 start_us, u64 end_us, u64 now_us)
{
	unsigned int slow = READ_ONCE(tcp_rt_recorder_slow_us);

	__tcp_rt_series_add(key, now_us, TCP_RT_SER_DONE, 1);
	if (!slow || end_us - start_us < slow ||
	    !READ_ONCE(tcp_rt_series_recording))
		return;
	atomic_long_inc(&tcp_rt_rec_nr_slow);
	tcp_rt_rec_want_span(start_us, end_us, true);
}

/*
 * recorder_freeze: the window around the span of @dur_us from
 * @start_real_us (wall clock, as a record's start) wanted, as a slow
 * task's is.  -EINVAL, said in one line, while the recorder is off or for
 * a span that ends ahead of the clock (a window reaching into the future
 * would hold every later one off).
 */
int tcp_rt_series_freeze(u64 start_real_us, u64 dur_us)
{
	u64 now_real = div_u64(ktime_get_real_ns(), NSEC_PER_USEC);
	u64 now = tcp_clock_us(), start;
	u32 usec;

	if (!READ_ONCE(tcp_rt_series_recording)) {
		pr_err("recorder_freeze: the recorder is off (write 1 to recorder)\n");
		return -EINVAL;
	}
	if (start_real_us > now_real || dur_us > now_real - start_real_us) {
		u64 sec = div_u64_rem(start_real_us, USEC_PER_SEC, &usec);

		pr_err("recorder_freeze: %llu.%06u and %llu us end ahead of the clock\n",
		       sec, usec, dur_us);
		return -EINVAL;
	}
	start = now - min(now_real - start_real_us, now);
	atomic_long_inc(&tcp_rt_rec_nr_freezes);
	tcp_rt_rec_want_span(start, start + dur_us, false);
	return 0;
}

/* New data of tracked connection @key: @n bytes in (@out false) or out. */
void __tcp_rt_series_bytes(u32 key, const struct sock *sk, bool out, u32 n)
{
	struct tcp_rt_series_run *run;
	struct tcp_rt_series_at at;
	atomic_t *slot;

	rcu_read_lock();
	if (!tcp_rt_series_now(&run, &at))
		goto out;
	slot = tcp_rt_series_port(run, &at, key);
	if (slot) {
		tcp_rt_series_put(run, slot, out ? TCP_RT_SER_BYTES_OUT :
						   TCP_RT_SER_BYTES_IN, n);
		tcp_rt_series_put_far(run, slot, out ? TCP_RT_SER_FAR_OUT :
						       TCP_RT_SER_FAR_IN, sk, n);
	}
	tcp_rt_series_at_end(&at);
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
	u32 rcv_nxt = READ_ONCE(tp->rcv_nxt);
	struct tcp_rt_series_in in = {};
	struct tcp_rt_series_run *run;
	struct tcp_rt_series_at at;
	atomic_t *slot;

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
	if (!tcp_rt_series_now(&run, &at))
		goto out;
	if (key) {
		slot = tcp_rt_series_port(run, &at, key);
		if (slot) {
			tcp_rt_series_in_common(run, slot, &in);
			if (in.len && tcp_rt_series_flow(run, sk, at.b, false))
				tcp_rt_series_put(run, slot, TCP_RT_SER_FLOWS, 1);
		}
	}
	if (run->host < 0)
		goto done;
	slot = tcp_rt_series_host_line(run, &at);
	tcp_rt_series_in_common(run, slot, &in);
	if (!in.len)
		goto done;
	tcp_rt_series_put(run, slot, TCP_RT_SER_BYTES_IN, in.len - in.dup);
	tcp_rt_series_put(run, slot, TCP_RT_SER_SEGS_IN, in.segs);
	tcp_rt_series_put_far(run, slot, TCP_RT_SER_FAR_IN, sk,
			      in.len - in.dup);
	if (tcp_rt_series_flow(run, sk, at.b, true))
		tcp_rt_series_put(run, slot, TCP_RT_SER_FLOWS, 1);
done:
	tcp_rt_series_at_end(&at);
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
	struct tcp_rt_series_at at;
	bool data, retrans;
	atomic_t *slot;

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
	if (!tcp_rt_series_now(&run, &at))
		goto out;
	if (key && data && run->flows) {
		slot = tcp_rt_series_port(run, &at, key);
		if (slot && tcp_rt_series_flow(run, sk, at.b, false))
			tcp_rt_series_put(run, slot, TCP_RT_SER_FLOWS, 1);
	}
	if (run->host < 0)
		goto done;
	slot = tcp_rt_series_host_line(run, &at);
	if (len) {
		tcp_rt_series_put(run, slot, TCP_RT_SER_BYTES_OUT, len);
		tcp_rt_series_put(run, slot, TCP_RT_SER_SEGS_OUT,
				  tcp_skb_pcount(skb));
		tcp_rt_series_put_far(run, slot, TCP_RT_SER_FAR_OUT, sk, len);
	} else {
		tcp_rt_series_put(run, slot, TCP_RT_SER_RETRANS,
				  tcp_skb_pcount(skb));
	}
	if (data && tcp_rt_series_flow(run, sk, at.b, true))
		tcp_rt_series_put(run, slot, TCP_RT_SER_FLOWS, 1);
done:
	tcp_rt_series_at_end(&at);
out:
	rcu_read_unlock();
}

/* A TCP connection of the host was established, or one closed. */
void __tcp_rt_series_conn(bool estab)
{
	struct tcp_rt_series_run *run;
	struct tcp_rt_series_at at;

	rcu_read_lock();
	if (tcp_rt_series_now(&run, &at)) {
		if (run->host >= 0)
			tcp_rt_series_put(run, tcp_rt_series_host_line(run, &at),
					  estab ? TCP_RT_SER_ESTAB :
						  TCP_RT_SER_CLOSED, 1);
		tcp_rt_series_at_end(&at);
	}
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

/* The recorder's rings for @run's bucket width (TCP_RT_REC_HOT_MIN). */
static struct tcp_rt_series_rec *tcp_rt_rec_config(const struct tcp_rt_series_run *run)
{
	struct tcp_rt_series_rec *rec = kzalloc(sizeof(*rec), GFP_KERNEL);
	unsigned int fold_us, span;

	if (!rec)
		return NULL;
	fold_us = max_t(unsigned int, TCP_RT_REC_FOLD_BUCKETS * run->width_us,
			jiffies_to_usecs(1));
	rec->fold_jiffies = max(usecs_to_jiffies(fold_us), 1UL);
	span = DIV_ROUND_UP(jiffies_to_usecs(rec->fold_jiffies), run->width_us);
	rec->hot = roundup_pow_of_two(max_t(unsigned int, TCP_RT_REC_HOT_MIN,
					    2 * span + TCP_RT_REC_AGE + 2));
	rec->nfine = run->nbuckets;
	rec->fine.n = rec->nfine;
	rec->fine.k = 1;
	rec->coarse.n = READ_ONCE(tcp_rt_recorder_coarse);
	rec->coarse.k = TCP_RT_REC_COARSE;
	INIT_LIST_HEAD(&rec->wins);
	return rec;
}

/* The settings a run (or the recorder) takes when it starts (tcp_rt_params.c). */
static struct tcp_rt_series_run *tcp_rt_series_config(bool recorder)
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
	if (recorder) {
		run->rec = tcp_rt_rec_config(run);
		if (!run->rec) {
			kfree(run);
			return NULL;
		}
	}
	return run;
}

static size_t tcp_rt_series_flows_bytes(const struct tcp_rt_series_run *run)
{
	if (!(run->ext & BIT(TCP_RT_SER_FLOWS - TCP_RT_SER_BASE)))
		return 0;
	return sizeof(struct tcp_rt_series_flow) << TCP_RT_SERIES_FLOW_BITS;
}

/* Bytes of one CPU's counters: a run's buckets, or the recorder's hot ring. */
static size_t tcp_rt_series_cpu_bytes(const struct tcp_rt_series_run *run)
{
	if (run->rec)
		return run->rec->hot * (2 * sizeof(unsigned long) +
					(size_t)run->nslots * run->stride *
					sizeof(atomic_t));
	return tcp_rt_series_cells(run) * sizeof(atomic_t);
}

/* One of the recorder's shared rings, its tags with it. */
static size_t tcp_rt_rec_ring_bytes(const struct tcp_rt_series_run *run,
				    const struct tcp_rt_rec_ring *ring)
{
	return (size_t)ring->n * (run->nslots * run->stride * sizeof(s32) +
				  sizeof(u64));
}

/* The recorder's fine and coarse rings. */
static size_t tcp_rt_rec_rings_bytes(const struct tcp_rt_series_run *run)
{
	return tcp_rt_rec_ring_bytes(run, &run->rec->fine) +
	       tcp_rt_rec_ring_bytes(run, &run->rec->coarse);
}

/* The most a frozen window's table takes: the fine ring's length. */
static size_t tcp_rt_rec_win_max_bytes(const struct tcp_rt_series_run *run)
{
	return (size_t)run->rec->nfine * run->nslots * run->stride *
	       sizeof(s32);
}

/*
 * Bytes @run takes at most on @ncpus CPUs: their counters, and at its end
 * the merged table beside them (the recorder: its fine and coarse rings
 * and its frozen windows), and the active-flow table.
 */
static unsigned long tcp_rt_series_mem(const struct tcp_rt_series_run *run,
				       unsigned int ncpus)
{
	size_t table = run->rec ? tcp_rt_rec_rings_bytes(run) +
				  TCP_RT_REC_WINDOWS * tcp_rt_rec_win_max_bytes(run) :
				  tcp_rt_series_cpu_bytes(run);

	return tcp_rt_series_cpu_bytes(run) * (unsigned long)ncpus + table +
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
	/* zeroed before seen: the fold reads it from another CPU */
	smp_store_release(&run->cpu[cpu], a);
	atomic_long_add(bytes, &run->bytes);
	return 0;
}

/* @ring's places and tags, zeroed (none for a ring of none). */
static int tcp_rt_rec_ring_alloc(const struct tcp_rt_series_run *run,
				 struct tcp_rt_rec_ring *ring)
{
	if (!ring->n)
		return 0;
	ring->v = vzalloc(array_size(ring->n, run->nslots * run->stride *
				     sizeof(s32)));
	ring->tag = vzalloc(array_size(ring->n, sizeof(u64)));
	return ring->v && ring->tag ? 0 : -ENOMEM;
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
	if (run->rec) {
		err = tcp_rt_rec_ring_alloc(run, &run->rec->fine) ?:
		      tcp_rt_rec_ring_alloc(run, &run->rec->coarse);
		if (err)
			return err;
		atomic_long_add(tcp_rt_rec_rings_bytes(run), &run->bytes);
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
 * A run (@recorder: the recorder) as the series_* settings say now, read
 * once (a write racing the start cannot make the hooks attached and the
 * run disagree), its memory taken: or an ERR_PTR, said in one line.
 * *@rcv: it needs the receive hooks, which the caller attaches before
 * tcp_rt_series_begin().
 */
struct tcp_rt_series_run *tcp_rt_series_prepare(bool recorder, bool *rcv)
{
	const char *name = recorder ? "recorder" : "series_run";
	struct tcp_rt_series_run *run;
	unsigned int ncpus;
	unsigned long bytes;
	int err;

	run = tcp_rt_series_config(recorder);
	if (!run)
		return ERR_PTR(-ENOMEM);
	/* the CPUs counted are those the arrays are taken for */
	cpus_read_lock();
	ncpus = num_online_cpus();
	bytes = tcp_rt_series_mem(run, ncpus);
	if (bytes > TCP_RT_SERIES_MEM_MAX) {
		pr_err("%s: %u buckets x %u lines x %u counters on %u online CPUs need %lu MiB (%zu KiB a CPU), more than %lu; use fewer series_buckets%s, ports or series_ext measures\n",
		       name, run->nbuckets, run->nslots, run->stride, ncpus,
		       DIV_ROUND_UP(bytes, 1UL << 20),
		       DIV_ROUND_UP(tcp_rt_series_cpu_bytes(run), 1024),
		       TCP_RT_SERIES_MEM_MAX >> 20,
		       recorder ? ", recorder_coarse" : "");
		err = -EINVAL;
	} else {
		err = tcp_rt_series_alloc(run);
		if (err)
			pr_err("%s: no memory for %u buckets x %u lines\n",
			       name, run->nbuckets, run->nslots);
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
		if (tcp_rt_series_recording)
			pr_err("%s: the recorder is on; write 0 to recorder to end it\n",
			       run->rec ? "recorder" : "series_run");
		else
			pr_err("%s: a run is in progress; write 0 to series_run to end it\n",
			       run->rec ? "recorder" : "series_run");
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
	if (run->rec) {
		/* it does not end */
		run->span_us = U64_MAX - run->start_us;
		raw_spin_lock_irq(&tcp_rt_rec_want_lock);
		tcp_rt_rec_want.n = 0;
		tcp_rt_rec_want.freezes = 0;
		raw_spin_unlock_irq(&tcp_rt_rec_want_lock);
		tcp_rt_rec_run = run;
		queue_delayed_work(system_wq, &tcp_rt_rec_fold_work,
				   run->rec->fold_jiffies);
	}
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
 * calls tcp_rt_series_end(); 0 for the recorder, which does not end.
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
	WRITE_ONCE(tcp_rt_series_recording, !!run->rec);
	WRITE_ONCE(tcp_rt_series_running, true);
	if (run->rec) {
		mutex_unlock(&tcp_rt_series_mutex);
		return 0;
	}
	/* the walk of the open tasks may have outlasted a short run */
	end = run->start_us + run->span_us;
	now = tcp_clock_us();
	mutex_unlock(&tcp_rt_series_mutex);
	return now < end ? usecs_to_jiffies(end - now) + 1 : 1;
}

static void tcp_rt_rec_win_cut(struct tcp_rt_series_run *run);

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

/*
 * The recorder ends: its fold stops, and it goes, rings and all (nothing
 * is kept; rt-network-recorder's readers hold copies).  Called with
 * tcp_rt_series_mutex held, the hooks done with it.
 */
static void tcp_rt_rec_retire(struct tcp_rt_series_run *run)
{
	cancel_delayed_work_sync(&tcp_rt_rec_fold_work);
	mutex_lock(&tcp_rt_rec_mutex);
	tcp_rt_rec_run = NULL;
	tcp_rt_rec_win_cut(run);
	mutex_unlock(&tcp_rt_rec_mutex);
	tcp_rt_series_free(run);
	WRITE_ONCE(tcp_rt_series_running, false);
	WRITE_ONCE(tcp_rt_series_recording, false);
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
	if (run->rec) {
		tcp_rt_rec_retire(run);
		return;
	}
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
 * End the run (@recorder: the recorder; one of the other kind goes on):
 * at once (@now), or only once its last bucket is over (the caller's
 * timer, which may be early, late or stale).  Returns the jiffies until
 * its end if it goes on, 0 once no run of that kind runs; its table is
 * then complete.
 */
unsigned long tcp_rt_series_end(bool recorder, bool now)
{
	struct tcp_rt_series_run *run;
	unsigned long left = 0;
	u64 t = tcp_clock_us();

	mutex_lock(&tcp_rt_series_mutex);
	run = rcu_dereference_protected(tcp_rt_series_cur,
					lockdep_is_held(&tcp_rt_series_mutex));
	if (run && !run->rec != !recorder)
		run = NULL;
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

bool tcp_rt_series_is_recording(void)
{
	return READ_ONCE(tcp_rt_series_recording);
}

/* A run prepared (not begun) is the recorder. */
bool tcp_rt_series_run_is_recorder(const struct tcp_rt_series_run *run)
{
	return run->rec;
}

/* ------------------------------------------------------------------------
 * The recorder's tables: snapshots and frozen windows
 */

/*
 * An empty table of @n buckets of @run's lines (a finished run's: one
 * that rt-network-series' lines are printed from), or NULL.
 */
static struct tcp_rt_series_run *tcp_rt_rec_table(const struct tcp_rt_series_run *run,
						  u64 n)
{
	size_t cells = (size_t)run->nslots * run->stride;
	struct tcp_rt_series_run *t;

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return NULL;
	INIT_LIST_HEAD(&t->live);
	t->sum = vzalloc(array_size(n, cells * sizeof(s32)));
	if (!t->sum) {
		kfree(t);
		return NULL;
	}
	t->width_us = run->width_us;
	t->nbuckets = n;
	t->nslots = run->nslots;
	t->nports = run->nports;
	t->host = run->host;
	t->ext = run->ext;
	t->stride = run->stride;
	memcpy(t->col, run->col, sizeof(t->col));
	return t;
}

/* @run's ports as claimed now (a slot is claimed once, never released). */
static void tcp_rt_rec_keys(struct tcp_rt_series_run *t,
			    const struct tcp_rt_series_run *run)
{
	u32 s;

	for (s = 0; s < run->nslots; s++)
		t->key[s] = READ_ONCE(run->key[s]);
}

/*
 * Bucket @b of @ring into @v, the tasks open at the recorder's start
 * added to the open gauge; false, @v zeroed, when the ring no longer
 * holds it.  Called with tcp_rt_rec_mutex held.
 */
static bool tcp_rt_rec_ring_copy(const struct tcp_rt_series_run *run,
				 const struct tcp_rt_rec_ring *ring, u64 b,
				 s32 *v)
{
	size_t cells = (size_t)run->nslots * run->stride;
	u32 i, s;

	div_u64_rem(b, ring->n, &i);
	if (ring->tag[i] != b + 1) {
		memset(v, 0, cells * sizeof(s32));
		return false;
	}
	memcpy(v, ring->v + i * cells, cells * sizeof(s32));
	for (s = 0; s < run->nports; s++)
		v[s * run->stride + TCP_RT_SER_OPEN] +=
			atomic_read(&run->initial[s]);
	return true;
}

/* Fine bucket @b into @v: tcp_rt_rec_ring_copy() of the fine ring. */
static bool tcp_rt_rec_copy(const struct tcp_rt_series_run *run, u64 b,
			    s32 *v)
{
	return tcp_rt_rec_ring_copy(run, &run->rec->fine, b, v);
}

/*
 * A copy of what @ring holds, its last buckets complete (a coarse one
 * once its last fine one is folded), as a finished run's table
 * (rt-network-series' format), its buckets @ring's width; NULL for a
 * ring of none.  Called with tcp_rt_series_mutex held, the recorder under
 * way.
 */
static struct tcp_rt_series_run *tcp_rt_rec_snapshot(const struct tcp_rt_series_run *run,
						     const struct tcp_rt_rec_ring *ring)
{
	size_t cells = (size_t)run->nslots * run->stride;
	struct tcp_rt_series_run *t;
	u64 first, next, b;

	if (!ring->n)
		return NULL;
	t = tcp_rt_rec_table(run, ring->n);
	if (!t)
		return ERR_PTR(-ENOMEM);
	tcp_rt_rec_keys(t, run);
	mutex_lock(&tcp_rt_rec_mutex);
	next = div_u64(run->rec->next_b, ring->k);
	first = next > ring->n ? next - ring->n : 0;
	for (b = first; b < next; b++)
		tcp_rt_rec_ring_copy(run, ring, b, t->sum + (b - first) * cells);
	mutex_unlock(&tcp_rt_rec_mutex);
	t->nbuckets = next - first;
	t->width_us = run->width_us * ring->k;
	t->start_real_ns = run->start_real_ns +
			   first * t->width_us * NSEC_PER_USEC;
	return t;
}

/* The real time bucket @b of @run begins at. */
static u64 tcp_rt_series_bucket_ns(const struct tcp_rt_series_run *run, u64 b)
{
	return run->start_real_ns + b * run->width_us * NSEC_PER_USEC;
}

/* ------------------------------------------------------------------------
 * The recorder's frozen windows, all under tcp_rt_rec_mutex
 */

static size_t tcp_rt_rec_bucket_bytes(const struct tcp_rt_series_run *run)
{
	return (size_t)run->nslots * run->stride * sizeof(s32);
}

static void tcp_rt_rec_win_free(struct tcp_rt_rec_win *w)
{
	if (!w)
		return;
	tcp_rt_series_free(w->t);
	kfree(w);
}

/* @w now spans [@lo, @hi): its times and the bytes the windows take. */
static void tcp_rt_rec_win_span(const struct tcp_rt_series_run *run,
				struct tcp_rt_rec_win *w, u64 lo, u64 hi)
{
	size_t bytes = (hi - lo) * tcp_rt_rec_bucket_bytes(run);

	tcp_rt_rec_win_bytes += bytes - w->bytes;
	w->bytes = bytes;
	w->lo = lo;
	w->hi = hi;
	w->t->nbuckets = hi - lo;
	w->t->start_real_ns = tcp_rt_series_bucket_ns(run, lo);
}

/*
 * What a span brings - its slow tasks @n, its freezes @f, its buckets
 * the ring no longer held @gone - credited to @w, once: zeroed after.
 */
static void tcp_rt_rec_win_credit(struct tcp_rt_rec_win *w, u32 *n, u32 *f,
				  u64 *gone)
{
	w->slow += *n;
	w->freezes += *f;
	w->clipped += *gone;
	*n = 0;
	*f = 0;
	*gone = 0;
}

/*
 * Buckets [@from, @to) of the fine ring into @dst, whose first bucket is
 * @base; those the ring no longer holds stay 0, counted clipped in @w.
 */
static void tcp_rt_rec_win_copy(const struct tcp_rt_series_run *run,
				struct tcp_rt_rec_win *w, s32 *dst, u64 base,
				u64 from, u64 to)
{
	size_t cells = (size_t)run->nslots * run->stride;
	u64 b;

	for (b = from; b < to; b++)
		if (!tcp_rt_rec_copy(run, b, dst + (b - base) * cells))
			w->clipped++;
}

/* A window [@lo, @hi) of @run being copied, or NULL (counted dropped). */
static struct tcp_rt_rec_win *tcp_rt_rec_win_new(const struct tcp_rt_series_run *run,
						 u64 lo, u64 hi)
{
	struct tcp_rt_rec_win *w = NULL;

	if (tcp_rt_rec_nwins < TCP_RT_REC_WINDOWS)
		w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (w)
		w->t = tcp_rt_rec_table(run, hi - lo);
	if (!w || !w->t) {
		kfree(w);
		atomic_long_inc(&tcp_rt_rec_nr_wins_dropped);
		return NULL;
	}
	tcp_rt_rec_win_span(run, w, lo, hi);
	w->copied = lo;
	w->floor = run->rec->wins_hi;
	list_add_tail(&w->node, &run->rec->wins);
	tcp_rt_rec_nwins++;
	return w;
}

/*
 * @w, being copied, made [@lo, @hi) (@lo no later, @hi no earlier): what
 * it holds kept, the buckets before it copied from the ring now (those
 * the ring no longer holds counted clipped).  False, unchanged, without
 * memory.
 */
static bool tcp_rt_rec_win_grow(const struct tcp_rt_series_run *run,
				struct tcp_rt_rec_win *w, u64 lo, u64 hi)
{
	size_t bucket = tcp_rt_rec_bucket_bytes(run), cells = bucket / sizeof(s32);
	s32 *sum = vzalloc(array_size(hi - lo, bucket));

	if (!sum)
		return false;
	memcpy(sum + (w->lo - lo) * cells, w->t->sum,
	       (w->copied - w->lo) * bucket);
	tcp_rt_rec_win_copy(run, w, sum, lo, lo, w->lo);
	vfree(w->t->sum);
	w->t->sum = sum;
	tcp_rt_rec_win_span(run, w, lo, hi);
	return true;
}

/*
 * Buckets [@lo, @hi) wanted by @n slow tasks: the last window made takes
 * what reaches it while it is being copied, grown up to the fine ring's
 * length (back to where the window before it ends, forward past its
 * end); what lies past every window made becomes windows of its own.
 * Windows never overlap: a span that reaches into a window already
 * given out begins where that one ends.
 */
static void tcp_rt_rec_win_want(const struct tcp_rt_series_run *run, u64 lo,
				u64 hi, u32 n, u32 f)
{
	struct tcp_rt_series_rec *rec = run->rec;
	u64 first = rec->next_b > rec->nfine ? rec->next_b - rec->nfine : 0;
	struct tcp_rt_rec_win *w = NULL;
	u64 end, from, gone = 0;

	/*
	 * What the ring no longer holds is not frozen as zeros (a task
	 * longer than the ring, or its record written that late): the
	 * window begins at the ring's oldest bucket, the rest counted
	 * clipped; a span wholly gone is a window dropped.
	 */
	if (lo < first) {
		if (hi <= first) {
			atomic_long_inc(&tcp_rt_rec_nr_wins_dropped);
			return;
		}
		gone = first - lo;
		lo = first;
	}
	if (!list_empty(&rec->wins))
		w = list_last_entry(&rec->wins, struct tcp_rt_rec_win, node);
	if (w && w->hi == rec->wins_hi && lo <= w->hi) {
		tcp_rt_rec_win_credit(w, &n, &f, &gone);
		/* within the ring's length of its end: from <= w->lo */
		from = clamp(lo, w->floor, w->lo);
		if (w->hi > rec->nfine)
			from = max(from, w->hi - rec->nfine);
		end = clamp(hi, w->hi, from + rec->nfine);
		if ((from < w->lo || end > w->hi) &&
		    tcp_rt_rec_win_grow(run, w, from, end))
			rec->wins_hi = w->hi;
	}
	lo = max(lo, rec->wins_hi);
	while (lo < hi) {
		end = min(hi, lo + rec->nfine);
		w = tcp_rt_rec_win_new(run, lo, end);
		if (w)
			tcp_rt_rec_win_credit(w, &n, &f, &gone);
		/* a window dropped gives its buckets up */
		rec->wins_hi = end;
		lo = end;
	}
}

/* @w is complete: to rt-network-windows' reader. */
static void tcp_rt_rec_win_ready(const struct tcp_rt_series_run *run,
				 struct tcp_rt_rec_win *w)
{
	tcp_rt_rec_keys(w->t, run);
	if (w->clipped)
		atomic_long_inc(&tcp_rt_rec_nr_wins_clipped);
	list_move_tail(&w->node, &tcp_rt_rec_ready);
	atomic_long_inc(&tcp_rt_rec_nr_wins);
}

/*
 * After a fold: the span the slow tasks want made into windows, and the
 * buckets now complete copied into the windows.  A window complete goes
 * to its reader once TCP_RT_REC_AFTER_US more have passed, so that the
 * next of a run of slow tasks back to back, whose record a server writes
 * when the next request comes, still grows it.  A bucket the ring no
 * longer holds (a task longer than the ring, its record written late)
 * stays 0, counted in the window's clipped.
 */
static void tcp_rt_rec_freeze(const struct tcp_rt_series_run *run)
{
	struct tcp_rt_series_rec *rec = run->rec;
	u32 linger = DIV_ROUND_UP(TCP_RT_REC_AFTER_US, run->width_us);
	struct tcp_rt_rec_win *w, *tmp;
	u64 lo, hi, end;
	u32 n, f;

	raw_spin_lock_irq(&tcp_rt_rec_want_lock);
	n = tcp_rt_rec_want.n;
	f = tcp_rt_rec_want.freezes;
	lo = tcp_rt_rec_want.lo;
	hi = tcp_rt_rec_want.hi;
	tcp_rt_rec_want.n = 0;
	tcp_rt_rec_want.freezes = 0;
	raw_spin_unlock_irq(&tcp_rt_rec_want_lock);
	if ((n || f) && hi > run->start_us) {
		lo = lo > run->start_us ?
		     div_u64(lo - run->start_us, run->width_us) : 0;
		hi = div_u64(hi - run->start_us + run->width_us - 1,
			     run->width_us);
		tcp_rt_rec_win_want(run, lo, hi, n, f);
	}
	list_for_each_entry_safe(w, tmp, &rec->wins, node) {
		end = min(rec->next_b, w->hi);
		tcp_rt_rec_win_copy(run, w, w->t->sum, w->lo, w->copied, end);
		w->copied = max(w->copied, end);
		if (w->copied == w->hi && rec->next_b >= w->hi + linger)
			tcp_rt_rec_win_ready(run, w);
	}
}

/*
 * The recorder ends: a window being copied is cut where the copy got
 * (dropped, counted, when nothing was).  Called with tcp_rt_rec_mutex
 * held, the fold stopped.
 */
static void tcp_rt_rec_win_cut(struct tcp_rt_series_run *run)
{
	struct tcp_rt_rec_win *w, *tmp;

	list_for_each_entry_safe(w, tmp, &run->rec->wins, node) {
		w->hi = w->copied;
		w->t->nbuckets = w->hi - w->lo;
		if (w->hi > w->lo) {
			tcp_rt_rec_win_ready(run, w);
			continue;
		}
		list_del(&w->node);
		tcp_rt_rec_nwins--;
		tcp_rt_rec_win_bytes -= w->bytes;
		tcp_rt_rec_win_free(w);
		atomic_long_inc(&tcp_rt_rec_nr_wins_dropped);
	}
}

/* The oldest window waiting, taken away from the queue; NULL: none. */
static struct tcp_rt_rec_win *tcp_rt_rec_win_take(void)
{
	struct tcp_rt_rec_win *w;

	mutex_lock(&tcp_rt_rec_mutex);
	w = list_first_entry_or_null(&tcp_rt_rec_ready, struct tcp_rt_rec_win,
				     node);
	if (w) {
		list_del(&w->node);
		tcp_rt_rec_nwins--;
		tcp_rt_rec_win_bytes -= w->bytes;
	}
	mutex_unlock(&tcp_rt_rec_mutex);
	return w;
}

/* ------------------------------------------------------------------------
 * The recorder's fold
 */

/* @ring's place of its bucket @b, zeroed when it held another. */
static s32 *tcp_rt_rec_place_of(const struct tcp_rt_series_run *run,
				const struct tcp_rt_rec_ring *ring, u64 b)
{
	size_t cells = (size_t)run->nslots * run->stride;
	u32 i;
	s32 *v;

	div_u64_rem(b, ring->n, &i);
	v = ring->v + i * cells;
	if (ring->tag[i] != b + 1) {
		memset(v, 0, cells * sizeof(*v));
		ring->tag[i] = b + 1;
	}
	return v;
}

/* The fine ring's place of bucket @b. */
static s32 *tcp_rt_rec_fine(const struct tcp_rt_series_run *run, u64 b)
{
	return tcp_rt_rec_place_of(run, &run->rec->fine, b);
}

/*
 * Fine bucket @b, complete (@v), into its coarse bucket: the counts
 * summed; the open gauge its last fine bucket's; active flows the most of
 * one fine bucket (a socket active in two of them is one flow, and which
 * are the same is no longer known here).
 */
static void tcp_rt_rec_coarse_add(const struct tcp_rt_series_run *run, u64 b,
				  const s32 *v)
{
	const struct tcp_rt_rec_ring *ring = &run->rec->coarse;
	u32 s, k, flows = run->col[TCP_RT_SER_FLOWS];
	s32 *c;

	c = tcp_rt_rec_place_of(run, ring, div_u64(b, ring->k));
	for (s = 0; s < run->nslots; s++) {
		for (k = 0; k < run->stride; k++) {
			if (k == TCP_RT_SER_OPEN)
				c[k] = v[k];
			else if (k == flows)
				c[k] = max(c[k], v[k]);
			else
				c[k] += v[k];
		}
		c += run->stride;
		v += run->stride;
	}
}

/*
 * @cpu's hot buckets below @below into the fine ring: those from @lo on
 * (the ring's span), each counter taken with xchg() so that none of a
 * hook's adds is lost; one older (the fold stalled past the ring) is
 * dropped, counted in recorder_late.  The place is freed last.
 */
static void tcp_rt_rec_fold_cpu(const struct tcp_rt_series_run *run,
				unsigned long *tags, u64 lo, u64 below)
{
	u32 hot = run->rec->hot, i, s, k, stride = run->stride;

	for (i = 0; i < hot; i++) {
		unsigned long t = READ_ONCE(tags[i]), dirty;
		atomic_t *c = tcp_rt_rec_counters(run, tags, i);
		s32 *v = NULL;

		if (!t || t - 1 >= below)
			continue;
		if (t - 1 >= lo)
			v = tcp_rt_rec_fine(run, t - 1);
		else
			atomic_long_inc(&tcp_rt_rec_nr_late);
		dirty = xchg(tcp_rt_rec_dirty(run, tags) + i, 0);
		for_each_set_bit(s, &dirty, run->nslots)
			for (k = 0; k < stride; k++) {
				int n = atomic_xchg(&c[s * stride + k], 0);

				if (v)
					v[s * stride + k] += n;
			}
		/* emptied before a hook may claim it again (its cmpxchg) */
		smp_store_release(&tags[i], 0);
	}
}

/*
 * Buckets [@lo, @below) are whole: those no CPU counted in are zeroed, the
 * open gauge's changes become its value (the tasks open at the start,
 * tcp_rt_rec_ring_copy(), aside), and each goes into the coarse ring.
 */
static void tcp_rt_rec_complete(const struct tcp_rt_series_run *run, u64 lo,
				u64 below)
{
	struct tcp_rt_series_rec *rec = run->rec;
	u64 b;
	u32 s;

	for (b = lo; b < below; b++) {
		s32 *v = tcp_rt_rec_fine(run, b);

		for (s = 0; s < run->nports; s++) {
			s32 *open = v + s * run->stride + TCP_RT_SER_OPEN;

			rec->open[s] += *open;
			*open = rec->open[s];
		}
		if (rec->coarse.n)
			tcp_rt_rec_coarse_add(run, b, v);
	}
}

/*
 * Until the hooks @cpu was in when the fold published next_b are over:
 * its depth is 0, or has been since (the generation moved on).  A hook
 * holds for microseconds, a vCPU stalled as long as it is stalled.
 */
static void tcp_rt_rec_quiesce(unsigned int cpu)
{
	const unsigned long *busy = per_cpu_ptr(&tcp_rt_rec_busy, cpu);
	unsigned long w = READ_ONCE(*busy);

	if (w & TCP_RT_REC_DEPTH)
		while ((READ_ONCE(*busy) ^ w) <= TCP_RT_REC_DEPTH)
			cpu_relax();
	/* pairs with tcp_rt_rec_unhold(): the hooks' adds before */
	smp_rmb();
}

/*
 * Every fold period: the hot buckets TCP_RT_REC_AGE old or more, of every
 * CPU that has a hot ring (one gone offline keeps it, and its last
 * buckets come in too), into the fine ring.
 */
static void tcp_rt_rec_fold_fn(struct work_struct *work)
{
	struct tcp_rt_series_run *run;
	u64 now = tcp_clock_us(), below, lo;
	unsigned int cpu;

	mutex_lock(&tcp_rt_rec_mutex);
	run = tcp_rt_rec_run;
	if (!run || now < run->start_us)
		goto out;
	below = div_u64(now - run->start_us, run->width_us);
	below = below >= TCP_RT_REC_AGE ? below - TCP_RT_REC_AGE + 1 : 0;
	if (below <= run->rec->next_b)
		goto out;
	lo = below > run->rec->nfine ? below - run->rec->nfine : 0;
	lo = max(lo, run->rec->next_b);
	/* a hook of a bucket below it counts late from now on */
	WRITE_ONCE(run->rec->next_b, below);
	/* pairs with tcp_rt_rec_hold(): the hooks that missed it, waited */
	smp_mb();
	for_each_possible_cpu(cpu) {
		/* tcp_rt_series_alloc_one() zeroed it before */
		atomic_t *a = smp_load_acquire(&run->cpu[cpu]);

		if (!a)
			continue;
		tcp_rt_rec_quiesce(cpu);
		tcp_rt_rec_fold_cpu(run, (unsigned long *)a, lo, below);
	}
	tcp_rt_rec_complete(run, lo, below);
	tcp_rt_rec_freeze(run);
	atomic_long_inc(&tcp_rt_rec_nr_folds);
out:
	if (run)
		queue_delayed_work(system_wq, &tcp_rt_rec_fold_work,
				   run->rec->fold_jiffies);
	mutex_unlock(&tcp_rt_rec_mutex);
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
static void tcp_rt_series_show(struct seq_file *m,
			       const struct tcp_rt_series_run *run, loff_t pos)
{
	u32 b = div_u64(pos, run->nslots), s = pos - (loff_t)b * run->nslots;
	const s32 *val = run->sum + (size_t)pos * run->stride;
	u32 key = run->key[s];
	struct timespec64 ts;
	unsigned int f;

	if (!key || tcp_rt_series_empty(run, val))
		return;
	ts = ns_to_timespec64(tcp_rt_series_bucket_ns(run, b));
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
}

static int tcp_rt_series_seq_show(struct seq_file *m, void *v)
{
	tcp_rt_series_show(m, m->private, *(loff_t *)v);
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

/*
 * rt-network-recorder (and rt-network-recorder-coarse, whose inode's
 * private data is not NULL): what the recorder's fine (coarse) ring holds
 * when it is opened, each open its own copy; nothing is consumed.  Empty
 * when the recorder is off, or has no coarse ring.
 */
static int tcp_rt_rec_open(struct inode *inode, struct file *file)
{
	struct tcp_rt_series_run *run, *t = NULL;
	bool coarse = inode->i_private;
	struct seq_file *m;
	int err;

	mutex_lock(&tcp_rt_series_mutex);
	run = rcu_dereference_protected(tcp_rt_series_cur,
					lockdep_is_held(&tcp_rt_series_mutex));
	if (run && run->rec)
		t = tcp_rt_rec_snapshot(run, coarse ? &run->rec->coarse :
						      &run->rec->fine);
	mutex_unlock(&tcp_rt_series_mutex);
	if (IS_ERR(t))
		return PTR_ERR(t);
	err = seq_open(file, &tcp_rt_series_seq_ops);
	if (err) {
		tcp_rt_series_free(t);
		return err;
	}
	m = file->private_data;
	m->private = t;
	return 0;
}

static const struct file_operations tcp_rt_rec_fops = {
	.owner		= THIS_MODULE,
	.open		= tcp_rt_rec_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= tcp_rt_series_release,
};

/*
 * rt-network-windows: the recorder's frozen windows, each open taking
 * the oldest away (read once); nothing when none waits.  A header line,
 * "# window <sec> <usec> <width_us> <buckets> slow=<n> clipped=<n>
 * freezes=<n>", then
 * its buckets in rt-network-series' lines.
 */
static void *tcp_rt_win_seq_start(struct seq_file *m, loff_t *pos)
{
	const struct tcp_rt_rec_win *w = m->private;

	if (!w || *pos > (loff_t)w->t->nbuckets * w->t->nslots)
		return NULL;
	return pos;
}

static void *tcp_rt_win_seq_next(struct seq_file *m, void *v, loff_t *pos)
{
	++*pos;
	return tcp_rt_win_seq_start(m, pos);
}

static int tcp_rt_win_seq_show(struct seq_file *m, void *v)
{
	const struct tcp_rt_rec_win *w = m->private;
	loff_t pos = *(loff_t *)v;
	struct timespec64 ts;

	if (pos) {
		tcp_rt_series_show(m, w->t, pos - 1);
		return 0;
	}
	ts = ns_to_timespec64(w->t->start_real_ns);
	seq_printf(m, "# window %lld %06ld %u %u slow=%u clipped=%u freezes=%u\n",
		   (long long)ts.tv_sec, ts.tv_nsec / NSEC_PER_USEC,
		   w->t->width_us, w->t->nbuckets, w->slow, w->clipped,
		   w->freezes);
	return 0;
}

static const struct seq_operations tcp_rt_win_seq_ops = {
	.start	= tcp_rt_win_seq_start,
	.next	= tcp_rt_win_seq_next,
	.stop	= tcp_rt_series_seq_stop,
	.show	= tcp_rt_win_seq_show,
};

static int tcp_rt_win_open(struct inode *inode, struct file *file)
{
	int err = seq_open(file, &tcp_rt_win_seq_ops);

	if (err)
		return err;
	((struct seq_file *)file->private_data)->private = tcp_rt_rec_win_take();
	return 0;
}

static int tcp_rt_win_release(struct inode *inode, struct file *file)
{
	struct seq_file *m = file->private_data;

	tcp_rt_rec_win_free(m->private);
	return seq_release(inode, file);
}

static const struct file_operations tcp_rt_win_fops = {
	.owner		= THIS_MODULE,
	.open		= tcp_rt_win_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= tcp_rt_win_release,
};

/*
 * The width of the recorder's coarse buckets, 0 when it has no coarse
 * ring (or is off): what rt-network-recorder-coarse's lines are.
 */
static unsigned long tcp_rt_rec_coarse_us(void)
{
	const struct tcp_rt_series_run *run;
	unsigned long us = 0;

	rcu_read_lock();
	run = rcu_dereference(tcp_rt_series_cur);
	if (run && run->rec && run->rec->coarse.n)
		us = (unsigned long)run->width_us * run->rec->coarse.k;
	rcu_read_unlock();
	return us;
}

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
	seq_printf(m, "recorder_folds %ld\n",
		   atomic_long_read(&tcp_rt_rec_nr_folds));
	seq_printf(m, "recorder_late %ld\n",
		   atomic_long_read(&tcp_rt_rec_nr_late));
	seq_printf(m, "recorder_slow %ld\n",
		   atomic_long_read(&tcp_rt_rec_nr_slow));
	seq_printf(m, "recorder_freezes %ld\n",
		   atomic_long_read(&tcp_rt_rec_nr_freezes));
	seq_printf(m, "recorder_windows %ld\n",
		   atomic_long_read(&tcp_rt_rec_nr_wins));
	seq_printf(m, "recorder_windows_dropped %ld\n",
		   atomic_long_read(&tcp_rt_rec_nr_wins_dropped));
	seq_printf(m, "recorder_windows_clipped %ld\n",
		   atomic_long_read(&tcp_rt_rec_nr_wins_clipped));
	mutex_lock(&tcp_rt_rec_mutex);
	seq_printf(m, "recorder_windows_bytes %ld\n", tcp_rt_rec_win_bytes);
	mutex_unlock(&tcp_rt_rec_mutex);
	seq_printf(m, "recorder_coarse_us %lu\n", tcp_rt_rec_coarse_us());
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
	debugfs_create_file("rt-network-recorder", 0400, dir, NULL,
			    &tcp_rt_rec_fops);
	debugfs_create_file("rt-network-recorder-coarse", 0400, dir,
			    (void *)1, &tcp_rt_rec_fops);
	debugfs_create_file("rt-network-windows", 0400, dir, NULL,
			    &tcp_rt_win_fops);
	return 0;
}

/*
 * After the hooks are gone and the file removed (no reader: it pins us),
 * and no run can start any more (tcp_rt_ctl_exit()).
 */
void tcp_rt_series_exit(void)
{
	struct tcp_rt_rec_win *w;

	tcp_rt_series_end(false, true);
	tcp_rt_series_end(true, true);
	mutex_lock(&tcp_rt_series_mutex);
	if (tcp_rt_series_ready)
		pr_info("series: unloaded with a run's table never read\n");
	tcp_rt_series_free(tcp_rt_series_ready);
	tcp_rt_series_ready = NULL;
	mutex_unlock(&tcp_rt_series_mutex);
	if (!list_empty(&tcp_rt_rec_ready))
		pr_info("series: unloaded with %u of the recorder's windows never read\n",
			tcp_rt_rec_nwins);
	while ((w = tcp_rt_rec_win_take()))
		tcp_rt_rec_win_free(w);
	if (tcp_rt_series_cpuhp >= 0)
		cpuhp_remove_state_nocalls(tcp_rt_series_cpuhp);
	tcp_rt_series_cpuhp = -1;
}
