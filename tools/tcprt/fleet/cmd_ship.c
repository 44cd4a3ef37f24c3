// SPDX-License-Identifier: GPL-2.0
/*
 * tcprt ship: the ship sink (sink_ship.h) behind its options, fed by a
 * reader of its own (reader.h): the records of this host, numbered,
 * capped and handed to the local rsyslog (docs/fleet.md).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "reader.h"
#include "sink_ship.h"
#include "util.h"

static const char help[] =
"usage: tcprt ship [--key-file FILE | --unsigned [--host-id ID]] [--socket PATH]\n"
"                  [--rate BYTES] [--burst BYTES] [--state FILE]\n"
"                  [--interval SECONDS] [--send-wait SECONDS] [--dir DIR] [--input-format F]\n"
"                  [--series DIR] [--once]\n"
"\n"
"Drain every rt-network-log<cpu> of /sys/kernel/debug/tcp-rt (reading\n"
"consumes them), give every line the next sequence number of this run,\n"
"cap the rate, and hand the records to the local rsyslog, which forwards\n"
"them to the central (RELP; share/tcprt/fleet/tcprt-ship.conf).  Runs\n"
"until SIGINT/SIGTERM (or, with --once, until the files are read to their\n"
"end), then sends a last control message.  Every loss is counted, sent to\n"
"the central in the control messages and told by 'tcprt fleet gaps'.\n"
"\n"
"  -k, --key-file F     the frame key this host signs its messages with\n"
"                       (default /etc/tcprt/tls/frame.key); its host id\n"
"                       is this host's\n"
"  -U, --unsigned       send unsigned messages (a central whose ingest\n"
"                       checks signatures refuses them)\n"
"  -H, --host-id ID     this host's name in the store, 1 to 64 of\n"
"                       [A-Za-z0-9._-]: the frame key's; --unsigned: m- and\n"
"                       a hash keyed by /etc/machine-id, which itself never\n"
"                       leaves the host\n"
"  -S, --socket PATH    rsyslog's socket (default " "/run/tcprt/ship.sock)\n"
"  -R, --rate BYTES     the cap: bytes per second of record lines (with\n"
"                       their newlines), k/M/G suffixes (powers of 1000);\n"
"                       default 10M; 0: no cap.  A record over the cap is\n"
"                       dropped and counted, never delayed\n"
"  -B, --burst BYTES    the bytes the cap lets through at once after a quiet\n"
"                       spell (default: one second of --rate, at least 1M)\n"
"  -i, --interval S     seconds between control messages (default 10)\n"
"  -w, --send-wait S    how long a message waits for room in rsyslog's\n"
"                       socket before its records count as refused\n"
"                       (default 1); after a refusal the next messages\n"
"                       do not wait, until one is taken\n"
"  -s, --state FILE     where the epoch's account is kept as it goes, so\n"
"                       that a ship killed (SIGKILL, OOM) loses nothing\n"
"                       uncounted: the next one closes the dead epoch's\n"
"                       account from it (default /var/lib/tcprt/ship.state;\n"
"                       with --dir, none unless given)\n"
"  -d, --dir DIR        read the rt-network-log* files of DIR instead\n"
"                       (recorded logs; nothing consumed; what is appended\n"
"                       is shipped too unless --once)\n"
INPUT_FORMAT_HELP
"  -m, --series DIR     ship the series runs kept in DIR (tcprt series --every\n"
"                       --store DIR) too, each once, as they appear: their\n"
"                       lines numbered, capped and counted with the records;\n"
"                       where the last run shipped is kept next to --state\n"
"                       (FILE.series; no --state: every run of DIR)\n"
"  -1, --once           read the files to their current end, then stop\n"
"  -N, --unnumbered     ship the module's records though log_ext has no seq\n"
"                       (refused otherwise: what a killed ship had read\n"
"                       would be lost uncounted)\n"
"  -h, --help           this text\n"
"\n"
"With tcp_rt's log_ext listing seq, every record carries its number in its\n"
"CPU's log; ship follows those numbers per log and module load (status's\n"
"load_id) and sends their account too (L1 messages), so that the central\n"
"tells records overwritten in the relay, dropped, refused, lost with a\n"
"killed ship and lost in transport apart, record by record.\n"
"\n"
"At exit it prints the run's counters on stderr.  Exit status 1 when the\n"
"files cannot be read or the last control message could not be sent.\n";

int cmd_ship(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "host-id", required_argument, NULL, 'H' },
		{ "socket", required_argument, NULL, 'S' },
		{ "rate", required_argument, NULL, 'R' },
		{ "burst", required_argument, NULL, 'B' },
		{ "interval", required_argument, NULL, 'i' },
		{ "send-wait", required_argument, NULL, 'w' },
		{ "dir", required_argument, NULL, 'd' },
		{ "input-format", required_argument, NULL, OPT_INPUT_FORMAT },
		{ "once", no_argument, NULL, '1' },
		{ "unnumbered", no_argument, NULL, 'N' },
		{ "key-file", required_argument, NULL, 'k' },
		{ "unsigned", no_argument, NULL, 'U' },
		{ "state", required_argument, NULL, 's' },
		{ "series", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct reader *rd;
	enum input_format infmt = INPUT_AUTO;
	struct ship_conf c;
	const char *name;
	struct sink sink;
	char err[1024];
	bool once = false;
	int o, st;

	ship_conf_init(&c);
	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":H:S:R:B:i:w:d:1k:Us:m:Nh", opts, NULL)) != -1) {
		switch (o) {
		case 'd': c.dir = optarg; break;
		case OPT_INPUT_FORMAT:
			infmt = opt_input_format("ship", optarg);
			break;
		case '1': once = true; break;
		case 'h': fputs(help, stdout); return EXIT_OK;
		case ':': case '?': bad_option("ship", o, argv);
		default:
			/* the sink's own: its settings */
			name = opt_long_name(opts, o);
			if (ship_set(&c, name, optarg, err, sizeof(err)))
				usage_error("ship", "--%s: %s", name, err);
		}
	}
	if (optind < argc)
		usage_error("ship", "unexpected argument '%s'", argv[optind]);
	if (ship_check(&c, err, sizeof(err)) < 0) {
		ship_conf_free(&c);
		usage_error("ship", "%s", err);
	}

	signals_init();
	rd = xcalloc(1, sizeof(*rd));
	st = reader_open(rd, c.dir, infmt, NULL);
	if (st == EXIT_OK) {
		int r = ship_sink_start(&sink, &c, err, sizeof(err));

		if (r == -2)
			usage_error("ship", "--%s", err);
		if (r < 0) {
			warnx_("ship: %s", err);
			st = EXIT_RUNTIME;
		} else {
			reader_add_sink(rd, &sink);
		}
	}
	ship_conf_free(&c);
	/* the control messages are the sink's own (--interval): the
	 * reader's output is only its end */
	if (st == EXIT_OK)
		st = reader_run(rd, DEFAULT_POLL_US, UINT64_MAX / 2, once);
	/* the last control message did not go */
	if (!reader_close(rd) && st == EXIT_OK)
		st = EXIT_RUNTIME;
	free(rd);
	return st;
}
