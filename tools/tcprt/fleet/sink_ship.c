// SPDX-License-Identifier: GPL-2.0
/*
 * tcprt ship: the records of this host, numbered, capped and handed to the
 * local rsyslog, which carries them to the central (docs/fleet.md).
 *
 * Every line read from a log file gets the next sequence number of this
 * run (the epoch), in the order read; then the cap (bucket.h) passes or
 * drops it; those passed are packed, in order and per file, into data
 * messages (frame.h) sent as datagrams to rsyslog's socket.  A message the
 * socket refuses (rsyslog down, or its queue still full after --send-wait)
 * is not retried: its records are counted as refused.  A control message,
 * never capped, carries the counters every --interval and at exit, so the
 * central can tell every missing number's cause.  Nothing here delays a
 * record longer than one poll period plus --send-wait.
 *
 * When the module numbers its records (log_ext's seq), each (load, CPU)
 * log has its own account as well (L1): what was read from the relay,
 * what never came (overwritten, or taken by another reader), what was
 * handed over, dropped or refused.  Every counter lives in the state file
 * (ship_state.h), updated as it moves, so a ship killed at any point
 * leaves an account the next one closes: read and not handed over is then
 * lost with the sender, and counted so.
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
#include "series_line.h"
#include "series_store.h"
#include "ship_state.h"
#include "sign.h"
#include "util.h"

static const char help[] =
"usage: tcprt ship [--key-file FILE | --unsigned [--host-id ID]] [--socket PATH]\n"
"                  [--rate BYTES] [--burst BYTES] [--state FILE]\n"
"                  [--interval SECONDS] [--send-wait SECONDS] [--dir DIR] [--input-format F]\n"
"                  [--series DIR] [--once]\n"
"\n"
"Drain every rt-network-log<cpu> of /sys/kernel/debug/tcp-rt (reading\n"
"consumes them), give every line the next sequence number of this run,\n"
"cap the rate, and hand the records to the local rsyslog, which forwards\n"
"them to the central (RELP; share/tcprt/fleet/tcprt-ship.conf).  Runs\n"
"until SIGINT/SIGTERM (or, with --once, until the files are read to their\n"
"end), then sends a last control message.  Every loss is counted, sent to\n"
"the central in the control messages and told by 'tcprt fleet gaps'.\n"
"\n"
"  -k, --key-file F     the frame key this host signs its messages with\n"
"                       (default /etc/tcprt/tls/frame.key); its host id\n"
"                       is this host's\n"
"  -U, --unsigned       send unsigned messages (a central whose ingest\n"
"                       checks signatures refuses them)\n"
"  -H, --host-id ID     this host's name in the store, 1 to 64 of\n"
"                       [A-Za-z0-9._-]: the frame key's; --unsigned: m- and\n"
"                       a hash keyed by /etc/machine-id, which itself never\n"
"                       leaves the host\n"
"  -S, --socket PATH    rsyslog's socket (default " "/run/tcprt/ship.sock)\n"
"  -R, --rate BYTES     the cap: bytes per second of record lines (with\n"
"                       their newlines), k/M/G suffixes (powers of 1000);\n"
"                       default 10M; 0: no cap.  A record over the cap is\n"
"                       dropped and counted, never delayed\n"
"  -B, --burst BYTES    the bytes the cap lets through at once after a quiet\n"
"                       spell (default: one second of --rate, at least 1M)\n"
"  -i, --interval S     seconds between control messages (default 10)\n"
"  -w, --send-wait S    how long a message waits for room in rsyslog's\n"
"                       socket before its records count as refused\n"
"                       (default 1); after a refusal the next messages\n"
"                       do not wait, until one is taken\n"
"  -s, --state FILE     where the epoch's account is kept as it goes, so\n"
"                       that a ship killed (SIGKILL, OOM) loses nothing\n"
"                       uncounted: the next one closes the dead epoch's\n"
"                       account from it (default /var/lib/tcprt/ship.state;\n"
"                       with --dir, none unless given)\n"
"  -d, --dir DIR        read the rt-network-log* files of DIR instead\n"
"                       (recorded logs; nothing consumed; what is appended\n"
"                       is shipped too unless --once)\n"
INPUT_FORMAT_HELP
"  -m, --series DIR     ship the series runs kept in DIR (tcprt series --every\n"
"                       --store DIR) too, each once, as they appear: their\n"
"                       lines numbered, capped and counted with the records;\n"
"                       where the last run shipped is kept next to --state\n"
"                       (FILE.series; no --state: every run of DIR)\n"
"  -1, --once           read the files to their current end, then stop\n"
"  -N, --unnumbered     ship the module's records though log_ext has no seq\n"
"                       (refused otherwise: what a killed ship had read\n"
"                       would be lost uncounted)\n"
"  -h, --help           this text\n"
"\n"
"With tcp_rt's log_ext listing seq, every record carries its number in its\n"
"CPU's log; ship follows those numbers per log and module load (status's\n"
"load_id) and sends their account too (L1 messages), so that the central\n"
"tells records overwritten in the relay, dropped, refused, lost with a\n"
"killed ship and lost in transport apart, record by record.\n"
"\n"
"At exit it prints the run's counters on stderr.  Exit status 1 when the\n"
"files cannot be read or the last control message could not be sent.\n";

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
	uint64_t load_id;	/* status's, when last read */
	struct ship_slot *last_slot;

	/* the numbered records of the message being filled, of one slot */
	struct ship_slot *mslot;
	uint64_t mnum, mlast;

	struct bucket cap;

	/* the socket */
	const char *path;
	int fd;
	bool down;		/* last attempt failed: said once on stderr */
	uint64_t send_wait_us;

	/* the data message being filled */
	struct frame_hdr hdr;
	char items[FRAME_MAX];
	size_t ilen;

	struct input in;

	/* series runs kept on disk (--series): those of start below next are
	 * shipped; pos, the file that keeps next across restarts, or NULL */
	const char *series_dir;
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

/* One datagram; false when refused (nothing is queued for later). */
static bool sock_send(struct ship *s, const char *msg, size_t len,
		      uint64_t wait_us)
{
	uint64_t deadline = mono_us() + wait_us;
	bool reopened = false;
	int err;

	for (;;) {
		if (s->fd < 0) {
			err = -sock_open(s);
			if (err) {
				say_down(s, "connect", err);
				return false;
			}
		}
		if (send(s->fd, msg, len, MSG_NOSIGNAL) == (ssize_t)len) {
			if (s->down)
				warnx_("ship: rsyslog's socket %s takes messages again",
				       s->path);
			s->down = false;
			return true;
		}
		err = errno;
		if (err == EINTR)
			continue;
		if (err == EAGAIN || err == ENOBUFS) {
			uint64_t now = mono_us();

			if (now >= deadline) {
				say_down(s, "still full after --send-wait", err);
				return false;
			}
			sock_wait(s->fd, deadline - now);
			continue;
		}
		/* rsyslog restarted: a new socket under the same name */
		sock_close(s);
		if (reopened) {
			say_down(s, "send", err);
			return false;
		}
		reopened = true;
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
	 * subtracts those it has from what the dead sender lost.  The
	 * numbers before the counters: a kill between counts the records
	 * nowhere (the central then says lost in transport), never twice.
	 */
	ok = sock_send(s, msg, len, s->down ? 0 : s->send_wait_us);
	s->e->sent_seq = s->hdr.seq + s->hdr.n;
	if (s->mslot)
		ship_slot_sent(s->mslot, s->mlast + 1, s->mnum);
	STATE_ORDER();
	if (ok) {
		s->sent += s->hdr.n;
		s->messages++;
	} else {
		s->e->refused += s->hdr.n;
		if (s->mslot)
			s->mslot->refused += s->mnum;
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
	} else if (!strcmp(key, "load_id")) {
		s->load_id = v;
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
	uint64_t wait = final ? FINAL_SEND_WAIT_US : s->send_wait_us;

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
	close_dead(s);
	input_status(&s->in, status_line, s);
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

/* A log file opened: the load it belongs to, by the status file now. */
static uint64_t file_opened(int cpu, void *arg)
{
	struct ship *s = arg;

	(void)cpu;
	s->load_id = 0;
	input_status(&s->in, status_line, s);
	return s->load_id;
}

/* A chunk read from a log: its numbered records are now read (ship_state.h). */
static void chunk_read(const char *buf, size_t len, int cpu, uint64_t load_id,
		       void *arg)
{
	struct ship *s = arg;
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
	/* the numbers first: a kill between counts it nowhere */
	s->e->sent_seq = seq + 1;
	if (sl)
		ship_slot_sent(sl, rseq + 1, 1);
	STATE_ORDER();
	s->e->cap_dropped++;
	if (sl)
		sl->cap_dropped++;
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
static void ship_line(const char *line, size_t len, int cpu, uint64_t load_id,
		      const struct record *r, void *arg)
{
	struct ship *s = arg;
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

static void ignore_record(const struct record *r, void *arg)
{
	(void)r;
	(void)arg;
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
		if (s->series_unread != r->start + 1)
			warnx_("ship: %s: %s; not shipped yet", path, strerror(errno));
		s->series_unread = r->start + 1;
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

/* The position file: the start of the next run to ship, "<sec>\n". */
static void series_pos_load(struct ship *s)
{
	FILE *f;

	if (!s->series_pos)
		return;
	f = fopen(s->series_pos, "re");
	if (!f)
		return;
	if (fscanf(f, "%" SCNu64, &s->series_next) != 1)
		s->series_next = 0;
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
	ok = f && fprintf(f, "%" PRIu64 "\n", s->series_next) > 0 &&
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
		if (runs[i].start < s->series_next)
			continue;
		if (!ship_run(s, &runs[i]))
			continue;
		s->series_next = runs[i].start + 1;
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

static void machine_id(char host[HOST_ID_MAX + 1])
{
	FILE *f = fopen("/etc/machine-id", "r");
	unsigned char key[16], mac[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	char buf[128] = "";
	bool ok;

	if (!f)
		die(EXIT_RUNTIME, "ship: /etc/machine-id: %s; name this host with --host-id",
		    strerror(errno));
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	/* 32 hex digits (machine-id(5)) */
	ok = strlen(buf) == 32 && unhex(buf, key, sizeof(key));
	explicit_bzero(buf, sizeof(buf));
	if (!ok || !HMAC(EVP_sha256(), key, sizeof(key), host_app_id,
			 sizeof(host_app_id), mac, &len) || len < 16)
		die(EXIT_RUNTIME, "ship: /etc/machine-id is not 32 hex digits; name this host with --host-id");
	explicit_bzero(key, sizeof(key));
	strcpy(host, "m-");
	tohex(host + 2, mac, 16);
	host[2 + 2 * 16] = '\0';
}

/*
 * The frame key (sign.h): its host id is this host's, by default; a
 * --host-id that is not the key's would have every message refused by
 * the central.
 */
static void take_key(struct ship *s, const char *path, const char *host)
{
	char err[512];

	if (!sign_read_key(path ? path : DEFAULT_KEY_FILE, &s->key, err, sizeof(err)))
		die(EXIT_RUNTIME, "ship: %s; a host signs its messages with the key it was enrolled with (make-certs.sh host, docs/fleet.md), or sends them --unsigned, which the central stores only if its ingest runs --unsigned",
		    err);
	if (host && strcmp(host, s->key.host))
		usage_error("ship", "--host-id %s: the frame key is %s's (a message of one host signed with another's key is refused)",
			    host, s->key.host);
	strcpy(s->host, s->key.host);
	s->sign_len = SIGN_PREFIX_LEN;
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

static uint64_t opt_bytes(const char *opt, const char *arg)
{
	uint64_t v;

	if (!parse_bytes(arg, &v) || v > MAX_BYTES_OPT)
		usage_error("ship", "%s: '%s' is not a number of bytes (up to 1000G; k, M, G: powers of 1000)",
			    opt, arg);
	return v;
}

static void report(const struct ship *s)
{
	const struct ship_epoch *e = s->e;
	uint64_t skipped = 0;
	unsigned int i;

	for (i = 0; i < SHIP_STATE_SLOTS; i++)
		skipped += e->slot[i].relay_skipped;
	warnx_("ship: host %s epoch %llu: %llu records numbered, %llu sent in %llu messages, %llu dropped by the cap, %llu refused by rsyslog's socket, %llu malformed (shipped, marked), %llu of the module's numbers never read (the relay overwrote them, or another reader took them)%s",
	       s->host, (unsigned long long)e->epoch,
	       (unsigned long long)e->next_seq, (unsigned long long)s->sent,
	       (unsigned long long)s->messages,
	       (unsigned long long)e->cap_dropped,
	       (unsigned long long)e->refused, (unsigned long long)e->bad,
	       (unsigned long long)skipped,
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

int cmd_ship(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "host-id", required_argument, NULL, 'H' },
		{ "socket", required_argument, NULL, 'S' },
		{ "rate", required_argument, NULL, 'R' },
		{ "burst", required_argument, NULL, 'B' },
		{ "interval", required_argument, NULL, 'i' },
		{ "send-wait", required_argument, NULL, 'w' },
		{ "dir", required_argument, NULL, 'd' },
		{ "input-format", required_argument, NULL, OPT_INPUT_FORMAT },
		{ "once", no_argument, NULL, '1' },
		{ "unnumbered", no_argument, NULL, 'N' },
		{ "key-file", required_argument, NULL, 'k' },
		{ "unsigned", no_argument, NULL, 'U' },
		{ "state", required_argument, NULL, 's' },
		{ "series", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct ship s;
	const char *key_file = NULL;
	bool unsigned_ = false;
	uint64_t rate = DEFAULT_RATE, burst = 0, interval = DEFAULT_INTERVAL_US;
	uint64_t next_ctl;
	const char *dir = NULL, *host = NULL, *state = NULL;
	enum input_format infmt = INPUT_AUTO;
	bool once = false, burst_set = false, unnumbered = false, ok;
	uint64_t dropped;
	unsigned int tick = 0;
	int o, st;

	s.fd = -1;
	s.path = DEFAULT_SOCKET;
	s.send_wait_us = DEFAULT_SEND_WAIT_US;
	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":H:S:R:B:i:w:d:1k:Us:m:Nh", opts, NULL)) != -1) {
		switch (o) {
		case 'H':
			if (!frame_host_ok(optarg))
				usage_error("ship", "--host-id: '%s' is not 1 to 64 of [A-Za-z0-9._-]",
					    optarg);
			host = optarg;
			break;
		case 'S':
			if (!optarg[0] || strlen(optarg) >= sizeof(((struct sockaddr_un *)0)->sun_path))
				usage_error("ship", "--socket: '%s' is not a socket path (1 to 107 bytes)",
					    optarg);
			s.path = optarg;
			break;
		case 'R': rate = opt_bytes("--rate", optarg); break;
		case 'B':
			burst = opt_bytes("--burst", optarg);
			burst_set = true;
			break;
		case 'i': interval = opt_seconds("ship", "--interval", optarg, false); break;
		case 'w': s.send_wait_us = opt_seconds("ship", "--send-wait", optarg, true); break;
		case 'd': dir = optarg; break;
		case OPT_INPUT_FORMAT:
			infmt = opt_input_format("ship", optarg);
			break;
		case '1': once = true; break;
		case 'k': key_file = optarg; break;
		case 'U': unsigned_ = true; break;
		case 's':
			if (!optarg[0])
				usage_error("ship", "--state: an empty path");
			state = optarg;
			break;
		case 'm':
			if (!optarg[0])
				usage_error("ship", "--series: an empty path");
			s.series_dir = optarg;
			break;
		case 'N': unnumbered = true; break;
		case 'h': fputs(help, stdout); return EXIT_OK;
		default: bad_option("ship", o, argv);
		}
	}
	if (optind < argc)
		usage_error("ship", "unexpected argument '%s'", argv[optind]);
	/*
	 * Unnumbered, what a killed ship had read and not handed over is
	 * lost without a count: the module's own numbers are the account
	 * (docs/fleet.md, "By module seq").
	 */
	if (!dir && !unnumbered && input_module_numbered() == 0)
		die(EXIT_USAGE, "ship: tcp_rt's records are not numbered (its log_ext has no seq): what a killed ship had read would be lost uncounted; add seq (echo seq > /sys/module/tcp_rt/parameters/log_ext, with the fields you have, or load it with log_ext=seq), or give --unnumbered");
	if (!burst_set)
		burst = rate > MIN_DEFAULT_BURST ? rate : MIN_DEFAULT_BURST;
	if (rate && burst < FRAME_ITEM_MAX)
		usage_error("ship", "--burst: %llu bytes is less than a record can take (%d)",
			    (unsigned long long)burst, FRAME_ITEM_MAX);

	if (unsigned_ && key_file)
		usage_error("ship", "--unsigned and --key-file: one or the other");
	if (!unsigned_)
		take_key(&s, key_file, host);
	else if (host)
		strcpy(s.host, host);
	else
		machine_id(s.host);
	/* recorded logs (--dir) are not consumed: no state unless asked */
	if (!state && !dir) {
		state = DEFAULT_STATE;
		/*
		 * The package's unit and tmpfiles make the folder; a ship
		 * started by hand on a host without them makes it, root's
		 * alone.  A folder of --state's is the user's to make.
		 */
		if (mkdir(DEFAULT_STATE_DIR, 0700) < 0 && errno != EEXIST)
			die(EXIT_RUNTIME, "ship: state folder %s: %s (--state: a file in a folder only root may write)",
			    DEFAULT_STATE_DIR, strerror(errno));
	}
	s.st = ship_state_open(state, &dropped);
	if (dropped)
		warnx_("ship: the state file held two epochs whose ships died before closing them: the older is left to the central, which shows it as ended");
	s.e = &s.st->cur;
	if (s.series_dir && state) {
		size_t len = strlen(state) + sizeof(".series");

		s.series_pos = xrealloc(NULL, len, 1);
		snprintf(s.series_pos, len, "%s.series", state);
		series_pos_load(&s);
	}
	strcpy(s.e->host, s.host);
	s.e->epoch = new_epoch();
	s.e->start_us = now_us();
	s.e->interval_us = interval;
	memcpy(s.hdr.host, s.host, sizeof(s.hdr.host));
	s.hdr.epoch = s.e->epoch;
	bucket_init(&s.cap, rate, burst, mono_us());

	signals_init();
	st = input_open(&s.in, dir, false, infmt, ignore_record, &s);
	if (st != EXIT_OK) {
		input_close(&s.in);
		ship_state_close(s.st);
		return st;
	}
	s.in.line_fn = ship_line;
	s.in.chunk_fn = chunk_read;
	input_set_open_fn(&s.in, file_opened);
	s.in.by_file = true;	/* no order to keep: fuller messages */
	input_status(&s.in, status_line, &s);
	s.e->ow_start = s.e->ow_now;
	s.e->so_start = s.e->so_now;
	close_dead(&s);

	input_read(&s.in);
	ship_series(&s);
	next_ctl = mono_us() + interval;
	while (!once && !stop_requested) {
		flush_data(&s);
		if (mono_us() >= next_ctl) {
			send_ctl(&s, false);
			next_ctl = mono_us() + interval;
		}
		sleep_us(DEFAULT_POLL_US);
		if (++tick % 5 == 0) {
			input_rescan(&s.in);
			ship_series(&s);
		}
		input_read(&s.in);
	}
	input_finish(&s.in);
	ok = send_ctl(&s, true);
	report(&s);
	input_report(&s.in);
	input_close(&s.in);
	sock_close(&s);
	ship_state_close(s.st);
	free(s.series_pos);
	if (!ok) {
		warnx_("ship: the last control message could not be sent: the central will count this epoch's missing records as lost in transport");
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}
