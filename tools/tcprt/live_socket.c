// SPDX-License-Identifier: GPL-2.0
/* tcprt live's query socket: see live_socket.h. */
#define _GNU_SOURCE	/* accept4 */
#include "live_socket.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "util.h"

static const char too_many[] =
	"{\"ok\":false,\"error\":\"too many clients: tcprt live serves 64 at once\"}\n";
static const char too_long[] =
	"{\"ok\":false,\"error\":\"question longer than 512 bytes: closing\"}\n";

/* A socket at @path that a live process listens on: true. */
static bool in_use(const struct sockaddr_un *a)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool used;

	if (fd < 0)
		return false;
	used = connect(fd, (const struct sockaddr *)a, sizeof(*a)) == 0;
	close(fd);
	return used;
}

/* Remove a socket file nobody listens on; refuse anything else. */
static int clear_path(const struct sockaddr_un *a)
{
	struct stat st;

	if (lstat(a->sun_path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISSOCK(st.st_mode)) {
		warnx_("live: --socket %s: exists and is not a socket; not replaced",
		       a->sun_path);
		return -1;
	}
	if (in_use(a)) {
		warnx_("live: --socket %s: another process serves it", a->sun_path);
		return -1;
	}
	if (unlink(a->sun_path) < 0) {
		warnx_("live: --socket %s: cannot remove the stale socket: %s",
		       a->sun_path, strerror(errno));
		return -1;
	}
	return 0;
}

int lsock_open(struct lsock *s, const char *path, gid_t gid,
	       lsock_answer_fn answer, void *ctx)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	mode_t old;
	int st;

	*s = (struct lsock){ .fd = -1, .answer = answer, .ctx = ctx };
	if (strlen(path) >= sizeof(a.sun_path)) {
		warnx_("live: --socket %s: longer than %zu bytes", path,
		       sizeof(a.sun_path) - 1);
		return -1;
	}
	strcpy(a.sun_path, path);
	if (clear_path(&a) < 0)
		return -1;
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->fd < 0) {
		warnx_("live: socket: %s", strerror(errno));
		return -1;
	}
	/* never, even for an instant, more than 0660 */
	old = umask(0117);
	st = bind(s->fd, (struct sockaddr *)&a, sizeof(a));
	umask(old);
	if (st < 0 || listen(s->fd, LSOCK_CLIENTS) < 0) {
		warnx_("live: --socket %s: %s", path, strerror(errno));
		close(s->fd);
		s->fd = -1;
		return -1;
	}
	s->path = strdup(path);
	if (!s->path)
		die(EXIT_RUNTIME, "out of memory");
	if ((gid != (gid_t)-1 && chown(path, (uid_t)-1, gid) < 0) ||
	    chmod(path, 0660) < 0) {
		warnx_("live: --socket %s: setting its group and mode: %s", path,
		       strerror(errno));
		lsock_close(s);
		return -1;
	}
	return 0;
}

unsigned int lsock_pollfds(const struct lsock *s, struct pollfd *pfd)
{
	unsigned int i, n = 0;

	pfd[n++] = (struct pollfd){ .fd = s->fd, .events = POLLIN };
	for (i = 0; i < s->nclients; i++) {
		const struct lsock_client *c = &s->c[i];
		short ev = c->closing ? 0 : POLLIN;

		if (c->out.len > c->out_off)
			ev |= POLLOUT;
		pfd[n++] = (struct pollfd){ .fd = c->fd, .events = ev };
	}
	return n;
}

static void drop_client(struct lsock *s, unsigned int i)
{
	close(s->c[i].fd);
	buf_free(&s->c[i].out);
	s->c[i] = s->c[--s->nclients];
	memset(&s->c[s->nclients], 0, sizeof(s->c[0]));
}

static void accept_clients(struct lsock *s)
{
	int fd;

	while ((fd = accept4(s->fd, NULL, NULL,
			     SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		if (s->nclients == LSOCK_CLIENTS) {
			/* a best-effort word on a fresh socket: never blocks */
			if (write(fd, too_many, sizeof(too_many) - 1) < 0)
				(void)0;
			close(fd);
			s->refused++;
			continue;
		}
		s->c[s->nclients++] = (struct lsock_client){ .fd = fd };
		s->accepted++;
	}
}

/* Answer the complete lines of the client's input. */
static void answer_lines(struct lsock *s, struct lsock_client *c)
{
	char *nl;

	while (!c->closing && (nl = memchr(c->in, '\n', c->in_len))) {
		size_t len = (size_t)(nl - c->in);

		*nl = '\0';
		if (len && c->in[len - 1] == '\r')
			c->in[len - 1] = '\0';
		s->answer(c->in, &c->out, s->ctx);
		s->answered++;
		memmove(c->in, nl + 1, c->in_len - len - 1);
		c->in_len -= len + 1;
	}
	if (!c->closing && c->in_len > LSOCK_LINE_MAX) {
		buf_add(&c->out, too_long, sizeof(too_long) - 1);
		c->closing = true;
		s->oversized++;
	}
}

/* Read what the client sent; false: it is gone. */
static bool read_client(struct lsock *s, struct lsock_client *c)
{
	ssize_t n;

	for (;;) {
		/* after an error answer, nothing more is read; a client with
		 * more unread answers than allowed is closed by write_client() */
		if (c->closing || c->out.len - c->out_off > LSOCK_OUT_MAX)
			return true;
		n = read(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len);
		if (n == 0) {
			/* it sent all it will: answer, then close */
			c->closing = true;
			return true;
		}
		if (n < 0)
			return errno == EAGAIN || errno == EINTR;
		c->in_len += (size_t)n;
		answer_lines(s, c);
	}
}

/* Send what is queued; false: the client is to be closed. */
static bool write_client(struct lsock *s, struct lsock_client *c)
{
	while (c->out.len > c->out_off) {
		ssize_t n = send(c->fd, c->out.p + c->out_off,
				 c->out.len - c->out_off, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			return false;
		}
		c->out_off += (size_t)n;
	}
	if (c->out_off == c->out.len) {
		c->out.len = c->out_off = 0;
		return !c->closing;
	}
	if (c->out.len - c->out_off > LSOCK_OUT_MAX) {
		s->slow++;
		return false;
	}
	return true;
}

void lsock_service(struct lsock *s, const struct pollfd *pfd, unsigned int n)
{
	unsigned int i, k;

	/* from the last, so that dropping one moves only those seen */
	for (i = n; i-- > 1;) {
		struct lsock_client *c;
		bool keep = true;

		if (!pfd[i].revents)
			continue;
		for (k = 0; k < s->nclients && s->c[k].fd != pfd[i].fd; k++)
			;
		if (k == s->nclients)
			continue;
		c = &s->c[k];
		if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR))
			keep = read_client(s, c);
		if (keep)
			keep = write_client(s, c);
		if (!keep)
			drop_client(s, k);
	}
	if (pfd[0].revents & POLLIN)
		accept_clients(s);
}

void lsock_close(struct lsock *s)
{
	while (s->nclients)
		drop_client(s, 0);
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	if (s->path)
		unlink(s->path);
	free(s->path);
	s->path = NULL;
}
