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

size_t frame_item(char *out, const char *line, size_t len,
		  const struct record *r)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, o = 0;

	if (len > PARSE_LINE_MAX)
		len = PARSE_LINE_MAX;
	if (r) {
		/* a valid line is printable, and has none of | \ ~ */
		memcpy(out, line, len);
		o = len;
		if (r->type == REC_E) {
			out[o++] = '~';
			out[o++] = r->role == ROLE_CLIENT ? 'c' : 's';
		}
		return o;
	}
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

size_t frame_data_hdr(char *out, size_t size, const struct frame_hdr *h)
{
	int n = snprintf(out, size, "D1 %s %llu %llu %d %u ", h->host,
			 (unsigned long long)h->epoch,
			 (unsigned long long)h->seq, h->cpu, h->n);

	return n < 0 ? 0 : (size_t)n;
}

size_t frame_ctl(char *out, size_t size, const struct frame_ctl *c)
{
	size_t o;
	unsigned int i;
	int n;

	n = snprintf(out, size, "C1 %s %llu %llu", c->host,
		     (unsigned long long)c->epoch,
		     (unsigned long long)c->ctl_seq);
	o = n < 0 ? 0 : (size_t)n;
	for (i = 0; i < CTL_NFIELDS && o < size; i++) {
		n = snprintf(out + o, size - o, " %llu",
			     (unsigned long long)c->v[i]);
		o += n < 0 ? 0 : (size_t)n;
	}
	return o < size ? o : size - 1;
}

char frame_kind(const char *msg, size_t len)
{
	if (len >= 3 && msg[1] == '1' && msg[2] == ' ' &&
	    (msg[0] == 'D' || msg[0] == 'C'))
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
	if (!token_cpu(&p, end, &h->cpu))
		return WHY("bad cpu");
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
	for (i = 0; i < CTL_NFIELDS; i++)
		if (!token_u64(&p, end, &c->v[i]))
			return WHY("bad or missing %s", ctl_field_name[i]);
	if (p != end)
		return WHY("more fields than %d", 3 + CTL_NFIELDS);
	if (c->v[CTL_MODULE_KNOWN] > 1 || c->v[CTL_FINAL] > 1)
		return WHY("module_known and final are 0 or 1");
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
