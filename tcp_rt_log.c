// SPDX-License-Identifier: GPL-2.0
/*
 * Task records and the per-CPU relay logs.
 *
 * One relay channel, one buffer per CPU, one debugfs file per buffer
 * (rt-network-log<cpu>).  The channel runs in flight-recorder mode: when a
 * buffer is full the oldest sub-buffer is overwritten, and the overwrite is
 * counted so that the status file shows the loss.
 *
 * Concurrency: relay_write() writes into the current CPU's buffer with
 * interrupts off, so records from softirq and process context on one CPU
 * never interleave, and a record is never split across sub-buffers.  The
 * overwrite counter is bumped from relay's sub-buffer switch, which runs
 * inside that same section on any CPU, hence an atomic.
 */

#define pr_fmt(fmt) "tcp_rt: " fmt

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/in6.h>
#include <linux/ipv6.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/relay.h>
#include <net/inet_sock.h>
#include <net/ipv6.h>
#include <net/sock.h>

#include "include/tcp_rt.h"

#define TCP_RT_LOG_SUBBUF_SIZE	(256 * 1024)

/* "[xxxx:...:xxxx]:65535" is at most 48 bytes; twice, plus the rest. */
#define TCP_RT_REC_LEN		256

static struct rchan *tcp_rt_log_chan;
static atomic_long_t tcp_rt_log_overwrites = ATOMIC_LONG_INIT(0);

static const char tcp_rt_rec_letter[TCP_RT_REC_MAX] = {
	[TCP_RT_REC_R] = 'R',
	[TCP_RT_REC_W] = 'W',
	[TCP_RT_REC_N] = 'N',
	[TCP_RT_REC_P] = 'P',
	[TCP_RT_REC_E] = 'E',
};

/*
 * Called by relay before it starts writing a sub-buffer.  Returning 1 always
 * is what makes the channel a flight recorder; a full buffer at that point
 * means the sub-buffer about to be reused was never read.
 */
static int tcp_rt_log_subbuf_start(struct rchan_buf *buf, void *subbuf,
				   void *prev_subbuf, size_t prev_padding)
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
	return debugfs_create_file(filename, mode, parent, buf,
				   &relay_file_operations);
}

static int tcp_rt_log_remove_file(struct dentry *dentry)
{
	debugfs_remove(dentry);
	return 0;
}

static const struct rchan_callbacks tcp_rt_log_callbacks = {
	.subbuf_start		= tcp_rt_log_subbuf_start,
	.create_buf_file	= tcp_rt_log_create_file,
	.remove_buf_file	= tcp_rt_log_remove_file,
};

/*
 * Print "addr:port".  A v4-mapped IPv6 socket prints as IPv4, as the TCP-RT
 * tools expect; its inet_daddr/inet_rcv_saddr hold the IPv4 addresses.
 */
static int tcp_rt_fmt_endpoint(char *p, size_t len, const struct sock *sk,
			       bool peer)
{
	const struct inet_sock *inet = inet_sk(sk);
	u16 port = ntohs(peer ? inet->inet_dport : inet->inet_sport);

#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6 &&
	    !ipv6_addr_v4mapped(&sk->sk_v6_daddr))
		return scnprintf(p, len, "[%pI6c]:%u",
				 peer ? &sk->sk_v6_daddr : &sk->sk_v6_rcv_saddr,
				 port);
#endif
	return scnprintf(p, len, "%pI4:%u",
			 peer ? &inet->inet_daddr : &inet->inet_rcv_saddr,
			 port);
}

/*
 * Write one record.  @start_us is a tcp_clock_us() time; records carry the
 * wall-clock time of that instant, derived from the current offset between
 * the two clocks so that only the cheap monotonic clock is read per packet.
 */
void tcp_rt_log_record(const struct sock *sk, enum tcp_rt_rec type,
		       u64 start_us, const u64 *fields, unsigned int n)
{
	char rec[TCP_RT_REC_LEN];
	u64 mono_ns = ktime_get_ns();
	u64 real_ns = ktime_get_real_ns();
	u64 start_ns = start_us * NSEC_PER_USEC;
	struct timespec64 ts;
	unsigned int i;
	int len;

	real_ns -= min(real_ns, mono_ns - min(mono_ns, start_ns));
	ts = ns_to_timespec64(real_ns);

	len = scnprintf(rec, sizeof(rec), "V6 %c %lld %06ld ",
			tcp_rt_rec_letter[type], (long long)ts.tv_sec,
			ts.tv_nsec / NSEC_PER_USEC);
	len += tcp_rt_fmt_endpoint(rec + len, sizeof(rec) - len, sk, true);
	rec[len++] = ' ';
	len += tcp_rt_fmt_endpoint(rec + len, sizeof(rec) - len, sk, false);
	for (i = 0; i < n; i++)
		len += scnprintf(rec + len, sizeof(rec) - len, " %llu",
				 fields[i]);
	len += scnprintf(rec + len, sizeof(rec) - len, "\n");

	relay_write(tcp_rt_log_chan, rec, len);
	this_cpu_inc(tcp_rt_counters.records[type]);
}

unsigned long tcp_rt_log_overwritten(void)
{
	return atomic_long_read(&tcp_rt_log_overwrites);
}

int tcp_rt_log_init(struct dentry *dir, unsigned int n_subbufs)
{
	tcp_rt_log_chan = relay_open("rt-network-log", dir,
				     TCP_RT_LOG_SUBBUF_SIZE, n_subbufs,
				     &tcp_rt_log_callbacks, NULL);
	if (!tcp_rt_log_chan) {
		pr_err("cannot create the rt-network-log relay channel\n");
		return -ENOMEM;
	}
	return 0;
}

void tcp_rt_log_exit(void)
{
	relay_close(tcp_rt_log_chan);
	tcp_rt_log_chan = NULL;
}
