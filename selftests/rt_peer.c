// SPDX-License-Identifier: GPL-2.0
/*
 * rt_peer - deterministic TCP request/response peer for the tcp_rt selftests.
 *
 * Both sides are told the request and response sizes on the command line;
 * no payload is parsed.  Per request the client writes exactly REQ bytes
 * (optionally in parts with pauses), the server reads exactly REQ bytes,
 * waits DELAY ms, writes exactly RESP bytes (optionally in several writes
 * with pauses) and the client reads exactly RESP bytes.  A summary line
 * with exact byte totals is printed on stdout at the end.
 *
 * Build: gcc -O2 -Wall -Wextra -Werror -o rt_peer rt_peer.c -lpthread
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/sockios.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define IO_CHUNK	65536

enum mode { MODE_SERVER = 1, MODE_CLIENT = 2, MODE_BOTH = 3 };

enum end_mode {
	END_WAIT, END_CLOSE, END_LINGER0,			/* server */
	END_MID_REQUEST, END_RST, END_STOP_READING, END_WAIT_SERVER,	/* client */
	END_SHUTDOWN,
};

static const struct {
	const char *name;
	enum mode mode;
} end_names[] = {
	[END_WAIT]		= { "wait",		MODE_SERVER },
	[END_CLOSE]		= { "close",		MODE_BOTH },
	[END_LINGER0]		= { "linger0",		MODE_SERVER },
	[END_MID_REQUEST]	= { "mid-request",	MODE_CLIENT },
	[END_RST]		= { "rst",		MODE_CLIENT },
	[END_STOP_READING]	= { "stop-reading",	MODE_CLIENT },
	[END_WAIT_SERVER]	= { "wait-server",	MODE_CLIENT },
	[END_SHUTDOWN]		= { "shutdown",		MODE_CLIENT },
};

static struct {
	enum mode mode;
	const char *addr, *bind_addr, *ready_file, *gate, *stamps, *slow_log;
	const char *send_log;
	unsigned long long port, req_bytes, resp_bytes, partial_bytes;
	unsigned long long delay_ms, read_delay_ms, resp_writes, write_gap_ms;
	unsigned long long req_parts, part_gap_ms, think_ms, hold_ms, ack_wait_ms;
	unsigned long long conns, requests, sndbuf, rcvbuf, timeout_s;
	unsigned long long pacing_rate, slow_every, slow_ms, slow_after;
	unsigned long long greeting, resp_read;
	bool requests_set, partial_set, resp_read_set, dual, no_read, nodelay;
	bool verbose, fastopen;
	enum end_mode end;
} o = {
	.addr = "127.0.0.1", .req_bytes = 100, .resp_bytes = 1000,
	.resp_writes = 1, .req_parts = 1, .conns = 1, .nodelay = true,
};

enum conn_end { CE_DONE, CE_EOF, CE_ABORTED };
static const char *const conn_end_names[] = { "done", "eof", "aborted" };

struct conn {
	pthread_t thr;
	int fd;
	unsigned long long idx, requests, sent, received, partial;
	enum conn_end end;
};

/* The start and end (CLOCK_REALTIME, us) of one read() or send() call. */
struct call_stamp {
	unsigned long long start, end;
};

static int gate_fd = -1;
static FILE *stamps_file, *slow_file, *send_file;
static unsigned long long slow_count;	/* requests read, for --slow-every */
/* stamps_lock: the three files above and slow_count */
static pthread_mutex_t stamps_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t die_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- error handling ---------------------------------------------------- */

static void __attribute__((noreturn, format(printf, 2, 0)))
vdie(int err, const char *fmt, va_list ap)
{
	/* Never unlocked: a second failing thread blocks until we exit. */
	pthread_mutex_lock(&die_lock);
	fputs("rt_peer: ", stderr);
	vfprintf(stderr, fmt, ap);
	if (err > 0)
		fprintf(stderr, ": %s\n", strerror(err));
	else
		fputs("\n", stderr);
	fflush(stdout);
	_exit(1);
}

/* "rt_peer: <what>: <strerror(errno)>" and exit 1. */
static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	va_start(ap, fmt);
	vdie(err, fmt, ap);
}

/* Same, with the reason given as text (e.g. "unexpected EOF"). */
static void __attribute__((noreturn, format(printf, 1, 2)))
die_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdie(0, fmt, ap);
}

static void on_alarm(int sig)
{
	static const char msg[] = "rt_peer: timeout: --timeout expired\n";

	(void)sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

/* ---- time and I/O helpers --------------------------------------------- */

static void sleep_ms(unsigned long long ms)
{
	struct timespec ts;
	int ret;

	if (!ms)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	while ((ret = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)) == EINTR)
		;
	if (ret) {
		errno = ret;
		die("clock_nanosleep");
	}
}

static unsigned long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000ULL + ts.tv_nsec / 1000;
}

/*
 * Read exactly @n bytes (or until EOF if @n is ULLONG_MAX), adding what was
 * read to *@got; *@last, if given, gets the start and end of the read() call
 * that returned the last of them.  Returns 0 when done, 1 on EOF before @n
 * bytes, -1 on error.
 */
static int read_n_stamped(int fd, unsigned long long n, unsigned long long *got,
			  struct call_stamp *last)
{
	char buf[IO_CHUNK];
	unsigned long long left = n, t0 = 0;
	ssize_t r;

	while (left) {
		if (last)
			t0 = now_us();
		r = read(fd, buf, left < sizeof(buf) ? left : sizeof(buf));
		if (last && r > 0)
			*last = (struct call_stamp){ t0, now_us() };
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			return 1;
		*got += r;
		left -= r;
	}
	return 0;
}

static int read_n(int fd, unsigned long long n, unsigned long long *got)
{
	return read_n_stamped(fd, n, got, NULL);
}

/* A socket's own port, or (@peer) its peer's; 0 if it has none. */
static unsigned int port_of(int fd, bool peer)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (peer ? getpeername(fd, (struct sockaddr *)&ss, &len) :
		   getsockname(fd, (struct sockaddr *)&ss, &len))
		return 0;
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

/*
 * One line a send() call to --send-log: "send PORT START END RET", PORT
 * the client's, START and END CLOCK_REALTIME microseconds.  The socket is
 * its caller's (owned) for most of the call: TCP keeps what arrives
 * meanwhile in its backlog until the call lets go.
 */
static void log_send(int fd, const struct call_stamp *call, ssize_t ret)
{
	if (!send_file)
		return;
	pthread_mutex_lock(&stamps_lock);
	fprintf(send_file, "send %u %llu %llu %zd\n",
		port_of(fd, o.mode == MODE_SERVER), call->start, call->end, ret);
	fflush(send_file);
	pthread_mutex_unlock(&stamps_lock);
}

/*
 * Write exactly @n bytes, adding what was written to *@sent; *@first, if
 * given and still unset (start 0), gets the start and end of the first
 * send() call.  0 or -1.
 */
static int write_n_stamped(int fd, unsigned long long n, char fill,
			   unsigned long long *sent, struct call_stamp *first)
{
	char buf[IO_CHUNK];
	struct call_stamp call;
	ssize_t r;

	memset(buf, fill, n < sizeof(buf) ? n : sizeof(buf));
	while (n) {
		call.start = now_us();
		r = send(fd, buf, n < sizeof(buf) ? n : sizeof(buf), MSG_NOSIGNAL);
		call.end = now_us();
		if (first && !first->start)
			*first = call;
		log_send(fd, &call, r);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		*sent += r;
		n -= r;
	}
	return 0;
}

static int write_n(int fd, unsigned long long n, char fill, unsigned long long *sent)
{
	return write_n_stamped(fd, n, fill, sent, NULL);
}

/*
 * @total bytes in @parts writes, @gap_ms apart; the last takes the
 * remainder.  *@first as for write_n_stamped().
 */
static int write_split_stamped(int fd, unsigned long long total,
			       unsigned long long parts, unsigned long long gap_ms,
			       char fill, unsigned long long *sent,
			       struct call_stamp *first)
{
	unsigned long long i, len = total / parts;

	for (i = 0; i < parts; i++) {
		if (i)
			sleep_ms(gap_ms);
		if (write_n_stamped(fd, i == parts - 1 ? total - len * i : len, fill,
				    sent, first))
			return -1;
	}
	return 0;
}

static int write_split(int fd, unsigned long long total, unsigned long long parts,
		       unsigned long long gap_ms, char fill, unsigned long long *sent)
{
	return write_split_stamped(fd, total, parts, gap_ms, fill, sent, NULL);
}

/*
 * One line a request to --stamps: the connection, the request (from 1),
 * @rd, the read() that returned the last byte of the request (server) or
 * of its response (client), @wr, the first send() of the response (server)
 * or of the request (client), start and end of each, the client's port,
 * then @wl, the end of the last send() of what @wr began; CLOCK_REALTIME
 * microseconds.
 */
static void stamp_request(const struct conn *c, const struct call_stamp *rd,
			  const struct call_stamp *wr, unsigned long long wl)
{
	if (!stamps_file)
		return;
	pthread_mutex_lock(&stamps_lock);
	fprintf(stamps_file, "stamp %llu %llu %llu %llu %llu %llu %u %llu\n",
		c->idx, c->requests + 1, rd->start, rd->end, wr->start, wr->end,
		port_of(c->fd, o.mode == MODE_SERVER), wl);
	fflush(stamps_file);
	pthread_mutex_unlock(&stamps_lock);
}

/*
 * --slow-every: whether this request (the server's Nth, 2Nth, ... read
 * after the first --slow-after, over every connection) is held --slow-ms
 * longer; each one held is a line of --slow-log, "slow CONN REQ PORT",
 * before its response.
 */
static bool slow_request(const struct conn *c)
{
	bool slow;

	if (!o.slow_every)
		return false;
	pthread_mutex_lock(&stamps_lock);
	++slow_count;
	slow = slow_count > o.slow_after &&
	       (slow_count - o.slow_after) % o.slow_every == 0;
	if (slow && slow_file) {
		fprintf(slow_file, "slow %llu %llu %u\n", c->idx, c->requests + 1,
			port_of(c->fd, true));
		fflush(slow_file);
	}
	pthread_mutex_unlock(&stamps_lock);
	return slow;
}

/* Errors that mean "the peer went away" rather than "this tool failed". */
static bool peer_gone(int err)
{
	return err == ECONNRESET || err == EPIPE || err == ETIMEDOUT;
}

/* ---- socket helpers ---------------------------------------------------- */

static void parse_addr(const char *s, unsigned long long port,
		       struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo hints = {
		.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
		.ai_socktype = SOCK_STREAM,
	};
	struct addrinfo *res;
	char pbuf[16];
	int err;

	snprintf(pbuf, sizeof(pbuf), "%llu", port);
	err = getaddrinfo(s, pbuf, &hints, &res);
	if (err)
		die_msg("address %s: %s", s, gai_strerror(err));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
}

static void set_int_opt(int fd, int level, int name, int val, const char *what)
{
	if (setsockopt(fd, level, name, &val, sizeof(val)))
		die("setsockopt %s", what);
}

static void set_common_opts(int fd)
{
	if (o.nodelay)
		set_int_opt(fd, IPPROTO_TCP, TCP_NODELAY, 1, "TCP_NODELAY");
	if (o.sndbuf)
		set_int_opt(fd, SOL_SOCKET, SO_SNDBUF, (int)o.sndbuf, "SO_SNDBUF");
	if (o.rcvbuf)
		set_int_opt(fd, SOL_SOCKET, SO_RCVBUF, (int)o.rcvbuf, "SO_RCVBUF");
	/* TCP paces itself (no fq qdisc needed) once this is set */
	if (o.pacing_rate)
		set_int_opt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, (int)o.pacing_rate,
			    "SO_MAX_PACING_RATE");
}

/*
 * Close with SO_LINGER {1, 0} so that an RST is sent.  With --ack-wait-ms,
 * first wait (bounded) until everything sent has been acknowledged, so the
 * RST follows fully delivered data instead of racing it.
 */
static void close_rst(int fd)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	unsigned long long i;
	int outq;

	for (i = 0; i < o.ack_wait_ms; i++) {
		if (ioctl(fd, SIOCOUTQ, &outq) || outq == 0)
			break;
		sleep_ms(1);
	}
	if (setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)))
		die("setsockopt SO_LINGER");
	close(fd);
}

/* Read and count everything until EOF or error; returns the connection end. */
static enum conn_end drain_until_close(int fd, unsigned long long *got, const char *what)
{
	if (read_n(fd, ULLONG_MAX, got) > 0)
		return CE_EOF;
	if (!peer_gone(errno))
		die("%s", what);
	return CE_ABORTED;
}

/* ---- server ------------------------------------------------------------ */

static void gate_wait(void)
{
	char c;
	ssize_t r;

	if (gate_fd < 0)
		return;
	while ((r = read(gate_fd, &c, 1)) < 0 && errno == EINTR)
		;
	if (r < 0)
		die("read gate %s", o.gate);
	if (r == 0)
		die_msg("read gate %s: unexpected EOF", o.gate);
}

/* --no-read: never read; close once the peer has shut down or reset. */
static void wait_peer_hangup(struct conn *c)
{
	struct pollfd pfd = { .fd = c->fd, .events = POLLRDHUP };

	while (poll(&pfd, 1, -1) < 0)
		if (errno != EINTR)
			die("conn %llu: poll", c->idx);
	c->end = (pfd.revents & POLLERR) ? CE_ABORTED : CE_EOF;
}

static void *server_conn(void *arg)
{
	struct conn *c = arg;
	unsigned long long got;
	int ret;

	if (o.no_read) {
		wait_peer_hangup(c);
		close(c->fd);
		return NULL;
	}
	if (o.greeting && write_n(c->fd, o.greeting, 'g', &c->sent)) {
		if (!peer_gone(errno))
			die("conn %llu: write greeting", c->idx);
		c->end = CE_ABORTED;
		close(c->fd);
		return NULL;
	}
	while (!o.requests_set || c->requests < o.requests) {
		struct call_stamp rd = { 0, 0 }, wr = { 0, 0 };

		got = 0;
		sleep_ms(o.read_delay_ms);
		ret = read_n_stamped(c->fd, o.req_bytes, &got, &rd);
		c->received += got;
		if (ret) {
			if (ret < 0 && !peer_gone(errno))
				die("conn %llu: read request", c->idx);
			c->partial = got;
			c->end = ret < 0 ? CE_ABORTED : CE_EOF;
			close(c->fd);
			return NULL;
		}
		sleep_ms(o.delay_ms + (slow_request(c) ? o.slow_ms : 0));
		gate_wait();
		if (write_split_stamped(c->fd, o.resp_bytes, o.resp_writes,
					o.write_gap_ms, 'r', &c->sent, &wr)) {
			if (!peer_gone(errno))
				die("conn %llu: write response", c->idx);
			c->end = CE_ABORTED;
			close(c->fd);
			return NULL;
		}
		stamp_request(c, &rd, &wr, now_us());
		c->requests++;
	}

	switch (o.end) {
	case END_LINGER0:
		close_rst(c->fd);
		return NULL;
	case END_WAIT:
		c->end = drain_until_close(c->fd, &c->received, "read after last request");
		break;
	default:
		break;
	}
	close(c->fd);
	return NULL;
}

static void write_ready_file(unsigned int port)
{
	char tmp[PATH_MAX];
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", o.ready_file) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		die("ready file %s", o.ready_file);
	}
	f = fopen(tmp, "w");
	if (!f)
		die("open %s", tmp);
	fprintf(f, "%u\n", port);
	if (fclose(f))
		die("write %s", tmp);
	if (rename(tmp, o.ready_file))
		die("rename %s", tmp);
}

static int server_listen(void)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd;

	parse_addr(o.addr, o.port, &ss, &len);
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
	if (fd < 0)
		die("socket");
	set_int_opt(fd, SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR");
	if (ss.ss_family == AF_INET6)
		set_int_opt(fd, IPPROTO_IPV6, IPV6_V6ONLY, !o.dual, "IPV6_V6ONLY");
	set_common_opts(fd);	/* inherited by accepted sockets */
	if (o.fastopen)
		set_int_opt(fd, IPPROTO_TCP, TCP_FASTOPEN, 16, "TCP_FASTOPEN");
	if (bind(fd, (struct sockaddr *)&ss, len))
		die("bind %s port %llu", o.addr, o.port);
	if (listen(fd, 1024))
		die("listen");
	return fd;
}

static int accept_one(int lfd)
{
	int fd;

	for (;;) {
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			return fd;
		if (errno != EINTR && errno != ECONNABORTED)
			die("accept");
	}
}

/* ---- client ------------------------------------------------------------ */

/*
 * No signal handler ever returns (SIGALRM exits, SIGPIPE is ignored), so a
 * blocking connect() cannot fail with EINTR.
 */
static int client_connect(struct conn *c)
{
	struct sockaddr_storage ss, local;
	socklen_t len, llen;
	int fd;

	parse_addr(o.addr, o.port, &ss, &len);
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
	if (fd < 0)
		die("conn %llu: socket", c->idx);
	set_common_opts(fd);
	if (o.bind_addr) {
		parse_addr(o.bind_addr, 0, &local, &llen);
		if (bind(fd, (struct sockaddr *)&local, llen))
			die("conn %llu: bind %s", c->idx, o.bind_addr);
	}
	/* the first write then rides the SYN, once a cookie is cached */
	if (o.fastopen)
		set_int_opt(fd, IPPROTO_TCP, TCP_FASTOPEN_CONNECT, 1,
			    "TCP_FASTOPEN_CONNECT");
	if (connect(fd, (struct sockaddr *)&ss, len))
		die("conn %llu: connect %s port %llu", c->idx, o.addr, o.port);
	return fd;
}

static void client_request(struct conn *c)
{
	unsigned long long got = 0, want = o.resp_bytes, wl;
	struct call_stamp rd = { 0, 0 }, wr = { 0, 0 };
	int ret;

	/* --resp-read: of the last response, only the first bytes */
	if (o.resp_read_set && c->requests + 1 == o.requests)
		want = o.resp_read;
	gate_wait();
	if (write_split_stamped(c->fd, o.req_bytes, o.req_parts, o.part_gap_ms,
				'q', &c->sent, &wr))
		die("conn %llu: write request %llu", c->idx, c->requests + 1);
	wl = now_us();
	sleep_ms(o.read_delay_ms);
	ret = read_n_stamped(c->fd, want, &got, &rd);
	c->received += got;
	if (ret < 0)
		die("conn %llu: read response %llu", c->idx, c->requests + 1);
	if (ret > 0)
		die_msg("conn %llu: read response %llu: unexpected EOF after %llu of %llu bytes",
			c->idx, c->requests + 1, got, o.resp_bytes);
	stamp_request(c, &rd, &wr, wl);
	c->requests++;
}

static void *client_conn(void *arg)
{
	struct conn *c = arg;
	unsigned long long n;

	c->fd = client_connect(c);
	while (c->requests < o.requests) {
		if (c->requests)
			sleep_ms(o.think_ms);
		client_request(c);
	}

	switch (o.end) {
	case END_MID_REQUEST:
		sleep_ms(o.think_ms);
		n = o.partial_set ? o.partial_bytes : o.req_bytes / 2;
		if (write_n(c->fd, n, 'q', &c->sent))
			die("conn %llu: write partial request", c->idx);
		break;
	case END_STOP_READING:
		sleep_ms(o.think_ms);
		if (write_split(c->fd, o.req_bytes, o.req_parts, o.part_gap_ms, 'q', &c->sent))
			die("conn %llu: write unanswered request", c->idx);
		break;
	case END_WAIT_SERVER:
		c->end = drain_until_close(c->fd, &c->received, "read waiting for server close");
		break;
	case END_SHUTDOWN:
		if (shutdown(c->fd, SHUT_WR))
			die("conn %llu: shutdown", c->idx);
		break;
	default:
		break;
	}
	sleep_ms(o.hold_ms);
	if (o.end == END_RST)
		close_rst(c->fd);
	else
		close(c->fd);
	return NULL;
}

/* ---- main -------------------------------------------------------------- */

static void summarize(const char *who, struct conn *conns, unsigned long long n)
{
	unsigned long long i, req = 0, sent = 0, recv = 0, partial = 0, aborted = 0;
	struct conn *c;

	for (i = 0; i < n; i++) {
		c = &conns[i];
		req += c->requests;
		sent += c->sent;
		recv += c->received;
		partial += c->partial;
		aborted += c->end == CE_ABORTED;
		if (o.verbose)
			printf("%s conn %llu: requests=%llu sent=%llu received=%llu partial=%llu end=%s\n",
			       who, c->idx, c->requests, c->sent, c->received,
			       c->partial, conn_end_names[c->end]);
	}
	printf("%s: conns=%llu requests=%llu sent=%llu received=%llu", who, n, req, sent, recv);
	if (o.mode == MODE_SERVER)
		printf(" partial=%llu aborted=%llu", partial, aborted);
	printf("\n");
	fflush(stdout);
}

static void start_conn(struct conn *c, void *(*fn)(void *))
{
	int err = pthread_create(&c->thr, NULL, fn, c);

	if (err) {
		errno = err;
		die("pthread_create");
	}
}

/* --gate: the FIFO whose bytes release responses (server) or requests. */
static void gate_open(void)
{
	if (!o.gate)
		return;
	/* O_RDWR: never blocks in open() and never sees EOF. */
	gate_fd = open(o.gate, O_RDWR | O_CLOEXEC);
	if (gate_fd < 0)
		die("open gate %s", o.gate);
}

/* Listening socket, ready file and "ready PORT"; returns the listener. */
static int server_setup(void)
{
	unsigned int port;
	int lfd;

	if (o.slow_log) {
		slow_file = fopen(o.slow_log, "a");
		if (!slow_file)
			die("slow log %s", o.slow_log);
	}
	lfd = server_listen();
	port = port_of(lfd, false);
	if (!port)
		die("getsockname");
	if (o.ready_file)
		write_ready_file(port);
	printf("ready %u\n", port);
	fflush(stdout);
	return lfd;
}

/* One thread per connection; the server accepts them one by one. */
static int run(void)
{
	bool server = o.mode == MODE_SERVER;
	struct conn *conns = calloc(o.conns, sizeof(*conns));
	unsigned long long i;
	int lfd = -1;

	if (!conns)
		die("calloc");
	if (o.stamps) {
		stamps_file = fopen(o.stamps, "a");
		if (!stamps_file)
			die("stamps file %s", o.stamps);
	}
	if (o.send_log) {
		send_file = fopen(o.send_log, "a");
		if (!send_file)
			die("send log %s", o.send_log);
	}
	if (server)
		lfd = server_setup();
	for (i = 0; i < o.conns; i++) {
		conns[i].idx = i;
		if (server)
			conns[i].fd = accept_one(lfd);
		start_conn(&conns[i], server ? server_conn : client_conn);
	}
	if (server)
		close(lfd);
	for (i = 0; i < o.conns; i++)
		pthread_join(conns[i].thr, NULL);
	summarize(server ? "server" : "client", conns, o.conns);
	return 0;
}

static const char usage_text[] =
"usage: rt_peer server|client [options]    (rt_peer --help: this text)\n"
"Per request the client writes exactly REQ bytes; the server reads them, waits\n"
"DELAY ms, then (with --gate) one gate byte, and writes exactly RESP bytes,\n"
"which the client reads.  Sizes are given to both sides; no payload parsing.\n"
"both:\n"
"  --addr A         server address, IPv4/IPv6 literal (default 127.0.0.1); the\n"
"                   client may use v4-mapped ::ffff:a.b.c.d (AF_INET6 socket)\n"
"  --port P         server port (server: 0 = ephemeral, the default)\n"
"  --req-bytes N    request size, >= 1 (default 100)\n"
"  --resp-bytes N   response size, >= 1 (default 1000)\n"
"  --conns C        server: connections to accept and serve concurrently, then\n"
"                   exit; client: parallel connections (default 1)\n"
"  --requests R     requests per connection (client default 1; server default:\n"
"                   until the client closes, else --end applies after R)\n"
"  --end MODE       what to do after the last request, see below\n"
"  --sndbuf N, --rcvbuf N   SO_SNDBUF / SO_RCVBUF (default: system)\n"
"  --pacing-rate N  SO_MAX_PACING_RATE, bytes/s: TCP spaces its segments so\n"
"                   (default: none)\n"
"  --nodelay        set TCP_NODELAY (default); --no-nodelay: do not\n"
"  --ack-wait-ms W  before an RST close (--end linger0/rst) wait up to W ms\n"
"                   until all sent data is acked (SIOCOUTQ 0); default 0\n"
"  --timeout S      exit 1 if still running after S seconds (default: never)\n"
"  --read-delay-ms D  wait D ms before reading each request (server) or each\n"
"                   response, after writing its request (client); default 0\n"
"  --verbose        also print one line per connection before the summary\n"
"  --stamps F       append a line a request to F: \"stamp CONN REQ RS RE WS WE\n"
"                   PORT WL\", RS/RE the start and end of the read() that\n"
"                   returned the last byte of the request (server) or of\n"
"                   its response (client), WS/WE those of the first send()\n"
"                   of the response (server) or of the request (client), WL\n"
"                   the end of its last send(), CLOCK_REALTIME\n"
"                   microseconds; PORT the client's\n"
"  --send-log F     append a line a send() call to F: \"send PORT START END\n"
"                   RET\", its start and end (CLOCK_REALTIME microseconds)\n"
"                   and what it returned; PORT the client's\n"
"  --fastopen       TCP Fast Open: server TCP_FASTOPEN on the listener, client\n"
"                   TCP_FASTOPEN_CONNECT (the request rides the SYN once the\n"
"                   client has the server's cookie; net.ipv4.tcp_fastopen)\n"
"server:\n"
"  --dual           IPv6 listener also accepts v4-mapped clients\n"
"                   (IPV6_V6ONLY=0; without --dual it is set to 1)\n"
"  --ready-file F   after listen() write \"PORT\\n\" to F.tmp, rename to F;\n"
"                   \"ready PORT\" is always printed on stdout\n"
"  --delay-ms D     think time before each response (default 0)\n"
"  --slow-every N   hold every Nth request read (over all connections)\n"
"  --slow-after A   none of the first A held: the (A+N)th, (A+2N)th, ...\n"
"                   (default 0)\n"
"  --slow-ms M      M ms more before its response (default 0)\n"
"  --slow-log F     append \"slow CONN REQ PORT\" to F for each one held (REQ\n"
"                   from 1, PORT the client's)\n"
"  --resp-writes K  split each response into K writes, 1..RESP (default 1)\n"
"  --write-gap-ms G pause between those writes (default 0)\n"
"  --gate FIFO      before each response (after the delay) read one byte from\n"
"                   FIFO; each byte written releases one response (any conn)\n"
"  --no-read        never read; close when the client closes or resets\n"
"  --greeting N     write N bytes as soon as a connection is accepted, before\n"
"                   reading any request (a server-first protocol)\n"
"  --end wait       (default) read until the client closes, then close\n"
"  --end close      close right after the last response\n"
"  --end linger0    right after the last response SO_LINGER {1,0} and close\n"
"                   -> RST (see --ack-wait-ms)\n"
"client:\n"
"  --bind A         local address to bind (port 0), same family as --addr\n"
"  --gate FIFO      before each request read one byte from FIFO\n"
"  --req-parts K    split each request into K writes, 1..REQ (default 1);\n"
"                   the last one takes the remainder\n"
"  --part-gap-ms G  pause between those writes (default 0)\n"
"  --think-ms T     pause between requests, also before the --end extra\n"
"                   (partial/unanswered) request (default 0)\n"
"  --hold-ms H      pause before the final close (default 0)\n"
"  --partial-bytes N  bytes sent by --end mid-request, 0..REQ-1 (default REQ/2)\n"
"  --resp-read N    read only the first N bytes (0..RESP-1) of the last\n"
"                   response, then go on to --end; the rest is left unread\n"
"                   (a close then resets the connection)\n"
"  --end close      (default) close after the last response\n"
"  --end mid-request  then write only part of one more request and close\n"
"  --end rst        after the last response SO_LINGER {1,0} and close -> RST\n"
"  --end stop-reading  send one more request, never read, close after hold\n"
"  --end wait-server  read until the server closes or resets, then close\n"
"  --end shutdown   shutdown(SHUT_WR) (a FIN), then close after hold\n"
"Exit 0 on success (client: every connection completed every request with\n"
"exact byte counts; the server treats EOF/ECONNRESET/EPIPE/ETIMEDOUT from the\n"
"client as a connection end, not an error), 1 on error (one line\n"
"\"rt_peer: what: why\" on stderr), 2 on bad usage.  Last stdout line:\n"
"  client: conns=C requests=N sent=B received=B\n"
"  server: conns=C requests=N sent=B received=B partial=B aborted=C\n"
"sent/received: bytes passed to send()/returned by read(); requests: complete\n"
"exchanges; partial: bytes of an incomplete last request; aborted: server\n"
"connections ended by reset/EPIPE/ETIMEDOUT.\n";

static void __attribute__((noreturn, format(printf, 1, 2)))
usage(const char *fmt, ...)
{
	va_list ap;

	if (fmt) {
		va_start(ap, fmt);
		fputs("rt_peer: ", stderr);
		vfprintf(stderr, fmt, ap);
		fputs("\n\n", stderr);
		va_end(ap);
	}
	fputs(usage_text, stderr);
	exit(2);
}

static void __attribute__((noreturn)) help(void)
{
	fputs(usage_text, stdout);
	exit(0);
}

#define BIG	(ULLONG_MAX / 2)
#define MS	((unsigned long long)INT_MAX)

enum opt_kind { K_NUM, K_STR, K_FLAG, K_END, K_HELP };

#define NUMSEEN(n, m, d, max, seen)	{ n, K_NUM, m, d, max, seen }
#define NUM(n, m, d, max)		{ n, K_NUM, m, d, max, NULL }
#define STR(n, m, d)			{ n, K_STR, m, d, 0, NULL }
#define FLAG(n, m, d, val)		{ n, K_FLAG, m, d, val, NULL }

/* One row per option: modes that accept it, where it goes, limit or value. */
static const struct opt_desc {
	const char *name;
	enum opt_kind kind;
	enum mode modes;
	void *dst;
	unsigned long long max;		/* K_NUM: maximum; K_FLAG: value stored */
	bool *seen;			/* K_NUM: optionally flag "given" */
} opt_table[] = {
	NUM("port",	      MODE_BOTH,   &o.port, 65535),
	STR("addr",	      MODE_BOTH,   &o.addr),
	NUM("req-bytes",      MODE_BOTH,   &o.req_bytes, BIG),
	NUM("resp-bytes",     MODE_BOTH,   &o.resp_bytes, BIG),
	NUM("conns",	      MODE_BOTH,   &o.conns, 100000),
	NUMSEEN("requests",   MODE_BOTH,   &o.requests, BIG, &o.requests_set),
	{ "end", K_END,	      MODE_BOTH,   &o.end, 0, NULL },
	NUM("sndbuf",	      MODE_BOTH,   &o.sndbuf, INT_MAX),
	NUM("rcvbuf",	      MODE_BOTH,   &o.rcvbuf, INT_MAX),
	NUM("pacing-rate",    MODE_BOTH,   &o.pacing_rate, INT_MAX),
	FLAG("nodelay",	      MODE_BOTH,   &o.nodelay, true),
	FLAG("no-nodelay",    MODE_BOTH,   &o.nodelay, false),
	NUM("ack-wait-ms",    MODE_BOTH,   &o.ack_wait_ms, MS),
	NUM("timeout",	      MODE_BOTH,   &o.timeout_s, 86400),
	FLAG("verbose",	      MODE_BOTH,   &o.verbose, true),
	FLAG("fastopen",      MODE_BOTH,   &o.fastopen, true),
	{ "help", K_HELP,     MODE_BOTH,   NULL, 0, NULL },
	FLAG("dual",	      MODE_SERVER, &o.dual, true),
	STR("ready-file",     MODE_SERVER, &o.ready_file),
	NUM("delay-ms",	      MODE_SERVER, &o.delay_ms, MS),
	NUM("read-delay-ms",  MODE_BOTH,   &o.read_delay_ms, MS),
	STR("stamps",	      MODE_BOTH,   &o.stamps),
	STR("send-log",	      MODE_BOTH,   &o.send_log),
	NUM("slow-every",     MODE_SERVER, &o.slow_every, BIG),
	NUM("slow-after",     MODE_SERVER, &o.slow_after, BIG),
	NUM("slow-ms",	      MODE_SERVER, &o.slow_ms, MS),
	STR("slow-log",	      MODE_SERVER, &o.slow_log),
	NUM("resp-writes",    MODE_SERVER, &o.resp_writes, BIG),
	NUM("write-gap-ms",   MODE_SERVER, &o.write_gap_ms, MS),
	NUM("greeting",	      MODE_SERVER, &o.greeting, BIG),
	STR("gate",	      MODE_BOTH,   &o.gate),
	FLAG("no-read",	      MODE_SERVER, &o.no_read, true),
	STR("bind",	      MODE_CLIENT, &o.bind_addr),
	NUM("req-parts",      MODE_CLIENT, &o.req_parts, BIG),
	NUM("part-gap-ms",    MODE_CLIENT, &o.part_gap_ms, MS),
	NUM("think-ms",	      MODE_CLIENT, &o.think_ms, MS),
	NUM("hold-ms",	      MODE_CLIENT, &o.hold_ms, MS),
	NUMSEEN("partial-bytes", MODE_CLIENT, &o.partial_bytes, BIG, &o.partial_set),
	NUMSEEN("resp-read",  MODE_CLIENT, &o.resp_read, BIG, &o.resp_read_set),
};

#undef NUM
#undef NUMSEEN
#undef STR
#undef FLAG
#define N_OPTS	(sizeof(opt_table) / sizeof(opt_table[0]))

static unsigned long long num(const char *name, const char *s, unsigned long long max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (!*s || *s == '-' || *end || errno || v > max)
		usage("--%s: bad number '%s' (0..%llu)", name, s, max);
	return v;
}

static enum end_mode parse_end(const char *s)
{
	size_t i;

	for (i = 0; i < sizeof(end_names) / sizeof(end_names[0]); i++)
		if (!strcmp(s, end_names[i].name) && (end_names[i].mode & o.mode))
			return i;
	usage("--end: '%s' is not valid for %s", s,
	      o.mode == MODE_SERVER ? "server" : "client");
}

static void apply_opt(const struct opt_desc *d, const char *arg, const char *mode)
{
	if (!(d->modes & o.mode))
		usage("--%s is not valid for %s", d->name, mode);
	switch (d->kind) {
	case K_NUM:
		*(unsigned long long *)d->dst = num(d->name, arg, d->max);
		if (d->seen)
			*d->seen = true;
		break;
	case K_STR:
		*(const char **)d->dst = arg;
		break;
	case K_FLAG:
		*(bool *)d->dst = d->max;
		break;
	case K_END:
		o.end = parse_end(arg);
		break;
	case K_HELP:
		help();
	}
}

static void parse_args(int argc, char **argv)
{
	struct option long_opts[N_OPTS + 1] = { { NULL, 0, NULL, 0 } };
	size_t i;
	int c;

	if (argc >= 2 && !strcmp(argv[1], "server"))
		o.mode = MODE_SERVER;
	else if (argc >= 2 && !strcmp(argv[1], "client"))
		o.mode = MODE_CLIENT;
	else if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		help();
	else
		usage(argc < 2 ? "missing mode" : "unknown mode '%s'", argv[1]);
	o.end = o.mode == MODE_SERVER ? END_WAIT : END_CLOSE;
	o.requests = o.mode == MODE_CLIENT;

	for (i = 0; i < N_OPTS; i++) {
		long_opts[i].name = opt_table[i].name;
		long_opts[i].has_arg = opt_table[i].kind == K_FLAG ||
				       opt_table[i].kind == K_HELP ? no_argument : required_argument;
		long_opts[i].val = i;
	}
	/* Parse after the mode word; getopt would say "server:", so be quiet. */
	opterr = 0;
	while ((c = getopt_long(argc - 1, argv + 1, "h", long_opts, NULL)) != -1) {
		if (c == 'h')
			help();
		if (c == '?' || c == ':')
			usage("unknown option or missing argument: '%s'", argv[optind]);
		apply_opt(&opt_table[c], optarg, argv[1]);
	}
	if (optind + 1 < argc)
		usage("unexpected argument '%s'", argv[optind + 1]);
	if (!o.req_bytes || !o.resp_bytes)
		usage("--req-bytes and --resp-bytes must be at least 1");
	if (!o.conns)
		usage("--conns must be at least 1");
	if (!o.resp_writes || o.resp_writes > o.resp_bytes)
		usage("--resp-writes must be 1..%llu", o.resp_bytes);
	if (!o.req_parts || o.req_parts > o.req_bytes)
		usage("--req-parts must be 1..%llu", o.req_bytes);
	if (o.partial_set && o.partial_bytes >= o.req_bytes)
		usage("--partial-bytes must be 0..%llu", o.req_bytes - 1);
	if (o.partial_set && o.end != END_MID_REQUEST)
		usage("--partial-bytes needs --end mid-request");
	if (o.resp_read_set && o.resp_read >= o.resp_bytes)
		usage("--resp-read must be 0..%llu", o.resp_bytes - 1);
	if (o.mode == MODE_CLIENT && !o.port)
		usage("client needs --port");
}

int main(int argc, char **argv)
{
	parse_args(argc, argv);
	gate_open();
	signal(SIGPIPE, SIG_IGN);
	if (o.timeout_s) {
		signal(SIGALRM, on_alarm);
		alarm(o.timeout_s);
	}
	return run();
}
