// SPDX-License-Identifier: GPL-2.0
/*
 * tcprt fleet key: a host's frame key, derived from the fleet's master
 * (sign.h), written to a new file only its owner reads.  The enrolling
 * machine runs it (make-certs.sh host does); neither secret is ever on a
 * command line or on the terminal.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "frame.h"
#include "sign.h"
#include "util.h"

static const char help[] =
"usage: tcprt fleet key --master FILE --host ID --out FILE\n"
"\n"
"Write host ID's frame key, derived from the fleet's master key FILE, to\n"
"a new file (mode 0600) that tcprt ship on that host reads\n"
"(/etc/tcprt/tls/frame.key by default).  The central's ingest derives the\n"
"same key from the same master: it stores a message under host ID only\n"
"when it is signed with it.\n"
"\n"
"  -m, --master FILE  the master key (make-certs.sh ca makes it)\n"
"  -H, --host ID      the host id, 1 to 64 of [A-Za-z0-9._-]: its\n"
"                     certificate's name\n"
"  -o, --out FILE     the key file to create (not one that exists)\n"
"  -h, --help         this text\n";

int fleet_key(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "master", required_argument, NULL, 'm' },
		{ "host", required_argument, NULL, 'H' },
		{ "out", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned char master[SIGN_KEY_LEN];
	const char *mpath = NULL, *out = NULL;
	struct sign_key k = { 0 };
	char err[512], line[160];
	size_t n;
	int o, fd;

	optind = 2;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":m:H:o:h", opts, NULL)) != -1) {
		switch (o) {
		case 'm': mpath = optarg; break;
		case 'H':
			if (!frame_host_ok(optarg))
				usage_error("fleet", "--host: '%s' is not a host id (1 to 64 of [A-Za-z0-9._-])",
					    optarg);
			strcpy(k.host, optarg);
			break;
		case 'o': out = optarg; break;
		case 'h': fputs(help, stdout); return EXIT_OK;
		default: bad_option("fleet", o, argv);
		}
	}
	if (optind < argc)
		usage_error("fleet", "unexpected argument '%s'", argv[optind]);
	if (!mpath || !k.host[0] || !out)
		usage_error("fleet", "key needs --master FILE, --host ID and --out FILE");
	if (!sign_read_master(mpath, master, err, sizeof(err)))
		die(EXIT_RUNTIME, "fleet key: %s", err);
	sign_derive(master, k.host, k.key);
	explicit_bzero(master, sizeof(master));
	n = sign_key_line(line, sizeof(line), &k);
	explicit_bzero(&k.key, sizeof(k.key));
	fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		int e = errno;

		explicit_bzero(line, sizeof(line));
		die(EXIT_RUNTIME, "fleet key: --out %s: %s", out, strerror(e));
	}
	if (write(fd, line, n) != (ssize_t)n || fsync(fd) || close(fd)) {
		explicit_bzero(line, sizeof(line));
		unlink(out);
		die(EXIT_RUNTIME, "fleet key: writing %s: %s", out, strerror(errno));
	}
	explicit_bzero(line, sizeof(line));
	printf("%s: frame key of host %s\n", out, k.host);
	return EXIT_OK;
}
