// SPDX-License-Identifier: GPL-2.0
/*
 * Per-port aggregation and the rt-network-stats file.
 *
 * The stats file is a single global relay buffer in flight-recorder mode,
 * like the logs.  Its only writer is the stats worker, so the global buffer
 * needs no lock of its own; the overwrite and line counters are atomics
 * because the status file reads them from any CPU.
 */

#define pr_fmt(fmt) "tcp_rt: " fmt

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/relay.h>

#include "include/tcp_rt.h"

#define TCP_RT_STATS_SUBBUF_SIZE	(16 * 1024)

static struct rchan *tcp_rt_stats_chan;
static atomic_long_t tcp_rt_stats_overwrites = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_stats_nr_lines = ATOMIC_LONG_INIT(0);

static int tcp_rt_stats_subbuf_start(struct rchan_buf *buf, void *subbuf,
				     void *prev_subbuf, size_t prev_padding)
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
	return debugfs_create_file("rt-network-stats", mode, parent, buf,
				   &relay_file_operations);
}

static int tcp_rt_stats_remove_file(struct dentry *dentry)
{
	debugfs_remove(dentry);
	return 0;
}

static const struct rchan_callbacks tcp_rt_stats_callbacks = {
	.subbuf_start		= tcp_rt_stats_subbuf_start,
	.create_buf_file	= tcp_rt_stats_create_file,
	.remove_buf_file	= tcp_rt_stats_remove_file,
};

unsigned long tcp_rt_stats_lines(void)
{
	return atomic_long_read(&tcp_rt_stats_nr_lines);
}

unsigned long tcp_rt_stats_overwritten(void)
{
	return atomic_long_read(&tcp_rt_stats_overwrites);
}

int tcp_rt_stats_init(struct dentry *dir, unsigned int n_subbufs)
{
	tcp_rt_stats_chan = relay_open("rt-network-stats", dir,
				       TCP_RT_STATS_SUBBUF_SIZE, n_subbufs,
				       &tcp_rt_stats_callbacks, NULL);
	if (!tcp_rt_stats_chan) {
		pr_err("cannot create the rt-network-stats relay channel\n");
		return -ENOMEM;
	}
	return 0;
}

void tcp_rt_stats_exit(void)
{
	relay_close(tcp_rt_stats_chan);
	tcp_rt_stats_chan = NULL;
}
