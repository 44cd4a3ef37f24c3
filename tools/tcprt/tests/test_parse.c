// SPDX-License-Identifier: GPL-2.0
/*
 * Parser tests: every record type, IPv6, stats lines, the vendor's TCP-RT
 * lines, and hostile input - too many or too few fields, non-numeric,
 * overlong, binary garbage, a missing newline at the end of a file -
 * through parse_*_line() and through the file reader (input.c), which must
 * count each bad line and go on.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "input.h"
#include "parse.h"
#include "tap.h"

static struct record rec;
static char why[PARSE_WHY_MAX];

static int parse(const char *line)
{
	return parse_log_line(line, strlen(line), &rec, why);
}

/* The line must be refused, with a reason that contains @reason. */
static void refused(const char *line, const char *reason, const char *desc)
{
	int parsed = parse(line);

	ok(!parsed && strstr(why, reason), "refused: %s (%s)", desc,
	   parsed ? "parsed!" : why);
}

static void endpoint(char *buf, size_t len, const char *addr, unsigned int port)
{
	snprintf(buf, len, strchr(addr, ':') ? "[%s]:%u" : "%s:%u", addr, port);
}

/*
 * The vendor's TCP-RT as its published output.c writes a record: "V6", the
 * type, then every value - start seconds, start microseconds (unpadded),
 * peer address:port, local address:port, the fields - each followed by one
 * space, then '\n'.  Its W has out_of_order before mss; its P has 10
 * fields (newest), 7 or 5 (older generations).  The layouts by name:
 */
static const char *const vendor_w[] = {
	"sent_bytes", "duration", "min_rtt", "retrans", "task_seq",
	"process_time", "upload_time", "unacked_bytes", "out_of_order", "mss",
	NULL,
};
static const char *const vendor_p7[] = {
	"sent_bytes", "duration", "retrans", "task_seq", "min_rtt",
	"out_of_order", "mss", NULL,
};
static const char *const vendor_p5[] = {
	"sent_bytes", "retrans", "task_seq", "min_rtt", "mss", NULL,
};

/* A vendor line of @type with @n values (as above), without its '\n'. */
static const char *vline(char type, unsigned long long sec,
			 unsigned long long usec, const char *peer,
			 const char *local, unsigned int n,
			 const unsigned long long *v)
{
	static char buf[512];
	size_t o;
	unsigned int i;

	o = (size_t)snprintf(buf, sizeof(buf), "V6 %c %llu %llu %s %s ", type,
			     sec, usec, peer, local);
	for (i = 0; i < n && o < sizeof(buf); i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%llu ", v[i]);
	return buf;
}

/* The index in rec_desc of field @name of @type. */
static unsigned int field(enum rec_type type, const char *name)
{
	unsigned int i;

	for (i = 0; i < rec_desc[type].nfields; i++)
		if (!strcmp(rec_desc[type].fields[i], name))
			return i;
	return ~0u;
}

/* Field @name of the last parsed record, or ~0 when its line had none. */
static uint64_t fv(const char *name)
{
	unsigned int i = field(rec.type, name);

	return rec_has(&rec, i) ? rec.f[i] : ~0ULL;
}

/* The vendor layout of a record's type and field count, or NULL. */
static const char *const *vendor_layout(const struct record *r)
{
	if (r->type == REC_W)
		return vendor_w;
	if (r->type == REC_P && r->nfields == 7)
		return vendor_p7;
	if (r->type == REC_P && r->nfields == 5)
		return vendor_p5;
	return NULL;
}

/* Print a record back as its writer - tcp_rt or the vendor - writes it. */
static void to_line(const struct record *r, char *buf, size_t len)
{
	const char *const *names = NULL;
	bool vendor = r->source == SRC_VENDOR;
	char peer[64], local[64];
	size_t o;
	unsigned int i;

	endpoint(peer, sizeof(peer), r->peer_addr, r->peer_port);
	endpoint(local, sizeof(local), r->local_addr, r->local_port);
	o = (size_t)snprintf(buf, len, vendor ? "V6 %s %llu %llu %s %s" :
			     "V6 %s %llu %06llu %s %s",
			     rec_desc[r->type].name, (unsigned long long)r->sec,
			     (unsigned long long)r->usec, peer, local);
	if (vendor)
		names = vendor_layout(r);
	for (i = 0; i < r->nfields && o < len; i++) {
		unsigned int at = names ? field(r->type, names[i]) : i;

		/* tcp_rt's W: the document's 9, without out_of_order */
		if (!vendor && r->type == REC_W && i == 8)
			at = 9;
		o += (size_t)snprintf(buf + o, len - o, " %llu",
				      (unsigned long long)r->f[at]);
	}
	for (i = 0; i < REC_EXT_N && o < len; i++)
		if (rec_has_ext(r, (enum rec_ext)i))
			o += (size_t)snprintf(buf + o, len - o, " %s=%llu",
					      rec_ext_name[i],
					      (unsigned long long)r->ext[i]);
	if (vendor && o < len)
		snprintf(buf + o, len - o, " ");
}

static void test_types(void)
{
	uint64_t v;

	ok(parse("V6 R 1795218248 701232 127.0.0.1:41252 127.0.0.1:7100 5000 237115 322 0 1 234455 0 300 0 32768"),
	   "R record parses");
	ok(rec.type == REC_R && rec.sec == 1795218248 && rec.usec == 701232 &&
	   !strcmp(rec.peer_addr, "127.0.0.1") && rec.peer_port == 41252 &&
	   rec.local_port == 7100 && rec.nfields == 10 && rec.f[0] == 5000 &&
	   rec.f[1] == 237115 && rec.f[9] == 32768, "R header and fields");
	ok(rec.role == ROLE_SERVER && rec.port == 7100, "R: server, port 7100");
	ok(rec_metric(&rec, M_PROCESS, &v) && v == 234455, "R process_time");
	ok(rec_metric(&rec, M_DOWNLOAD, &v) && v == 237115 - 234455 - 0,
	   "R download = duration - upload - process");
	ok(rec_sent_bytes(&rec) == 5000 && rec_recv_bytes(&rec) == 300,
	   "R bytes");

	ok(parse("V6 W 1732100000 250117 10.0.0.2:51234 10.0.0.1:80 5120 2301 180 2 1 2004 12 310 1448") &&
	   rec.type == REC_W && rec.nfields == 9 && rec.f[7] == 310 &&
	   rec.role == ROLE_SERVER && rec.port == 80 && rec_retrans(&rec) == 2,
	   "W record: 9 fields, unacked_bytes");
	ok(parse("V6 N 1732100000 250117 10.0.0.2:51234 10.0.0.1:80 2 1500 400 1 1448") &&
	   rec.type == REC_N && rec.nfields == 5 && rec.f[2] == 400 &&
	   rec_metric(&rec, M_DURATION, &v) && v == 1500 &&
	   !rec_metric(&rec, M_PROCESS, &v), "N record: 5 fields, duration only");
	ok(parse("V6 P 1795219078 197248 127.0.0.1:7600 127.0.0.1:50382 300 205525 1021 0 1 205000 500 4000 0 32768") &&
	   rec.type == REC_P && rec.role == ROLE_CLIENT && rec.port == 7600,
	   "P record: client, the peer port is the service port");
	ok(rec_metric(&rec, M_PROCESS, &v) && v == 205000 &&
	   rec_metric(&rec, M_DOWNLOAD, &v) && v == 500 &&
	   rec_metric(&rec, M_UPLOAD, &v) && v == 25,
	   "P service, response, upload = duration - service - response");
	ok(parse("V6 E 1795218248 697287 127.0.0.1:41252 127.0.0.1:7100 1 5000 0 300 0 322") &&
	   rec.type == REC_E && rec.nfields == 6 && rec.f[5] == 322 &&
	   rec_metric(&rec, M_MIN_RTT, &v) && v == 322,
	   "E record: 6 fields, min_rtt");
	ok(rec.role == ROLE_SERVER && rec.port == 7100,
	   "E alone: the lower port is taken as the service port");
	ok(parse("V6 R 0 000000 1.2.3.4:1 5.6.7.8:65535 0 0 0 0 0 0 0 0 0 0") &&
	   rec.local_port == 65535, "zeros, port 65535");
	ok(parse("V6 R 1 999999 1.2.3.4:1 5.6.7.8:2 18446744073709551615 0 0 0 0 0 0 0 0 0") &&
	   rec.f[0] == UINT64_MAX, "2^64 - 1 fits");
}

static void test_ipv6(void)
{
	ok(parse("V6 R 1 000001 [2001:db8::1]:51234 [2001:db8::2]:443 1 2 3 4 5 6 7 8 0 10") &&
	   !strcmp(rec.peer_addr, "2001:db8::1") &&
	   !strcmp(rec.local_addr, "2001:db8::2") && rec.port == 443,
	   "IPv6 addresses in brackets");
	ok(parse("V6 E 1 000001 [::1]:7100 [::1]:40000 1 2 3 4 5 6") &&
	   !strcmp(rec.peer_addr, "::1"), "IPv6 loopback");
	ok(parse("V6 P 1 000001 [fe80::1:2:3:4]:6379 [fe80::aaaa:bbbb:cccc:dddd]:45678 1 2 3 4 5 6 7 8 0 10") &&
	   !strcmp(rec.local_addr, "fe80::aaaa:bbbb:cccc:dddd"),
	   "IPv6 link-local, long form");
	ok(parse("V6 R 1 000001 [ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535 [::ffff:10.0.0.1]:80 1 2 3 4 5 6 7 8 0 10"),
	   "longest IPv6 address, v4-mapped IPv6 text");
	refused("V6 R 1 000001 2001:db8::1:5 [::1]:443 1 2 3 4 5 6 7 8 0 10",
		"without brackets", "IPv6 without brackets");
	refused("V6 R 1 000001 [2001:db8::g]:5 [::1]:443 1 2 3 4 5 6 7 8 0 10",
		"bad peer", "IPv6 with a bad digit");
	refused("V6 R 1 000001 [::1:5 [::1]:443 1 2 3 4 5 6 7 8 0 10",
		"bad peer", "IPv6 without closing bracket");
	refused("V6 R 1 000001 [::1]:5 1.2.3.4:443 1 2 3 4 5 6 7 8 0 10",
		"different families", "IPv6 peer, IPv4 local");
}

static void test_hostile(void)
{
	char buf[2048];
	size_t i, o;

	refused("", "empty line", "empty line");
	refused("V6 R 1795218248 701232 127.0.0.1:41252 127.0.0.1:7100 5000 237115 322 0 1 234455 0 300 0",
		"too few fields for R", "R with 9 fields");
	refused("V6 R 1795218248 701232 127.0.0.1:41252 127.0.0.1:7100 5000 237115 322 0 1 234455 0 300 0 32768 7",
		"too many fields for R", "R with 11 fields");
	refused("V6 W 1 000001 1.2.3.4:1 1.2.3.4:2 1 2 3 4 5 6 7 8 0 10",
		"too many fields for W: 10 fields after the header, 9 expected (the vendor's W has 10",
		"W with 10 fields and no trailing space");
	refused("V6 N 1 000001 1.2.3.4:1 1.2.3.4:2 1 2 3 4",
		"too few fields for N", "N with 4 fields");
	refused("V6 E 1 000001 1.2.3.4:1 1.2.3.4:2 1 2 3 4 5 6 7",
		"too many fields for E", "E with 7 fields");
	refused("V6 R 1795218248 701232 127.0.0.1:41252", "truncated header",
		"header cut after the peer");
	refused("V6", "truncated header", "just V6");
	refused("V6 R 1 000001 1.2.3.4:1 1.2.3.4:2 1 2x 3 4 5 6 7 8 0 10",
		"duration is not a decimal", "non-numeric duration");
	refused("V6 R 1 000001 1.2.3.4:1 1.2.3.4:2 1 -2 3 4 5 6 7 8 0 10",
		"duration is not a decimal", "negative number");
	refused("V6 R 1 000001 1.2.3.4:1 1.2.3.4:2 1 02 3 4 5 6 7 8 0 10",
		"no leading zero", "leading zero");
	refused("V6 R 1 000001 1.2.3.4:01 1.2.3.4:2 1 2 3 4 5 6 7 8 0 10",
		"bad peer", "port with a leading zero");
	refused("V6 R 1 000001 1.2.3.4:1 1.2.3.4:2 +1 2 3 4 5 6 7 8 0 10",
		"sent_bytes is not a decimal", "number with a sign");
	refused("V6 R 1 000001 1.2.3.4:1 1.2.3.4:2 18446744073709551616 2 3 4 5 6 7 8 0 10",
		"64 bits", "2^64 overflows");
	refused("V6 R 1 000001 1.2.3.4:1 1.2.3.4:2 1 2 3 4 5 6 7 8 2 10",
		"out_of_order is 2", "out_of_order not 0/1");
	refused("V6 R x 000001 1.2.3.4:1 1.2.3.4:2 1 2 3 4 5 6 7 8 0 10",
		"sec is not", "non-numeric sec");
	refused("V6 R 1 00001 1.2.3.4:1 1.2.3.4:2 1 2 3 4 5 6 7 8 0 10",
		"usec is not six digits", "five-digit usec");
	refused("V6 R 1 12345 1.2.3.4:1 1.2.3.4:2 1 2 3 4 5 6 7 8 0 10",
		"(a vendor line would end with a space)",
		"unpadded usec without the vendor's trailing space");
	refused("V6 R 1 0000001 1.2.3.4:1 1.2.3.4:2 1 2 3 4 5 6 7 8 0 10",
		"usec is not six digits", "seven-digit usec");
	refused("V6 R 1 000001 1.2.3.4:0 1.2.3.4:2 1 2 3 4 5 6 7 8 0 10",
		"bad peer", "port 0");
	refused("V6 R 1 000001 1.2.3.4:1 1.2.3.4:65536 1 2 3 4 5 6 7 8 0 10",
		"bad local", "port 65536");
	refused("V6 R 1 000001 1.2.3.4 1.2.3.4:2 1 2 3 4 5 6 7 8 0 10",
		"bad peer", "address without port");
	refused("V6 R 1 000001 1.2.3.256:1 1.2.3.4:2 1 2 3 4 5 6 7 8 0 10",
		"bad peer", "IPv4 octet 256");
	refused("V5 R 1 000001 1.2.3.4:1 1.2.3.4:2 1 2 3 4 5 6 7 8 0 10",
		"not a V6 record", "another version");
	refused("V6 r 1 000001 1.2.3.4:1 1.2.3.4:2 1 2 3 4 5 6 7 8 0 10",
		"unknown record type", "lower-case type");
	refused("V6 RR 1 000001 1.2.3.4:1 1.2.3.4:2 1 2 3 4 5 6 7 8 0 10",
		"unknown record type", "two-letter type");
	refused("V6 R 1 000001 1.2.3.4:1  1.2.3.4:2 1 2 3 4 5 6 7 8 0 10",
		"empty field", "double space");
	refused("V6 R 1 000001 1.2.3.4:1 1.2.3.4:2 1 2 3 4 5 6 7 8 0 10 ",
		"usec is not a number below 1000000 without leading zero",
		"trailing space (a vendor line) with a padded usec");
	refused("V6 R 1 100001 1.2.3.4:1 1.2.3.4:2 1 2 3 4 5 6 7 8 0 10  ",
		"empty field", "two trailing spaces");
	refused(" V6 R 1 000001 1.2.3.4:1 1.2.3.4:2 1 2 3 4 5 6 7 8 0 10",
		"empty field", "leading space");
	refused("V6\tR 1 000001 1.2.3.4:1 1.2.3.4:2 1 2 3 4 5 6 7 8 0 10",
		"binary data: byte 0x09", "tab");
	refused("V6 R 1 000001 1.2.3.4:1 1.2.3.4:2 1 2 3 4 5 6 7 8 0 10\r",
		"binary data: byte 0x0d", "carriage return");
	refused("V6 R 1 000001 1.2.3.4:1 1.2.3.4:2 1 2 3 4 5 6 7 8 0 1\xc3\xa9",
		"binary data: byte 0xc3", "UTF-8");
	for (i = 0, o = 0; i < 65; i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%zu",
				      i ? " " : "", i + 1);
	refused(buf, "too many fields (more than 64)", "65 fields");
	ok(!parse_log_line("V6 R 1\0 000001", 14, &rec, why) &&
	   strstr(why, "byte 0x00"), "refused: NUL byte (%s)", why);
	memset(buf, '7', sizeof(buf));
	ok(!parse_log_line(buf, PARSE_LINE_MAX + 1, &rec, why) &&
	   strstr(why, "longer than"), "refused: overlong line (%s)", why);
}

#define R_DOC	"V6 R 1795218248 701232 127.0.0.1:41252 127.0.0.1:7100 5000 237115 322 0 1 234455 0 300 0 32768"

/* Extension fields (log_ext): name=value after the documented fields. */
static void test_ext(void)
{
	static const char *const typed[] = {
		"V6 R 1 000001 10.0.0.2:1 10.0.0.1:80 1 2 3 4 5 6 7 8 0 10",
		"V6 W 1 000001 10.0.0.2:1 10.0.0.1:80 1 2 3 4 5 6 7 8 10",
		"V6 N 1 000001 10.0.0.2:1 10.0.0.1:80 1 2 3 0 10",
		"V6 P 1 000001 10.0.0.1:80 10.0.0.2:1 1 2 3 4 5 6 7 8 0 10",
		"V6 E 1 000001 10.0.0.2:1 10.0.0.1:80 1 2 3 4 5 6",
	};
	char line[PARSE_LINE_MAX + 90], back[PARSE_LINE_MAX + 90];
	struct record plain;
	unsigned int t;

	ok(parse(R_DOC) && rec.ext_present == 0, "no extension fields: none present");
	plain = rec;
	ok(parse(R_DOC " netns=4026531840 cgroup=1234") &&
	   rec_has_ext(&rec, EXT_NETNS) && rec.ext[EXT_NETNS] == 4026531840ULL &&
	   rec_has_ext(&rec, EXT_CGROUP) && rec.ext[EXT_CGROUP] == 1234,
	   "R with netns and cgroup: both kept");
	ok(rec.nfields == plain.nfields && rec.present == plain.present &&
	   !memcmp(rec.f, plain.f, sizeof(rec.f)) && rec.port == 7100 &&
	   rec.source == SRC_TCP_RT,
	   "R with extension fields: the documented fields as without");
	for (t = 0; t < sizeof(typed) / sizeof(typed[0]); t++) {
		snprintf(line, sizeof(line), "%s netns=%u cgroup=%u", typed[t],
			 4026532000u + t, 7000 + t);
		ok(parse(line) && rec.ext[EXT_NETNS] == 4026532000u + t &&
		   rec.ext[EXT_CGROUP] == 7000 + t && rec.ext_present == 3,
		   "%c with netns and cgroup", typed[t][3]);
		to_line(&rec, back, sizeof(back));
		ok(!strcmp(back, line), "%c with extension fields prints back to itself",
		   typed[t][3]);
	}
	ok(parse(R_DOC " cgroup=9") && rec.ext_present == 1u << EXT_CGROUP &&
	   rec.ext[EXT_CGROUP] == 9, "cgroup alone");
	ok(parse(R_DOC " netns=0") && rec.ext_present == 1u << EXT_NETNS &&
	   rec.ext[EXT_NETNS] == 0, "netns alone, 0");
	ok(parse(R_DOC " cgroup=2 netns=1") && rec.ext[EXT_NETNS] == 1 &&
	   rec.ext[EXT_CGROUP] == 2, "the other order");
	ok(parse(R_DOC " netns=18446744073709551615") &&
	   rec.ext[EXT_NETNS] == UINT64_MAX, "2^64 - 1");

	/* unknown (later) fields: accepted, ignored */
	ok(parse(R_DOC " zz=10 netns=5 x9=abc cgroup=6") && rec.ext_present == 3 &&
	   rec.ext[EXT_NETNS] == 5 && rec.ext[EXT_CGROUP] == 6,
	   "unknown fields before and between: ignored, whatever their value");
	ok(parse(R_DOC " future=1") && rec.ext_present == 0,
	   "only an unknown field: a valid record without extension fields");
	ok(parse("V6 E 1 000001 10.0.0.2:1 10.0.0.1:80 1 2 3 4 5 6 zz_top=1") &&
	   rec.type == REC_E && rec.ext_present == 0, "E with an unknown field");
	ok(parse("V6 R 1795218248 1232 127.0.0.1:41252 127.0.0.1:7100 5000 237115 322 0 1 234455 0 300 0 32768 netns=7 ") &&
	   rec.source == SRC_VENDOR && rec.ext[EXT_NETNS] == 7,
	   "a vendor-form line (trailing space) with an extension field");
	snprintf(line, sizeof(line), "%s", R_DOC);
	for (t = 0; strlen(line) + 32 < PARSE_LINE_MAX; t++)
		snprintf(line + strlen(line), sizeof(line) - strlen(line),
			 " f%u=18446744073709551615", t);
	ok(parse(line) && rec.ext_present == 0,
	   "%u unknown fields, %zu bytes: accepted", t, strlen(line));

	/* what stays malformed */
	refused(R_DOC " netns=x", "netns is not a decimal number", "netns=x");
	refused(R_DOC " cgroup=012", "no leading zero", "cgroup with a leading zero");
	refused(R_DOC " cgroup=-1", "cgroup is not a decimal", "negative cgroup");
	refused(R_DOC " netns=18446744073709551616", "64 bits", "netns 2^64");
	refused(R_DOC " netns=", "bad extension field", "netns without a value");
	refused(R_DOC " =5", "bad extension field", "a value without a name");
	refused(R_DOC " Netns=5", "bad extension field", "an upper-case name");
	refused(R_DOC " 9x=5", "bad extension field", "a name starting with a digit");
	refused(R_DOC " netns=1 netns=2", "extension field netns twice", "netns twice");
	refused(R_DOC " netns=1 77", "'77' after the extension fields is not name=value",
		"a number after an extension field");
	refused(R_DOC " 7 netns=1", "too many fields for R: 11 fields", "an 11th field, then netns");
	refused("V6 R 1 000001 1.2.3.4:1 1.2.3.4:2 1 2 3 4 5 6 7 8 0 netns=1",
		"too few fields for R: 9 fields", "R of 9 fields, then netns");
	refused("V6 W 1 000001 1.2.3.4:1 1.2.3.4:2 1 2 3 4 5 6 7 8 0 10 netns=1",
		"too many fields for W: 10 fields", "tcp_rt W of 10 fields, then netns");
	refused(R_DOC "  netns=1", "empty field", "double space before netns");
	refused("V6 R 1 000001 1.2.3.4:1 1.2.3.4:2 1 2 3 4 5 6 7 8 0 10 netns=1 ",
		"usec is not a number below 1000000",
		"a padded usec and a trailing space after netns");
}


/* The time breakdown's six fields (docs/records.md, "Where the time goes"). */
#define BREAKDOWN	" rq_wait=150100 app=25050 sq_wait=5048 rwnd_limited=0 sndbuf_limited=7 app_limited=1200"
#define R_180	"V6 R 1795638772 439639 127.0.0.1:50264 127.0.0.1:7700 3000 182531 333 0 1 180198 0 300 0 32768"
#define W_LINE	"V6 W 1 000001 10.0.0.2:1 10.0.0.1:80 5000 9000 3 0 2 600 100 1000 1448"
#define P_LINE	"V6 P 1 000001 10.0.0.1:80 10.0.0.2:1 300 10000 200 0 1 6000 3000 4000 0 1448"

static void test_breakdown_parse(void)
{
	char line[PARSE_LINE_MAX + 90], back[PARSE_LINE_MAX + 90];
	unsigned int e;

	ok(parse(R_180 " netns=4026532198 cgroup=250" BREAKDOWN) &&
	   rec.ext_present == (1u << EXT_BD_END) - 1 &&
	   rec.ext[EXT_NETNS] == 4026532198ULL && rec.ext[EXT_CGROUP] == 250 &&
	   rec.ext[EXT_RQ_WAIT] == 150100 && rec.ext[EXT_APP] == 25050 &&
	   rec.ext[EXT_SQ_WAIT] == 5048 && rec.ext[EXT_RWND_LIMITED] == 0 &&
	   rec.ext[EXT_SNDBUF_LIMITED] == 7 && rec.ext[EXT_APP_LIMITED] == 1200,
	   "R with netns, cgroup and the six: every value kept");
	ok(rec.nfields == 10 && rec.f[5] == 180198 && rec.f[9] == 32768,
	   "R with the six: the documented fields as without");
	to_line(&rec, back, sizeof(back));
	ok(!strcmp(back, R_180 " netns=4026532198 cgroup=250" BREAKDOWN),
	   "R with the six prints back to itself");
	ok(parse(R_180 BREAKDOWN) && rec.ext_present == EXT_BD_MASK,
	   "the six without netns and cgroup");
	ok(parse(W_LINE BREAKDOWN) && rec.type == REC_W &&
	   rec.ext[EXT_APP] == 25050, "W with the six");
	ok(parse(P_LINE " netns=9 rq_wait=10 sq_wait=20 rwnd_limited=1 sndbuf_limited=2 app_limited=3") &&
	   rec.type == REC_P && !rec_has_ext(&rec, EXT_APP) &&
	   rec.ext[EXT_RQ_WAIT] == 10 && rec.ext[EXT_SQ_WAIT] == 20 &&
	   rec.ext[EXT_APP_LIMITED] == 3, "P with the five it carries");
	/* any subset, in table order */
	for (e = EXT_BREAKDOWN; e < EXT_BD_END; e++) {
		snprintf(line, sizeof(line), "%s cgroup=3 %s=%u", R_180,
			 rec_ext_name[e], e);
		ok(parse(line) && rec.ext_present == (1u << EXT_CGROUP | 1u << e) &&
		   rec.ext[e] == e, "R with cgroup and %s alone", rec_ext_name[e]);
	}
	ok(parse(R_180 " app=1 sndbuf_limited=0") &&
	   rec.ext_present == (1u << EXT_APP | 1u << EXT_SNDBUF_LIMITED),
	   "two of the six, skipping some");
	ok(parse(R_180 " rq_wait=1 later=x app=2 zz=3") && rec.ext[EXT_APP] == 2,
	   "unknown fields between them: ignored");
	ok(parse(R_180 " sq_wait=4294967295 app_limited=18446744073709551615") &&
	   rec.ext[EXT_APP_LIMITED] == UINT64_MAX, "values up to 2^64 - 1");

	/* malformed: out of order, twice, on a type without it, bad numbers */
	refused(R_180 " app=1 rq_wait=2", "extension field rq_wait after app: not in the order",
		"app before rq_wait");
	refused(R_180 " app_limited=1 rwnd_limited=2", "rwnd_limited after app_limited",
		"app_limited before rwnd_limited");
	refused(R_180 " rq_wait=1 netns=2", "netns after rq_wait", "netns after rq_wait");
	refused(R_180 " netns=1 sq_wait=1 cgroup=2", "cgroup after sq_wait", "cgroup after sq_wait");
	refused(R_180 " rq_wait=1 rq_wait=1", "extension field rq_wait twice", "rq_wait twice");
	refused(R_180 BREAKDOWN " app_limited=1", "app_limited twice", "app_limited twice, at the end");
	refused(P_LINE " rq_wait=1 app=2", "app on a P record, which does not carry it", "app on P");
	refused("V6 N 1 000001 10.0.0.2:1 10.0.0.1:80 1 2 3 0 10 rq_wait=1",
		"rq_wait on an N record", "rq_wait on N");
	refused("V6 E 1 000001 10.0.0.2:1 10.0.0.1:80 1 2 3 4 5 6 netns=1 app_limited=0",
		"app_limited on an E record", "app_limited on E");
	refused(R_180 " rq_wait=01", "rq_wait is not a decimal number", "rq_wait with a leading zero");
	refused(R_180 " app=-1", "app is not a decimal number", "a negative app");
	refused(R_180 " sq_wait=18446744073709551616", "64 bits", "sq_wait 2^64");
	refused(R_180 " rwnd_limited=", "bad extension field", "rwnd_limited without a value");
}

/* seq: the record's number in its CPU's log, last, on every type. */
static void test_seq_parse(void)
{
	ok(parse(R_180 " netns=4026532198 cgroup=250" BREAKDOWN " seq=18446744073709551615") &&
	   rec.ext_present == (1u << REC_EXT_N) - 1 &&
	   rec.ext[EXT_SEQ] == UINT64_MAX && rec.ext[EXT_APP_LIMITED] == 1200,
	   "R with every field and seq last: all kept");
	ok(parse(R_180 " seq=0") && rec.ext_present == 1u << EXT_SEQ &&
	   rec.ext[EXT_SEQ] == 0, "R with seq alone, 0");
	ok(parse("V6 N 1 000001 10.0.0.2:1 10.0.0.1:80 1 2 3 0 10 netns=1 seq=7") &&
	   rec.ext[EXT_SEQ] == 7, "N with seq");
	ok(parse("V6 E 1 000001 10.0.0.2:1 10.0.0.1:80 1 2 3 4 5 6 seq=8") &&
	   rec.ext[EXT_SEQ] == 8, "E with seq");
	ok(parse(P_LINE " rq_wait=10 seq=9") && rec.ext[EXT_SEQ] == 9 &&
	   rec.ext[EXT_RQ_WAIT] == 10, "P with a breakdown field and seq");
	ok(parse(R_180 BREAKDOWN " seq=3") && (rec.ext_present & ~EXT_BD_MASK) == 1u << EXT_SEQ,
	   "seq is not a breakdown field");
	refused(R_180 " seq=1 app=2", "app after seq", "seq before a breakdown field");
	refused(R_180 " seq=1 netns=2", "netns after seq", "seq before netns");
	refused(R_180 " seq=1 seq=2", "extension field seq twice", "seq twice");
	refused(R_180 " seq=01", "seq is not a decimal number", "seq with a leading zero");
}

/* rec_process_parts, rec_transfer_parts: the splits and their contract. */
static void test_breakdown_parts(void)
{
	uint64_t p[NTRANSFER_PARTS], t;

	parse(R_180 BREAKDOWN);
	ok(rec_process_parts(&rec, &t, p) == SPLIT_OK && t == 180198 &&
	   p[PART_RQ_WAIT] == 150100 && p[PART_APP] == 25050 &&
	   p[PART_SQ_WAIT] == 5048, "R: process 180198 = 150100 + 25050 + 5048");
	/* download = duration - upload - process = 182531 - 0 - 180198 */
	ok(rec_transfer_parts(&rec, &t, p) == SPLIT_OK && t == 2333 &&
	   p[PART_RWND] == 0 && p[PART_SNDBUF] == 7 &&
	   p[PART_APP_LIMITED] == 1200 && p[PART_SENDING] == 2333 - 1207,
	   "R: download 2333 = 0 + 7 + 1200 + sending 1126");
	parse(R_180 " rq_wait=150100 app=25050 sq_wait=5049");
	ok(rec_process_parts(&rec, &t, p) == SPLIT_BAD, "R: parts one more than process: bad");
	parse(R_180 " rq_wait=18446744073709551615 app=1 sq_wait=180198");
	ok(rec_process_parts(&rec, &t, p) == SPLIT_BAD, "R: parts whose sum wraps: bad");
	parse(R_180 " rwnd_limited=2000 sndbuf_limited=334 app_limited=0");
	ok(rec_transfer_parts(&rec, &t, p) == SPLIT_BAD, "R: limited parts past the download: bad");
	parse(R_180 " rwnd_limited=2000 sndbuf_limited=333 app_limited=0");
	ok(rec_transfer_parts(&rec, &t, p) == SPLIT_OK && p[PART_SENDING] == 0,
	   "R: limited parts the whole download: sending 0");
	parse(R_180 " rq_wait=150100 sq_wait=5048");
	ok(rec_process_parts(&rec, &t, p) == SPLIT_NONE, "R without app: no process split");
	parse(R_180);
	ok(rec_transfer_parts(&rec, &t, p) == SPLIT_NONE, "R without the fields: no split");
	/* W: the span after T2, duration - upload - process = 9000 - 100 - 600 */
	parse(W_LINE BREAKDOWN);
	ok(rec_process_parts(&rec, &t, p) == SPLIT_BAD && t == 600, "W: the parts checked against its process time");
	parse(W_LINE " rq_wait=500 app=60 sq_wait=40 rwnd_limited=8000 sndbuf_limited=0 app_limited=300");
	ok(rec_process_parts(&rec, &t, p) == SPLIT_OK &&
	   rec_transfer_parts(&rec, &t, p) == SPLIT_OK && t == 8300 &&
	   p[PART_SENDING] == 0, "W: process and the span after T2 split");
	/* P: the upload, duration - service - response = 10000 - 6000 - 3000 */
	parse(P_LINE " rq_wait=10 sq_wait=20 rwnd_limited=100 sndbuf_limited=200 app_limited=300");
	ok(rec_process_parts(&rec, &t, p) == SPLIT_NONE, "P: no process split (no app)");
	ok(rec_transfer_parts(&rec, &t, p) == SPLIT_OK && t == 1000 &&
	   p[PART_SENDING] == 400, "P: the upload 1000 = 100 + 200 + 300 + sending 400");
}

/* The vendor's lines, each written as its output.c defines them (vline()). */
static void test_vendor(void)
{
	static const unsigned long long r10[] = {
		5000, 237115, 322, 0, 1, 234455, 0, 300, 1, 32768 };
	static const unsigned long long w10[] = {
		5120, 2301, 180, 2, 1, 2004, 12, 310, 1, 1448 };
	static const unsigned long long n5[] = { 2, 1500, 400, 1, 1448 };
	static const unsigned long long p10[] = {
		300, 205525, 1021, 0, 1, 205000, 500, 4000, 0, 32768 };
	static const unsigned long long p7[] = { 300, 205525, 3, 4, 1021, 1, 1448 };
	static const unsigned long long p5[] = { 300, 3, 4, 1, 1448 };
	static const unsigned long long e6[] = { 1, 5000, 0, 300, 7, 322 };
	const char *l;
	uint64_t v;

	l = vline('R', 1795218248, 1232, "127.0.0.1:41252", "127.0.0.1:7100", 10, r10);
	ok(l[strlen(l) - 1] == ' ' && parse(l) && rec.source == SRC_VENDOR &&
	   rec.usec == 1232 && rec.nfields == 10 && fv("recv_bytes") == 300 &&
	   fv("out_of_order") == 1 && fv("mss") == 32768 &&
	   rec.role == ROLE_SERVER && rec.port == 7100,
	   "vendor R: trailing space, unpadded usec 1232, the same fields");
	ok(parse(vline('R', 1, 0, "1.2.3.4:1", "1.2.3.4:2", 10, r10)) &&
	   rec.usec == 0, "vendor R: usec 0");
	ok(parse("V6 R 1795218248 701232 127.0.0.1:41252 127.0.0.1:7100 5000 237115 322 0 1 234455 0 300 0 32768") &&
	   rec.source == SRC_TCP_RT, "tcp_rt R: source tcp_rt");

	l = vline('W', 1732100000, 250117, "10.0.0.2:51234", "10.0.0.1:80", 10, w10);
	ok(parse(l) && rec.type == REC_W && rec.source == SRC_VENDOR &&
	   rec.nfields == 10 && fv("unacked_bytes") == 310 &&
	   fv("out_of_order") == 1 && fv("mss") == 1448 && rec_retrans(&rec) == 2 &&
	   rec_metric(&rec, M_DOWNLOAD, &v) && v == 2301 - 2004 - 12,
	   "vendor W: 10 fields, out_of_order before mss");
	ok(parse("V6 W 1732100000 250117 10.0.0.2:51234 10.0.0.1:80 5120 2301 180 2 1 2004 12 310 1448") &&
	   rec.source == SRC_TCP_RT && fv("mss") == 1448 &&
	   fv("out_of_order") == ~0ULL,
	   "tcp_rt W: 9 fields, no out_of_order");

	ok(parse(vline('N', 1732100000, 17, "10.0.0.2:51234", "10.0.0.1:80", 5, n5)) &&
	   rec.type == REC_N && rec.usec == 17 && fv("recv_bytes") == 400,
	   "vendor N: 5 fields");

	l = vline('P', 1795219078, 97248, "127.0.0.1:7600", "127.0.0.1:50382", 10, p10);
	ok(parse(l) && rec.type == REC_P && rec.source == SRC_VENDOR &&
	   fv("service_time") == 205000 && fv("response_time") == 500 &&
	   fv("recv_bytes") == 4000 && rec.role == ROLE_CLIENT && rec.port == 7600,
	   "vendor P, newest generation: the 10 fields of tcp_rt");

	l = vline('P', 1795219078, 97248, "127.0.0.1:7600", "127.0.0.1:50382", 7, p7);
	ok(parse(l) && rec.nfields == 7 && fv("sent_bytes") == 300 &&
	   fv("duration") == 205525 && fv("retrans") == 3 &&
	   fv("task_seq") == 4 && fv("min_rtt") == 1021 &&
	   fv("out_of_order") == 1 && fv("mss") == 1448 &&
	   fv("service_time") == ~0ULL && fv("recv_bytes") == ~0ULL,
	   "vendor P of 7: sent_bytes duration retrans task_seq min_rtt out_of_order mss");
	ok(rec_metric(&rec, M_DURATION, &v) && v == 205525 &&
	   rec_metric(&rec, M_MIN_RTT, &v) && v == 1021 &&
	   !rec_metric(&rec, M_PROCESS, &v) && !rec_metric(&rec, M_UPLOAD, &v) &&
	   !rec_metric(&rec, M_DOWNLOAD, &v) && rec_recv_bytes(&rec) == 0 &&
	   rec_sent_bytes(&rec) == 300 && rec_retrans(&rec) == 3,
	   "vendor P of 7: duration and min_rtt, no service/response/upload");

	l = vline('P', 1795219078, 97248, "127.0.0.1:7600", "127.0.0.1:50382", 5, p5);
	ok(parse(l) && rec.nfields == 5 && fv("sent_bytes") == 300 &&
	   fv("retrans") == 3 && fv("task_seq") == 4 && fv("min_rtt") == 1 &&
	   fv("mss") == 1448 && fv("duration") == ~0ULL &&
	   fv("out_of_order") == ~0ULL && !rec_metric(&rec, M_DURATION, &v) &&
	   rec_metric(&rec, M_MIN_RTT, &v) && v == 1,
	   "vendor P of 5: sent_bytes retrans task_seq min_rtt mss, no duration");

	l = vline('E', 1795218248, 701232, "127.0.0.1:41252", "127.0.0.1:7100", 6, e6);
	ok(parse(l) && rec.type == REC_E && rec.source == SRC_VENDOR &&
	   fv("total_retrans") == 7 && fv("min_rtt") == 322,
	   "vendor E: 6 fields");

	/* strict about everything else */
	refused("V6 R 1795218248 001232 127.0.0.1:41252 127.0.0.1:7100 5000 237115 322 0 1 234455 0 300 1 32768 ",
		"usec is not a number below 1000000", "vendor line with a padded usec");
	refused(vline('R', 1, 1000000, "1.2.3.4:1", "1.2.3.4:2", 10, r10),
		"usec is not a number below 1000000", "vendor usec 1000000");
	refused(vline('W', 1, 5, "1.2.3.4:1", "1.2.3.4:2", 9, w10),
		"too few fields for vendor W: 9 fields after the header, 10 expected",
		"vendor W of 9 fields (tcp_rt's count, vendor's spacing)");
	refused(vline('P', 1, 5, "1.2.3.4:1", "1.2.3.4:2", 6, p10),
		"wrong number of fields for vendor P: 6 fields after the header, 10, 7 or 5 expected",
		"vendor P of 6 fields");
	refused(vline('P', 1, 5, "1.2.3.4:1", "1.2.3.4:2", 4, p10),
		"too few fields for vendor P", "vendor P of 4 fields");
	refused(vline('R', 1, 5, "1.2.3.4:1", "1.2.3.4:2", 9, r10),
		"too few fields for vendor R: 9 fields after the header, 10 expected",
		"vendor R of 9 fields");
	refused("V6 P 1 000001 1.2.3.4:1 1.2.3.4:2 300 205525 3 4 1021 1 1448",
		"too few fields for P: 7 fields after the header, 10 expected (the vendor's P has 7",
		"P of 7 fields without the trailing space");
	refused(vline('N', 1, 5, "1.2.3.4:1", "1.2.3.4:2", 5, p7),
		"N out_of_order is 4", "vendor N with out_of_order 4");
	refused("V6 R 1 5 1.2.3.4:1 1.2.3.4:2 1 2 3 4 5 6 7 8 0 10 \t",
		"binary data", "vendor line, then a tab");
	l = "1795219325 all 8080 1 2 3 4 5 6 7 8 9 ";
	ok(!parse_stats_line(l, strlen(l), &rec, why) && strstr(why, "empty field"),
	   "stats line with a trailing space refused (%s)", why);
}

static void test_stats(void)
{
	const char *line = "1795219325 all 8080 111209 106021 0 1219 0 3000 0 200 4";
	const char *peer = "1795219325 all P6379 1 2 3 4 5 6 7 8 9";

	ok(parse_stats_line(line, strlen(line), &rec, why) &&
	   rec.type == REC_STATS && rec.port == 8080 && rec.role == ROLE_SERVER &&
	   rec.nfields == 9 && rec.f[0] == 111209 && rec.f[8] == 4 &&
	   rec.source == SRC_UNKNOWN,
	   "stats line of a local port, source unknown");
	ok(parse_stats_line(peer, strlen(peer), &rec, why) &&
	   rec.port == 6379 && rec.role == ROLE_CLIENT,
	   "stats line of a peer port (P6379)");
	line = "1795219325 all 8080 1 2 3 4 5 6 7 8";
	ok(!parse_stats_line(line, strlen(line), &rec, why) &&
	   strstr(why, "too few"), "stats line with 8 values refused (%s)", why);
	line = "1795219325 some 8080 1 2 3 4 5 6 7 8 9";
	ok(!parse_stats_line(line, strlen(line), &rec, why),
	   "stats line without 'all' refused (%s)", why);
	line = "1795219325 all Q80 1 2 3 4 5 6 7 8 9";
	ok(!parse_stats_line(line, strlen(line), &rec, why) &&
	   strstr(why, "bad port"), "stats line with port Q80 refused (%s)", why);
}

/*
 * Random mutations of valid lines: the parser must never crash, and every
 * line it accepts must print back to itself (nothing accepted loosely).
 */
static void test_fuzz(void)
{
	static const char *const seeds[] = {
		"V6 R 1795218248 701232 127.0.0.1:41252 127.0.0.1:7100 5000 237115 322 0 1 234455 0 300 0 32768",
		"V6 W 1732100000 250117 10.0.0.2:51234 10.0.0.1:80 5120 2301 180 2 1 2004 12 310 1448",
		"V6 N 1732100000 250117 [2001:db8::2]:51234 [2001:db8::1]:80 2 1500 400 1 1448",
		"V6 P 1795219078 197248 127.0.0.1:7600 127.0.0.1:50382 300 205525 1021 0 1 205000 500 4000 0 32768",
		"V6 E 1795218248 697287 [::1]:41252 [::1]:7100 1 5000 0 300 0 322",
		/* the vendor's, trailing space included */
		"V6 R 1795218248 1232 127.0.0.1:41252 127.0.0.1:7100 5000 237115 322 0 1 234455 0 300 0 32768 ",
		"V6 W 1732100000 250117 10.0.0.2:51234 10.0.0.1:80 5120 2301 180 2 1 2004 12 310 1 1448 ",
		"V6 P 1795219078 97 127.0.0.1:7600 127.0.0.1:50382 300 205525 3 4 1021 1 1448 ",
		"V6 P 1795219078 970 127.0.0.1:7600 127.0.0.1:50382 300 3 4 1 1448 ",
		"V6 E 1795218248 0 10.0.0.2:41252 10.0.0.1:7100 1 5000 0 300 0 322 ",
	};
#define NSEEDS	(sizeof(seeds) / sizeof(seeds[0]))
	static const char alphabet[] = "0123456789 :.[]VRWNPEabcdef\n\t\x01\xff-+";
	char line[PARSE_LINE_MAX + 90], back[PARSE_LINE_MAX + 90];
	unsigned int i, accepted = 0, roundtrip = 0, vendor = 0;

	for (i = 0; i < 200000; i++) {
		const char *seed = seeds[rnd() % NSEEDS];
		size_t len = strlen(seed), pos;
		unsigned int k, edits = 1 + rnd() % 4;

		memcpy(line, seed, len + 1);
		for (k = 0; k < edits; k++) {
			pos = rnd() % (len + 1);
			switch (rnd() % 3) {
			case 0:	/* replace */
				if (pos < len)
					line[pos] = alphabet[rnd() % (sizeof(alphabet) - 1)];
				break;
			case 1:	/* delete */
				if (pos < len) {
					memmove(line + pos, line + pos + 1, len - pos);
					len--;
				}
				break;
			default:	/* insert */
				if (len + 2 < sizeof(line)) {
					memmove(line + pos + 1, line + pos, len - pos + 1);
					line[pos] = alphabet[rnd() % (sizeof(alphabet) - 1)];
					len++;
				}
			}
		}
		if (parse_log_line(line, len, &rec, why)) {
			accepted++;
			vendor += rec.source == SRC_VENDOR;
			to_line(&rec, back, sizeof(back));
			roundtrip += !strcmp(back, line);
			if (strcmp(back, line))
				diag("accepted '%s' prints back as '%s'", line, back);
		}
	}
	diag("fuzz: %u of 200000 mutated lines accepted, %u of them vendor lines",
	     accepted, vendor);
	ok(accepted == roundtrip,
	   "fuzz: 200000 mutated lines, every accepted one prints back to itself");
}

/*
 * @line without the tokens the parser is to ignore: after the header and
 * the first token with '=', those whose name is not one tcprt knows.
 */
static void known_only(const char *line, char *out, size_t len)
{
	size_t o = 0, tok = 0;
	bool ext = false;
	const char *p = line;

	while (*p) {
		size_t n = strcspn(p, " ");
		const char *eq = memchr(p, '=', n);

		if (tok >= 6 && eq)
			ext = true;
		if (!ext || !eq || rec_ext_of(p, (size_t)(eq - p)) >= 0)
			o += (size_t)snprintf(out + o, len - o, "%s%.*s",
					      o ? " " : "", (int)n, p);
		p += n;
		if (*p == ' ' && !p[1] && o < len - 1)
			out[o++] = ' ';	/* the vendor's trailing space */
		if (*p)
			p++;
		tok++;
	}
	out[o] = '\0';
}

/*
 * Random mutations of lines with extension fields: every line accepted
 * prints back to itself without the fields it is to ignore.
 */
static void test_fuzz_ext(void)
{
	static const char *const seeds[] = {
		"V6 R 1795218248 701232 127.0.0.1:41252 127.0.0.1:7100 5000 237115 322 0 1 234455 0 300 0 32768 netns=4026532500 cgroup=1234",
		"V6 E 1795218248 697287 [::1]:41252 [::1]:7100 1 5000 0 300 0 322 netns=4026531840 cgroup=77 later=5",
		"V6 N 1732100000 250117 10.0.0.2:51234 10.0.0.1:80 2 1500 400 1 1448 cgroup=9",
		"V6 R 1795218248 1232 127.0.0.1:41252 127.0.0.1:7100 5000 237115 322 0 1 234455 0 300 0 32768 netns=5 app=1 ",
	};
	static const char alphabet[] = "0123456789 =:netscgroupapz_-+";
	char line[PARSE_LINE_MAX + 90], back[PARSE_LINE_MAX + 90], want[PARSE_LINE_MAX + 90];
	unsigned int i, accepted = 0, same = 0, with_ext = 0;

	for (i = 0; i < 100000; i++) {
		const char *seed = seeds[rnd() % (sizeof(seeds) / sizeof(seeds[0]))];
		size_t len = strlen(seed), pos;
		unsigned int k, edits = 1 + rnd() % 3;

		memcpy(line, seed, len + 1);
		for (k = 0; k < edits; k++) {
			/* mostly in the extension fields */
			pos = len - 1 - rnd() % (len / 4);
			switch (rnd() % 3) {
			case 0:
				line[pos] = alphabet[rnd() % (sizeof(alphabet) - 1)];
				break;
			case 1:
				memmove(line + pos, line + pos + 1, len - pos);
				len--;
				break;
			default:
				memmove(line + pos + 1, line + pos, len - pos + 1);
				line[pos] = alphabet[rnd() % (sizeof(alphabet) - 1)];
				len++;
			}
		}
		if (!parse_log_line(line, len, &rec, why))
			continue;
		accepted++;
		with_ext += rec.ext_present != 0;
		to_line(&rec, back, sizeof(back));
		known_only(line, want, sizeof(want));
		same += !strcmp(back, want);
		if (strcmp(back, want))
			diag("accepted '%s' prints back as '%s'", line, back);
	}
	diag("fuzz: %u of 100000 mutated lines with extension fields accepted, %u with a field tcprt knows",
	     accepted, with_ext);
	ok(accepted == same && with_ext > 0,
	   "fuzz: every accepted line prints back to itself, less the fields it ignores");
}

/* ---- through the file reader ------------------------------------------------ */

static char dir[64];
static unsigned int got, got_stats;
static struct record last;

static void collect(const struct record *r, void *ctx)
{
	(void)ctx;
	got++;
	got_stats += r->type == REC_STATS;
	last = *r;
}

static void put(const char *name, const void *data, size_t len);

static void put_str(const char *name, const char *s)
{
	put(name, s, strlen(s));
}

static void put(const char *name, const void *data, size_t len)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	fwrite(data, 1, len, f);
	fclose(f);
}

static void clear(void)
{
	const char *names[] = { "rt-network-log0", "rt-network-log1",
				"rt-network-stats", "rt-network-real0" };
	char path[128];
	unsigned int i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
}

/* Read @dir: valid records into got/last; returns the bad line count. */
static uint64_t read_dir(bool stats)
{
	struct input in;
	uint64_t bad;

	got = got_stats = 0;
	if (input_open(&in, dir, stats, INPUT_AUTO, collect, NULL) != 0)
		return (uint64_t)-1;
	in.quiet = true;
	input_read(&in);
	input_finish(&in);
	bad = in.bad;
	input_close(&in);
	return bad;
}

#define VALID_R "V6 R 1795218248 701232 127.0.0.1:41252 127.0.0.1:7100 5000 237115 322 0 1 234455 0 300 0 32768\n"

static void test_files(void)
{
	static char big[20000], garbage[65536];
	size_t i;
	uint64_t bad;

	snprintf(dir, sizeof(dir), "/tmp/tcprt-test.XXXXXX");
	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}

	put("rt-network-log0", VALID_R VALID_R, 2 * strlen(VALID_R));
	ok(read_dir(false) == 0 && got == 2, "file: two records");

	put("rt-network-log0", VALID_R "V6 R 1795218248 7012", strlen(VALID_R) + 20);
	bad = read_dir(false);
	ok(bad == 1 && got == 1, "file: last line without newline counted as truncated (bad %llu, got %u)",
	   (unsigned long long)bad, got);

	memset(big, 'x', sizeof(big));
	memcpy(big, VALID_R, strlen(VALID_R));
	big[10000] = '\n';
	memcpy(big + 10001, VALID_R, strlen(VALID_R));
	put("rt-network-log0", big, 10001 + strlen(VALID_R));
	bad = read_dir(false);
	ok(bad == 1 && got == 2,
	   "file: a 9 KB line is skipped, the records around it are read (bad %llu, got %u)",
	   (unsigned long long)bad, got);

	for (i = 0; i < sizeof(garbage); i++)
		garbage[i] = (char)rnd();
	memcpy(garbage + 30000, "\n" VALID_R, strlen(VALID_R) + 1);
	put("rt-network-log0", garbage, sizeof(garbage));
	bad = read_dir(false);
	ok(got == 1 && bad > 100,
	   "file: 64 KiB of random bytes with one record inside: %llu bad lines, the record read",
	   (unsigned long long)bad);

	put_str("rt-network-log0", "\n\n\n");
	ok(read_dir(false) == 3 && got == 0, "file: empty lines are counted");

	put("rt-network-log0", "", 0);
	ok(read_dir(false) == 0 && got == 0, "file: empty file");

	/* E after its connection's P takes the client role, whatever the ports */
	put_str("rt-network-log0",
		"V6 P 1 000001 10.0.0.1:50000 10.0.0.2:80 300 2000 100 0 1 1500 100 4000 0 1448\n"
		"V6 E 1 000000 10.0.0.1:50000 10.0.0.2:80 1 300 0 4000 0 100\n");
	ok(read_dir(false) == 0 && got == 2 && last.type == REC_E &&
	   last.role == ROLE_CLIENT && last.port == 50000,
	   "file: E takes the role of its connection's last task (client, port 50000)");

	/* the vendor's E carries its last task's start: related the same way */
	put_str("rt-network-log0",
		"V6 P 1 5 10.0.0.1:50000 10.0.0.2:80 300 2000 0 1 100 0 1448 \n"
		"V6 E 1 5 10.0.0.1:50000 10.0.0.2:80 1 301 0 4001 3 100 \n");
	ok(read_dir(false) == 0 && got == 2 && last.type == REC_E &&
	   last.source == SRC_VENDOR && last.role == ROLE_CLIENT &&
	   last.port == 50000,
	   "file: a vendor E takes the role of its connection's last P (client, port 50000)");

	/* the two kinds, line by line in one file, each counted once */
	put_str("rt-network-log0",
		VALID_R
		"V6 R 1795218248 1232 127.0.0.1:41252 127.0.0.1:7100 5000 237115 322 0 1 234455 0 300 0 32768 \n"
		"V6 R 1795218248 001232 127.0.0.1:41252 127.0.0.1:7100 5000 237115 322 0 1 234455 0 300 0 32768 \n"
		"V6 W 1 000001 1.2.3.4:1 1.2.3.4:2 1 2 3 4 5 6 7 8 9 \n"
		"V6 W 1 1 1.2.3.4:1 1.2.3.4:2 1 2 3 4 5 6 7 8 0 9 \n"
		"V6 W 1 000001 1.2.3.4:1 1.2.3.4:2 1 2 3 4 5 6 7 8 9\n");
	bad = read_dir(false);
	ok(bad == 2 && got == 4,
	   "file: tcp_rt and vendor lines mixed: 4 read, 2 refused (bad %llu, got %u)",
	   (unsigned long long)bad, got);

	/* lines with and without extension fields in one file */
	put_str("rt-network-log0",
		VALID_R
		"V6 R 1795218248 701233 127.0.0.1:41252 127.0.0.1:7100 5000 237115 322 0 1 234455 0 300 0 32768 netns=4026531840 cgroup=77\n"
		"V6 E 1795218248 697287 127.0.0.1:41252 127.0.0.1:7100 1 5000 0 300 0 322 netns=4026531840 cgroup=77 later=1\n");
	bad = read_dir(false);
	ok(bad == 0 && got == 3 && last.type == REC_E &&
	   last.ext[EXT_CGROUP] == 77 && last.role == ROLE_SERVER,
	   "file: lines with and without extension fields (bad %llu, got %u)",
	   (unsigned long long)bad, got);

	put_str("rt-network-log0", VALID_R);
	put_str("rt-network-real0", "1795219325 all 8080 1 2 3 4 5 6 7 8 9\n");
	bad = read_dir(true);
	ok(bad == 0 && got == 2 && got_stats == 1 && last.type == REC_STATS &&
	   last.source == SRC_VENDOR,
	   "file: the vendor's rt-network-real0 read as stats with --stats, source vendor");
	clear();
	put_str("rt-network-log0", VALID_R VALID_R);

	put_str("rt-network-stats", "1795219325 all 8080 1 2 3 4 5 6 7 8 9\n1795219325 all 80\n");
	bad = read_dir(true);
	ok(bad == 1 && got == 3 && got_stats == 1,
	   "file: stats file read with --stats, bad line counted (bad %llu, got %u)",
	   (unsigned long long)bad, got);
	ok(read_dir(false) == 0 && got == 2, "file: stats file ignored without --stats");

	clear();
	put_str("rt-network-stats", "1795219325 all 8080 1 2 3 4 5 6 7 8 9\n");
	ok(read_dir(true) == (uint64_t)-1, "file: a folder without rt-network-log* is an error");
	clear();
	rmdir(dir);
}

int main(void)
{
	test_types();
	test_ipv6();
	test_hostile();
	test_ext();
	test_breakdown_parse();
	test_seq_parse();
	test_breakdown_parts();
	test_vendor();
	test_stats();
	test_fuzz();
	test_fuzz_ext();
	test_files();
	return done_testing();
}
