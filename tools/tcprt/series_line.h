/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One line of a series run (docs/records.md, "Series lines"), as the
 * module writes it and as tcprt series, ship and ingest read it:
 *
 *   <sec> <usec> <port> <12 counts>[ <name>=<value> ...]
 *
 * port: "8080" (a local port), "P6379" (a peer port) or "*" (the host).
 */
#ifndef TCPRT_SERIES_LINE_H
#define TCPRT_SERIES_LINE_H

#include <stdbool.h>
#include <stdint.h>

#define SERIES_NBASE	12	/* the positional counts */
#define SERIES_NFIELDS	20	/* and series_ext's, by name */

/* bytes_in ... open, then series_ext's names in the module's order */
extern const char *const series_field_name[SERIES_NFIELDS];

struct series_row {
	uint64_t t_us;		/* the bucket's start, wall clock */
	uint64_t width_us;	/* the bucket's width; 0: not known */
	char port[8];		/* "8080", "P6379" or "*" */
	long long v[SERIES_NFIELDS];
};

/*
 * @s (ending at its NUL or newline) into @r; *@ext gets BIT(field) of each
 * named field seen; names it does not know are skipped.  false when the
 * line is not a series line.
 */
bool series_line_parse(const char *s, struct series_row *r, unsigned int *ext);

#endif
