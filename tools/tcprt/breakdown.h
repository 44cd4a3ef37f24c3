/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tcprt summary's "where the time goes": the time breakdown fields of a
 * row's tasks (docs/records.md), the split of its process time and of its
 * transfer at the percentiles summary reports, as text and as a picture.
 *
 *   R  process (T2 - T1) = rq_wait + app + sq_wait
 *      download (T3 - T2) = rwnd_limited + sndbuf_limited + app_limited
 *                           + sending (the rest)
 *   P  upload (S1 - S0), split as the download; rq_wait and sq_wait are
 *      outside the service time: they get their own percentiles only
 *
 * W, N and E rows get none (only R and P records are given to bd_add).
 */
#ifndef TCPRT_BREAKDOWN_H
#define TCPRT_BREAKDOWN_H

#include <stdint.h>
#include <stdio.h>

#include "record.h"
#include "split.h"

#define NBREAKDOWN	(EXT_BD_END - EXT_BREAKDOWN)

struct breakdown {
	enum rec_type type;		/* R or P */
	struct split process;		/* R: rq_wait, app, sq_wait */
	struct split transfer;		/* rwnd_limited ... sending */
	struct hist part[NBREAKDOWN];	/* each field's own values */
};

/* What bd_add left out of the splits: records that break the contract. */
struct bd_bad {
	uint64_t process;	/* rq_wait + app + sq_wait != process time */
	uint64_t transfer;	/* the limited parts past the transfer */
};

/* An empty breakdown of a row of @type (R or P). */
struct breakdown *bd_new(enum rec_type type);
/*
 * Add the breakdown fields of @r (R or P) to *@bd, allocated when the
 * first record with any of them comes; a record without leaves it NULL.
 */
void bd_add(struct breakdown **bd, const struct record *r, struct bd_bad *bad);
void bd_merge(struct breakdown **dst, const struct breakdown *src);
void bd_free(struct breakdown *bd);
/* What bd_add left out, on stderr (nothing when nothing was). */
void bd_report_bad(const struct bd_bad *bad);

/*
 * The block of a row, @label ("port 7700 server R") and its @count tasks:
 *   # where the time goes, port 7700 server R: 40 tasks, 40 with ...
 *     p50 process   2.5 ms = rq_wait   1.5 + app  0.8 + sq_wait 0.2
 *     ...
 */
void bd_print(FILE *out, const struct breakdown *bd, const char *label,
	      uint64_t count);

/* A row of the picture. */
struct bd_row {
	char label[96];
	const struct breakdown *bd;
};

/*
 * Draw @rows (at most BD_PLOT_ROWS) into the PNG @png with gnuplot: per
 * row, the process split and the transfer split at p50, p90 and p99 as
 * bars of 100 %, the total above each.  0, or -1 after a message.
 */
#define BD_PLOT_ROWS	8
int bd_plot(const char *png, const char *title, const struct bd_row *rows,
	    size_t n);

#endif
