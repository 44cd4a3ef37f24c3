// SPDX-License-Identifier: GPL-2.0
/*
 * held_send - a tracked socket owned by a process for as long as the test
 * says: a send() whose buffer's page fault waits on a userfaultfd.
 *
 *   held_send --port P --ready-file F
 *
 * Listens on 127.0.0.1:P, connects to itself and accepts: the accepted
 * socket is the server's end of a connection on P (tracked with
 * lports=P).  It then send()s 64 KiB from a mapping registered with a
 * userfaultfd and never touched: TCP takes the socket's lock (the socket
 * is owned by this process), copies from the buffer, faults, and waits in
 * the fault.  A thread reads the fault's event, writes F ("held"), and
 * waits for SIGUSR1; then it fills the mapping with zeroes, the send()
 * goes on and returns, and held_send closes both ends and exits 0.
 * (docs/design.md: a send() can own its socket for as long as a page
 * fault of its buffer takes - userfaultfd, FUSE, a hung NFS mapping.)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#define LEN	(64 * 1024)

static const char *ready_file;
static char *buf;
static int uffd;

static void die(const char *what)
{
	fprintf(stderr, "held_send: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The fault's event, the ready file, SIGUSR1, then the pages. */
static void *handler(void *arg)
{
	struct uffd_msg msg;
	struct uffdio_zeropage zp = {
		.range = { .start = (unsigned long)buf, .len = LEN },
	};
	sigset_t usr1;
	int sig, fd;

	(void)arg;
	for (;;) {
		ssize_t n = read(uffd, &msg, sizeof(msg));

		if (n == sizeof(msg) && msg.event == UFFD_EVENT_PAGEFAULT)
			break;
		if (n < 0 && errno != EINTR && errno != EAGAIN)
			die("read userfaultfd");
	}
	fd = open(ready_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, "held\n", 5) != 5 || close(fd))
		die(ready_file);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	if (sigwait(&usr1, &sig))
		die("sigwait");
	if (ioctl(uffd, UFFDIO_ZEROPAGE, &zp) && errno != EEXIST)
		die("UFFDIO_ZEROPAGE");
	return NULL;
}

static int listen_on(int port)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 1))
		die("listen");
	return fd;
}

int main(int argc, char **argv)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	int port, lfd, cfd, sfd;
	pthread_t thr;
	sigset_t usr1;
	ssize_t sent;

	if (argc != 5 || strcmp(argv[1], "--port") || strcmp(argv[3], "--ready-file")) {
		fprintf(stderr, "usage: held_send --port P --ready-file F\n");
		return 2;
	}
	port = atoi(argv[2]);
	ready_file = argv[4];
	/* SIGUSR1 waits for the handler's sigwait(), in every thread */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	if (pthread_sigmask(SIG_BLOCK, &usr1, NULL))
		die("sigmask");

	buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		die("mmap");
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (uffd < 0)
		die("userfaultfd");
	if (ioctl(uffd, UFFDIO_API, &api))
		die("UFFDIO_API");
	reg.range.start = (unsigned long)buf;
	reg.range.len = LEN;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		die("UFFDIO_REGISTER");

	lfd = listen_on(port);
	cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (cfd < 0 || getsockname(lfd, (struct sockaddr *)&a, &alen) ||
	    connect(cfd, (struct sockaddr *)&a, sizeof(a)))
		die("connect");
	sfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (sfd < 0)
		die("accept");
	if (pthread_create(&thr, NULL, handler, NULL))
		die("pthread_create");

	sent = send(sfd, buf, LEN, 0);	/* owns sfd's socket until SIGUSR1 */
	if (sent <= 0)
		die("send");
	if (pthread_join(thr, NULL))
		die("pthread_join");
	printf("sent %zd\n", sent);
	close(sfd);
	close(cfd);
	close(lfd);
	return 0;
}
