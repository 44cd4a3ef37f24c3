// SPDX-License-Identifier: GPL-2.0
/*
 * tools/bench/live's client: ask tcprt live's socket the same question N
 * times over one connection, one at a time (ask, read the whole answer,
 * ask again), and print the round trips' p50, p99, max and mean in
 * microseconds, and the answer's size.
 *
 *   live_query SOCKET N 'QUESTION'
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	static char buf[1 << 20];
	double *t, sum = 0, t0;
	size_t len = 0, qlen;
	char q[600];
	long i, n;
	int fd;

	n = argc == 4 ? atol(argv[2]) : 0;
	if (n <= 0 || strlen(argv[1]) >= sizeof(a.sun_path)) {
		fprintf(stderr, "usage: live_query SOCKET N 'QUESTION'\n");
		return 2;
	}
	strcpy(a.sun_path, argv[1]);
	qlen = (size_t)snprintf(q, sizeof(q), "%s\n", argv[3]);
	t = calloc((size_t)n, sizeof(*t));
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (!t || fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror(argv[1]);
		return 1;
	}
	for (i = 0; i < n; i++) {
		t0 = now_us();
		if (write(fd, q, qlen) != (ssize_t)qlen) {
			perror("write");
			return 1;
		}
		len = 0;
		do {
			ssize_t r = read(fd, buf + len, sizeof(buf) - len);

			if (r <= 0) {
				fprintf(stderr, "live_query: the answer ended early\n");
				return 1;
			}
			len += (size_t)r;
		} while (buf[len - 1] != '\n');
		t[i] = now_us() - t0;
		sum += t[i];
	}
	if (strncmp(buf, "{\"ok\":true", 10)) {
		fprintf(stderr, "live_query: %.*s", (int)len, buf);
		return 1;
	}
	qsort(t, (size_t)n, sizeof(*t), cmp);
	printf("%ld questions: p50 %.1f us, p99 %.1f us, max %.1f us, mean %.1f us; answer %zu bytes\n",
	       n, t[n / 2], t[(n * 99) / 100], t[n - 1], sum / (double)n, len);
	close(fd);
	free(t);
	return 0;
}
