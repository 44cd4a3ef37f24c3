// SPDX-License-Identifier: GPL-2.0
/*
 * tcprt fleet summary's "where the time goes" against tcprt summary's, on
 * the same records, without ClickHouse.  tcprt summary's block comes from
 * bd_add() of each record.  The fleet's comes from what ingest stores of
 * each record (store_record_row(): the metrics, the breakdown mask, the
 * six values), summed per bucket under the conditions of cmd_fleet.c's
 * series (summary_series), written out here, and fed as fleet summary
 * feeds it: hist_add_bucket() and split_add_bucket(), sending the
 * transfers' sum less the limited parts'.  The two blocks must be the same
 * text, and the records left out of a split the same number.
 */
#include <stdlib.h>
#include <string.h>

#include "breakdown.h"
#include "parse.h"
#include "store.h"
#include "tap.h"
#include "util.h"

/* What fleet summary's query answers for one bucket of one series. */
struct cell {
	uint64_t n, min, max, sum[NTRANSFER_PARTS + 1];
};

/* The series: a field's own values (6), the process split, the transfer's. */
enum { Q_PROCESS = NBREAKDOWN, Q_TRANSFER, NQUERIES };

struct fleet_row {
	enum rec_type type;
	uint64_t count;
	struct cell *cell[NQUERIES];	/* HIST_BUCKETS each, or NULL */
	struct bd_bad bad;
};

/* Column @name of ingest's row @row, as a number (0 for an empty one). */
static uint64_t col(const char *row, const char *name)
{
	const char *c = store_records_cols, *f = row;

	for (;;) {
		size_t n = strcspn(c, ",");

		if (n == strlen(name) && !memcmp(c, name, n))
			return strtoull(f, NULL, 10);
		if (!c[n])
			return 0;
		c += n + 2;
		f += strcspn(f, "\t") + 1;
	}
}

static void cell_add(struct fleet_row *fr, unsigned int q, uint64_t v,
		     const uint64_t *sum, unsigned int nsums)
{
	struct cell *c;
	unsigned int i;

	if (!fr->cell[q])
		fr->cell[q] = xcalloc(HIST_BUCKETS, sizeof(struct cell));
	c = &fr->cell[q][hist_index(v)];
	if (!c->n || v < c->min)
		c->min = v;
	if (!c->n || v > c->max)
		c->max = v;
	c->n++;
	for (i = 0; i < nsums; i++)
		c->sum[i] += sum[i];
}

/* A record as the fleet sees it: ingest's row, then the queries' WHERE. */
static void fleet_add(struct fleet_row *fr, const char *row)
{
	static const char *const part[] = {
		"rq_wait", "app", "sq_wait", "rwnd_limited", "sndbuf_limited",
		"app_limited",
	};
	bool p = fr->type == REC_P;
	unsigned int mask = (unsigned int)col(row, "breakdown"), i;
	unsigned int metrics = (unsigned int)col(row, "metrics");
	uint64_t v[NBREAKDOWN], sum[NTRANSFER_PARTS + 1];

	fr->count++;
	for (i = 0; i < NBREAKDOWN; i++) {
		v[i] = col(row, part[i]);
		if (mask >> i & 1)
			cell_add(fr, i, v[i], NULL, 0);
	}
	if (!p && (mask & STORE_BD_PROCESS))
		cell_add(fr, Q_PROCESS, col(row, "process"), v, NPROCESS_PARTS);
	if (mask & STORE_BD_TRANSFER) {
		uint64_t total = col(row, p ? "upload" : "download");

		memcpy(sum, v + NPROCESS_PARTS, PART_SENDING * sizeof(*sum));
		sum[PART_SENDING] = total;
		cell_add(fr, Q_TRANSFER, total, sum, NTRANSFER_PARTS);
	}
	fr->bad.process += !p && (mask & 7) == 7 && (metrics & 1u << M_PROCESS) &&
			   !(mask & STORE_BD_PROCESS);
	fr->bad.transfer += (mask & 0x38) == 0x38 &&
			    (metrics & 1u << (p ? M_UPLOAD : M_DOWNLOAD)) &&
			    !(mask & STORE_BD_TRANSFER);
}

/* fleet summary's breakdown of the row, from its cells; NULL without. */
static struct breakdown *fleet_bd(const struct fleet_row *fr)
{
	struct breakdown *bd = NULL;
	unsigned int q, idx;

	for (q = 0; q < NQUERIES; q++) {
		for (idx = 0; fr->cell[q] && idx < HIST_BUCKETS; idx++) {
			const struct cell *c = &fr->cell[q][idx];
			uint64_t sum[NTRANSFER_PARTS];

			if (!c->n)
				continue;
			if (!bd)
				bd = bd_new(fr->type);
			if (q < NBREAKDOWN) {
				hist_add_bucket(&bd->part[q], idx, c->n, c->min, c->max);
			} else if (q == Q_PROCESS) {
				split_add_bucket(&bd->process, idx, c->n, c->min, c->max, c->sum);
			} else {
				memcpy(sum, c->sum, sizeof(sum));
				sum[PART_SENDING] -= sum[PART_RWND] + sum[PART_SNDBUF] +
						     sum[PART_APP_LIMITED];
				split_add_bucket(&bd->transfer, idx, c->n, c->min, c->max, sum);
			}
		}
	}
	return bd;
}

/* A value spread over several powers of ten, 0 now and then. */
static uint64_t spread(uint64_t lo, uint64_t hi)
{
	uint64_t v = lo, span = hi / lo;

	if (rnd() % 17 == 0)
		return 0;
	while (span > 1 && rnd() % 2) {
		v *= 2;
		span /= 2;
	}
	return v + rnd() % v;
}

/* A random part of @total (at most all of it). */
static uint64_t share(uint64_t total)
{
	return total ? rnd() % (total + 1) / (1 + rnd() % 3) : 0;
}

/* The breakdown's fields of an R (or P, @p): most whole, some partial or
 * none, some breaking the contract by one. */
static void ext_of(char *ext, size_t size, bool p, uint64_t process,
		   uint64_t transfer)
{
	uint64_t rq = share(process), app = share(process - rq);
	uint64_t sq = process - rq - app, rw = share(transfer);
	uint64_t sb = share(transfer - rw), al = share(transfer - rw - sb);
	unsigned int k = (unsigned int)(rnd() % 20);

	/* k 0: the limited parts one past the transfer; 3: the process
	 * parts one past the process time */
	if (k == 0)
		al = transfer - rw - sb + 1;

	if (p) {
		snprintf(ext, size, " rq_wait=%llu sq_wait=%llu rwnd_limited=%llu sndbuf_limited=%llu app_limited=%llu",
			 (unsigned long long)rnd() % 3000, (unsigned long long)rnd() % 800,
			 (unsigned long long)rw, (unsigned long long)sb,
			 (unsigned long long)al);
	} else if (k == 1) {
		snprintf(ext, size, " app=%llu app_limited=%llu", (unsigned long long)app,
			 (unsigned long long)al);
	} else if (k == 2) {
		ext[0] = '\0';
	} else {
		snprintf(ext, size, " rq_wait=%llu app=%llu sq_wait=%llu rwnd_limited=%llu sndbuf_limited=%llu app_limited=%llu",
			 (unsigned long long)rq, (unsigned long long)app,
			 (unsigned long long)(sq + (k == 3)), (unsigned long long)rw,
			 (unsigned long long)sb, (unsigned long long)al);
	}
}

/* A record line of @type (R or P) with a random breakdown. */
static void line_of(char *line, size_t size, enum rec_type type, unsigned int i)
{
	uint64_t process = spread(300, 250000), transfer = spread(60, 3000000);
	uint64_t up = rnd() % 500, service = spread(1000, 90000);
	char ext[256];

	if (type == REC_R) {
		ext_of(ext, sizeof(ext), false, process, transfer);
		snprintf(line, size, "V6 R 1795218000 %06u 10.0.0.2:%u 10.0.0.1:7700 5000 %llu 300 0 1 %llu %llu 300 0 1448%s",
			 i % 1000000, 40000 + i % 20000,
			 (unsigned long long)(up + process + transfer),
			 (unsigned long long)process, (unsigned long long)up, ext);
	} else {
		/* P: the transfer is the upload, duration - service - response */
		ext_of(ext, sizeof(ext), true, 0, transfer);
		snprintf(line, size, "V6 P 1795218000 %06u 10.0.0.9:6379 10.0.0.1:%u 300 %llu 200 0 1 %llu %llu 4000 0 1448%s",
			 i % 1000000, 40000 + i % 20000,
			 (unsigned long long)(transfer + service + 700),
			 (unsigned long long)service, 700ULL, ext);
	}
}

/* bd_print's text of @bd, or "" for none. */
static char *text_of(const struct breakdown *bd, const char *label, uint64_t count)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (bd)
		bd_print(f, bd, label, count);
	fclose(f);
	return buf;
}

static void test_row(enum rec_type type, unsigned int n, const char *label)
{
	struct fleet_row fr = { .type = type };
	struct breakdown *local = NULL, *fleet;
	struct bd_bad bad = { 0 };
	struct frame_hdr h = { .epoch = 1 };
	struct buf row = { 0 };
	uint64_t sec = 0;
	char line[PARSE_LINE_MAX], why[PARSE_WHY_MAX], *a, *b;
	unsigned int i, invalid = 0, q;

	for (i = 0; i < n; i++) {
		struct record r;

		line_of(line, sizeof(line), type, i);
		if (!parse_log_line(line, strlen(line), &r, why)) {
			diag("%s: %s", line, why);
			invalid++;
			continue;
		}
		bd_add(&local, &r, &bad);	/* tcprt summary */
		row.len = 0;
		store_record_row(&row, &h, i, line, strlen(line), 1, -1, NULL, &sec);
		fleet_add(&fr, row.p);
	}
	fleet = fleet_bd(&fr);
	a = text_of(local, label, n);
	b = text_of(fleet, label, fr.count);
	ok(!invalid && local && fleet && local->process.total.n + local->transfer.total.n > n / 2,
	   "%s: %u records, %llu in the process split, %llu in the transfer's", label, n,
	   (unsigned long long)local->process.total.n,
	   (unsigned long long)local->transfer.total.n);
	ok(!strcmp(a, b), "%s: fleet summary's block is tcprt summary's", label);
	if (strcmp(a, b))
		diag("tcprt summary:\n%s\nfleet:\n%s", a, b);
	else
		diag("%s", strtok(a, "\n"));
	ok(bad.process == fr.bad.process && bad.transfer == fr.bad.transfer &&
	   bad.transfer > 0 && (type == REC_P || bad.process > 0),
	   "%s: the records left out, %llu of the process split and %llu of the transfer's, counted alike",
	   label, (unsigned long long)bad.process, (unsigned long long)bad.transfer);
	free(a);
	free(b);
	bd_free(local);
	bd_free(fleet);
	for (q = 0; q < NQUERIES; q++)
		free(fr.cell[q]);
	buf_free(&row);
}

int main(void)
{
	test_row(REC_R, 6000, "port 7700 server R");
	test_row(REC_P, 3000, "port 6379 client P");
	return done_testing();
}
