// SPDX-License-Identifier: GPL-2.0
/* One line of a series run: see series_line.h. */
#include "series_line.h"

#include <stdio.h>
#include <string.h>

#include "parse.h"
#include "util.h"

const char *const series_field_name[SERIES_NFIELDS] = {
	"bytes_in", "bytes_out", "segs_in", "segs_out", "retrans",
	"started", "done", "W", "N", "estab", "closed", "open",
	"ce_bytes", "ce_segs", "ece", "dup_bytes", "dup_segs", "flows",
	"far_bytes_in", "far_bytes_out",
};

/* " name=value" fields after the positional ones; unknown names skipped */
static bool parse_ext(const char *s, struct series_row *r, unsigned int *ext)
{
	char name[32];
	long long v;
	int n, k;

	while (*s == ' ') {
		if (sscanf(s, " %31[a-z_]=%lld%n", name, &v, &n) != 2)
			return false;
		s += n;
		for (k = SERIES_NBASE; k < SERIES_NFIELDS; k++)
			if (!strcmp(name, series_field_name[k])) {
				r->v[k] = v;
				*ext |= 1U << k;
			}
	}
	return *s == '\0' || *s == '\n';
}

bool series_line_parse(const char *s, struct series_row *r, unsigned int *ext)
{
	unsigned long long sec, usec;
	char port[8];
	int n, i, off;

	if (sscanf(s, "%llu %llu %7s%n", &sec, &usec, port, &off) != 3 ||
	    usec >= USEC_PER_SEC)
		return false;
	if (strcmp(port, "*") &&
	    !(port[0] == 'P' ? parse_port(port + 1, &(uint16_t){0}) :
			       parse_port(port, &(uint16_t){0})))
		return false;
	memset(r->v, 0, sizeof(r->v));
	for (i = 0; i < SERIES_NBASE; i++) {
		if (sscanf(s + off, " %lld%n", &r->v[i], &n) != 1)
			return false;
		off += n;
	}
	if (!parse_ext(s + off, r, ext))
		return false;
	r->t_us = sec * USEC_PER_SEC + usec;
	r->width_us = 0;
	memcpy(r->port, port, sizeof(port));
	return true;
}
