/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the metrics sink (tcprt export's, the agent's) keeps per series
 * (port, container, role, type) since it started, shared by its two
 * outputs: the Prometheus text file (sink_metrics.c) and OTLP (otlp.c).
 * Both write the same counts; each names them its own way.
 */
#ifndef TCPRT_EXPORT_H
#define TCPRT_EXPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "container.h"
#include "expo.h"
#include "prom.h"
#include "record.h"
#include "series.h"

/*
 * The histograms: of a metric (rec_metric), one series per series of the
 * types that have it; of a breakdown field (from H_RQ_WAIT on, in enum
 * rec_ext order), one per series that saw the field, so that a module
 * without log_ext's breakdown adds none.
 */
enum {
	H_DURATION, H_PROCESS, H_UPLOAD, H_DOWNLOAD,
	H_RQ_WAIT, H_APP, H_SQ_WAIT, H_RWND_LIMITED, H_SNDBUF_LIMITED,
	H_APP_LIMITED, NHIST
};
#define NMETRIC_HIST	H_RQ_WAIT

#define T(x) (1u << REC_##x)

struct exp_val {
	uint64_t records;	/* tasks, or connections for E */
	uint64_t sent, recv, retrans;
	struct prom_hist h[NHIST];
	struct expo_hist e[NHIST];	/* --otlp-exponential only */
	char pod[CT_POD_MAX + 1];	/* the container's pod's UID, or "" */
	bool ct_id;		/* the series' container is a container's id */
};

/* Free what a series' value holds (series_free's @fn). */
static inline void exp_val_free(void *arg)
{
	struct exp_val *v = arg;
	unsigned int i;

	for (i = 0; i < NHIST; i++) {
		prom_hist_free(&v->h[i]);
		expo_hist_free(&v->e[i]);
	}
}

/* The record types that have histogram @h. */
static inline unsigned int exp_hist_types(unsigned int h)
{
	if (h == H_DURATION)
		return T(R) | T(W) | T(N) | T(P);
	if (h == H_APP)		/* a client's process time has no app part */
		return T(R) | T(W);
	return T(R) | T(W) | T(P);
}

/* Histogram @h of series @s is written: of its types, and seen if a field's. */
static inline bool exp_hist_written(const struct series *s, unsigned int h)
{
	const struct exp_val *v = s->val;

	if (!(exp_hist_types(h) & (1u << s->type)))
		return false;
	return h < NMETRIC_HIST || v->h[h].count > 0;
}

/* The types that have sent and received bytes and retransmissions. */
#define EXP_SENT_TYPES		(T(R) | T(W) | T(P))
#define EXP_RECV_TYPES		(T(R) | T(N) | T(P))
#define EXP_RETRANS_TYPES	(T(R) | T(W) | T(P))

#endif
