// SPDX-License-Identifier: GPL-2.0
/*
 * The fleet path's messages (frame.h): an item and a message read back
 * give the bytes written, for records and for malformed lines of every
 * byte; a control message round-trips field for field; and each defect a
 * loader can meet - a short or long item count, a missing '|', a bad host,
 * an escape cut short, a wrapped sequence - is refused with a reason.
 * The store's controls table has a column for each control field, named
 * as on the wire: ingest and fleet gaps name the columns that way.
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

static void test_ctl(void)
{
	struct frame_ctl c = { .epoch = 7, .ctl_seq = 3 }, d = { 0 };
	char msg[512], why[PARSE_WHY_MAX];
	size_t n;
	unsigned int i;

	strcpy(c.host, "h");
	for (i = 0; i < CTL_NFIELDS; i++)
		c.v[i] = i == CTL_MODULE_KNOWN || i == CTL_FINAL ? 1 :
			 UINT64_MAX - i;
	n = frame_ctl(msg, sizeof(msg), &c);
	why[0] = '\0';
	ok(frame_kind(msg, n) == 'C' && frame_parse_ctl(msg, n, &d, why) &&
	   !strcmp(c.host, d.host) && c.epoch == d.epoch &&
	   c.ctl_seq == d.ctl_seq && !memcmp(c.v, d.v, sizeof(c.v)),
	   "a control message round-trips %s", why);
	ok(!frame_parse_ctl(msg, n - 2, &d, why), "a control message cut short is refused: %s", why);
	msg[n] = ' ';
	msg[n + 1] = '1';
	ok(!frame_parse_ctl(msg, n + 2, &d, why), "one with a field too many is refused: %s", why);
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

static void test_schema(void)
{
	const char *t = strstr(schema_sql, "CREATE TABLE IF NOT EXISTS tcprt.controls (");
	const char *end = t ? strstr(t, ") ENGINE") : NULL;
	char col[64];
	size_t i;

	ok(t && end, "fleet/schema.sql has the controls table");
	if (!t || !end)
		return;
	for (i = 0; i < CTL_NFIELDS; i++) {
		const char *c;

		snprintf(col, sizeof(col), "\n    %s ", ctl_field_name[i]);
		c = strstr(t, col);
		ok(c && c < end, "controls has a column %s", ctl_field_name[i]);
	}
}

int main(void)
{
	test_roundtrip();
	test_ext();
	test_ctl();
	test_defects();
	test_schema();
	return done_testing();
}
