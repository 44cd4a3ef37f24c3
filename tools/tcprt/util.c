// SPDX-License-Identifier: GPL-2.0
/* Small helpers shared by every part of tcprt. */
#define _XOPEN_SOURCE 700	/* strptime() */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

volatile int stop_requested;
volatile int reload_requested;

static void vmsg(const char *fmt, va_list ap)
{
	fflush(stdout);
	fputs("tcprt: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void warnx_(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

void die(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	exit(status);
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		die(EXIT_RUNTIME, "out of memory");
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		die(EXIT_RUNTIME, "out of memory");
	return p;
}

void *xrealloc(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		die(EXIT_RUNTIME, "out of memory");
	p = realloc(p, n && size ? n * size : 1);
	if (!p)
		die(EXIT_RUNTIME, "out of memory");
	return p;
}

bool parse_u64(const char *s, size_t len, uint64_t *v)
{
	uint64_t x = 0;
	size_t i;

	if (len == 0)
		return false;
	for (i = 0; i < len; i++) {
		unsigned int d;

		if (s[i] < '0' || s[i] > '9')
			return false;
		d = (unsigned int)(s[i] - '0');
		if (x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*v = x;
	return true;
}

bool parse_port(const char *s, uint16_t *port)
{
	uint64_t v;

	if (!parse_u64(s, strlen(s), &v) || v < 1 || v > 65535)
		return false;
	*port = (uint16_t)v;
	return true;
}

bool parse_seconds(const char *s, uint64_t *us)
{
	const char *dot = strchr(s, '.');
	size_t ilen = dot ? (size_t)(dot - s) : strlen(s);
	uint64_t whole = 0, frac = 0, scale = USEC_PER_SEC;

	if (ilen == 0 && !dot)
		return false;
	if (ilen && !parse_u64(s, ilen, &whole))
		return false;
	if (dot) {
		const char *f = dot + 1;

		if (!*f && !ilen)
			return false;
		for (; *f; f++) {
			if (*f < '0' || *f > '9')
				return false;
			scale /= 10;
			frac += (uint64_t)(*f - '0') * scale;
		}
	}
	if (whole > UINT64_MAX / USEC_PER_SEC - 1)
		return false;
	*us = whole * USEC_PER_SEC + frac;
	return true;
}

uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

bool parse_bytes(const char *s, uint64_t *v)
{
	size_t len = strlen(s);
	uint64_t mult = 1;

	if (len > 1) {
		switch (s[len - 1]) {
		case 'k': mult = 1000; break;
		case 'M': mult = 1000000; break;
		case 'G': mult = 1000000000; break;
		}
		if (mult > 1)
			len--;
	}
	if (!parse_u64(s, len, v) || *v > UINT64_MAX / mult)
		return false;
	*v *= mult;
	return true;
}

void sleep_us(uint64_t us)
{
	struct timespec ts = {
		.tv_sec = (time_t)(us / USEC_PER_SEC),
		.tv_nsec = (long)(us % USEC_PER_SEC) * 1000,
	};

	nanosleep(&ts, NULL);	/* EINTR: the caller checks stop_requested */
}

void fmt_time(char *buf, size_t len, uint64_t t_us, bool frac)
{
	time_t sec = (time_t)(t_us / USEC_PER_SEC);
	struct tm tm;

	if (!gmtime_r(&sec, &tm)) {
		snprintf(buf, len, "@%llu", (unsigned long long)sec);
		return;
	}
	if (frac)
		snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%06lluZ",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
			 tm.tm_hour, tm.tm_min, tm.tm_sec,
			 (unsigned long long)(t_us % USEC_PER_SEC));
	else
		snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02dZ",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
			 tm.tm_hour, tm.tm_min, tm.tm_sec);
}

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void on_reload(int sig)
{
	(void)sig;
	reload_requested = 1;
}

void signals_reload_init(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_reload;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGHUP, &sa, NULL);
}

int name_index(const char *const *names, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (names[i] && !strcmp(names[i], s))
			return (int)i;
	return -1;
}

void signals_init(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int open_private(const char *path, const char *what, char *err, size_t len)
{
	struct stat st;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		snprintf(err, len, "%s %s: %s", what, path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, len, "%s %s: not a regular file", what, path);
		close(fd);
		return -1;
	}
	if (st.st_mode & 077) {
		snprintf(err, len, "%s %s: group or other users have access to it (mode %04o): chmod 600 it",
			 what, path, (unsigned int)(st.st_mode & 07777));
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * A secret alone in a file: one line (a final newline is not part of
 * it), in a regular file no other user may read or change.
 */
char *read_secret(const char *path, const char *what, char *err, size_t len)
{
	char buf[SECRET_MAX + 2];
	ssize_t n;
	char *s;
	int fd;

	fd = open_private(path, what, err, len);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0) {
		snprintf(err, len, "%s %s: %s", what, path, strerror(errno));
		return NULL;
	}
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	if (n > 0 && buf[n - 1] == '\r')
		buf[--n] = '\0';
	if (!n || n > SECRET_MAX || strlen(buf) != (size_t)n || strchr(buf, '\n')) {
		explicit_bzero(buf, sizeof(buf));
		snprintf(err, len, "%s %s: not one line of 1 to %d bytes",
			 what, path, SECRET_MAX);
		return NULL;
	}
	s = strdup(buf);
	explicit_bzero(buf, sizeof(buf));
	if (!s)
		die(EXIT_RUNTIME, "out of memory");
	return s;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

void tohex(char *out, const unsigned char *p, size_t n)
{
	static const char digit[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digit[p[i] >> 4];
		out[2 * i + 1] = digit[p[i] & 15];
	}
}

bool unhex(const char *s, unsigned char *out, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return false;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return true;
}

static size_t key_hash(const char *key)
{
	uint64_t h = 14695981039346656037ULL;	/* FNV-1a */

	while (*key)
		h = (h ^ (unsigned char)*key++) * 1099511628211ULL;
	return (size_t)(h ^ (h >> 32));
}

static const char *key_at(const void *arr, size_t size, size_t i)
{
	return (const char *)arr + i * size;
}

/* The slot of @key in @x: its item's, or the empty one it would take. */
static size_t *key_slot(struct keyidx *x, const char *key, const void *arr,
			size_t size)
{
	size_t i = key_hash(key) & (x->cap - 1);

	while (x->slot[i] && strcmp(key_at(arr, size, x->slot[i] - 1), key))
		i = (i + 1) & (x->cap - 1);
	return &x->slot[i];
}

size_t keyidx_find(struct keyidx *x, const char *key, const void *arr,
		   size_t n, size_t size)
{
	size_t *slot;

	if (2 * (x->n + 1) > x->cap) {
		struct keyidx y = { .cap = x->cap ? 2 * x->cap : 64, .n = x->n };
		size_t i;

		y.slot = xcalloc(y.cap, sizeof(*y.slot));
		for (i = 0; i < x->cap; i++)
			if (x->slot[i])
				*key_slot(&y, key_at(arr, size, x->slot[i] - 1),
					  arr, size) = x->slot[i];
		free(x->slot);
		*x = y;
	}
	slot = key_slot(x, key, arr, size);
	if (*slot)
		return *slot - 1;
	*slot = n + 1;
	x->n++;
	return n;
}

size_t keyidx_get(const struct keyidx *x, const char *key, const void *arr,
		  size_t size)
{
	size_t i;

	if (!x->cap)
		return SIZE_MAX;
	i = *key_slot((struct keyidx *)x, key, arr, size);
	return i ? i - 1 : SIZE_MAX;
}

void keyidx_free(struct keyidx *x)
{
	free(x->slot);
	*x = (struct keyidx){ 0 };
}

bool parse_age(const char *s, size_t len, uint64_t *count, uint64_t *unit)
{
	static const struct { char unit; uint64_t sec; } units[] = {
		{ 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 },
	};
	size_t i;

	for (i = 0; len > 1 && i < sizeof(units) / sizeof(units[0]); i++)
		if (s[len - 1] == units[i].unit && parse_u64(s, len - 1, count)) {
			*unit = units[i].sec;
			return true;
		}
	return false;
}

bool parse_when(const char *s, uint64_t now, uint64_t *t)
{
	size_t len = strlen(s);
	struct tm tm = { 0 };
	uint64_t v, unit;
	char *end;

	if (parse_age(s, len, &v, &unit) && v < now / unit) {
		*t = now - v * unit;
		return true;
	}
	if (parse_u64(s, len, t))
		return true;
	end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!end || (*end && strcmp(end, "Z")))
		return false;
	*t = (uint64_t)timegm(&tm);
	return true;
}

int write_file_atomic(const char *path, void (*fill)(FILE *f, void *arg),
		      void *arg)
{
	const char *slash = strrchr(path, '/');
	int dlen = slash ? (int)(slash - path + 1) : 0;
	char tmp[4096];
	FILE *f;
	int err = 0;

	/* "dir/name.prom" -> "dir/.name.prom.tmp.PID" */
	if (snprintf(tmp, sizeof(tmp), "%.*s.%s.tmp.%ld", dlen, path,
		     path + dlen, (long)getpid()) >= (int)sizeof(tmp)) {
		warnx_("%s: path too long", path);
		return -1;
	}
	f = fopen(tmp, "w");
	if (!f) {
		warnx_("%s: %s", tmp, strerror(errno));
		return -1;
	}
	fill(f, arg);
	if (fflush(f) || ferror(f) || fsync(fileno(f)))
		err = errno ? errno : EIO;
	if (fclose(f) && !err)
		err = errno;
	if (!err && chmod(tmp, 0644))
		err = errno;
	if (!err && rename(tmp, path))
		err = errno;
	if (err) {
		warnx_("writing %s: %s", path, strerror(err));
		unlink(tmp);
		return -1;
	}
	return 0;
}
