/* SPDX-License-Identifier: GPL-2.0 */
/* Printing records as text, JSON (one object per line) or CSV. */
#ifndef TCPRT_OUTPUT_H
#define TCPRT_OUTPUT_H

#include <stdio.h>

#include "record.h"

enum format { FMT_TEXT, FMT_JSON, FMT_CSV };

/* The format named @s, or -1. */
int format_of(const char *s);

/* CSV: the header line (the union of every type's field names). */
void output_header(FILE *out, enum format fmt);
void output_record(FILE *out, enum format fmt, const struct record *r);

#endif
