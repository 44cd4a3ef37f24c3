// SPDX-License-Identifier: GPL-2.0
/*
 * Printing records.  Field names are those of docs/records.md; the header
 * fields are type, sec, usec, peer_addr, peer_port, local_addr, local_port.
 * tcprt adds role (server/client), port (the service port), cpu (the
 * log file's number) and source (tcp_rt or vendor, when known).  Stats
 * lines print as type "stats" with unix_sec.  A field the record's line
 * did not have (see record.h) is left out, as a type's missing fields are.
 * The extension fields tcprt knows follow the documented ones: netns and
 * cgroup, what container.c makes of them (cgroup_path, runtime, container
 * and pod, each when known), then the time breakdown's (rq_wait, app,
 * sq_wait, rwnd_limited, sndbuf_limited, app_limited).  In CSV every one
 * has its column, in that order, after source: the breakdown's last, so
 * that the columns before them keep their places.
 */
#include "output.h"

#include <string.h>

#include "buf.h"
#include "container.h"
#include "util.h"

#define CSV_MAX_COLS	64

int format_of(const char *s)
{
	if (!strcmp(s, "text"))
		return FMT_TEXT;
	if (!strcmp(s, "json"))
		return FMT_JSON;
	if (!strcmp(s, "csv"))
		return FMT_CSV;
	return -1;
}

static void endpoint(FILE *out, const char *addr, unsigned int port)
{
	if (strchr(addr, ':'))
		fprintf(out, "[%s]:%u", addr, port);
	else
		fprintf(out, "%s:%u", addr, port);
}

/* A string in JSON (buf_json_str's form). */
static void json_str(FILE *out, const char *s)
{
	static struct buf b;	/* reused: one string at a time */

	b.len = 0;
	buf_json_str(&b, s);
	fwrite(b.p, 1, b.len, out);
}

/* A CSV cell: quoted when it holds a comma, a quote or a line break. */
static void csv_str(FILE *out, const char *s)
{
	if (!s[strcspn(s, ",\"\r\n")]) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

/*
 * The names tcprt adds after the extension fields, in this order, and
 * their values for @ci (NULL: not known).
 */
enum { N_PATH, N_RUNTIME, N_CONTAINER, N_POD, N_NAMES };
static const char *const name_cols[N_NAMES] = {
	"cgroup_path", "runtime", "container", "pod",
};

static void names_of(const struct ct_info *ci, const char *v[N_NAMES])
{
	v[N_PATH] = ci->path;
	v[N_RUNTIME] = ct_runtime_name(ci->name.runtime);
	v[N_CONTAINER] = ci->any ? ci->key : NULL;
	v[N_POD] = ci->name.pod[0] ? ci->name.pod : NULL;
}

/* Extension fields @from .. @to - 1 the record has, " name=value" or ,"name":value. */
static void print_ext_range(FILE *out, const struct record *r, bool json,
			    unsigned int from, unsigned int to)
{
	unsigned int i;

	for (i = from; i < to; i++)
		if (rec_has_ext(r, (enum rec_ext)i))
			fprintf(out, json ? ",\"%s\":%llu" : " %s=%llu",
				rec_ext_name[i], (unsigned long long)r->ext[i]);
}

/* A record's extension fields and names, as " name=value" or ,"name":value. */
static void print_ext(FILE *out, const struct record *r, bool json)
{
	const char *v[N_NAMES];
	unsigned int i;

	print_ext_range(out, r, json, 0, EXT_BREAKDOWN);
	if (rec_has_ct(r)) {
		names_of(ct_of_record(r), v);
		for (i = 0; i < N_NAMES; i++) {
			if (!v[i])
				continue;
			if (json) {
				fprintf(out, ",\"%s\":", name_cols[i]);
				json_str(out, v[i]);
			} else {
				fprintf(out, " %s=%s", name_cols[i], v[i]);
			}
		}
	}
	print_ext_range(out, r, json, EXT_BREAKDOWN, REC_EXT_N);
}

static void print_text(FILE *out, const struct record *r)
{
	const struct rec_desc *d = &rec_desc[r->type];
	char when[40];
	unsigned int i;

	fmt_time(when, sizeof(when), rec_time_us(r), r->type != REC_STATS);
	fprintf(out, "%s %s %s port=%u", when, d->name, role_name(r->role),
		r->port);
	if (r->type != REC_STATS)
		fprintf(out, " cpu=%d", r->cpu);
	if (source_name(r->source))
		fprintf(out, " source=%s", source_name(r->source));
	if (r->type != REC_STATS) {
		fputs(" peer=", out);
		endpoint(out, r->peer_addr, r->peer_port);
		fputs(" local=", out);
		endpoint(out, r->local_addr, r->local_port);
	}
	for (i = 0; i < d->nfields; i++)
		if (rec_has(r, i))
			fprintf(out, " %s=%llu", d->fields[i],
				(unsigned long long)r->f[i]);
	print_ext(out, r, false);
	fputc('\n', out);
}

static void print_json(FILE *out, const struct record *r)
{
	const struct rec_desc *d = &rec_desc[r->type];
	unsigned int i;

	if (r->type == REC_STATS) {
		fprintf(out, "{\"type\":\"stats\",\"unix_sec\":%llu,\"port\":%u,\"role\":\"%s\"",
			(unsigned long long)r->sec, r->port, role_name(r->role));
	} else {
		fprintf(out, "{\"type\":\"%s\",\"sec\":%llu,\"usec\":%llu,"
			"\"peer_addr\":\"%s\",\"peer_port\":%u,"
			"\"local_addr\":\"%s\",\"local_port\":%u,"
			"\"role\":\"%s\",\"port\":%u,\"cpu\":%d",
			d->name, (unsigned long long)r->sec,
			(unsigned long long)r->usec, r->peer_addr, r->peer_port,
			r->local_addr, r->local_port, role_name(r->role),
			r->port, r->cpu);
	}
	if (source_name(r->source))
		fprintf(out, ",\"source\":\"%s\"", source_name(r->source));
	for (i = 0; i < d->nfields; i++)
		if (rec_has(r, i))
			fprintf(out, ",\"%s\":%llu", d->fields[i],
				(unsigned long long)r->f[i]);
	print_ext(out, r, true);
	fputs("}\n", out);
}

/*
 * CSV: fixed columns, then every field name once, in type order, then
 * source, then netns, cgroup and the names tcprt gives them, then the
 * breakdown's fields (each group after the columns that came before it,
 * so that those keep their places).
 */

static const char *const csv_fixed[] = {
	"type", "sec", "usec", "role", "port", "peer_addr", "peer_port",
	"local_addr", "local_port", "cpu",
};
#define CSV_FIXED	(sizeof(csv_fixed) / sizeof(csv_fixed[0]))

static const char *csv_cols[CSV_MAX_COLS];
static unsigned int csv_ncols;
/* csv_col[type][i]: the column of field i of that type */
static unsigned int csv_col[REC_NTYPES][REC_FIELDS_MAX];

static void csv_init(void)
{
	unsigned int t, i, c;

	if (csv_ncols)
		return;
	for (i = 0; i < CSV_FIXED; i++)
		csv_cols[csv_ncols++] = csv_fixed[i];
	for (t = 0; t < REC_NTYPES; t++) {
		for (i = 0; i < rec_desc[t].nfields; i++) {
			const char *name = rec_desc[t].fields[i];

			for (c = CSV_FIXED; c < csv_ncols; c++)
				if (!strcmp(csv_cols[c], name))
					break;
			if (c == csv_ncols)
				csv_cols[csv_ncols++] = name;
			csv_col[t][i] = c;
		}
	}
	csv_cols[csv_ncols++] = "source";
	for (i = 0; i < EXT_BREAKDOWN; i++)
		csv_cols[csv_ncols++] = rec_ext_name[i];
	for (i = 0; i < N_NAMES; i++)
		csv_cols[csv_ncols++] = name_cols[i];
	for (i = EXT_BREAKDOWN; i < REC_EXT_N; i++)
		csv_cols[csv_ncols++] = rec_ext_name[i];
}

/* The cells of extension fields @from .. @to - 1, empty where absent. */
static void csv_ext_range(FILE *out, const struct record *r, unsigned int from,
			  unsigned int to)
{
	unsigned int i;

	for (i = from; i < to; i++) {
		fputc(',', out);
		if (rec_has_ext(r, (enum rec_ext)i))
			fprintf(out, "%llu", (unsigned long long)r->ext[i]);
	}
}

/* The cells after source: netns, cgroup, the names, the breakdown. */
static void csv_ext(FILE *out, const struct record *r)
{
	const char *v[N_NAMES] = { 0 };
	unsigned int i;

	csv_ext_range(out, r, 0, EXT_BREAKDOWN);
	if (rec_has_ct(r))
		names_of(ct_of_record(r), v);
	for (i = 0; i < N_NAMES; i++) {
		fputc(',', out);
		if (v[i])
			csv_str(out, v[i]);
	}
	csv_ext_range(out, r, EXT_BREAKDOWN, REC_EXT_N);
}

static void print_csv(FILE *out, const struct record *r)
{
	const uint64_t *col_val[CSV_MAX_COLS] = { 0 };
	const char *src = source_name(r->source);
	unsigned int i;

	csv_init();
	for (i = 0; i < rec_desc[r->type].nfields; i++)
		if (rec_has(r, i))
			col_val[csv_col[r->type][i]] = &r->f[i];
	if (r->type == REC_STATS)
		fprintf(out, "stats,%llu,0,%s,%u,,,,,", (unsigned long long)r->sec,
			role_name(r->role), r->port);
	else
		fprintf(out, "%s,%llu,%llu,%s,%u,%s,%u,%s,%u,%d",
			rec_desc[r->type].name, (unsigned long long)r->sec,
			(unsigned long long)r->usec, role_name(r->role), r->port,
			r->peer_addr, r->peer_port, r->local_addr, r->local_port,
			r->cpu);
	for (i = CSV_FIXED; i < csv_ncols - 1 - REC_EXT_N - N_NAMES; i++) {
		if (col_val[i])
			fprintf(out, ",%llu", (unsigned long long)*col_val[i]);
		else
			fputc(',', out);
	}
	fprintf(out, ",%s", src ? src : "");
	csv_ext(out, r);
	fputc('\n', out);
}

void output_header(FILE *out, enum format fmt)
{
	unsigned int i;

	if (fmt != FMT_CSV)
		return;
	csv_init();
	for (i = 0; i < csv_ncols; i++)
		fprintf(out, "%s%s", i ? "," : "", csv_cols[i]);
	fputc('\n', out);
}

void output_record(FILE *out, enum format fmt, const struct record *r)
{
	switch (fmt) {
	case FMT_JSON:
		print_json(out, r);
		break;
	case FMT_CSV:
		print_csv(out, r);
		break;
	default:
		print_text(out, r);
		break;
	}
}
