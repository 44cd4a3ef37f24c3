// SPDX-License-Identifier: GPL-2.0
/*
 * The fleet path's messages (frame.h): an item and a message read back
 * give the bytes written, for records and for malformed lines of every
 * byte; a control message round-trips field for field; and each defect a
 * loader can meet - a short or long item count, a missing '|', a bad host,
 * an escape cut short, a wrapped sequence - is refused with a reason.
 * D2 carries its load id, D1 none; a C1 of before sent_seq and
 * interval_us still parses (sent_seq = next_seq, interval_us 0), a C1 and
 * an L1 whose fields contradict each other do not; final may be 2.  The
 * store's controls and cpu_accounts tables have a column for each field,
 * named as on the wire: ingest and fleet gaps name the columns that way.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "frame.h"
#include "tap.h"

static const char rline[] =
	"V6 R 1795220891 439697 127.0.0.1:44396 127.0.0.1:8080 3000 167943 335 0 1 167608 0 200 0 32768";
static const char eline[] =
	"V6 E 1795220891 439697 127.0.0.1:44396 127.0.0.1:8080 1 3000 0 200 0 335";

static bool parse(const char *l, struct record *r)
{
	char why[PARSE_WHY_MAX];

	return parse_log_line(l, strlen(l), r, why);
}

/* A message of the given items, as ship builds it. */
static size_t build(char *msg, const char *const *lines, const size_t *lens,
		    const struct record *const *recs, unsigned int n,
		    uint64_t seq)
{
	struct frame_hdr h = { .epoch = 42, .seq = seq, .cpu = 3, .n = n };
	size_t o;
	unsigned int i;

	strcpy(h.host, "host-1.example_X");
	o = frame_data_hdr(msg, 256, &h);
	for (i = 0; i < n; i++) {
		o += frame_item(msg + o, lines[i], lens[i], recs[i]);
		msg[o++] = '|';
	}
	return o;
}

/*
 * Lines with extension fields (log_ext) travel as they are: an item and
 * its message read back give the line byte for byte, and the loader's
 * parse of it the fields.
 */
static void test_ext(void)
{
	static const char rx[] =
		"V6 R 1795220891 439697 127.0.0.1:44396 127.0.0.1:8080 3000 167943 335 0 1 167608 0 200 0 32768 netns=4026532500 cgroup=9876 rq_wait=3";
	static const char ex[] =
		"V6 E 1795220891 439697 127.0.0.1:44396 127.0.0.1:8080 1 3000 0 200 0 335 netns=4026532500 cgroup=9876";
	static char msg[FRAME_MAX], line[PARSE_LINE_MAX];
	const char *lines[] = { rx, ex }, *items[4];
	size_t ls[] = { strlen(rx), strlen(ex) }, lens[4], n;
	char why[PARSE_WHY_MAX];
	struct record r, e, back;
	const struct record *recs[] = { &r, &e };
	struct frame_hdr h;
	int role, kind;

	ok(parse(rx, &r) && parse(ex, &e), "lines with extension fields parse");
	e.role = ROLE_CLIENT;
	n = build(msg, lines, ls, recs, 2, 7);
	ok(frame_parse_data(msg, n, &h, items, lens, 4, why) && h.n == 2,
	   "a message of them read back: %s", why);
	kind = frame_item_line(items[0], lens[0], line, &n, &role);
	ok(kind == 1 && n == strlen(rx) && !memcmp(line, rx, n) && role == -1,
	   "R with extension fields: the line byte for byte");
	ok(parse_log_line(line, n, &back, why) && back.ext[EXT_NETNS] == 4026532500ULL &&
	   back.ext[EXT_CGROUP] == 9876, "and its netns and cgroup parsed back");
	kind = frame_item_line(items[1], lens[1], line, &n, &role);
	ok(kind == 1 && n == strlen(ex) && !memcmp(line, ex, n) && role == ROLE_CLIENT,
	   "E with extension fields: the line byte for byte, its role after it");
}

static void test_roundtrip(void)
{
	static char msg[FRAME_MAX * 4], line[PARSE_LINE_MAX];
	char bad[256], why[PARSE_WHY_MAX];
	const char *items[8];
	size_t lens[8], n, i;
	struct record r, e;
	struct frame_hdr h;
	unsigned int c;
	int role, kind;
	bool all = true;

	for (c = 0; c < 256; c++)
		bad[c] = (char)c;
	ok(parse(rline, &r) && parse(eline, &e), "sample lines parse");
	e.role = ROLE_CLIENT;
	{
		const char *lines[] = { rline, eline, bad };
		size_t ls[] = { strlen(rline), strlen(eline), sizeof(bad) };
		const struct record *recs[] = { &r, &e, NULL };

		n = build(msg, lines, ls, recs, 3, 1000);
	}
	for (i = 0; i < n; i++)
		if ((unsigned char)msg[i] < 0x20 || (unsigned char)msg[i] > 0x7e)
			all = false;
	ok(all, "a message is printable ASCII only, whatever its lines hold");
	ok(frame_kind(msg, n) == 'D', "a data message is told as such");
	ok(frame_parse_data(msg, n, &h, items, lens, 8, why) && h.n == 3 &&
	   h.seq == 1000 && h.epoch == 42 && h.cpu == 3 &&
	   !strcmp(h.host, "host-1.example_X"), "header read back: %s", why);
	kind = frame_item_line(items[0], lens[0], line, &n, &role);
	ok(kind == 1 && n == strlen(rline) && !memcmp(line, rline, n) &&
	   role == -1, "a record's line comes back byte for byte");
	kind = frame_item_line(items[1], lens[1], line, &n, &role);
	ok(kind == 1 && n == strlen(eline) && !memcmp(line, eline, n) &&
	   role == ROLE_CLIENT, "an E record's line and its role come back");
	kind = frame_item_line(items[2], lens[2], line, &n, &role);
	ok(kind == 0 && n == sizeof(bad) && !memcmp(line, bad, n),
	   "a malformed line of all 256 byte values comes back byte for byte");
}

static void refused(const char *msg, const char *what);

/* A data message's header with load id @load_id, read back. */
static bool hdr_roundtrip(uint64_t load_id, int cpu, char *msg, size_t *len)
{
	struct frame_hdr h = { .epoch = UINT64_MAX, .seq = UINT64_MAX - 1,
			       .cpu = cpu, .load_id = load_id, .n = 1 }, d;
	char why[PARSE_WHY_MAX] = "";
	const char *items[2];
	size_t lens[2], n;

	memset(h.host, 'h', HOST_ID_MAX);
	h.host[HOST_ID_MAX] = '\0';
	n = frame_data_hdr(msg, FRAME_HDR_MAX + 1, &h);
	if (n > FRAME_HDR_MAX)
		return false;
	memcpy(msg + n, "x|", 3);
	*len = n + 2;
	if (!frame_parse_data(msg, n + 2, &d, items, lens, 2, why)) {
		diag("%.*s: %s", (int)(n + 2), msg, why);
		return false;
	}
	return d.load_id == load_id && d.cpu == cpu && d.epoch == h.epoch &&
	       d.seq == h.seq && !strcmp(d.host, h.host) && lens[0] == 1;
}

static void test_d2(void)
{
	char msg[FRAME_HDR_MAX + 8];
	size_t n = 0;

	ok(hdr_roundtrip(UINT64_MAX, 65535, msg, &n) && !memcmp(msg, "D2 ", 3),
	   "a load id: D2, read back with it; the longest header fits FRAME_HDR_MAX (%zu bytes)",
	   n - 2);
	ok(hdr_roundtrip(0, -1, msg, &n) && !memcmp(msg, "D1 ", 3),
	   "no load id: D1, as before, read back with load id 0");
	refused("D2 h 1 0 0 0 1 a|", "D2 with load id 0");
	refused("D2 h 1 0 0 x 1 a|", "D2 with a load id that is no number");
	refused("D2 h 1 0 0 1 a|", "D2 without its load id");
	refused("D4 h 1 0 0 1 1 a|", "D4");
}

/* D3: a series run's lines, its width in the header, no cpu. */
static void test_d3(void)
{
	static const char line[] = "1795218000 001000 * 1448 0 1 0 0 0 0 0 0 1 0 0 ce_bytes=1448";
	struct frame_hdr h = { .epoch = 5, .seq = 7, .cpu = 3, .load_id = 9,
			       .width_us = SERIES_WIDTH_MAX_US, .n = 2 }, d;
	char msg[FRAME_MAX], why[PARSE_WHY_MAX] = "", out[PARSE_LINE_MAX];
	const char *items[4];
	size_t lens[4], n, len;
	int role;

	snprintf(h.host, sizeof(h.host), "rack-1.h2");
	n = frame_data_hdr(msg, sizeof(msg), &h);
	n += frame_series_item(msg + n, line, strlen(line), true);
	msg[n++] = '|';
	n += frame_series_item(msg + n, "bad|line\n", 10, false);
	msg[n++] = '|';
	ok(!memcmp(msg, "D3 rack-1.h2 5 7 60000000 2 ", 28) &&
	   frame_parse_data(msg, n, &d, items, lens, 4, why) && d.n == 2 &&
	   d.width_us == SERIES_WIDTH_MAX_US && d.cpu == -1 && !d.load_id &&
	   d.seq == 7 && d.epoch == 5,
	   "D3: the width in the header, no cpu or load id; read back (%s)", why);
	ok(frame_item_line(items[0], lens[0], out, &len, &role) == 1 &&
	   len == strlen(line) && !memcmp(out, line, len) && role == -1,
	   "a series line is its item, read back as it was");
	ok(frame_item_line(items[1], lens[1], out, &len, &role) == 0 &&
	   len == 10 && !memcmp(out, "bad|line\n", 10),
	   "a line that is not one goes escaped, read back byte for byte");
	refused("D3 h 1 0 0 1 a|", "D3 of width 0");
	refused("D3 h 1 0 60000001 1 a|", "D3 wider than a minute");
	refused("D3 h 1 0 1 a|", "D3 without its width");
}

/* Where the last field of @msg's first @n bytes starts, less its space. */
static size_t last_space(const char *msg, size_t n)
{
	while (n && msg[n - 1] != ' ')
		n--;
	return n ? n - 1 : 0;
}

static void test_ctl(void)
{
	struct frame_ctl c = { .epoch = 7, .ctl_seq = 3 }, d = { 0 };
	char msg[512], why[PARSE_WHY_MAX];
	size_t n;
	unsigned int i;

	strcpy(c.host, "h");
	for (i = 0; i < CTL_NFIELDS; i++)
		c.v[i] = i == CTL_MODULE_KNOWN ? 1 : i == CTL_FINAL ? 2 :
			 i == CTL_INTERVAL_US ? FRAME_INTERVAL_MAX_US :
			 UINT64_MAX - i;
	c.v[CTL_SENT_SEQ] = c.v[CTL_NEXT_SEQ];
	/* both below sent_seq, as a sender counts them */
	c.v[CTL_CAP_DROPPED] = c.v[CTL_REFUSED] = UINT64_MAX / 2 - 10;
	n = frame_ctl(msg, sizeof(msg), &c);
	why[0] = '\0';
	ok(n <= 400 && frame_kind(msg, n) == 'C' && frame_parse_ctl(msg, n, &d, why) &&
	   !strcmp(c.host, d.host) && c.epoch == d.epoch &&
	   c.ctl_seq == d.ctl_seq && !memcmp(c.v, d.v, sizeof(c.v)) && d.sent_known,
	   "a control message of the longest fields (%zu bytes) round-trips, final 2 too %s",
	   n, why);
	ok(!frame_parse_ctl(msg, last_space(msg, n), &d, why),
	   "a control message without interval_us is refused: %s", why);
	msg[n] = ' ';
	msg[n + 1] = '1';
	ok(!frame_parse_ctl(msg, n + 2, &d, why), "one with a field too many is refused: %s", why);

	/* a tcprt before sent_seq: its C1 ends after final */
	c.v[CTL_FINAL] = 1;
	n = frame_ctl(msg, sizeof(msg), &c);
	for (i = 0; i < 2; i++)
		n = last_space(msg, n);
	ok(frame_parse_ctl(msg, n, &d, why) && !d.sent_known &&
	   d.v[CTL_SENT_SEQ] == c.v[CTL_NEXT_SEQ] && d.v[CTL_INTERVAL_US] == 0 &&
	   d.v[CTL_FINAL] == 1,
	   "a C1 of before (%u fields): sent_seq = next_seq, interval_us 0 (unknown) %s",
	   CTL_NFIELDS_V1, why);
	ok(!frame_parse_ctl(msg, last_space(msg, n), &d, why),
	   "one field fewer still is refused: %s", why);
}

/* A control message of @c's fields but one, set to @v: refused? */
static bool ctl_refuses(unsigned int f, uint64_t v, char why[PARSE_WHY_MAX])
{
	struct frame_ctl c = { .host = "h", .epoch = 1, .ctl_seq = 1 }, d;
	char msg[512];
	size_t n;

	c.v[CTL_NEXT_SEQ] = 100;
	c.v[CTL_SENT_SEQ] = 90;
	c.v[CTL_INTERVAL_US] = 10000000;
	c.v[f] = v;
	n = frame_ctl(msg, sizeof(msg), &c);
	why[0] = '\0';
	return !frame_parse_ctl(msg, n, &d, why);
}

static void test_ctl_ranges(void)
{
	char why[PARSE_WHY_MAX];

	ok(!ctl_refuses(CTL_FINAL, 0, why) && !ctl_refuses(CTL_SENT_SEQ, 100, why) &&
	   !ctl_refuses(CTL_SENT_SEQ, 0, why), "C1: sent_seq 0 to next_seq, final 0: taken");
	ok(ctl_refuses(CTL_FINAL, 3, why), "C1: final 3 refused (%s)", why);
	ok(ctl_refuses(CTL_MODULE_KNOWN, 2, why), "C1: module_known 2 refused (%s)", why);
	ok(ctl_refuses(CTL_SENT_SEQ, 101, why), "C1: sent_seq past next_seq refused (%s)", why);
	ok(ctl_refuses(CTL_INTERVAL_US, FRAME_INTERVAL_MAX_US + 1, why),
	   "C1: an interval longer than a year refused (%s)", why);
	ok(!ctl_refuses(CTL_CAP_DROPPED, 90, why) && ctl_refuses(CTL_CAP_DROPPED, 91, why),
	   "C1: cap_dropped up to sent_seq, not past it (%s)", why);
	ok(ctl_refuses(CTL_REFUSED, UINT64_MAX, why),
	   "C1: refused past sent_seq refused, without wrapping (%s)", why);
	ok(!ctl_refuses(CTL_BAD, 100, why) && ctl_refuses(CTL_BAD, 101, why),
	   "C1: bad_lines up to next_seq, not past it (%s)", why);
}

static void test_cpu(void)
{
	struct frame_cpu c = { .epoch = UINT64_MAX, .ctl_seq = UINT64_MAX,
			       .load_id = UINT64_MAX, .cpu = -1 }, d = { 0 };
	char msg[512], why[PARSE_WHY_MAX] = "";
	size_t n;

	memset(c.host, 'h', HOST_ID_MAX);
	c.host[HOST_ID_MAX] = '\0';
	c.v[CPU_FIRST] = 0;
	c.v[CPU_SENT_NEXT] = UINT64_MAX - 1;
	c.v[CPU_READ_NEXT] = UINT64_MAX;
	c.v[CPU_RELAY_SKIPPED] = UINT64_MAX / 2;
	c.v[CPU_CAP_DROPPED] = UINT64_MAX / 4;
	c.v[CPU_REFUSED] = UINT64_MAX / 4;
	c.v[CPU_FINAL] = 2;
	c.v[CPU_UNSENT_SKIPPED] = 1;
	n = frame_cpu(msg, sizeof(msg), &c);
	ok(n <= 400 && !memcmp(msg, "L1 ", 3) && frame_kind(msg, n) == 'L' &&
	   frame_parse_cpu(msg, n, &d, why) && !strcmp(c.host, d.host) &&
	   c.epoch == d.epoch && c.ctl_seq == d.ctl_seq && c.load_id == d.load_id &&
	   c.cpu == d.cpu && !memcmp(c.v, d.v, sizeof(c.v)),
	   "a log's account of the longest fields (%zu bytes) round-trips %s", n, why);
	ok(!frame_parse_ctl(msg, n, (struct frame_ctl[1]){ 0 }, why) &&
	   !frame_parse_data(msg, n, (struct frame_hdr[1]){ 0 }, NULL, NULL, 0, why),
	   "it is no control nor data message");
}

static void cpu_refused(const char *msg, const char *what)
{
	char why[PARSE_WHY_MAX] = "";
	struct frame_cpu c;

	ok(!frame_parse_cpu(msg, strlen(msg), &c, why), "L1 refused: %s (%s)", what, why);
}

static void test_cpu_defects(void)
{
	struct frame_cpu c;
	char why[PARSE_WHY_MAX] = "";
	const char *good = "L1 h 1 2 3 4 10 20 15 3 1 1 0 0";

	ok(frame_parse_cpu(good, strlen(good), &c, why) && c.cpu == 4 &&
	   c.v[CPU_FIRST] == 10 && c.v[CPU_READ_NEXT] == 20 &&
	   c.v[CPU_SENT_NEXT] == 15 && c.v[CPU_RELAY_SKIPPED] == 3,
	   "L1 h 1 2 3 4 10 20 15 3 1 1 0 0: taken %s", why);
	cpu_refused("L1 h 1 2 0 4 10 20 15 3 1 1 0 0", "load id 0");
	cpu_refused("L1 h 1 2 3 65536 10 20 15 3 1 1 0 0", "cpu 65536");
	cpu_refused("L1 h 1 2 3 -2 10 20 15 3 1 1 0 0", "cpu -2");
	cpu_refused("L1 h 1 2 3 4 16 20 15 3 1 1 0 0", "first past sent_next");
	cpu_refused("L1 h 1 2 3 4 10 14 15 3 1 1 0 0", "sent_next past read_next");
	cpu_refused("L1 h 1 2 3 4 10 20 15 11 0 0 0 0", "more skipped than [first, read_next) holds");
	cpu_refused("L1 h 1 2 3 4 10 20 15 3 4 4 0 0", "skipped, dropped and refused past it");
	cpu_refused("L1 h 1 2 3 4 0 18446744073709551615 5 18446744073709551615 1 1 0 0",
		    "counts that wrap when added");
	cpu_refused("L1 h 1 2 3 4 10 20 15 3 1 1 3 0", "final 3");
	cpu_refused("L1 h 1 2 3 4 10 20 15 3 1 1 0", "a field missing");
	cpu_refused("L1 h 1 2 3 4 10 20 15 3 1 1 0 4", "unsent_skipped past relay_skipped");
	cpu_refused("L1 h 1 2 3 4 10 20 15 3 1 1 0 0 0", "a field too many");
	cpu_refused("L1 h 1 2 3 4 10 20 15 3 1 1 x 0", "a field that is no number");
	cpu_refused("L1 h 1 2 3 4 10 20 15 3 1 1 18446744073709551616 0", "a number past 64 bits");
	cpu_refused("L1 h!x 1 2 3 4 10 20 15 3 1 1 0 0", "a bad host id");
	cpu_refused("L2 h 1 2 3 4 10 20 15 3 1 1 0", "L2");
}

static void refused(const char *msg, const char *what)
{
	char why[PARSE_WHY_MAX] = "";
	const char *items[4];
	size_t lens[4];
	struct frame_hdr h;

	ok(!frame_parse_data(msg, strlen(msg), &h, items, lens, 4, why),
	   "refused: %s (%s)", what, why);
}

static void test_defects(void)
{
	char line[PARSE_LINE_MAX];
	size_t n;
	int role;

	refused("D1 h 1 0 0 2 a|", "fewer items than said");
	refused("D1 h 1 0 0 1 a|b|", "more items than said");
	refused("D1 h 1 0 0 1 a", "an item without its '|'");
	refused("D1 h/x 1 0 0 1 a|", "a host id with a '/'");
	refused("D1 h 1 18446744073709551615 0 2 a|b|", "numbers that wrap");
	refused("D1 h 1 0 0 5 a|b|c|d|e|", "more items than the caller takes");
	refused("D1 h x 0 0 1 a|", "an epoch that is not a number");
	ok(frame_kind("X1 h", 4) == 0 && frame_kind("D1", 2) == 0,
	   "other lines are not messages");
	ok(frame_item_line("!ab\\x4", 6, line, &n, &role) < 0,
	   "an escape cut short is a defective item");
	ok(frame_item_line("!a~b", 4, line, &n, &role) < 0,
	   "a bare '~' in a malformed line's item is a defective item");
	ok(frame_item_line("V6 E~x", 6, line, &n, &role) < 0,
	   "a role other than s or c is a defective item");
	ok(frame_item_line("", 0, line, &n, &role) < 0, "an empty item is defective");
	ok(frame_host_ok("a") && !frame_host_ok("") &&
	   !frame_host_ok("0123456789012345678901234567890123456789012345678901234567890123X"),
	   "host ids: 1 to 64 characters");
}

static const char schema_sql[] =
#include "schema.h"
	;

/* tcprt.@table has a column for each of @names. */
static void table_has(const char *table, const char *const *names, size_t n)
{
	char head[96], col[64];
	const char *t, *end;
	size_t i;

	snprintf(head, sizeof(head), "CREATE TABLE IF NOT EXISTS tcprt.%s (", table);
	t = strstr(schema_sql, head);
	end = t ? strstr(t, ") ENGINE") : NULL;
	ok(t && end, "fleet/schema.sql has the %s table", table);
	if (!t || !end)
		return;
	for (i = 0; i < n; i++) {
		const char *c;

		snprintf(col, sizeof(col), "\n    %s ", names[i]);
		c = strstr(t, col);
		ok(c && c < end, "%s has a column %s", table, names[i]);
	}
}

static void test_schema(void)
{
	static const char *const cpu_keys[] = {
		"host", "epoch", "ctl_seq", "load_id", "cpu",
	};

	table_has("controls", ctl_field_name, CTL_NFIELDS);
	table_has("cpu_accounts", cpu_keys, sizeof(cpu_keys) / sizeof(cpu_keys[0]));
	table_has("cpu_accounts", cpu_field_name, CPU_NFIELDS);
}

int main(void)
{
	test_roundtrip();
	test_ext();
	test_d2();
	test_d3();
	test_ctl();
	test_ctl_ranges();
	test_cpu();
	test_cpu_defects();
	test_defects();
	test_schema();
	return done_testing();
}
