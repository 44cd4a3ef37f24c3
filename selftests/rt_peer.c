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
#define DRAIN_MAX_MS	2000

enum mode { MODE_SERVER = 1, MODE_CLIENT = 2, MODE_BOTH = 3 };

enum end_mode {
	END_WAIT, END_CLOSE, END_LINGER0,			/* server */
	END_MID_REQUEST, END_RST, END_STOP_READING, END_WAIT_SERVER,	/* client */
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
};

static struct {
	enum mode mode;
	const char *addr, *bind_addr, *ready_file, *gate;
	unsigned long long port, req_bytes, resp_bytes, partial_bytes;
	unsigned long long delay_ms, resp_writes, write_gap_ms;
	unsigned long long req_parts, part_gap_ms, think_ms, hold_ms;
	unsigned long long conns, requests, sndbuf, rcvbuf, timeout_s;
	bool requests_set, partial_set, dual, no_read, nodelay, verbose;
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

static int gate_fd = -1;
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

/*
 * Read exactly @n bytes (or until EOF if @n is ULLONG_MAX), adding what was
 * read to *@got.  Returns 0 when done, 1 on EOF before @n bytes, -1 on error.
 */
static int read_n(int fd, unsigned long long n, unsigned long long *got)
{
	char buf[IO_CHUNK];
	unsigned long long left = n;
	ssize_t r;

	while (left) {
		r = read(fd, buf, left < sizeof(buf) ? left : sizeof(buf));
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

/* Write exactly @n bytes, adding what was written to *@sent.  0 or -1. */
static int write_n(int fd, unsigned long long n, char fill, unsigned long long *sent)
{
	char buf[IO_CHUNK];
	ssize_t r;

	memset(buf, fill, n < sizeof(buf) ? n : sizeof(buf));
	while (n) {
		r = send(fd, buf, n < sizeof(buf) ? n : sizeof(buf), MSG_NOSIGNAL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		*sent += r;
		n -= r;
	}
	return 0;
}

/* @total bytes in @parts writes, @gap_ms apart; the last takes the remainder. */
static int write_split(int fd, unsigned long long total, unsigned long long parts,
		       unsigned long long gap_ms, char fill, unsigned long long *sent)
{
	unsigned long long i, len = total / parts;

	for (i = 0; i < parts; i++) {
		if (i)
			sleep_ms(gap_ms);
		if (write_n(fd, i == parts - 1 ? total - len * i : len, fill, sent))
			return -1;
	}
	return 0;
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
}

/*
 * Close with SO_LINGER {1, 0} so that an RST is sent.  First wait (bounded)
 * until everything we sent has been acknowledged, so the RST deterministically
 * follows the fully delivered data instead of racing it.
 */
static void close_rst(int fd)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	int i, outq;

	for (i = 0; i < DRAIN_MAX_MS; i++) {
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
	while (!o.requests_set || c->requests < o.requests) {
		got = 0;
		ret = read_n(c->fd, o.req_bytes, &got);
		c->received += got;
		if (ret) {
			if (ret < 0 && !peer_gone(errno))
				die("conn %llu: read request", c->idx);
			c->partial = got;
			c->end = ret < 0 ? CE_ABORTED : CE_EOF;
			close(c->fd);
			return NULL;
		}
		sleep_ms(o.delay_ms);
		gate_wait();
		if (write_split(c->fd, o.resp_bytes, o.resp_writes, o.write_gap_ms,
				'r', &c->sent)) {
			if (!peer_gone(errno))
				die("conn %llu: write response", c->idx);
			c->end = CE_ABORTED;
			close(c->fd);
			return NULL;
		}
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
	if (bind(fd, (struct sockaddr *)&ss, len))
		die("bind %s port %llu", o.addr, o.port);
	if (listen(fd, 1024))
		die("listen");
	return fd;
}

static unsigned int sock_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		die("getsockname");
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
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

static int client_connect(struct conn *c)
{
	struct sockaddr_storage ss, local;
	socklen_t len, llen, elen;
	struct pollfd pfd;
	int fd, err;

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
	if (!connect(fd, (struct sockaddr *)&ss, len))
		return fd;
	if (errno != EINTR)
		die("conn %llu: connect %s port %llu", c->idx, o.addr, o.port);
	/* Interrupted: the connect continues asynchronously; wait for it. */
	pfd = (struct pollfd){ .fd = fd, .events = POLLOUT };
	while (poll(&pfd, 1, -1) < 0)
		if (errno != EINTR)
			die("conn %llu: poll", c->idx);
	elen = sizeof(err);
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen))
		die("conn %llu: getsockopt SO_ERROR", c->idx);
	if (err) {
		errno = err;
		die("conn %llu: connect %s port %llu", c->idx, o.addr, o.port);
	}
	return fd;
}

static void client_request(struct conn *c)
{
	unsigned long long got = 0;
	int ret;

	if (write_split(c->fd, o.req_bytes, o.req_parts, o.part_gap_ms, 'q', &c->sent))
		die("conn %llu: write request %llu", c->idx, c->requests + 1);
	ret = read_n(c->fd, o.resp_bytes, &got);
	c->received += got;
	if (ret < 0)
		die("conn %llu: read response %llu", c->idx, c->requests + 1);
	if (ret > 0)
		die_msg("conn %llu: read response %llu: unexpected EOF after %llu of %llu bytes",
			c->idx, c->requests + 1, got, o.resp_bytes);
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

static int run_server(void)
{
	struct conn *conns = calloc(o.conns, sizeof(*conns));
	unsigned long long i;
	int lfd;

	if (!conns)
		die("calloc");
	if (o.gate) {
		/* O_RDWR: never blocks in open() and never sees EOF. */
		gate_fd = open(o.gate, O_RDWR | O_CLOEXEC);
		if (gate_fd < 0)
			die("open gate %s", o.gate);
	}
	lfd = server_listen();
	if (o.ready_file)
		write_ready_file(sock_port(lfd));
	printf("ready %u\n", sock_port(lfd));
	fflush(stdout);

	for (i = 0; i < o.conns; i++) {
		conns[i].idx = i;
		conns[i].fd = accept_one(lfd);
		start_conn(&conns[i], server_conn);
	}
	close(lfd);
	for (i = 0; i < o.conns; i++)
		pthread_join(conns[i].thr, NULL);
	summarize("server", conns, o.conns);
	return 0;
}

static int run_client(void)
{
	struct conn *conns = calloc(o.conns, sizeof(*conns));
	unsigned long long i;

	if (!conns)
		die("calloc");
	for (i = 0; i < o.conns; i++) {
		conns[i].idx = i;
		start_conn(&conns[i], client_conn);
	}
	for (i = 0; i < o.conns; i++)
		pthread_join(conns[i].thr, NULL);
	summarize("client", conns, o.conns);
	return 0;
}

static const char usage_text[] =
"usage: rt_peer server [options]\n"
"       rt_peer client [options]\n"
"       rt_peer --help\n"
"\n"
"Per request the client writes exactly REQ bytes, the server reads them,\n"
"waits DELAY ms (then --gate), writes exactly RESP bytes, the client reads them.\n"
"\n"
"common options:\n"
"  --addr A          server address, IPv4/IPv6 literal (default 127.0.0.1);\n"
"                    a client may use v4-mapped ::ffff:a.b.c.d (AF_INET6 socket)\n"
"  --port P          server port (server: 0 = ephemeral, the default)\n"
"  --req-bytes N     request size, >= 1 (default 100)\n"
"  --resp-bytes N    response size, >= 1 (default 1000)\n"
"  --conns C         server: connections to accept and serve concurrently, then\n"
"                    exit; client: parallel connections (default 1)\n"
"  --requests R      requests per connection (client default 1; server default:\n"
"                    until the client closes; after R responses see --end)\n"
"  --end MODE        what to do after the last request (see below)\n"
"  --sndbuf N        SO_SNDBUF (default: system)\n"
"  --rcvbuf N        SO_RCVBUF (default: system)\n"
"  --nodelay         set TCP_NODELAY (the default)\n"
"  --no-nodelay      do not set TCP_NODELAY\n"
"  --timeout S       fail (exit 1) if not finished after S seconds (default: none)\n"
"  --verbose         also print one line per connection before the summary\n"
"  --help            print this text and exit 0\n"
"\n"
"server options:\n"
"  --dual            IPv6 listener accepts v4-mapped clients (IPV6_V6ONLY=0);\n"
"                    without it IPv6 listeners set IPV6_V6ONLY=1\n"
"  --ready-file F    after listen(), write \"PORT\\n\" to F (via F.tmp + rename);\n"
"                    \"ready PORT\" is always printed on stdout\n"
"  --delay-ms D      think time before each response (default 0)\n"
"  --resp-writes K   split each response into K writes, 1..RESP (default 1)\n"
"  --write-gap-ms G  pause between those writes (default 0)\n"
"  --gate FIFO       before each response (after --delay-ms) read one byte from\n"
"                    FIFO; write one byte per response to release it\n"
"  --no-read         accept and never read; close when the client hangs up\n"
"  --end wait        (default) after R responses read until the client closes\n"
"  --end close       close right after the last response\n"
"  --end linger0     after the last response is acked (max 2 s), SO_LINGER\n"
"                    {1,0} and close -> RST\n"
"\n"
"client options:\n"
"  --bind A          local address to bind (port 0)\n"
"  --req-parts K     split each request into K writes, 1..REQ (default 1)\n"
"  --part-gap-ms G   pause between those writes (default 0)\n"
"  --think-ms T      pause between requests on a connection (default 0)\n"
"  --hold-ms H       pause before the final close (default 0)\n"
"  --partial-bytes N bytes sent by --end mid-request, 0..REQ-1 (default REQ/2)\n"
"  --end close       (default) close after the last response\n"
"  --end mid-request after R requests write part of one more request, close\n"
"  --end rst         after the last response (once acked), SO_LINGER {1,0},\n"
"                    close -> RST\n"
"  --end stop-reading after R requests send one more and never read it\n"
"  --end wait-server after the last response read until the server closes\n"
"\n"
"Exit 0 on success (client: every connection completed every request with\n"
"exact byte counts), 1 on error (one \"rt_peer: what: why\" line on stderr),\n"
"2 on bad usage.  Last stdout line:\n"
"  client: conns=C requests=N sent=B received=B\n"
"  server: conns=C requests=N sent=B received=B partial=B aborted=C\n"
"(server partial = bytes of incomplete requests at client close/reset;\n"
" aborted = connections ended by ECONNRESET/EPIPE/ETIMEDOUT).\n";

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

enum {
	O_ADDR = 256, O_PORT, O_READY, O_REQ, O_RESP, O_DELAY, O_RWRITES, O_WGAP,
	O_CONNS, O_REQUESTS, O_END, O_GATE, O_NOREAD, O_SNDBUF, O_RCVBUF, O_DUAL,
	O_BIND, O_PARTS, O_PGAP, O_THINK, O_HOLD, O_PARTIAL, O_NODELAY,
	O_NONODELAY, O_TIMEOUT, O_VERBOSE, O_HELP,
};

static const struct option long_opts[] = {
	{ "addr",		required_argument, NULL, O_ADDR },
	{ "port",		required_argument, NULL, O_PORT },
	{ "ready-file",		required_argument, NULL, O_READY },
	{ "req-bytes",		required_argument, NULL, O_REQ },
	{ "resp-bytes",		required_argument, NULL, O_RESP },
	{ "delay-ms",		required_argument, NULL, O_DELAY },
	{ "resp-writes",	required_argument, NULL, O_RWRITES },
	{ "write-gap-ms",	required_argument, NULL, O_WGAP },
	{ "conns",		required_argument, NULL, O_CONNS },
	{ "requests",		required_argument, NULL, O_REQUESTS },
	{ "end",		required_argument, NULL, O_END },
	{ "gate",		required_argument, NULL, O_GATE },
	{ "no-read",		no_argument,	   NULL, O_NOREAD },
	{ "sndbuf",		required_argument, NULL, O_SNDBUF },
	{ "rcvbuf",		required_argument, NULL, O_RCVBUF },
	{ "dual",		no_argument,	   NULL, O_DUAL },
	{ "bind",		required_argument, NULL, O_BIND },
	{ "req-parts",		required_argument, NULL, O_PARTS },
	{ "part-gap-ms",	required_argument, NULL, O_PGAP },
	{ "think-ms",		required_argument, NULL, O_THINK },
	{ "hold-ms",		required_argument, NULL, O_HOLD },
	{ "partial-bytes",	required_argument, NULL, O_PARTIAL },
	{ "nodelay",		no_argument,	   NULL, O_NODELAY },
	{ "no-nodelay",		no_argument,	   NULL, O_NONODELAY },
	{ "timeout",		required_argument, NULL, O_TIMEOUT },
	{ "verbose",		no_argument,	   NULL, O_VERBOSE },
	{ "help",		no_argument,	   NULL, O_HELP },
	{ NULL, 0, NULL, 0 }
};

/* Which mode(s) accept each option (indexed by option value - O_ADDR). */
static const unsigned char opt_modes[] = {
	[O_READY - O_ADDR] = MODE_SERVER, [O_DELAY - O_ADDR] = MODE_SERVER,
	[O_RWRITES - O_ADDR] = MODE_SERVER, [O_WGAP - O_ADDR] = MODE_SERVER,
	[O_GATE - O_ADDR] = MODE_SERVER, [O_NOREAD - O_ADDR] = MODE_SERVER,
	[O_DUAL - O_ADDR] = MODE_SERVER,
	[O_BIND - O_ADDR] = MODE_CLIENT, [O_PARTS - O_ADDR] = MODE_CLIENT,
	[O_PGAP - O_ADDR] = MODE_CLIENT, [O_THINK - O_ADDR] = MODE_CLIENT,
	[O_HOLD - O_ADDR] = MODE_CLIENT, [O_PARTIAL - O_ADDR] = MODE_CLIENT,
	[O_HELP - O_ADDR] = 0,	/* all others: 0 = both modes */
};

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

static void parse_args(int argc, char **argv)
{
	const unsigned long long imax = INT_MAX, big = ULLONG_MAX / 2;
	int c, idx;

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

	opterr = 0;	/* getopt would report as "server:"; we report ourselves */
	while ((c = getopt_long(argc - 1, argv + 1, "h", long_opts, &idx)) != -1) {
		if (c == 'h' || c == O_HELP)
			help();
		if (c == '?' || c == ':')
			usage("unknown option or missing argument: '%s'", argv[optind]);
		if (opt_modes[c - O_ADDR] && !(opt_modes[c - O_ADDR] & o.mode))
			usage("--%s is not valid for %s", long_opts[idx].name, argv[1]);
		switch (c) {
		case O_ADDR:	 o.addr = optarg; break;
		case O_PORT:	 o.port = num("port", optarg, 65535); break;
		case O_READY:	 o.ready_file = optarg; break;
		case O_REQ:	 o.req_bytes = num("req-bytes", optarg, big); break;
		case O_RESP:	 o.resp_bytes = num("resp-bytes", optarg, big); break;
		case O_DELAY:	 o.delay_ms = num("delay-ms", optarg, imax); break;
		case O_RWRITES:	 o.resp_writes = num("resp-writes", optarg, big); break;
		case O_WGAP:	 o.write_gap_ms = num("write-gap-ms", optarg, imax); break;
		case O_CONNS:	 o.conns = num("conns", optarg, 100000); break;
		case O_REQUESTS: o.requests = num("requests", optarg, big);
				 o.requests_set = true; break;
		case O_END:	 o.end = parse_end(optarg); break;
		case O_GATE:	 o.gate = optarg; break;
		case O_NOREAD:	 o.no_read = true; break;
		case O_SNDBUF:	 o.sndbuf = num("sndbuf", optarg, imax); break;
		case O_RCVBUF:	 o.rcvbuf = num("rcvbuf", optarg, imax); break;
		case O_DUAL:	 o.dual = true; break;
		case O_BIND:	 o.bind_addr = optarg; break;
		case O_PARTS:	 o.req_parts = num("req-parts", optarg, big); break;
		case O_PGAP:	 o.part_gap_ms = num("part-gap-ms", optarg, imax); break;
		case O_THINK:	 o.think_ms = num("think-ms", optarg, imax); break;
		case O_HOLD:	 o.hold_ms = num("hold-ms", optarg, imax); break;
		case O_PARTIAL:	 o.partial_bytes = num("partial-bytes", optarg, big);
				 o.partial_set = true; break;
		case O_NODELAY:	 o.nodelay = true; break;
		case O_NONODELAY: o.nodelay = false; break;
		case O_TIMEOUT:	 o.timeout_s = num("timeout", optarg, 86400); break;
		case O_VERBOSE:	 o.verbose = true; break;
		}
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
	if (o.mode == MODE_CLIENT && !o.port)
		usage("client needs --port");
}

int main(int argc, char **argv)
{
	parse_args(argc, argv);
	signal(SIGPIPE, SIG_IGN);
	if (o.timeout_s) {
		signal(SIGALRM, on_alarm);
		alarm(o.timeout_s);
	}
	return o.mode == MODE_SERVER ? run_server() : run_client();
}
