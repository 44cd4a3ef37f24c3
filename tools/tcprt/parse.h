/* SPDX-License-Identifier: GPL-2.0 */
/* Validation and parsing of one line of a log or stats file. */
#ifndef TCPRT_PARSE_H
#define TCPRT_PARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "record.h"

/*
 * The longest line accepted: tcp_rt writes at most 547 bytes before the
 * '\n' (docs/records.md, every log_ext field); room for fields a later
 * module adds, while a malformed line of this length, escaped, still fits
 * in one fleet message (frame.h).
 */
#define PARSE_LINE_MAX	767
#define PARSE_WHY_MAX	128

/*
 * Parse @line (@len bytes, without its '\n') as a task record,
 *	V6 <type> <sec> <usec> <peer>:<port> <local>:<port> <fields...>
 * or, for parse_stats_line(), as a stats line,
 *	<unix_sec> all <port> <9 numbers>
 * The whole line is validated: printable ASCII, single spaces, the number of
 * fields of the type, decimal numbers that fit in 64 bits, addresses
 * inet_pton() accepts, ports 1..65535.  On failure @why gets the reason and
 * false is returned; @r is then undefined.
 *
 * A task record is in one of two forms, told apart by its end:
 *   tcp_rt's  no trailing space; usec of six digits; the fields of the
 *             TCP-RT document (W: 9)
 *   vendor's  every field followed by a space, so the line ends with one;
 *             usec unpadded (no leading zero); W of 10 fields (out_of_order
 *             before mss); P of 10, 7 or 5 fields (older generations)
 * and validated against that form alone; r->source says which, and
 * r->present which fields the line had.  Stats lines are the same in both;
 * their source stays unknown.
 *
 * Either form may end with extension fields (tcp_rt's log_ext): tokens
 * name=value after the type's documented fields, which keep their count
 * and places.  Those tcprt knows (record.h, enum rec_ext) are kept, their
 * value a decimal number, each at most once, in tcp_rt's table order
 * (netns and cgroup either way round, before the breakdown fields), and
 * only on the types that carry them (app: R W; the other breakdown
 * fields: R W P; none on N or E); a name=value of any other name is
 * accepted and ignored; a token without '=' after one with is malformed.
 * Stats lines have none.
 *
 * A parsed record's role and service port follow from its type (R W N:
 * server, P: client); for E the caller decides (see input.c), parse leaves
 * the guess "the lower port is the service port".
 */
bool parse_log_line(const char *line, size_t len, struct record *r,
		    char why[PARSE_WHY_MAX]);
bool parse_stats_line(const char *line, size_t len, struct record *r,
		      char why[PARSE_WHY_MAX]);

#endif
