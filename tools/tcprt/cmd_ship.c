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
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bucket.h"
#include "cmd.h"
#include "frame.h"
#include "input.h"
#include "sign.h"
#include "util.h"

static const char help[] =
"usage: tcprt ship [--key-file FILE | --unsigned [--host-id ID]] [--socket PATH]\n"
"                  [--rate BYTES] [--burst BYTES]\n"
"                  [--interval SECONDS] [--send-wait SECONDS] [--dir DIR]\n"
"                  [--once]\n"
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
"  -d, --dir DIR        read the rt-network-log* files of DIR instead\n"
"                       (recorded logs; nothing consumed; what is appended\n"
"                       is shipped too unless --once)\n"
"  -1, --once           read the files to their current end, then stop\n"
"  -h, --help           this text\n"
"\n"
"At exit it prints the run's counters on stderr.  Exit status 1 when the\n"
"files cannot be read or the last control message could not be sent.\n";

#define DEFAULT_SOCKET		"/run/tcprt/ship.sock"
#define DEFAULT_KEY_FILE	"/etc/tcprt/tls/frame.key"
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
	uint64_t epoch;
	uint64_t start_us;

	/* counters of the epoch (frame.h, C1) */
	uint64_t next_seq;
	uint64_t cap_dropped, refused, bad;
	uint64_t sent, messages;
	uint64_t ctl_seq, ctl_refused;
	bool module_known;
	uint64_t ow_start, ow_now, so_start, so_now;

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
	 */
	if (sock_send(s, msg, len, s->down ? 0 : s->send_wait_us)) {
		s->sent += s->hdr.n;
		s->messages++;
	} else {
		s->refused += s->hdr.n;
	}
	s->hdr.n = 0;
	s->ilen = 0;
}

static void status_line(const char *key, uint64_t v, void *arg)
{
	struct ship *s = arg;

	if (!strcmp(key, "log_subbufs_overwritten")) {
		s->ow_now = v;
		s->module_known = true;
	} else if (!strcmp(key, "records_sampled_out")) {
		s->so_now = v;
	}
}

/* The control message, after the data read so far. */
static bool send_ctl(struct ship *s, bool final)
{
	char msg[sizeof(SYSLOG_PREFIX) + SIGN_PREFIX_LEN + 512];
	size_t p = sizeof(SYSLOG_PREFIX) - 1, len;
	struct frame_ctl c = { .epoch = s->epoch, .ctl_seq = s->ctl_seq++ };
	bool ok;

	flush_data(s);
	input_status(&s->in, status_line, s);
	memcpy(c.host, s->host, sizeof(c.host));
	c.v[CTL_START_US] = s->start_us;
	c.v[CTL_NOW_US] = now_us();
	c.v[CTL_NEXT_SEQ] = s->next_seq;
	c.v[CTL_CAP_DROPPED] = s->cap_dropped;
	c.v[CTL_REFUSED] = s->refused;
	c.v[CTL_BAD] = s->bad;
	c.v[CTL_MODULE_KNOWN] = s->module_known;
	c.v[CTL_OVERWRITTEN_START] = s->ow_start;
	c.v[CTL_OVERWRITTEN] = s->ow_now;
	c.v[CTL_SAMPLED_START] = s->so_start;
	c.v[CTL_SAMPLED] = s->so_now;
	c.v[CTL_FINAL] = final;
	memcpy(msg, SYSLOG_PREFIX, p);
	len = frame_ctl(msg + p + s->sign_len, sizeof(msg) - p - s->sign_len, &c);
	len = sign_msg(s, msg, p, len);
	ok = sock_send(s, msg, len, final ? FINAL_SEND_WAIT_US : s->send_wait_us);
	if (!ok)
		s->ctl_refused++;
	return ok;
}

/* input -> number -> cap -> message */
static void ship_line(const char *line, size_t len, int cpu,
		      const struct record *r, void *arg)
{
	struct ship *s = arg;
	char item[FRAME_ITEM_MAX];
	uint64_t seq = s->next_seq++;
	size_t n;

	if (!r)
		s->bad++;
	if (!bucket_take(&s->cap, len + 1, mono_us())) {
		s->cap_dropped++;
		flush_data(s);		/* a message holds consecutive numbers */
		return;
	}
	n = frame_item(item, line, len, r);
	if (s->hdr.n && (s->hdr.cpu != cpu ||
			 /* signature, header (at most 128 bytes), the
			  * item and its '|' */
			 s->sign_len + 128 + s->ilen + n + 1 > FRAME_MAX))
		flush_data(s);
	if (!s->hdr.n) {
		s->hdr.seq = seq;
		s->hdr.cpu = cpu;
	}
	memcpy(s->items + s->ilen, item, n);
	s->ilen += n;
	s->items[s->ilen++] = '|';
	s->hdr.n++;
}

static void ignore_record(const struct record *r, void *arg)
{
	(void)r;
	(void)arg;
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
	warnx_("ship: host %s epoch %llu: %llu records numbered, %llu sent in %llu messages, %llu dropped by the cap, %llu refused by rsyslog's socket, %llu malformed (shipped, marked)%s",
	       s->host, (unsigned long long)s->epoch,
	       (unsigned long long)s->next_seq, (unsigned long long)s->sent,
	       (unsigned long long)s->messages,
	       (unsigned long long)s->cap_dropped,
	       (unsigned long long)s->refused, (unsigned long long)s->bad,
	       s->ctl_refused ? "; some control messages were refused" : "");
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
		{ "once", no_argument, NULL, '1' },
		{ "key-file", required_argument, NULL, 'k' },
		{ "unsigned", no_argument, NULL, 'U' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct ship s;
	const char *key_file = NULL;
	bool unsigned_ = false;
	uint64_t rate = DEFAULT_RATE, burst = 0, interval = DEFAULT_INTERVAL_US;
	uint64_t next_ctl;
	const char *dir = NULL, *host = NULL;
	bool once = false, burst_set = false, ok;
	unsigned int tick = 0;
	int o, st;

	s.fd = -1;
	s.path = DEFAULT_SOCKET;
	s.send_wait_us = DEFAULT_SEND_WAIT_US;
	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":H:S:R:B:i:w:d:1k:Uh", opts, NULL)) != -1) {
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
		case '1': once = true; break;
		case 'k': key_file = optarg; break;
		case 'U': unsigned_ = true; break;
		case 'h': fputs(help, stdout); return EXIT_OK;
		default: bad_option("ship", o, argv);
		}
	}
	if (optind < argc)
		usage_error("ship", "unexpected argument '%s'", argv[optind]);
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
	s.epoch = new_epoch();
	memcpy(s.hdr.host, s.host, sizeof(s.hdr.host));
	s.hdr.epoch = s.epoch;
	s.start_us = now_us();
	bucket_init(&s.cap, rate, burst, mono_us());

	signals_init();
	st = input_open(&s.in, dir, false, ignore_record, &s);
	if (st != EXIT_OK) {
		input_close(&s.in);
		return st;
	}
	s.in.line_fn = ship_line;
	s.in.by_file = true;	/* no order to keep: fuller messages */
	input_status(&s.in, status_line, &s);
	s.ow_start = s.ow_now;
	s.so_start = s.so_now;

	input_read(&s.in);
	next_ctl = mono_us() + interval;
	while (!once && !stop_requested) {
		flush_data(&s);
		if (mono_us() >= next_ctl) {
			send_ctl(&s, false);
			next_ctl = mono_us() + interval;
		}
		sleep_us(DEFAULT_POLL_US);
		if (++tick % 5 == 0)
			input_rescan(&s.in);
		input_read(&s.in);
	}
	input_finish(&s.in);
	ok = send_ctl(&s, true);
	report(&s);
	input_report(&s.in);
	input_close(&s.in);
	sock_close(&s);
	if (!ok) {
		warnx_("ship: the last control message could not be sent: the central will count this epoch's missing records as lost in transport");
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}
