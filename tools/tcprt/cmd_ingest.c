// SPDX-License-Identifier: GPL-2.0
/*
 * tcprt ingest: the central rsyslog's spool into ClickHouse (docs/fleet.md).
 *
 * The central rsyslog writes every message it receives as one line of a
 * file of the spool, named by the hour (tcprt-central.conf).  The loader
 * reads the files in name order from where it last stopped, turns each
 * message into rows (frame.h: records, controls; anything else into
 * bad_messages), and loads them in batches.  Only once ClickHouse has
 * acknowledged every insert of a batch does it write, atomically, the
 * offsets up to which the batch read (the state file): killed at any
 * point, it starts again from the last acknowledged batch.  Such a batch
 * may be loaded twice; its rows have the same (host, epoch, seq) and count
 * once (schema.sql).  An unreachable store holds the batch back and is
 * retried, never skipped.  A file read to its end, no longer the newest,
 * and untouched for --retire seconds is removed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clickhouse.h"
#include "cmd.h"
#include "frame.h"
#include "parse.h"
#include "store.h"
#include "util.h"

static const char help[] =
"usage: tcprt ingest --spool DIR [--url URL] [--batch ROWS] [--interval SECONDS]\n"
"                    [--state FILE] [--retire SECONDS | --keep] [--once]\n"
"\n"
"Load the messages the central rsyslog writes to DIR (files *.frames, see\n"
"share/tcprt/fleet/tcprt-central.conf) into ClickHouse: records,\n"
"control messages, and the lines that are neither (table bad_messages).\n"
"Runs until SIGINT/SIGTERM, or with --once until the files are loaded to\n"
"their end.  Restarts lose nothing and count nothing twice: the state file\n"
"keeps how far each file was loaded, written once ClickHouse acknowledged.\n"
"\n"
"  -s, --spool DIR      the central rsyslog's spool folder (required)\n"
"  -u, --url URL        ClickHouse's HTTP interface (default\n"
"                       " CH_DEFAULT_URL "; user:password@ in it if needed)\n"
"  -b, --batch ROWS     rows per load, at most (default 100000)\n"
"  -i, --interval S     load what was read at least every S seconds\n"
"                       (default 1)\n"
"  -S, --state FILE     where the loaded offsets are kept (default\n"
"                       DIR/.tcprt-ingest.state)\n"
"  -r, --retire S       remove a file read to its end once a newer one\n"
"                       exists and it was not written for S seconds\n"
"                       (default 600)\n"
"  -k, --keep           never remove a file\n"
"  -1, --once           load what the files hold now, then stop\n"
"  -h, --help           this text\n"
"\n"
"While ClickHouse is unreachable it says so once and retries, 1 to 30 s\n"
"apart, holding the batch.  It prints its counters on stderr at exit.\n";

#define SPOOL_SUFFIX		".frames"
#define STATE_NAME		".tcprt-ingest.state"
#define DEFAULT_BATCH		100000
#define DEFAULT_INTERVAL_US	USEC_PER_SEC
#define DEFAULT_RETIRE_US	(600 * USEC_PER_SEC)
#define MSG_MAX			65536	/* longer lines are bad messages */
#define BAD_KEEP		4096	/* bytes of a bad message kept */
#define RETRY_MAX_US		(30 * USEC_PER_SEC)
#define ITEMS_MAX		(FRAME_MAX / 2)

struct spool_file {
	char *name;
	uint64_t done;		/* loaded and acknowledged up to here */
	uint64_t read;		/* read into the batch up to here */
	bool seen;		/* in the folder at the last scan */
};

struct ingest {
	char *spool, *state;
	struct ch ch;
	uint64_t batch_rows, interval_us, retire_us;
	bool keep;

	struct spool_file *files;
	size_t nfiles;

	/* the batch being built */
	struct buf rec, ctl, bad;
	uint64_t rows, first_us;

	bool failed;		/* a load failed in a way retrying cannot mend */

	/* counters since start */
	uint64_t messages, records, invalid, controls, bad_messages, batches;
	uint64_t retries, retired;
};

/* ---- the state file --------------------------------------------------------- */

static struct spool_file *file_of(struct ingest *g, const char *name)
{
	size_t i;

	for (i = 0; i < g->nfiles; i++)
		if (!strcmp(g->files[i].name, name))
			return &g->files[i];
	g->files = xrealloc(g->files, g->nfiles + 1, sizeof(*g->files));
	g->files[g->nfiles] = (struct spool_file){ .name = strdup(name) };
	if (!g->files[g->nfiles].name)
		die(EXIT_RUNTIME, "out of memory");
	return &g->files[g->nfiles++];
}

static int file_cmp(const void *a, const void *b)
{
	return strcmp(((const struct spool_file *)a)->name,
		      ((const struct spool_file *)b)->name);
}

static void load_state(struct ingest *g)
{
	FILE *f = fopen(g->state, "r");
	char line[512], name[256];
	unsigned long long off;

	if (!f) {
		if (errno != ENOENT)
			die(EXIT_RUNTIME, "ingest: %s: %s", g->state, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%255s %llu", name, &off) != 2 ||
		    strchr(name, '/'))
			die(EXIT_RUNTIME, "ingest: %s: not a state file of tcprt ingest (line \"%.*s\"); move it away to load the spool from its start",
			    g->state, (int)strcspn(line, "\n"), line);
		file_of(g, name)->done = off;
	}
	fclose(f);
}

/* Write the offsets acknowledged: a new file renamed over the old one. */
static void save_state(struct ingest *g)
{
	char tmp[4200];
	FILE *f;
	size_t i;
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.new", g->state);
	f = fopen(tmp, "w");
	if (!f)
		die(EXIT_RUNTIME, "ingest: %s: %s", tmp, strerror(errno));
	for (i = 0; i < g->nfiles; i++)
		fprintf(f, "%s %llu\n", g->files[i].name,
			(unsigned long long)g->files[i].done);
	if (fflush(f) || fsync(fileno(f)) || fclose(f) || rename(tmp, g->state))
		die(EXIT_RUNTIME, "ingest: writing %s: %s", g->state, strerror(errno));
	fd = open(g->spool, O_RDONLY | O_DIRECTORY);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

/* One loader per state file: a second would load every batch twice. */
static void lock_state(const struct ingest *g)
{
	char path[4200];
	int fd;

	snprintf(path, sizeof(path), "%s.lock", g->state);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		die(EXIT_RUNTIME, "ingest: %s: %s", path, strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		die(EXIT_RUNTIME, "ingest: another tcprt ingest is loading %s (it holds %s)",
		    g->spool, path);
	/* held until exit: the descriptor is never closed */
}

/* ---- rows -------------------------------------------------------------------- */

static void tsv_u(struct buf *b, uint64_t v)
{
	buf_printf(b, "\t%llu", (unsigned long long)v);
}

static void record_row(struct ingest *g, const struct frame_hdr *h,
		       uint64_t seq, const char *line, size_t len, int kind,
		       int role)
{
	g->records++;
	if (!store_record_row(&g->rec, h, seq, line, len, kind, role))
		g->invalid++;
}

static void bad_row(struct ingest *g, const char *file, uint64_t off,
		    const char *why, const char *msg, size_t len)
{
	struct buf *b = &g->bad;

	buf_tsv(b, file, strlen(file));
	tsv_u(b, off);
	buf_add(b, "\t", 1);
	buf_tsv(b, why, strlen(why));
	buf_add(b, "\t", 1);
	buf_tsv(b, msg, len > BAD_KEEP ? BAD_KEEP : len);
	buf_add(b, "\n", 1);
	g->bad_messages++;
	g->rows++;
}

static void data_rows(struct ingest *g, const char *file, uint64_t off,
		      const char *msg, size_t len)
{
	static const char *items[ITEMS_MAX];
	static size_t lens[ITEMS_MAX];
	char why[PARSE_WHY_MAX], line[PARSE_LINE_MAX];
	struct frame_hdr h;
	unsigned int i;

	if (!frame_parse_data(msg, len, &h, items, lens, ITEMS_MAX, why)) {
		bad_row(g, file, off, why, msg, len);
		return;
	}
	/* the items first: a defective one makes the whole message bad */
	for (i = 0; i < h.n; i++) {
		size_t n;
		int role;

		if (frame_item_line(items[i], lens[i], line, &n, &role) < 0) {
			snprintf(why, sizeof(why), "item %u is not a record's", i + 1);
			bad_row(g, file, off, why, msg, len);
			return;
		}
	}
	for (i = 0; i < h.n; i++) {
		size_t n;
		int role, kind;

		kind = frame_item_line(items[i], lens[i], line, &n, &role);
		record_row(g, &h, h.seq + i, line, n, kind, role);
	}
	g->rows += h.n;
}

static void ctl_row(struct ingest *g, const char *file, uint64_t off,
		    const char *msg, size_t len)
{
	char why[PARSE_WHY_MAX];
	struct frame_ctl c;
	unsigned int i;

	if (!frame_parse_ctl(msg, len, &c, why)) {
		bad_row(g, file, off, why, msg, len);
		return;
	}
	buf_tsv(&g->ctl, c.host, strlen(c.host));
	tsv_u(&g->ctl, c.epoch);
	tsv_u(&g->ctl, c.ctl_seq);
	for (i = 0; i < CTL_NFIELDS; i++)
		tsv_u(&g->ctl, c.v[i]);
	buf_add(&g->ctl, "\n", 1);
	g->controls++;
	g->rows++;
}

static void message(struct ingest *g, const char *file, uint64_t off,
		    const char *msg, size_t len)
{
	g->messages++;
	if (!g->first_us)
		g->first_us = mono_us();
	switch (frame_kind(msg, len)) {
	case 'D': data_rows(g, file, off, msg, len); break;
	case 'C': ctl_row(g, file, off, msg, len); break;
	default: bad_row(g, file, off, "not a message of tcprt ship", msg, len);
	}
}

/* ---- loading --------------------------------------------------------------- */

static void reset_batch(struct ingest *g)
{
	size_t i;

	g->rec.len = g->ctl.len = g->bad.len = 0;
	g->rows = 0;
	g->first_us = 0;
	for (i = 0; i < g->nfiles; i++)
		g->files[i].read = g->files[i].done;
}

static bool insert(struct ingest *g, const char *table, const char *cols,
		   const struct buf *rows)
{
	char sql[1024];

	if (!rows->len)
		return true;
	snprintf(sql, sizeof(sql), "INSERT INTO tcprt.%s (%s) FORMAT TabSeparated",
		 table, cols);
	return ch_insert(&g->ch, sql, rows);
}

/*
 * The controls table's columns: a control message's fields, named as on
 * the wire (frame.c's ctl_field_name; fleet/schema.sql, checked by
 * tests/test_frame).
 */
static void ctl_cols(struct buf *b)
{
	size_t i;

	buf_printf(b, "host, epoch, ctl_seq");
	for (i = 0; i < CTL_NFIELDS; i++)
		buf_printf(b, ", %s", ctl_field_name[i]);
}

/* Load the batch; true once ClickHouse acknowledged all of it. */
static bool load_batch(struct ingest *g)
{
	struct buf cols = { 0 };
	bool ok;
	size_t i;

	if (!g->rows)
		goto done;
	ctl_cols(&cols);
	ok = insert(g, "records", store_records_cols, &g->rec) &&
	     insert(g, "controls", cols.p, &g->ctl) &&
	     insert(g, "bad_messages", "file, offset, reason, message", &g->bad);
	buf_free(&cols);
	if (!ok)
		return false;
	g->batches++;
done:
	for (i = 0; i < g->nfiles; i++)
		g->files[i].done = g->files[i].read;
	save_state(g);
	reset_batch(g);
	return true;
}

/* Load, retrying while the store is unreachable; false on stop or on an
 * error retrying cannot mend. */
static bool commit(struct ingest *g)
{
	uint64_t wait = USEC_PER_SEC;
	bool said = false;

	while (!load_batch(g)) {
		if (!g->ch.unreachable) {
			warnx_("ingest: %s", g->ch.err);
			return false;
		}
		if (!said)
			warnx_("ingest: %s; holding %llu rows and retrying",
			       g->ch.err, (unsigned long long)g->rows);
		said = true;
		g->retries++;
		if (stop_requested)
			return false;
		sleep_us(wait);
		wait = wait * 2 > RETRY_MAX_US ? RETRY_MAX_US : wait * 2;
	}
	if (said)
		warnx_("ingest: ClickHouse takes rows again; the held batch is loaded");
	return true;
}

/* ---- the spool ----------------------------------------------------------------- */

static bool spool_name(const char *name)
{
	size_t n = strlen(name), s = strlen(SPOOL_SUFFIX);

	return name[0] != '.' && n > s && !strcmp(name + n - s, SPOOL_SUFFIX) &&
	       n < 256;
}

static void scan(struct ingest *g)
{
	DIR *d = opendir(g->spool);
	struct dirent *e;
	size_t i;

	if (!d)
		die(EXIT_RUNTIME, "ingest: %s: %s", g->spool, strerror(errno));
	for (i = 0; i < g->nfiles; i++)
		g->files[i].seen = false;
	while ((e = readdir(d)))
		if (spool_name(e->d_name))
			file_of(g, e->d_name)->seen = true;
	closedir(d);
	qsort(g->files, g->nfiles, sizeof(*g->files), file_cmp);
}

/*
 * Read @f's whole lines from its read offset into the batch, stopping
 * when the batch is full; returns true when it stopped for that.
 */
static bool read_file(struct ingest *g, struct spool_file *f)
{
	static char chunk[1 << 20];
	char path[4352];
	size_t have = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", g->spool, f->name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT)
			warnx_("ingest: %s: %s", path, strerror(errno));
		return false;
	}
	for (;;) {
		ssize_t n = pread(fd, chunk + have, sizeof(chunk) - have,
				  (off_t)(f->read + have));
		size_t pos = 0, end;

		if (n <= 0) {
			if (n < 0)
				warnx_("ingest: %s: %s", path, strerror(errno));
			break;
		}
		end = have + (size_t)n;
		for (;;) {
			char *nl = memchr(chunk + pos, '\n', end - pos);

			if (!nl)
				break;
			message(g, f->name, f->read + pos, chunk + pos,
				(size_t)(nl - chunk) - pos);
			pos = (size_t)(nl - chunk) + 1;
			if (g->rows >= g->batch_rows) {
				f->read += pos;
				close(fd);
				return true;
			}
		}
		f->read += pos;
		have = end - pos;
		memmove(chunk, chunk + pos, have);
		if (have == sizeof(chunk)) {
			/* a line longer than the chunk: one bad message */
			bad_row(g, f->name, f->read, "line longer than 1 MiB",
				chunk, have);
			f->read += have;
			have = 0;
		}
	}
	close(fd);
	return false;
}

/* Remove the files loaded to their end, older than the newest, idle. */
static void retire(struct ingest *g)
{
	uint64_t now = now_us();
	bool changed = false;
	size_t i, w = 0;

	for (i = 0; i < g->nfiles; i++) {
		struct spool_file *f = &g->files[i];
		char path[4352];
		struct stat st;
		bool drop = false;

		snprintf(path, sizeof(path), "%s/%s", g->spool, f->name);
		if (!f->seen) {
			drop = true;	/* gone: someone else removed it */
		} else if (!g->keep && i + 1 < g->nfiles && !stat(path, &st) &&
			   f->done == (uint64_t)st.st_size &&
			   (uint64_t)st.st_mtime * USEC_PER_SEC + g->retire_us < now) {
			if (unlink(path) == 0) {
				drop = true;
				g->retired++;
			}
		}
		if (drop) {
			free(f->name);
			changed = true;
			continue;
		}
		g->files[w++] = *f;
	}
	g->nfiles = w;
	if (changed)
		save_state(g);
}

/* One pass over the spool; true when it read something. */
static bool pass(struct ingest *g)
{
	uint64_t before = g->messages;
	size_t i;

	scan(g);
	for (i = 0; i < g->nfiles && !stop_requested; i++) {
		if (!g->files[i].seen)
			continue;
		while (read_file(g, &g->files[i])) {
			if (!commit(g)) {
				g->failed = !stop_requested;
				return false;
			}
		}
	}
	return g->messages != before;
}

static void report(const struct ingest *g)
{
	warnx_("ingest: %llu messages: %llu record rows (%llu of malformed lines), %llu control rows, %llu bad messages; %llu batches loaded, %llu retries, %llu files retired",
	       (unsigned long long)g->messages, (unsigned long long)g->records,
	       (unsigned long long)g->invalid, (unsigned long long)g->controls,
	       (unsigned long long)g->bad_messages,
	       (unsigned long long)g->batches, (unsigned long long)g->retries,
	       (unsigned long long)g->retired);
}

int cmd_ingest(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "spool", required_argument, NULL, 's' },
		{ "url", required_argument, NULL, 'u' },
		{ "batch", required_argument, NULL, 'b' },
		{ "interval", required_argument, NULL, 'i' },
		{ "state", required_argument, NULL, 'S' },
		{ "retire", required_argument, NULL, 'r' },
		{ "keep", no_argument, NULL, 'k' },
		{ "once", no_argument, NULL, '1' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct ingest g;
	const char *url = CH_DEFAULT_URL, *state = NULL;
	bool once = false, ok = true;
	struct stat st;
	uint64_t v;
	int o;

	g.batch_rows = DEFAULT_BATCH;
	g.interval_us = DEFAULT_INTERVAL_US;
	g.retire_us = DEFAULT_RETIRE_US;
	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":s:u:b:i:S:r:k1h", opts, NULL)) != -1) {
		switch (o) {
		case 's': g.spool = optarg; break;
		case 'u': url = optarg; break;
		case 'b':
			if (!parse_u64(optarg, strlen(optarg), &v) || v < 1 ||
			    v > 10000000)
				usage_error("ingest", "--batch: '%s' is not a number of rows (1..10000000)",
					    optarg);
			g.batch_rows = v;
			break;
		case 'i': g.interval_us = opt_seconds("ingest", "--interval", optarg, false); break;
		case 'S': state = optarg; break;
		case 'r': g.retire_us = opt_seconds("ingest", "--retire", optarg, true); break;
		case 'k': g.keep = true; break;
		case '1': once = true; break;
		case 'h': fputs(help, stdout); return EXIT_OK;
		default: bad_option("ingest", o, argv);
		}
	}
	if (optind < argc)
		usage_error("ingest", "unexpected argument '%s'", argv[optind]);
	if (!g.spool)
		usage_error("ingest", "--spool DIR is required (the central rsyslog's spool folder)");
	if (stat(g.spool, &st))
		die(EXIT_RUNTIME, "ingest: --spool %s: %s", g.spool, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		die(EXIT_RUNTIME, "ingest: --spool %s: not a folder", g.spool);
	if (state) {
		g.state = strdup(state);
	} else {
		g.state = xcalloc(strlen(g.spool) + sizeof(STATE_NAME) + 2, 1);
		sprintf(g.state, "%s/%s", g.spool, STATE_NAME);
	}

	signals_init();
	if (!ch_open(&g.ch, url, 120))
		die(EXIT_RUNTIME, "ingest: %s", g.ch.err);
	if (!ch_check_schema(&g.ch, STORE_VERSION)) {
		warnx_("ingest: %s", g.ch.err);
		ch_close(&g.ch);
		return EXIT_RUNTIME;
	}
	lock_state(&g);
	load_state(&g);
	reset_batch(&g);
	while (ok && !stop_requested) {
		bool got = pass(&g);

		if (stop_requested || g.failed) {
			ok = !g.failed;
			break;
		}
		if (g.rows && (!got || once ||
			       mono_us() - g.first_us >= g.interval_us))
			ok = commit(&g);
		if (ok)
			retire(&g);
		if (once && !got && !g.rows)
			break;
		if (!got)
			sleep_us(DEFAULT_POLL_US);
	}
	/* what was read but not loaded is read again at the next start */
	report(&g);
	ch_close(&g.ch);
	return ok ? EXIT_OK : EXIT_RUNTIME;
}
