// SPDX-License-Identifier: GPL-2.0
/* Validation and parsing of one line of a log or stats file. */
#include "parse.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

/* the header, up to 10 fields, and room for extension fields */
#define MAX_TOKENS	64
#define HEADER_TOKENS	6	/* V6 type sec usec peer local */
#define STATS_TOKENS	12	/* sec all port + 9 numbers */

/* A decimal number as tcp_rt prints it: no sign, no leading zero. */
static bool parse_dec(const char *s, size_t len, uint64_t *v)
{
	if (len > 1 && s[0] == '0')
		return false;
	return parse_u64(s, len, v);
}

struct token {
	const char *s;
	size_t len;
};

/* Print at most 24 bytes of a token, for messages. */
#define TOK_FMT		"'%.*s%s'"
#define TOK_ARG(t)	(int)((t).len > 24 ? 24 : (t).len), (t).s, \
			(t).len > 24 ? "..." : ""

/* Check the bytes and split on single spaces; 0 and @why on failure. */
static size_t tokenize(const char *line, size_t len, struct token *tok,
		       char *why)
{
	size_t i, n = 0, start = 0;

	if (len == 0) {
		snprintf(why, PARSE_WHY_MAX, "empty line");
		return 0;
	}
	if (len > PARSE_LINE_MAX) {
		snprintf(why, PARSE_WHY_MAX, "line longer than %d bytes",
			 PARSE_LINE_MAX);
		return 0;
	}
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)line[i];

		if (c < 0x20 || c > 0x7e) {
			snprintf(why, PARSE_WHY_MAX,
				 "binary data: byte 0x%02x at column %zu",
				 c, i + 1);
			return 0;
		}
	}
	for (i = 0; i <= len; i++) {
		if (i < len && line[i] != ' ')
			continue;
		if (i == start) {
			snprintf(why, PARSE_WHY_MAX,
				 "empty field (leading, trailing or double space) at column %zu",
				 i + 1);
			return 0;
		}
		if (n == MAX_TOKENS) {
			snprintf(why, PARSE_WHY_MAX,
				 "too many fields (more than %d)", MAX_TOKENS);
			return 0;
		}
		tok[n].s = line + start;
		tok[n].len = i - start;
		n++;
		start = i + 1;
	}
	return n;
}

static bool tok_is(const struct token *t, const char *s)
{
	return t->len == strlen(s) && memcmp(t->s, s, t->len) == 0;
}

/* "a.b.c.d:port" or "[v6]:port"; @family gets 4 or 6. */
static bool parse_endpoint(const struct token *t, const char *what,
			   char *addr, uint16_t *port, int *family, char *why)
{
	char buf[64], portbuf[8];
	const char *colon;
	unsigned char bin[16];
	size_t alen, plen;

	if (t->len >= sizeof(buf))
		goto bad;
	memcpy(buf, t->s, t->len);
	buf[t->len] = '\0';
	if (buf[0] == '[') {
		char *end = strstr(buf, "]:");

		if (!end)
			goto bad;
		*end = '\0';
		if (inet_pton(AF_INET6, buf + 1, bin) != 1)
			goto bad;
		alen = (size_t)(end - buf - 1);
		memmove(buf, buf + 1, alen + 1);
		colon = end + 1;
		*family = 6;
	} else {
		char *c = strrchr(buf, ':');

		if (!c)
			goto bad;
		*c = '\0';
		if (strchr(buf, ':')) {
			snprintf(why, PARSE_WHY_MAX,
				 "%s address is IPv6 without brackets: " TOK_FMT,
				 what, TOK_ARG(*t));
			return false;
		}
		if (inet_pton(AF_INET, buf, bin) != 1)
			goto bad;
		alen = strlen(buf);
		colon = c;
		*family = 4;
	}
	plen = strlen(colon + 1);
	if (plen == 0 || plen >= sizeof(portbuf))
		goto bad;
	memcpy(portbuf, colon + 1, plen + 1);
	if (portbuf[0] == '0' || !parse_port(portbuf, port))
		goto bad;
	if (alen >= REC_ADDR_MAX)
		goto bad;
	memcpy(addr, buf, alen + 1);
	return true;
bad:
	snprintf(why, PARSE_WHY_MAX, "bad %s address:port " TOK_FMT,
		 what, TOK_ARG(*t));
	return false;
}

/*
 * The fields of a line, in the order its writer prints them, by the names
 * of rec_desc.  tcp_rt writes the TCP-RT document's fields.  The vendor's
 * TCP-RT (its published net/ipv4/tcp_rt/output.c) writes R, N and E the
 * same, a W of 10 with out_of_order before mss, and a P of 10 fields in
 * its newest generation, 7 or 5 in older ones.
 */
struct layout {
	enum source source;
	enum rec_type type;
	const char *const names[REC_FIELDS_MAX + 1];	/* NULL-terminated */
};

#define ALL_R	{ "sent_bytes", "duration", "min_rtt", "retrans", "task_seq", \
		  "process_time", "upload_time", "recv_bytes", "out_of_order", \
		  "mss" }
#define ALL_N	{ "task_seq", "duration", "recv_bytes", "out_of_order", "mss" }
#define ALL_P	{ "sent_bytes", "duration", "min_rtt", "retrans", "task_seq", \
		  "service_time", "response_time", "recv_bytes", \
		  "out_of_order", "mss" }
#define ALL_E	{ "last_task_seq", "total_sent_bytes", "unacked_bytes", \
		  "total_recv_bytes", "total_retrans", "min_rtt" }

static const struct layout layouts[] = {
	{ SRC_TCP_RT, REC_R, ALL_R },
	{ SRC_TCP_RT, REC_W, { "sent_bytes", "duration", "min_rtt", "retrans",
			       "task_seq", "process_time", "upload_time",
			       "unacked_bytes", "mss" } },
	{ SRC_TCP_RT, REC_N, ALL_N },
	{ SRC_TCP_RT, REC_P, ALL_P },
	{ SRC_TCP_RT, REC_E, ALL_E },
	{ SRC_VENDOR, REC_R, ALL_R },
	{ SRC_VENDOR, REC_W, { "sent_bytes", "duration", "min_rtt", "retrans",
			       "task_seq", "process_time", "upload_time",
			       "unacked_bytes", "out_of_order", "mss" } },
	{ SRC_VENDOR, REC_N, ALL_N },
	{ SRC_VENDOR, REC_P, ALL_P },
	{ SRC_VENDOR, REC_P, { "sent_bytes", "duration", "retrans", "task_seq",
			       "min_rtt", "out_of_order", "mss" } },
	{ SRC_VENDOR, REC_P, { "sent_bytes", "retrans", "task_seq", "min_rtt",
			       "mss" } },
	{ SRC_VENDOR, REC_E, ALL_E },
	{ SRC_UNKNOWN, REC_STATS, { "avg_duration", "avg_process_time",
				    "drop_per_1000", "avg_rtt", "fail_per_1000",
				    "avg_sent", "avg_upload_time", "avg_recv",
				    "tasks" } },
};
#define NLAYOUTS	(sizeof(layouts) / sizeof(layouts[0]))

/* Per layout: its field count, and where field i goes in r->f. */
static struct {
	unsigned int n;
	unsigned char at[REC_FIELDS_MAX];
} maps[NLAYOUTS];

/* Resolve the names of every layout once; a name not in rec_desc aborts. */
static void layout_init(void)
{
	static bool done;
	unsigned int l, i, j;

	if (done)
		return;
	for (l = 0; l < NLAYOUTS; l++) {
		const struct layout *lay = &layouts[l];
		const struct rec_desc *d = &rec_desc[lay->type];

		for (i = 0; lay->names[i]; i++) {
			for (j = 0; j < d->nfields; j++)
				if (!strcmp(d->fields[j], lay->names[i]))
					break;
			if (j == d->nfields)
				die(EXIT_RUNTIME, "internal error: %s has no field %s",
				    d->name, lay->names[i]);
			maps[l].at[i] = (unsigned char)j;
		}
		maps[l].n = i;
	}
	done = true;
}

/* The layout of @n fields @src writes for @type, or -1. */
static int find_layout(enum source src, enum rec_type type, size_t n)
{
	unsigned int l;

	for (l = 0; l < NLAYOUTS; l++)
		if (layouts[l].source == src && layouts[l].type == type &&
		    maps[l].n == n)
			return (int)l;
	return -1;
}

/* "10", "10 or 7", "10, 7 or 5": the field counts @src writes for @type. */
static void expected_counts(enum source src, enum rec_type type, char *buf,
			    size_t len, unsigned int *min, unsigned int *max)
{
	unsigned int l, k = 0, total = 0;
	size_t o = 0;

	*min = ~0u;
	*max = 0;
	for (l = 0; l < NLAYOUTS; l++)
		total += layouts[l].source == src && layouts[l].type == type;
	buf[0] = '\0';
	for (l = 0; l < NLAYOUTS && o < len; l++) {
		unsigned int n = maps[l].n;

		if (layouts[l].source != src || layouts[l].type != type)
			continue;
		k++;
		o += (size_t)snprintf(buf + o, len - o, "%s%u",
				      k == 1 ? "" : k == total ? " or " : ", ", n);
		if (n < *min)
			*min = n;
		if (n > *max)
			*max = n;
	}
}

/* The field count of @n tokens fits no layout of @src: say so. */
static void bad_count(enum source src, enum rec_type type, size_t n, char *why)
{
	const char *name = rec_desc[type].name;
	unsigned int min, max;
	char counts[32];
	size_t o;

	expected_counts(src, type, counts, sizeof(counts), &min, &max);
	o = (size_t)snprintf(why, PARSE_WHY_MAX,
			     "%s %s%s: %zu fields after the header, %s expected",
			     n < min ? "too few fields for" :
			     n > max ? "too many fields for" :
				       "wrong number of fields for",
			     src == SRC_VENDOR ? "vendor " : "", name, n, counts);
	if (src == SRC_TCP_RT && find_layout(SRC_VENDOR, type, n) >= 0 &&
	    o < PARSE_WHY_MAX)
		snprintf(why + o, PARSE_WHY_MAX - o,
			 " (the vendor's %s has %zu: its lines end with a space)",
			 name, n);
}

/* Fill r->f from tokens laid out as @src writes them; names the first bad one. */
static bool parse_fields(const struct token *tok, size_t n, struct record *r,
			 enum source src, char *why)
{
	const struct rec_desc *d = &rec_desc[r->type];
	size_t i;
	int l;

	layout_init();
	l = find_layout(src, r->type, n);
	if (l < 0) {
		bad_count(src, r->type, n, why);
		return false;
	}
	for (i = 0; i < n; i++) {
		unsigned int at = maps[l].at[i];

		if (!parse_dec(tok[i].s, tok[i].len, &r->f[at])) {
			snprintf(why, PARSE_WHY_MAX,
				 "%s %s is not a decimal number (64 bits, no leading zero): " TOK_FMT,
				 d->name, d->fields[at], TOK_ARG(tok[i]));
			return false;
		}
		if (!strcmp(d->fields[at], "out_of_order") && r->f[at] > 1) {
			snprintf(why, PARSE_WHY_MAX,
				 "%s out_of_order is %llu, not 0 or 1", d->name,
				 (unsigned long long)r->f[at]);
			return false;
		}
		r->present |= 1u << at;
	}
	r->nfields = (unsigned int)n;
	r->source = src;
	return true;
}

/* An extension field's name: a lower-case letter, then [a-z0-9_]. */
static bool ext_name_ok(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || s[0] < 'a' || s[0] > 'z')
		return false;
	for (i = 1; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

/*
 * Where known field @e may not be, after the known fields of @seen (a mask
 * of 1 << enum rec_ext) and on a record of @r's type: false, and @why.
 * tcp_rt writes them in table order (enum rec_ext's), each on the types
 * of rec_ext_types.  netns and cgroup are read in either order, as tcprt
 * read them before the breakdown fields came.
 */
static bool ext_place_ok(enum rec_ext e, unsigned int seen,
			 const struct record *r, char *why)
{
	int last = seen ? 31 - __builtin_clz(seen) : -1;	/* the latest in the table */

	if (seen >> e & 1) {
		snprintf(why, PARSE_WHY_MAX, "extension field %s twice",
			 rec_ext_name[e]);
		return false;
	}
	if (!(rec_ext_types[e] & (1u << r->type))) {
		snprintf(why, PARSE_WHY_MAX,
			 "extension field %s on a%s %s record, which does not carry it",
			 rec_ext_name[e], r->type == REC_E || r->type == REC_N ?
			 "n" : "", rec_desc[r->type].name);
		return false;
	}
	if ((int)e < last && last >= EXT_BREAKDOWN) {
		snprintf(why, PARSE_WHY_MAX,
			 "extension field %s after %s: not in the order of tcp_rt's table",
			 rec_ext_name[e], rec_ext_name[last]);
		return false;
	}
	return true;
}

/*
 * The extension fields after the documented ones (log_ext): every token
 * name=value.  Those of rec_ext_name are kept (a decimal value, once
 * each, in table order, on a type that carries it: ext_place_ok()); any
 * other name is a later tcp_rt's field, and ignored.
 */
static bool parse_ext(const struct token *tok, size_t n, struct record *r,
		      char *why)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const char *eq = memchr(tok[i].s, '=', tok[i].len);
		size_t nlen = eq ? (size_t)(eq - tok[i].s) : 0;
		int e;

		if (!eq) {
			snprintf(why, PARSE_WHY_MAX,
				 "field " TOK_FMT " after the extension fields is not name=value",
				 TOK_ARG(tok[i]));
			return false;
		}
		if (!ext_name_ok(tok[i].s, nlen) || nlen + 1 == tok[i].len) {
			snprintf(why, PARSE_WHY_MAX,
				 "bad extension field " TOK_FMT " (name=value, the name of [a-z0-9_])",
				 TOK_ARG(tok[i]));
			return false;
		}
		e = rec_ext_of(tok[i].s, nlen);
		if (e < 0)
			continue;	/* a later tcp_rt's field */
		if (!ext_place_ok((enum rec_ext)e, r->ext_present, r, why))
			return false;
		if (!parse_dec(eq + 1, tok[i].len - nlen - 1, &r->ext[e])) {
			snprintf(why, PARSE_WHY_MAX,
				 "%s is not a decimal number (64 bits, no leading zero): " TOK_FMT,
				 rec_ext_name[e], TOK_ARG(tok[i]));
			return false;
		}
		r->ext_present |= 1u << e;
	}
	return true;
}

/* The first token of @tok that is name=value: where the documented fields end. */
static size_t documented_end(const struct token *tok, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (memchr(tok[i].s, '=', tok[i].len))
			break;
	return i;
}

/*
 * usec as @src prints it: tcp_rt pads it to six digits, the vendor prints
 * it as any other number (no leading zero).
 */
static bool parse_usec(const struct token *t, enum source src, uint64_t *usec,
		       char *why)
{
	if (src == SRC_VENDOR) {
		if (parse_dec(t->s, t->len, usec) && *usec < 1000000)
			return true;
		snprintf(why, PARSE_WHY_MAX,
			 "usec is not a number below 1000000 without leading zero (vendor line): "
			 TOK_FMT, TOK_ARG(*t));
		return false;
	}
	if (t->len == 6 && parse_u64(t->s, 6, usec))
		return true;
	snprintf(why, PARSE_WHY_MAX, "usec is not six digits: " TOK_FMT "%s",
		 TOK_ARG(*t), parse_dec(t->s, t->len, usec) ?
		 " (a vendor line would end with a space)" : "");
	return false;
}

bool parse_log_line(const char *line, size_t len, struct record *r,
		    char why[PARSE_WHY_MAX])
{
	struct token tok[MAX_TOKENS];
	int type, fam_peer, fam_local;
	enum source src = SRC_TCP_RT;
	size_t n, ndoc;

	/* every field of a vendor line is followed by a space, the last too */
	if (len > 1 && line[len - 1] == ' ') {
		src = SRC_VENDOR;
		len--;
	}
	n = tokenize(line, len, tok, why);
	if (n == 0)
		return false;
	if (!tok_is(&tok[0], "V6")) {
		snprintf(why, PARSE_WHY_MAX,
			 "not a V6 record: starts with " TOK_FMT, TOK_ARG(tok[0]));
		return false;
	}
	if (n < 2 || tok[1].len != 1 || (type = rec_type_of(tok[1].s[0])) < 0) {
		if (n < 2)
			snprintf(why, PARSE_WHY_MAX, "truncated header: no type");
		else
			snprintf(why, PARSE_WHY_MAX,
				 "unknown record type " TOK_FMT, TOK_ARG(tok[1]));
		return false;
	}
	if (n < HEADER_TOKENS) {
		snprintf(why, PARSE_WHY_MAX,
			 "truncated header: %zu of %d fields", n, HEADER_TOKENS);
		return false;
	}
	memset(r, 0, sizeof(*r));
	r->type = (enum rec_type)type;
	r->cpu = -1;
	if (!parse_dec(tok[2].s, tok[2].len, &r->sec)) {
		snprintf(why, PARSE_WHY_MAX, "sec is not a decimal number: "
			 TOK_FMT, TOK_ARG(tok[2]));
		return false;
	}
	if (!parse_usec(&tok[3], src, &r->usec, why))
		return false;
	if (!parse_endpoint(&tok[4], "peer", r->peer_addr, &r->peer_port,
			    &fam_peer, why) ||
	    !parse_endpoint(&tok[5], "local", r->local_addr, &r->local_port,
			    &fam_local, why))
		return false;
	if (fam_peer != fam_local) {
		snprintf(why, PARSE_WHY_MAX,
			 "peer and local addresses of different families");
		return false;
	}
	ndoc = HEADER_TOKENS + documented_end(tok + HEADER_TOKENS,
					      n - HEADER_TOKENS);
	if (!parse_fields(tok + HEADER_TOKENS, ndoc - HEADER_TOKENS, r, src,
			  why) ||
	    !parse_ext(tok + ndoc, n - ndoc, r, why))
		return false;

	if (r->type == REC_P ||
	    (r->type == REC_E && r->peer_port < r->local_port)) {
		r->role = ROLE_CLIENT;
		r->port = r->peer_port;
	} else {
		r->role = ROLE_SERVER;
		r->port = r->local_port;
	}
	return true;
}

bool parse_stats_line(const char *line, size_t len, struct record *r,
		      char why[PARSE_WHY_MAX])
{
	struct token tok[MAX_TOKENS];
	struct token port;
	char buf[8];
	size_t n;

	n = tokenize(line, len, tok, why);
	if (n == 0)
		return false;
	if (n < 3 || !tok_is(&tok[1], "all")) {
		snprintf(why, PARSE_WHY_MAX,
			 "not a stats line (<sec> all <port> ...)");
		return false;
	}
	memset(r, 0, sizeof(*r));
	r->type = REC_STATS;
	r->cpu = -1;
	if (!parse_dec(tok[0].s, tok[0].len, &r->sec)) {
		snprintf(why, PARSE_WHY_MAX, "time is not a decimal number: "
			 TOK_FMT, TOK_ARG(tok[0]));
		return false;
	}
	port = tok[2];
	r->role = ROLE_SERVER;
	if (port.len && port.s[0] == 'P') {
		r->role = ROLE_CLIENT;
		port.s++;
		port.len--;
	}
	if (port.len == 0 || port.len >= sizeof(buf))
		goto bad_port;
	memcpy(buf, port.s, port.len);
	buf[port.len] = '\0';
	if (buf[0] == '0' || !parse_port(buf, &r->port))
		goto bad_port;
	if (r->role == ROLE_CLIENT)
		r->peer_port = r->port;
	else
		r->local_port = r->port;
	/* both write stats lines alike: the source stays unknown */
	return parse_fields(tok + 3, n - 3, r, SRC_UNKNOWN, why);
bad_port:
	snprintf(why, PARSE_WHY_MAX, "bad port " TOK_FMT, TOK_ARG(tok[2]));
	return false;
}
