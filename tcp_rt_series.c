// SPDX-License-Identifier: GPL-2.0
/*
 * Fine-timescale series of the tracked ports: on-demand sampling runs in
 * buckets of 100 us, 1 ms or 10 ms, and the rt-network-series file.
 *
 * A run is started by writing 1 to the series_run parameter
 * (tcp_rt_main.c: tcp_rt_series_begin(), the engine's walk of the tasks
 * open then, tcp_rt_series_begun()).  It begins at the next wall-clock
 * multiple of the bucket width and ends by itself
 * series_buckets buckets later, when a delayed work retires it: the hooks
 * stop counting, the per-CPU arrays are merged into one table and the
 * table waits in tcp_rt_series_ready for one reader, who takes it away on
 * open (read-once, like the logs) and frees it on release.
 *
 * Cost outside a run: the hooks test tcp_rt_series_on, a static key, so
 * the test is a no-op jump patched in only while a run is active.
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
 *   - A run's port slots are claimed with cmpxchg() and never released.
 *   - tcp_rt_series_us and tcp_rt_series_buckets (tcp_rt_params.c) are
 *     copied into a run when it starts; changing them affects the next
 *     run.
 *   - Starting and stopping are serialised by their caller
 *     (tcp_rt_main.c's tcp_rt_ctl_mutex).
 */

#define pr_fmt(fmt) "tcp_rt: " fmt

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/jump_label.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <net/tcp.h>

#include "include/tcp_rt.h"

/* Ports one run follows; events of further ports count in series_dropped. */
#define TCP_RT_SERIES_SLOTS	8
/* The most memory one run may take, per-CPU arrays included. */
#define TCP_RT_SERIES_MEM_MAX	(64UL << 20)

DEFINE_STATIC_KEY_FALSE(tcp_rt_series_on);

struct tcp_rt_series_run {
	struct rcu_head rcu;
	u32 gen;
	u32 width_us;
	u32 nbuckets;
	u32 nslots;
	u64 start_us;		/* tcp_clock_us() of bucket 0's start */
	u64 span_us;		/* nbuckets * width_us */
	u64 start_real_ns;	/* the same instant, wall clock */
	u32 key[TCP_RT_SERIES_SLOTS];		/* 0: free */
	atomic_t initial[TCP_RT_SERIES_SLOTS];	/* tasks open at the start */
	atomic_t **cpu;		/* [cpu][bucket][slot][field] while running */
	s32 *sum;		/* the same, merged, once retired */
};

static DEFINE_MUTEX(tcp_rt_series_mutex);
static struct tcp_rt_series_run __rcu *tcp_rt_series_cur;
static struct tcp_rt_series_run *tcp_rt_series_ready;
static bool tcp_rt_series_running;
static u32 tcp_rt_series_gen;
static void tcp_rt_series_work_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(tcp_rt_series_work, tcp_rt_series_work_fn);

static atomic_long_t tcp_rt_series_nr_runs = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_series_nr_unread = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_series_nr_dropped = ATOMIC_LONG_INIT(0);

static size_t tcp_rt_series_cells(const struct tcp_rt_series_run *run)
{
	return (size_t)run->nbuckets * run->nslots * TCP_RT_SER_MAX;
}

static void tcp_rt_series_free_cpu(struct tcp_rt_series_run *run)
{
	int cpu;

	if (!run->cpu)
		return;
	for_each_possible_cpu(cpu)
		vfree(run->cpu[cpu]);
	kfree(run->cpu);
	run->cpu = NULL;
}

static void tcp_rt_series_free(struct tcp_rt_series_run *run)
{
	if (!run)
		return;
	tcp_rt_series_free_cpu(run);
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

	for (i = 0; i < run->nslots; i++) {
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
	size_t cell;
	u64 off;
	int slot;

	if (!now_us)
		now_us = tcp_clock_us();
	rcu_read_lock();
	run = rcu_dereference(tcp_rt_series_cur);
	if (!run || now_us >= run->start_us + run->span_us)
		goto out;
	if (now_us < run->start_us && field != TCP_RT_SER_OPEN)
		goto out;
	slot = tcp_rt_series_slot(run, key);
	if (slot < 0) {
		atomic_long_inc(&tcp_rt_series_nr_dropped);
		goto out;
	}
	if (now_us < run->start_us) {
		atomic_add(n, &run->initial[slot]);
		goto out;
	}
	off = now_us - run->start_us;
	cell = ((size_t)div_u64(off, run->width_us) * run->nslots + slot) *
	       TCP_RT_SER_MAX + field;
	atomic_add(n, &run->cpu[raw_smp_processor_id()][cell]);
out:
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

static struct tcp_rt_series_run *tcp_rt_series_alloc(u32 width_us,
						     u32 nbuckets, u32 nslots)
{
	struct tcp_rt_series_run *run;
	size_t bytes;
	int cpu;

	run = kzalloc(sizeof(*run), GFP_KERNEL);
	if (!run)
		return NULL;
	run->width_us = width_us;
	run->nbuckets = nbuckets;
	run->nslots = nslots;
	run->span_us = (u64)width_us * nbuckets;
	bytes = tcp_rt_series_cells(run) * sizeof(atomic_t);
	run->cpu = kcalloc(nr_cpu_ids, sizeof(*run->cpu), GFP_KERNEL);
	if (!run->cpu)
		goto fail;
	for_each_possible_cpu(cpu) {
		run->cpu[cpu] = vzalloc_node(bytes, cpu_to_node(cpu));
		if (!run->cpu[cpu])
			goto fail;
	}
	return run;

fail:
	tcp_rt_series_free(run);
	return NULL;
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

/* Bytes a run of @nbuckets x @nslots takes while it runs. */
static unsigned long tcp_rt_series_bytes(u32 nbuckets, u32 nslots)
{
	return (unsigned long)nbuckets * nslots * TCP_RT_SER_MAX *
	       sizeof(atomic_t) * (num_possible_cpus() + 1);
}

/*
 * Begin a run: from its return the hooks count into it.  The caller then
 * adds the tasks open now (tcp_rt_series_initial()) and calls
 * tcp_rt_series_begun().
 */
int tcp_rt_series_begin(u32 *gen)
{
	u32 width = READ_ONCE(tcp_rt_series_us);
	u32 nbuckets = READ_ONCE(tcp_rt_series_buckets);
	u32 nslots = clamp(tcp_rt_ports_configured(), 1U,
			   (unsigned int)TCP_RT_SERIES_SLOTS);
	struct tcp_rt_series_run *run;
	unsigned long bytes;
	int err = 0;

	mutex_lock(&tcp_rt_series_mutex);
	if (tcp_rt_series_running) {
		pr_err("series_run: a run is in progress; write 0 to end it\n");
		err = -EBUSY;
		goto out;
	}
	bytes = tcp_rt_series_bytes(nbuckets, nslots);
	if (bytes > TCP_RT_SERIES_MEM_MAX) {
		pr_err("series_run: %u buckets x %u ports on %u CPUs need %lu MiB, more than %lu; use fewer series_buckets\n",
		       nbuckets, nslots, num_possible_cpus(), bytes >> 20,
		       TCP_RT_SERIES_MEM_MAX >> 20);
		err = -EINVAL;
		goto out;
	}
	run = tcp_rt_series_alloc(width, nbuckets, nslots);
	if (!run) {
		pr_err("series_run: no memory for %u buckets x %u ports\n",
		       nbuckets, nslots);
		err = -ENOMEM;
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
	*gen = run->gen;
out:
	mutex_unlock(&tcp_rt_series_mutex);
	return err;
}

/*
 * The run begun last is under way: its end is scheduled, and it is said
 * to run once bucket 0 began, so that what the writer, or whoever sees
 * series_run read 1, does next is counted.
 */
void tcp_rt_series_begun(void)
{
	struct tcp_rt_series_run *run;
	u64 now;

	mutex_lock(&tcp_rt_series_mutex);
	run = rcu_dereference_protected(tcp_rt_series_cur,
					lockdep_is_held(&tcp_rt_series_mutex));
	atomic_long_inc(&tcp_rt_series_nr_runs);
	schedule_delayed_work(&tcp_rt_series_work,
			      usecs_to_jiffies(run->start_us + run->span_us -
					       tcp_clock_us()) + 1);
	now = tcp_clock_us();
	if (now < run->start_us)
		fsleep(run->start_us - now);
	WRITE_ONCE(tcp_rt_series_running, true);
	mutex_unlock(&tcp_rt_series_mutex);
}

/* Sum every CPU's counts; the open gauge becomes a running total. */
static void tcp_rt_series_merge(struct tcp_rt_series_run *run)
{
	size_t i, cells = tcp_rt_series_cells(run);
	unsigned int b, s;
	int cpu;

	for_each_possible_cpu(cpu)
		for (i = 0; i < cells; i++)
			run->sum[i] += atomic_read(&run->cpu[cpu][i]);

	for (s = 0; s < run->nslots; s++) {
		s32 open = atomic_read(&run->initial[s]);

		for (b = 0; b < run->nbuckets; b++) {
			s32 *v = run->sum + ((size_t)b * run->nslots + s) *
					    TCP_RT_SER_MAX;

			open += v[TCP_RT_SER_OPEN];
			v[TCP_RT_SER_OPEN] = open;
		}
	}
}

/* Called with tcp_rt_series_mutex held, from the work or at unload. */
static void tcp_rt_series_retire(void)
{
	struct tcp_rt_series_run *run;

	run = rcu_dereference_protected(tcp_rt_series_cur,
					lockdep_is_held(&tcp_rt_series_mutex));
	if (!run)
		return;
	RCU_INIT_POINTER(tcp_rt_series_cur, NULL);
	static_branch_disable(&tcp_rt_series_on);
	/* Every hook that found the run has finished counting. */
	synchronize_rcu();

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
	if (run->sum)
		tcp_rt_series_ready = run;
	else
		tcp_rt_series_free(run);
	WRITE_ONCE(tcp_rt_series_running, false);
}

static void tcp_rt_series_work_fn(struct work_struct *work)
{
	mutex_lock(&tcp_rt_series_mutex);
	tcp_rt_series_retire();
	mutex_unlock(&tcp_rt_series_mutex);
}

/* End the run now, if one runs; it is complete when this returns. */
void tcp_rt_series_stop(void)
{
	mutex_lock(&tcp_rt_series_mutex);
	if (tcp_rt_series_running)
		mod_delayed_work(system_wq, &tcp_rt_series_work, 0);
	mutex_unlock(&tcp_rt_series_mutex);
	flush_delayed_work(&tcp_rt_series_work);
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

static bool tcp_rt_series_empty(const s32 *v)
{
	unsigned int i;

	for (i = 0; i < TCP_RT_SER_MAX; i++)
		if (v[i])
			return false;
	return true;
}

/* One line per port per bucket that saw an event or had a task open. */
static int tcp_rt_series_seq_show(struct seq_file *m, void *v)
{
	const struct tcp_rt_series_run *run = m->private;
	loff_t pos = *(loff_t *)v;
	u32 b = div_u64(pos, run->nslots), s = pos - (loff_t)b * run->nslots;
	const s32 *val = run->sum + (size_t)pos * TCP_RT_SER_MAX;
	u32 key = run->key[s];
	struct timespec64 ts;
	unsigned int i;

	if (!key || tcp_rt_series_empty(val))
		return 0;
	ts = ns_to_timespec64(run->start_real_ns +
			      (u64)b * run->width_us * NSEC_PER_USEC);
	seq_printf(m, "%lld %06ld %s%u", (long long)ts.tv_sec,
		   ts.tv_nsec / NSEC_PER_USEC,
		   key & TCP_RT_KEY_PEER ? "P" : "", key & 0xffff);
	for (i = 0; i < TCP_RT_SER_MAX; i++)
		seq_printf(m, " %d", val[i]);
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

void tcp_rt_series_status(struct seq_file *m)
{
	seq_printf(m, "series_runs %ld\n",
		   atomic_long_read(&tcp_rt_series_nr_runs));
	seq_printf(m, "series_unread %ld\n",
		   atomic_long_read(&tcp_rt_series_nr_unread));
	seq_printf(m, "series_dropped %ld\n",
		   atomic_long_read(&tcp_rt_series_nr_dropped));
}

void tcp_rt_series_init(struct dentry *dir)
{
	debugfs_create_file("rt-network-series", 0400, dir, NULL,
			    &tcp_rt_series_fops);
}

/* After the hooks are gone and the file removed (no reader: it pins us). */
void tcp_rt_series_exit(void)
{
	/* No run can start any more (tcp_rt_ctl_exit()). */
	cancel_delayed_work_sync(&tcp_rt_series_work);
	mutex_lock(&tcp_rt_series_mutex);
	tcp_rt_series_retire();
	if (tcp_rt_series_ready)
		pr_info("series: unloaded with a run's table never read\n");
	tcp_rt_series_free(tcp_rt_series_ready);
	tcp_rt_series_ready = NULL;
	mutex_unlock(&tcp_rt_series_mutex);
}
