// SPDX-License-Identifier: GPL-2.0
/*
 * tcprt spool: the central's writer of the spool (docs/fleet.md, "The
 * central's spool"), run by rsyslog's omprog with confirmMessages
 * (fleet/tcprt-central.conf).
 *
 * One message a line on standard input; each is written whole to
 * DIR/YYYYMMDDHH.frames (the central's UTC hour) and only then answered
 * "OK" on standard output.  When it cannot be written whole - the disk
 * full, an I/O error, the spool at its bound - what was written of it is
 * cut off again and the answer is an error: omprog suspends the action and
 * offers the same message again later, and since the central's ruleset
 * queue is Direct, imrelp does not acknowledge it meanwhile: the senders
 * keep their messages, in their own queues, until the central can write
 * again.  So nothing the central acknowledged is lost, and no line is
 * torn: a file is also cut back to its last whole line when opened, for
 * what a crash of this writer may have left (never acknowledged, so sent
 * again).
 *
 * The bound: the spool's files may hold --max-bytes at most, and the file
 * system must keep --min-free bytes free.  The figures a user alerts on -
 * the spool's size, the file system's free bytes, whether it refuses, how
 * often it refused - are in DIR/.tcprt-spool.status and, with --textfile,
 * for node_exporter.
 *
 * One writer per spool (a lock in DIR): omprog runs one instance
 * (forceSingleInstance), and a second writer would cut off the first's
 * lines.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "util.h"

static const char help[] =
"usage: tcprt spool --dir DIR [--max-bytes BYTES] [--min-free BYTES]\n"
"                   [--textfile PATH]\n"
"\n"
"The central's spool writer, run by rsyslog's omprog (confirmMessages;\n"
"share/tcprt/fleet/tcprt-central.conf): each line of standard input is\n"
"written whole to DIR/YYYYMMDDHH.frames (UTC), then answered OK; a line\n"
"that cannot be written whole (disk full, I/O error, the bound below) is\n"
"cut off again and answered with the reason, and rsyslog offers it again\n"
"later without acknowledging it to its sender meanwhile.\n"
"\n"
"  -d, --dir DIR        the spool folder (made 0750 if missing)\n"
"  -m, --max-bytes B    the spool's *.frames files hold B bytes at most\n"
"                       (k/M/G suffixes, powers of 1000; default 0: no\n"
"                       limit but the file system's)\n"
"  -f, --min-free B     keep B bytes of the file system free (default: 5%\n"
"                       of its size)\n"
"  -t, --textfile PATH  also write the figures for node_exporter's textfile\n"
"                       collector to PATH (*.prom)\n"
"  -h, --help           this text\n"
"\n"
"Its figures - bytes, free bytes, limit, refusing, refusals - are in\n"
"DIR/.tcprt-spool.status, rewritten when it starts or stops refusing and\n"
"every 10 s.\n";

#define SUFFIX		".frames"
#define STATUS_NAME	".tcprt-spool.status"
#define LOCK_NAME	".tcprt-spool.lock"
#define RESCAN_US	(2 * USEC_PER_SEC)	/* the spool's size, from the files */
#define STATUS_US	(10 * USEC_PER_SEC)
#define LINE_MAX_BYTES	65536	/* imrelp's maxDataSize is 8k */
#define DEFAULT_FREE_PCT 5
/* kept free beyond --min-free: the status file's new copy always fits */
#define STATUS_RESERVE	(16 * 1024)

struct spool {
	const char *dir, *textfile;
	uint64_t max_bytes, min_free;
	bool min_free_set;

	int fd;			/* the hour's file */
	char hour[16];		/* its YYYYMMDDHH */

	uint64_t bytes;		/* the spool's files' size */
	uint64_t free;		/* the file system's free bytes */
	uint64_t scanned_us, status_us;

	bool refusing;
	uint64_t written, refusals, repaired;
	char why[256];		/* the last refusal's reason */
};

/* ---- figures ----------------------------------------------------------------- */

static void scan_bytes(struct spool *s)
{
	size_t n = strlen(SUFFIX);
	DIR *d = opendir(s->dir);
	struct dirent *e;
	uint64_t sum = 0;
	struct stat st;

	if (!d)
		return;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (e->d_name[0] == '.' || len <= n || strcmp(e->d_name + len - n, SUFFIX))
			continue;
		if (!fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
		    S_ISREG(st.st_mode))
			sum += (uint64_t)st.st_size;
	}
	closedir(d);
	s->bytes = sum;
	s->scanned_us = mono_us();
}

static void measure(struct spool *s)
{
	struct statvfs v;

	if (mono_us() - s->scanned_us >= RESCAN_US)
		scan_bytes(s);
	if (!statvfs(s->dir, &v)) {
		s->free = (uint64_t)v.f_bavail * v.f_frsize;
		if (!s->min_free_set)
			s->min_free = (uint64_t)v.f_blocks * v.f_frsize * DEFAULT_FREE_PCT / 100;
	}
}

/*
 * @text to @path, atomically: a new file renamed over the old one.  A
 * failure is said, once until the next success (the figures are stale).
 */
static void write_atomic(const char *path, const char *text, mode_t mode)
{
	static bool said;
	char tmp[4200];
	size_t len = strlen(text);
	int fd, err = 0;

	snprintf(tmp, sizeof(tmp), "%s.new", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0) {
		err = errno;
	} else {
		if (write(fd, text, len) != (ssize_t)len || fchmod(fd, mode))
			err = errno ? errno : EIO;
		if (close(fd) && !err)
			err = errno;
		if (!err && rename(tmp, path))
			err = errno;
		if (err)
			unlink(tmp);
	}
	if (err && !said)
		warnx_("spool: writing %s: %s; its figures are stale", path, strerror(err));
	said = err != 0;
}

static void write_status(struct spool *s)
{
	char path[4200], text[2048];

	snprintf(text, sizeof(text),
		 "bytes %llu\nfree %llu\nmax_bytes %llu\nmin_free %llu\nrefusing %d\nrefusals %llu\nwritten %llu\nrepaired %llu\nreason %s\n",
		 (unsigned long long)s->bytes, (unsigned long long)s->free,
		 (unsigned long long)s->max_bytes, (unsigned long long)s->min_free,
		 s->refusing, (unsigned long long)s->refusals,
		 (unsigned long long)s->written, (unsigned long long)s->repaired,
		 s->refusing ? s->why : "-");
	snprintf(path, sizeof(path), "%s/%s", s->dir, STATUS_NAME);
	write_atomic(path, text, 0640);
	if (s->textfile) {
		snprintf(text, sizeof(text),
			 "# HELP tcprt_spool_bytes Bytes in the central's spool files.\n# TYPE tcprt_spool_bytes gauge\ntcprt_spool_bytes %llu\n"
			 "# HELP tcprt_spool_free_bytes Free bytes of the spool's file system.\n# TYPE tcprt_spool_free_bytes gauge\ntcprt_spool_free_bytes %llu\n"
			 "# HELP tcprt_spool_min_free_bytes The free bytes the spool keeps.\n# TYPE tcprt_spool_min_free_bytes gauge\ntcprt_spool_min_free_bytes %llu\n"
			 "# HELP tcprt_spool_refusing 1 while the spool refuses messages (the senders keep them).\n# TYPE tcprt_spool_refusing gauge\ntcprt_spool_refusing %d\n"
			 "# HELP tcprt_spool_refusals_total Messages refused, to be offered again.\n# TYPE tcprt_spool_refusals_total counter\ntcprt_spool_refusals_total %llu\n",
			 (unsigned long long)s->bytes, (unsigned long long)s->free,
			 (unsigned long long)s->min_free, s->refusing,
			 (unsigned long long)s->refusals);
		write_atomic(s->textfile, text, 0644);
	}
	s->status_us = mono_us();
}

/* ---- the hour's file ----------------------------------------------------------- */

/*
 * Cut @fd's file back to its last whole line: bytes past it were written
 * by a writer that stopped before it answered OK, so they are sent again.
 */
static void repair(struct spool *s, int fd, const char *name)
{
	char buf[4096];
	struct stat st;
	off_t end, pos;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !st.st_size)
		return;
	end = st.st_size;
	for (pos = end; pos > 0;) {
		size_t n = pos > (off_t)sizeof(buf) ? sizeof(buf) : (size_t)pos;
		ssize_t got = pread(fd, buf, n, pos - (off_t)n);
		ssize_t i;

		if (got != (ssize_t)n)
			return;
		for (i = got - 1; i >= 0; i--)
			if (buf[i] == '\n')
				break;
		if (i >= 0) {
			pos = pos - (off_t)n + i + 1;
			break;
		}
		pos -= (off_t)n;
	}
	if (pos == end)
		return;
	if (!ftruncate(fd, pos)) {
		s->repaired += (uint64_t)(end - pos);
		warnx_("spool: %s ended in %lld bytes of a line never acknowledged: cut off (its sender sends it again)",
		       name, (long long)(end - pos));
	}
}

/* Every spool file cut back to its last whole line, at start. */
static void repair_all(struct spool *s)
{
	size_t n = strlen(SUFFIX);
	DIR *d = opendir(s->dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		char path[4200];
		int fd;

		if (e->d_name[0] == '.' || len <= n || strcmp(e->d_name + len - n, SUFFIX))
			continue;
		snprintf(path, sizeof(path), "%s/%s", s->dir, e->d_name);
		fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		repair(s, fd, path);
		close(fd);
	}
	closedir(d);
}

/* Let go of the hour's file: ingest may remove it once it is loaded. */
static void close_hour_file(struct spool *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	s->hour[0] = '\0';
}

/*
 * Open @path for appending with a shared lock held as long as it is open:
 * ingest removes only a file it can lock exclusively (cmd_ingest.c), so it
 * never removes the file written here, newest or not (a clock stepped
 * back writes an older name).  A file removed between the open and the
 * lock is opened again, anew.
 */
static int open_locked(const char *path)
{
	int tries;

	for (tries = 0; tries < 10; tries++) {
		int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0640);
		struct stat st;

		if (fd < 0)
			return -1;
		if (flock(fd, LOCK_SH) || fstat(fd, &st)) {
			close(fd);
			return -1;
		}
		if (st.st_nlink)
			return fd;
		close(fd);
	}
	errno = ESTALE;
	return -1;
}

/* The file of this hour, open for appending; false (why set) if not. */
static bool hour_file(struct spool *s)
{
	time_t now = time(NULL);
	char hour[16], path[4200];
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(hour, sizeof(hour), "%Y%m%d%H", &tm);
	if (s->fd >= 0 && !strcmp(hour, s->hour))
		return true;
	close_hour_file(s);
	snprintf(path, sizeof(path), "%s/%s" SUFFIX, s->dir, hour);
	s->fd = open_locked(path);
	if (s->fd < 0) {
		snprintf(s->why, sizeof(s->why), "%.200s: %s", path, strerror(errno));
		return false;
	}
	repair(s, s->fd, path);
	strcpy(s->hour, hour);
	return true;
}

/* ---- one message ------------------------------------------------------------- */

static bool over_bound(struct spool *s, size_t len)
{
	measure(s);
	if (s->max_bytes && s->bytes + len > s->max_bytes) {
		snprintf(s->why, sizeof(s->why), "the spool holds %llu bytes, its bound is %llu (--max-bytes)",
			 (unsigned long long)s->bytes, (unsigned long long)s->max_bytes);
		return true;
	}
	if (s->free < s->min_free + STATUS_RESERVE + len) {
		snprintf(s->why, sizeof(s->why), "%llu bytes free, %llu to keep (--min-free, and %d for the status file)",
			 (unsigned long long)s->free, (unsigned long long)s->min_free,
			 STATUS_RESERVE);
		return true;
	}
	return false;
}

/*
 * Write @line (@len bytes, with its newline) whole, or not at all.  At
 * the bound the hour's file is let go: ingest can then remove it once it
 * is loaded, even the newest, and free what the bound needs (else a file
 * that alone reached the bound would be kept, and refused, for good).
 */
static bool put(struct spool *s, const char *line, size_t len)
{
	struct stat st;
	size_t done = 0;

	if (over_bound(s, len)) {
		close_hour_file(s);
		return false;
	}
	if (!hour_file(s))
		return false;
	if (fstat(s->fd, &st)) {
		snprintf(s->why, sizeof(s->why), "fstat: %s", strerror(errno));
		return false;
	}
	/* removed under it all the same (by hand): never written into a
	 * file nobody can read */
	if (!st.st_nlink) {
		close_hour_file(s);
		if (!hour_file(s) || fstat(s->fd, &st)) {
			snprintf(s->why + strlen(s->why), sizeof(s->why) - strlen(s->why),
				 " (the hour's file was removed)");
			return false;
		}
	}
	while (done < len) {
		ssize_t n = write(s->fd, line + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(s->why, sizeof(s->why), "write: %s",
				 n < 0 ? strerror(errno) : "nothing written");
			/* never a torn line: cut back what went in */
			if (ftruncate(s->fd, st.st_size))
				snprintf(s->why + strlen(s->why), sizeof(s->why) - strlen(s->why),
					 "; and cutting it off: %s", strerror(errno));
			return false;
		}
		done += (size_t)n;
	}
	s->bytes += len;
	return true;
}

static void answer(const char *text)
{
	fputs(text, stdout);
	fflush(stdout);
}

static void message(struct spool *s, const char *line, size_t len)
{
	bool was = s->refusing, ok = put(s, line, len);

	s->refusing = !ok;
	if (ok) {
		s->written++;
		answer("OK\n");
	} else {
		s->refusals++;
		/* omprog logs it (reportFailures) and offers the line again */
		printf("spool refuses: %s\n", s->why);
		fflush(stdout);
	}
	if (was != s->refusing) {
		if (s->refusing)
			warnx_("spool: refusing messages, which their senders keep: %s", s->why);
		else
			warnx_("spool: takes messages again (%llu refusals)",
			       (unsigned long long)s->refusals);
		write_status(s);
	} else if (mono_us() - s->status_us >= STATUS_US) {
		write_status(s);
	}
}

/* ---- setup ------------------------------------------------------------------ */

static void lock_spool(const struct spool *s)
{
	char path[4200];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", s->dir, LOCK_NAME);
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		die(EXIT_RUNTIME, "spool: %s: %s", path, strerror(errno));
	/* a writer still ending (omprog restarting it) lets go soon */
	if (flock(fd, LOCK_EX) < 0)
		die(EXIT_RUNTIME, "spool: %s: %s", path, strerror(errno));
}

static uint64_t opt_size(const char *opt, const char *arg)
{
	uint64_t v;

	if (!parse_bytes(arg, &v))
		usage_error("spool", "%s: '%s' is not a number of bytes (k/M/G suffixes)",
			    opt, arg);
	return v;
}

int cmd_spool(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "max-bytes", required_argument, NULL, 'm' },
		{ "min-free", required_argument, NULL, 'f' },
		{ "textfile", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static char in[LINE_MAX_BYTES + 1];
	struct spool s = { .fd = -1 };
	size_t have = 0;
	int o;

	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":d:m:f:t:h", opts, NULL)) != -1) {
		switch (o) {
		case 'd': s.dir = optarg; break;
		case 'm': s.max_bytes = opt_size("--max-bytes", optarg); break;
		case 'f':
			s.min_free = opt_size("--min-free", optarg);
			s.min_free_set = true;
			break;
		case 't': s.textfile = optarg; break;
		case 'h': fputs(help, stdout); return EXIT_OK;
		default: bad_option("spool", o, argv);
		}
	}
	if (optind < argc)
		usage_error("spool", "unexpected argument '%s'", argv[optind]);
	if (!s.dir)
		usage_error("spool", "--dir DIR is required (the spool folder)");
	if (mkdir(s.dir, 0750) && errno != EEXIST)
		die(EXIT_RUNTIME, "spool: --dir %s: %s", s.dir, strerror(errno));
	lock_spool(&s);
	repair_all(&s);
	scan_bytes(&s);
	measure(&s);
	write_status(&s);
	/* omprog (confirmMessages) waits for this before the first line */
	answer("OK\n");
	for (;;) {
		struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
		size_t pos = 0;
		char *nl;
		ssize_t n;
		int r = poll(&p, 1, (int)(STATUS_US / 1000));

		/* idle: the figures stay fresh (ingest frees space meanwhile) */
		if (!r || mono_us() - s.status_us >= STATUS_US) {
			measure(&s);
			write_status(&s);
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r < 0)
				break;
			continue;
		}
		n = read(STDIN_FILENO, in + have, sizeof(in) - 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		/* rsyslog closed it (a line it had begun was never confirmed:
		 * it sends it again) */
		if (n <= 0)
			break;
		have += (size_t)n;
		while ((nl = memchr(in + pos, '\n', have - pos))) {
			message(&s, in + pos, (size_t)(nl - in) + 1 - pos);
			pos = (size_t)(nl - in) + 1;
		}
		if (!pos && have == sizeof(in) - 1) {
			/* no line is this long: kept whole, as a bad line */
			in[have++] = '\n';
			message(&s, in, have);
			pos = have;
		}
		memmove(in, in + pos, have - pos);
		have -= pos;
	}
	close_hour_file(&s);
	write_status(&s);
	return EXIT_OK;
}
