/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tcp_rt - internal interface between the module's parts.
 *
 * tcp_rt.c owns the parameters, the hooks and the per-connection state;
 * tcp_rt_log.c owns the relay channels and the record format;
 * tcp_rt_stats.c owns the per-port aggregation.
 */
#ifndef _TCP_RT_H
#define _TCP_RT_H

#include <linux/bits.h>
#include <linux/types.h>
#include <linux/percpu.h>

struct dentry;
struct sock;

#define TCP_RT_VERSION		"0.2"

/* Record types, in the order of the status file's records_* lines. */
enum tcp_rt_rec {
	TCP_RT_REC_R,
	TCP_RT_REC_W,
	TCP_RT_REC_N,
	TCP_RT_REC_P,
	TCP_RT_REC_E,
	TCP_RT_REC_MAX,
};

/* Hot counters, one copy per CPU; summed only when status is read. */
struct tcp_rt_pcpu_counters {
	u64 records[TCP_RT_REC_MAX];
};

DECLARE_PER_CPU(struct tcp_rt_pcpu_counters, tcp_rt_counters);

/* Longest record: header with two bracketed IPv6 addresses and ten u64s. */
#define TCP_RT_REC_FIELDS_MAX	10

/* What the stats need of a completed task (R or P). */
struct tcp_rt_task_sample {
	u32 duration;
	u32 process;		/* server: T2 - T1; client: service time */
	u32 upload;		/* server: T1 - T0; client: S1 - S0 */
	u32 rtt;
	u64 sent;
	u64 recv;
	u32 retrans;
	u32 segs;		/* data segments sent */
};

/* Stats key: the port, and whether it is a peer port. */
#define TCP_RT_KEY_PEER		BIT(16)
#define TCP_RT_KEY_VALID	BIT(17)
#define TCP_RT_STATS_LISTED_MAX	12	/* lports + pports */

/* tcp_rt.c: parameters read by the stats worker */
extern unsigned int tcp_rt_stats_off;
extern unsigned int tcp_rt_stats_interval;
unsigned int tcp_rt_listed_ports(u32 *keys, unsigned int max);

/* tcp_rt_log.c */
struct rchan_buf;
int tcp_rt_relay_fops_init(void);
void tcp_rt_relay_fops_exit(void);
struct dentry *tcp_rt_relay_create_file(const char *name,
					struct dentry *parent, umode_t mode,
					struct rchan_buf *buf);
int tcp_rt_relay_remove_file(struct dentry *dentry);
int tcp_rt_log_init(struct dentry *dir, unsigned int n_subbufs);
void tcp_rt_log_exit(void);
void tcp_rt_log_record(const struct sock *sk, enum tcp_rt_rec type,
		       u64 start_us, const u64 *fields, unsigned int n);
unsigned long tcp_rt_log_overwritten(void);

/* tcp_rt_stats.c */
int tcp_rt_stats_init(struct dentry *dir, unsigned int n_subbufs);
void tcp_rt_stats_exit(void);
unsigned long tcp_rt_stats_lines(void);
unsigned long tcp_rt_stats_overwritten(void);
unsigned long tcp_rt_stats_dropped(void);
void tcp_rt_stats_add(u32 key, const struct tcp_rt_task_sample *t);

#endif /* _TCP_RT_H */
