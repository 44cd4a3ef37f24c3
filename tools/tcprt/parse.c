// SPDX-License-Identifier: GPL-2.0
/* Validation and parsing of one line of a log or stats file. */
#include "parse.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

#define MAX_TOKENS	24
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

/* Fill r->f from tokens; names the first bad one. */
static bool parse_fields(const struct token *tok, size_t n, struct record *r,
			 char *why)
{
	const struct rec_desc *d = &rec_desc[r->type];
	size_t i;

	if (n != d->nfields) {
		snprintf(why, PARSE_WHY_MAX,
			 "%s %s: %zu fields after the header, %u expected",
			 n < d->nfields ? "too few fields for" :
					  "too many fields for",
			 d->name, n, d->nfields);
		return false;
	}
	for (i = 0; i < n; i++) {
		if (!parse_dec(tok[i].s, tok[i].len, &r->f[i])) {
			snprintf(why, PARSE_WHY_MAX,
				 "%s %s is not a decimal number (64 bits, no leading zero): " TOK_FMT,
				 d->name, d->fields[i], TOK_ARG(tok[i]));
			return false;
		}
		if (!strcmp(d->fields[i], "out_of_order") && r->f[i] > 1) {
			snprintf(why, PARSE_WHY_MAX,
				 "%s out_of_order is %llu, not 0 or 1", d->name,
				 (unsigned long long)r->f[i]);
			return false;
		}
	}
	r->nfields = d->nfields;
	return true;
}

bool parse_log_line(const char *line, size_t len, struct record *r,
		    char why[PARSE_WHY_MAX])
{
	struct token tok[MAX_TOKENS];
	int type, fam_peer, fam_local;
	size_t n;

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
	if (tok[3].len != 6 || !parse_u64(tok[3].s, 6, &r->usec)) {
		snprintf(why, PARSE_WHY_MAX, "usec is not six digits: "
			 TOK_FMT, TOK_ARG(tok[3]));
		return false;
	}
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
	if (!parse_fields(tok + HEADER_TOKENS, n - HEADER_TOKENS, r, why))
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
	return parse_fields(tok + 3, n - 3, r, why);
bad_port:
	snprintf(why, PARSE_WHY_MAX, "bad port " TOK_FMT, TOK_ARG(tok[2]));
	return false;
}
