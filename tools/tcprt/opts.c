// SPDX-License-Identifier: GPL-2.0
/*
 * The option helpers the commands share (cmd.h): a usage error, and the
 * values of options several commands take, each a usage error when bad.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "container.h"
#include "util.h"

void usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "tcprt: %s%s", cmd ? cmd : "", cmd ? ": " : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\ntry 'tcprt %s%s--help'\n", cmd ? cmd : "",
		cmd ? " " : "");
	exit(EXIT_USAGE);
}

const char *opt_long_name(const struct option *opts, int o)
{
	for (; opts->name; opts++)
		if (opts->val == o)
			return opts->name;
	return NULL;
}

void bad_option(const char *cmd, int o, char **argv)
{
	char opt[3] = { '-', (char)optopt, '\0' };
	const char *last = argv[optind - 1];
	const char *name = !strncmp(last, "--", 2) || !optopt ? last : opt;

	if (o == ':')
		usage_error(cmd, "option %s needs a value", name);
	usage_error(cmd, "unknown option %s", name);
}

enum input_format opt_input_format(const char *cmd, const char *arg)
{
	enum input_format f = input_format_of(arg);

	if (f == INPUT_FORMAT_BAD)
		usage_error(cmd, "--input-format: '%s' is not auto, text or binary",
			    arg);
	return f;
}

uint16_t opt_port(const char *cmd, const char *arg)
{
	uint16_t port;

	if (!parse_port(arg, &port))
		usage_error(cmd, "--port: '%s' is not a port (1..65535)", arg);
	return port;
}

uint64_t opt_seconds(const char *cmd, const char *opt, const char *arg,
		     bool zero_ok)
{
	char err[512];
	uint64_t us;

	if (set_seconds(&us, arg, zero_ok, err, sizeof(err)) < 0)
		usage_error(cmd, "%s: %s", opt, err);
	return us;
}

uint64_t opt_when(const char *cmd, const char *opt, const char *arg,
		  uint64_t now)
{
	uint64_t t;

	if (!parse_when(arg, now, &t))
		usage_error(cmd, "%s: '%s' is not a time (Unix seconds, YYYY-MM-DDTHH:MM:SSZ, or an age like 15m, 2h, 7d)",
			    opt, arg);
	return t;
}

unsigned int opt_types(const char *cmd, const char *arg)
{
	unsigned int mask = 0;
	const char *p = arg;

	for (;;) {
		int t = p[0] ? rec_type_of(p[0]) : -1;

		if (t < 0 || (p[1] != ',' && p[1] != '\0'))
			usage_error(cmd, "--type: '%s' is not a list of R,W,N,P,E",
				    arg);
		mask |= 1u << t;
		if (p[1] == '\0')
			return mask;
		p += 2;
	}
}

int check_netns(const char *arg, uint64_t *ino, char *err, size_t len)
{
	size_t n = strlen(arg);
	const char *p = arg;

	/* as readlink /proc/PID/ns/net prints it, too */
	if (!strncmp(arg, "net:[", 5) && n > 6 && arg[n - 1] == ']') {
		p = arg + 5;
		n -= 6;
	}
	if (!parse_u64(p, n, ino) || *ino == 0) {
		snprintf(err, len, "'%s' is not a network namespace's inode number (N or net:[N], N > 0)",
			 arg);
		return -1;
	}
	return 0;
}

uint64_t opt_netns(const char *cmd, const char *arg)
{
	char err[256];
	uint64_t ino;

	if (check_netns(arg, &ino, err, sizeof(err)) < 0)
		usage_error(cmd, "--netns: %s", err);
	return ino;
}

int check_container(const char *arg, char *err, size_t len)
{
	char first[CT_ID_MAX + 1];
	const char *why;

	if (!ct_container_arg_ok(arg, &why)) {
		snprintf(err, len, "'%s' is %s", arg, why);
		return -1;
	}
	if (strlen(arg) < CT_ID_LEN && !strstr(arg, ".service") &&
	    ct_running(arg, first) > 1) {
		snprintf(err, len, "'%s' is ambiguous: the ids of several running containers start with it; give more of the id",
			 arg);
		return -1;
	}
	return 0;
}

const char *opt_container(const char *cmd, const char *arg)
{
	char err[512];

	if (check_container(arg, err, sizeof(err)) < 0)
		usage_error(cmd, "--container: %s", err);
	return arg;
}

void set_str(char **to, const char *v)
{
	free(*to);
	*to = xstrdup(v);
}

int set_seconds(uint64_t *to, const char *v, bool zero_ok, char *err,
		size_t len)
{
	if (!parse_seconds(v, to) || (!zero_ok && *to == 0) ||
	    *to > 86400 * 365 * USEC_PER_SEC) {
		snprintf(err, len, "'%s' is not a number of seconds%s", v,
			 zero_ok ? "" : " > 0");
		return -1;
	}
	return 0;
}

int set_flag(bool *to, const char *v, char *err, size_t len)
{
	if (!v || !strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1")) {
		*to = true;
		return 0;
	}
	if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "0")) {
		*to = false;
		return 0;
	}
	snprintf(err, len, "'%s' is not yes or no", v);
	return -1;
}

int set_filter(const char *name, const char *v, int *port,
	       struct ct_filter *ctf, char *err, size_t len)
{
	uint16_t p;

	if (!strcmp(name, "port")) {
		if (!parse_port(v, &p)) {
			snprintf(err, len, "'%s' is not a port (1..65535)", v);
			return -1;
		}
		*port = p;
	} else if (!strcmp(name, "netns")) {
		if (check_netns(v, &ctf->netns, err, len) < 0)
			return -1;
		ctf->netns_set = true;
	} else if (!strcmp(name, "container")) {
		if (check_container(v, err, len) < 0)
			return -1;
		free((char *)ctf->container);
		ctf->container = xstrdup(v);
	} else {
		return 1;
	}
	return 0;
}
