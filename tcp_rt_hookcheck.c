// SPDX-License-Identifier: GPL-2.0
/*
 * The load-time hook check: before tracking anything, prove that the hooks
 * see TCP's events on this kernel.
 *
 * Some hook targets are static functions a compiler may inline at one call
 * site and not another, on a distribution's build no one here audited:
 * ftrace then attaches and silently misses events.  So once the hooks are
 * attached, init makes one exchange over loopback with kernel sockets in
 * init_net - a connection, a request of TCP_RT_HC_REQ bytes, a response of
 * TCP_RT_HC_RESP, an abortive close - and every hook must have seen its
 * part of it on both sockets:
 *   - the state tracepoint: both ends established, and both closed;
 *   - the transmit hook: exactly the request's bytes of new data leaving
 *     the client and the response's leaving the server;
 *   - the ACK hook: an ACK of data processed on both ends;
 *   - the data-arrival hooks: the request's arrival on the server and the
 *     response's on the client - by the one that sees every arrival where
 *     the kernel has it (TCP_RT_HOOK_KIND_RCV_ALL), else by either of the
 *     two that share arrivals between them (an ACK sent now or delayed).
 * Otherwise the load fails with one line naming the hook that saw nothing
 * (or what it saw).  hook_check=0 skips the check.
 *
 * From before the hooks are attached until the check ends, the hooks
 * hand every event to it and none to the task engine (a static key,
 * patched out otherwise): no connection is tracked before the hooks are
 * proven, so a failed check leaves nothing to undo but the hooks
 * themselves.  A connection established meanwhile is not tracked, as one
 * established before the load.
 *
 * The time breakdown's hooks (the application's reads and writes) are
 * proven the same way each time they are attached, at load or by a write
 * of log_ext (tcp_rt_hookcheck_run_bd()): the same exchange must show a
 * read and a write on each end, or log_ext refuses the fields, naming the
 * hook.  The series' receive hooks too, each time a run that counts
 * received segments attaches them (tcp_rt_hookcheck_run_rcv()): each must
 * see a segment arrive on each end - tcp_rcv_state_process() the
 * handshake's, tcp_rcv_established() the data's - or the run is refused,
 * naming the hook (a build that inlines tcp_rcv_established() would
 * otherwise report no CE mark, duplicate or host byte, without a word).
 * The engine is live then: only the check's own connection goes to the
 * check, every other event to the engine.
 *
 * The check's connection is known by its four-tuple on 127.0.0.1 in
 * init_net, both ports the kernel's own picks and bound by the check: no
 * other connection has it while the check runs, not one in a container
 * on the same two ports, not a socket that takes a released one's memory.
 *
 * Concurrency: one check at a time (tcp_rt_hc_mutex, from begin to end):
 * init's, or a log_ext write's, its exchange in a worker the caller
 * waits for.  tcp_rt_hc's identities are written by it while the hooks
 * may read them (READ_ONCE, a port of 0 matching nothing); its counters
 * are atomics bumped by hooks on any CPU and read by the check.
 */

#define pr_fmt(fmt) "tcp_rt: " fmt

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/in.h>
#include <linux/jump_label.h>
#include <linux/ktime.h>
#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/tcp.h>
#include <linux/uio.h>
#include <linux/workqueue.h>
#include <net/inet_sock.h>
#include <net/net_namespace.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "include/tcp_rt.h"
#include "include/tcp_rt_compat.h"

#define TCP_RT_HC_REQ		100
#define TCP_RT_HC_RESP		1000
/* every socket call and every wait of the check, at most */
#define TCP_RT_HC_TIMEOUT_MS	5000

enum { TCP_RT_HC_SERVER, TCP_RT_HC_CLIENT, TCP_RT_HC_SIDES };

static const char *const tcp_rt_hc_side_name[TCP_RT_HC_SIDES] = {
	"server", "client",
};

DEFINE_STATIC_KEY_FALSE(tcp_rt_hookcheck_on);
static DEFINE_MUTEX(tcp_rt_hc_mutex);

static struct {
	bool engine_live;		/* other events go to the engine */
	__be16 lport;			/* the server's port */
	__be16 cport;			/* the client's port */
	atomic_t estab[TCP_RT_HC_SIDES];
	atomic_t closed[TCP_RT_HC_SIDES];
	/* by hook; tcp_rt_hooks.c's table fits (BUILD_BUG_ON) */
	atomic_t calls[TCP_RT_HOOKS_MAX][TCP_RT_HC_SIDES];
	atomic_t sent[TCP_RT_HC_SIDES];	/* new data the transmit hook saw */
	atomic_t reads[TCP_RT_HC_SIDES];	/* the breakdown's hooks */
	atomic_t writes[TCP_RT_HC_SIDES];
	/* segments the series' receive hooks saw arrive, by hook */
	atomic_t segs[TCP_RT_HOOKS_RCV][TCP_RT_HC_SIDES];
} tcp_rt_hc;

static u64 tcp_rt_hc_us;	/* how long the check took; written by init */

/* Which end of the check's connection @sk is, or -1. */
static int tcp_rt_hc_side(const struct sock *sk)
{
	const struct inet_sock *inet = inet_sk(sk);
	__be16 lport = READ_ONCE(tcp_rt_hc.lport);
	__be16 cport = READ_ONCE(tcp_rt_hc.cport);

	if (!cport || sk->sk_family != AF_INET ||
	    !net_eq(sock_net(sk), &init_net) ||
	    inet->inet_daddr != htonl(INADDR_LOOPBACK) ||
	    inet->inet_rcv_saddr != htonl(INADDR_LOOPBACK))
		return -1;
	if (inet->inet_sport == lport && inet->inet_dport == cport)
		return TCP_RT_HC_SERVER;
	if (inet->inet_sport == cport && inet->inet_dport == lport)
		return TCP_RT_HC_CLIENT;
	return -1;
}

/*
 * Hook @i fired on @sk, which sent @new_data bytes of new data (transmit
 * hook).  Only events of an established connection count: the handshake's
 * own segments and ACK are none of the engine's business either.  True
 * when the engine must not see the event.
 */
bool tcp_rt_hookcheck_hook(const struct sock *sk, unsigned int i,
			   u32 new_data)
{
	int side = tcp_rt_hc_side(sk);

	if (side < 0)
		return !READ_ONCE(tcp_rt_hc.engine_live);
	if (READ_ONCE(sk->sk_state) != TCP_ESTABLISHED)
		return true;
	atomic_inc(&tcp_rt_hc.calls[i][side]);
	if (new_data)
		atomic_add(new_data, &tcp_rt_hc.sent[side]);
	return true;
}

bool tcp_rt_hookcheck_state(const struct sock *sk, int newstate)
{
	int side = tcp_rt_hc_side(sk);

	if (side < 0)
		return !READ_ONCE(tcp_rt_hc.engine_live);
	if (newstate == TCP_ESTABLISHED)
		atomic_inc(&tcp_rt_hc.estab[side]);
	else if (newstate == TCP_CLOSE)
		atomic_inc(&tcp_rt_hc.closed[side]);
	return true;
}

/* The breakdown's hooks: the application read (@write false) or writes. */
bool tcp_rt_hookcheck_app(const struct sock *sk, bool write)
{
	int side = tcp_rt_hc_side(sk);

	if (side < 0)
		return !READ_ONCE(tcp_rt_hc.engine_live);
	atomic_inc(write ? &tcp_rt_hc.writes[side] : &tcp_rt_hc.reads[side]);
	return true;
}

/*
 * The series' receive hook @i saw a segment arrive on @sk, in any state:
 * tcp_rcv_state_process() sees only the handshake's on the check's
 * connection.
 */
bool tcp_rt_hookcheck_seg(const struct sock *sk, unsigned int i)
{
	int side = tcp_rt_hc_side(sk);

	if (side < 0)
		return !READ_ONCE(tcp_rt_hc.engine_live);
	if (!WARN_ON_ONCE(i >= TCP_RT_HOOKS_RCV))
		atomic_inc(&tcp_rt_hc.segs[i][side]);
	return true;
}

static unsigned int tcp_rt_hc_calls(unsigned int i, int side)
{
	return atomic_read(&tcp_rt_hc.calls[i][side]);
}

/* What a side is expected to have sent. */
static u32 tcp_rt_hc_expected(int side)
{
	return side == TCP_RT_HC_CLIENT ? TCP_RT_HC_REQ : TCP_RT_HC_RESP;
}

/*
 * Whether hook @i saw its part of the exchange on @side; if not, why, in
 * @why.  The data-arrival hooks that share arrivals are judged together,
 * by the caller.
 */
static bool tcp_rt_hc_hook_ok(const struct tcp_rt_hook_desc *h,
			      unsigned int i, int side, char *why, size_t len)
{
	const char *end = tcp_rt_hc_side_name[side];
	u32 sent = atomic_read(&tcp_rt_hc.sent[side]);

	switch (h->kind) {
	case TCP_RT_HOOK_KIND_XMIT:
		if (sent == tcp_rt_hc_expected(side))
			return true;
		snprintf(why, len, "%s saw %u bytes leave the %s, not %u",
			 h->func, sent, end, tcp_rt_hc_expected(side));
		return false;
	case TCP_RT_HOOK_KIND_ACK:
	case TCP_RT_HOOK_KIND_RCV_ALL:
		if (tcp_rt_hc_calls(i, side))
			return true;
		snprintf(why, len, "%s saw no %s on the %s", h->func,
			 h->kind == TCP_RT_HOOK_KIND_ACK ? "ACK of data" :
							   "data arrive",
			 end);
		return false;
	case TCP_RT_HOOK_KIND_RCV:
		break;
	}
	return true;
}

/*
 * The hooks that share arrivals between them (an ACK sent at once or
 * delayed): one of them must have seen the data arrive at each end -
 * unless the kernel has a hook that sees every arrival, checked alone:
 * where an ACK is deferred to tcp_release_cb(), neither of the two sees
 * that arrival.
 */
static bool tcp_rt_hc_arrivals_ok(const struct tcp_rt_hook_desc *hooks,
				  unsigned int n, char *why, size_t len)
{
	unsigned int i, seen[TCP_RT_HC_SIDES] = { 0, 0 };
	const char *first = NULL;
	int side;

	for (i = 0; i < n; i++) {
		if (hooks[i].kind == TCP_RT_HOOK_KIND_RCV_ALL)
			return true;
		if (hooks[i].kind != TCP_RT_HOOK_KIND_RCV)
			continue;
		first = first ?: hooks[i].func;
		for (side = 0; side < TCP_RT_HC_SIDES; side++)
			seen[side] += tcp_rt_hc_calls(i, side);
	}
	for (side = 0; first && side < TCP_RT_HC_SIDES; side++)
		if (!seen[side]) {
			snprintf(why, len, "no arrival hook (%s, ...) saw data arrive on the %s",
				 first, tcp_rt_hc_side_name[side]);
			return false;
		}
	return true;
}

/* Whether the state tracepoint saw both ends reach @state. */
static bool tcp_rt_hc_states_ok(atomic_t *count, const char *state,
				char *why, size_t len)
{
	int side;

	for (side = 0; side < TCP_RT_HC_SIDES; side++)
		if (!atomic_read(&count[side])) {
			snprintf(why, len, "sock:inet_sock_set_state saw no %s %s",
				 tcp_rt_hc_side_name[side], state);
			return false;
		}
	return true;
}

/*
 * What a check expects of the exchange: the load-time check, of every
 * hook in @hooks and of the state tracepoint; the breakdown's, a read
 * and a write on each end, seen by the tracepoint tcp_rcv_space_adjust
 * and @write_func; the series', a segment arriving on each end seen by
 * each of the TCP_RT_HOOKS_RCV functions in @rcv_funcs.
 */
struct tcp_rt_hc_want {
	const struct tcp_rt_hook_desc *hooks;
	unsigned int n;
	const char *write_func;
	const char *const *rcv_funcs;
};

/* Whether the breakdown's hooks saw each end read and write. */
static bool tcp_rt_hc_app_ok(const char *write_func, char *why, size_t len)
{
	int side;

	for (side = 0; side < TCP_RT_HC_SIDES; side++) {
		const char *end = tcp_rt_hc_side_name[side];

		if (!atomic_read(&tcp_rt_hc.writes[side])) {
			snprintf(why, len, "%s saw no write on the %s",
				 write_func, end);
			return false;
		}
		if (!atomic_read(&tcp_rt_hc.reads[side])) {
			snprintf(why, len, "tcp:tcp_rcv_space_adjust saw no read on the %s",
				 end);
			return false;
		}
	}
	return true;
}

/* Whether each of the series' receive hooks saw a segment on each end. */
static bool tcp_rt_hc_rcv_ok(const char *const *funcs, char *why, size_t len)
{
	unsigned int i;
	int side;

	for (i = 0; i < TCP_RT_HOOKS_RCV; i++)
		for (side = 0; side < TCP_RT_HC_SIDES; side++)
			if (!atomic_read(&tcp_rt_hc.segs[i][side])) {
				snprintf(why, len, "%s saw no segment arrive on the %s",
					 funcs[i], tcp_rt_hc_side_name[side]);
				return false;
			}
	return true;
}

/*
 * The first expectation of the exchange not met, written to @why (empty
 * when all are).  With @closed false, the close is not looked at yet.
 */
static void tcp_rt_hc_missing(const struct tcp_rt_hc_want *w, bool closed,
			      char *why, size_t len)
{
	unsigned int i;
	int side;

	*why = '\0';
	if (w->write_func) {
		tcp_rt_hc_app_ok(w->write_func, why, len);
		return;
	}
	if (w->rcv_funcs) {
		tcp_rt_hc_rcv_ok(w->rcv_funcs, why, len);
		return;
	}
	if (!tcp_rt_hc_states_ok(tcp_rt_hc.estab, "established", why, len))
		return;
	for (i = 0; i < w->n; i++)
		for (side = 0; side < TCP_RT_HC_SIDES; side++)
			if (!tcp_rt_hc_hook_ok(&w->hooks[i], i, side, why,
					       len))
				return;
	if (!tcp_rt_hc_arrivals_ok(w->hooks, w->n, why, len))
		return;
	if (closed)
		tcp_rt_hc_states_ok(tcp_rt_hc.closed, "close", why, len);
}

/* Wait, bounded, until every expectation is met; the last miss in @why. */
static void tcp_rt_hc_await(const struct tcp_rt_hc_want *w, bool closed,
			    char *why, size_t len)
{
	ktime_t end = ktime_add_ms(ktime_get(), TCP_RT_HC_TIMEOUT_MS);

	for (;;) {
		tcp_rt_hc_missing(w, closed, why, len);
		if (!*why || ktime_after(ktime_get(), end))
			return;
		usleep_range(500, 1000);
	}
}

/* A TCP socket in init_net bound to 127.0.0.1 and a port the kernel picks. */
static int tcp_rt_hc_socket(struct socket **sock, __be16 *port)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	long timeo = msecs_to_jiffies(TCP_RT_HC_TIMEOUT_MS);
	int err;

	err = sock_create_kern(&init_net, AF_INET, SOCK_STREAM, IPPROTO_TCP,
			       sock);
	if (err)
		return err;
	/* a blocking call of the check gives up in time */
	WRITE_ONCE((*sock)->sk->sk_rcvtimeo, timeo);
	WRITE_ONCE((*sock)->sk->sk_sndtimeo, timeo);
	err = kernel_bind(*sock, (struct tcp_rt_sockaddr *)&sin, sizeof(sin));
	if (!err)
		err = kernel_getsockname(*sock, (struct sockaddr *)&sin);
	if (err < 0) {
		sock_release(*sock);
		*sock = NULL;
		return err;
	}
	*port = sin.sin_port;
	return 0;
}

/* Send or receive exactly @len bytes of @buf. */
static int tcp_rt_hc_io(struct socket *sock, char *buf, size_t len, bool out)
{
	struct msghdr msg = { .msg_flags = out ? 0 : MSG_WAITALL };
	struct kvec vec = { .iov_base = buf, .iov_len = len };
	int n;

	n = out ? kernel_sendmsg(sock, &msg, &vec, 1, len) :
		  kernel_recvmsg(sock, &msg, &vec, 1, len, MSG_WAITALL);
	if (n < 0)
		return n;
	return n == len ? 0 : -EIO;
}

/* Connect, accept, one request and its response. */
static int tcp_rt_hc_exchange(struct socket *lsock, struct socket *csock,
			      struct socket **ssock, char *buf)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
		.sin_port = tcp_rt_hc.lport,
	};
	int err;

	err = kernel_listen(lsock, 1);
	if (err)
		return err;
	err = kernel_connect(csock, (struct tcp_rt_sockaddr *)&sin,
			     sizeof(sin), 0);
	if (err)
		return err;
	err = kernel_accept(lsock, ssock, 0);
	if (err)
		return err;
	/* the response's ACK at once, not after the delayed-ACK timer */
	tcp_sock_set_quickack(csock->sk, 1);
	err = tcp_rt_hc_io(csock, buf, TCP_RT_HC_REQ, true);
	if (!err)
		err = tcp_rt_hc_io(*ssock, buf, TCP_RT_HC_REQ, false);
	if (!err)
		err = tcp_rt_hc_io(*ssock, buf, TCP_RT_HC_RESP, true);
	if (!err)
		err = tcp_rt_hc_io(csock, buf, TCP_RT_HC_RESP, false);
	return err;
}

static void tcp_rt_hc_reset(void)
{
	unsigned int i;
	int side;

	for (side = 0; side < TCP_RT_HC_SIDES; side++) {
		atomic_set(&tcp_rt_hc.estab[side], 0);
		atomic_set(&tcp_rt_hc.closed[side], 0);
		atomic_set(&tcp_rt_hc.sent[side], 0);
		atomic_set(&tcp_rt_hc.reads[side], 0);
		atomic_set(&tcp_rt_hc.writes[side], 0);
		for (i = 0; i < TCP_RT_HOOKS_RCV; i++)
			atomic_set(&tcp_rt_hc.segs[i][side], 0);
		for (i = 0; i < TCP_RT_HOOKS_MAX; i++)
			atomic_set(&tcp_rt_hc.calls[i][side], 0);
	}
}

/*
 * Before the hooks are attached: from their first event on, every event
 * of the check's connection goes to the check, and, unless
 * @engine_live, every other event goes nowhere.  One check at a time:
 * held until tcp_rt_hookcheck_end().
 */
void tcp_rt_hookcheck_begin(bool engine_live)
{
	mutex_lock(&tcp_rt_hc_mutex);
	tcp_rt_hc_reset();
	WRITE_ONCE(tcp_rt_hc.engine_live, engine_live);
	if (tcp_rt_hook_check)
		static_branch_enable(&tcp_rt_hookcheck_on);
}

/* The hooks' events go to the engine (again, or from the start). */
void tcp_rt_hookcheck_end(void)
{
	static_branch_disable(&tcp_rt_hookcheck_on);
	WRITE_ONCE(tcp_rt_hc.cport, 0);
	WRITE_ONCE(tcp_rt_hc.lport, 0);
	mutex_unlock(&tcp_rt_hc_mutex);
}

/*
 * The exchange, then the wait for what @w expects of it.  0 when all was
 * seen; -EOPNOTSUPP with the first miss in @why; else the socket error,
 * said here.
 */
static int tcp_rt_hc_exchange_wait(const struct tcp_rt_hc_want *w,
				   char *why, size_t len)
{
	struct socket *lsock = NULL, *csock = NULL, *ssock = NULL;
	__be16 lport, cport;
	char *buf;
	int err;

	*why = '\0';
	buf = kzalloc(TCP_RT_HC_RESP, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;

	err = tcp_rt_hc_socket(&lsock, &lport);
	if (!err)
		err = tcp_rt_hc_socket(&csock, &cport);
	if (err) {
		pr_err("hook check: no loopback socket (%d); hook_check=0 skips the check\n",
		       err);
		goto out;
	}
	WRITE_ONCE(tcp_rt_hc.lport, lport);
	WRITE_ONCE(tcp_rt_hc.cport, cport);

	err = tcp_rt_hc_exchange(lsock, csock, &ssock, buf);
	if (err) {
		pr_err("hook check: the loopback exchange failed (%d); is lo up? hook_check=0 skips the check\n",
		       err);
	} else {
		tcp_rt_hc_await(w, false, why, len);
		/* an abortive close: both ends go to CLOSE at once */
		sock_no_linger(csock->sk);
	}
	sock_release(csock);
	csock = NULL;
	/* a miss before the close is final: no second wait for it */
	if (!err && !*why)
		tcp_rt_hc_await(w, true, why, len);
	if (!err && *why)
		err = -EOPNOTSUPP;
out:
	if (ssock)
		sock_release(ssock);
	if (lsock)
		sock_release(lsock);
	kfree(buf);
	return err;
}

struct tcp_rt_hc_job {
	struct work_struct work;
	const struct tcp_rt_hc_want *want;
	char *why;
	size_t len;
	int err;
};

static void tcp_rt_hc_job_fn(struct work_struct *work)
{
	struct tcp_rt_hc_job *job = container_of(work, struct tcp_rt_hc_job,
						 work);

	job->err = tcp_rt_hc_exchange_wait(job->want, job->why, job->len);
}

/*
 * The exchange runs in a worker, not in the caller: a signal pending on
 * the caller (a shell's SIGCHLD as it writes log_ext) would interrupt its
 * blocking connect, accept and receive (-ERESTARTSYS, seen on 7.x).
 */
static int tcp_rt_hc_run(const struct tcp_rt_hc_want *w, char *why,
			 size_t len)
{
	struct tcp_rt_hc_job job = { .want = w, .why = why, .len = len };

	INIT_WORK_ONSTACK(&job.work, tcp_rt_hc_job_fn);
	queue_work(system_unbound_wq, &job.work);
	flush_work(&job.work);
	destroy_work_on_stack(&job.work);
	return job.err;
}

/*
 * The load-time check, once the hooks are attached (@hooks: what each of
 * them is).  0 when every hook saw its part, else the load's error, said
 * in one line.  The caller ends the check: on failure, only once the
 * hooks are detached, so that no connection is tracked in between.
 */
int tcp_rt_hookcheck_run(const struct tcp_rt_hook_desc *hooks, unsigned int n)
{
	const struct tcp_rt_hc_want want = { .hooks = hooks, .n = n };
	ktime_t start = ktime_get();
	char why[160];
	int err;

	if (!tcp_rt_hook_check) {
		pr_info("hook check skipped (hook_check=0)\n");
		return 0;
	}
	err = tcp_rt_hc_run(&want, why, sizeof(why));
	if (*why)
		pr_err("hook check: %s; this kernel cannot be timed (hook_check=0 skips the check)\n",
		       why);
	tcp_rt_hc_us = ktime_us_delta(ktime_get(), start);
	return err;
}

/*
 * A check of its own for hooks attached after the load (the engine live),
 * begun and ended here: 0 when @w was met, else the error, the miss said
 * in one line, "@param: hook check: <miss>; @lost (@needhook_check=0
 * skips the check)".  hook_check=0 skips it as it skips the load's.
 */
static int tcp_rt_hc_run_attached(const struct tcp_rt_hc_want *w,
				  const char *param, const char *lost,
				  const char *need)
{
	char why[160];
	int err;

	if (!tcp_rt_hook_check)
		return 0;
	tcp_rt_hookcheck_begin(true);
	err = tcp_rt_hc_run(w, why, sizeof(why));
	tcp_rt_hookcheck_end();
	if (*why)
		pr_err("%s: hook check: %s; %s (%shook_check=0 skips the check)\n",
		       param, why, lost, need);
	return err;
}

/*
 * The breakdown's hooks, just attached (@write_func: where the write hook
 * sits): 0 when they saw each end of the exchange read and write, else
 * log_ext's error.
 */
int tcp_rt_hookcheck_run_bd(const char *write_func)
{
	const struct tcp_rt_hc_want want = { .write_func = write_func };

	return tcp_rt_hc_run_attached(&want, "log_ext",
				      "the time breakdown cannot be had on this kernel",
				      "");
}

/*
 * The series' receive hooks, just attached (@funcs: where each sits): 0
 * when each saw a segment arrive on each end of the exchange, else
 * series_run's error.
 */
int tcp_rt_hookcheck_run_rcv(const char *const *funcs)
{
	const struct tcp_rt_hc_want want = { .rcv_funcs = funcs };

	return tcp_rt_hc_run_attached(&want, "series_run",
				      "received segments cannot be counted on this kernel",
				      "series_host, series_ext's ce_bytes, ce_segs, ece, dup_bytes, dup_segs, flows; ");
}

void tcp_rt_hookcheck_status(struct seq_file *m)
{
	seq_printf(m, "hook_check %d\n", tcp_rt_hook_check);
	seq_printf(m, "hook_check_us %llu\n", tcp_rt_hc_us);
}
