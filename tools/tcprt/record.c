// SPDX-License-Identifier: GPL-2.0
/* Record types, field names and derived quantities. */
#include "record.h"

#include <string.h>

static const char *const fields_r[] = {
	"sent_bytes", "duration", "min_rtt", "retrans", "task_seq",
	"process_time", "upload_time", "recv_bytes", "out_of_order", "mss",
};
/* out_of_order: the vendor's W only; tcp_rt's W has the document's 9 */
static const char *const fields_w[] = {
	"sent_bytes", "duration", "min_rtt", "retrans", "task_seq",
	"process_time", "upload_time", "unacked_bytes", "out_of_order", "mss",
};
static const char *const fields_n[] = {
	"task_seq", "duration", "recv_bytes", "out_of_order", "mss",
};
static const char *const fields_p[] = {
	"sent_bytes", "duration", "min_rtt", "retrans", "task_seq",
	"service_time", "response_time", "recv_bytes", "out_of_order", "mss",
};
static const char *const fields_e[] = {
	"last_task_seq", "total_sent_bytes", "unacked_bytes",
	"total_recv_bytes", "total_retrans", "min_rtt",
};
static const char *const fields_stats[] = {
	"avg_duration", "avg_process_time", "drop_per_1000", "avg_rtt",
	"fail_per_1000", "avg_sent", "avg_upload_time", "avg_recv", "tasks",
};

#define DESC(l, n, f) { l, n, sizeof(f) / sizeof((f)[0]), f }

const struct rec_desc rec_desc[REC_NTYPES] = {
	[REC_R] = DESC('R', "R", fields_r),
	[REC_W] = DESC('W', "W", fields_w),
	[REC_N] = DESC('N', "N", fields_n),
	[REC_P] = DESC('P', "P", fields_p),
	[REC_E] = DESC('E', "E", fields_e),
	[REC_STATS] = DESC(0, "stats", fields_stats),
};

const char *const metric_name[M_NMETRICS] = {
	[M_DURATION] = "duration",
	[M_PROCESS] = "process",
	[M_UPLOAD] = "upload",
	[M_DOWNLOAD] = "download",
	[M_MIN_RTT] = "min_rtt",
};

const char *const rec_ext_name[REC_EXT_N] = {
	[EXT_NETNS] = "netns",
	[EXT_CGROUP] = "cgroup",
	[EXT_RQ_WAIT] = "rq_wait",
	[EXT_APP] = "app",
	[EXT_SQ_WAIT] = "sq_wait",
	[EXT_RWND_LIMITED] = "rwnd_limited",
	[EXT_SNDBUF_LIMITED] = "sndbuf_limited",
	[EXT_APP_LIMITED] = "app_limited",
	[EXT_SEQ] = "seq",
};

#define T(x)	(1u << REC_##x)

/* docs/records.md's table: N and E carry no part of the breakdown, P no app */
const unsigned int rec_ext_types[REC_EXT_N] = {
	[EXT_NETNS] = T(R) | T(W) | T(N) | T(P) | T(E),
	[EXT_CGROUP] = T(R) | T(W) | T(N) | T(P) | T(E),
	[EXT_RQ_WAIT] = T(R) | T(W) | T(P),
	[EXT_APP] = T(R) | T(W),
	[EXT_SQ_WAIT] = T(R) | T(W) | T(P),
	[EXT_RWND_LIMITED] = T(R) | T(W) | T(P),
	[EXT_SNDBUF_LIMITED] = T(R) | T(W) | T(P),
	[EXT_APP_LIMITED] = T(R) | T(W) | T(P),
	[EXT_SEQ] = T(R) | T(W) | T(N) | T(P) | T(E),
};

const char *const process_part_name[NPROCESS_PARTS] = {
	"rq_wait", "app", "sq_wait",
};
const char *const transfer_part_name[NTRANSFER_PARTS] = {
	"rwnd_limited", "sndbuf_limited", "app_limited", "sending",
};

/* Indexes into record.f; R, W and P share their first five fields. */
enum {
	F_SENT = 0, F_DURATION = 1, F_MIN_RTT = 2, F_RETRANS = 3,
	F_PROCESS = 5, F_UPLOAD = 6,		/* R W */
	F_SERVICE = 5, F_RESPONSE = 6,		/* P */
	F_RECV = 7,				/* R P */
	F_MSS = 9,				/* R W P */
	N_DURATION = 1, N_RECV = 2, N_MSS = 4,
	E_SENT = 1, E_RECV = 3, E_RETRANS = 4, E_MIN_RTT = 5,
};

int rec_type_of(char letter)
{
	int t;

	for (t = 0; t < REC_NTYPES; t++)
		if (rec_desc[t].letter && rec_desc[t].letter == letter)
			return t;
	return -1;
}

int rec_ext_of(const char *name, size_t len)
{
	int e;

	for (e = 0; e < REC_EXT_N; e++)
		if (strlen(rec_ext_name[e]) == len &&
		    !memcmp(rec_ext_name[e], name, len))
			return e;
	return -1;
}

static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* Field @i of @r, when its line had it. */
static bool get(const struct record *r, unsigned int i, uint64_t *v)
{
	if (!rec_has(r, i))
		return false;
	*v = r->f[i];
	return true;
}

/* @a - (@b + @c), clamped at 0, when the line had all three. */
static bool get_rest(const struct record *r, unsigned int a, unsigned int b,
		     unsigned int c, uint64_t *v)
{
	if (!rec_has(r, a) || !rec_has(r, b) || !rec_has(r, c))
		return false;
	*v = sub0(r->f[a], r->f[b] + r->f[c]);
	return true;
}

bool rec_metric(const struct record *r, enum metric m, uint64_t *v)
{
	switch (r->type) {
	case REC_R:
	case REC_W:
		switch (m) {
		case M_DURATION: return get(r, F_DURATION, v);
		case M_PROCESS: return get(r, F_PROCESS, v);
		case M_UPLOAD: return get(r, F_UPLOAD, v);
		case M_DOWNLOAD:
			return get_rest(r, F_DURATION, F_UPLOAD, F_PROCESS, v);
		case M_MIN_RTT: return get(r, F_MIN_RTT, v);
		default: return false;
		}
	case REC_P:
		switch (m) {
		case M_DURATION: return get(r, F_DURATION, v);
		case M_PROCESS: return get(r, F_SERVICE, v);
		case M_UPLOAD:
			return get_rest(r, F_DURATION, F_SERVICE, F_RESPONSE, v);
		case M_DOWNLOAD: return get(r, F_RESPONSE, v);
		case M_MIN_RTT: return get(r, F_MIN_RTT, v);
		default: return false;
		}
	case REC_N:
		return m == M_DURATION && get(r, N_DURATION, v);
	case REC_E:
		return m == M_MIN_RTT && get(r, E_MIN_RTT, v);
	default:
		return false;
	}
}

/* Field @i of @r, or 0 when its line had none. */
static uint64_t get0(const struct record *r, unsigned int i)
{
	return rec_has(r, i) ? r->f[i] : 0;
}

uint64_t rec_sent_bytes(const struct record *r)
{
	switch (r->type) {
	case REC_R: case REC_W: case REC_P: return get0(r, F_SENT);
	case REC_E: return get0(r, E_SENT);
	default: return 0;
	}
}

uint64_t rec_recv_bytes(const struct record *r)
{
	switch (r->type) {
	case REC_R: case REC_P: return get0(r, F_RECV);
	case REC_N: return get0(r, N_RECV);
	case REC_E: return get0(r, E_RECV);
	default: return 0;
	}
}

uint64_t rec_retrans(const struct record *r)
{
	switch (r->type) {
	case REC_R: case REC_W: case REC_P: return get0(r, F_RETRANS);
	case REC_E: return get0(r, E_RETRANS);
	default: return 0;
	}
}

uint64_t rec_mss(const struct record *r)
{
	switch (r->type) {
	case REC_R: case REC_W: case REC_P: return get0(r, F_MSS);
	case REC_N: return get0(r, N_MSS);
	default: return 0;
	}
}

/* The extension fields @first .. @first + @n - 1, when the line had them all. */
static bool get_ext(const struct record *r, enum rec_ext first, unsigned int n,
		    uint64_t *v)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (!rec_has_ext(r, (enum rec_ext)(first + i)))
			return false;
		v[i] = r->ext[first + i];
	}
	return true;
}

enum split_state rec_process_parts(const struct record *r, uint64_t *total,
				   uint64_t part[NPROCESS_PARTS])
{
	if ((r->type != REC_R && r->type != REC_W) ||
	    !get_ext(r, EXT_RQ_WAIT, NPROCESS_PARTS, part) ||
	    !rec_metric(r, M_PROCESS, total))
		return SPLIT_NONE;
	/* rq_wait + app + sq_wait == total, without a sum that could wrap */
	if (part[PART_RQ_WAIT] > *total ||
	    part[PART_APP] > *total - part[PART_RQ_WAIT] ||
	    part[PART_SQ_WAIT] != *total - part[PART_RQ_WAIT] - part[PART_APP])
		return SPLIT_BAD;
	return SPLIT_OK;
}

enum split_state rec_transfer_parts(const struct record *r, uint64_t *total,
				    uint64_t part[NTRANSFER_PARTS])
{
	enum metric m = r->type == REC_P ? M_UPLOAD : M_DOWNLOAD;
	uint64_t limited = 0;
	unsigned int i;

	if (!(rec_ext_types[EXT_RWND_LIMITED] & (1u << r->type)) ||
	    !get_ext(r, EXT_RWND_LIMITED, PART_SENDING, part) ||
	    !rec_metric(r, m, total))
		return SPLIT_NONE;
	for (i = 0; i < PART_SENDING; i++) {
		if (part[i] > *total - limited)
			return SPLIT_BAD;
		limited += part[i];
	}
	part[PART_SENDING] = *total - limited;
	return SPLIT_OK;
}
