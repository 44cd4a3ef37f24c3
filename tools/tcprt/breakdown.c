// SPDX-License-Identifier: GPL-2.0
/* tcprt summary's "where the time goes": see breakdown.h. */
#include "breakdown.h"

#include <stdlib.h>
#include <string.h>

#include "plot.h"
#include "util.h"

/* The percentiles summary reports; each line's band reaches to the next. */
static const unsigned int band_q[] = { 500, 900, 990, 1000 };
#define NLINES	(sizeof(band_q) / sizeof(band_q[0]) - 1)	/* p50 p90 p99 */

static const char *transfer_name(enum rec_type t)
{
	return t == REC_P ? "upload" : "download";
}

/* ---- adding ---------------------------------------------------------------- */

struct breakdown *bd_new(enum rec_type type)
{
	struct breakdown *bd = xcalloc(1, sizeof(*bd));

	bd->type = type;
	split_init(&bd->process, NPROCESS_PARTS);
	split_init(&bd->transfer, NTRANSFER_PARTS);
	return bd;
}

void bd_add(struct breakdown **bd, const struct record *r, struct bd_bad *bad)
{
	uint64_t total, part[SPLIT_MAX_PARTS];
	unsigned int e;

	if (!(r->ext_present & EXT_BD_MASK))
		return;
	if (!*bd)
		*bd = bd_new(r->type);
	for (e = EXT_BREAKDOWN; e < EXT_BD_END; e++)
		if (rec_has_ext(r, (enum rec_ext)e))
			hist_add(&(*bd)->part[e - EXT_BREAKDOWN], r->ext[e]);
	switch (rec_process_parts(r, &total, part)) {
	case SPLIT_OK: split_add(&(*bd)->process, total, part); break;
	case SPLIT_BAD: bad->process++; break;
	case SPLIT_NONE: break;
	}
	switch (rec_transfer_parts(r, &total, part)) {
	case SPLIT_OK: split_add(&(*bd)->transfer, total, part); break;
	case SPLIT_BAD: bad->transfer++; break;
	case SPLIT_NONE: break;
	}
}

void bd_merge(struct breakdown **dst, const struct breakdown *src)
{
	unsigned int i;

	if (!src)
		return;
	if (!*dst)
		*dst = bd_new(src->type);
	split_merge(&(*dst)->process, &src->process);
	split_merge(&(*dst)->transfer, &src->transfer);
	for (i = 0; i < NBREAKDOWN; i++)
		hist_merge(&(*dst)->part[i], &src->part[i]);
}

void bd_free(struct breakdown *bd)
{
	unsigned int i;

	if (!bd)
		return;
	split_reset(&bd->process);
	split_reset(&bd->transfer);
	for (i = 0; i < NBREAKDOWN; i++)
		hist_reset(&bd->part[i]);
	free(bd);
}

void bd_report_bad(const struct bd_bad *bad)
{
	if (bad->process)
		warnx_("%llu record%s whose rq_wait + app + sq_wait is not %s process time: left out of the process split",
		       (unsigned long long)bad->process,
		       bad->process == 1 ? "" : "s", bad->process == 1 ? "its" : "their");
	if (bad->transfer)
		warnx_("%llu record%s whose rwnd_limited + sndbuf_limited + app_limited exceed%s %s transfer time: left out of the transfer split",
		       (unsigned long long)bad->transfer,
		       bad->transfer == 1 ? "" : "s", bad->transfer == 1 ? "s" : "",
		       bad->transfer == 1 ? "its" : "their");
}

/* ---- units ------------------------------------------------------------------- */

/*
 * A time is printed in the unit of its size: below 1 ms in us, below 10 s
 * in ms with one decimal, else in s with two.  A split line's parts are in
 * its total's unit.
 */
struct unit {
	const char *name;
	uint64_t quantum;	/* microseconds a unit of the last digit */
	unsigned int decimals;
};

static const struct unit *unit_of(uint64_t us)
{
	static const struct unit units[] = {
		{ "us", 1, 0 }, { "ms", 100, 1 }, { "s", 10000, 2 },
	};

	return us < 1000 ? &units[0] : us < 10 * USEC_PER_SEC ? &units[1] :
			   &units[2];
}

/* @us in quanta of @u, rounded half up. */
static uint64_t quanta(uint64_t us, const struct unit *u)
{
	return us / u->quantum + (us % u->quantum >= (u->quantum + 1) / 2);
}

/* @q quanta of @u as a decimal number: "812", "180.2", "12.35". */
static void fmt_quanta(char *buf, size_t len, uint64_t q, const struct unit *u)
{
	uint64_t scale = u->decimals == 2 ? 100 : u->decimals == 1 ? 10 : 1;

	if (scale == 1)
		snprintf(buf, len, "%llu", (unsigned long long)q);
	else
		snprintf(buf, len, "%llu.%0*llu", (unsigned long long)(q / scale),
			 (int)u->decimals, (unsigned long long)(q % scale));
}

/* A time with its unit: "812 us", "1.5 ms". */
static void fmt_time_us(char *buf, size_t len, uint64_t us)
{
	const struct unit *u = unit_of(us);
	char num[24];

	fmt_quanta(num, sizeof(num), quanta(us, u), u);
	snprintf(buf, len, "%s %s", num, u->name);
}

/* ---- the text ------------------------------------------------------------------ */

/* One line: "p99 process 180.2 ms = rq_wait 150.1 + app 25.0 + sq_wait 5.1". */
struct sline {
	char label[24];
	char total[24];
	const char *unit;
	unsigned int nparts;
	const char *const *name;
	char part[SPLIT_MAX_PARTS][24];
	uint64_t q, qpart[SPLIT_MAX_PARTS];	/* the same, in quanta of the unit */
};

/*
 * The line of percentile band_q[@i] of @s: its value, cut in proportion
 * to the parts' sums over its band, rounded in the value's unit so that
 * the parts printed add up to the total printed.
 */
static void split_line(struct sline *l, const struct split *s, unsigned int i,
		       const char *metric, const char *const *name)
{
	uint64_t total = hist_quantile(&s->total, band_q[i]);
	const struct unit *u = unit_of(total);
	uint64_t sum[SPLIT_MAX_PARTS];
	unsigned int k;

	split_band(s, band_q[i], band_q[i + 1], sum);
	l->q = quanta(total, u);
	split_round(l->q, sum, s->nparts, l->qpart);
	snprintf(l->label, sizeof(l->label), "p%u %s", band_q[i] / 10, metric);
	fmt_quanta(l->total, sizeof(l->total), l->q, u);
	l->unit = u->name;
	l->nparts = s->nparts;
	l->name = name;
	for (k = 0; k < s->nparts; k++)
		fmt_quanta(l->part[k], sizeof(l->part[k]), l->qpart[k], u);
}

static int width(int w, const char *s)
{
	int n = (int)strlen(s);

	return n > w ? n : w;
}

/*
 * Print @n lines aligned: labels and totals over all of them, each part's
 * values over the lines of its kind (lines of one kind are consecutive
 * and share their part names).
 */
static void print_lines(FILE *out, const struct sline *l, unsigned int n)
{
	int wl = 0, wt = 0, wp[SPLIT_MAX_PARTS];
	unsigned int i, j, k, from;

	for (i = 0; i < n; i++) {
		wl = width(wl, l[i].label);
		wt = width(wt, l[i].total);
	}
	for (from = 0; from < n; from = j) {
		memset(wp, 0, sizeof(wp));
		for (j = from; j < n && l[j].name == l[from].name; j++)
			for (k = 0; k < l[j].nparts; k++)
				wp[k] = width(wp[k], l[j].part[k]);
		for (i = from; i < j; i++) {
			fprintf(out, "  %-*s %*s %-2s =", wl, l[i].label, wt,
				l[i].total, l[i].unit);
			for (k = 0; k < l[i].nparts; k++)
				fprintf(out, "%s %s %*s", k ? " +" : "",
					l[i].name[k], wp[k], l[i].part[k]);
			fputc('\n', out);
		}
	}
}

/* "  p50 / p99 of each: rq_wait 1.5 ms / 150.1 ms, app ..." for fields @from.. @to - 1. */
static void print_parts(FILE *out, const struct breakdown *bd, unsigned int from,
			unsigned int to)
{
	char a[32], b[32];
	unsigned int e, n = 0;

	for (e = from; e < to; e++) {
		const struct hist *h = &bd->part[e - EXT_BREAKDOWN];

		if (!h->n)
			continue;
		fmt_time_us(a, sizeof(a), hist_quantile(h, 500));
		fmt_time_us(b, sizeof(b), hist_quantile(h, 990));
		fprintf(out, "%s%s %s / %s", n++ ? ", " : "  p50 / p99 of each: ",
			rec_ext_name[e], a, b);
	}
	if (n)
		fputc('\n', out);
}

void bd_print(FILE *out, const struct breakdown *bd, const char *label,
	      uint64_t count)
{
	const char *tname = transfer_name(bd->type);
	struct sline l[2 * NLINES];
	unsigned int n = 0, i;

	fprintf(out, "# where the time goes, %s: %llu task%s", label,
		(unsigned long long)count, count == 1 ? "" : "s");
	if (bd->process.total.n)
		fprintf(out, ", %llu with the process split",
			(unsigned long long)bd->process.total.n);
	if (bd->transfer.total.n)
		fprintf(out, ", %llu with the %s split",
			(unsigned long long)bd->transfer.total.n, tname);
	fputc('\n', out);
	for (i = 0; bd->process.total.n && i < NLINES; i++)
		split_line(&l[n++], &bd->process, i, "process", process_part_name);
	for (i = 0; bd->transfer.total.n && i < NLINES; i++)
		split_line(&l[n++], &bd->transfer, i, tname, transfer_part_name);
	print_lines(out, l, n);
	print_parts(out, bd, EXT_BREAKDOWN, EXT_RWND_LIMITED);
	print_parts(out, bd, EXT_RWND_LIMITED, EXT_BD_END);
}

/* ---- the picture ------------------------------------------------------------------ */

/* Paul Tol's colours, told apart by colour-blind readers too. */
static const char *const process_colour[NPROCESS_PARTS] = {
	"#4477aa", "#ee6677", "#ccbb44",
};
static const char *const transfer_colour[NTRANSFER_PARTS] = {
	"#aa3377", "#66ccee", "#228833", "#bbbbbb",
};

/*
 * A split's bars as gnuplot data, $NAME: per line of its text (p50 p90
 * p99), the share of each part in percent, from the parts printed, then
 * the total printed ("180.2 ms").
 */
static void plot_data(FILE *gp, const char *name, const struct split *s,
		      const char *const *part_name)
{
	struct sline l;
	unsigned int i, k;

	fprintf(gp, "$%s << EOD\n", name);
	for (i = 0; s->total.n && i < NLINES; i++) {
		split_line(&l, s, i, "", part_name);
		fprintf(gp, "p%u", band_q[i] / 10);
		for (k = 0; k < s->nparts; k++)
			fprintf(gp, " %.3f", l.q ? 100.0 * (double)l.qpart[k] / (double)l.q : 0);
		fprintf(gp, " \"%s %s\"\n", l.total, l.unit);
	}
	fputs("EOD\n", gp);
}

/* A string for gnuplot: in single quotes, a quote doubled. */
static void gp_str(FILE *gp, const char *s)
{
	fputc('\'', gp);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', gp);
		if (*s != '\n')
			fputc(*s, gp);
	}
	fputc('\'', gp);
}

/* One panel: the bars of $NAME, stacked to 100 %, the totals above. */
static void plot_panel(FILE *gp, const char *name, const char *title,
		       const struct split *s, const char *const *part_name,
		       const char *const *colour)
{
	unsigned int k;

	if (!s->total.n) {
		fputs("set multiplot next\n", gp);
		return;
	}
	fputs("set title ", gp);
	gp_str(gp, title);
	fputs("\nplot ", gp);
	for (k = 0; k < s->nparts; k++)
		fprintf(gp, "$%s using %u%s title '%s' lc rgb '%s', ", name,
			k + 2, k ? "" : ":xtic(1)", part_name[k], colour[k]);
	fprintf(gp, "$%s using 0:(106):%u with labels notitle\n", name,
		s->nparts + 2);
}

int bd_plot(const char *png, const char *title, const struct bd_row *rows,
	    size_t n)
{
	char name[16], t[160];
	FILE *gp;
	size_t i;

	if (n > BD_PLOT_ROWS)
		n = BD_PLOT_ROWS;
	gp = gnuplot_open();
	if (!gp)
		return -1;
	fprintf(gp, "set terminal pngcairo noenhanced size 1200,%zu font ',10'\n"
		"set output '%s'\n", 90 + 260 * n, png);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "p%zu", i);
		plot_data(gp, name, &rows[i].bd->process, process_part_name);
		snprintf(name, sizeof(name), "t%zu", i);
		plot_data(gp, name, &rows[i].bd->transfer, transfer_part_name);
	}
	fprintf(gp, "set multiplot layout %zu,2 title ", n);
	gp_str(gp, title);
	fputs("\nset style data histograms\n"
		"set style histogram rowstacked\n"
		"set style fill solid 0.9 border rgb '#444444'\n"
		"set boxwidth 0.6\n"
		"set yrange [0:115]\n"
		"set ytics 0,25,100\n"
		"set grid ytics\n"
		"set ylabel '% of the time'\n"
		"set key outside right top vertical\n", gp);
	for (i = 0; i < n; i++) {
		const struct breakdown *bd = rows[i].bd;

		snprintf(name, sizeof(name), "p%zu", i);
		snprintf(t, sizeof(t), "%s: process", rows[i].label);
		plot_panel(gp, name, t, &bd->process, process_part_name,
			   process_colour);
		snprintf(name, sizeof(name), "t%zu", i);
		snprintf(t, sizeof(t), "%s: %s", rows[i].label,
			 transfer_name(bd->type));
		plot_panel(gp, name, t, &bd->transfer, transfer_part_name,
			   transfer_colour);
	}
	fputs("unset multiplot\n", gp);
	return gnuplot_close(gp, png);
}
