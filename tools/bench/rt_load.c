// SPDX-License-Identifier: GPL-2.0
/*
 * rt_load - request/response load for the tcp_rt benchmark.
 *
 *   rt_load server --port P [--req N] [--resp N] [--ready-file F]
 *   rt_load client --port P [--conns C] [--seconds S] [--req N] [--resp N]
 *   rt_load idle --port P --conns C --ready-file F
 *
 * The server answers every REQ bytes read with RESP bytes; the client keeps
 * C connections each with one request outstanding for S seconds and prints
 * "requests N seconds S rps R".  "idle" opens C connections, exchanges one
 * request on each (so they are tracked tasks), writes F and waits for
 * SIGTERM, then closes them a batch at a time and exits.  One thread each,
 * epoll, no delay: the worst case for tcp_rt, whose cost is per request
 * while the kernel's work per request is least.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_EVENTS	256
#define BUF_SIZE	65536
#define CLOSE_BATCH	100
#define MAX_BURST	64	/* responses read on one connection per wakeup */

struct conn {
	int fd;
	size_t need;	/* bytes still to read for this message */
};

static unsigned int opt_port, opt_conns = 16, opt_seconds = 10;
static size_t opt_req = 64, opt_resp = 256;
static unsigned long opt_spin;
static const char *opt_ready;
static char buf[BUF_SIZE];

static void die(const char *what)
{
	fprintf(stderr, "rt_load: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void raise_nofile(void)
{
	struct rlimit rl;

	/* 10,000 idle connections and more; root may raise the hard limit */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		if (rl.rlim_max < 65536)
			rl.rlim_max = 65536;
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			die("setrlimit RLIMIT_NOFILE");
	}
}

static void set_nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static void write_all(int fd, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len < BUF_SIZE ? len : BUF_SIZE);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("write");
		len -= n;
	}
}

static void ready(void)
{
	char tmp[4096];
	FILE *f;

	if (!opt_ready)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", opt_ready);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%u\n", opt_port) < 0 || fclose(f))
		die("ready file");
	if (rename(tmp, opt_ready))
		die("rename ready file");
}

static int listen_on(unsigned int port)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		die("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 4096))
		die("bind/listen");
	return fd;
}

static int connect_to(unsigned int port)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		die("socket");
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)))
		die("connect");
	set_nodelay(fd);
	return fd;
}

/* Read what is there; true when a whole message of c->need has arrived. */
static int read_some(struct conn *c, size_t msg)
{
	for (;;) {
		ssize_t n = read(c->fd, buf, c->need < BUF_SIZE ? c->need : BUF_SIZE);

		if (n > 0) {
			c->need -= n;
			if (!c->need) {
				c->need = msg;
				return 1;
			}
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		return -1;	/* closed or error */
	}
}

static __attribute__((noreturn)) int server(void)
{
	struct epoll_event ev, evs[MAX_EVENTS];
	int lfd = listen_on(opt_port), ep = epoll_create1(0);

	ev.events = EPOLLIN;
	ev.data.ptr = NULL;
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev))
		die("epoll");
	ready();
	for (;;) {
		int i, n = epoll_wait(ep, evs, MAX_EVENTS, -1);

		for (i = 0; i < n; i++) {
			struct conn *c = evs[i].data.ptr;
			int r;

			if (!c) {
				int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);

				if (fd < 0)
					continue;
				set_nodelay(fd);
				c = calloc(1, sizeof(*c));
				if (!c)
					die("calloc");
				c->fd = fd;
				c->need = opt_req;
				ev.events = EPOLLIN;
				ev.data.ptr = c;
				if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
					die("epoll_ctl");
				continue;
			}
			while ((r = read_some(c, opt_req)) == 1)
				write_all(c->fd, opt_resp);
			if (r < 0) {
				close(c->fd);
				free(c);
			}
		}
	}
}

/*
 * --spin N: N turns of an empty loop per response, work of the client's
 * own that tools/bench/insns compares with what tcp_rt adds (the same
 * instructions, spent in a process instead of the kernel).
 */
static void spin(unsigned long n)
{
	while (n--)
		__asm__ volatile("");
}

static int client(void)
{
	struct epoll_event ev, evs[MAX_EVENTS];
	struct conn *cs = calloc(opt_conns, sizeof(*cs));
	unsigned long long done = 0;
	int ep = epoll_create1(0);
	double start, end;
	unsigned int i;

	if (!cs || ep < 0)
		die("setup");
	for (i = 0; i < opt_conns; i++) {
		cs[i].fd = connect_to(opt_port);
		cs[i].need = opt_resp;
		fcntl(cs[i].fd, F_SETFL, O_NONBLOCK);
		ev.events = EPOLLIN;
		ev.data.ptr = &cs[i];
		if (epoll_ctl(ep, EPOLL_CTL_ADD, cs[i].fd, &ev))
			die("epoll_ctl");
	}
	start = now_s();
	end = start + opt_seconds;
	for (i = 0; i < opt_conns; i++)
		write_all(cs[i].fd, opt_req);
	while (now_s() < end) {
		int j, n = epoll_wait(ep, evs, MAX_EVENTS, 100);

		for (j = 0; j < n; j++) {
			struct conn *c = evs[j].data.ptr;
			unsigned int k = 0;
			int r = 0;

			/*
			 * Bounded: when the server answers before this loop
			 * reads again (a preemption at each write, as under a
			 * slow tracer), it would never end, nor the run.
			 */
			while (k++ < MAX_BURST && (r = read_some(c, opt_resp)) == 1) {
				done++;
				spin(opt_spin);
				write_all(c->fd, opt_req);
			}
			if (k > MAX_BURST)
				continue;	/* more later: epoll is level-triggered */
			if (r < 0) {
				fprintf(stderr, "rt_load: connection closed\n");
				return 1;
			}
		}
	}
	end = now_s();
	printf("requests %llu seconds %.3f rps %.1f\n", done, end - start,
	       done / (end - start));
	return 0;
}

/* Block in read() until the peer has closed its side. */
static void wait_eof(int fd)
{
	for (;;) {
		ssize_t n = read(fd, buf, BUF_SIZE);

		if (n == 0)
			return;
		if (n < 0 && errno != EINTR)
			die("read for the server's close");
	}
}

/*
 * Close a batch at a time, each batch only once the server has closed its
 * side of it, so that at most CLOSE_BATCH connections are closing at once.
 * Ten thousand closed together (all a process's sockets at its exit) leave
 * more orphans than tcp_max_orphans allows, and their ten thousand
 * retransmission timers then expire in one timer softirq: on an emulated
 * debug kernel that held both CPUs long enough for an RCU stall.
 */
static void close_paced(const int *fds, unsigned int n)
{
	unsigned int i, j, end;

	for (i = 0; i < n; i = end) {
		end = n - i > CLOSE_BATCH ? i + CLOSE_BATCH : n;
		for (j = i; j < end; j++)
			if (shutdown(fds[j], SHUT_WR))
				die("shutdown");
		for (j = i; j < end; j++) {
			wait_eof(fds[j]);
			close(fds[j]);
		}
	}
}

static int idle(void)
{
	int *fds = calloc(opt_conns, sizeof(*fds));
	unsigned int i;
	sigset_t term;
	int sig;

	if (!fds)
		die("calloc");
	/* blocked from the start, so a SIGTERM before sigwait() waits for it */
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &term, NULL))
		die("sigprocmask");
	for (i = 0; i < opt_conns; i++) {
		struct conn c = { .fd = connect_to(opt_port), .need = opt_resp };

		write_all(c.fd, opt_req);
		while (read_some(&c, opt_resp) == 0)
			;
		fds[i] = c.fd;
	}
	ready();
	errno = sigwait(&term, &sig);
	if (errno)
		die("sigwait");
	close_paced(fds, opt_conns);
	return 0;
}

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: rt_load server --port P [--req N] [--resp N] [--ready-file F]\n"
		"       rt_load client --port P [--conns C] [--seconds S] [--req N] [--resp N] [--spin N]\n"
		"       rt_load idle --port P --conns C --ready-file F\n");
	exit(status);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "conns", required_argument, NULL, 'c' },
		{ "seconds", required_argument, NULL, 's' },
		{ "req", required_argument, NULL, 'q' },
		{ "resp", required_argument, NULL, 'r' },
		{ "ready-file", required_argument, NULL, 'f' },
		{ "spin", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *mode;
	int o;

	if (argc < 2)
		usage(2);
	mode = argv[1];
	optind = 2;
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 'p': opt_port = atoi(optarg); break;
		case 'c': opt_conns = atoi(optarg); break;
		case 's': opt_seconds = atoi(optarg); break;
		case 'q': opt_req = atol(optarg); break;
		case 'r': opt_resp = atol(optarg); break;
		case 'f': opt_ready = optarg; break;
		case 'S': opt_spin = strtoul(optarg, NULL, 0); break;
		case 'h': usage(0); break;
		default: usage(2);
		}
	}
	if (!opt_port || !opt_conns || !opt_req || !opt_resp)
		usage(2);
	signal(SIGPIPE, SIG_IGN);
	raise_nofile();
	if (!strcmp(mode, "server"))
		return server();
	if (!strcmp(mode, "client"))
		return client();
	if (!strcmp(mode, "idle"))
		return idle();
	usage(2);
	return 2;
}
