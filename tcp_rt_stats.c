// SPDX-License-Identifier: GPL-2.0
/*
 * Per-port aggregation and the rt-network-stats file.
 *
 * Completed tasks are summed per port in per-CPU tables.  Each CPU has two
 * banks; the hot path adds to bank[gen & 1].  Every stats_interval the
 * worker flips gen, waits for an RCU grace period (the hooks run inside
 * RCU read-side sections, so every task counted in the old bank is then
 * complete), and drains the old bank.  A task therefore lands in exactly
 * one interval, and the hot path touches only its own CPU's memory with
 * interrupts off (hooks run in process and softirq context alike).
 *
 * A bank holds TCP_RT_STATS_SLOTS ports, found by open addressing: memory
 * is fixed and does not depend on how many ports the ranges cover.  A task
 * whose port finds no free slot is counted in stats_dropped.
 *
 * The stats file is a single global relay buffer in flight-recorder mode,
 * like the logs.  Its only writer is the worker, so it needs no lock.
 */

#define pr_fmt(fmt) "tcp_rt: " fmt

#include <linux/atomic.h>
#include <linux/hash.h>
#include <linux/mm.h>
#include <linux/relay.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>

#include "include/tcp_rt.h"
#include "include/tcp_rt_relay.h"
#include "include/tcp_rt_compat.h"

#define TCP_RT_STATS_SUBBUF_SIZE	(16 * 1024)
#define TCP_RT_STATS_SLOTS_BITS		7
#define TCP_RT_STATS_SLOTS		BIT(TCP_RT_STATS_SLOTS_BITS)
#define TCP_RT_STATS_LINE_LEN		192

struct tcp_rt_stats_slot {
	u32 key;		/* TCP_RT_KEY_*; 0: free */
	u32 fails;		/* W records */
	u64 tasks;
	u64 duration;
	u64 process;
	u64 rtt;
	u64 sent;
	u64 upload;
	u64 recv;
	u64 retrans;
	u64 segs;
};

struct tcp_rt_stats_bank {
	struct tcp_rt_stats_slot slot[TCP_RT_STATS_SLOTS];
};

struct tcp_rt_stats_pcpu {
	struct tcp_rt_stats_bank bank[2];
};

static struct tcp_rt_stats_pcpu __percpu *tcp_rt_stats_pcpu;
static unsigned int tcp_rt_stats_gen;
static struct delayed_work tcp_rt_stats_work;
static struct rchan *tcp_rt_stats_chan;
static atomic_long_t tcp_rt_stats_overwrites = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_stats_nr_lines = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_stats_nr_dropped = ATOMIC_LONG_INIT(0);

/* The slot of @key in @bank, claimed if new; NULL when the bank is full. */
static struct tcp_rt_stats_slot *tcp_rt_stats_slot(struct tcp_rt_stats_bank *bank,
						   u32 key)
{
	u32 h = hash_32(key, TCP_RT_STATS_SLOTS_BITS);
	unsigned int i;

	for (i = 0; i < TCP_RT_STATS_SLOTS; i++) {
		struct tcp_rt_stats_slot *s;

		s = &bank->slot[(h + i) & (TCP_RT_STATS_SLOTS - 1)];
		if (s->key == key)
			return s;
		if (!s->key) {
			s->key = key;
			return s;
		}
	}
	return NULL;
}

/*
 * Account a completed task (@t) or, with @t NULL, a W record.  Called from
 * the hooks, inside an RCU read-side section.
 */
void tcp_rt_stats_add(u32 key, const struct tcp_rt_task_sample *t)
{
	struct tcp_rt_stats_bank *bank;
	struct tcp_rt_stats_slot *s;
	unsigned long flags;

	local_irq_save(flags);
	bank = &this_cpu_ptr(tcp_rt_stats_pcpu)->bank[READ_ONCE(tcp_rt_stats_gen) & 1];
	s = tcp_rt_stats_slot(bank, key);
	if (!s) {
		atomic_long_inc(&tcp_rt_stats_nr_dropped);
	} else if (!t) {
		s->fails++;
	} else {
		s->tasks++;
		s->duration += t->duration;
		s->process += t->process;
		s->rtt += t->rtt;
		s->sent += t->sent;
		s->upload += t->upload;
		s->recv += t->recv;
		s->retrans += t->retrans;
		s->segs += t->segs;
	}
	local_irq_restore(flags);
}

static int tcp_rt_stats_cmp(const void *a, const void *b)
{
	const struct tcp_rt_stats_slot *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/* Add @from into the table @tab of @n entries sorted by key; new keys go at
 * the end (the caller sorts again).
 */
static unsigned int tcp_rt_stats_merge(struct tcp_rt_stats_slot *tab,
				       unsigned int n,
				       const struct tcp_rt_stats_slot *from)
{
	struct tcp_rt_stats_slot *s;
	unsigned int i;

	for (i = 0; i < n; i++)
		if (tab[i].key == from->key)
			break;
	s = &tab[i];
	if (i == n) {
		memset(s, 0, sizeof(*s));
		s->key = from->key;
		n++;
	}
	s->fails += from->fails;
	s->tasks += from->tasks;
	s->duration += from->duration;
	s->process += from->process;
	s->rtt += from->rtt;
	s->sent += from->sent;
	s->upload += from->upload;
	s->recv += from->recv;
	s->retrans += from->retrans;
	s->segs += from->segs;
	return n;
}

static u64 tcp_rt_div(u64 a, u64 b)
{
	return b ? div64_u64(a, b) : 0;
}

/*
 * The averages are over the completed tasks (R, P), which `tasks` counts;
 * fail_per_1000 is over the tasks that ended, completed or failed (R + W),
 * so that a port whose every response failed reads 1000, not 0.
 */
static void tcp_rt_stats_line(time64_t now, const struct tcp_rt_stats_slot *s)
{
	char line[TCP_RT_STATS_LINE_LEN];
	bool peer = s->key & TCP_RT_KEY_PEER;
	struct rchan_buf *buf;
	unsigned long flags;
	u64 n = s->tasks;
	char *to;
	int len;

	len = scnprintf(line, sizeof(line),
			"%lld all %s%u %llu %llu %llu %llu %llu %llu %llu %llu %llu\n",
			(long long)now, peer ? "P" : "", s->key & 0xffff,
			tcp_rt_div(s->duration, n), tcp_rt_div(s->process, n),
			tcp_rt_div(s->retrans * 1000, s->segs),
			tcp_rt_div(s->rtt, n),
			peer ? 0 : tcp_rt_div((u64)s->fails * 1000, n + s->fails),
			tcp_rt_div(s->sent, n), tcp_rt_div(s->upload, n),
			tcp_rt_div(s->recv, n), n);
	/* as relay_write(), ordered for our reader (tcp_rt_relay.c) */
	local_irq_save(flags);
	buf = *this_cpu_ptr(tcp_rt_stats_chan->buf);
	to = tcp_rt_relay_reserve(buf, len);
	if (to) {
		memcpy(to, line, len);
		tcp_rt_relay_commit(buf, to + len);
	}
	local_irq_restore(flags);
	atomic_long_inc(&tcp_rt_stats_nr_lines);
}

/*
 * Close the interval: collect the old bank of every CPU, then write a line
 * for every listed port and for every other port where a task ended (an R,
 * a P or a W).
 */
static void tcp_rt_stats_flush(bool print)
{
	unsigned int max = TCP_RT_STATS_SLOTS * num_possible_cpus() +
			   TCP_RT_STATS_LISTED_MAX;
	u32 listed[TCP_RT_STATS_LISTED_MAX];
	struct tcp_rt_stats_slot *tab;
	unsigned int old, n = 0, nl, i;
	time64_t now;
	int cpu;

	old = tcp_rt_stats_gen & 1;
	WRITE_ONCE(tcp_rt_stats_gen, tcp_rt_stats_gen + 1);
	synchronize_rcu();
	now = ktime_get_real_seconds();

	tab = print ? kvmalloc_array(max, sizeof(*tab), GFP_KERNEL) : NULL;
	for_each_possible_cpu(cpu) {
		struct tcp_rt_stats_bank *bank;

		bank = &per_cpu_ptr(tcp_rt_stats_pcpu, cpu)->bank[old];
		for (i = 0; tab && i < TCP_RT_STATS_SLOTS; i++)
			if (bank->slot[i].key)
				n = tcp_rt_stats_merge(tab, n, &bank->slot[i]);
		memset(bank, 0, sizeof(*bank));
	}
	if (!print)
		return;
	if (!tab) {
		pr_warn_ratelimited("no memory for the stats of this interval\n");
		atomic_long_inc(&tcp_rt_stats_nr_dropped);
		return;
	}

	/* Listed ports first, in the order given, even without tasks. */
	nl = tcp_rt_listed_ports(listed, ARRAY_SIZE(listed));
	for (i = 0; i < nl; i++) {
		struct tcp_rt_stats_slot zero = { .key = listed[i] };
		unsigned int j;

		for (j = 0; j < n; j++)
			if (tab[j].key == listed[i])
				break;
		tcp_rt_stats_line(now, j < n ? &tab[j] : &zero);
		if (j < n)
			tab[j].key = 0;		/* printed already */
	}
	sort(tab, n, sizeof(*tab), tcp_rt_stats_cmp, NULL);
	for (i = 0; i < n; i++)
		if (tab[i].key && (tab[i].tasks || tab[i].fails))
			tcp_rt_stats_line(now, &tab[i]);
	kvfree(tab);
}

static void tcp_rt_stats_worker(struct work_struct *work)
{
	tcp_rt_stats_flush(!READ_ONCE(tcp_rt_stats_off));
	schedule_delayed_work(&tcp_rt_stats_work,
			      READ_ONCE(tcp_rt_stats_interval) * HZ);
}

static int tcp_rt_stats_subbuf_start(TCP_RT_SUBBUF_START_ARGS)
{
	if (prev_subbuf && relay_buf_full(buf))
		atomic_long_inc(&tcp_rt_stats_overwrites);
	return 1;
}

/* relay would name the file "rt-network-stats0"; one global buffer keeps the
 * name TCP-RT users know.
 */
static struct dentry *tcp_rt_stats_create_file(const char *filename,
					       struct dentry *parent,
					       umode_t mode,
					       struct rchan_buf *buf,
					       int *is_global)
{
	*is_global = 1;
	return tcp_rt_relay_create_file("rt-network-stats", parent, mode, buf);
}

static tcp_rt_relay_cb_const struct rchan_callbacks tcp_rt_stats_callbacks = {
	.subbuf_start		= tcp_rt_stats_subbuf_start,
	.create_buf_file	= tcp_rt_stats_create_file,
	.remove_buf_file	= tcp_rt_relay_remove_file,
};

unsigned long tcp_rt_stats_lines(void)
{
	return atomic_long_read(&tcp_rt_stats_nr_lines);
}

unsigned long tcp_rt_stats_overwritten(void)
{
	return atomic_long_read(&tcp_rt_stats_overwrites);
}

unsigned long tcp_rt_stats_dropped(void)
{
	return atomic_long_read(&tcp_rt_stats_nr_dropped);
}

int tcp_rt_stats_init(struct dentry *dir, unsigned int n_subbufs)
{
	tcp_rt_stats_pcpu = alloc_percpu(struct tcp_rt_stats_pcpu);
	if (!tcp_rt_stats_pcpu)
		return -ENOMEM;
	tcp_rt_stats_chan = tcp_rt_relay_open("rt-network-stats", dir,
					      TCP_RT_STATS_SUBBUF_SIZE,
					      n_subbufs, &tcp_rt_stats_callbacks,
					      false);
	if (!tcp_rt_stats_chan) {
		pr_err("cannot create the rt-network-stats relay channel\n");
		free_percpu(tcp_rt_stats_pcpu);
		return -ENOMEM;
	}
	INIT_DELAYED_WORK(&tcp_rt_stats_work, tcp_rt_stats_worker);
	schedule_delayed_work(&tcp_rt_stats_work,
			      READ_ONCE(tcp_rt_stats_interval) * HZ);
	return 0;
}

/* Called once the hooks are gone: nothing adds to the banks any more. */
void tcp_rt_stats_exit(void)
{
	cancel_delayed_work_sync(&tcp_rt_stats_work);
	tcp_rt_relay_close(tcp_rt_stats_chan);
	tcp_rt_stats_chan = NULL;
	free_percpu(tcp_rt_stats_pcpu);
}
