// SPDX-License-Identifier: GPL-2.0
/*
 * tcprt export: Prometheus metrics for node_exporter's textfile collector,
 * and/or OTLP to an OpenTelemetry collector.
 *
 * One reader (reader.c) and one sink, the metrics sink (sink_metrics.c,
 * which counts and writes).  This file is the options and their checks.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "container.h"
#include "input.h"
#include "otlp_send.h"
#include "prom.h"
#include "reader.h"
#include "sink_metrics.h"
#include "util.h"

#define DEFAULT_MAX_CONTAINERS	64

static const char help[] =
"usage: tcprt export [--textfile PATH] [--otlp URL] [--interval SECONDS]\n"
"                    [--once] [--buckets r5|r10|r20] [--port P] [--max-ports N]\n"
"                    [--netns N] [--container ID] [--max-containers N]\n"
"                    [--archive FILE] [--dir DIR] [--input-format F] [--otlp-exponential]\n"
"                    [--otlp-logs RATE [--otlp-logs-url URL]]\n"
"                    [--otlp-header-file FILE] [--otlp-ca FILE]\n"
"                    [--otlp-cert FILE --otlp-key FILE] [--otlp-insecure]\n"
"\n"
"Drain the tcp_rt logs every SECONDS (default 15) and write Prometheus\n"
"metrics to PATH for node_exporter's textfile collector (point its\n"
"--collector.textfile.directory at PATH's folder; PATH must end in .prom).\n"
"The file is written to a temporary file and renamed: a scrape never sees\n"
"half a file.  Counters count from tcprt's start.  Labels: port, role\n"
"(server/client), type (R W N P); no addresses.  Records with netns or\n"
"cgroup (tcp_rt's log_ext) also get container (as tcprt read names it: the\n"
"container's id, the systemd service, the cgroup path, or the number when\n"
"nothing matches) and, for a Kubernetes pod's, pod (its UID).  With\n"
"--otlp, the same counts also (or only) go to an OpenTelemetry collector\n"
"(docs/otlp.md); at least one of --textfile and --otlp is needed.\n"
"\n"
"  -t, --textfile PATH  the .prom file to write\n"
"  -i, --interval S     seconds between updates (default 15)\n"
"  -1, --once           read once, write once, exit\n"
"  -b, --buckets B      histogram bounds per decade, 10 us .. 100 s: r5, r10\n"
"                       (default) or r20, the Renard series; histogram_quantile\n"
"                       is then within 60 %, 28 % or 13 % of the exact value\n"
"  -p, --port P         only service port P\n"
"  -m, --max-ports N    at most N ports get series of their own (default 64);\n"
"                       records of further ports are counted as port=\"other\"\n"
"  -n, --netns N        only records of network namespace N (N or net:[N])\n"
"  -c, --container ID   only records of container ID: its full id, a prefix\n"
"                       of at least 12 hex digits, or NAME.service\n"
"  -M, --max-containers N  at most N containers get series of their own\n"
"                       (default 64); records of further ones are counted as\n"
"                       container=\"other\" and in\n"
"                       tcprt_container_overflow_records_total; 0: no\n"
"                       container label\n"
"  -a, --archive FILE   also append every valid record line read to FILE\n"
"                       (reading consumes the logs: this keeps a copy)\n"
"  -d, --dir DIR        read recorded rt-network-log* files of DIR instead\n"
INPUT_FORMAT_HELP
"      --otlp URL       also (or instead of --textfile) POST the same counts,\n"
"                       cumulative, as OTLP/HTTP protobuf to URL every\n"
"                       interval, e.g. http://127.0.0.1:8428/opentelemetry/\n"
"                       v1/metrics (VictoriaMetrics); names in tcprt(8)\n"
"      --otlp-exponential  exponential histograms (scale 3) instead of\n"
"                       --buckets' bounds\n"
"      --otlp-logs RATE also each task as an OTLP log record, at most RATE\n"
"                       a second (the rest counted as dropped), to URL's\n"
"                       .../v1/logs or --otlp-logs-url URL\n"
"      --otlp-header-file FILE  one more HTTP header, \"Name: value\", read\n"
"                       from FILE (mode 0600: a token stays off the command\n"
"                       line)\n"
"      --otlp-ca FILE   verify the collector's certificate against FILE's\n"
"                       CAs (default: the system's)\n"
"      --otlp-cert FILE, --otlp-key FILE  tcprt's certificate and key, for a\n"
"                       collector that asks for one (the key mode 0600)\n"
"      --otlp-insecure  allow a collector on another machine over http://,\n"
"                       or over https:// without a certificate or header file\n"
"                       saying who tcprt is: by default refused\n"
"  -h, --help           this text\n"
"\n"
"Metrics (all with labels port, role, type unless said otherwise):\n"
"  tcprt_tasks_total                 tasks (R W N P records)\n"
"  tcprt_failed_tasks_total          W and N records\n"
"  tcprt_connections_total           closed connections (E), port and role\n"
"  tcprt_sent_bytes_total            bytes sent by the tasks (R W P)\n"
"  tcprt_received_bytes_total        bytes received by the tasks (R N P)\n"
"  tcprt_retransmissions_total       retransmitted segments (R W P)\n"
"  tcprt_duration_seconds            histogram: duration (R W N P)\n"
"  tcprt_process_seconds             histogram: process time (R W),\n"
"                                    service time (P)\n"
"  tcprt_upload_seconds              histogram: upload time (R W P)\n"
"  tcprt_download_seconds            histogram: download time (R W P)\n"
"  tcprt_rq_wait_seconds             histograms of the time breakdown\n"
"  tcprt_app_seconds                 (tcp_rt's log_ext, docs/records.md):\n"
"  tcprt_sq_wait_seconds             rq_wait, app, sq_wait (R W; P: no\n"
"  tcprt_rwnd_limited_seconds        app), rwnd_limited, sndbuf_limited,\n"
"  tcprt_sndbuf_limited_seconds      app_limited (R W P); a series only\n"
"  tcprt_app_limited_seconds         once a record of it had the field\n"
"  tcprt_records_read_total          valid lines read (no labels)\n"
"  tcprt_malformed_lines_total       malformed lines skipped (no labels)\n"
"  tcprt_container_overflow_records_total\n"
"                                    records counted as container=\"other\"\n"
"                                    (no labels)\n"
"  tcprt_module_status{key}          every numeric line of tcp_rt's status\n"
"  tcprt_agent_status{key}           tcprt agent's sinks' counts (its status\n"
"                                    file's lines; not export's)\n";

enum {
	O_OTLP = 256, O_OTLP_EXPONENTIAL, O_OTLP_LOGS, O_OTLP_LOGS_URL,
	O_OTLP_HEADER_FILE, O_OTLP_CA, O_OTLP_CERT, O_OTLP_KEY, O_OTLP_INSECURE,
};

int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "textfile", required_argument, NULL, 't' },
		{ "interval", required_argument, NULL, 'i' },
		{ "once", no_argument, NULL, '1' },
		{ "buckets", required_argument, NULL, 'b' },
		{ "port", required_argument, NULL, 'p' },
		{ "max-ports", required_argument, NULL, 'm' },
		{ "netns", required_argument, NULL, 'n' },
		{ "container", required_argument, NULL, 'c' },
		{ "max-containers", required_argument, NULL, 'M' },
		{ "archive", required_argument, NULL, 'a' },
		{ "dir", required_argument, NULL, 'd' },
		{ "input-format", required_argument, NULL, OPT_INPUT_FORMAT },
		{ "otlp", required_argument, NULL, O_OTLP },
		{ "otlp-exponential", no_argument, NULL, O_OTLP_EXPONENTIAL },
		{ "otlp-logs", required_argument, NULL, O_OTLP_LOGS },
		{ "otlp-logs-url", required_argument, NULL, O_OTLP_LOGS_URL },
		{ "otlp-header-file", required_argument, NULL, O_OTLP_HEADER_FILE },
		{ "otlp-ca", required_argument, NULL, O_OTLP_CA },
		{ "otlp-cert", required_argument, NULL, O_OTLP_CERT },
		{ "otlp-key", required_argument, NULL, O_OTLP_KEY },
		{ "otlp-insecure", no_argument, NULL, O_OTLP_INSECURE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct reader *rd = xcalloc(1, sizeof(*rd));
	uint64_t interval = 15 * USEC_PER_SEC;
	const char *dir = NULL, *archive = NULL, *name;
	enum input_format infmt = INPUT_AUTO;
	struct metrics_conf c;
	struct sink sink;
	char err[512];
	bool once = false, started;
	int o, st = EXIT_OK;

	metrics_conf_init(&c);
	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":t:i:1b:p:m:n:c:M:a:d:h", opts, NULL)) != -1) {
		switch (o) {
		case 'i': interval = opt_seconds("export", "--interval", optarg, false); break;
		case '1': once = true; break;
		case 'a': archive = optarg; break;
		case 'd': dir = optarg; break;
		case OPT_INPUT_FORMAT:
			infmt = opt_input_format("export", optarg);
			break;
		case 'h': fputs(help, stdout); free(rd); return EXIT_OK;
		case ':': case '?': bad_option("export", o, argv);
		default:
			/* the sink's own: its settings */
			name = opt_long_name(opts, o);
			if (metrics_set(&c, name, optarg, err, sizeof(err)))
				usage_error("export", "--%s: %s", name, err);
		}
	}
	if (optind < argc)
		usage_error("export", "unexpected argument '%s'", argv[optind]);
	if (metrics_check(&c, err, sizeof(err)) < 0)
		usage_error("export", "%s", err);

	signals_init();
	c.interval_us = interval;
	started = metrics_sink_start(&sink, &c, err, sizeof(err)) == 0;
	metrics_conf_free(&c);
	if (started) {
		reader_add_sink(rd, &sink);
		st = reader_open(rd, dir, infmt, archive);
	} else {
		warnx_("export: %s", err);
		st = EXIT_RUNTIME;
	}
	if (st == EXIT_OK)
		st = reader_run(rd, interval, interval, once);
	/* --once: what was read did not all go */
	if (!reader_close(rd) && once && st == EXIT_OK)
		st = EXIT_RUNTIME;
	ct_free();
	free(rd);
	return st;
}
