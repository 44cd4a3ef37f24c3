// SPDX-License-Identifier: GPL-2.0
/* The fleet path's messages: see frame.h for their form. */
#include "frame.h"

#include <stdio.h>
#include <string.h>

#include "util.h"

const char *const ctl_field_name[CTL_NFIELDS] = {
	[CTL_START_US] = "start_us",
	[CTL_NOW_US] = "now_us",
	[CTL_NEXT_SEQ] = "next_seq",
	[CTL_CAP_DROPPED] = "cap_dropped",
	[CTL_REFUSED] = "refused",
	[CTL_BAD] = "bad_lines",
	[CTL_MODULE_KNOWN] = "module_known",
	[CTL_OVERWRITTEN_START] = "overwritten_start",
	[CTL_OVERWRITTEN] = "overwritten",
	[CTL_SAMPLED_START] = "sampled_out_start",
	[CTL_SAMPLED] = "sampled_out",
	[CTL_FINAL] = "final",
	[CTL_SENT_SEQ] = "sent_seq",
	[CTL_INTERVAL_US] = "interval_us",
};

const char *const cpu_field_name[CPU_NFIELDS] = {
	[CPU_FIRST] = "first",
	[CPU_READ_NEXT] = "read_next",
	[CPU_SENT_NEXT] = "sent_next",
	[CPU_RELAY_SKIPPED] = "relay_skipped",
	[CPU_CAP_DROPPED] = "cap_dropped",
	[CPU_REFUSED] = "refused",
	[CPU_FINAL] = "final",
	[CPU_UNSENT_SKIPPED] = "unsent_skipped",
};

static bool host_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

bool frame_host_ok(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (i >= HOST_ID_MAX || !host_char(s[i]))
			return false;
	return i > 0;
}

/* Bytes an item carries as they are; the others become \xHH. */
static bool plain(unsigned char c)
{
	return c >= 0x20 && c <= 0x7e && c != '|' && c != '\\' && c != '~';
}

/* "!" and @line, each byte outside the plain ones as \xHH */
static size_t item_escaped(char *out, const char *line, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, o = 0;

	out[o++] = '!';
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)line[i];

		if (plain(c)) {
			out[o++] = (char)c;
			continue;
		}
		out[o++] = '\\';
		out[o++] = 'x';
		out[o++] = hex[c >> 4];
		out[o++] = hex[c & 15];
	}
	return o;
}

size_t frame_item(char *out, const char *line, size_t len,
		  const struct record *r)
{
	size_t o;

	if (len > PARSE_LINE_MAX)
		len = PARSE_LINE_MAX;
	if (!r)
		return item_escaped(out, line, len);
	/* a valid line is printable, and has none of | \ ~ */
	memcpy(out, line, len);
	o = len;
	if (r->type == REC_E) {
		out[o++] = '~';
		out[o++] = r->role == ROLE_CLIENT ? 'c' : 's';
	}
	return o;
}

size_t frame_series_item(char *out, const char *line, size_t len, bool valid)
{
	if (len > PARSE_LINE_MAX)
		len = PARSE_LINE_MAX;
	if (!valid)
		return item_escaped(out, line, len);
	/* a series line is digits, names, '=', 'P', '*' and spaces */
	memcpy(out, line, len);
	return len;
}

size_t frame_data_hdr(char *out, size_t size, const struct frame_hdr *h)
{
	int n;

	if (h->width_us)
		n = snprintf(out, size, "D3 %s %llu %llu %llu %u ", h->host,
			     (unsigned long long)h->epoch,
			     (unsigned long long)h->seq,
			     (unsigned long long)h->width_us, h->n);
	else if (h->load_id)
		n = snprintf(out, size, "D2 %s %llu %llu %d %llu %u ", h->host,
			     (unsigned long long)h->epoch,
			     (unsigned long long)h->seq, h->cpu,
			     (unsigned long long)h->load_id, h->n);
	else
		n = snprintf(out, size, "D1 %s %llu %llu %d %u ", h->host,
			     (unsigned long long)h->epoch,
			     (unsigned long long)h->seq, h->cpu, h->n);
	return n < 0 ? 0 : (size_t)n;
}

/* @n numbers after the head already in @out (@o bytes of @size). */
static size_t put_u64s(char *out, size_t size, size_t o, const uint64_t *v,
		       unsigned int n)
{
	unsigned int i;
	int k;

	for (i = 0; i < n && o < size; i++) {
		k = snprintf(out + o, size - o, " %llu", (unsigned long long)v[i]);
		o += k < 0 ? 0 : (size_t)k;
	}
	return o < size ? o : size - 1;
}

size_t frame_ctl(char *out, size_t size, const struct frame_ctl *c)
{
	int n = snprintf(out, size, "C1 %s %llu %llu", c->host,
			 (unsigned long long)c->epoch,
			 (unsigned long long)c->ctl_seq);

	return put_u64s(out, size, n < 0 ? 0 : (size_t)n, c->v, CTL_NFIELDS);
}

size_t frame_cpu(char *out, size_t size, const struct frame_cpu *c)
{
	int n = snprintf(out, size, "L1 %s %llu %llu %llu %d", c->host,
			 (unsigned long long)c->epoch,
			 (unsigned long long)c->ctl_seq,
			 (unsigned long long)c->load_id, c->cpu);

	return put_u64s(out, size, n < 0 ? 0 : (size_t)n, c->v, CPU_NFIELDS);
}

char frame_kind(const char *msg, size_t len)
{
	if (len < 3 || msg[2] != ' ')
		return 0;
	if (msg[0] == 'D' && msg[1] >= '1' && msg[1] <= '3')
		return 'D';
	if ((msg[0] == 'C' || msg[0] == 'L') && msg[1] == '1')
		return msg[0];
	return 0;
}

/* The next space-separated token of [*p, end): false if none. */
static bool token(const char **p, const char *end, const char **tok,
		  size_t *tlen)
{
	const char *s = *p, *sp;

	if (s >= end)
		return false;
	sp = memchr(s, ' ', (size_t)(end - s));
	*tok = s;
	*tlen = (size_t)((sp ? sp : end) - s);
	*p = sp ? sp + 1 : end;
	return *tlen > 0;
}

static bool token_u64(const char **p, const char *end, uint64_t *v)
{
	const char *t;
	size_t n;

	return token(p, end, &t, &n) && parse_u64(t, n, v);
}

static bool token_host(const char **p, const char *end,
		       char host[HOST_ID_MAX + 1])
{
	const char *t;
	size_t n;

	if (!token(p, end, &t, &n) || n > HOST_ID_MAX)
		return false;
	memcpy(host, t, n);
	host[n] = '\0';
	return frame_host_ok(host);
}

static bool token_cpu(const char **p, const char *end, int *cpu)
{
	const char *t;
	size_t n;
	uint64_t v;

	if (!token(p, end, &t, &n))
		return false;
	if (n == 2 && t[0] == '-' && t[1] == '1') {
		*cpu = -1;
		return true;
	}
	if (!parse_u64(t, n, &v) || v > 65535)
		return false;
	*cpu = (int)v;
	return true;
}

#define WHY(...) (snprintf(why, PARSE_WHY_MAX, __VA_ARGS__), false)

bool frame_parse_data(const char *msg, size_t len, struct frame_hdr *h,
		      const char **items, size_t *lens, unsigned int max,
		      char why[PARSE_WHY_MAX])
{
	const char *p = msg + 3, *end = msg + len;
	uint64_t n;
	unsigned int i = 0;

	if (frame_kind(msg, len) != 'D')
		return WHY("not a data message");
	if (!token_host(&p, end, h->host))
		return WHY("bad host id");
	if (!token_u64(&p, end, &h->epoch) || !token_u64(&p, end, &h->seq))
		return WHY("bad epoch or sequence number");
	h->load_id = 0;
	h->width_us = 0;
	h->cpu = -1;
	if (msg[1] == '3' && (!token_u64(&p, end, &h->width_us) ||
			      !h->width_us || h->width_us > SERIES_WIDTH_MAX_US))
		return WHY("bad width (D3's is 1 to %llu us)",
			   (unsigned long long)SERIES_WIDTH_MAX_US);
	if (msg[1] != '3' && !token_cpu(&p, end, &h->cpu))
		return WHY("bad cpu");
	if (msg[1] == '2' && (!token_u64(&p, end, &h->load_id) || !h->load_id))
		return WHY("bad load id (D2's is a number, never 0)");
	if (!token_u64(&p, end, &n) || n == 0 || n > max)
		return WHY("bad item count");
	h->n = (unsigned int)n;
	if (h->seq + n < h->seq)
		return WHY("sequence numbers wrap");
	while (p < end) {
		const char *bar = memchr(p, '|', (size_t)(end - p));

		if (!bar)
			return WHY("item %u has no '|' after it", i + 1);
		if (i == h->n)
			return WHY("more items than the %u said", h->n);
		items[i] = p;
		lens[i] = (size_t)(bar - p);
		i++;
		p = bar + 1;
	}
	if (i != h->n)
		return WHY("%u items, %u said", i, h->n);
	return true;
}

bool frame_parse_ctl(const char *msg, size_t len, struct frame_ctl *c,
		     char why[PARSE_WHY_MAX])
{
	const char *p = msg + 3, *end = msg + len;
	unsigned int i;

	if (frame_kind(msg, len) != 'C')
		return WHY("not a control message");
	if (!token_host(&p, end, c->host))
		return WHY("bad host id");
	if (!token_u64(&p, end, &c->epoch) || !token_u64(&p, end, &c->ctl_seq))
		return WHY("bad epoch or control sequence number");
	for (i = 0; i < CTL_NFIELDS; i++) {
		/* a C1 of before sent_seq ends after final */
		if (i == CTL_NFIELDS_V1 && p == end)
			break;
		if (!token_u64(&p, end, &c->v[i]))
			return WHY("bad or missing %s", ctl_field_name[i]);
	}
	if (p != end)
		return WHY("more fields than %d", 3 + CTL_NFIELDS);
	c->sent_known = i == CTL_NFIELDS;
	if (!c->sent_known) {
		c->v[CTL_SENT_SEQ] = c->v[CTL_NEXT_SEQ];
		c->v[CTL_INTERVAL_US] = 0;
	}
	if (c->v[CTL_MODULE_KNOWN] > 1)
		return WHY("module_known is 0 or 1");
	if (c->v[CTL_FINAL] > FINAL_CLOSED)
		return WHY("final is 0, 1 or 2");
	if (c->v[CTL_SENT_SEQ] > c->v[CTL_NEXT_SEQ])
		return WHY("sent_seq %llu past next_seq %llu",
			   (unsigned long long)c->v[CTL_SENT_SEQ],
			   (unsigned long long)c->v[CTL_NEXT_SEQ]);
	/* the numbers counted dropped or refused are below sent_seq */
	if (c->v[CTL_CAP_DROPPED] > c->v[CTL_SENT_SEQ] ||
	    c->v[CTL_REFUSED] > c->v[CTL_SENT_SEQ] - c->v[CTL_CAP_DROPPED])
		return WHY("cap_dropped and refused count more numbers than the %llu below sent_seq",
			   (unsigned long long)c->v[CTL_SENT_SEQ]);
	if (c->v[CTL_BAD] > c->v[CTL_NEXT_SEQ])
		return WHY("bad_lines %llu past next_seq %llu",
			   (unsigned long long)c->v[CTL_BAD],
			   (unsigned long long)c->v[CTL_NEXT_SEQ]);
	if (c->v[CTL_INTERVAL_US] > FRAME_INTERVAL_MAX_US)
		return WHY("interval_us %llu longer than a year",
			   (unsigned long long)c->v[CTL_INTERVAL_US]);
	return true;
}

bool frame_parse_cpu(const char *msg, size_t len, struct frame_cpu *c,
		     char why[PARSE_WHY_MAX])
{
	const char *p = msg + 3, *end = msg + len;
	uint64_t *v = c->v, span, lost;
	unsigned int i;

	if (frame_kind(msg, len) != 'L')
		return WHY("not a log's account");
	if (!token_host(&p, end, c->host))
		return WHY("bad host id");
	if (!token_u64(&p, end, &c->epoch) || !token_u64(&p, end, &c->ctl_seq))
		return WHY("bad epoch or control sequence number");
	if (!token_u64(&p, end, &c->load_id) || !c->load_id)
		return WHY("bad load id (a number, never 0)");
	if (!token_cpu(&p, end, &c->cpu))
		return WHY("bad cpu");
	for (i = 0; i < CPU_NFIELDS; i++)
		if (!token_u64(&p, end, &v[i]))
			return WHY("bad or missing %s", cpu_field_name[i]);
	if (p != end)
		return WHY("more fields than %d", 5 + CPU_NFIELDS);
	if (v[CPU_FINAL] > FINAL_CLOSED)
		return WHY("final is 0, 1 or 2");
	if (v[CPU_FIRST] > v[CPU_SENT_NEXT] || v[CPU_SENT_NEXT] > v[CPU_READ_NEXT])
		return WHY("first %llu, sent_next %llu, read_next %llu: not in that order",
			   (unsigned long long)v[CPU_FIRST],
			   (unsigned long long)v[CPU_SENT_NEXT],
			   (unsigned long long)v[CPU_READ_NEXT]);
	/* disjoint sets of the numbers in [first, read_next) */
	span = v[CPU_READ_NEXT] - v[CPU_FIRST];
	lost = v[CPU_RELAY_SKIPPED];
	if (lost > span || v[CPU_CAP_DROPPED] > span - lost ||
	    v[CPU_REFUSED] > span - lost - v[CPU_CAP_DROPPED])
		return WHY("relay_skipped, cap_dropped and refused count more numbers than the %llu of [first, read_next)",
			   (unsigned long long)span);
	/*
	 * Not checked against [sent_next, read_next): a sender killed
	 * between moving sent_next and lowering it leaves it past that; the
	 * account clamps it.
	 */
	if (v[CPU_UNSENT_SKIPPED] > lost)
		return WHY("unsent_skipped %llu past relay_skipped %llu",
			   (unsigned long long)v[CPU_UNSENT_SKIPPED],
			   (unsigned long long)lost);
	return true;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int frame_item_line(const char *item, size_t ilen, char *line, size_t *len,
		    int *role)
{
	size_t i, o = 0;

	*role = -1;
	if (!ilen)
		return -1;
	if (item[0] != '!') {
		if (ilen >= 2 && item[ilen - 2] == '~') {
			char c = item[ilen - 1];

			if (c != 's' && c != 'c')
				return -1;
			*role = c == 'c' ? ROLE_CLIENT : ROLE_SERVER;
			ilen -= 2;
		}
		if (ilen > PARSE_LINE_MAX || memchr(item, '~', ilen) ||
		    memchr(item, '\\', ilen))
			return -1;
		memcpy(line, item, ilen);
		*len = ilen;
		return 1;
	}
	for (i = 1; i < ilen; i++) {
		int hi, lo;

		if (o == PARSE_LINE_MAX)
			return -1;
		if (item[i] != '\\') {
			if (!plain((unsigned char)item[i]))
				return -1;
			line[o++] = item[i];
			continue;
		}
		if (i + 3 >= ilen || item[i + 1] != 'x')
			return -1;
		hi = hexval(item[i + 2]);
		lo = hexval(item[i + 3]);
		if (hi < 0 || lo < 0)
			return -1;
		line[o++] = (char)(hi << 4 | lo);
		i += 3;
	}
	*len = o;
	return 0;
}
