// SPDX-License-Identifier: GPL-2.0
/*
 * Every parameter that configures tcp_rt, and the one place the other
 * parts ask "which ports, which settings": the port lists and their RCU
 * publication, the bounded numeric settings, and whether new connections
 * are tracked at all.  The commands among the parameters (deactivate,
 * series_run) act on the other parts and live in tcp_rt_main.c.  Nothing
 * here calls into another part of the module.
 *
 * Concurrency and what protects what:
 *   - Port and namespace configuration is an immutable struct tcp_rt_cfg
 *     published with RCU; parameter writes build a new one under
 *     tcp_rt_cfg_mutex, which also guards the lists themselves and
 *     tcp_rt_cfg_live.
 *   - The watch bitmaps are the union of every port configured since load.
 *     They only gain bits, so the hooks test them without a lock: a
 *     connection still tracked after its port was removed stays visible.
 *   - Numeric settings, and log_ext's field mask, are single words,
 *     written with WRITE_ONCE() by their parameter and read with
 *     READ_ONCE() where they are used.
 *   - tcp_rt_active only goes from true to false (deactivate), read with
 *     READ_ONCE(): a connection that raced with it is tracked to its end.
 */

#define pr_fmt(fmt) "tcp_rt: " fmt

#include <linux/bitmap.h>
#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <net/inet_sock.h>

#include "include/tcp_rt.h"
#include "include/tcp_rt_compat.h"

#define TCP_RT_MAX_PORTS	6	/* entries in a port list, as TCP-RT */

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
 * The netns parameter: the network namespaces, by inode number, the ports
 * apply in (none listed: all of them).  A Kubernetes node runs about a
 * hundred pods at most by default: the list holds more than that.
 */
#define TCP_RT_MAX_NETNS	128

struct tcp_rt_netns_list {
	unsigned int n;
	u32 inum[TCP_RT_MAX_NETNS];
};

static struct tcp_rt_netns_list tcp_rt_netns;

/*
 * The ports in force, as bitmaps indexed by the port in network byte order
 * (the form the socket holds, so the hot path does not swap bytes), and
 * the namespaces they apply in.
 */
struct tcp_rt_cfg {
	struct rcu_head rcu;
	DECLARE_BITMAP(local, TCP_RT_NR_PORTS);
	DECLARE_BITMAP(peer, TCP_RT_NR_PORTS);
	struct tcp_rt_netns_list netns;
};

static struct tcp_rt_cfg __rcu *tcp_rt_cfg;
static DEFINE_MUTEX(tcp_rt_cfg_mutex);
/*
 * Parameters given at load are parsed before tcp_rt_init() runs, and a
 * load that fails on a later parameter never calls tcp_rt_exit(): until
 * init has built the first configuration, a write only stores the list.
 */
static bool tcp_rt_cfg_live;
DECLARE_BITMAP(tcp_rt_watch_local, TCP_RT_NR_PORTS) __read_mostly;
DECLARE_BITMAP(tcp_rt_watch_peer, TCP_RT_NR_PORTS) __read_mostly;

unsigned int tcp_rt_stats_off __read_mostly;
unsigned int tcp_rt_stats_interval __read_mostly = 60;
unsigned int tcp_rt_log_buf_num = 8;
unsigned int tcp_rt_log_format = TCP_RT_LOG_BINARY;	/* enum tcp_rt_log_format */
unsigned int tcp_rt_stats_buf_num = 8;
unsigned int tcp_rt_max_tracked __read_mostly = 262144;
unsigned int tcp_rt_log_sample __read_mostly = 1;
u32 tcp_rt_log_sample_seed __read_mostly;
unsigned int tcp_rt_series_us = 1000;
unsigned int tcp_rt_series_buckets = 2000;
unsigned int tcp_rt_series_ext;		/* BIT(field - TCP_RT_SER_BASE) */
bool tcp_rt_series_host;
unsigned int tcp_rt_series_far_us = 5000;
unsigned int tcp_rt_recorder_slow_us __read_mostly;
unsigned int tcp_rt_recorder_coarse;
bool tcp_rt_hook_check = true;
unsigned int tcp_rt_log_ext __read_mostly;	/* BIT(enum tcp_rt_ext) */

/* log_ext's names, by field: the order records carry them in. */
const char *const tcp_rt_ext_names[TCP_RT_EXT_MAX] = {
	[TCP_RT_EXT_NETNS]	= "netns",
	[TCP_RT_EXT_CGROUP]	= "cgroup",
	[TCP_RT_EXT_RQ_WAIT]	= "rq_wait",
	[TCP_RT_EXT_APP]	= "app",
	[TCP_RT_EXT_SQ_WAIT]	= "sq_wait",
	[TCP_RT_EXT_RWND]	= "rwnd_limited",
	[TCP_RT_EXT_SNDBUF]	= "sndbuf_limited",
	[TCP_RT_EXT_APP_LIMITED] = "app_limited",
	[TCP_RT_EXT_SEQ]	= "seq",
};

/* Written by tcp_rt_main.c's log_ext, which attaches the hooks they need. */
DEFINE_STATIC_KEY_FALSE(tcp_rt_bd_on);
unsigned int tcp_rt_bd_gen;

bool tcp_rt_active __read_mostly = true;

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
 * (both NULL: the lists as they are) and, if @netns is given, the
 * namespace list by it.  Called with tcp_rt_cfg_mutex held.  Nothing is
 * changed on failure.
 */
static int tcp_rt_cfg_commit(struct tcp_rt_port_list *old,
			     const struct tcp_rt_port_list *new,
			     const struct tcp_rt_netns_list *netns)
{
	struct tcp_rt_cfg *cfg, *prev;
	unsigned int i;

	cfg = kzalloc(sizeof(*cfg), GFP_KERNEL);
	if (!cfg)
		return -ENOMEM;
	if (netns)
		tcp_rt_netns = *netns;
	cfg->netns = tcp_rt_netns;

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
		err = tcp_rt_cfg_commit(cur, &new, NULL);
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

/* Is @sk in a namespace the ports apply in?  (Connections only: a scan.) */
static bool tcp_rt_netns_match(const struct tcp_rt_cfg *cfg,
			       const struct sock *sk)
{
	u32 inum;
	unsigned int i;

	if (!cfg->netns.n)
		return true;
	inum = tcp_rt_sk_netns(sk);
	for (i = 0; i < cfg->netns.n; i++)
		if (cfg->netns.inum[i] == inum)
			return true;
	return false;
}

/*
 * Which list @sk's ports are in, in the configuration in force: its local
 * port (it serves) before its peer's (it is a client); none outside the
 * namespaces listed in netns.
 */
enum tcp_rt_match tcp_rt_ports_match(const struct sock *sk)
{
	const struct inet_sock *inet = inet_sk(sk);
	const struct tcp_rt_cfg *cfg;
	enum tcp_rt_match m = TCP_RT_MATCH_NONE;

	rcu_read_lock();
	cfg = rcu_dereference(tcp_rt_cfg);
	if (cfg && test_bit((__force u16)inet->inet_sport, cfg->local))
		m = TCP_RT_MATCH_LOCAL;
	else if (cfg && test_bit((__force u16)inet->inet_dport, cfg->peer))
		m = TCP_RT_MATCH_PEER;
	if (m != TCP_RT_MATCH_NONE && !tcp_rt_netns_match(cfg, sk))
		m = TCP_RT_MATCH_NONE;
	rcu_read_unlock();
	return m;
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

/*
 * netns: "inum,inum,..." (decimal, as `readlink /proc/PID/ns/net` and
 * `lsns -t net` show them); "" for every namespace.
 */
static int tcp_rt_netns_parse(const char *val, struct tcp_rt_netns_list *out)
{
	char *buf, *s, *tok;
	int err = 0;

	buf = kstrndup(val, strcspn(val, "\n"), GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	out->n = 0;
	s = buf;
	while (*buf && (tok = strsep(&s, ",")) != NULL) {
		u32 v;

		if (out->n == TCP_RT_MAX_NETNS) {
			pr_err("netns: more than %d namespaces\n",
			       TCP_RT_MAX_NETNS);
			err = -EINVAL;
			break;
		}
		if (kstrtou32(tok, 10, &v) || !v) {
			pr_err("netns: '%.*s' is not a namespace inode number\n",
			       tcp_rt_val_len(tok), tok);
			err = -EINVAL;
			break;
		}
		out->inum[out->n++] = v;
	}
	kfree(buf);
	return err;
}

static int tcp_rt_netns_set(const char *val, const struct kernel_param *kp)
{
	struct tcp_rt_netns_list *new;
	int err;

	new = kmalloc(sizeof(*new), GFP_KERNEL);
	if (!new)
		return -ENOMEM;
	err = tcp_rt_netns_parse(val, new);
	if (!err) {
		mutex_lock(&tcp_rt_cfg_mutex);
		if (tcp_rt_cfg_live)
			err = tcp_rt_cfg_commit(NULL, NULL, new);
		else
			tcp_rt_netns = *new;
		mutex_unlock(&tcp_rt_cfg_mutex);
		if (err)
			pr_err("netns: no memory for the new namespace set\n");
	}
	kfree(new);
	return err;
}

static int tcp_rt_netns_get(char *buffer, const struct kernel_param *kp)
{
	unsigned int i;
	int len = 0;

	mutex_lock(&tcp_rt_cfg_mutex);
	for (i = 0; i < tcp_rt_netns.n; i++)
		len += scnprintf(buffer + len, PAGE_SIZE - len, "%s%u",
				 i ? "," : "", tcp_rt_netns.inum[i]);
	mutex_unlock(&tcp_rt_cfg_mutex);
	len += scnprintf(buffer + len, PAGE_SIZE - len, "\n");
	return len;
}

static const struct kernel_param_ops tcp_rt_netns_ops = {
	.set = tcp_rt_netns_set,
	.get = tcp_rt_netns_get,
};

module_param_cb(netns, &tcp_rt_netns_ops, NULL, 0644);
MODULE_PARM_DESC(netns,
		 "network namespaces (inode numbers, up to 128) the ports apply in; empty: all");

/*
 * A list parameter: "name,name,..." of @names (any order), as a mask of
 * their indexes; "" for none.  A name not in @names is refused, with one
 * line that lists them.
 */
int tcp_rt_names_parse(const char *param, const char *const *names,
		       unsigned int n_names, const char *val,
		       unsigned int *mask)
{
	const char *tok = val, *end = val + strcspn(val, "\n");
	char list[192];
	unsigned int i;
	size_t n;

	*mask = 0;
	if (tok == end)
		return 0;
	for (;;) {
		n = strcspn(tok, ",\n");

		for (i = 0; i < n_names; i++)
			if (n == strlen(names[i]) && !strncmp(tok, names[i], n))
				break;
		if (i == n_names)
			break;
		*mask |= BIT(i);
		tok += n;
		if (tok == end)
			return 0;
		tok++;		/* the comma */
	}
	for (i = 0, n = 0; i < n_names; i++)
		n += scnprintf(list + n, sizeof(list) - n, "%s%s",
			       i ? ", " : "", names[i]);
	pr_err("%s: no field '%.*s' (%s)\n", param,
	       (int)min_t(size_t, strcspn(tok, ",\n"), 32), tok, list);
	*mask = 0;
	return -EINVAL;
}

/* A list parameter's value: the names of @mask, and a newline. */
int tcp_rt_names_get(char *buffer, const char *const *names,
		     unsigned int n_names, unsigned int mask)
{
	unsigned int i;
	int len = 0;

	for (i = 0; i < n_names; i++)
		if (mask & BIT(i))
			len += scnprintf(buffer + len, PAGE_SIZE - len, "%s%s",
					 len ? "," : "", names[i]);
	len += scnprintf(buffer + len, PAGE_SIZE - len, "\n");
	return len;
}

/*
 * log_ext: the extension fields every record line ends with (written in
 * tcp_rt_ext_names' order).  The parameter itself is tcp_rt_main.c's: its
 * breakdown fields attach hooks.
 */
int tcp_rt_log_ext_parse(const char *val, unsigned int *mask)
{
	return tcp_rt_names_parse("log_ext", tcp_rt_ext_names, TCP_RT_EXT_MAX,
				  val, mask);
}

/* How much of a written value to quote in a message: no newline, 32 max. */
int tcp_rt_val_len(const char *val)
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

/* log_format's values, by enum tcp_rt_log_format */
const char *const tcp_rt_log_format_names[TCP_RT_LOG_FORMATS] = {
	[TCP_RT_LOG_TEXT]	= "text",
	[TCP_RT_LOG_BOTH]	= "both",
	[TCP_RT_LOG_BINARY]	= "binary",
};

static int tcp_rt_log_format_set(const char *val,
				 const struct kernel_param *kp)
{
	size_t n = strcspn(val, "\n");
	unsigned int i;

	for (i = 0; i < TCP_RT_LOG_FORMATS; i++)
		if (n == strlen(tcp_rt_log_format_names[i]) &&
		    !strncmp(val, tcp_rt_log_format_names[i], n)) {
			tcp_rt_log_format = i;
			return 0;
		}
	pr_err("log_format: '%.*s' is not text, both or binary\n",
	       tcp_rt_val_len(val), val);
	return -EINVAL;
}

static int tcp_rt_log_format_get(char *buffer, const struct kernel_param *kp)
{
	return scnprintf(buffer, PAGE_SIZE, "%s\n",
			 tcp_rt_log_format_names[tcp_rt_log_format]);
}

static const struct kernel_param_ops tcp_rt_log_format_ops = {
	.set = tcp_rt_log_format_set,
	.get = tcp_rt_log_format_get,
};

module_param_cb(log_format, &tcp_rt_log_format_ops, NULL, 0444);
MODULE_PARM_DESC(log_format,
		 "binary (default): records in binary, rt-network-bin<cpu>, rt-network-log<cpu> their text made when read; text: the logs as lines, made where the event happens; both: the lines, and each record also in binary, read as text in rt-network-text<cpu>");

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

module_param_named(hook_check, tcp_rt_hook_check, bool, 0444);
MODULE_PARM_DESC(hook_check,
		 "At load, prove the hooks see a loopback exchange (default 1; 0: skip)");

static int tcp_rt_series_us_set(const char *val, const struct kernel_param *kp)
{
	unsigned int v;

	if (kstrtouint(val, 10, &v) || (v != 100 && v != 1000 && v != 10000)) {
		pr_err("series_us: '%.*s' is not 100, 1000 or 10000\n",
		       (int)strcspn(val, "\n"), val);
		return -EINVAL;
	}
	WRITE_ONCE(tcp_rt_series_us, v);
	return 0;
}

static const struct kernel_param_ops tcp_rt_series_us_ops = {
	.set = tcp_rt_series_us_set,
	.get = param_get_uint,
};
module_param_cb(series_us, &tcp_rt_series_us_ops, &tcp_rt_series_us, 0644);
MODULE_PARM_DESC(series_us,
		 "series bucket width in microseconds: 100, 1000 (default) or 10000");

static struct tcp_rt_uint tcp_rt_series_buckets_arg = {
	.val = &tcp_rt_series_buckets, .min = 1, .max = 10000,
};
module_param_cb(series_buckets, &tcp_rt_uint_ops,
		&tcp_rt_series_buckets_arg, 0644);
MODULE_PARM_DESC(series_buckets,
		 "buckets in a series run (1..10000, default 2000)");

/* series_ext's names, by field: the order series lines carry them in. */
const char *const tcp_rt_series_ext_names[TCP_RT_SER_EXT_N] = {
	[TCP_RT_SER_CE_BYTES - TCP_RT_SER_BASE]	= "ce_bytes",
	[TCP_RT_SER_CE_SEGS - TCP_RT_SER_BASE]	= "ce_segs",
	[TCP_RT_SER_ECE - TCP_RT_SER_BASE]	= "ece",
	[TCP_RT_SER_DUP_BYTES - TCP_RT_SER_BASE] = "dup_bytes",
	[TCP_RT_SER_DUP_SEGS - TCP_RT_SER_BASE]	= "dup_segs",
	[TCP_RT_SER_FLOWS - TCP_RT_SER_BASE]	= "flows",
	[TCP_RT_SER_FAR_IN - TCP_RT_SER_BASE]	= "far_bytes_in",
	[TCP_RT_SER_FAR_OUT - TCP_RT_SER_BASE]	= "far_bytes_out",
};

/*
 * series_ext: the measures a series line ends with, " name=value" each
 * (docs/records.md).  Like series_us, read when a run starts.
 */
static int tcp_rt_series_ext_set(const char *val,
				 const struct kernel_param *kp)
{
	unsigned int mask;
	int err;

	err = tcp_rt_names_parse("series_ext", tcp_rt_series_ext_names,
				 TCP_RT_SER_EXT_N, val, &mask);
	if (!err)
		WRITE_ONCE(tcp_rt_series_ext, mask);
	return err;
}

static int tcp_rt_series_ext_get(char *buffer, const struct kernel_param *kp)
{
	return tcp_rt_names_get(buffer, tcp_rt_series_ext_names,
				TCP_RT_SER_EXT_N, READ_ONCE(tcp_rt_series_ext));
}

static const struct kernel_param_ops tcp_rt_series_ext_ops = {
	.set = tcp_rt_series_ext_set,
	.get = tcp_rt_series_ext_get,
};
module_param_cb(series_ext, &tcp_rt_series_ext_ops, NULL, 0644);
MODULE_PARM_DESC(series_ext,
		 "measures each series line ends with: ce_bytes,ce_segs,ece,dup_bytes,dup_segs,flows,far_bytes_in,far_bytes_out (default empty: none)");

module_param_named(series_host, tcp_rt_series_host, bool, 0644);
MODULE_PARM_DESC(series_host,
		 "a series run also counts every TCP connection of the host, as port * (default 0)");

static struct tcp_rt_uint tcp_rt_series_far_us_arg = {
	.val = &tcp_rt_series_far_us, .min = 1, .max = 10000000,
};
module_param_cb(series_far_us, &tcp_rt_uint_ops, &tcp_rt_series_far_us_arg,
		0644);
MODULE_PARM_DESC(series_far_us,
		 "min RTT from which a connection's bytes count as far (1..10000000 us, default 5000)");

static struct tcp_rt_uint tcp_rt_recorder_slow_us_arg = {
	.val = &tcp_rt_recorder_slow_us, .min = 0, .max = 100000000,
};
module_param_cb(recorder_slow_us, &tcp_rt_uint_ops,
		&tcp_rt_recorder_slow_us_arg, 0644);
MODULE_PARM_DESC(recorder_slow_us,
		 "the recorder freezes the milliseconds around a task at least this long (0..100000000 us, default 0: none)");

static struct tcp_rt_uint tcp_rt_recorder_coarse_arg = {
	.val = &tcp_rt_recorder_coarse, .min = 0, .max = 100000,
};
module_param_cb(recorder_coarse, &tcp_rt_uint_ops,
		&tcp_rt_recorder_coarse_arg, 0644);
MODULE_PARM_DESC(recorder_coarse,
		 "buckets of the recorder's coarse ring, 10 of its buckets wide each, read when it starts (0..100000, default 0: none)");

/* Deactivation is one way (see tcp_rt_main.c's deactivate). */
void tcp_rt_params_deactivate(void)
{
	if (READ_ONCE(tcp_rt_active))
		pr_info("deactivated: no new connection will be tracked\n");
	WRITE_ONCE(tcp_rt_active, false);
}

/* The first configuration, from the lists given at load. */
int tcp_rt_params_init(void)
{
	int err;

	tcp_rt_log_sample_seed = get_random_u32();
	mutex_lock(&tcp_rt_cfg_mutex);
	err = tcp_rt_cfg_commit(NULL, NULL, NULL);
	tcp_rt_cfg_live = !err;
	mutex_unlock(&tcp_rt_cfg_mutex);
	return err;
}

/*
 * The parameters' sysfs files outlive exit (they go with the module): a
 * port write from then on only stores the list, as before init.
 */
void tcp_rt_params_exit(void)
{
	mutex_lock(&tcp_rt_cfg_mutex);
	tcp_rt_cfg_live = false;
	kfree(rcu_dereference_protected(tcp_rt_cfg,
					lockdep_is_held(&tcp_rt_cfg_mutex)));
	RCU_INIT_POINTER(tcp_rt_cfg, NULL);
	mutex_unlock(&tcp_rt_cfg_mutex);
}
