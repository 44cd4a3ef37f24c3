/* SPDX-License-Identifier: GPL-2.0 */
/* Small helpers shared by every part of tcprt. */
#ifndef TCPRT_UTIL_H
#define TCPRT_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit statuses of every command. */
#define EXIT_OK		0
#define EXIT_RUNTIME	1
#define EXIT_USAGE	2

#define USEC_PER_SEC	1000000ULL

/* "tcprt: message" on stderr. */
void warnx_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "tcprt: message" on stderr, then exit with @status. */
void die(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n, size_t size);
char *xstrdup(const char *s);

/* Strict decimal parsers: digits only, no sign, no overflow. */
bool parse_u64(const char *s, size_t len, uint64_t *v);
/* A port 1..65535. */
bool parse_port(const char *s, uint16_t *port);
/* Bytes: decimal with an optional k, M or G (powers of 1000). */
bool parse_bytes(const char *s, uint64_t *v);
/* Seconds, decimal with an optional fraction ("2", "0.5"), into microseconds. */
bool parse_seconds(const char *s, uint64_t *us);

/* Wall-clock time in microseconds since the epoch. */
uint64_t now_us(void);
/* A clock that never goes back (CLOCK_MONOTONIC), in microseconds. */
uint64_t mono_us(void);
/* Sleep @us microseconds, or less when a signal arrives. */
void sleep_us(uint64_t us);

/* "2026-11-21T10:04:05.123456Z" (@frac: with microseconds). */
void fmt_time(char *buf, size_t len, uint64_t t_us, bool frac);

/*
 * A secret alone in a file (a password, a key): one line of 1 to
 * SECRET_MAX bytes, a final newline not part of it, in a regular file
 * that no group or other user may access.  NULL with @err (naming @what
 * and @path) when it is not; the caller frees (and wipes) it.
 */
/*
 * Open @path for reading when it is a regular file no other user may
 * read or change (a key, a token): the descriptor, or -1 with the reason,
 * naming @what (an option), in @err.
 */
int open_private(const char *path, const char *what, char *err, size_t len);

#define SECRET_MAX	4096
char *read_secret(const char *path, const char *what, char *err, size_t len);

/* @n bytes at @p as 2 * @n lowercase hex digits at @out (no terminator). */
void tohex(char *out, const unsigned char *p, size_t n);
/* @n bytes from the 2 * @n hex digits (either case) at @s: false if not. */
bool unhex(const char *s, unsigned char *out, size_t n);

/*
 * An index of a growing array's items by a key string, in constant time
 * (open addressing).  Each item (@size bytes) begins with its key, a
 * NUL-terminated char array.  keyidx_find() gives the index in @arr (@n
 * items) of the item of @key, or indexes @key as item @n (the caller
 * appends it) and returns @n.
 */
struct keyidx {
	size_t *slot;		/* item + 1; 0: empty */
	size_t cap, n;
};

size_t keyidx_find(struct keyidx *x, const char *key, const void *arr,
		   size_t n, size_t size);
/* The index of the item of @key, or SIZE_MAX: nothing indexed. */
size_t keyidx_get(const struct keyidx *x, const char *key, const void *arr,
		  size_t size);
void keyidx_free(struct keyidx *x);

/*
 * An age or a duration, "N" then a unit: s, m, h or d (@len bytes at @s):
 * its count and the unit's seconds; false when it is not that.
 */
bool parse_age(const char *s, size_t len, uint64_t *count, uint64_t *unit);

/*
 * A time in Unix seconds: Unix seconds, YYYY-MM-DDTHH:MM:SSZ (UTC), or an
 * age before @now (parse_age()); false when @s is none of them.
 */
bool parse_when(const char *s, uint64_t now, uint64_t *t);

/* The index of @s among the @n strings of @names, or -1. */
int name_index(const char *const *names, size_t n, const char *s);

/* Install handlers: SIGINT/SIGTERM set the stop flag; SIGPIPE ignored. */
/*
 * Write @path whole or not at all: @fill writes the content to a file in
 * the same folder under a name that starts with '.' (.NAME.tmp.PID: what
 * node_exporter ignores), synced, mode 0644, then renamed over @path; a
 * reader sees the old file or the new one.  0, or -1 after saying why.
 */
int write_file_atomic(const char *path, void (*fill)(FILE *f, void *arg),
		      void *arg);

void signals_init(void);
extern volatile int stop_requested;
/* SIGHUP sets reload_requested (tcprt agent: read the configuration again). */
void signals_reload_init(void);
extern volatile int reload_requested;

#endif
