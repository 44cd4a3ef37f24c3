/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tcp_rt - internal interface between the module's parts, one section a
 * file.  Calls go one way (scripts/calls --check): main -> hooks ->
 * (hookcheck, task), task -> sinks (log, stats, series), log and stats ->
 * relay, and every part -> params, which calls none.
 *
 * tcp_rt_main.c      init/exit, the status file, the commands;
 * tcp_rt_params.c    every setting and the port configuration;
 * tcp_rt_hooks.c     the tracepoint and ftrace hooks;
 * tcp_rt_hookcheck.c proves at load that the hooks see TCP's events;
 * tcp_rt_task.c      the connection table and the task state machine;
 * tcp_rt_log.c       the record format and the per-CPU logs;
 * tcp_rt_relay.c     the relay channels and their files' operations;
 * tcp_rt_stats.c     the per-port aggregation;
 * tcp_rt_series.c    the fine-timescale sampling runs.
 */
#ifndef _TCP_RT_H
#define _TCP_RT_H

#include <linux/bits.h>
#include <linux/jump_label.h>
#include <linux/moduleparam.h>
#include <linux/types.h>
#include <linux/percpu.h>

struct dentry;
struct seq_file;
struct sk_buff;
struct sock;

#define TCP_RT_VERSION		"0.7"

/* Record types, in the order of the status file's records_* lines. */
enum tcp_rt_rec {
	TCP_RT_REC_R,
	TCP_RT_REC_W,
	TCP_RT_REC_N,
	TCP_RT_REC_P,
	TCP_RT_REC_E,
	TCP_RT_REC_MAX,
};

/* Longest record: header with two bracketed IPv6 addresses and ten u64s. */
#define TCP_RT_REC_FIELDS_MAX	10

/*
 * log_ext's extension fields, in the order a record line carries them
 * (docs/records.md; the spec's section 6).  A field is a line here, a name
 * in tcp_rt_params.c and its value in tcp_rt_log.c.  Those of the
 * connection (netns, cgroup) are formatted once, when it is established,
 * into TCP_RT_EXT_CONN_LEN bytes of its state; the breakdown's are a
 * task's; seq is neither: the writer numbers the record as it writes it
 * into its CPU's log, so it can only come last.
 */
enum tcp_rt_ext {
	TCP_RT_EXT_NETNS,	/* the connection's network namespace inode */
	TCP_RT_EXT_CGROUP,	/* the socket's cgroup v2 id */
	/* the time breakdown, of a task (R W P): struct tcp_rt_ext_task */
	TCP_RT_EXT_RQ_WAIT,
	TCP_RT_EXT_APP,
	TCP_RT_EXT_SQ_WAIT,
	TCP_RT_EXT_RWND,
	TCP_RT_EXT_SNDBUF,
	TCP_RT_EXT_APP_LIMITED,
	TCP_RT_EXT_SEQ,		/* the record's number in its CPU's log */
	TCP_RT_EXT_MAX,
};

#define TCP_RT_EXT_CONN		(BIT(TCP_RT_EXT_NETNS) | BIT(TCP_RT_EXT_CGROUP))
/* " netns=" + 10 digits, " cgroup=" + 20: 45, copied as 48 */
#define TCP_RT_EXT_CONN_LEN	48
/* the breakdown's fields: TCP_RT_EXT_TASK_FIRST up to, not with, _END */
#define TCP_RT_EXT_TASK_FIRST	TCP_RT_EXT_RQ_WAIT
#define TCP_RT_EXT_TASK_END	TCP_RT_EXT_SEQ
#define TCP_RT_EXT_TASK_N	(TCP_RT_EXT_TASK_END - TCP_RT_EXT_TASK_FIRST)
#define TCP_RT_EXT_BD		GENMASK(TCP_RT_EXT_TASK_END - 1,	\
					TCP_RT_EXT_TASK_FIRST)
/* the longest: " sndbuf_limited=" and the like, each with 10 digits */
#define TCP_RT_EXT_TASK_LEN	(66 + TCP_RT_EXT_TASK_N * 10)

/*
 * What a connection's records carry of it besides its socket: log_ext as
 * it was when the connection was established, kept in its state
 * (tcp_rt_task.c) and filled by tcp_rt_log_conn_init().  Its fields of
 * the connection (netns, cgroup) as numbers, for the binary records, and
 * as the text every record line of it ends with, formatted once.
 */
struct tcp_rt_log_conn {
	u8 ext_len;		/* of ext: 0 unless netns or cgroup is listed */
	u8 numbered;		/* its records end with seq */
	/*
	 * Its binary records' flags (TCP_RT_BIN_*, all but the breakdown's)
	 * and length without the fields and the breakdown: the same in each.
	 */
	u8 bin_flags;
	u8 bin_len;
	u32 netns;		/* with BIT(TCP_RT_EXT_NETNS) */
	u64 cgroup;		/* with BIT(TCP_RT_EXT_CGROUP) */
	char ext[TCP_RT_EXT_CONN_LEN];
};

/*
 * A record's fields of the time breakdown: those of @mask
 * (BIT(enum tcp_rt_ext)), in µs, v[field - TCP_RT_EXT_TASK_FIRST].
 */
struct tcp_rt_ext_task {
	unsigned int mask;
	u32 v[TCP_RT_EXT_TASK_N];
};

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
/* A series run's line of the whole host (series_host): port "*". */
#define TCP_RT_KEY_HOST		BIT(18)
#define TCP_RT_STATS_LISTED_MAX	12	/* lports + pports */

/* tcp_rt_params.c: a bounded unsigned parameter (tcp_rt_uint_ops) */
struct tcp_rt_uint {
	unsigned int *val;
	unsigned int min;
	unsigned int max;
};

extern const struct kernel_param_ops tcp_rt_uint_ops;

/* tcp_rt_params.c: the ports, as bitmaps indexed in network byte order */
#define TCP_RT_NR_PORTS		65536

/* Which port list a connection's ports are in. */
enum tcp_rt_match {
	TCP_RT_MATCH_NONE,
	TCP_RT_MATCH_LOCAL,	/* lports, lports_range: it serves */
	TCP_RT_MATCH_PEER,	/* pports, pports_range: it is a client */
};

extern unsigned long tcp_rt_watch_local[];
extern unsigned long tcp_rt_watch_peer[];
enum tcp_rt_match tcp_rt_ports_match(const struct sock *sk);
unsigned int tcp_rt_listed_ports(u32 *keys, unsigned int max);
unsigned int tcp_rt_ports_configured(void);
/* tcp_rt_params.c: the settings, each read where it is used */
extern bool tcp_rt_active;
extern unsigned int tcp_rt_max_tracked;
extern unsigned int tcp_rt_log_sample;
extern u32 tcp_rt_log_sample_seed;
extern unsigned int tcp_rt_log_buf_num;
/* log_format (load time): what the logs are written as */
enum tcp_rt_log_format {
	TCP_RT_LOG_TEXT,	/* rt-network-log<cpu>, the lines */
	TCP_RT_LOG_BOTH,	/* and rt-network-bin<cpu>, the same records */
	/* rt-network-bin<cpu> alone, rt-network-log<cpu> its text view */
	TCP_RT_LOG_BINARY,
	TCP_RT_LOG_FORMATS,
};

extern unsigned int tcp_rt_log_format;
extern const char *const tcp_rt_log_format_names[TCP_RT_LOG_FORMATS];
extern unsigned int tcp_rt_stats_buf_num;
extern unsigned int tcp_rt_stats_off;
extern unsigned int tcp_rt_stats_interval;
extern unsigned int tcp_rt_series_us;
extern unsigned int tcp_rt_series_buckets;
extern unsigned int tcp_rt_series_ext;
extern bool tcp_rt_series_host;
extern unsigned int tcp_rt_series_far_us;
extern unsigned int tcp_rt_recorder_slow_us;
extern unsigned int tcp_rt_recorder_coarse;
extern bool tcp_rt_hook_check;
extern unsigned int tcp_rt_log_ext;
extern const char *const tcp_rt_ext_names[TCP_RT_EXT_MAX];
int tcp_rt_log_ext_parse(const char *val, unsigned int *mask);
int tcp_rt_names_parse(const char *param, const char *const *names,
		       unsigned int n_names, const char *val,
		       unsigned int *mask);
int tcp_rt_names_get(char *buffer, const char *const *names,
		     unsigned int n_names, unsigned int mask);
/*
 * The time breakdown (log_ext's TCP_RT_EXT_BD fields): on while its hooks
 * are attached; the generation counts each time they went (tcp_rt_main.c).
 */
DECLARE_STATIC_KEY_FALSE(tcp_rt_bd_on);
extern unsigned int tcp_rt_bd_gen;
int tcp_rt_val_len(const char *val);
void tcp_rt_params_deactivate(void);
int tcp_rt_params_init(void);
void tcp_rt_params_exit(void);

/* tcp_rt_hooks.c */
int tcp_rt_hooks_start(void);
void tcp_rt_hooks_stop(void);
int tcp_rt_hooks_bd(bool on);
int tcp_rt_hooks_series(bool on);
void tcp_rt_hooks_free(void);
void tcp_rt_hooks_status(struct seq_file *m);

/* tcp_rt_task.c: the kernel's events in, from the hooks */
void tcp_rt_task_estab(const struct sock *sk);
void tcp_rt_task_close(const struct sock *sk, int oldstate);
void tcp_rt_task_sync(struct sock *sk);
void tcp_rt_task_xmit(struct sock *sk, const struct sk_buff *skb, u32 len);
void tcp_rt_task_seg_in(const struct sock *sk, const struct sk_buff *skb);
void tcp_rt_task_read(struct sock *sk);
void tcp_rt_task_write(struct sock *sk);
/* tcp_rt_task.c: from main */
struct tcp_rt_task_counts {
	int tracked;
	long alloc_failed;
	long pool_empty;
	long client_cut;
	long conns_sampled_out;
	long fastopen_missed;
	long released;
	long released_open;
	u64 records_sampled_out;
	/* the time breakdown (docs/records.md) */
	long bd_early_write;
	long bd_no_write;
	long bd_clamped;
	long bd_unread;
	long bd_partial;
	unsigned int conn_state_bytes;
	unsigned int conn_table_buckets;
};

void tcp_rt_task_counts(struct tcp_rt_task_counts *n);
void tcp_rt_task_enroll_all(u32 gen);
void tcp_rt_task_release_all(void);
void tcp_rt_task_release_live(bool live);
int tcp_rt_task_init(void);
void tcp_rt_task_exit(void);

/* tcp_rt_hookcheck.c: the proof that the hooks see TCP's events */
enum tcp_rt_hook_kind {
	TCP_RT_HOOK_KIND_XMIT,		/* a data segment leaves */
	TCP_RT_HOOK_KIND_ACK,		/* an ACK of data was processed */
	TCP_RT_HOOK_KIND_RCV,		/* in-order data arrived: some of them */
	TCP_RT_HOOK_KIND_RCV_ALL,	/* in-order data arrived: every time */
};

#define TCP_RT_HOOKS_MAX	8
/* the series' receive hooks, proven each time they are attached */
#define TCP_RT_HOOKS_RCV	2

struct tcp_rt_hook_desc {
	const char *func;
	enum tcp_rt_hook_kind kind;
};

DECLARE_STATIC_KEY_FALSE(tcp_rt_hookcheck_on);
void tcp_rt_hookcheck_begin(bool engine_live);
int tcp_rt_hookcheck_run(const struct tcp_rt_hook_desc *hooks, unsigned int n);
int tcp_rt_hookcheck_run_bd(const char *write_func);
int tcp_rt_hookcheck_run_rcv(const char *const *funcs);
void tcp_rt_hookcheck_end(void);
bool tcp_rt_hookcheck_hook(const struct sock *sk, unsigned int i,
			   u32 new_data);
bool tcp_rt_hookcheck_state(const struct sock *sk, int newstate);
bool tcp_rt_hookcheck_app(const struct sock *sk, bool write);
bool tcp_rt_hookcheck_seg(const struct sock *sk, unsigned int i);
void tcp_rt_hookcheck_status(struct seq_file *m);

/* tcp_rt_relay.c */
struct rchan_buf;
int tcp_rt_relay_init(void);
void tcp_rt_relay_exit(void);
struct dentry *tcp_rt_relay_create_file(const char *name,
					struct dentry *parent, umode_t mode,
					struct rchan_buf *buf);
struct dentry *tcp_rt_relay_create_bin_file(const char *name,
					    const char *text_name,
					    const char *peek_name,
					    struct dentry *parent, umode_t mode,
					    struct rchan_buf *buf,
					    unsigned int cpu);
int tcp_rt_relay_remove_file(struct dentry *dentry);
unsigned long tcp_rt_relay_reads_lapped(void);
unsigned long tcp_rt_relay_peek_skipped_records(void);
unsigned long tcp_rt_relay_peek_cut_short(void);

/* tcp_rt_log.c */
int tcp_rt_log_init(struct dentry *dir, unsigned int n_subbufs);
void tcp_rt_log_exit(void);
void tcp_rt_log_conn_init(struct tcp_rt_log_conn *lc, const struct sock *sk,
			  unsigned int mask);
void tcp_rt_log_record(const struct sock *sk, enum tcp_rt_rec type,
		       u64 start_us, const u64 *fields, unsigned int n,
		       const struct tcp_rt_log_conn *lc);
void tcp_rt_log_record_bd(const struct sock *sk, enum tcp_rt_rec type,
			  u64 start_us, const u64 *fields, unsigned int n,
			  const struct tcp_rt_log_conn *lc,
			  const struct tcp_rt_ext_task *xt);
u64 tcp_rt_log_records(enum tcp_rt_rec type);
unsigned long tcp_rt_log_overwritten(void);
unsigned long tcp_rt_log_bin_overwritten(void);
u64 tcp_rt_log_bin_records_overwritten(void);
u64 tcp_rt_log_bin_records_overwritten_cpu(unsigned int cpu);

/* tcp_rt_stats.c */
int tcp_rt_stats_init(struct dentry *dir, unsigned int n_subbufs);
void tcp_rt_stats_exit(void);
unsigned long tcp_rt_stats_lines(void);
unsigned long tcp_rt_stats_overwritten(void);
unsigned long tcp_rt_stats_dropped(void);
void tcp_rt_stats_add(u32 key, const struct tcp_rt_task_sample *t);

/*
 * tcp_rt_series.c: the columns of rt-network-series, in order: the base
 * ones positionally, then series_ext's, each as " name=value" when listed
 * (tcp_rt_series_ext_names, tcp_rt_params.c).
 */
enum tcp_rt_series_field {
	TCP_RT_SER_BYTES_IN,
	TCP_RT_SER_BYTES_OUT,
	TCP_RT_SER_SEGS_IN,
	TCP_RT_SER_SEGS_OUT,
	TCP_RT_SER_RETRANS,
	TCP_RT_SER_STARTED,
	TCP_RT_SER_DONE,
	TCP_RT_SER_W,
	TCP_RT_SER_N,
	TCP_RT_SER_ESTAB,
	TCP_RT_SER_CLOSED,
	TCP_RT_SER_OPEN,	/* a change of the open-task gauge */
	TCP_RT_SER_BASE,	/* series_ext's fields from here */
	TCP_RT_SER_CE_BYTES = TCP_RT_SER_BASE,
	TCP_RT_SER_CE_SEGS,
	TCP_RT_SER_ECE,
	TCP_RT_SER_DUP_BYTES,
	TCP_RT_SER_DUP_SEGS,
	TCP_RT_SER_FLOWS,
	TCP_RT_SER_FAR_IN,
	TCP_RT_SER_FAR_OUT,
	TCP_RT_SER_MAX,
};

#define TCP_RT_SER_EXT_N	(TCP_RT_SER_MAX - TCP_RT_SER_BASE)
/* series_ext's fields that only the receive hooks count */
#define TCP_RT_SER_EXT_RCV	(BIT(TCP_RT_SER_CE_BYTES - TCP_RT_SER_BASE) | \
				 BIT(TCP_RT_SER_CE_SEGS - TCP_RT_SER_BASE) | \
				 BIT(TCP_RT_SER_ECE - TCP_RT_SER_BASE) |	\
				 BIT(TCP_RT_SER_DUP_BYTES - TCP_RT_SER_BASE) | \
				 BIT(TCP_RT_SER_DUP_SEGS - TCP_RT_SER_BASE) | \
				 BIT(TCP_RT_SER_FLOWS - TCP_RT_SER_BASE))
extern const char *const tcp_rt_series_ext_names[TCP_RT_SER_EXT_N];

DECLARE_STATIC_KEY_FALSE(tcp_rt_series_on);
/* a run counts every TCP connection of the host, not only tracked ones */
DECLARE_STATIC_KEY_FALSE(tcp_rt_series_host_on);
/* a run counts segments leaving: the host's, or active flows */
DECLARE_STATIC_KEY_FALSE(tcp_rt_series_out_on);

int tcp_rt_series_init(struct dentry *dir);
void tcp_rt_series_exit(void);
struct tcp_rt_series_run;
struct tcp_rt_series_run *tcp_rt_series_prepare(bool recorder, bool *rcv);
void tcp_rt_series_discard(struct tcp_rt_series_run *run);
int tcp_rt_series_begin(struct tcp_rt_series_run *run, u32 *gen);
unsigned long tcp_rt_series_begun(void);
unsigned long tcp_rt_series_end(bool recorder, bool now);
bool tcp_rt_series_is_running(void);
bool tcp_rt_series_is_recording(void);
bool tcp_rt_series_run_is_recorder(const struct tcp_rt_series_run *run);
int tcp_rt_series_freeze(u64 start_real_us, u64 dur_us);
void tcp_rt_series_status(struct seq_file *m);
u32 tcp_rt_series_gen_active(void);
void tcp_rt_series_initial(u32 gen, u32 key);
void __tcp_rt_series_add(u32 key, u64 now_us, enum tcp_rt_series_field field,
			 int n);
void __tcp_rt_series_done(u32 key, u64 start_us, u64 end_us, u64 now_us);
void __tcp_rt_series_bytes(u32 key, const struct sock *sk, bool out, u32 n);
void __tcp_rt_series_seg_in(u32 key, const struct sock *sk,
			    const struct sk_buff *skb);
void __tcp_rt_series_seg_out(u32 key, const struct sock *sk,
			     const struct sk_buff *skb, u32 len);
void __tcp_rt_series_conn(bool estab);
void __tcp_rt_series_flow_end(const struct sock *sk);

/*
 * Outside a run these are a patched-out jump.  A task event is counted at
 * the time its record carries (@now_us, tcp_clock_us()); data and
 * segments when they are counted (tcp_rt_series_add).
 */
static inline void tcp_rt_series_add_at(u32 key, u64 now_us,
					enum tcp_rt_series_field field, int n)
{
	if (static_branch_unlikely(&tcp_rt_series_on))
		__tcp_rt_series_add(key, now_us, field, n);
}

static inline void tcp_rt_series_add(u32 key, enum tcp_rt_series_field field,
				     int n)
{
	tcp_rt_series_add_at(key, 0, field, n);
}

/*
 * A task of @key done, from @start_us to @end_us (tcp_clock_us()), its
 * record written at @now_us: counted, and the recorder's window around
 * it frozen when it was slow (recorder_slow_us).
 */
static inline void tcp_rt_series_done(u32 key, u64 start_us, u64 end_us,
				      u64 now_us)
{
	if (static_branch_unlikely(&tcp_rt_series_on))
		__tcp_rt_series_done(key, start_us, end_us, now_us);
}

/* New data of a tracked connection, in (@out false) or out: and if far. */
static inline void tcp_rt_series_bytes(u32 key, const struct sock *sk,
				       bool out, u32 n)
{
	if (static_branch_unlikely(&tcp_rt_series_on))
		__tcp_rt_series_bytes(key, sk, out, n);
}

/*
 * A segment arrived (@key: its tracked connection's, 0 for none), or one
 * leaves with @len bytes of new data.
 */
static inline void tcp_rt_series_seg_in(u32 key, const struct sock *sk,
					const struct sk_buff *skb)
{
	if (static_branch_unlikely(&tcp_rt_series_on))
		__tcp_rt_series_seg_in(key, sk, skb);
}

static inline void tcp_rt_series_seg_out(u32 key, const struct sock *sk,
					 const struct sk_buff *skb, u32 len)
{
	if (static_branch_unlikely(&tcp_rt_series_out_on))
		__tcp_rt_series_seg_out(key, sk, skb, len);
}

#endif /* _TCP_RT_H */
