// SPDX-License-Identifier: GPL-2.0
/*
 * Request/response timing of TCP connections, on a stock kernel.
 *
 * A connection whose local port is configured (lports, lports_range) is a
 * server connection; one whose peer port is configured (pports,
 * pports_range) is a client connection.  Each is cut into tasks, one request
 * and its response, by following sequence numbers only; see
 * docs/records.md for the definitions and the record formats.
 *
 * Hooks (no kernel patch):
 *   - tracepoint sock:inet_sock_set_state: ESTABLISHED starts tracking,
 *     CLOSE writes the last records and stops it;
 *   - ftrace callbacks at the entry of tcp_rate_skb_sent() (data sent),
 *     tcp_rate_gen() (ACK processed), tcp_send_ack() and
 *     tcp_send_delayed_ack() (data received), or their equivalents where
 *     a kernel inlines one (include/tcp_rt_compat.h); see "Hooks" below.
 *   Until the load-time check ends (tcp_rt_hookcheck.c) they hand every
 *   event to it, and none to the engine.
 *
 * Concurrency and what protects what:
 *   - Per-connection state (struct tcp_rt_conn) is only touched from those
 *     hooks, and each of them runs with the socket lock held (owned by a
 *     process or spinlocked in softirq), so one connection's state is never
 *     updated concurrently.  It is found in a fixed table of RCU hash
 *     chains keyed by the socket pointer: a chain is changed under its
 *     head's bit spinlock with interrupts off, lookups run under RCU and
 *     the state is freed with call_rcu(), so a lookup never sees freed
 *     memory.  Nothing the hooks do allocates or takes a lock that sleeps
 *     on PREEMPT_RT: states come from per-CPU pools (raw spinlocks) that
 *     a work item refills in process context.
 *   - Port configuration is an immutable struct tcp_rt_cfg published with
 *     RCU; parameter writes build a new one under tcp_rt_cfg_mutex.
 *   - The watch bitmaps are the union of every port configured since load.
 *     They only gain bits, so the hot path tests them without a lock: a
 *     connection still tracked after its port was removed stays visible.
 *   - Hot counters are per CPU; rare ones (alloc_failed, pool_empty,
 *     client_cut, conns_sampled_out, fastopen_missed) are atomics.
 *   - Whether a connection is logged (log_sample) is decided once, before
 *     it is published in the table, and only read after.
 *   - A connection's series_state is claimed by cmpxchg() when a series
 *     run starts, then changed by its hooks only (see "open-task gauge");
 *     the series counters are tcp_rt_series.c's.
 *   - tcp_rt_active only goes from true to false (deactivate), read with
 *     READ_ONCE(): a connection that raced with it is tracked to its end.
 *   - Each tracked connection holds a module reference, so the module can
 *     only go away once no state is left.
 */

#define pr_fmt(fmt) "tcp_rt: " fmt

#include <linux/atomic.h>
#include <linux/bitmap.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/error-injection.h>
#include <linux/ftrace.h>
#include <linux/hash.h>
#include <linux/jhash.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/list_bl.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <net/inet_sock.h>
#include <net/ipv6.h>
#include <net/tcp.h>
#include <trace/events/sock.h>

#include "include/tcp_rt.h"
#include "include/tcp_rt_compat.h"

#define TCP_RT_NR_PORTS		65536
#define TCP_RT_MAX_PORTS	6	/* entries in a port list, as TCP-RT */

DEFINE_PER_CPU(struct tcp_rt_pcpu_counters, tcp_rt_counters);
#ifdef TCP_RT_NEED_RECURSION_GUARD
DEFINE_PER_CPU(unsigned int, tcp_rt_in_hook);
#endif

/* ------------------------------------------------------------------------
 * Parameters
 */

/* A port list parameter: single ports, or lo,hi pairs for a range one. */
struct tcp_rt_port_list {
	bool ranges;
	bool peer;		/* applies to the peer port, not the local */
	unsigned int n;
	u16 port[TCP_RT_MAX_PORTS];
};

static struct tcp_rt_port_list tcp_rt_lports;
static struct tcp_rt_port_list tcp_rt_lports_range = { .ranges = true };
static struct tcp_rt_port_list tcp_rt_pports = { .peer = true };
static struct tcp_rt_port_list tcp_rt_pports_range = {
	.ranges = true, .peer = true,
};

static struct tcp_rt_port_list *const tcp_rt_port_lists[] = {
	&tcp_rt_lports, &tcp_rt_lports_range,
	&tcp_rt_pports, &tcp_rt_pports_range,
};

/*
 * The ports in force, as bitmaps indexed by the port in network byte order
 * (the form the socket holds, so the hot path does not swap bytes).
 */
struct tcp_rt_cfg {
	struct rcu_head rcu;
	DECLARE_BITMAP(local, TCP_RT_NR_PORTS);
	DECLARE_BITMAP(peer, TCP_RT_NR_PORTS);
};

static struct tcp_rt_cfg __rcu *tcp_rt_cfg;
static DEFINE_MUTEX(tcp_rt_cfg_mutex);
/*
 * Parameters given at load are parsed before tcp_rt_init() runs, and a
 * load that fails on a later parameter never calls tcp_rt_exit(): until
 * init has built the first configuration, a write only stores the list.
 */
static bool tcp_rt_cfg_live;
static DECLARE_BITMAP(tcp_rt_watch_local, TCP_RT_NR_PORTS) __read_mostly;
static DECLARE_BITMAP(tcp_rt_watch_peer, TCP_RT_NR_PORTS) __read_mostly;

unsigned int tcp_rt_stats_off __read_mostly;
unsigned int tcp_rt_stats_interval __read_mostly = 60;
static unsigned int tcp_rt_log_buf_num = 8;
static unsigned int tcp_rt_stats_buf_num = 8;
static unsigned int tcp_rt_max_tracked __read_mostly = 262144;
static unsigned int tcp_rt_log_sample __read_mostly = 1;
static u32 tcp_rt_log_sample_seed __read_mostly;

static bool tcp_rt_active __read_mostly = true;

static inline unsigned int tcp_rt_port_bit(u16 port)
{
	return (__force u16)htons(port);
}

static void tcp_rt_cfg_add(unsigned long *map, unsigned long *watch,
			   const struct tcp_rt_port_list *l)
{
	unsigned int i, p;

	for (i = 0; i < l->n; i += l->ranges ? 2 : 1) {
		unsigned int hi = l->ranges ? l->port[i + 1] : l->port[i];

		for (p = l->port[i]; p <= hi; p++) {
			__set_bit(tcp_rt_port_bit(p), map);
			set_bit(tcp_rt_port_bit(p), watch);
		}
	}
}

/*
 * Publish the configuration that results from replacing @old by @new
 * (both NULL: the lists as they are).  Called with tcp_rt_cfg_mutex held.
 * Nothing is changed on failure.
 */
static int tcp_rt_cfg_commit(struct tcp_rt_port_list *old,
			     const struct tcp_rt_port_list *new)
{
	struct tcp_rt_cfg *cfg, *prev;
	unsigned int i;

	cfg = kzalloc(sizeof(*cfg), GFP_KERNEL);
	if (!cfg)
		return -ENOMEM;

	for (i = 0; i < ARRAY_SIZE(tcp_rt_port_lists); i++) {
		const struct tcp_rt_port_list *l = tcp_rt_port_lists[i];

		if (l == old)
			l = new;
		if (l->peer)
			tcp_rt_cfg_add(cfg->peer, tcp_rt_watch_peer, l);
		else
			tcp_rt_cfg_add(cfg->local, tcp_rt_watch_local, l);
	}

	if (old)
		*old = *new;
	prev = rcu_replace_pointer(tcp_rt_cfg, cfg,
				   lockdep_is_held(&tcp_rt_cfg_mutex));
	if (prev)
		kfree_rcu(prev, rcu);
	return 0;
}

/* Parse "p1,p2,..." into @out; "" (or a lone newline) means no port. */
static int tcp_rt_ports_parse(const char *val, const struct kernel_param *kp,
			      struct tcp_rt_port_list *out)
{
	char buf[8 * TCP_RT_MAX_PORTS], *s, *tok;
	size_t len = strlen(val);
	unsigned int i, v;

	if (len && val[len - 1] == '\n')
		len--;
	if (len >= sizeof(buf)) {
		pr_err("%s: value too long\n", kp->name);
		return -EINVAL;
	}
	memcpy(buf, val, len);
	buf[len] = '\0';
	out->n = 0;
	if (!len)
		return 0;

	s = buf;
	while ((tok = strsep(&s, ",")) != NULL) {
		if (out->n == TCP_RT_MAX_PORTS) {
			pr_err("%s: more than %d values\n", kp->name,
			       TCP_RT_MAX_PORTS);
			return -EINVAL;
		}
		if (kstrtouint(tok, 10, &v)) {
			pr_err("%s: '%s' is not a port number\n", kp->name, tok);
			return -EINVAL;
		}
		if (v < 1 || v > 65535) {
			pr_err("%s: port %u out of range 1..65535\n",
			       kp->name, v);
			return -EINVAL;
		}
		out->port[out->n++] = v;
	}

	if (!out->ranges)
		return 0;
	if (out->n % 2) {
		pr_err("%s: ranges need lo,hi pairs, got %u values\n",
		       kp->name, out->n);
		return -EINVAL;
	}
	for (i = 0; i < out->n; i += 2) {
		if (out->port[i] > out->port[i + 1]) {
			pr_err("%s: range %u,%u has lo > hi\n", kp->name,
			       out->port[i], out->port[i + 1]);
			return -EINVAL;
		}
	}
	return 0;
}

static int tcp_rt_ports_set(const char *val, const struct kernel_param *kp)
{
	struct tcp_rt_port_list *cur = kp->arg;
	struct tcp_rt_port_list new = *cur;
	int err;

	err = tcp_rt_ports_parse(val, kp, &new);
	if (err)
		return err;

	mutex_lock(&tcp_rt_cfg_mutex);
	if (tcp_rt_cfg_live)
		err = tcp_rt_cfg_commit(cur, &new);
	else
		*cur = new;
	mutex_unlock(&tcp_rt_cfg_mutex);
	if (err)
		pr_err("%s: no memory for the new port set\n", kp->name);
	return err;
}

static int tcp_rt_ports_get(char *buffer, const struct kernel_param *kp)
{
	const struct tcp_rt_port_list *l = kp->arg;
	unsigned int i;
	int len = 0;

	mutex_lock(&tcp_rt_cfg_mutex);
	for (i = 0; i < l->n; i++)
		len += scnprintf(buffer + len, PAGE_SIZE - len, "%s%u",
				 i ? "," : "", l->port[i]);
	mutex_unlock(&tcp_rt_cfg_mutex);
	len += scnprintf(buffer + len, PAGE_SIZE - len, "\n");
	return len;
}

/* Stats keys of the listed lports then pports, in the order given. */
unsigned int tcp_rt_listed_ports(u32 *keys, unsigned int max)
{
	unsigned int i, n = 0;

	mutex_lock(&tcp_rt_cfg_mutex);
	for (i = 0; i < tcp_rt_lports.n && n < max; i++)
		keys[n++] = TCP_RT_KEY_VALID | tcp_rt_lports.port[i];
	for (i = 0; i < tcp_rt_pports.n && n < max; i++)
		keys[n++] = TCP_RT_KEY_VALID | TCP_RT_KEY_PEER |
			    tcp_rt_pports.port[i];
	mutex_unlock(&tcp_rt_cfg_mutex);
	return n;
}

/* How many ports the configuration covers, local and peer. */
unsigned int tcp_rt_ports_configured(void)
{
	const struct tcp_rt_cfg *cfg;
	unsigned int n = 0;

	rcu_read_lock();
	cfg = rcu_dereference(tcp_rt_cfg);
	if (cfg)
		n = bitmap_weight(cfg->local, TCP_RT_NR_PORTS) +
		    bitmap_weight(cfg->peer, TCP_RT_NR_PORTS);
	rcu_read_unlock();
	return n;
}

static const struct kernel_param_ops tcp_rt_ports_ops = {
	.set = tcp_rt_ports_set,
	.get = tcp_rt_ports_get,
};

module_param_cb(lports, &tcp_rt_ports_ops, &tcp_rt_lports, 0644);
MODULE_PARM_DESC(lports, "local (server) ports to track, up to 6: p1,p2,...");
module_param_cb(lports_range, &tcp_rt_ports_ops, &tcp_rt_lports_range, 0644);
MODULE_PARM_DESC(lports_range, "local port ranges, up to 3 pairs: lo,hi,...");
module_param_cb(pports, &tcp_rt_ports_ops, &tcp_rt_pports, 0644);
MODULE_PARM_DESC(pports, "peer (remote server) ports to track, up to 6");
module_param_cb(pports_range, &tcp_rt_ports_ops, &tcp_rt_pports_range, 0644);
MODULE_PARM_DESC(pports_range, "peer port ranges, up to 3 pairs: lo,hi,...");

/* How much of a written value to quote in a message: no newline, 32 max. */
static int tcp_rt_val_len(const char *val)
{
	size_t len = strnlen(val, 32);

	return len && val[len - 1] == '\n' ? len - 1 : len;
}

static int tcp_rt_uint_set(const char *val, const struct kernel_param *kp)
{
	const struct tcp_rt_uint *p = kp->arg;
	unsigned int v;

	if (kstrtouint(val, 10, &v)) {
		pr_err("%s: '%.*s' is not a number\n", kp->name,
		       tcp_rt_val_len(val), val);
		return -EINVAL;
	}
	if (v < p->min || v > p->max) {
		pr_err("%s: %u out of range %u..%u\n", kp->name, v, p->min,
		       p->max);
		return -EINVAL;
	}
	WRITE_ONCE(*p->val, v);
	return 0;
}

static int tcp_rt_uint_get(char *buffer, const struct kernel_param *kp)
{
	const struct tcp_rt_uint *p = kp->arg;

	return scnprintf(buffer, PAGE_SIZE, "%u\n", READ_ONCE(*p->val));
}

const struct kernel_param_ops tcp_rt_uint_ops = {
	.set = tcp_rt_uint_set,
	.get = tcp_rt_uint_get,
};

static struct tcp_rt_uint tcp_rt_stats_arg = {
	.val = &tcp_rt_stats_off, .min = 0, .max = 1,
};
module_param_cb(stats, &tcp_rt_uint_ops, &tcp_rt_stats_arg, 0644);
MODULE_PARM_DESC(stats, "0: write per-port stats (default), 1: do not");

static struct tcp_rt_uint tcp_rt_stats_interval_arg = {
	.val = &tcp_rt_stats_interval, .min = 1, .max = 86400,
};
module_param_cb(stats_interval, &tcp_rt_uint_ops, &tcp_rt_stats_interval_arg,
		0644);
MODULE_PARM_DESC(stats_interval,
		 "seconds between stats lines (1..86400, default 60)");

static struct tcp_rt_uint tcp_rt_log_buf_num_arg = {
	.val = &tcp_rt_log_buf_num, .min = 1, .max = 64,
};
module_param_cb(log_buf_num, &tcp_rt_uint_ops, &tcp_rt_log_buf_num_arg, 0444);
MODULE_PARM_DESC(log_buf_num,
		 "256 KiB sub-buffers per CPU log (1..64, default 8)");

static struct tcp_rt_uint tcp_rt_stats_buf_num_arg = {
	.val = &tcp_rt_stats_buf_num, .min = 1, .max = 64,
};
module_param_cb(stats_buf_num, &tcp_rt_uint_ops, &tcp_rt_stats_buf_num_arg,
		0444);
MODULE_PARM_DESC(stats_buf_num,
		 "16 KiB sub-buffers of the stats file (1..64, default 8)");

static struct tcp_rt_uint tcp_rt_max_tracked_arg = {
	.val = &tcp_rt_max_tracked, .min = 1, .max = 1 << 24,
};
module_param_cb(max_tracked, &tcp_rt_uint_ops, &tcp_rt_max_tracked_arg, 0644);
MODULE_PARM_DESC(max_tracked,
		 "most connections tracked at once (1..16777216, default 262144)");

static struct tcp_rt_uint tcp_rt_log_sample_arg = {
	.val = &tcp_rt_log_sample, .min = 1, .max = 65536,
};
module_param_cb(log_sample, &tcp_rt_uint_ops, &tcp_rt_log_sample_arg, 0644);
MODULE_PARM_DESC(log_sample,
		 "log the records of one connection in N (1..65536, default 1: all); stats and series count every one");

/*
 * Deactivation is one way: connections already tracked are followed to
 * their end, so that their module references drop and rmmod can succeed.
 * The parameter is the way that works under kernel lockdown, where debugfs
 * refuses writes; the debugfs file stays for TCP-RT's tools.  Writing 2
 * also lets go of every connection tracked now (tcp_rt_release_all()):
 * one idle pooled connection no longer holds an unload or an upgrade.
 */
static void tcp_rt_release_all(void);

static void tcp_rt_deactivate(void)
{
	if (READ_ONCE(tcp_rt_active))
		pr_info("deactivated: no new connection will be tracked\n");
	WRITE_ONCE(tcp_rt_active, false);
}

static int tcp_rt_deactivate_set(const char *val, const struct kernel_param *kp)
{
	unsigned int v;

	if (kstrtouint(val, 10, &v) || v > 2) {
		pr_err("deactivate: '%.*s' is not 0, 1 or 2\n",
		       tcp_rt_val_len(val), val);
		return -EINVAL;
	}
	if (v) {
		tcp_rt_deactivate();
		if (v == 2)
			tcp_rt_release_all();
	} else if (!READ_ONCE(tcp_rt_active)) {
		pr_err("deactivate: cannot be undone; reload the module to track again\n");
		return -EINVAL;
	}
	return 0;
}

static int tcp_rt_deactivate_get(char *buffer, const struct kernel_param *kp)
{
	return scnprintf(buffer, PAGE_SIZE, "%d\n", !READ_ONCE(tcp_rt_active));
}

static const struct kernel_param_ops tcp_rt_deactivate_ops = {
	.set = tcp_rt_deactivate_set,
	.get = tcp_rt_deactivate_get,
};
module_param_cb(deactivate, &tcp_rt_deactivate_ops, NULL, 0644);
MODULE_PARM_DESC(deactivate,
		 "1: track no new connection (cannot be undone); 2: also release the tracked ones now; reads 0 or 1");

/* ------------------------------------------------------------------------
 * Per-connection state
 */

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
	struct hlist_bl_node node;
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
};

/*
 * The connection table: a fixed array of RCU hash chains, sized at load.
 * It is written from the state-change tracepoint, where preemption is off
 * and, on PREEMPT_RT, neither an allocation nor a sleeping lock may be
 * taken: so no rhashtable (its bucket lock disables bottom halves, a
 * sleeping lock on RT, and it may allocate to grow).  A chain is locked by
 * its head's bit spinlock with interrupts off, as the tracepoint runs in
 * process and softirq context alike; lookups take no lock.  Past
 * max_tracked / TCP_RT_TABLE_LOAD connections per bucket (max_tracked
 * raised after load) chains only grow longer.
 */
#define TCP_RT_TABLE_LOAD	4
#define TCP_RT_TABLE_MIN	1024U
#define TCP_RT_TABLE_MAX	BIT(22)

static struct hlist_bl_head *tcp_rt_table __read_mostly;
static unsigned int tcp_rt_table_bits __read_mostly;

/*
 * The key is a pointer, of kernel memory no peer chooses: a multiplicative
 * hash of it spreads it as well as jhash would, at a fraction of the cost,
 * on each of the few lookups every segment of a tracked connection makes.
 */
static inline struct hlist_bl_head *tcp_rt_bucket(const struct sock *sk)
{
	return &tcp_rt_table[hash_ptr(sk, tcp_rt_table_bits)];
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

static inline bool tcp_rt_watched(const struct sock *sk)
{
	const struct inet_sock *inet = inet_sk(sk);

	return test_bit((__force u16)inet->inet_sport, tcp_rt_watch_local) ||
	       test_bit((__force u16)inet->inet_dport, tcp_rt_watch_peer);
}

/* Every caller holds rcu_read_lock(): no second one inside. */
static struct tcp_rt_conn *tcp_rt_conn_find(const struct sock *sk)
{
	struct hlist_bl_node *pos;
	struct tcp_rt_conn *c;

	hlist_bl_for_each_entry_rcu(c, pos, tcp_rt_bucket(sk), node)
		if (c->sk == sk)
			return c;
	return NULL;
}

/* Publish @c, unless its socket is in the table already. */
static bool tcp_rt_conn_insert(struct tcp_rt_conn *c)
{
	struct hlist_bl_head *b = tcp_rt_bucket(c->sk);
	struct hlist_bl_node *pos;
	struct tcp_rt_conn *o;
	unsigned long flags;
	bool dup = false;

	local_irq_save(flags);
	hlist_bl_lock(b);
	hlist_bl_for_each_entry(o, pos, b, node)
		dup |= o->sk == c->sk;
	if (!dup)
		hlist_bl_add_head_rcu(&c->node, b);
	hlist_bl_unlock(b);
	local_irq_restore(flags);
	return !dup;
}

static void tcp_rt_conn_unlink(struct tcp_rt_conn *c)
{
	struct hlist_bl_head *b = tcp_rt_bucket(c->sk);
	unsigned long flags;

	local_irq_save(flags);
	hlist_bl_lock(b);
	hlist_bl_del_rcu(&c->node);
	hlist_bl_unlock(b);
	local_irq_restore(flags);
}

static int tcp_rt_table_init(unsigned int max_tracked)
{
	unsigned int n = clamp_t(unsigned int,
				 roundup_pow_of_two(max_tracked) /
				 TCP_RT_TABLE_LOAD, TCP_RT_TABLE_MIN,
				 TCP_RT_TABLE_MAX);
	unsigned int i;

	tcp_rt_table = kvmalloc_array(n, sizeof(*tcp_rt_table), GFP_KERNEL);
	if (!tcp_rt_table)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		INIT_HLIST_BL_HEAD(&tcp_rt_table[i]);
	tcp_rt_table_bits = ilog2(n);
	return 0;
}

/* Every connection held a module reference: the table is empty by now. */
static void tcp_rt_table_free(void)
{
	kvfree(tcp_rt_table);
	tcp_rt_table = NULL;
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

static void tcp_rt_task_start(struct tcp_rt_conn *c,
			      const struct tcp_sock *tp, u64 now)
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
static void tcp_rt_conn_log(const struct tcp_rt_conn *c, const struct sock *sk,
			    enum tcp_rt_rec type, u64 start_us, const u64 *f,
			    unsigned int n)
{
	if (likely(c->logged))
		tcp_rt_log_record(sk, type, start_us, f, n);
	else
		this_cpu_inc(tcp_rt_counters.sampled_out);
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
	tcp_rt_conn_log(c, sk, type, c->t0, f, 10);
	tcp_rt_stats_add(c->key, &t);
	tcp_rt_series_add_at(c->key, now, TCP_RT_SER_DONE, 1);
}

static void tcp_rt_emit_w(const struct tcp_rt_conn *c, const struct sock *sk,
			  u32 unacked, u64 now)
{
	const struct tcp_sock *tp = tcp_sk(sk);
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
	tcp_rt_conn_log(c, sk, TCP_RT_REC_W, c->t0, f, 9);
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
	tcp_rt_conn_log(c, sk, TCP_RT_REC_N, c->t0, f, 5);
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
	tcp_rt_conn_log(c, sk, TCP_RT_REC_E, c->estab_us, f, 6);
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
	    acked > c->task_snd && after(una, c->snd_una))
		c->t3 = tcp_rt_since(c, now);
	c->snd_una = tp->snd_una;
}

/* New in-order data arrived, ending at @end. */
static void tcp_rt_on_data_in(struct tcp_rt_conn *c, const struct sock *sk,
			      u32 end, u64 now)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	tcp_rt_series_add(c->key, TCP_RT_SER_BYTES_IN, end - c->rcv_data);
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
	}
	if (c->phase == TCP_RT_RESPONSE)
		c->t3 = tcp_rt_since(c, now);
	tcp_rt_rcv_to(c, end);
}

/* New data of @len bytes left, starting at c->snd_data. */
static void tcp_rt_on_data_out(struct tcp_rt_conn *c, const struct sock *sk,
			       u32 len, u64 now)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	if (len)
		tcp_rt_series_add(c->key, TCP_RT_SER_BYTES_OUT, len);

	if (c->role == TCP_RT_CLIENT) {
		if (c->phase == TCP_RT_RESPONSE)
			tcp_rt_emit_done(c, sk, TCP_RT_REC_P, now);
		if (c->phase != TCP_RT_REQUEST) {
			tcp_rt_task_start(c, tp, now);
			c->ooo_mark = tp->rcv_ooopack;
		}
		tcp_rt_snd_add(c, len);
		c->t1 = tcp_rt_since(c, now);
		return;
	}

	/* Server: data sent while no request is open (a greeting) is no task. */
	if (c->phase == TCP_RT_REQUEST) {
		c->phase = TCP_RT_RESPONSE;
		c->req_ooo = tp->rcv_ooopack != c->ooo_mark;
		c->ooo_mark = tp->rcv_ooopack;
		c->task_snd = c->snd_bytes;
		c->t2 = tcp_rt_since(c, now);
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
	written = tcp_sk(sk)->write_seq -
		  !!((1 << sk->sk_state) & TCP_RT_FIN_QUEUED);
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

/* At a run's start: claim every tracked connection not claimed yet. */
void tcp_rt_series_enroll_all(u32 gen)
{
	unsigned int i, n = 1U << tcp_rt_table_bits;

	for (i = 0; i < n; i++) {
		struct hlist_bl_node *pos;
		struct tcp_rt_conn *c;

		/* a chain at a time: claims are idempotent, chains stay put */
		rcu_read_lock();
		hlist_bl_for_each_entry_rcu(c, pos, &tcp_rt_table[i], node) {
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

static void tcp_rt_conn_open(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	const struct inet_sock *inet = inet_sk(sk);
	const struct tcp_rt_cfg *cfg;
	struct tcp_rt_conn *c;
	enum tcp_rt_role role;

	if (!READ_ONCE(tcp_rt_active))
		return;

	rcu_read_lock();
	cfg = rcu_dereference(tcp_rt_cfg);
	if (cfg && test_bit((__force u16)inet->inet_sport, cfg->local))
		role = TCP_RT_SERVER;
	else if (cfg && test_bit((__force u16)inet->inet_dport, cfg->peer))
		role = TCP_RT_CLIENT;
	else
		cfg = NULL;
	rcu_read_unlock();
	if (!cfg)
		return;

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

static void tcp_rt_conn_close(const struct sock *sk, int oldstate)
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

/*
 * Release (deactivate=2): a connection still open leaves tracking.  What
 * its state makes a whole record is written: a server's response all
 * acknowledged (R), a client's response all read (P), then E with the
 * totals so far.  A task still open (a request arriving, a response not
 * all acknowledged or not all read) has no record and is counted in
 * released_open; the connection in released.  Called with the socket
 * locked by its owner, bottom halves off and rcu_read_lock() held: no
 * hook of the connection runs meanwhile.
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

enum tcp_rt_release_step {
	TCP_RT_RELEASE_EMPTY,	/* the chain is empty */
	TCP_RT_RELEASE_DONE,	/* its first connection went */
	TCP_RT_RELEASE_BUSY,	/* its first connection is closing */
};

/*
 * Release the first connection of chain @b.  Its socket is pinned
 * (sockets are freed only after an RCU grace period, and a socket whose
 * count fell to 0 is closing: its close hook removes it), then locked as
 * its owner; the state is looked up again under the lock, as the close
 * may have come first, or the memory be a new socket.
 */
static enum tcp_rt_release_step tcp_rt_release_first(struct hlist_bl_head *b)
{
	struct hlist_bl_node *pos;
	struct tcp_rt_conn *c;
	struct sock *sk = NULL;
	bool pinned = false;

	rcu_read_lock();
	hlist_bl_for_each_entry_rcu(c, pos, b, node) {
		sk = (struct sock *)c->sk;
		pinned = refcount_inc_not_zero(&sk->sk_refcnt);
		break;
	}
	rcu_read_unlock();
	if (!sk)
		return TCP_RT_RELEASE_EMPTY;
	if (!pinned)
		return TCP_RT_RELEASE_BUSY;
	lock_sock(sk);
	local_bh_disable();
	rcu_read_lock();
	c = tcp_rt_conn_find(sk);
	if (c)
		tcp_rt_conn_release(c, sk);
	rcu_read_unlock();
	local_bh_enable();
	release_sock(sk);
	sock_put(sk);
	return TCP_RT_RELEASE_DONE;
}

/*
 * The table exists from init to exit; a parameter write can come before
 * init (a load-time value) or during exit, hence the flag, set and read
 * under the mutex.
 */
#define TCP_RT_RELEASE_WAITS	5000	/* of 1 to 2 ms */

static DEFINE_MUTEX(tcp_rt_release_mutex);
static bool tcp_rt_release_live;

static void tcp_rt_release_all(void)
{
	unsigned int i, n;
	long before;

	mutex_lock(&tcp_rt_release_mutex);
	if (!tcp_rt_release_live)
		goto out;
	before = atomic_long_read(&tcp_rt_released);
	n = 1U << tcp_rt_table_bits;
	for (i = 0; i < n; i++) {
		enum tcp_rt_release_step step;
		unsigned int busy = 0;

		while ((step = tcp_rt_release_first(&tcp_rt_table[i]))) {
			if (step == TCP_RT_RELEASE_DONE) {
				busy = 0;
				cond_resched();
				continue;
			}
			/* a close takes microseconds: not seconds */
			if (++busy > TCP_RT_RELEASE_WAITS) {
				pr_warn("release: a connection neither closes nor goes; left tracked\n");
				break;
			}
			usleep_range(1000, 2000);
		}
	}
	pr_info("released %ld tracked connection(s)\n",
		atomic_long_read(&tcp_rt_released) - before);
out:
	mutex_unlock(&tcp_rt_release_mutex);
}

static void tcp_rt_release_set_live(bool live)
{
	mutex_lock(&tcp_rt_release_mutex);
	tcp_rt_release_live = live;
	mutex_unlock(&tcp_rt_release_mutex);
}

/* ------------------------------------------------------------------------
 * Hooks
 */

static void tcp_rt_set_state_probe(void *data, const struct sock *sk,
				   const int oldstate, const int newstate)
{
	if (sk->sk_protocol != IPPROTO_TCP)
		return;
	/* until the load-time check ends (tcp_rt_hookcheck.c) */
	if (static_branch_unlikely(&tcp_rt_hookcheck_on)) {
		tcp_rt_hookcheck_state(sk, newstate);
		return;
	}
	if (!tcp_rt_watched(sk))
		return;
	if (newstate == TCP_ESTABLISHED && oldstate != TCP_ESTABLISHED)
		tcp_rt_conn_open(sk);
	else if (newstate == TCP_CLOSE && oldstate != TCP_CLOSE)
		tcp_rt_conn_close(sk, oldstate);
}

/*
 * The function hooks are ftrace callbacks at function entry, not kprobes:
 * the kprobe core runs one kprobe handler per CPU at a time and skips (and
 * counts) a kprobe that fires while another one's handler runs, which
 * happens whenever a softirq receive interrupts a hook running in process
 * context.  ftrace's recursion guard is per context (task, softirq,
 * hardirq, NMI), so such a nested hook runs; it only refuses recursion
 * within one context, which none of our handlers can cause, and we count
 * that too.
 *
 * The hooked functions are called from other files than their own, so no
 * call that matters is inlined, and each runs once the state it reports is
 * in the socket (kernels that inline the first two get the points beside
 * them instead: TCP_RT_HOOK_XMIT and TCP_RT_HOOK_ACK, in
 * include/tcp_rt_compat.h):
 *   tcp_rate_skb_sent()    a data segment leaves; new data has
 *                          TCP_SKB_CB(skb)->seq == tp->snd_nxt;
 *   tcp_rate_gen()         near the end of tcp_ack(), for every ACK that
 *                          found data in flight: snd_una and the RTT sample
 *                          are updated;
 *   tcp_send_ack(),
 *   tcp_send_delayed_ack() in-order data was queued (rcv_nxt moved) and the
 *                          ACK for it is due; when data is sent first and
 *                          carries that ACK, tcp_rate_skb_sent() catches up;
 *   __tcp_ack_snd_check()  the same, on kernels that may defer that ACK
 *                          (TCP_RT_HOOK_ACK_DUE).
 * All of them run with the socket lock held.
 */
struct tcp_rt_hook {
	struct ftrace_ops ops;
	void (*handler)(struct sock *sk, unsigned long arg1);
	enum tcp_rt_hook_kind kind;	/* what it sees, for the load check */
	atomic_long_t missed;
	char func[32];		/* writable: ftrace_set_filter() takes a buffer */
};

/* New data in a segment leaving: retransmissions start below snd_nxt. */
static u32 tcp_rt_skb_new_data(const struct sock *sk,
			       const struct sk_buff *skb)
{
	const struct tcp_skb_cb *scb = TCP_SKB_CB(skb);

	if (scb->seq != tcp_sk(sk)->snd_nxt)
		return 0;
	return scb->end_seq - scb->seq - !!(scb->tcp_flags & TCPHDR_FIN);
}

/* ACK processed or in-order data received: catch up with the socket. */
static void tcp_rt_hook_sync(struct sock *sk, unsigned long arg1)
{
	struct tcp_rt_conn *c;

	rcu_read_lock();
	c = tcp_rt_conn_find(sk);
	if (c) {
		u64 now = tcp_sk(sk)->tcp_mstamp;

		tcp_rt_series_sync(c, now, false);
		tcp_rt_sync(c, sk, now);
		tcp_rt_series_sync(c, now, false);
	}
	rcu_read_unlock();
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

static void tcp_rt_hook_xmit(struct sock *sk, unsigned long arg1)
{
	const struct sk_buff *skb = (const void *)arg1;
	const struct tcp_skb_cb *scb = TCP_SKB_CB(skb);
	const struct tcp_sock *tp = tcp_sk(sk);
	u32 len = tcp_rt_skb_new_data(sk, skb);
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
	}
	rcu_read_unlock();
}

static struct tcp_rt_hook tcp_rt_hooks[];

/* A hook's event, while the load-time check runs (tcp_rt_hookcheck.c). */
static noinline void tcp_rt_hook_to_check(const struct tcp_rt_hook *hook,
					  const struct sock *sk,
					  unsigned long arg1)
{
	u32 len = 0;

	if (hook->kind == TCP_RT_HOOK_KIND_XMIT)
		len = tcp_rt_skb_new_data(sk, (const void *)arg1);
	tcp_rt_hookcheck_hook(sk, hook - tcp_rt_hooks, len);
}

static void notrace tcp_rt_ftrace(unsigned long ip, unsigned long parent_ip,
				  struct ftrace_ops *ops,
				  struct tcp_rt_ftrace_regs *fregs)
{
	struct tcp_rt_hook *hook = container_of(ops, struct tcp_rt_hook, ops);
	struct sock *sk = (struct sock *)tcp_rt_ftrace_arg(fregs, 0);
	int bit;

	if (static_branch_unlikely(&tcp_rt_hookcheck_on)) {
		tcp_rt_hook_to_check(hook, sk, tcp_rt_ftrace_arg(fregs, 1));
		return;
	}
	if (!tcp_rt_watched(sk))
		return;
	/* Also disables preemption: records go to this CPU's buffer. */
	bit = tcp_rt_recursion_trylock(ip, parent_ip);
	if (unlikely(bit < 0)) {
		atomic_long_inc(&hook->missed);
		return;
	}
	hook->handler(sk, tcp_rt_ftrace_arg(fregs, 1));
	tcp_rt_recursion_unlock(bit);
}

#define TCP_RT_HOOK(fn, h, k) {						\
	.ops = {							\
		.func	= tcp_rt_ftrace,				\
		.flags	= TCP_RT_FTRACE_FLAGS,				\
	},								\
	.handler	= h,						\
	.kind		= TCP_RT_HOOK_KIND_ ## k,			\
	.missed		= ATOMIC_LONG_INIT(0),				\
	.func		= fn,						\
}

/*
 * Selftests only (tcp_rt_module.sh): a build whose ACK hook sits on a
 * function no loopback exchange calls, which the load-time check refuses.
 */
#ifdef TCP_RT_TEST_DEAD_HOOK
#undef TCP_RT_HOOK_ACK
#define TCP_RT_HOOK_ACK		"tcp_v4_mtu_reduced"
#endif

static struct tcp_rt_hook tcp_rt_hooks[] = {
	TCP_RT_HOOK(TCP_RT_HOOK_XMIT, tcp_rt_hook_xmit, XMIT),
	TCP_RT_HOOK(TCP_RT_HOOK_ACK, tcp_rt_hook_sync, ACK),
	TCP_RT_HOOK("tcp_send_ack", tcp_rt_hook_sync, RCV),
	TCP_RT_HOOK("tcp_send_delayed_ack", tcp_rt_hook_sync, RCV),
#ifdef TCP_RT_HOOK_ACK_DUE
	TCP_RT_HOOK(TCP_RT_HOOK_ACK_DUE, tcp_rt_hook_sync, RCV_ALL),
#endif
};

static struct tracepoint *tcp_rt_set_state_tp;

static void tcp_rt_find_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "inet_sock_set_state"))
		tcp_rt_set_state_tp = tp;
}

static unsigned long tcp_rt_probe_missed(void)
{
	unsigned long n = 0;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(tcp_rt_hooks); i++)
		n += atomic_long_read(&tcp_rt_hooks[i].missed);
	return n;
}

static void tcp_rt_status_misses(struct seq_file *m)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(tcp_rt_hooks); i++)
		seq_printf(m, "probe_missed_%s %ld\n", tcp_rt_hooks[i].func,
			   atomic_long_read(&tcp_rt_hooks[i].missed));
}

static int tcp_rt_hook_attach(struct tcp_rt_hook *hook)
{
	int err;

	err = ftrace_set_filter(&hook->ops, hook->func, strlen(hook->func), 1);
	if (err) {
		pr_err("cannot hook %s: not a traceable function here (%d)\n",
		       hook->func, err);
		return err;
	}
	err = register_ftrace_function(&hook->ops);
	if (err) {
		pr_err("cannot hook %s: %d\n", hook->func, err);
		tcp_rt_ftrace_free_filter(&hook->ops);
	}
	return err;
}

static void tcp_rt_hook_detach(struct tcp_rt_hook *hook)
{
	/* Returns once no CPU can still be in the callback. */
	unregister_ftrace_function(&hook->ops);
	tcp_rt_ftrace_free_filter(&hook->ops);
}

static int tcp_rt_hooks_register(void)
{
	unsigned int i;
	int err;

	/* The probe's prototype, checked against the tracepoint's at build. */
	check_trace_callback_type_inet_sock_set_state(tcp_rt_set_state_probe);
	for_each_kernel_tracepoint(tcp_rt_find_tp, NULL);
	if (!tcp_rt_set_state_tp) {
		pr_err("tracepoint sock:inet_sock_set_state not found\n");
		return -ENOENT;
	}

	for (i = 0; i < ARRAY_SIZE(tcp_rt_hooks); i++) {
		err = tcp_rt_hook_attach(&tcp_rt_hooks[i]);
		if (err)
			goto err_hooks;
	}
	err = tracepoint_probe_register(tcp_rt_set_state_tp,
					tcp_rt_set_state_probe, NULL);
	if (err) {
		pr_err("cannot attach to tracepoint inet_sock_set_state: %d\n",
		       err);
		goto err_hooks;
	}
	return 0;

err_hooks:
	while (i--)
		tcp_rt_hook_detach(&tcp_rt_hooks[i]);
	return err;
}

static void tcp_rt_hooks_unregister(void)
{
	unsigned int i;

	tracepoint_probe_unregister(tcp_rt_set_state_tp, tcp_rt_set_state_probe,
				    NULL);
	for (i = 0; i < ARRAY_SIZE(tcp_rt_hooks); i++)
		tcp_rt_hook_detach(&tcp_rt_hooks[i]);
	tracepoint_synchronize_unregister();
}

/* Attach the hooks and prove them (tcp_rt_hookcheck.c); all or nothing. */
static int tcp_rt_hooks_start(void)
{
	struct tcp_rt_hook_desc desc[ARRAY_SIZE(tcp_rt_hooks)];
	unsigned int i;
	int err;

	BUILD_BUG_ON(ARRAY_SIZE(tcp_rt_hooks) > TCP_RT_HOOKS_MAX);
	for (i = 0; i < ARRAY_SIZE(tcp_rt_hooks); i++) {
		desc[i].func = tcp_rt_hooks[i].func;
		desc[i].kind = tcp_rt_hooks[i].kind;
	}
	tcp_rt_hookcheck_begin();
	err = tcp_rt_hooks_register();
	if (err) {
		tcp_rt_hookcheck_end();
		return err;
	}
	err = tcp_rt_hookcheck_run(desc, ARRAY_SIZE(desc));
	if (err)
		tcp_rt_hooks_unregister();
	/* on failure, not before the hooks are gone: nothing is tracked */
	tcp_rt_hookcheck_end();
	return err;
}

/* ------------------------------------------------------------------------
 * debugfs: status and deactivate
 */

static struct dentry *tcp_rt_dir;

/* A per-CPU counter summed: @offset in struct tcp_rt_pcpu_counters. */
static u64 tcp_rt_pcpu_sum(size_t offset)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += *(u64 *)((char *)per_cpu_ptr(&tcp_rt_counters, cpu) +
				offset);
	return sum;
}

static u64 tcp_rt_records(enum tcp_rt_rec type)
{
	return tcp_rt_pcpu_sum(offsetof(struct tcp_rt_pcpu_counters,
					records[type]));
}

static int tcp_rt_status_show(struct seq_file *m, void *v)
{
	static const char * const names[TCP_RT_REC_MAX] = {
		"records_R", "records_W", "records_N", "records_P", "records_E",
	};
	unsigned int i;

	seq_printf(m, "version %s\n", TCP_RT_VERSION);
	seq_printf(m, "active %d\n", READ_ONCE(tcp_rt_active));
	seq_printf(m, "tracked %d\n", atomic_read(&tcp_rt_tracked));
	for (i = 0; i < TCP_RT_REC_MAX; i++)
		seq_printf(m, "%s %llu\n", names[i], tcp_rt_records(i));
	seq_printf(m, "log_subbufs_overwritten %lu\n", tcp_rt_log_overwritten());
	seq_printf(m, "reads_lapped %lu\n", tcp_rt_relay_reads_lapped());
	seq_printf(m, "stats_lines %lu\n", tcp_rt_stats_lines());
	seq_printf(m, "stats_subbufs_overwritten %lu\n",
		   tcp_rt_stats_overwritten());
	seq_printf(m, "stats_dropped %lu\n", tcp_rt_stats_dropped());
	seq_printf(m, "alloc_failed %ld\n",
		   atomic_long_read(&tcp_rt_alloc_failed));
	seq_printf(m, "pool_empty %ld\n", atomic_long_read(&tcp_rt_pool_empty));
	seq_printf(m, "client_cut %ld\n", atomic_long_read(&tcp_rt_client_cut));
	seq_printf(m, "conns_sampled_out %ld\n",
		   atomic_long_read(&tcp_rt_conns_sampled_out));
	seq_printf(m, "fastopen_missed %ld\n",
		   atomic_long_read(&tcp_rt_fastopen_missed));
	seq_printf(m, "released %ld\n", atomic_long_read(&tcp_rt_released));
	seq_printf(m, "released_open %ld\n",
		   atomic_long_read(&tcp_rt_released_open));
	seq_printf(m, "records_sampled_out %llu\n",
		   tcp_rt_pcpu_sum(offsetof(struct tcp_rt_pcpu_counters,
					    sampled_out)));
	seq_printf(m, "probe_missed %lu\n", tcp_rt_probe_missed());
	tcp_rt_status_misses(m);
	tcp_rt_hookcheck_status(m);
	tcp_rt_series_status(m);
	seq_printf(m, "conn_state_bytes %u\n",
		   kmem_cache_size(tcp_rt_conn_cache));
	seq_printf(m, "conn_table_buckets %u\n", 1U << tcp_rt_table_bits);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(tcp_rt_status);

static ssize_t tcp_rt_deactivate_write(struct file *file,
				       const char __user *buf, size_t count,
				       loff_t *ppos)
{
	tcp_rt_deactivate();
	return count;
}

static const struct file_operations tcp_rt_deactivate_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.write	= tcp_rt_deactivate_write,
	.llseek	= noop_llseek,
};

/* ------------------------------------------------------------------------
 * Module
 */

static int tcp_rt_cfg_init(void)
{
	int err;

	mutex_lock(&tcp_rt_cfg_mutex);
	err = tcp_rt_cfg_commit(NULL, NULL);
	tcp_rt_cfg_live = !err;
	mutex_unlock(&tcp_rt_cfg_mutex);
	return err;
}

/*
 * The parameters' sysfs files outlive exit (they go with the module): a
 * port write from then on only stores the list, as before init.
 */
static void tcp_rt_cfg_free(void)
{
	mutex_lock(&tcp_rt_cfg_mutex);
	tcp_rt_cfg_live = false;
	kfree(rcu_dereference_protected(tcp_rt_cfg,
					lockdep_is_held(&tcp_rt_cfg_mutex)));
	RCU_INIT_POINTER(tcp_rt_cfg, NULL);
	mutex_unlock(&tcp_rt_cfg_mutex);
}

static int __init tcp_rt_init(void)
{
	int err;

	tcp_rt_log_sample_seed = get_random_u32();
	err = tcp_rt_cfg_init();
	if (err)
		return err;
	tcp_rt_conn_cache = KMEM_CACHE(tcp_rt_conn, 0);
	if (!tcp_rt_conn_cache) {
		err = -ENOMEM;
		goto err_cfg;
	}
	err = tcp_rt_table_init(READ_ONCE(tcp_rt_max_tracked));
	if (err)
		goto err_cache;
	err = tcp_rt_pool_init();
	if (err)
		goto err_pool;

	tcp_rt_dir = debugfs_create_dir("tcp-rt", NULL);
	if (IS_ERR(tcp_rt_dir)) {
		pr_err("cannot create /sys/kernel/debug/tcp-rt\n");
		err = PTR_ERR(tcp_rt_dir);
		goto err_table;
	}
	err = tcp_rt_relay_fops_init();
	if (err)
		goto err_dir;
	err = tcp_rt_log_init(tcp_rt_dir, tcp_rt_log_buf_num);
	if (err)
		goto err_fops;
	err = tcp_rt_stats_init(tcp_rt_dir, tcp_rt_stats_buf_num);
	if (err)
		goto err_log;
	debugfs_create_file("status", 0444, tcp_rt_dir, NULL,
			    &tcp_rt_status_fops);
	debugfs_create_file("deactivate", 0200, tcp_rt_dir, NULL,
			    &tcp_rt_deactivate_fops);

	err = tcp_rt_series_init(tcp_rt_dir);
	if (err)
		goto err_series;
	/*
	 * Last, and nothing after it can fail: from the moment the load-time
	 * check ends (or the tracepoint is attached, without the check) a
	 * connection may be tracked, holding a module reference and a state
	 * that only its close releases.  Until then nothing is tracked.
	 */
	err = tcp_rt_hooks_start();
	if (err)
		goto err_series;
	tcp_rt_release_set_live(true);
	pr_info("loaded, version %s\n", TCP_RT_VERSION);
	return 0;

err_series:
	tcp_rt_series_exit();
	tcp_rt_stats_exit();
err_log:
	tcp_rt_log_exit();
err_fops:
	tcp_rt_relay_fops_exit();
err_dir:
	debugfs_remove_recursive(tcp_rt_dir);
err_table:
	tcp_rt_pool_free();
err_pool:
	tcp_rt_table_free();
err_cache:
	kmem_cache_destroy(tcp_rt_conn_cache);
err_cfg:
	tcp_rt_cfg_free();
	return err;
}

static void __exit tcp_rt_exit(void)
{
	tcp_rt_release_set_live(false);
	tcp_rt_hooks_unregister();
	tcp_rt_stats_exit();
	tcp_rt_log_exit();
	tcp_rt_relay_fops_exit();
	debugfs_remove_recursive(tcp_rt_dir);
	tcp_rt_series_exit();
	/* Every connection held a reference: the table is empty. */
	tcp_rt_pool_free();
	tcp_rt_table_free();
	rcu_barrier();
	kmem_cache_destroy(tcp_rt_conn_cache);
	tcp_rt_cfg_free();
}

module_init(tcp_rt_init);
module_exit(tcp_rt_exit);

MODULE_AUTHOR("tcp_rt developers");
MODULE_DESCRIPTION("TCP request/response timing (TCP-RT interface) for stock kernels");
MODULE_LICENSE("GPL");
MODULE_VERSION(TCP_RT_VERSION);
