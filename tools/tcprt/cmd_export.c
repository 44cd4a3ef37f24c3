// SPDX-License-Identifier: GPL-2.0
/*
 * tcprt export: Prometheus metrics for node_exporter's textfile collector,
 * and/or OTLP to an OpenTelemetry collector.
 *
 * One reader and one sink, the metrics sink (sink_metrics.c, which counts
 * and writes): every interval the logs are drained into it, the module's
 * status read, and the sink's output made.  This file is the options,
 * their checks and that loop.
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
"  tcprt_module_status{key}          every numeric line of tcp_rt's status\n";

/* What export reads: the logs, and the module's status each interval. */
struct export_reader {
	struct input in;
	struct sink sink;
	struct sink_status status[SINK_STATUS_MAX];
	unsigned int nstatus;
};

static void add(const struct record *r, void *arg)
{
	struct export_reader *e = arg;

	e->sink.ops->record(e->sink.priv, r);
}

static void status_line(const char *key, uint64_t value, void *arg)
{
	struct export_reader *e = arg;

	if (e->nstatus == SINK_STATUS_MAX || strlen(key) >= sizeof(e->status[0].key))
		return;
	/* keys are [a-z_A-Z0-9]; anything else would need escaping */
	if (key[strspn(key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")])
		return;
	snprintf(e->status[e->nstatus].key, sizeof(e->status[0].key), "%s", key);
	e->status[e->nstatus++].value = value;
}

static void update(struct export_reader *e)
{
	input_read(&e->in);
	e->nstatus = 0;
	input_status(&e->in, status_line, e);
}

/* The sink's output of this interval. */
static int output(struct export_reader *e, bool last)
{
	struct sink_input si = {
		.records = e->in.records, .bad = e->in.bad,
		.status = e->status, .nstatus = e->nstatus,
	};

	return e->sink.ops->output(e->sink.priv, &si, last);
}

/* @opt's value: "http://..." or "https://..." with something after it. */
static const char *opt_url(const char *opt, const char *u)
{
	if ((!strncmp(u, "http://", 7) && u[7]) ||
	    (!strncmp(u, "https://", 8) && u[8]))
		return u;
	usage_error("export", "%s: '%s' is not an http:// or https:// URL", opt, u);
}

/* URL's .../v1/metrics as .../v1/logs: the collector's logs endpoint. */
static char *logs_url_of(const char *url)
{
	static const char tail[] = "/v1/metrics";
	size_t n = strlen(url), t = sizeof(tail) - 1;
	char *u;

	if (n < t || strcmp(url + n - t, tail))
		return NULL;
	u = xcalloc(n, 1);
	snprintf(u, n, "%.*s/v1/logs", (int)(n - t), url);
	return u;
}

/* --otlp-header-file: one "Name: value" line, mode 0600. */
static char *read_header(const char *path)
{
	char err[512], *h = read_secret(path, "--otlp-header-file", err, sizeof(err));
	const char *colon;

	if (!h)
		usage_error("export", "%s", err);
	colon = strchr(h, ':');
	if (!colon || colon == h || strcspn(h, " \t") < (size_t)(colon - h))
		usage_error("export", "--otlp-header-file %s: not one \"Name: value\" line",
			    path);
	return h;
}

enum {
	O_OTLP = 256, O_OTLP_EXPONENTIAL, O_OTLP_LOGS, O_OTLP_LOGS_URL,
	O_OTLP_HEADER_FILE, O_OTLP_CA, O_OTLP_CERT, O_OTLP_KEY, O_OTLP_INSECURE,
};

/* What --otlp* set, checked once all options are read. */
struct otlp_opts {
	const char *url, *logs_url, *header_file;
	struct otlp_tls tls;
	bool exponential, any, insecure;
	uint64_t log_rate;
};

/* The URL's host is this machine: localhost, 127.0.0.0/8 or [::1]. */
static bool url_loopback(const char *url)
{
	const char *h = strstr(url, "://") + 3;
	size_t n = strcspn(h, ":/?#");

	if (*h == '[')
		return !strncmp(h, "[::1]", 5);
	return (n == 9 && !strncmp(h, "localhost", 9)) || !strncmp(h, "127.", 4);
}

/*
 * Secure by default: what goes to another machine is encrypted (https)
 * and tcprt shows who it is (a client certificate, or the header file's
 * token); --otlp-insecure says otherwise.  A collector on this machine
 * (the usual agent) needs neither.
 */
static void otlp_check_secure(const struct otlp_opts *o, const char *opt,
			      const char *url)
{
	if (!url || o->insecure || url_loopback(url))
		return;
	if (strncmp(url, "https://", 8))
		usage_error("export", "%s %s: not encrypted (http://) to another machine: use https://, or --otlp-insecure to send in clear",
			    opt, url);
	if (!o->tls.cert && !o->header_file)
		usage_error("export", "%s %s: tcprt would not say who it is: give --otlp-cert and --otlp-key, or --otlp-header-file with a token, or --otlp-insecure",
			    opt, url);
}

static void otlp_check(const struct otlp_opts *o, const char *path)
{
	if (!path && !o->url)
		usage_error("export", "--textfile PATH or --otlp URL is required");
	if (!o->any)
		return;
#ifndef TCPRT_OTLP
	die(EXIT_USAGE, "export: --otlp: this tcprt was built without OTLP: %s",
	    TCPRT_NO_OTLP);
#endif
	if (!o->url)
		usage_error("export", "--otlp-exponential, --otlp-logs, --otlp-logs-url and --otlp-header-file need --otlp URL");
	if (o->logs_url && !o->log_rate)
		usage_error("export", "--otlp-logs-url needs --otlp-logs RATE");
	if (!o->tls.cert != !o->tls.key)
		usage_error("export", "--otlp-cert and --otlp-key go together");
	if (o->tls.key) {
		char err[512];
		int fd = open_private(o->tls.key, "--otlp-key", err, sizeof(err));

		if (fd < 0)
			usage_error("export", "%s", err);
		close(fd);
	}
	otlp_check_secure(o, "--otlp", o->url);
	otlp_check_secure(o, "--otlp-logs-url", o->logs_url);
}

/*
 * The sink's OTLP settings of --otlp*, checked (otlp_check()): the header
 * file read (*@header, to be wiped by the caller) and the logs endpoint
 * (*@logs_url, allocated when made of --otlp's).
 */
static void otlp_conf(struct metrics_conf *c, const struct otlp_opts *o,
		      char **header, char **logs_url)
{
	c->otlp_url = o->url;
	c->tls = o->tls;
	c->exponential = o->exponential;
	c->log_rate = o->log_rate;
	if (o->header_file)
		*header = read_header(o->header_file);
	c->otlp_header = *header;
	if (!o->log_rate)
		return;
	if (o->logs_url) {
		c->otlp_logs_url = o->logs_url;
		return;
	}
	*logs_url = logs_url_of(o->url);
	if (!*logs_url)
		usage_error("export", "--otlp-logs: '%s' does not end in /v1/metrics: give the logs endpoint with --otlp-logs-url",
			    o->url);
	c->otlp_logs_url = *logs_url;
}

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
	struct export_reader *e = xcalloc(1, sizeof(*e));
	uint64_t interval = 15 * USEC_PER_SEC, next, max_ports = DEFAULT_MAX_PORTS;
	uint64_t max_containers = DEFAULT_MAX_CONTAINERS;
	const char *path = NULL, *dir = NULL, *archive = NULL;
	enum input_format infmt = INPUT_AUTO;
	struct metrics_conf c = { .port = -1 };
	struct otlp_opts oo = { 0 };
	char err[512], *header = NULL, *logs_url = NULL;
	bool once = false, started;
	unsigned int tick = 0;
	int o, st = EXIT_OK;
	size_t plen;

	c.b = prom_buckets_of("r10");
	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":t:i:1b:p:m:n:c:M:a:d:h", opts, NULL)) != -1) {
		switch (o) {
		case 't': path = optarg; break;
		case 'i': interval = opt_seconds("export", "--interval", optarg, false); break;
		case '1': once = true; break;
		case 'b':
			c.b = prom_buckets_of(optarg);
			if (!c.b)
				usage_error("export", "--buckets: '%s' is not r5, r10 or r20",
					    optarg);
			break;
		case 'p': c.port = opt_port("export", optarg); break;
		case 'm':
			if (!parse_u64(optarg, strlen(optarg), &max_ports) ||
			    max_ports < 1 || max_ports > 65535)
				usage_error("export", "--max-ports: '%s' is not 1..65535",
					    optarg);
			break;
		case 'n':
			c.ctf.netns_set = true;
			c.ctf.netns = opt_netns("export", optarg);
			break;
		case 'c': c.ctf.container = opt_container("export", optarg); break;
		case 'M':
			if (!parse_u64(optarg, strlen(optarg), &max_containers) ||
			    max_containers > 65535)
				usage_error("export", "--max-containers: '%s' is not 0..65535",
					    optarg);
			break;
		case 'a': archive = optarg; break;
		case 'd': dir = optarg; break;
		case OPT_INPUT_FORMAT:
			infmt = opt_input_format("export", optarg);
			break;
		case O_OTLP: oo.url = opt_url("--otlp", optarg); oo.any = true; break;
		case O_OTLP_EXPONENTIAL: oo.exponential = oo.any = true; break;
		case O_OTLP_LOGS:
			if (!parse_u64(optarg, strlen(optarg), &oo.log_rate) ||
			    oo.log_rate < 1 || oo.log_rate > 1000000)
				usage_error("export", "--otlp-logs: '%s' is not a rate of 1..1000000 records a second",
					    optarg);
			oo.any = true;
			break;
		case O_OTLP_LOGS_URL:
			oo.logs_url = opt_url("--otlp-logs-url", optarg);
			oo.any = true;
			break;
		case O_OTLP_HEADER_FILE: oo.header_file = optarg; oo.any = true; break;
		case O_OTLP_CA: oo.tls.ca = optarg; oo.any = true; break;
		case O_OTLP_CERT: oo.tls.cert = optarg; oo.any = true; break;
		case O_OTLP_KEY: oo.tls.key = optarg; oo.any = true; break;
		case O_OTLP_INSECURE: oo.insecure = oo.any = true; break;
		case 'h': fputs(help, stdout); free(e); return EXIT_OK;
		default: bad_option("export", o, argv);
		}
	}
	if (optind < argc)
		usage_error("export", "unexpected argument '%s'", argv[optind]);
	otlp_check(&oo, path);
	if (path) {
		plen = strlen(path);
		if (plen < 6 || strcmp(path + plen - 5, ".prom"))
			usage_error("export", "--textfile: '%s' does not end in .prom (node_exporter reads only *.prom)",
				    path);
	}

	signals_init();
	c.textfile = path;
	c.max_ports = (unsigned int)max_ports;
	c.max_containers = (unsigned int)max_containers;
	c.interval_us = interval;
	if (oo.url)
		otlp_conf(&c, &oo, &header, &logs_url);
	started = metrics_sink_start(&e->sink, &c, err, sizeof(err)) == 0;
	if (header) {
		explicit_bzero(header, strlen(header));
		free(header);
	}
	free(logs_url);
	if (!started) {
		warnx_("export: %s", err);
		st = EXIT_RUNTIME;
	}
	if (st == EXIT_OK)
		st = input_open(&e->in, dir, false, infmt, add, e);
	if (st == EXIT_OK && archive) {
		e->in.archive = fopen(archive, "a");
		if (!e->in.archive) {
			warnx_("%s: %s", archive, strerror(errno));
			st = EXIT_RUNTIME;
		}
	}
	if (st != EXIT_OK)
		goto out;

	update(e);
	if (once)
		input_finish(&e->in);
	if (output(e, once) < 0) {
		st = EXIT_RUNTIME;
		goto out;
	}
	next = now_us() + interval;
	while (!once && !stop_requested) {
		uint64_t now = now_us();

		if (now < next) {
			e->sink.ops->idle(e->sink.priv);
			now = now_us();
			if (now < next)
				sleep_us(next - now < DEFAULT_POLL_US ? next - now : DEFAULT_POLL_US);
			continue;
		}
		next += interval;
		if (next <= now)	/* fell behind (suspend?): no burst */
			next = now + interval;
		if (++tick % 4 == 0 || e->in.gone)
			input_rescan(&e->in);
		update(e);
		output(e, false);	/* a failure is retried next time */
	}
	if (!once) {
		update(e);
		input_finish(&e->in);
		output(e, true);
	}
	input_report(&e->in);
out:
	/* --once: what was read did not all go */
	if (started && !e->sink.ops->stop(e->sink.priv) && once && st == EXIT_OK)
		st = EXIT_RUNTIME;
	if (e->in.archive)
		fclose(e->in.archive);
	input_close(&e->in);
	ct_free();
	free(e);
	return st;
}
