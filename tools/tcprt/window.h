/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sliding windows of tasks, live: per key (a service port and role, and
 * what --by adds: a container, a netns, a peer), over several window
 * lengths at once, the count and rates, bytes each way, percentiles of the
 * task times and of their breakdown's parts, RTT mean and spread,
 * retransmissions per 1000 segments, failures per 1000 tasks and each
 * key's share of the bytes.
 *
 * Layout.  Time is cut into whole seconds (the record's start time, Unix
 * seconds).  Each key has a ring of one slot per second of the longest
 * window; a slot holds its second's counters and, per measure, a sparse
 * histogram (the log-linear buckets of hist.h that are used, with their
 * counts).  Each window length has, per key, a running aggregate: counters
 * and a histogram per measure.  A record is added to its slot and to the
 * aggregate of every window that covers its second - the incremental
 * update; when the clock passes a second, the slot that leaves a window
 * is subtracted from that window's aggregate (histograms subtract bucket
 * by bucket).  No window is ever recomputed from its records, and memory is
 * bounded by keys x (slots + windows) x buckets used, not by the rate.
 *
 * A window of W seconds at clock time T holds the tasks that started in
 * the seconds floor(T) - W + 1 .. floor(T): the current second, which is
 * still filling, and the W - 1 before it, so between W - 1 and W seconds
 * of tasks; its rates divide by that exact span (T - its first second),
 * and by less while the table has not run for W seconds.  Max and min
 * are not subtractable: they are taken from the slots at query time.
 * Percentiles are those of hist.h, within 0.79 % of the exact value.
 *
 * A key whose latest task left the longest window has nothing left in
 * any: it is dropped (counted in `expired`) and its place is free for
 * another, so that a host that sees many peers over a day keeps serving
 * new ones within max_keys; it comes back with its next task.
 *
 * The clock only moves forward: to the wall clock (win_advance) or to a
 * record's start (a record ahead of the clock moves it).  A record of a
 * second no longer in the ring (older than the longest window) is counted
 * in `late` and not added.  With max_ahead_us set (the wall clock's
 * tables), a record that starts more than that after the clock is counted
 * in `future` and not added: one bad time stamp must not carry the clock
 * away and make every later record late.
 *
 * Single-threaded: the caller owns the table (tcprt live's one loop).
 */
#ifndef TCPRT_WINDOW_H
#define TCPRT_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "hist.h"
#include "record.h"
#include "util.h"

/* The measures with a distribution: the task times, then their parts. */
enum wm {
	WM_DURATION, WM_PROCESS, WM_UPLOAD, WM_DOWNLOAD, WM_MIN_RTT,
	WM_RQ_WAIT, WM_APP, WM_SQ_WAIT,
	WM_RWND_LIMITED, WM_SNDBUF_LIMITED, WM_APP_LIMITED, WM_SENDING,
	WM_N
};
extern const char *const wm_name[WM_N];

#define WIN_MAX		4		/* window lengths at once */
#define WIN_MAX_SEC	3600		/* the longest window */
#define WIN_KEY_MAX	320		/* "port/role/key" */
#define WIN_OTHER	"other"		/* the key of records past max_keys */

/* Counters of a slot or a window: all subtract exactly. */
struct wcount {
	uint64_t tasks;
	uint64_t type[REC_E];		/* R W N P */
	uint64_t bytes_in, bytes_out;	/* received, sent by the local end */
	uint64_t retrans, segs_out;	/* segs_out: ceil(sent / mss) */
	uint64_t rtt_n, rtt_sum;	/* min RTT, us */
	unsigned __int128 rtt_sumsq;
};

/* A sparse histogram: the buckets (hist_index) used, sorted. */
struct wbin {
	uint16_t idx;
	uint32_t count;
};

struct wsparse {
	struct wbin *bin;
	uint32_t nbin, cap;
	uint64_t n, sum, min, max;
};

struct wslot {
	int64_t sec;			/* the second it holds; -1: none */
	struct wcount c;
	struct wsparse *m;		/* WM_N of them; NULL until used */
};

struct wagg {
	struct wcount c;
	struct hist h[WM_N];		/* min and max not kept: see above */
	uint64_t sum[WM_N];
};

struct wkey {
	char id[WIN_KEY_MAX];		/* "port/role/key": the index's key */
	uint16_t port;
	enum role role;
	char *name;			/* the --by key; "" for --by port */
	struct wslot *ring;		/* span slots, ring[sec % span] */
	struct wagg *agg;		/* one per window length */
	int64_t last_sec;		/* the latest second it has a task of */
};

struct win_table {
	unsigned int nwin;
	unsigned int len[WIN_MAX];	/* window lengths, seconds, ascending */
	unsigned int span;		/* the longest */
	int64_t clock_sec;		/* the current second; -1: not started */
	uint64_t clock_us;		/* the clock, us */
	uint64_t start_us;		/* the clock when the first record came */
	struct wkey *key;
	size_t nkeys, cap, max_keys;
	struct keyidx idx;
	struct wcount tot[WIN_MAX];	/* every key's, for the shares */
	uint64_t records;		/* tasks added */
	uint64_t late;			/* older than the longest window */
	uint64_t max_ahead_us;		/* 0: records may move the clock freely */
	uint64_t future;		/* past max_ahead_us */
	uint64_t overflow;		/* counted under WIN_OTHER */
	uint64_t expired;		/* keys dropped: no task in any window */
};

/* @len: @nwin lengths in seconds, ascending, 1..WIN_MAX_SEC. */
void win_init(struct win_table *t, const unsigned int *len, unsigned int nwin,
	      size_t max_keys);
void win_free(struct win_table *t);

/*
 * Move the clock to @now_us (never back); windows drop what left them, and
 * the table the keys with no task left (pointers to keys are then stale).
 */
void win_advance(struct win_table *t, uint64_t now_us);

/*
 * Add a task record (R W N P; others are ignored) under @name (the --by
 * key; "" for none).
 */
void win_add(struct win_table *t, const struct record *r, const char *name);

/* Keys in order: by port, then role, then name. */
int win_key_cmp(const struct wkey *a, const struct wkey *b);

/* The key of (@port, @role, @name), or NULL. */
const struct wkey *win_find(const struct win_table *t, uint16_t port,
			    enum role role, const char *name);

/* The figures of one key over one window, as win_figures() computes them. */
struct wfig {
	unsigned int len;		/* the window's length, s */
	double span;			/* the seconds it covers now */
	struct wcount c;
	double tasks_per_s, in_per_s, out_per_s;
	double share;			/* of every key's bytes in+out, 0..1 */
	double retrans_per_1000, fail_per_1000;
	double rtt_mean, rtt_stddev;	/* us */
	struct {
		uint64_t n, mean, p50, p90, p99, max;
	} m[WM_N];
};

/* @k NULL: a key without tasks (its rates and shares are 0). */
void win_figures(const struct win_table *t, const struct wkey *k,
		 unsigned int w, struct wfig *f);

/* One JSON object of @f (docs/live.md's form) appended to @b. */
void win_json(struct buf *b, const struct wfig *f);
/* The key as JSON members: "port":P,"role":"R","key":"K" */
void win_json_key(struct buf *b, const struct wkey *k);

#endif
