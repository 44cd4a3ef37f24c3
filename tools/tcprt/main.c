// SPDX-License-Identifier: GPL-2.0
/*
 * tcprt - the user-space companion of the tcp_rt kernel module: reads the
 * per-CPU record files, merges them into start-time order, summarises them
 * with percentiles and exports Prometheus metrics.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
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
"  agent     one reader of the logs for every sink of a configuration file\n"
"            (so far export's metrics and live's windows and socket)\n"
"  series    run a fine-timescale sampling run (per-bucket counts), or\n"
"            read a saved one; table or --plot PNG\n"
"  live      sliding windows, live: a terminal view, a query socket for\n"
"            services, or JSON once\n"
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
	{ "agent", cmd_agent },
	{ "series", cmd_series },
	{ "live", cmd_live },
	{ "ship", cmd_ship },
	{ "ingest", cmd_ingest },
	{ "fleet", cmd_fleet },
	{ "spool", cmd_spool },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

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
