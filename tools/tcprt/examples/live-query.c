// SPDX-License-Identifier: GPL-2.0
/*
 * Ask tcprt live's socket one question and print the answer: the client a
 * service would embed (docs/live.md).  Build: cc -o live-query live-query.c
 *
 *   live-query /run/tcprt-live/live.sock 'port=8080 window=10s'
 */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char answer[65536];
	size_t len = 0;
	ssize_t n;
	int fd;

	if (argc != 3 || strlen(argv[1]) >= sizeof(a.sun_path)) {
		fprintf(stderr, "usage: live-query SOCKET 'QUESTION'\n");
		return 2;
	}
	strcpy(a.sun_path, argv[1]);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror(argv[1]);
		return 1;
	}
	/* one question, one line; the answer is one line of JSON */
	if (dprintf(fd, "%s\n", argv[2]) < 0) {
		perror("write");
		return 1;
	}
	while (len < sizeof(answer) - 1 &&
	       (n = read(fd, answer + len, sizeof(answer) - 1 - len)) > 0) {
		len += (size_t)n;
		if (answer[len - 1] == '\n')
			break;
	}
	close(fd);
	answer[len] = '\0';
	fputs(answer, stdout);
	/* {"ok":false,...}: the question was wrong */
	return strncmp(answer, "{\"ok\":true", 10) ? 1 : 0;
}
