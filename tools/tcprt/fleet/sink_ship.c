// SPDX-License-Identifier: GPL-2.0
/*
 * The ship sink (sink_ship.h): the records of this host, numbered, capped
 * and handed to the local rsyslog, which carries them to the central
 * (docs/fleet.md).
 *
 * Every line read from a log gets the next sequence number of this run
 * (the epoch), in the order read; then the cap (bucket.h) passes or drops
 * it; those passed are packed, in order and per log, into data messages
 * (frame.h) sent as datagrams to rsyslog's socket.  A message the socket
 * refuses (rsyslog down, or its queue still full after --send-wait) is
 * not retried: its records are counted as refused.  A control message,
 * never capped, carries the counters every --interval and at the stop, so
 * the central can tell every missing number's cause.  Nothing here
 * delays a record longer than one read period plus --send-wait.
 *
 * When the module numbers its records (log_ext's seq), each (load, CPU)
 * log has its own account as well (L1): what was read from the relay,
 * what never came (overwritten, or taken by another reader), what was
 * handed over, dropped or refused.  Every counter lives in the state file
 * (ship_state.h), updated as it moves, so a ship killed at any point
 * leaves an account the next one closes: read and not handed over is then
 * lost with the sender, and counted so.
 *
 * It runs in its reader's thread: line() and chunk() as the logs are
 * read (the reader reads each log to its end in turn: per_log), tick()
 * for what is due (data sent, control messages, stored series runs).  A
 * send waits for room in rsyslog's socket up to --send-wait, the reader
 * and its other sinks with it (docs/agent.md) - unless the agent gave
 * the sink a send queue ([ship] queue): then a data message waits in the
 * queue, not in a send, the reader's poll() asking for room in the
 * socket; one that waited past --send-wait, or that the queue has no
 * room for (the oldest goes), is refused.  The account moves as entries
 * leave the queue, in the order their numbers were given: a cap's drop
 * behind queued messages is queued too, as a mark.  What is queued is
 * read and not sent: a kill counts it lost with the sender, as before.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <zlib.h>

#include "bucket.h"
#include "cmd.h"
#include "frame.h"
#include "input.h"
#include "sink_ship.h"
#include "series_line.h"
#include "series_store.h"
#include "ship_state.h"
#include "sign.h"
#include "util.h"

#define DEFAULT_SOCKET		"/run/tcprt/ship.sock"
#define DEFAULT_KEY_FILE	"/etc/tcprt/tls/frame.key"
#define DEFAULT_STATE_DIR	"/var/lib/tcprt"
#define DEFAULT_STATE		DEFAULT_STATE_DIR "/ship.state"
#define DEFAULT_RATE		10000000ULL
#define MIN_DEFAULT_BURST	1000000ULL
#define MAX_BYTES_OPT		1000000000000ULL	/* 1 TB: bucket.h's range */
#define DEFAULT_INTERVAL_US	(10 * USEC_PER_SEC)
#define DEFAULT_SEND_WAIT_US	USEC_PER_SEC
/* the last control message waits longer: it closes the epoch's account */
#define FINAL_SEND_WAIT_US	(5 * USEC_PER_SEC)
/* RFC 3164 without time and host: rsyslog's imuxsock adds its own */
#define SYSLOG_PREFIX		"<134>tcprt: "
#define EPOCH_MASK		((1ULL << 53) - 1)	/* exact in JSON */
/* stored series runs looked for, log files rescanned (by the reader) */
#define SERIES_LOOK_US		1000000ULL
/* the send queue's entries (messages and marks), at most */
#define QUEUE_ENTRIES		4096
/* the smallest queue: two messages */
#define QUEUE_MIN		(2 * (sizeof(SYSLOG_PREFIX) + FRAME_MAX))

/*
 * An entry of the send queue: a message (@msg) or a mark of records the
 * cap dropped (@msg NULL).  Leaving the queue, it moves the account as
 * the send or the drop did without a queue: the epoch's numbers to
 * @seq_end, its slot's (@slot, numbered ones: @slot_n of them) to @slot_to.
 */
struct ship_qent {
	char *msg;
	size_t len;
	uint64_t t_us;		/* queued at (mono_us()) */
	uint64_t seq_end, n;	/* its records: the numbers before seq_end */
	struct ship_slot *slot;
	uint64_t slot_to, slot_n;
};

struct ship {
	/* identity */
	char host[HOST_ID_MAX + 1];
	struct sign_key key;
	size_t sign_len;	/* SIGN_PREFIX_LEN when signing, else 0 */

	/*
	 * The epoch's account (frame.h's C1 and L1), in the state file
	 * (ship_state.h): e is &st->cur.
	 */
	struct ship_state *st;
	struct ship_epoch *e;
	uint64_t sent, messages, ctl_refused;
	uint64_t backwards;	/* module numbers that went back (ship_chunk) */
	struct ship_slot *last_slot;

	/* the numbered records of the message being filled, of one slot */
	struct ship_slot *mslot;
	uint64_t mnum, mlast;

	struct bucket cap;

	/* the socket */
	char *path;
	int fd;
	bool down;		/* last attempt failed: said once on stderr */
	int full_err;		/* the last send's EAGAIN or ENOBUFS */
	uint64_t send_wait_us;

	/* the send queue: a ring of QUEUE_ENTRIES; qmax 0: none, sends wait */
	struct ship_qent *q;
	size_t qhead, qlen;
	uint64_t qbytes, qmax, qrecords;

	/* the data message being filled */
	struct frame_hdr hdr;
	char items[FRAME_MAX];
	size_t ilen;

	/* the module's status file's folder (NULL: the module's own) */
	char *dir;
	uint64_t interval_us, next_ctl_us, next_series_us;

	/* series runs kept on disk (--series): those of start below next (us)
	 * are shipped; pos, the file that keeps next across restarts, or NULL */
	char *series_dir;
	char *series_pos;
	uint64_t series_next, series_runs, series_lines;
	uint64_t series_unread;	/* 1 + the start of a run not opened, said */
	bool series_said;	/* an unreadable folder, said once */
};

/* ---- the socket ------------------------------------------------------------ */

static void sock_close(struct ship *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

static int sock_open(struct ship *s)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	strncpy(sa.sun_path, s->path, sizeof(sa.sun_path) - 1);
	s->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->fd < 0)
		return -errno;
	if (connect(s->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int err = errno;

		sock_close(s);
		return -err;
	}
	return 0;
}

/* Wait up to @us for room in the peer's queue. */
static void sock_wait(int fd, uint64_t us)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	int ms = (int)((us + 999) / 1000);

	(void)poll(&p, 1, ms);
}

static void say_down(struct ship *s, const char *what, int err)
{
	if (s->down)
		return;
	s->down = true;
	warnx_("ship: rsyslog's socket %s: %s: %s; records are refused and counted until it takes them",
	       s->path, what, strerror(err));
}

enum send_result { SEND_OK, SEND_FULL, SEND_DOWN };

/* One datagram, without waiting: sent, the socket full, or refused. */
static enum send_result sock_try(struct ship *s, const char *msg, size_t len)
{
	bool reopened = false;
	int err;

	for (;;) {
		if (s->fd < 0) {
			err = -sock_open(s);
			if (err) {
				say_down(s, "connect", err);
				return SEND_DOWN;
			}
		}
		if (send(s->fd, msg, len, MSG_NOSIGNAL) == (ssize_t)len) {
			if (s->down)
				warnx_("ship: rsyslog's socket %s takes messages again",
				       s->path);
			s->down = false;
			return SEND_OK;
		}
		err = errno;
		if (err == EINTR)
			continue;
		if (err == EAGAIN || err == ENOBUFS) {
			s->full_err = err;
			return SEND_FULL;
		}
		/* rsyslog restarted: a new socket under the same name */
		sock_close(s);
		if (reopened) {
			say_down(s, "send", err);
			return SEND_DOWN;
		}
		reopened = true;
	}
}

/* One datagram, waiting up to @wait_us for room; false when refused. */
static bool sock_send(struct ship *s, const char *msg, size_t len,
		      uint64_t wait_us)
{
	uint64_t deadline = mono_us() + wait_us, now;

	for (;;) {
		enum send_result r = sock_try(s, msg, len);

		if (r != SEND_FULL)
			return r == SEND_OK;
		now = mono_us();
		if (now >= deadline) {
			say_down(s, "still full after --send-wait", s->full_err);
			return false;
		}
		sock_wait(s->fd, deadline - now);
	}
}

/* ---- the account ------------------------------------------------------------- */

/*
 * A data message of @n records, the numbers before @seq_end, sent (@ok)
 * or refused; @sl's numbered ones (@sn) before @to.  The numbers before
 * the counters: a kill between counts the records nowhere (the central
 * then says lost in transport), never twice.
 */
static void account_msg(struct ship *s, uint64_t seq_end, struct ship_slot *sl,
			uint64_t to, uint64_t sn, uint64_t n, bool ok)
{
	s->e->sent_seq = seq_end;
	if (sl)
		ship_slot_sent(sl, to, sn);
	STATE_ORDER();
	if (ok) {
		s->sent += n;
		s->messages++;
	} else {
		s->e->refused += n;
		if (sl)
			sl->refused += sn;
	}
}

/*
 * @n records dropped by the cap, the last numbered @seq_end - 1 (@sl's
 * numbers: before @to).
 */
static void account_cap(struct ship *s, uint64_t seq_end, struct ship_slot *sl,
			uint64_t to, uint64_t n)
{
	s->e->sent_seq = seq_end;
	if (sl)
		ship_slot_sent(sl, to, n);
	STATE_ORDER();
	s->e->cap_dropped += n;
	if (sl)
		sl->cap_dropped += n;
}

/* ---- the send queue ------------------------------------------------------------ */

/* The head leaves: a message sent (@sent) or refused, a mark applied. */
static void queue_pop(struct ship *s, bool sent)
{
	struct ship_qent *q = &s->q[s->qhead];

	if (q->msg) {
		account_msg(s, q->seq_end, q->slot, q->slot_to, q->slot_n, q->n,
			    sent);
		s->qbytes -= q->len;
		s->qrecords -= q->n;
		free(q->msg);
	} else {
		account_cap(s, q->seq_end, q->slot, q->slot_to, q->n);
	}
	s->qhead = (s->qhead + 1) % QUEUE_ENTRIES;
	s->qlen--;
}

/*
 * Send what the socket takes now, in order.  A message that waited past
 * --send-wait, or finds the socket full once one was refused (as sends
 * without a queue: no more waiting until one is taken), or rsyslog down,
 * is refused.
 */
static void queue_drain(struct ship *s)
{
	while (s->qlen) {
		const struct ship_qent *q = &s->q[s->qhead];
		enum send_result r;

		if (!q->msg) {
			queue_pop(s, false);
			continue;
		}
		r = sock_try(s, q->msg, q->len);
		if (r == SEND_FULL && !s->down &&
		    mono_us() - q->t_us < s->send_wait_us)
			return;		/* poll() says when there is room */
		if (r == SEND_FULL)
			say_down(s, "still full after --send-wait", s->full_err);
		queue_pop(s, r == SEND_OK);
	}
}

/* The tail entry, made room for: the oldest leaves when there is none. */
static struct ship_qent *queue_push(struct ship *s, size_t len)
{
	while (s->qlen == QUEUE_ENTRIES ||
	       (s->qlen && s->qbytes + len > s->qmax))
		queue_pop(s, false);
	s->qlen++;
	return &s->q[(s->qhead + s->qlen - 1) % QUEUE_ENTRIES];
}

/* The message being filled, framed as @msg (@len bytes): queued. */
static void queue_msg(struct ship *s, const char *msg, size_t len)
{
	struct ship_qent *q = queue_push(s, len);

	q->msg = xrealloc(NULL, len, 1);
	memcpy(q->msg, msg, len);
	q->len = len;
	q->t_us = mono_us();
	q->seq_end = s->hdr.seq + s->hdr.n;
	q->n = s->hdr.n;
	q->slot = s->mslot;
	q->slot_to = s->mlast + 1;
	q->slot_n = s->mnum;
	s->qbytes += len;
	s->qrecords += q->n;
	queue_drain(s);
}

/*
 * The record numbered @seq dropped by the cap (@sl's @rseq): behind what
 * is queued, a mark - one with the marks right before it of its slot.
 */
static void queue_cap(struct ship *s, uint64_t seq, struct ship_slot *sl,
		      uint64_t rseq)
{
	struct ship_qent *q = &s->q[(s->qhead + s->qlen - 1) % QUEUE_ENTRIES];

	if (!q->msg && q->slot == sl && q->seq_end == seq) {
		q->seq_end = seq + 1;
		q->n++;
		q->slot_to = rseq + 1;
		q->slot_n++;
		return;
	}
	q = queue_push(s, 0);
	*q = (struct ship_qent){
		.seq_end = seq + 1, .n = 1, .slot = sl, .slot_to = rseq + 1,
		.slot_n = 1,
	};
}

/* At the stop: each queued message waits for room up to --send-wait. */
static void queue_flush(struct ship *s)
{
	while (s->qlen) {
		const struct ship_qent *q;
		uint64_t end, now;

		queue_drain(s);
		if (!s->qlen)
			return;
		q = &s->q[s->qhead];
		end = q->t_us + s->send_wait_us;
		now = mono_us();
		if (s->fd >= 0 && now < end)
			sock_wait(s->fd, end - now);
	}
}

/* ---- messages ------------------------------------------------------------- */

/* The message at @msg + @p + s->sign_len, @len bytes: signed in place. */
static size_t sign_msg(const struct ship *s, char *msg, size_t p, size_t len)
{
	if (s->sign_len)
		sign_prefix(msg + p, s->key.key, msg + p + s->sign_len, len);
	return p + s->sign_len + len;
}

static void flush_data(struct ship *s)
{
	char msg[sizeof(SYSLOG_PREFIX) + FRAME_MAX];
	size_t p = sizeof(SYSLOG_PREFIX) - 1, h, len;
	bool ok;

	if (!s->hdr.n)
		return;
	memcpy(msg, SYSLOG_PREFIX, p);
	h = frame_data_hdr(msg + p + s->sign_len, FRAME_MAX - s->sign_len, &s->hdr);
	memcpy(msg + p + s->sign_len + h, s->items, s->ilen);
	len = sign_msg(s, msg, p, h + s->ilen);
	/*
	 * Once a message was refused, the next ones do not wait: ship keeps
	 * draining the relay (whose overwrites count sub-buffers, not
	 * records) and counts each refused record, until rsyslog takes one.
	 *
	 * The state moves after the send: a kill between the two leaves
	 * records sent but inside [sent, read) of the state, and the central
	 * subtracts those it has from what the dead sender lost.
	 */
	if (s->qmax) {
		queue_msg(s, msg, len);
	} else {
		ok = sock_send(s, msg, len, s->down ? 0 : s->send_wait_us);
		account_msg(s, s->hdr.seq + s->hdr.n, s->mslot, s->mlast + 1,
			    s->mnum, s->hdr.n, ok);
	}
	s->hdr.n = 0;
	s->ilen = 0;
	s->mslot = NULL;
	s->mnum = 0;
}

static void status_line(const char *key, uint64_t v, void *arg)
{
	struct ship *s = arg;

	if (!strcmp(key, "log_subbufs_overwritten")) {
		s->e->ow_now = v;
		s->e->module_known = 1;
	} else if (!strcmp(key, "records_sampled_out")) {
		s->e->so_now = v;
	}
}

/*
 * A control message (C1 or L1) of @len bytes at @msg + prefix: signed,
 * sent.  An L1 does not wait once a message was refused (as data
 * messages): a host of many logs would otherwise stall ship for their
 * number of --send-wait while its relay fills; the refused ones go again
 * next time.  A C1 waits as it always did (a final one longer).
 */
static bool send_signed(struct ship *s, char *msg, size_t len, bool final,
			bool l1)
{
	size_t p = sizeof(SYSLOG_PREFIX) - 1;
	/* with a queue, only the last control message may hold the reader */
	uint64_t wait = final ? FINAL_SEND_WAIT_US :
			s->qmax ? 0 : s->send_wait_us;

	memcpy(msg, SYSLOG_PREFIX, p);
	len = sign_msg(s, msg, p, len);
	return sock_send(s, msg, len, l1 && s->down ? 0 : wait);
}

/* The sum that tells whether a slot moved since its last L1. */
static uint64_t slot_sum(const struct ship_slot *sl)
{
	return sl->first + sl->read_next + sl->sent_next + sl->relay_skipped +
	       sl->cap_dropped + sl->refused + sl->unsent_skipped + 1;
}

/*
 * The L1 of every slot of @e that moved since its last (every one when
 * @final): false if one was refused (it goes again next time).
 */
static bool send_slots(struct ship *s, struct ship_epoch *e, uint64_t ctl_seq,
		       unsigned int final)
{
	char msg[sizeof(SYSLOG_PREFIX) + SIGN_PREFIX_LEN + 512];
	size_t off = sizeof(SYSLOG_PREFIX) - 1 + s->sign_len, len;
	struct frame_cpu c = { .epoch = e->epoch, .ctl_seq = ctl_seq };
	bool ok = true;
	unsigned int i;

	memcpy(c.host, e->host, sizeof(c.host));
	for (i = 0; i < SHIP_STATE_SLOTS; i++) {
		struct ship_slot *sl = &e->slot[i];

		if (sl->used != 2 || (!final && sl->reported == slot_sum(sl)))
			continue;
		c.load_id = sl->load_id;
		c.cpu = sl->cpu;
		c.v[CPU_FIRST] = sl->first;
		c.v[CPU_READ_NEXT] = sl->read_next;
		c.v[CPU_SENT_NEXT] = sl->sent_next;
		c.v[CPU_RELAY_SKIPPED] = sl->relay_skipped;
		c.v[CPU_CAP_DROPPED] = sl->cap_dropped;
		c.v[CPU_REFUSED] = sl->refused;
		c.v[CPU_FINAL] = final;
		c.v[CPU_UNSENT_SKIPPED] = sl->unsent_skipped;
		len = frame_cpu(msg + off, sizeof(msg) - off, &c);
		if (send_signed(s, msg, len, final, true))
			sl->reported = slot_sum(sl);
		else
			ok = false;
	}
	return ok;
}

/*
 * The latest a dead epoch @d can have lived: before this ship started,
 * for it took the state file only once the dead one's lock was gone.  Its
 * closing account says that, not this ship's clock: else the two epochs'
 * spans would overlap, and fleet gaps would tell them as two ships at
 * once, or cloned machines.
 */
static uint64_t dead_end_us(const struct ship *s, const struct ship_epoch *d)
{
	uint64_t end = s->e->start_us ? s->e->start_us - 1 : now_us();

	return end > d->start_us ? end : d->start_us;
}

/* @e's C1, and its slots' L1s, with @final (frame.h: 0, 1 or 2). */
static bool send_account(struct ship *s, struct ship_epoch *e,
			 unsigned int final)
{
	char msg[sizeof(SYSLOG_PREFIX) + SIGN_PREFIX_LEN + 512];
	size_t off = sizeof(SYSLOG_PREFIX) - 1 + s->sign_len, len;
	struct frame_ctl c = { .epoch = e->epoch, .ctl_seq = e->ctl_seq++ };
	bool ok;

	memcpy(c.host, e->host, sizeof(c.host));
	ok = send_slots(s, e, c.ctl_seq, final);
	c.v[CTL_START_US] = e->start_us;
	c.v[CTL_NOW_US] = final == FINAL_CLOSED ? dead_end_us(s, e) : now_us();
	c.v[CTL_NEXT_SEQ] = e->next_seq;
	c.v[CTL_CAP_DROPPED] = e->cap_dropped;
	c.v[CTL_REFUSED] = e->refused;
	c.v[CTL_BAD] = e->bad;
	c.v[CTL_MODULE_KNOWN] = e->module_known;
	c.v[CTL_OVERWRITTEN_START] = e->ow_start;
	c.v[CTL_OVERWRITTEN] = e->ow_now;
	c.v[CTL_SAMPLED_START] = e->so_start;
	c.v[CTL_SAMPLED] = e->so_now;
	c.v[CTL_FINAL] = final;
	c.v[CTL_SENT_SEQ] = e->sent_seq;
	c.v[CTL_INTERVAL_US] = e->interval_us;
	len = frame_ctl(msg + off, sizeof(msg) - off, &c);
	return send_signed(s, msg, len, final, false) && ok;
}

/*
 * The account of an epoch whose ship died (the state file's dead one),
 * closed for it: its counters as the kill left them, final 2.  Tried at
 * start and before each control message until it goes.
 */
static void close_dead(struct ship *s)
{
	struct ship_epoch *d = &s->st->dead;

	if (!d->epoch || d->closed)
		return;
	if (strcmp(d->host, s->host)) {
		warnx_("ship: the state file holds epoch %llu of host %s, not this host (%s): not closed; the central shows it as ended",
		       (unsigned long long)d->epoch, d->host, s->host);
		d->closed = 1;
		return;
	}
	if (send_account(s, d, FINAL_CLOSED)) {
		d->closed = 1;
		warnx_("ship: closed the account of epoch %llu, whose ship stopped without closing it: %llu records read and not handed to rsyslog, counted as lost with it",
		       (unsigned long long)d->epoch,
		       (unsigned long long)(d->next_seq - d->sent_seq));
	}
}

/* The control message, after the data read so far. */
static bool send_ctl(struct ship *s, bool final)
{
	bool ok;

	flush_data(s);
	if (final)
		queue_flush(s);
	close_dead(s);
	status_read(s->dir, status_line, s);
	ok = send_account(s, s->e, final);
	if (!ok)
		s->ctl_refused++;
	if (ok && final)
		s->e->closed = 1;
	ship_state_sync(s->st);
	return ok;
}

/*
 * The slot of (@load_id, @cpu): the last one's, most often.  None for
 * load 0 (not known: no status file, or read before the module made it):
 * those records go as D1, accounted by epoch only.
 */
static struct ship_slot *slot_for(struct ship *s, uint64_t load_id, int cpu)
{
	struct ship_slot *sl = s->last_slot;

	if (!load_id)
		return NULL;
	if (sl && sl->load_id == load_id && sl->cpu == cpu)
		return sl;
	sl = ship_slot_of(s->e, load_id, cpu);
	if (sl)
		s->last_slot = sl;
	return sl;
}

/* A chunk read from a log: its numbered records are now read (ship_state.h). */
static void ship_chunk_read(void *priv, const char *buf, size_t len, int cpu,
			    uint64_t load_id)
{
	struct ship *s = priv;
	struct ship_slot *sl = slot_for(s, load_id, cpu);

	if (sl)
		ship_chunk(sl, buf, len, &s->backwards);
	else if (load_id)
		s->e->slots_full++;
}

/*
 * The cap, for the line numbered @seq, @len bytes (@sl and @rseq: its
 * module number's slot and number, or NULL): true when it passes; else
 * it is dropped and counted so.
 */
static bool cap_passes(struct ship *s, uint64_t seq, size_t len,
		       struct ship_slot *sl, uint64_t rseq)
{
	if (bucket_take(&s->cap, len + 1, mono_us()))
		return true;
	flush_data(s);		/* a message holds consecutive numbers */
	if (s->qlen)
		queue_cap(s, seq, sl, rseq);
	else
		account_cap(s, seq + 1, sl, rseq + 1, 1);
	return false;
}

/* An item of @n bytes still fits in the message being filled: its
 * signature, header (at most FRAME_HDR_MAX bytes), items, it and its '|'. */
static bool item_fits(const struct ship *s, size_t n)
{
	return s->sign_len + FRAME_HDR_MAX + s->ilen + n + 1 <= FRAME_MAX;
}

/* @item (@n bytes), numbered @seq, at the end of the message being filled;
 * an empty one takes @cpu, @load_id and @width_us for its header. */
static void add_item(struct ship *s, uint64_t seq, const char *item, size_t n,
		     int cpu, uint64_t load_id, uint64_t width_us)
{
	if (!s->hdr.n) {
		s->hdr.seq = seq;
		s->hdr.cpu = cpu;
		s->hdr.load_id = load_id;
		s->hdr.width_us = width_us;
	}
	memcpy(s->items + s->ilen, item, n);
	s->ilen += n;
	s->items[s->ilen++] = '|';
	s->hdr.n++;
}

/* input -> number -> cap -> message */
static void ship_line(void *priv, const char *line, size_t len, int cpu,
		      uint64_t load_id, const struct record *r)
{
	struct ship *s = priv;
	char item[FRAME_ITEM_MAX];
	uint64_t seq = s->e->next_seq++;
	struct ship_slot *sl = NULL;
	uint64_t rseq = 0;
	size_t n;

	if (!r)
		s->e->bad++;
	if (r && rec_has_ext(r, EXT_SEQ)) {
		sl = slot_for(s, load_id, cpu);
		rseq = r->ext[EXT_SEQ];
		/* a number handed on before, or not read (ship_chunk): not its */
		if (sl && (sl->used != 2 || rseq < sl->line_next ||
			   rseq >= sl->read_next))
			sl = NULL;
		if (sl)
			sl->line_next = rseq + 1;
	}
	if (!cap_passes(s, seq, len, sl, rseq))
		return;
	n = frame_item(item, line, len, r);
	if (s->hdr.n && (s->hdr.width_us || s->hdr.cpu != cpu ||
			 s->hdr.load_id != load_id ||
			 (sl && s->mslot && sl != s->mslot) || !item_fits(s, n)))
		flush_data(s);
	if (sl) {
		s->mslot = sl;
		s->mnum++;
		s->mlast = rseq;
	}
	add_item(s, seq, item, n, cpu, load_id, 0);
}

/* ---- series runs ------------------------------------------------------------ */

/*
 * One line of a stored run: numbered in the same sequence as records,
 * capped by the same bucket, packed into D3 messages of the run's width.
 * A line that does not read as a series line is shipped marked, as a
 * malformed record line is, and counted in bad.
 */
static void ship_series_line(struct ship *s, const char *line, size_t len,
			     uint64_t width_us)
{
	char item[FRAME_ITEM_MAX], copy[PARSE_LINE_MAX + 1];
	uint64_t seq = s->e->next_seq++;
	struct series_row r;
	unsigned int ext = 0;
	bool valid;
	size_t n;

	if (len > PARSE_LINE_MAX)
		len = PARSE_LINE_MAX;
	memcpy(copy, line, len);
	copy[len] = '\0';
	valid = series_line_parse(copy, &r, &ext);
	if (!valid)
		s->e->bad++;
	if (!cap_passes(s, seq, len, NULL, 0))
		return;
	n = frame_series_item(item, line, len, valid);
	if (s->hdr.n && (s->hdr.width_us != width_us || !item_fits(s, n)))
		flush_data(s);
	add_item(s, seq, item, n, -1, 0, width_us);
}

/*
 * Every line of the run @r; false when its file cannot be opened (said
 * once a run: it is tried again at each look, and shipped once it opens).
 */
static bool ship_run(struct ship *s, const struct stored_run *r)
{
	char path[4200], line[PARSE_LINE_MAX + 2];
	uint64_t lines = 0;
	bool ok;
	gzFile gz;

	snprintf(path, sizeof(path), "%s/%s", s->series_dir, r->name);
	gz = gzopen(path, "rbe");
	if (!gz) {
		if (s->series_unread != r->start_us + 1)
			warnx_("ship: %s: %s; not shipped yet", path, strerror(errno));
		s->series_unread = r->start_us + 1;
		return false;
	}
	while (gzgets(gz, line, sizeof(line))) {
		size_t len = strlen(line);

		if (len && line[len - 1] == '\n')
			len--;
		ship_series_line(s, line, len, r->width_us);
		lines++;
	}
	ok = gzeof(gz);
	gzclose(gz);
	flush_data(s);
	s->series_runs++;
	s->series_lines += lines;
	if (!ok)
		warnx_("ship: %s: damaged after line %llu; what was read is shipped",
		       path, (unsigned long long)lines);
	return true;
}

/*
 * The position file: the start of the next run to ship, "<sec>.<usec>\n"
 * (a window of the recorder may begin in the second another began in);
 * "<sec>\n", as an older tcprt wrote it, is that second's start.
 */
static void series_pos_load(struct ship *s)
{
	uint64_t sec, usec = 0;
	char dot;
	int n;
	FILE *f;

	if (!s->series_pos)
		return;
	f = fopen(s->series_pos, "re");
	if (!f)
		return;
	n = fscanf(f, "%" SCNu64 "%c%6" SCNu64, &sec, &dot, &usec);
	if (n < 1 || (n == 3 && dot != '.') || sec > UINT64_MAX / USEC_PER_SEC - 1)
		sec = usec = 0;
	s->series_next = sec * USEC_PER_SEC + (n == 3 ? usec : 0);
	fclose(f);
}

static void series_pos_save(struct ship *s)
{
	char tmp[4200];
	bool ok;
	FILE *f;
	int fd;

	if (!s->series_pos)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", s->series_pos);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f && fd >= 0)
		close(fd);
	ok = f && fprintf(f, "%" PRIu64 ".%06" PRIu64 "\n",
			  (uint64_t)(s->series_next / USEC_PER_SEC),
			  (uint64_t)(s->series_next % USEC_PER_SEC)) > 0 &&
	     !fflush(f) && !fdatasync(fileno(f));
	if (f && fclose(f))
		ok = false;
	if (!ok || rename(tmp, s->series_pos))
		warnx_("ship: %s: %s; a restart ships the runs since its last write again",
		       s->series_pos, strerror(errno));
}

/* The runs kept in --series that were not shipped yet, oldest first. */
static void ship_series(struct ship *s)
{
	struct stored_run *runs;
	size_t n, i;

	if (!s->series_dir)
		return;
	if (series_store_list(s->series_dir, &runs, &n) < 0) {
		if (!s->series_said)
			warnx_("ship: --series %s: %s; its runs are shipped once it can be read",
			       s->series_dir, strerror(errno));
		s->series_said = true;
		return;
	}
	s->series_said = false;
	for (i = 0; i < n && !stop_requested; i++) {
		if (runs[i].start_us < s->series_next)
			continue;
		if (!ship_run(s, &runs[i]))
			continue;
		s->series_next = runs[i].start_us + 1;
		series_pos_save(s);
	}
	free(runs);
}


/* ---- setup ------------------------------------------------------------------ */

/*
 * The default host id: not /etc/machine-id itself, which systemd says
 * must not leave the host (machine-id(5)), but a hash keyed by it, as
 * sd_id128_get_machine_app_specific() makes one: HMAC-SHA256 of tcprt's
 * own application id, keyed by the machine id's 16 bytes; "m-" and the
 * first 16 bytes in hex.  Stable across reboots and reinstalls of tcprt,
 * unlinkable to the machine id.  Cloned machines that share a machine id
 * share it: their epochs still differ (each ship draws its own), and
 * fleet gaps says when two epochs of one host id ran at the same time.
 */
static const unsigned char host_app_id[16] = {
	0x7c, 0x1e, 0x52, 0x94, 0x0b, 0xd3, 0x4a, 0x6f,
	0x9e, 0x21, 0x38, 0xc5, 0x5a, 0x77, 0x02, 0xe8,
};

/* 0, or -1 with why in @err. */
static int machine_id(char host[HOST_ID_MAX + 1], char *err, size_t len)
{
	FILE *f = fopen("/etc/machine-id", "r");
	unsigned char key[16], mac[EVP_MAX_MD_SIZE];
	unsigned int mlen = 0;
	char buf[128] = "";
	bool ok;

	if (!f) {
		snprintf(err, len, "/etc/machine-id: %s; name this host with host-id",
			 strerror(errno));
		return -1;
	}
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	/* 32 hex digits (machine-id(5)) */
	ok = strlen(buf) == 32 && unhex(buf, key, sizeof(key));
	explicit_bzero(buf, sizeof(buf));
	if (!ok || !HMAC(EVP_sha256(), key, sizeof(key), host_app_id,
			 sizeof(host_app_id), mac, &mlen) || mlen < 16) {
		explicit_bzero(key, sizeof(key));
		snprintf(err, len, "/etc/machine-id is not 32 hex digits; name this host with host-id");
		return -1;
	}
	explicit_bzero(key, sizeof(key));
	strcpy(host, "m-");
	tohex(host + 2, mac, 16);
	host[2 + 2 * 16] = '\0';
	return 0;
}

/*
 * The frame key (sign.h): its host id is this host's, by default; a
 * host id that is not the key's would have every message refused by the
 * central.  0, or -1 with why in @err (-2: host-id is not the key's).
 */
static int take_key(struct ship *s, const char *path, const char *host,
		    char *err, size_t len)
{
	char why[512];

	if (!sign_read_key(path ? path : DEFAULT_KEY_FILE, &s->key, why, sizeof(why))) {
		snprintf(err, len, "%s; a host signs its messages with the key it was enrolled with (make-certs.sh host, docs/fleet.md), or sends them unsigned, which the central stores only if its ingest runs --unsigned",
			 why);
		return -1;
	}
	if (host && strcmp(host, s->key.host)) {
		snprintf(err, len, "host-id %s: the frame key is %s's (a message of one host signed with another's key is refused)",
			 host, s->key.host);
		return -2;
	}
	strcpy(s->host, s->key.host);
	s->sign_len = SIGN_PREFIX_LEN;
	return 0;
}

static uint64_t new_epoch(void)
{
	uint64_t e = 0;

	while (!e) {
		if (getrandom(&e, sizeof(e), 0) != sizeof(e))
			die(EXIT_RUNTIME, "ship: getrandom: %s", strerror(errno));
		e &= EPOCH_MASK;
	}
	return e;
}

/* The module's numbers @e never read, over its slots (L1's relay_skipped). */
static uint64_t relay_skipped(const struct ship_epoch *e)
{
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < SHIP_STATE_SLOTS; i++)
		n += e->slot[i].relay_skipped;
	return n;
}

static void report(const struct ship *s)
{
	const struct ship_epoch *e = s->e;

	warnx_("ship: host %s epoch %llu: %llu records numbered, %llu sent in %llu messages, %llu dropped by the cap, %llu refused by rsyslog's socket, %llu malformed (shipped, marked), %llu of the module's numbers never read (the relay overwrote them, or another reader took them)%s",
	       s->host, (unsigned long long)e->epoch,
	       (unsigned long long)e->next_seq, (unsigned long long)s->sent,
	       (unsigned long long)s->messages,
	       (unsigned long long)e->cap_dropped,
	       (unsigned long long)e->refused, (unsigned long long)e->bad,
	       (unsigned long long)relay_skipped(e),
	       s->ctl_refused ? "; some control messages were refused" : "");
	if (s->series_dir)
		warnx_("ship: %llu series runs of %s shipped, %llu lines (numbered, capped and counted above with the records)",
		       (unsigned long long)s->series_runs, s->series_dir,
		       (unsigned long long)s->series_lines);
	if (s->backwards || e->slots_full)
		warnx_("ship: %llu module numbers went back on their log (not counted), %llu chunks of numbered records had no slot in the state (more than %d logs and loads in one epoch)",
		       (unsigned long long)s->backwards,
		       (unsigned long long)e->slots_full, SHIP_STATE_SLOTS);
}

/* ---- the settings ------------------------------------------------------------ */

void ship_conf_init(struct ship_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->rate = DEFAULT_RATE;
	c->interval_us = DEFAULT_INTERVAL_US;
	c->send_wait_us = DEFAULT_SEND_WAIT_US;
}

/* B bytes, up to 1000G: 0, or -1 with why. */
static int set_bytes(uint64_t *to, const char *v, char *err, size_t len)
{
	if (!parse_bytes(v, to) || *to > MAX_BYTES_OPT) {
		snprintf(err, len, "'%s' is not a number of bytes (up to 1000G; k, M, G: powers of 1000)",
			 v);
		return -1;
	}
	return 0;
}

/* A path: not empty. */
static int set_path(char **to, const char *v, char *err, size_t len)
{
	if (!v[0]) {
		snprintf(err, len, "an empty path");
		return -1;
	}
	set_str(to, v);
	return 0;
}

int ship_set(struct ship_conf *c, const char *name, const char *v, char *err,
	     size_t len)
{
	bool flag = !strcmp(name, "unsigned") || !strcmp(name, "unnumbered");

	if (!v && !flag) {
		snprintf(err, len, "needs a value");
		return -1;
	}
	if (!strcmp(name, "unsigned"))
		return set_flag(&c->unsigned_, v, err, len);
	if (!strcmp(name, "unnumbered"))
		return set_flag(&c->unnumbered, v, err, len);
	if (!strcmp(name, "host-id")) {
		if (!frame_host_ok(v)) {
			snprintf(err, len, "'%s' is not 1 to 64 of [A-Za-z0-9._-]", v);
			return -1;
		}
		set_str(&c->host_id, v);
		return 0;
	}
	if (!strcmp(name, "socket")) {
		if (!v[0] || strlen(v) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
			snprintf(err, len, "'%s' is not a socket path (1 to 107 bytes)", v);
			return -1;
		}
		set_str(&c->socket, v);
		return 0;
	}
	if (!strcmp(name, "rate"))
		return set_bytes(&c->rate, v, err, len);
	if (!strcmp(name, "burst")) {
		c->burst_set = true;
		return set_bytes(&c->burst, v, err, len);
	}
	if (!strcmp(name, "interval"))
		return set_seconds(&c->interval_us, v, false, err, len);
	if (!strcmp(name, "send-wait"))
		return set_seconds(&c->send_wait_us, v, true, err, len);
	if (!strcmp(name, "key-file"))
		return set_path(&c->key_file, v, err, len);
	if (!strcmp(name, "state")) {
		c->state_set = true;
		return set_path(&c->state, v, err, len);
	}
	if (!strcmp(name, "series"))
		return set_path(&c->series, v, err, len);
	if (!strcmp(name, "queue"))
		return set_bytes(&c->queue, v, err, len);
	return 1;
}

int ship_check(struct ship_conf *c, char *err, size_t len)
{
	/*
	 * Unnumbered, what a killed ship had read and not handed over is
	 * lost without a count: the module's own numbers are the account
	 * (docs/fleet.md, "By module seq").
	 */
	if (!c->dir && !c->unnumbered && input_module_numbered() == 0) {
		snprintf(err, len, "tcp_rt's records are not numbered (its log_ext has no seq): what a killed ship had read would be lost uncounted; add seq (echo seq > /sys/module/tcp_rt/parameters/log_ext, with the fields you have, or load it with log_ext=seq), or give unnumbered");
		return -1;
	}
	if (!c->burst_set)
		c->burst = c->rate > MIN_DEFAULT_BURST ? c->rate : MIN_DEFAULT_BURST;
	if (c->rate && c->burst < FRAME_ITEM_MAX) {
		snprintf(err, len, "burst: %llu bytes is less than a record can take (%d)",
			 (unsigned long long)c->burst, FRAME_ITEM_MAX);
		return -1;
	}
	if (c->queue && c->queue < QUEUE_MIN) {
		snprintf(err, len, "queue: %llu bytes is less than two messages take (%zu); 0: no queue",
			 (unsigned long long)c->queue, QUEUE_MIN);
		return -1;
	}
	if (c->unsigned_ && c->key_file) {
		snprintf(err, len, "unsigned and key-file: one or the other");
		return -1;
	}
	/* recorded logs are not consumed: no state unless asked */
	if (!c->state_set && !c->dir)
		set_str(&c->state, DEFAULT_STATE);
	return 0;
}

void ship_conf_free(struct ship_conf *c)
{
	free(c->key_file);
	free(c->host_id);
	free(c->socket);
	free(c->state);
	free(c->series);
	memset(c, 0, sizeof(*c));
}

/* ---- the sink ---------------------------------------------------------------- */

/* What is due: the message filled, a control message, stored runs. */
static void ship_tick(void *priv, uint64_t now, const struct sink_input *in)
{
	struct ship *s = priv;

	(void)in;
	flush_data(s);
	queue_drain(s);		/* the socket down: no poll() says so */
	if (now >= s->next_ctl_us) {
		send_ctl(s, false);
		s->next_ctl_us = mono_us() + s->interval_us;
	}
	if (now >= s->next_series_us) {
		ship_series(s);
		s->next_series_us = mono_us() + SERIES_LOOK_US;
	}
}

static uint64_t ship_next_tick(const void *priv)
{
	const struct ship *s = priv;
	uint64_t t = s->next_ctl_us < s->next_series_us ? s->next_ctl_us :
		     s->next_series_us;

	/* the queue's head refused once it waited --send-wait */
	if (s->qlen && s->q[s->qhead].t_us + s->send_wait_us < t)
		t = s->q[s->qhead].t_us + s->send_wait_us;
	return t;
}

/* With messages queued: room in rsyslog's socket. */
static unsigned int ship_pollfds(void *priv, struct pollfd *pfd)
{
	const struct ship *s = priv;

	if (!s->qlen || s->fd < 0)
		return 0;
	pfd[0] = (struct pollfd){ .fd = s->fd, .events = POLLOUT };
	return 1;
}

static bool ship_serve(void *priv, const struct pollfd *pfd, unsigned int n)
{
	(void)pfd;
	(void)n;
	queue_drain(priv);
	return true;
}

/* The reader's output: what was read so far goes (the last: stored runs). */
static int ship_output(void *priv, const struct sink_input *in, bool last)
{
	struct ship *s = priv;

	(void)in;
	if (last)
		ship_series(s);
	flush_data(s);
	return 0;
}

static void ship_stats(void *priv, FILE *out)
{
	const struct ship *s = priv;
	const struct ship_epoch *e = s->e;

	sink_stat(out, "ship", "epoch", e->epoch);
	sink_stat(out, "ship", "numbered", e->next_seq);
	sink_stat(out, "ship", "sent", s->sent);
	sink_stat(out, "ship", "messages", s->messages);
	sink_stat(out, "ship", "cap_dropped", e->cap_dropped);
	sink_stat(out, "ship", "refused", e->refused);
	sink_stat(out, "ship", "malformed", e->bad);
	sink_stat(out, "ship", "relay_skipped", relay_skipped(e));
	sink_stat(out, "ship", "control_refused", s->ctl_refused);
	if (s->qmax) {
		sink_stat(out, "ship", "queued", s->qrecords);
		sink_stat(out, "ship", "queued_bytes", s->qbytes);
	}
	if (s->series_dir)
		sink_stat(out, "ship", "series_runs", s->series_runs);
}

static void ship_free(struct ship *s)
{
	while (s->qlen) {
		free(s->q[s->qhead].msg);
		s->qhead = (s->qhead + 1) % QUEUE_ENTRIES;
		s->qlen--;
	}
	free(s->q);
	sock_close(s);
	if (s->st)
		ship_state_close(s->st);
	explicit_bzero(&s->key, sizeof(s->key));
	free(s->path);
	free(s->dir);
	free(s->series_dir);
	free(s->series_pos);
	free(s);
}

/* The epoch's final control message; the report; all freed. */
static bool ship_stop(void *priv)
{
	struct ship *s = priv;
	bool ok = send_ctl(s, true);

	report(s);
	if (!ok)
		warnx_("ship: the last control message could not be sent: the central will count this epoch's missing records as lost in transport");
	ship_free(s);
	return ok;
}

static const struct sink_ops ship_ops = {
	.name = "ship",
	.line = ship_line,
	.chunk = ship_chunk_read,
	.per_log = true,	/* a message holds one log's lines */
	.output = ship_output,
	.tick = ship_tick,
	.next_tick = ship_next_tick,
	.pollfds = ship_pollfds,
	.serve = ship_serve,
	.stats = ship_stats,
	.stop = ship_stop,
};

/* Who this host is: the key's, or host-id, or the machine's. */
static int identity(struct ship *s, const struct ship_conf *c, char *err,
		    size_t len)
{
	if (!c->unsigned_)
		return take_key(s, c->key_file, c->host_id, err, len);
	if (c->host_id) {
		strcpy(s->host, c->host_id);
		return 0;
	}
	return machine_id(s->host, err, len);
}

/* The state file, its folder made when it is the default one. */
static int open_state(struct ship *s, const struct ship_conf *c, char *err,
		      size_t len)
{
	uint64_t dropped;

	/*
	 * The package's unit and tmpfiles make the folder; a ship started
	 * by hand on a host without them makes it, root's alone.  A folder
	 * of another state file is the user's to make.
	 */
	if (c->state && !strcmp(c->state, DEFAULT_STATE) &&
	    mkdir(DEFAULT_STATE_DIR, 0700) < 0 && errno != EEXIST) {
		snprintf(err, len, "state folder %s: %s (state: a file in a folder only root may write)",
			 DEFAULT_STATE_DIR, strerror(errno));
		return -1;
	}
	s->st = ship_state_open(c->state, &dropped, err, len);
	if (!s->st)
		return -1;
	if (dropped)
		warnx_("ship: the state file held two epochs whose ships died before closing them: the older is left to the central, which shows it as ended");
	s->e = &s->st->cur;
	if (c->series && c->state) {
		size_t n = strlen(c->state) + sizeof(".series");

		s->series_pos = xrealloc(NULL, n, 1);
		snprintf(s->series_pos, n, "%s.series", c->state);
		series_pos_load(s);
	}
	return 0;
}

int ship_sink_start(struct sink *sk, const struct ship_conf *c, char *err,
		    size_t len)
{
	struct ship *s = xcalloc(1, sizeof(*s));
	uint64_t now = mono_us();
	int r;

	s->fd = -1;
	s->path = xstrdup(c->socket ? c->socket : DEFAULT_SOCKET);
	s->send_wait_us = c->send_wait_us;
	s->qmax = c->queue;
	if (s->qmax)
		s->q = xcalloc(QUEUE_ENTRIES, sizeof(*s->q));
	s->interval_us = c->interval_us;
	s->dir = c->dir ? xstrdup(c->dir) : NULL;
	s->series_dir = c->series ? xstrdup(c->series) : NULL;
	r = identity(s, c, err, len);
	if (!r)
		r = open_state(s, c, err, len);
	if (r < 0) {
		ship_free(s);
		return r;
	}
	strcpy(s->e->host, s->host);
	s->e->epoch = new_epoch();
	s->e->start_us = now_us();
	s->e->interval_us = c->interval_us;
	memcpy(s->hdr.host, s->host, sizeof(s->hdr.host));
	s->hdr.epoch = s->e->epoch;
	bucket_init(&s->cap, c->rate, c->burst, now);
	status_read(s->dir, status_line, s);
	s->e->ow_start = s->e->ow_now;
	s->e->so_start = s->e->so_now;
	close_dead(s);
	s->next_ctl_us = now + c->interval_us;
	s->next_series_us = now;
	sk->ops = &ship_ops;
	sk->priv = s;
	return 0;
}
