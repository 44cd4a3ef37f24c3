// SPDX-License-Identifier: GPL-2.0
/*
 * Parser tests: every record type, IPv6, stats lines, and hostile input -
 * too many or too few fields, non-numeric, overlong, binary garbage, a
 * missing newline at the end of a file - through parse_*_line() and through
 * the file reader (input.c), which must count each bad line and go on.
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

/* Print a record back as tcp_rt writes it. */
static void to_line(const struct record *r, char *buf, size_t len)
{
	char peer[64], local[64];
	size_t o;
	unsigned int i;

	endpoint(peer, sizeof(peer), r->peer_addr, r->peer_port);
	endpoint(local, sizeof(local), r->local_addr, r->local_port);
	o = (size_t)snprintf(buf, len, "V6 %s %llu %06llu %s %s",
			     rec_desc[r->type].name, (unsigned long long)r->sec,
			     (unsigned long long)r->usec, peer, local);
	for (i = 0; i < r->nfields && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, " %llu",
				      (unsigned long long)r->f[i]);
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

	refused("", "empty line", "empty line");
	refused("V6 R 1795218248 701232 127.0.0.1:41252 127.0.0.1:7100 5000 237115 322 0 1 234455 0 300 0",
		"too few fields for R", "R with 9 fields");
	refused("V6 R 1795218248 701232 127.0.0.1:41252 127.0.0.1:7100 5000 237115 322 0 1 234455 0 300 0 32768 7",
		"too many fields for R", "R with 11 fields");
	refused("V6 W 1 000001 1.2.3.4:1 1.2.3.4:2 1 2 3 4 5 6 7 8 9 10",
		"too many fields for W", "W with R's 10 fields");
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
		"empty field", "trailing space");
	refused(" V6 R 1 000001 1.2.3.4:1 1.2.3.4:2 1 2 3 4 5 6 7 8 0 10",
		"empty field", "leading space");
	refused("V6\tR 1 000001 1.2.3.4:1 1.2.3.4:2 1 2 3 4 5 6 7 8 0 10",
		"binary data: byte 0x09", "tab");
	refused("V6 R 1 000001 1.2.3.4:1 1.2.3.4:2 1 2 3 4 5 6 7 8 0 10\r",
		"binary data: byte 0x0d", "carriage return");
	refused("V6 R 1 000001 1.2.3.4:1 1.2.3.4:2 1 2 3 4 5 6 7 8 0 1\xc3\xa9",
		"binary data: byte 0xc3", "UTF-8");
	refused("1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25",
		"too many fields", "25 fields");
	ok(!parse_log_line("V6 R 1\0 000001", 14, &rec, why) &&
	   strstr(why, "byte 0x00"), "refused: NUL byte (%s)", why);
	memset(buf, '7', sizeof(buf));
	ok(!parse_log_line(buf, PARSE_LINE_MAX + 1, &rec, why) &&
	   strstr(why, "longer than"), "refused: overlong line (%s)", why);
}

static void test_stats(void)
{
	const char *line = "1795219325 all 8080 111209 106021 0 1219 0 3000 0 200 4";
	const char *peer = "1795219325 all P6379 1 2 3 4 5 6 7 8 9";

	ok(parse_stats_line(line, strlen(line), &rec, why) &&
	   rec.type == REC_STATS && rec.port == 8080 && rec.role == ROLE_SERVER &&
	   rec.nfields == 9 && rec.f[0] == 111209 && rec.f[8] == 4,
	   "stats line of a local port");
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
	};
	static const char alphabet[] = "0123456789 :.[]VRWNPEabcdef\n\t\x01\xff-+";
	char line[600], back[600];
	unsigned int i, accepted = 0, roundtrip = 0;

	for (i = 0; i < 200000; i++) {
		const char *seed = seeds[rnd() % 5];
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
			to_line(&rec, back, sizeof(back));
			roundtrip += !strcmp(back, line);
			if (strcmp(back, line))
				diag("accepted '%s' prints back as '%s'", line, back);
		}
	}
	diag("fuzz: %u of 200000 mutated lines accepted", accepted);
	ok(accepted == roundtrip,
	   "fuzz: 200000 mutated lines, every accepted one prints back to itself");
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
				"rt-network-stats" };
	char path[128];
	unsigned int i;

	for (i = 0; i < 3; i++) {
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
	if (input_open(&in, dir, stats, collect, NULL) != 0)
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
	test_stats();
	test_fuzz();
	test_files();
	return done_testing();
}
