// SPDX-License-Identifier: GPL-2.0
/*
 * How tcp_rt is hooked into the kernel: the state-change tracepoint and
 * the ftrace callbacks, their registration, the recursion guard and the
 * port test that untracked traffic stops at.  Each event goes to the task
 * engine (tcp_rt_task.c), or, while the load-time check runs, to the check
 * (tcp_rt_hookcheck.c).  With include/tcp_rt_compat.h this is the only
 * file that knows how the kernel is hooked.
 *
 * Hooks (no kernel patch):
 *   - tracepoint sock:inet_sock_set_state: ESTABLISHED starts tracking,
 *     CLOSE writes the last records and stops it;
 *   - ftrace callbacks at the entry of tcp_rate_skb_sent() (data sent),
 *     tcp_rate_gen() (ACK processed), tcp_send_ack() and
 *     tcp_send_delayed_ack() (data received), or their equivalents where
 *     a kernel inlines one (include/tcp_rt_compat.h); see below;
 *   - only while log_ext has a time-breakdown field: the tracepoint
 *     tcp:tcp_rcv_space_adjust (the application read) and an ftrace
 *     callback at the entry of tcp_rate_check_app_limited() (it writes);
 *   - only while a series run counts received segments (series_ext's
 *     measures of them, or the whole host: tcp_rt_series_prepare()):
 *     ftrace callbacks at the entry of tcp_rcv_established() and
 *     tcp_rcv_state_process(), every segment a socket takes in.
 *
 * During a run of the whole host (series_host), the untracked traffic
 * that the port test stops goes on to the series at the transmit hook and
 * the state tracepoint too.
 *
 * Concurrency and what protects what:
 *   - Every hook runs with preemption disabled, which the engine relies
 *     on: the ftrace callbacks through their recursion guard, the
 *     tracepoint probes by disabling it themselves (7.x no longer does).
 *   - The hook table is written at registration only, before any callback
 *     can run, and its missed counters are atomics.
 *   - Every hooked function runs with the socket lock held, owned by a
 *     process or spinlocked in softirq: the engine relies on it.
 *   - The watch bitmaps (tcp_rt_params.c) only gain bits: read without a
 *     lock.
 *   - The breakdown's hooks are attached and detached by their callers
 *     (tcp_rt_main.c) under its control mutex; tcp_rt_bd_attached is only
 *     read there.
 *   - The series' receive hooks are attached and detached by their
 *     callers (tcp_rt_main.c) under its control mutex too, and
 *     tcp_rt_series_attached is only read there.
 *   - A hook's filter (tcp_rt_hook.filtered) is set at its first attach,
 *     kept while it is detached and freed once, at unload
 *     (tcp_rt_hooks_free()): init, exit and the writes of log_ext and
 *     series_run (serialised as above) are the only ones to touch it.
 */

#define pr_fmt(fmt) "tcp_rt: " fmt

#include <linux/atomic.h>
#include <linux/ftrace.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <net/inet_sock.h>
#include <net/tcp.h>
#include <trace/events/sock.h>
#include <trace/events/tcp.h>

#include "include/tcp_rt.h"
#include "include/tcp_rt_compat.h"

#ifdef TCP_RT_NEED_RECURSION_GUARD
DEFINE_PER_CPU(unsigned int, tcp_rt_in_hook);
#endif

/* A port ever configured: the one test untracked traffic pays. */
static inline bool tcp_rt_watched(const struct sock *sk)
{
	const struct inet_sock *inet = inet_sk(sk);

	return test_bit((__force u16)inet->inet_sport, tcp_rt_watch_local) ||
	       test_bit((__force u16)inet->inet_dport, tcp_rt_watch_peer);
}

/* States a connection closes from once it was established. */
#define TCP_RT_SYNCHRONIZED	(TCPF_ESTABLISHED | TCPF_FIN_WAIT1 |	\
				 TCPF_FIN_WAIT2 | TCPF_CLOSE_WAIT |	\
				 TCPF_CLOSING | TCPF_LAST_ACK | TCPF_TIME_WAIT)

/* Any connection of the host, for a run of the whole host. */
static void tcp_rt_series_state(int oldstate, int newstate)
{
	if (newstate == TCP_ESTABLISHED && oldstate != TCP_ESTABLISHED)
		__tcp_rt_series_conn(true);
	else if (newstate == TCP_CLOSE && (BIT(oldstate) & TCP_RT_SYNCHRONIZED))
		__tcp_rt_series_conn(false);
}

static void tcp_rt_set_state_event(const struct sock *sk, int oldstate,
				   int newstate)
{
	/* while a hook check runs (tcp_rt_hookcheck.c) */
	if (static_branch_unlikely(&tcp_rt_hookcheck_on) &&
	    tcp_rt_hookcheck_state(sk, newstate))
		return;
	if (static_branch_unlikely(&tcp_rt_series_host_on))
		tcp_rt_series_state(oldstate, newstate);
	/* a run's active flows: its memory may be another socket's next */
	if (static_branch_unlikely(&tcp_rt_series_out_on) &&
	    newstate == TCP_CLOSE)
		__tcp_rt_series_flow_end(sk);
	if (!tcp_rt_watched(sk))
		return;
	if (newstate == TCP_ESTABLISHED && oldstate != TCP_ESTABLISHED)
		tcp_rt_task_estab(sk);
	else if (newstate == TCP_CLOSE && oldstate != TCP_CLOSE)
		tcp_rt_task_close(sk, oldstate);
}

/*
 * Up to 6.12 a tracepoint calls its probes with preemption disabled; 7.x
 * calls them under SRCU-fast only, preemptible in process context (a
 * close() or a connect()).  The engine relies on staying on one CPU for
 * the whole event: the last R or P and the E after it go to one CPU's
 * log in that order, and the per-CPU counters and pools take no lock.
 * So the probe disables preemption itself, on every kernel: two
 * instructions where the tracepoint already did.
 */
static void tcp_rt_set_state_probe(void *data, const struct sock *sk,
				   const int oldstate, const int newstate)
{
	if (sk->sk_protocol != IPPROTO_TCP)
		return;
	preempt_disable_notrace();
	tcp_rt_set_state_event(sk, oldstate, newstate);
	preempt_enable_notrace();
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
	/* what an untracked socket's event is, in a run of the whole host */
	void (*host)(struct sock *sk, unsigned long arg1);
	enum tcp_rt_hook_kind kind;	/* what it sees, for the load check */
	atomic_long_t missed;
	bool filtered;		/* ops' filter set: freed at unload only */
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
	tcp_rt_task_sync(sk);
}

static void tcp_rt_hook_xmit(struct sock *sk, unsigned long arg1)
{
	const struct sk_buff *skb = (const void *)arg1;

	tcp_rt_task_xmit(sk, skb, tcp_rt_skb_new_data(sk, skb));
}

static void tcp_rt_hook_host_xmit(struct sock *sk, unsigned long arg1)
{
	const struct sk_buff *skb = (const void *)arg1;

	tcp_rt_series_seg_out(0, sk, skb, tcp_rt_skb_new_data(sk, skb));
}

static struct tcp_rt_hook tcp_rt_hooks[];
static struct tcp_rt_hook tcp_rt_hook_bd_write;
static struct tcp_rt_hook tcp_rt_hooks_rcv[TCP_RT_HOOKS_RCV];

/*
 * A hook's event while a hook check runs (tcp_rt_hookcheck.c): true when
 * the check takes it, the engine must not see it.
 */
static noinline bool tcp_rt_hook_to_check(const struct tcp_rt_hook *hook,
					  const struct sock *sk,
					  unsigned long arg1)
{
	u32 len = 0;

	if (hook == &tcp_rt_hook_bd_write)
		return tcp_rt_hookcheck_app(sk, true);
	if (hook->kind == TCP_RT_HOOK_KIND_XMIT)
		len = tcp_rt_skb_new_data(sk, (const void *)arg1);
	return tcp_rt_hookcheck_hook(sk, hook - tcp_rt_hooks, len);
}

/* A hook's handler, unless it would recurse: that is counted as missed. */
static __always_inline void tcp_rt_hook_call(struct tcp_rt_hook *hook,
					     void (*handler)(struct sock *,
							     unsigned long),
					     struct sock *sk, unsigned long arg1,
					     unsigned long ip,
					     unsigned long parent_ip)
{
	/* Also disables preemption: records go to this CPU's buffer. */
	int bit = tcp_rt_recursion_trylock(ip, parent_ip);

	if (unlikely(bit < 0)) {
		atomic_long_inc(&hook->missed);
		return;
	}
	handler(sk, arg1);
	tcp_rt_recursion_unlock(bit);
}

static void notrace tcp_rt_ftrace(unsigned long ip, unsigned long parent_ip,
				  struct ftrace_ops *ops,
				  struct tcp_rt_ftrace_regs *fregs)
{
	struct tcp_rt_hook *hook = container_of(ops, struct tcp_rt_hook, ops);
	struct sock *sk = (struct sock *)tcp_rt_ftrace_arg(fregs, 0);
	void (*handler)(struct sock *sk, unsigned long arg1);

	if (static_branch_unlikely(&tcp_rt_hookcheck_on) &&
	    tcp_rt_hook_to_check(hook, sk, tcp_rt_ftrace_arg(fregs, 1)))
		return;
	if (tcp_rt_watched(sk))
		handler = hook->handler;
	else if (static_branch_unlikely(&tcp_rt_series_host_on) && hook->host)
		handler = hook->host;
	else
		return;
	tcp_rt_hook_call(hook, handler, sk, tcp_rt_ftrace_arg(fregs, 1), ip,
			 parent_ip);
}

#define TCP_RT_HOOK_OPS(fn, cb, h, hh, k) {				\
	.ops = {							\
		.func	= cb,						\
		.flags	= TCP_RT_FTRACE_FLAGS,				\
	},								\
	.handler	= h,						\
	.host		= hh,						\
	.kind		= TCP_RT_HOOK_KIND_ ## k,			\
	.missed		= ATOMIC_LONG_INIT(0),				\
	.func		= fn,						\
}

#define TCP_RT_HOOK(fn, h, k)	TCP_RT_HOOK_OPS(fn, tcp_rt_ftrace, h, NULL, k)

/*
 * Selftests only (tcp_rt_module.sh, tcp_rt_breakdown.sh): builds whose
 * ACK hook, or the breakdown's write hook, sits on a function no loopback
 * exchange calls, which the hook check refuses.
 */
#ifdef TCP_RT_TEST_DEAD_HOOK
#undef TCP_RT_HOOK_ACK
#define TCP_RT_HOOK_ACK		"tcp_v4_mtu_reduced"
#endif
#ifdef TCP_RT_TEST_DEAD_WRITE_HOOK
#define TCP_RT_HOOK_BD_WRITE	"tcp_v4_mtu_reduced"
#else
#define TCP_RT_HOOK_BD_WRITE	"tcp_rate_check_app_limited"
#endif
#ifdef TCP_RT_TEST_DEAD_RCV_HOOK
#define TCP_RT_HOOK_RCV_ESTAB	"tcp_v4_mtu_reduced"
#else
#define TCP_RT_HOOK_RCV_ESTAB	"tcp_rcv_established"
#endif

static struct tcp_rt_hook tcp_rt_hooks[] = {
	TCP_RT_HOOK_OPS(TCP_RT_HOOK_XMIT, tcp_rt_ftrace, tcp_rt_hook_xmit,
			tcp_rt_hook_host_xmit, XMIT),
	TCP_RT_HOOK(TCP_RT_HOOK_ACK, tcp_rt_hook_sync, ACK),
	TCP_RT_HOOK("tcp_send_ack", tcp_rt_hook_sync, RCV),
	TCP_RT_HOOK("tcp_send_delayed_ack", tcp_rt_hook_sync, RCV),
#ifdef TCP_RT_HOOK_ACK_DUE
	TCP_RT_HOOK(TCP_RT_HOOK_ACK_DUE, tcp_rt_hook_sync, RCV_ALL),
#endif
};

/*
 * The time breakdown's hooks (docs/records.md), attached only while
 * log_ext lists one of its fields:
 *   tracepoint tcp:tcp_rcv_space_adjust
 *                          at the start of tcp_rcv_space_adjust(), which
 *                          every path that copies received data to the
 *                          application calls after moving copied_seq
 *                          (recvmsg, splice and read_sock, zerocopy, kTLS
 *                          and sockmap), with the socket locked;
 *   tcp_rate_check_app_limited()
 *                          at the start of every write call (sendmsg,
 *                          sendfile and splice, kTLS, sockmap), before it
 *                          queues anything: tp->write_seq is the value
 *                          before the write.
 * Both are real calls on every kernel of the matrix (scripts/hook-audit).
 * Untracked traffic pays the port test, as at the other hooks.
 */
static void tcp_rt_hook_write(struct sock *sk, unsigned long arg1)
{
	tcp_rt_task_write(sk);
}

static struct tcp_rt_hook tcp_rt_hook_bd_write =
	TCP_RT_HOOK(TCP_RT_HOOK_BD_WRITE, tcp_rt_hook_write, XMIT);

static void tcp_rt_rcv_space_probe(void *data, struct sock *sk)
{
	if (static_branch_unlikely(&tcp_rt_hookcheck_on) &&
	    tcp_rt_hookcheck_app(sk, false))
		return;
	if (!tcp_rt_watched(sk))
		return;
	/* process context, preemptible on 7.x: see tcp_rt_set_state_probe() */
	preempt_disable_notrace();
	tcp_rt_task_read(sk);
	preempt_enable_notrace();
}

/*
 * The series' receive hooks (tcp_rt_series.c), attached only while a run
 * counts received segments: at the entry of
 *   tcp_rcv_established()   every segment of an established connection,
 *                           backlogged ones when the owner releases it;
 *   tcp_rcv_state_process() every segment in the other states, of which
 *                           those that may carry data count;
 * both with the socket locked and TCP's control block filled in (seq,
 * end_seq, flags, the IP header's ECN field), before TCP handles it.
 * Both are called from tcp_ipv4.c and tcp_ipv6.c, so not inlined by a
 * compiler; an LTO build may, and the hook check proves them each time
 * they are attached.  Every socket takes this callback, not only the
 * tracked ones: an untracked one counts only in a run of the whole host.
 */
#define TCP_RT_RCV_STATES	(TCPF_SYN_RECV | TCPF_FIN_WAIT1 |	\
				 TCPF_FIN_WAIT2 | TCPF_CLOSE_WAIT |	\
				 TCPF_CLOSING | TCPF_LAST_ACK)

static void tcp_rt_hook_seg_in(struct sock *sk, unsigned long arg1)
{
	const struct sk_buff *skb = (const void *)arg1;

	if (tcp_rt_watched(sk))
		tcp_rt_task_seg_in(sk, skb);
	else if (static_branch_unlikely(&tcp_rt_series_host_on))
		tcp_rt_series_seg_in(0, sk, skb);
}

static void tcp_rt_hook_seg_in_other(struct sock *sk, unsigned long arg1)
{
	if (BIT(sk->sk_state) & TCP_RT_RCV_STATES)
		tcp_rt_hook_seg_in(sk, arg1);
}

static void notrace tcp_rt_ftrace_rcv(unsigned long ip,
				      unsigned long parent_ip,
				      struct ftrace_ops *ops,
				      struct tcp_rt_ftrace_regs *fregs)
{
	struct tcp_rt_hook *hook = container_of(ops, struct tcp_rt_hook, ops);
	struct sock *sk = (struct sock *)tcp_rt_ftrace_arg(fregs, 0);

	if (static_branch_unlikely(&tcp_rt_hookcheck_on) &&
	    tcp_rt_hookcheck_seg(sk, hook - tcp_rt_hooks_rcv))
		return;
	tcp_rt_hook_call(hook, hook->handler, sk, tcp_rt_ftrace_arg(fregs, 1),
			 ip, parent_ip);
}

static struct tcp_rt_hook tcp_rt_hooks_rcv[TCP_RT_HOOKS_RCV] = {
	TCP_RT_HOOK_OPS(TCP_RT_HOOK_RCV_ESTAB, tcp_rt_ftrace_rcv,
			tcp_rt_hook_seg_in, NULL, RCV),
	TCP_RT_HOOK_OPS("tcp_rcv_state_process", tcp_rt_ftrace_rcv,
			tcp_rt_hook_seg_in_other, NULL, RCV),
};

static bool tcp_rt_series_attached;

static struct tracepoint *tcp_rt_set_state_tp;
static struct tracepoint *tcp_rt_rcv_space_tp;
static bool tcp_rt_bd_attached;

static void tcp_rt_find_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "inet_sock_set_state"))
		tcp_rt_set_state_tp = tp;
	else if (!strcmp(tp->name, "tcp_rcv_space_adjust"))
		tcp_rt_rcv_space_tp = tp;
}

static void tcp_rt_find_tps(void)
{
	if (!tcp_rt_set_state_tp || !tcp_rt_rcv_space_tp)
		for_each_kernel_tracepoint(tcp_rt_find_tp, NULL);
}

static unsigned long tcp_rt_probe_missed(void)
{
	unsigned long n = atomic_long_read(&tcp_rt_hook_bd_write.missed);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(tcp_rt_hooks); i++)
		n += atomic_long_read(&tcp_rt_hooks[i].missed);
	for (i = 0; i < ARRAY_SIZE(tcp_rt_hooks_rcv); i++)
		n += atomic_long_read(&tcp_rt_hooks_rcv[i].missed);
	return n;
}

static void tcp_rt_hook_status(struct seq_file *m,
			       const struct tcp_rt_hook *hook)
{
	seq_printf(m, "probe_missed_%s %ld\n", hook->func,
		   atomic_long_read(&hook->missed));
}

/* probe_missed, then each hook's share of it, for the status file. */
void tcp_rt_hooks_status(struct seq_file *m)
{
	unsigned int i;

	seq_printf(m, "probe_missed %lu\n", tcp_rt_probe_missed());
	for (i = 0; i < ARRAY_SIZE(tcp_rt_hooks); i++)
		tcp_rt_hook_status(m, &tcp_rt_hooks[i]);
	tcp_rt_hook_status(m, &tcp_rt_hook_bd_write);
	for (i = 0; i < ARRAY_SIZE(tcp_rt_hooks_rcv); i++)
		tcp_rt_hook_status(m, &tcp_rt_hooks_rcv[i]);
}

/*
 * An ops unregistered keeps its filter, and is registered again with it
 * (the breakdown's write hook, each time log_ext lists a field again): the
 * filter is set once, at the first attach, and freed once, at unload.
 * Freeing it between the two is what crashed 6.1 (issue 45), and would
 * crash 6.12 alike: up to 6.12 at least, ftrace_free_filter() frees the
 * hashes but leaves the ops pointing at them, and the next
 * ftrace_set_filter() frees them again, from an RCU callback.
 */
static int tcp_rt_hook_attach(struct tcp_rt_hook *hook)
{
	int err;

	if (!hook->filtered) {
		err = ftrace_set_filter(&hook->ops, hook->func,
					strlen(hook->func), 1);
		if (err) {
			pr_err("cannot hook %s: not a traceable function here (%d)\n",
			       hook->func, err);
			return err;
		}
		hook->filtered = true;
	}
	err = register_ftrace_function(&hook->ops);
	if (err)
		pr_err("cannot hook %s: %d\n", hook->func, err);
	return err;
}

static void tcp_rt_hook_detach(struct tcp_rt_hook *hook)
{
	/* Returns once no CPU can still be in the callback. */
	unregister_ftrace_function(&hook->ops);
}

/* Once detached for good: the filter's memory. */
static void tcp_rt_hook_free(struct tcp_rt_hook *hook)
{
	if (hook->filtered)
		tcp_rt_ftrace_free_filter(&hook->ops);
	hook->filtered = false;
}

static int tcp_rt_hooks_register(void)
{
	unsigned int i;
	int err;

	/* The probe's prototype, checked against the tracepoint's at build. */
	check_trace_callback_type_inet_sock_set_state(tcp_rt_set_state_probe);
	tcp_rt_find_tps();
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

static void tcp_rt_hooks_bd_detach(void)
{
	tracepoint_probe_unregister(tcp_rt_rcv_space_tp,
				    tcp_rt_rcv_space_probe, NULL);
	tcp_rt_hook_detach(&tcp_rt_hook_bd_write);
	tracepoint_synchronize_unregister();
	tcp_rt_bd_attached = false;
}

/*
 * Attach (@on) or detach the time breakdown's hooks; the caller
 * serialises the calls (tcp_rt_main.c).  Once attached they are proven
 * as the others are at load (tcp_rt_hookcheck_run_bd()): a write hook a
 * build inlined would leave every split wrong without a word.  Detaching
 * returns once neither can run any more.
 */
int tcp_rt_hooks_bd(bool on)
{
	int err;

	if (on == tcp_rt_bd_attached)
		return 0;
	if (!on) {
		tcp_rt_hooks_bd_detach();
		return 0;
	}
	check_trace_callback_type_tcp_rcv_space_adjust(tcp_rt_rcv_space_probe);
	tcp_rt_find_tps();
	if (!tcp_rt_rcv_space_tp) {
		pr_err("log_ext: tracepoint tcp:tcp_rcv_space_adjust not found\n");
		return -ENOENT;
	}
	err = tcp_rt_hook_attach(&tcp_rt_hook_bd_write);
	if (err)
		return err;
	err = tracepoint_probe_register(tcp_rt_rcv_space_tp,
					tcp_rt_rcv_space_probe, NULL);
	if (err) {
		pr_err("log_ext: cannot attach to tracepoint tcp_rcv_space_adjust: %d\n",
		       err);
		tcp_rt_hook_detach(&tcp_rt_hook_bd_write);
		return err;
	}
	tcp_rt_bd_attached = true;
	err = tcp_rt_hookcheck_run_bd(tcp_rt_hook_bd_write.func);
	if (err)
		tcp_rt_hooks_bd_detach();
	return err;
}

static void tcp_rt_hooks_series_detach(unsigned int n)
{
	while (n--)
		tcp_rt_hook_detach(&tcp_rt_hooks_rcv[n]);
	tcp_rt_series_attached = false;
}

/*
 * Attach (@on) or detach the series' receive hooks; the caller serialises
 * the calls (tcp_rt_main.c).  Once attached they are proven, as the
 * breakdown's are (tcp_rt_hookcheck_run_rcv()).  Detaching returns once
 * neither can run any more.
 */
int tcp_rt_hooks_series(bool on)
{
	const char *funcs[TCP_RT_HOOKS_RCV];
	unsigned int i;
	int err;

	if (on == tcp_rt_series_attached)
		return 0;
	if (!on) {
		tcp_rt_hooks_series_detach(TCP_RT_HOOKS_RCV);
		return 0;
	}
	for (i = 0; i < TCP_RT_HOOKS_RCV; i++) {
		err = tcp_rt_hook_attach(&tcp_rt_hooks_rcv[i]);
		if (err) {
			tcp_rt_hooks_series_detach(i);
			return err;
		}
		funcs[i] = tcp_rt_hooks_rcv[i].func;
	}
	tcp_rt_series_attached = true;
	err = tcp_rt_hookcheck_run_rcv(funcs);
	if (err)
		tcp_rt_hooks_series_detach(TCP_RT_HOOKS_RCV);
	return err;
}

/* Returns once no hook can run any more. */
void tcp_rt_hooks_stop(void)
{
	unsigned int i;

	tracepoint_probe_unregister(tcp_rt_set_state_tp, tcp_rt_set_state_probe,
				    NULL);
	for (i = 0; i < ARRAY_SIZE(tcp_rt_hooks); i++)
		tcp_rt_hook_detach(&tcp_rt_hooks[i]);
	tracepoint_synchronize_unregister();
}

/* At unload, every hook detached: what their filters hold. */
void tcp_rt_hooks_free(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(tcp_rt_hooks); i++)
		tcp_rt_hook_free(&tcp_rt_hooks[i]);
	tcp_rt_hook_free(&tcp_rt_hook_bd_write);
	for (i = 0; i < ARRAY_SIZE(tcp_rt_hooks_rcv); i++)
		tcp_rt_hook_free(&tcp_rt_hooks_rcv[i]);
}

/* Attach the hooks and prove them (tcp_rt_hookcheck.c); all or nothing. */
int tcp_rt_hooks_start(void)
{
	struct tcp_rt_hook_desc desc[ARRAY_SIZE(tcp_rt_hooks)];
	unsigned int i;
	int err;

	BUILD_BUG_ON(ARRAY_SIZE(tcp_rt_hooks) > TCP_RT_HOOKS_MAX);
	for (i = 0; i < ARRAY_SIZE(tcp_rt_hooks); i++) {
		desc[i].func = tcp_rt_hooks[i].func;
		desc[i].kind = tcp_rt_hooks[i].kind;
	}
	tcp_rt_hookcheck_begin(false);
	err = tcp_rt_hooks_register();
	if (err) {
		tcp_rt_hookcheck_end();
		return err;
	}
	err = tcp_rt_hookcheck_run(desc, ARRAY_SIZE(desc));
	if (err)
		tcp_rt_hooks_stop();
	/* on failure, not before the hooks are gone: nothing is tracked */
	tcp_rt_hookcheck_end();
	return err;
}
