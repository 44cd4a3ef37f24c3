/* SPDX-License-Identifier: GPL-2.0 */
/* Validation and parsing of one line of a log or stats file. */
#ifndef TCPRT_PARSE_H
#define TCPRT_PARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "record.h"

/* The longest line accepted (tcp_rt writes at most 255 bytes with '\n'). */
#define PARSE_LINE_MAX	511
#define PARSE_WHY_MAX	128

/*
 * Parse @line (@len bytes, without its '\n') as a task record,
 *	V6 <type> <sec> <usec> <peer>:<port> <local>:<port> <fields...>
 * or, for parse_stats_line(), as a stats line,
 *	<unix_sec> all <port> <9 numbers>
 * The whole line is validated: printable ASCII, single spaces, the number of
 * fields of the type, decimal numbers that fit in 64 bits, six-digit usec,
 * addresses inet_pton() accepts, ports 1..65535.  On failure @why gets the
 * reason and false is returned; @r is then undefined.
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
