// SPDX-License-Identifier: GPL-2.0
/*
 * Request/response timing of TCP connections, on a stock kernel: the
 * module's init and exit, the debugfs folder and its status file, and the
 * parameters that act on more than one part: three commands (deactivate,
 * series_run, recorder) and log_ext, whose time-breakdown fields attach
 * hooks.
 *
 * The parts, in the one direction calls go (scripts/calls --check):
 *   tcp_rt_hooks.c     the kernel's events (tracepoint, ftrace), and the
 *                      load-time check of them (tcp_rt_hookcheck.c);
 *   tcp_rt_task.c      the task engine: tracked connections, tasks;
 *   tcp_rt_log.c, tcp_rt_stats.c, tcp_rt_series.c
 *                      the sinks: records, per-port stats, series;
 *   tcp_rt_relay.c     the relay files the logs and the stats are read by;
 *   tcp_rt_params.c    every setting, asked by all of the above.
 * See docs/design.md.
 *
 * Concurrency and what protects what:
 *   - init and exit are serialised by the module loader; parameter writes
 *     by the kernel's parameter lock, but not against init and exit.
 *   - tcp_rt_ctl_mutex guards tcp_rt_ctl_live, tcp_rt_series_at_load,
 *     tcp_rt_rec_at_load and tcp_rt_series_pending: a series run (or the
 *     recorder, a run that does not end) is started only between init's
 *     series setup and exit's teardown of it; one asked for at load is
 *     prepared before the hooks and begins once their check is over.  It
 *     serialises a run's start and end with the series' receive hooks,
 *     and log_ext's writes, and with them the breakdown's hooks,
 *     its static key and its generation (tcp_rt_params.c holds them).
 *   - tcp_rt_load_id is drawn by init before the status file exists, and
 *     only read after (__ro_after_init).
 */

#define pr_fmt(fmt) "tcp_rt: " fmt

#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>
#include <linux/workqueue.h>

#include "include/tcp_rt.h"

/* ------------------------------------------------------------------------
 * Commands
 */

/*
 * Deactivation is one way: connections already tracked are followed to
 * their end, so that their module references drop and rmmod can succeed.
 * The parameter is the way that works under kernel lockdown, where debugfs
 * refuses writes; the debugfs file stays for TCP-RT's tools.  Writing 2
 * also lets go of every connection tracked now (tcp_rt_task_release_all()):
 * one idle pooled connection no longer holds an unload or an upgrade.
 */
static int tcp_rt_deactivate_set(const char *val, const struct kernel_param *kp)
{
	unsigned int v;

	if (kstrtouint(val, 10, &v) || v > 2) {
		pr_err("deactivate: '%.*s' is not 0, 1 or 2\n",
		       tcp_rt_val_len(val), val);
		return -EINVAL;
	}
	if (v) {
		tcp_rt_params_deactivate();
		if (v == 2)
			tcp_rt_task_release_all();
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

static DEFINE_MUTEX(tcp_rt_ctl_mutex);
static bool tcp_rt_ctl_live;
static bool tcp_rt_series_at_load;
static bool tcp_rt_rec_at_load;
/* the run asked for at load, prepared, its receive hooks attached */
static struct tcp_rt_series_run *tcp_rt_series_pending;

/*
 * A series run (tcp_rt_series.c) counts what the engine hands it from the
 * moment it begins; the tasks already open then are added by a walk of the
 * engine's connections, before the run is said to have started.  The
 * receive hooks it may need are attached first, so that they count from
 * bucket 0, and go with it: at its end (tcp_rt_series_end_work) or when
 * it is ended (series_run 0, unload), whichever comes first.
 */
static void tcp_rt_series_end_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(tcp_rt_series_end_work, tcp_rt_series_end_fn);

/*
 * A run (@recorder: the recorder) as the settings say now, read once (the
 * hooks attached are the run's), with its receive hooks attached if it
 * counts received segments.
 */
static struct tcp_rt_series_run *tcp_rt_series_run_prepare(bool recorder)
{
	struct tcp_rt_series_run *run;
	bool rcv;
	int err;

	run = tcp_rt_series_prepare(recorder, &rcv);
	if (IS_ERR(run) || !rcv)
		return run;
	err = tcp_rt_hooks_series(true);
	if (err) {
		tcp_rt_series_discard(run);
		return ERR_PTR(err);
	}
	return run;
}

/* Begin a prepared run (taken over) and arm its end; the recorder has none. */
static int tcp_rt_series_run_begin(struct tcp_rt_series_run *run)
{
	unsigned long delay;
	u32 gen;
	int err;

	err = tcp_rt_series_begin(run, &gen);
	if (err) {
		if (!tcp_rt_series_is_running())
			tcp_rt_hooks_series(false);
		return err;
	}
	tcp_rt_task_enroll_all(gen);
	delay = tcp_rt_series_begun();
	if (delay)
		mod_delayed_work(system_wq, &tcp_rt_series_end_work, delay);
	return 0;
}

static int tcp_rt_series_run_start(bool recorder)
{
	const char *name = recorder ? "recorder" : "series_run";
	struct tcp_rt_series_run *run;

	if (tcp_rt_series_is_recording()) {
		pr_err("%s: the recorder is on; write 0 to recorder to end it\n",
		       name);
		return -EBUSY;
	}
	if (tcp_rt_series_is_running() || tcp_rt_series_pending) {
		pr_err("%s: a run is in progress; write 0 to series_run to end it\n",
		       name);
		return -EBUSY;
	}
	run = tcp_rt_series_run_prepare(recorder);
	if (IS_ERR(run))
		return PTR_ERR(run);
	return tcp_rt_series_run_begin(run);
}

/*
 * The run's time is up: it ends, and its hooks go.  A timer early for its
 * run, or one left by a run ended before its time for the next, waits
 * again for the run there is.
 */
static void tcp_rt_series_end_fn(struct work_struct *work)
{
	unsigned long left;

	mutex_lock(&tcp_rt_ctl_mutex);
	left = tcp_rt_series_end(false, false);
	if (left)
		mod_delayed_work(system_wq, &tcp_rt_series_end_work, left);
	else if (!tcp_rt_series_is_running())
		tcp_rt_hooks_series(false);
	mutex_unlock(&tcp_rt_ctl_mutex);
}

/*
 * End the run (@recorder: the recorder) now, or drop the one not begun
 * yet; its table is complete on return.  The receive hooks go once
 * nothing runs.
 */
static void tcp_rt_series_run_stop(bool recorder)
{
	if (tcp_rt_series_pending &&
	    tcp_rt_series_run_is_recorder(tcp_rt_series_pending) == recorder) {
		tcp_rt_series_discard(tcp_rt_series_pending);
		tcp_rt_series_pending = NULL;
	}
	tcp_rt_series_end(recorder, true);
	if (!tcp_rt_series_is_running() && !tcp_rt_series_pending)
		tcp_rt_hooks_series(false);
}

/* series_run and recorder: 1 starts, 0 ends; at load, asked for. */
static int tcp_rt_series_cmd(const char *val, bool recorder)
{
	unsigned int v;
	int err = 0;

	if (kstrtouint(val, 10, &v) || v > 1) {
		pr_err("%s: '%.*s' is not 0 or 1\n",
		       recorder ? "recorder" : "series_run",
		       (int)strcspn(val, "\n"), val);
		return -EINVAL;
	}
	mutex_lock(&tcp_rt_ctl_mutex);
	if (!tcp_rt_ctl_live && recorder)
		tcp_rt_rec_at_load = v;
	else if (!tcp_rt_ctl_live)
		tcp_rt_series_at_load = v;
	else if (v)
		err = tcp_rt_series_run_start(recorder);
	else
		tcp_rt_series_run_stop(recorder);
	mutex_unlock(&tcp_rt_ctl_mutex);
	return err;
}

static int tcp_rt_series_run_set(const char *val, const struct kernel_param *kp)
{
	return tcp_rt_series_cmd(val, false);
}

static int tcp_rt_series_run_get(char *buffer, const struct kernel_param *kp)
{
	return scnprintf(buffer, PAGE_SIZE, "%d\n", tcp_rt_series_is_running() &&
			 !tcp_rt_series_is_recording());
}

static const struct kernel_param_ops tcp_rt_series_run_ops = {
	.set = tcp_rt_series_run_set,
	.get = tcp_rt_series_run_get,
};
module_param_cb(series_run, &tcp_rt_series_run_ops, NULL, 0644);
MODULE_PARM_DESC(series_run,
		 "write 1 to start a series run; reads 1 while one runs");

/*
 * The recorder (docs/recorder.md): a series run that does not end, its
 * last series_buckets buckets in rt-network-recorder; off by default.
 */
static int tcp_rt_rec_set(const char *val, const struct kernel_param *kp)
{
	return tcp_rt_series_cmd(val, true);
}

static int tcp_rt_rec_get(char *buffer, const struct kernel_param *kp)
{
	return scnprintf(buffer, PAGE_SIZE, "%d\n", tcp_rt_series_is_recording());
}

static const struct kernel_param_ops tcp_rt_rec_ops = {
	.set = tcp_rt_rec_set,
	.get = tcp_rt_rec_get,
};
module_param_cb(recorder, &tcp_rt_rec_ops, NULL, 0644);
MODULE_PARM_DESC(recorder,
		 "write 1 to start the series recorder (a run that does not end), 0 to end it; reads 1 while it runs (default 0)");

/*
 * recorder_freeze: the recorder's window around a span kept as a slow
 * task's is (docs/series.md): "now", or a record's "SEC USEC DURATION_US"
 * (its start, wall clock, and how long).  Write-only; an explicit
 * trigger, as the host agent's is.
 */
/* "now", or exactly three numbers: 0 and *@start, *@dur; -EINVAL. */
static int tcp_rt_rec_freeze_parse(const char *val, u64 *start, u64 *dur)
{
	char buf[64], *p = buf, *tok;
	unsigned long long v[3];
	int n = 0;

	if (sysfs_streq(val, "now")) {
		*start = div_u64(ktime_get_real_ns(), NSEC_PER_USEC);
		*dur = 0;
		return 0;
	}
	if (strscpy(buf, val, sizeof(buf)) < 0)
		return -EINVAL;
	p = strim(buf);
	while ((tok = strsep(&p, " ")) && n < 3)
		if (*tok && kstrtoull(tok, 10, &v[n++]))
			break;
	if (tok || n != 3 || v[1] >= USEC_PER_SEC ||
	    v[0] > U64_MAX / USEC_PER_SEC - 1 || v[2] > U32_MAX)
		return -EINVAL;
	*start = v[0] * USEC_PER_SEC + v[1];
	*dur = v[2];
	return 0;
}

static int tcp_rt_rec_freeze_set(const char *val, const struct kernel_param *kp)
{
	u64 start, dur;
	int err;

	if (tcp_rt_rec_freeze_parse(val, &start, &dur)) {
		pr_err("recorder_freeze: '%.*s' is not now, nor a start and a duration (SEC USEC DURATION_US)\n",
		       (int)strcspn(val, "\n"), val);
		return -EINVAL;
	}
	mutex_lock(&tcp_rt_ctl_mutex);
	if (tcp_rt_ctl_live) {
		err = tcp_rt_series_freeze(start, dur);
	} else {
		pr_err("recorder_freeze: written while the recorder runs, not at load\n");
		err = -EINVAL;
	}
	mutex_unlock(&tcp_rt_ctl_mutex);
	return err;
}

static const struct kernel_param_ops tcp_rt_rec_freeze_ops = {
	.set = tcp_rt_rec_freeze_set,
};
module_param_cb(recorder_freeze, &tcp_rt_rec_freeze_ops, NULL, 0200);
MODULE_PARM_DESC(recorder_freeze,
		 "write now, or a task's SEC USEC DURATION_US: the recorder keeps the window around it (write-only)");

/*
 * log_ext.  Its time-breakdown fields (TCP_RT_EXT_BD) need the hooks that
 * see the application's reads and writes, attached only while one of them
 * is listed.  A connection takes the fields log_ext has when it is
 * established, and the generation then: so the hooks and the accounting
 * (tcp_rt_bd_on) are on, and proven, before a field appears in the mask.
 * Going off, the mask loses the fields, then the generation moves, and
 * only once every CPU sees the new one (a grace period: every hook runs
 * with preemption off) do the hooks start to go: a record written from
 * then on, for a connection established before, carries no split
 * (breakdown_partial), as one of its tasks may have lost a read or a
 * write to the detach.  At load, tcp_rt_bd_start() attaches them if the
 * mask asks.
 */
static bool tcp_rt_bd_live;	/* the breakdown's hooks follow the mask */

static int tcp_rt_log_ext_set(const char *val, const struct kernel_param *kp)
{
	unsigned int mask;
	bool bd, was;
	int err;

	err = tcp_rt_log_ext_parse(val, &mask);
	if (err)
		return err;
	mutex_lock(&tcp_rt_ctl_mutex);
	bd = mask & TCP_RT_EXT_BD;
	was = READ_ONCE(tcp_rt_log_ext) & TCP_RT_EXT_BD;
	if (bd && !was && tcp_rt_bd_live) {
		err = tcp_rt_hooks_bd(true);
		if (err)
			goto out;
		static_branch_enable(&tcp_rt_bd_on);
	}
	WRITE_ONCE(tcp_rt_log_ext, mask);
	if (!bd && was && tcp_rt_bd_live) {
		/* the mask before the generation: tcp_rt_conn_ext() */
		smp_wmb();
		WRITE_ONCE(tcp_rt_bd_gen, tcp_rt_bd_gen + 1);
		synchronize_rcu();
		tcp_rt_hooks_bd(false);
		static_branch_disable(&tcp_rt_bd_on);
	}
out:
	mutex_unlock(&tcp_rt_ctl_mutex);
	return err;
}

static int tcp_rt_log_ext_get(char *buffer, const struct kernel_param *kp)
{
	return tcp_rt_names_get(buffer, tcp_rt_ext_names, TCP_RT_EXT_MAX,
				READ_ONCE(tcp_rt_log_ext));
}

static const struct kernel_param_ops tcp_rt_log_ext_ops = {
	.set = tcp_rt_log_ext_set,
	.get = tcp_rt_log_ext_get,
};

module_param_cb(log_ext, &tcp_rt_log_ext_ops, NULL, 0644);
MODULE_PARM_DESC(log_ext,
		 "extension fields each record line ends with: netns,cgroup,rq_wait,app,sq_wait,rwnd_limited,sndbuf_limited,app_limited,seq (default empty: none)");

/*
 * Before the hooks: a run asked for at load is prepared (what can fail -
 * its memory, the bound, its receive hooks - fails the load) and begins
 * once their check is over (tcp_rt_ctl_start()), so that the check's own
 * exchange counts nowhere: its outgoing and state events never reach the
 * run, and its incoming ones would have, alone.
 */
static int tcp_rt_ctl_init(void)
{
	struct tcp_rt_series_run *run;
	int err = 0;

	mutex_lock(&tcp_rt_ctl_mutex);
	tcp_rt_ctl_live = true;
	if (tcp_rt_series_at_load && tcp_rt_rec_at_load) {
		pr_err("series_run and recorder at load: one or the other\n");
		err = -EINVAL;
	} else if (tcp_rt_series_at_load || tcp_rt_rec_at_load) {
		run = tcp_rt_series_run_prepare(tcp_rt_rec_at_load);
		if (IS_ERR(run))
			err = PTR_ERR(run);
		else
			tcp_rt_series_pending = run;
	}
	mutex_unlock(&tcp_rt_ctl_mutex);
	return err;
}

/*
 * After the hooks' check: the run asked for at load begins.  Nothing
 * after the hooks may fail the load; a run a writer began meanwhile
 * keeps its place (this one is said to be refused, EBUSY).
 */
static void tcp_rt_ctl_start(void)
{
	struct tcp_rt_series_run *run;

	mutex_lock(&tcp_rt_ctl_mutex);
	run = tcp_rt_series_pending;
	tcp_rt_series_pending = NULL;
	if (run && tcp_rt_series_run_begin(run))
		pr_err("%s: the run asked for at load did not begin\n",
		       tcp_rt_rec_at_load ? "recorder" : "series_run");
	mutex_unlock(&tcp_rt_ctl_mutex);
}

/*
 * Before the hooks: the breakdown's hooks, if log_ext asked for them at
 * load, so that the first connection tracked has them; from here on
 * log_ext's writes attach and detach them.
 */
static int tcp_rt_bd_start(void)
{
	int err = 0;

	mutex_lock(&tcp_rt_ctl_mutex);
	if (READ_ONCE(tcp_rt_log_ext) & TCP_RT_EXT_BD) {
		err = tcp_rt_hooks_bd(true);
		if (!err)
			static_branch_enable(&tcp_rt_bd_on);
	}
	tcp_rt_bd_live = !err;
	mutex_unlock(&tcp_rt_ctl_mutex);
	return err;
}

/* With the other hooks, before the engine goes. */
static void tcp_rt_bd_stop(void)
{
	mutex_lock(&tcp_rt_ctl_mutex);
	if (tcp_rt_bd_live && (READ_ONCE(tcp_rt_log_ext) & TCP_RT_EXT_BD)) {
		tcp_rt_hooks_bd(false);
		static_branch_disable(&tcp_rt_bd_on);
	}
	tcp_rt_bd_live = false;
	mutex_unlock(&tcp_rt_ctl_mutex);
}

/*
 * series_run stays writable until the module is freed: from here on a
 * write only stores its value, so no run can start during or after exit.
 * A run under way ends, and its receive hooks go.
 */
static void tcp_rt_ctl_exit(void)
{
	mutex_lock(&tcp_rt_ctl_mutex);
	tcp_rt_ctl_live = false;
	mutex_unlock(&tcp_rt_ctl_mutex);
	cancel_delayed_work_sync(&tcp_rt_series_end_work);
	mutex_lock(&tcp_rt_ctl_mutex);
	tcp_rt_series_run_stop(false);
	tcp_rt_series_run_stop(true);
	mutex_unlock(&tcp_rt_ctl_mutex);
}

/* ------------------------------------------------------------------------
 * debugfs: status and deactivate
 */

static struct dentry *tcp_rt_dir;

/*
 * This load's id (status: load_id), random and never 0: log_ext's seq
 * starts from 0 at every load, so a reader tells one load's numbers from
 * another's (after a reload, or on another host) by it; 0 is left to
 * mean "unknown" to tcprt.
 */
static u64 tcp_rt_load_id __ro_after_init;

/*
 * Each CPU's part of the binary log's records overwritten unread, for the
 * CPUs whose log lost any (a line a possible CPU would be hundreds on a
 * large host), named after the summed count this log_format shows.
 */
static void tcp_rt_status_lost_cpus(struct seq_file *m)
{
	const char *key = tcp_rt_log_format == TCP_RT_LOG_BINARY ?
			  "log_records_overwritten" :
			  "log_bin_records_overwritten";
	unsigned int cpu;
	u64 n;

	if (tcp_rt_log_format == TCP_RT_LOG_TEXT)
		return;
	for_each_possible_cpu(cpu) {
		n = tcp_rt_log_bin_records_overwritten_cpu(cpu);
		if (n)
			seq_printf(m, "%s_cpu%u %llu\n", key, cpu, n);
	}
}

static int tcp_rt_status_show(struct seq_file *m, void *v)
{
	static const char * const names[TCP_RT_REC_MAX] = {
		"records_R", "records_W", "records_N", "records_P", "records_E",
	};
	struct tcp_rt_task_counts t;
	unsigned int i;
	u64 lost;

	tcp_rt_task_counts(&t);
	seq_printf(m, "version %s\n", TCP_RT_VERSION);
	seq_printf(m, "load_id %llu\n", tcp_rt_load_id);
	seq_printf(m, "active %d\n", READ_ONCE(tcp_rt_active));
	seq_printf(m, "tracked %d\n", t.tracked);
	for (i = 0; i < TCP_RT_REC_MAX; i++)
		seq_printf(m, "%s %llu\n", names[i], tcp_rt_log_records(i));
	seq_printf(m, "log_subbufs_overwritten %lu\n", tcp_rt_log_overwritten());
	seq_printf(m, "log_format %s\n",
		   tcp_rt_log_format_names[tcp_rt_log_format]);
	seq_printf(m, "log_bin_subbufs_overwritten %lu\n",
		   tcp_rt_log_bin_overwritten());
	/* exact: binary records carry their index (tcp_rt_relay.c) */
	lost = tcp_rt_log_bin_records_overwritten();
	seq_printf(m, "log_bin_records_overwritten %llu\n", lost);
	if (tcp_rt_log_format == TCP_RT_LOG_BINARY)
		seq_printf(m, "log_records_overwritten %llu\n", lost);
	tcp_rt_status_lost_cpus(m);
	seq_printf(m, "reads_lapped %lu\n", tcp_rt_relay_reads_lapped());
	seq_printf(m, "peek_records_skipped %lu\n",
		   tcp_rt_relay_peek_skipped_records());
	seq_printf(m, "peek_cut_short %lu\n", tcp_rt_relay_peek_cut_short());
	seq_printf(m, "stats_lines %lu\n", tcp_rt_stats_lines());
	seq_printf(m, "stats_subbufs_overwritten %lu\n",
		   tcp_rt_stats_overwritten());
	seq_printf(m, "stats_dropped %lu\n", tcp_rt_stats_dropped());
	seq_printf(m, "alloc_failed %ld\n", t.alloc_failed);
	seq_printf(m, "pool_empty %ld\n", t.pool_empty);
	seq_printf(m, "client_cut %ld\n", t.client_cut);
	seq_printf(m, "conns_sampled_out %ld\n", t.conns_sampled_out);
	seq_printf(m, "fastopen_missed %ld\n", t.fastopen_missed);
	seq_printf(m, "released %ld\n", t.released);
	seq_printf(m, "released_open %ld\n", t.released_open);
	seq_printf(m, "records_sampled_out %llu\n", t.records_sampled_out);
	seq_printf(m, "breakdown_hooks %d\n",
		   static_key_enabled(&tcp_rt_bd_on) ? 1 : 0);
	seq_printf(m, "breakdown_early_write %ld\n", t.bd_early_write);
	seq_printf(m, "breakdown_no_write %ld\n", t.bd_no_write);
	seq_printf(m, "breakdown_clamped %ld\n", t.bd_clamped);
	seq_printf(m, "breakdown_unread %ld\n", t.bd_unread);
	seq_printf(m, "breakdown_partial %ld\n", t.bd_partial);
	tcp_rt_hooks_status(m);
	tcp_rt_hookcheck_status(m);
	tcp_rt_series_status(m);
	seq_printf(m, "conn_state_bytes %u\n", t.conn_state_bytes);
	seq_printf(m, "conn_table_buckets %u\n", t.conn_table_buckets);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(tcp_rt_status);

static ssize_t tcp_rt_deactivate_write(struct file *file,
				       const char __user *buf, size_t count,
				       loff_t *ppos)
{
	tcp_rt_params_deactivate();
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

static int __init tcp_rt_init(void)
{
	int err;

	do
		tcp_rt_load_id = get_random_u64();
	while (!tcp_rt_load_id);
	err = tcp_rt_params_init();
	if (err)
		return err;
	err = tcp_rt_task_init();
	if (err)
		goto err_params;

	tcp_rt_dir = debugfs_create_dir("tcp-rt", NULL);
	if (IS_ERR(tcp_rt_dir)) {
		pr_err("cannot create /sys/kernel/debug/tcp-rt\n");
		err = PTR_ERR(tcp_rt_dir);
		goto err_task;
	}
	err = tcp_rt_relay_init();
	if (err)
		goto err_dir;
	err = tcp_rt_log_init(tcp_rt_dir, tcp_rt_log_buf_num);
	if (err)
		goto err_relay;
	err = tcp_rt_stats_init(tcp_rt_dir, tcp_rt_stats_buf_num);
	if (err)
		goto err_log;
	debugfs_create_file("status", 0444, tcp_rt_dir, NULL,
			    &tcp_rt_status_fops);
	debugfs_create_file("deactivate", 0200, tcp_rt_dir, NULL,
			    &tcp_rt_deactivate_fops);

	err = tcp_rt_series_init(tcp_rt_dir);
	if (err)
		goto err_stats;
	err = tcp_rt_ctl_init();
	if (err)
		goto err_series;
	/*
	 * Last, and nothing after it can fail: from the moment the load-time
	 * check ends (or the tracepoint is attached, without the check) a
	 * connection may be tracked, holding a module reference and a state
	 * that only its close releases.  Until then nothing is tracked.
	 */
	err = tcp_rt_bd_start();
	if (err)
		goto err_series;
	err = tcp_rt_hooks_start();
	if (err)
		goto err_bd;
	tcp_rt_ctl_start();
	tcp_rt_task_release_live(true);
	pr_info("loaded, version %s\n", TCP_RT_VERSION);
	return 0;

err_bd:
	tcp_rt_bd_stop();
err_series:
	tcp_rt_ctl_exit();
	tcp_rt_hooks_free();
	tcp_rt_series_exit();
err_stats:
	tcp_rt_stats_exit();
err_log:
	tcp_rt_log_exit();
err_relay:
	tcp_rt_relay_exit();
err_dir:
	debugfs_remove_recursive(tcp_rt_dir);
err_task:
	tcp_rt_task_exit();
err_params:
	tcp_rt_params_exit();
	return err;
}

static void __exit tcp_rt_exit(void)
{
	tcp_rt_task_release_live(false);
	tcp_rt_hooks_stop();
	tcp_rt_bd_stop();
	tcp_rt_ctl_exit();
	tcp_rt_hooks_free();
	tcp_rt_stats_exit();
	tcp_rt_log_exit();
	tcp_rt_relay_exit();
	debugfs_remove_recursive(tcp_rt_dir);
	tcp_rt_series_exit();
	tcp_rt_task_exit();
	tcp_rt_params_exit();
}

module_init(tcp_rt_init);
module_exit(tcp_rt_exit);

MODULE_AUTHOR("tcp_rt developers");
MODULE_DESCRIPTION("TCP request/response timing (TCP-RT interface) for stock kernels");
MODULE_LICENSE("GPL");
MODULE_VERSION(TCP_RT_VERSION);
