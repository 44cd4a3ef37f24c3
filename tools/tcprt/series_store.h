/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Series runs kept on local disk (tcprt series --every ... --store DIR):
 * one gzip file a run, DIR/series-<start>-<width>x<buckets>.gz, the run's
 * lines as the module wrote them, and a bound in age and in bytes that
 * removes the oldest runs first.  Read back by time.  The recorder's
 * windows (tcprt series --recorder) are kept as runs too, named
 * series-<start>.<usec>-<width>x<buckets>.gz: two may begin in one second.
 */
#ifndef TCPRT_SERIES_STORE_H
#define TCPRT_SERIES_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A stored run, from its file's name. */
struct stored_run {
	char name[64];
	uint64_t start;		/* Unix seconds: when it was to begin */
	uint64_t start_us;	/* the same in microseconds */
	uint64_t width_us;
	uint64_t buckets;
	uint64_t bytes;		/* the file's size */
};

/*
 * "series-<start>[.<usec>]-<width>x<buckets>.gz" (usec: six digits): false
 * when @name is not that.
 */
bool stored_run_parse(const char *name, struct stored_run *r);
/* The first second after a run's last bucket. */
uint64_t stored_run_end(const struct stored_run *r);

/*
 * The runs of @dir, oldest first (*@n of them; the caller frees the
 * array).  -1 with errno when @dir cannot be read.
 */
int series_store_list(const char *dir, struct stored_run **runs, size_t *n);

/*
 * Copy the lines of @in (the module's file) into a new run of @dir that
 * begins at @start_us (Unix microseconds; named by the second when it is
 * a whole one), written under a temporary name and renamed when
 * complete, mode 0640.  *@lines: the lines copied.  0, or -1 with a
 * message printed.
 */
int series_store_save(const char *dir, FILE *in, uint64_t start_us,
		      uint64_t width_us, uint64_t buckets, uint64_t *lines);

/*
 * Remove the runs that ended before @oldest (Unix seconds; 0: none), then
 * the oldest while the runs take more than @max_bytes (0: no bound); the
 * newest run is always kept.  Returns how many were removed, -1 when
 * @dir cannot be read.
 */
int series_store_expire(const char *dir, uint64_t oldest, uint64_t max_bytes);

#endif
