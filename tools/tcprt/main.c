// SPDX-License-Identifier: GPL-2.0
/*
 * tcprt - the user-space companion of the tcp_rt kernel module: reads the
 * per-CPU record files, merges them into start-time order, summarises them
 * with percentiles and exports Prometheus metrics.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "container.h"
#include "util.h"

static const char usage[] =
"usage: tcprt COMMAND [OPTIONS]\n"
"\n"
"The companion tool of the tcp_rt kernel module: reads the records in\n"
"/sys/kernel/debug/tcp-rt (reading consumes them) or in a directory of\n"
"recorded files, and prints, summarises or exports them.\n"
"\n"
"commands:\n"
"  read      print the records merged in start-time order (text, JSON, CSV)\n"
"  summary   per port and type: count, rate, p50/p90/p99/max per window\n"
"  export    Prometheus metrics for node_exporter's textfile collector\n"
"  series    run a fine-timescale sampling run (per-bucket counts), or\n"
"            read a saved one; table or --plot PNG\n"
"  ship      number the records, cap their rate and hand them to the\n"
"            local rsyslog, for the central store of a fleet\n"
"  spool     write the central rsyslog's spool (run by rsyslog's omprog)\n"
"  ingest    load the central rsyslog's spool into ClickHouse\n"
"  fleet     query the central store: gaps, summary, top\n"
"  help CMD  the help of a command (same as tcprt CMD --help)\n"
"\n"
"tcprt --version prints the version.  Exit status: 0 ok, 1 runtime error\n"
"(no debugfs, module not loaded, not root, I/O error), 2 usage error.\n";

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{ "read", cmd_read },
	{ "summary", cmd_summary },
	{ "export", cmd_export },
	{ "series", cmd_series },
	{ "ship", cmd_ship },
	{ "ingest", cmd_ingest },
	{ "fleet", cmd_fleet },
	{ "spool", cmd_spool },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

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

void bad_option(const char *cmd, int o, char **argv)
{
	char opt[3] = { '-', (char)optopt, '\0' };
	const char *last = argv[optind - 1];
	const char *name = !strncmp(last, "--", 2) || !optopt ? last : opt;

	if (o == ':')
		usage_error(cmd, "option %s needs a value", name);
	usage_error(cmd, "unknown option %s", name);
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
	uint64_t us;

	if (!parse_seconds(arg, &us) || (!zero_ok && us == 0) ||
	    us > 86400 * 365 * USEC_PER_SEC)
		usage_error(cmd, "%s: '%s' is not a number of seconds%s", opt,
			    arg, zero_ok ? "" : " > 0");
	return us;
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

uint64_t opt_netns(const char *cmd, const char *arg)
{
	size_t len = strlen(arg);
	const char *p = arg;
	uint64_t ino;

	/* as readlink /proc/PID/ns/net prints it, too */
	if (!strncmp(arg, "net:[", 5) && len > 6 && arg[len - 1] == ']') {
		p = arg + 5;
		len -= 6;
	}
	if (!parse_u64(p, len, &ino) || ino == 0)
		usage_error(cmd, "--netns: '%s' is not a network namespace's inode number (N or net:[N], N > 0)",
			    arg);
	return ino;
}

const char *opt_container(const char *cmd, const char *arg)
{
	char first[CT_ID_MAX + 1];
	const char *why;

	if (!ct_container_arg_ok(arg, &why))
		usage_error(cmd, "--container: '%s' is %s", arg, why);
	if (strlen(arg) < CT_ID_LEN && !strstr(arg, ".service") &&
	    ct_running(arg, first) > 1)
		usage_error(cmd, "--container: '%s' is ambiguous: the ids of several running containers start with it; give more of the id",
			    arg);
	return arg;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;
	size_t i;

	if (!cmd) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		fputs(usage, stdout);
		return EXIT_OK;
	}
	if (!strcmp(cmd, "--version")) {
		printf("tcprt %s\n", TCPRT_VERSION);
		return EXIT_OK;
	}
	if (!strcmp(cmd, "help")) {
		char help[] = "--help";
		char *args[] = { argv[2], help, NULL };

		if (argc < 3) {
			fputs(usage, stdout);
			return EXIT_OK;
		}
		for (i = 0; i < NCOMMANDS; i++)
			if (!strcmp(argv[2], commands[i].name))
				return commands[i].fn(2, args);
		usage_error(NULL, "no command '%s'", argv[2]);
	}
	for (i = 0; i < NCOMMANDS; i++)
		if (!strcmp(cmd, commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	usage_error(NULL, "no command '%s'", cmd);
}
