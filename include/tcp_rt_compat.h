/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tcp_rt - what differs between the kernels it supports, in one place.
 *
 * Tested kernels (scripts/kernels list): Debian's 5.10, 6.1, 6.1-rt, 6.12
 * and 7.x on x86-64; the same series are built for arm64 (the -arm64
 * entries), not yet tested there.  Where a kernel lacks what the module
 * needs, the build stops here with an #error naming it, so no module is
 * ever built that would load and record nothing.
 *
 * No kernel version is tested anywhere: Kbuild probes the kernel's own
 * headers and symbol list for each difference and defines a TCP_RT_HAVE_*
 * macro for what it finds (a version number would be wrong for the distro
 * kernels that backport), and this file turns those into one interface.
 */
#ifndef _TCP_RT_COMPAT_H
#define _TCP_RT_COMPAT_H

#include <linux/cgroup.h>
#include <linux/ftrace.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/ptrace.h>
#include <net/net_namespace.h>
#include <net/sock.h>

#if !(defined(CONFIG_X86_64) || defined(CONFIG_ARM64)) || !defined(CONFIG_DYNAMIC_FTRACE)
#error "tcp_rt needs x86-64 or arm64 with CONFIG_DYNAMIC_FTRACE"
#endif

/*
 * Where the hooks sit.  Up to 6.x, tcp_rate.c's tcp_rate_skb_sent() (a data
 * segment left: called once the transmission succeeded, before snd_nxt
 * moves) and tcp_rate_gen() (end of an ACK that found data in flight:
 * snd_una and the RTT sample are updated) are called from tcp_output.c and
 * tcp_input.c, so no call can be inlined away.  Later kernels fold
 * tcp_rate.c into those two files and inline both; the points beside them
 * stay out of line there: tcp_update_skb_after_send(sk, skb), called just
 * before tcp_rate_skb_sent() at both of its call sites, and
 * tcp_in_ack_event(sk, flag), called after tcp_clean_rtx_queue() on both of
 * tcp_ack()'s paths that process an ACK of data (checked in 7.3's vmlinux:
 * every call to them is a real call).  Kbuild defines TCP_RT_HAVE_TCP_RATE
 * when include/net/tcp.h still declares tcp_rate_skb_sent(): extern means
 * called across files, the property the hooks rely on.
 */
#ifdef TCP_RT_HAVE_TCP_RATE
#define TCP_RT_HOOK_XMIT	"tcp_rate_skb_sent"
#define TCP_RT_HOOK_ACK		"tcp_rate_gen"
#else
#define TCP_RT_HOOK_XMIT	"tcp_update_skb_after_send"
#define TCP_RT_HOOK_ACK		"tcp_in_ack_event"
#endif

/*
 * Newer kernels (6.12 and 7.x, not 6.1) defer an ACK that is due while
 * the socket is owned by a process (the segment came from the backlog) to
 * tcp_release_cb(), which sends it with tcp_send_ack() inlined: neither ACK
 * hook sees that data arrive.  __tcp_ack_snd_check(), where the ACK is
 * decided, sees all of it (in 6.12 and 7.3 every call of it is a real
 * call: scripts/hook-audit).
 */
#ifdef TCP_RT_HAVE_ACK_DEFERRED
#define TCP_RT_HOOK_ACK_DUE	"__tcp_ack_snd_check"
#endif

#ifndef TCP_RT_HAVE_FTRACE_REGS
/*
 * Up to 5.10: a callback gets a struct pt_regs, saved only for ops that ask for
 * it (DYNAMIC_FTRACE_WITH_REGS), and ftrace keeps no recursion guard that a
 * module can call: the ops say they protect themselves (RECURSION_SAFE,
 * which also spares them ftrace's list function) and do it per CPU and per
 * context, as later kernels' ftrace_test_recursion_trylock() does.
 */
#ifndef CONFIG_DYNAMIC_FTRACE_WITH_REGS
#error "tcp_rt needs CONFIG_DYNAMIC_FTRACE_WITH_REGS on kernels without ftrace_regs"
#endif
#define tcp_rt_ftrace_regs	pt_regs
#define TCP_RT_FTRACE_FLAGS	(FTRACE_OPS_FL_SAVE_REGS | \
				 FTRACE_OPS_FL_RECURSION_SAFE)

static __always_inline unsigned long
tcp_rt_ftrace_arg(struct pt_regs *regs, unsigned int n)
{
	return regs_get_kernel_argument(regs, n);
}

/* One bit per context (task, softirq, hardirq, NMI) this CPU is hooked in;
 * defined in tcp_rt_hooks.c.
 */
#define TCP_RT_NEED_RECURSION_GUARD
DECLARE_PER_CPU(unsigned int, tcp_rt_in_hook);

static __always_inline int tcp_rt_recursion_trylock(unsigned long ip,
						    unsigned long parent_ip)
{
	int bit = in_nmi() ? 3 : in_irq() ? 2 : in_serving_softirq() ? 1 : 0;

	preempt_disable_notrace();
	if (__this_cpu_read(tcp_rt_in_hook) & BIT(bit)) {
		preempt_enable_notrace();
		return -1;
	}
	__this_cpu_or(tcp_rt_in_hook, BIT(bit));
	return bit;
}

static __always_inline void tcp_rt_recursion_unlock(int bit)
{
	__this_cpu_and(tcp_rt_in_hook, ~BIT(bit));
	preempt_enable_notrace();
}

#else /* 5.11 and later */
/*
 * A callback gets a struct ftrace_regs.  With DYNAMIC_FTRACE_WITH_ARGS
 * (x86-64 from 5.11, arm64 from 6.2) it holds the argument registers
 * whatever the ops ask; 6.x made it opaque behind accessors, and where an
 * architecture lays it out itself (HAVE_ARCH_FTRACE_REGS: arm64) the
 * accessor is an inline function, not the generic macro.  Without it
 * (arm64 up to 6.1) it is a struct pt_regs, filled only for ops that ask
 * for it (SAVE_REGS).  The ops do not ask for ftrace's own recursion
 * guard (FTRACE_OPS_FL_RECURSION): it would drop a recursive call before
 * the callback could count it.  The callback takes the same per-context
 * guard itself, ftrace_test_recursion_trylock(), which also disables
 * preemption.
 */
#define tcp_rt_ftrace_regs	ftrace_regs
#if defined(CONFIG_DYNAMIC_FTRACE_WITH_ARGS)
#define TCP_RT_FTRACE_FLAGS	0

static __always_inline unsigned long
tcp_rt_ftrace_arg(struct ftrace_regs *fregs, unsigned int n)
{
#if defined(ftrace_regs_get_argument) || defined(HAVE_ARCH_FTRACE_REGS)
	return ftrace_regs_get_argument(fregs, n);
#else
	return regs_get_kernel_argument(&fregs->regs, n);
#endif
}
#elif defined(CONFIG_DYNAMIC_FTRACE_WITH_REGS)
#define TCP_RT_FTRACE_FLAGS	FTRACE_OPS_FL_SAVE_REGS

static __always_inline unsigned long
tcp_rt_ftrace_arg(struct ftrace_regs *fregs, unsigned int n)
{
	return regs_get_kernel_argument(ftrace_get_regs(fregs), n);
}
#else
#error "tcp_rt needs CONFIG_DYNAMIC_FTRACE_WITH_ARGS or CONFIG_DYNAMIC_FTRACE_WITH_REGS"
#endif

/*
 * ftrace_test_recursion_trylock() disables preemption from 5.16 on
 * (Kbuild finds preempt_disable_notrace() in linux/trace_recursion.h);
 * from 5.11 to 5.15 it does not, and a callback of a CONFIG_PREEMPT
 * kernel would run preemptible, against what the engine relies on: so
 * there the guard disables it itself.
 */
#ifdef TCP_RT_HAVE_RECURSION_PREEMPT
#define tcp_rt_recursion_trylock	ftrace_test_recursion_trylock
#define tcp_rt_recursion_unlock		ftrace_test_recursion_unlock
#else
static __always_inline int tcp_rt_recursion_trylock(unsigned long ip,
						    unsigned long parent_ip)
{
	int bit = ftrace_test_recursion_trylock(ip, parent_ip);

	if (bit >= 0)
		preempt_disable_notrace();
	return bit;
}

static __always_inline void tcp_rt_recursion_unlock(int bit)
{
	preempt_enable_notrace();
	ftrace_test_recursion_unlock(bit);
}
#endif
#endif

/*
 * Whether the hooks may fall back to a GFP_ATOMIC allocation when their
 * pool of connection states is empty: not on PREEMPT_RT, where the slab
 * allocator takes sleeping locks and the hooks run with preemption off.
 */
#ifdef CONFIG_PREEMPT_RT
#define TCP_RT_ATOMIC_ALLOC	false
#else
#define TCP_RT_ATOMIC_ALLOC	true
#endif

/*
 * ftrace_free_filter() is exported only by later kernels (Kbuild looks for
 * it in Module.symvers); a filter reset to nothing frees the same entries
 * once the ops are unregistered.  Either is called once per ops, at
 * unload (tcp_rt_hooks.c says why).
 */
#ifdef TCP_RT_HAVE_FTRACE_FREE_FILTER
#define tcp_rt_ftrace_free_filter	ftrace_free_filter
#else
static inline void tcp_rt_ftrace_free_filter(struct ftrace_ops *ops)
{
	ftrace_set_filter(ops, NULL, 0, 1);
}
#endif

/*
 * relay: 5.10's relay_open() takes non-const callbacks and fills in the
 * ones left NULL, so they cannot be const there; 7.x dropped
 * subbuf_start()'s prev_padding argument (which tcp_rt does not use).
 */
#ifdef TCP_RT_HAVE_RELAY_CONST_CB
#define tcp_rt_relay_cb_const	const
#else
#define tcp_rt_relay_cb_const
#endif

#ifdef TCP_RT_HAVE_RELAY_PREV_PADDING
#define TCP_RT_SUBBUF_START_ARGS	struct rchan_buf *buf, void *subbuf, \
					void *prev_subbuf, size_t prev_padding
#else
#define TCP_RT_SUBBUF_START_ARGS	struct rchan_buf *buf, void *subbuf, \
					void *prev_subbuf
#endif

/*
 * kernel_bind() and kernel_connect() (the load-time hook check's loopback
 * exchange) take a struct sockaddr_unsized in 7.x, a struct sockaddr
 * before: Kbuild looks for the type in linux/net.h.
 */
#ifdef TCP_RT_HAVE_SOCKADDR_UNSIZED
#define tcp_rt_sockaddr		sockaddr_unsized
#else
#define tcp_rt_sockaddr		sockaddr
#endif

/*
 * A socket's network namespace and cgroup, for log_ext's netns and cgroup
 * fields: loads only, safe in any hook.  The namespace's inode number is
 * what /proc/PID/ns/net names.  The cgroup is the v2 one the socket was
 * charged to when it was created (an accepted connection: its listener's);
 * sock_cgroup_ptr() takes a non-const pointer on every kernel, and only
 * reads.  Without socket cgroup data (CONFIG_SOCK_CGROUP_DATA, set by any
 * of cgroup v2's socket users) the field is 0, as docs/records.md says.
 */
static inline u32 tcp_rt_sk_netns(const struct sock *sk)
{
	return sock_net(sk)->ns.inum;
}

#ifdef CONFIG_SOCK_CGROUP_DATA
static inline u64 tcp_rt_sk_cgroup(const struct sock *sk)
{
	return cgroup_id(sock_cgroup_ptr((struct sock_cgroup_data *)
					 &sk->sk_cgrp_data));
}
#else
static inline u64 tcp_rt_sk_cgroup(const struct sock *sk)
{
	return 0;
}
#endif

/*
 * Whether a connection negotiated classic ECN (RFC 3168), whose ECE flag
 * says "CE seen" (a series run's ece).  Kernels with Accurate ECN (6.18
 * on) keep the mode in ecn_flags' low bits and say it with
 * tcp_ecn_mode_rfc3168(), where AccECN's counter uses the same flag
 * otherwise; earlier ones have TCP_ECN_OK.  Kbuild looks for the former
 * in net/tcp.h.
 */
#ifdef TCP_RT_HAVE_ECN_MODE
#define tcp_rt_ecn_classic(tp)	tcp_ecn_mode_rfc3168(tp)
#else
#define tcp_rt_ecn_classic(tp)	((tp)->ecn_flags & TCP_ECN_OK)
#endif

#endif /* _TCP_RT_COMPAT_H */
