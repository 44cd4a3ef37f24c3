// SPDX-License-Identifier: GPL-2.0
/*
 * tcprt ingest: the central rsyslog's spool into ClickHouse (docs/fleet.md).
 *
 * The central rsyslog writes every message it receives as one line of a
 * file of the spool, named by the hour (tcprt-central.conf).  The loader
 * reads the files in name order from where it last stopped, turns each
 * message into rows (frame.h: records, controls, the logs' accounts;
 * anything else into bad_messages), and loads them in batches.  Only once ClickHouse has
 * acknowledged every insert of a batch does it write, atomically, the
 * offsets up to which the batch read (the state file): killed at any
 * point, it starts again from the last acknowledged batch.  Such a batch
 * may be loaded twice; its rows have the same (host, epoch, seq) and count
 * once (schema.sql).  A store that fails as a whole (unreachable,
 * read-only, credentials refused...) holds the batch back: it is retried,
 * never skipped.  A batch ClickHouse refuses for a reason of its rows is
 * split until the refused rows are alone (load.h): they go to
 * bad_messages with ClickHouse's error, the rest is loaded.  A file read
 * to its end, untouched for --retire seconds and loaded to its end that
 * long ago (this run's clock: a restart keeps it --retire longer) is
 * removed unless the spool's writer holds it (its lock, cmd_spool.c).
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
#include <time.h>
#include <unistd.h>

#include "clickhouse.h"
#include "cmd.h"
#include "frame.h"
#include "load.h"
#include "parse.h"
#include "series_line.h"
#include "sign.h"
#include "store.h"
#include "util.h"

static const char help[] =
"usage: tcprt ingest --spool DIR [--frame-master FILE | --unsigned] [--url URL]\n"
"                    [--user NAME] [--password-file FILE] [--cacert FILE]\n"
"                    [--plaintext] [--batch ROWS] [--interval SECONDS]\n"
"                    [--state FILE] [--retire SECONDS | --keep] [--once]\n"
"                    [--max-age AGE]\n"
"\n"
"Load the messages the central rsyslog writes to DIR (files *.frames, see\n"
"share/tcprt/fleet/tcprt-central.conf) into ClickHouse: records (D1, D2),\n"
"control messages (C1), the accounts of each log by the module's numbers\n"
"(L1, table cpu_accounts), and the lines that are none of them, or whose\n"
"fields contradict each other (table bad_messages, with the reason); every\n"
"--interval (at most once a second), how far the spool is loaded (table\n"
"centrals, by which fleet gaps tells a stalled loader from ended epochs).\n"
"Runs until SIGINT/SIGTERM, or with --once until the files are loaded to\n"
"their end.  Restarts lose nothing and count nothing twice: the state file\n"
"keeps how far each file was loaded, written once ClickHouse acknowledged.\n"
"\n"
"  -s, --spool DIR      the central rsyslog's spool folder (required)\n"
CH_CONN_HELP
"  -b, --batch ROWS     rows per load, at most (default 100000)\n"
"  -i, --interval S     load what was read at least every S seconds\n"
"                       (default 1)\n"
"  -S, --state FILE     where the loaded offsets are kept (default\n"
"                       DIR/.tcprt-ingest.state)\n"
"  -r, --retire S       remove a file read to its end once the spool's\n"
"                       writer no longer holds it, it was not written\n"
"                       for S seconds and its load ended S seconds ago\n"
"                       (default 600: what ClickHouse acknowledged is on\n"
"                       its disk by then)\n"
"  -k, --keep           never remove a file\n"
"  -a, --max-age AGE    a record or series line whose time is more than\n"
"                       AGE before the hour it arrived in (the spool\n"
"                       file's), or more than a day after it, is stored\n"
"                       as malformed (30d, 12h, forever; default 30d,\n"
"                       the records' default retention)\n"
"  -1, --once           load what the files hold now, then stop\n"
"  -m, --frame-master F the master key every host's frame key derives\n"
"                       from (default /etc/tcprt/frame-master.key):\n"
"                       a message is stored only when signed by the\n"
"                       host it claims; others go to bad_messages\n"
"  -U, --unsigned       store what any sender claims, signed or not\n"
"  -h, --help           this text\n"
"\n"
"While ClickHouse is unreachable it says so once and retries, 1 to 30 s\n"
"apart, holding the batch.  It prints its counters on stderr at exit.\n";

#define SPOOL_SUFFIX		".frames"
#define DEFAULT_MASTER		"/etc/tcprt/frame-master.key"
#define STATE_NAME		".tcprt-ingest.state"
#define DEFAULT_BATCH		100000
#define DEFAULT_INTERVAL_US	USEC_PER_SEC
#define DEFAULT_RETIRE_US	(600 * USEC_PER_SEC)
#define DEFAULT_MAX_AGE_S	(30 * 86400)
#define MSG_MAX			65536	/* longer lines are bad messages */
#define BAD_KEEP		4096	/* bytes of a bad message kept */
#define RETRY_MAX_US		(30 * USEC_PER_SEC)
#define BEAT_MIN_US		USEC_PER_SEC	/* tcprt.centrals rows, apart */
#define ITEMS_MAX		(FRAME_MAX / 2)

struct spool_file {
	char *name;
	uint64_t done;		/* loaded and acknowledged up to here */
	uint64_t read;		/* read into the batch up to here */
	bool seen;		/* in the folder at the last scan */
	uint64_t ended_us;	/* when it was first seen loaded to its end
				 * (this run's clock; 0: not yet) */
	bool refused;		/* not a regular file: said once, skipped */
};

struct ingest {
	char *spool, *state;
	/*
	 * What bad_messages' file column starts with: "<host>:<spool>/",
	 * this central's name and its spool's absolute path, so that two
	 * centrals' files of the same name (hour) keep their own rows.
	 */
	char *where;
	struct ch ch;
	uint64_t batch_rows, interval_us, retire_us;
	bool keep;
	uint64_t max_age_s;	/* --max-age; 0: forever */
	/* the message's times (store.h), and lines refused for theirs */
	struct store_span span;

	/* signatures (sign.h): checked with the master unless unsigned_ok */
	bool unsigned_ok;
	unsigned char master[SIGN_KEY_LEN];
	char key_host[HOST_ID_MAX + 1];		/* the last key derived */
	unsigned char key[SIGN_KEY_LEN];

	struct spool_file *files;
	size_t nfiles;

	/* the batch being built: its rows, the files they came from */
	struct rows rec, ctl, cpu, bad;
	char **bfiles;
	uint32_t nbfiles;
	uint64_t rows, first_us;
	uint64_t load_refused;	/* rows of this load refused, so far */
	uint64_t load_lost;	/* rows of this load's bad_messages refused */

	bool once;		/* --once */
	bool failed;		/* with --once, a load failed: exit 1 */

	/*
	 * How far the spool is loaded (tcprt.centrals, schema 6; beat_start()).
	 * centrals: the store has the table and controls' central column.
	 */
	bool centrals;
	const char *ctl_same;	/* controls' columns but central: a copy's */
	uint64_t pass_at;	/* the store's clock before a pass; 0: none */
	uint64_t loaded_to;	/* the last written: all the spool held then */
	uint64_t beat_due_us;	/* mono_us() of the next row */
	bool beat_failing;	/* said once until a row is written again */

	/* counters since start */
	uint64_t messages, records, invalid, controls, accounts, bad_messages;
	uint64_t ctl_copies;	/* control rows the store had: not loaded */
	uint64_t batches;
	uint64_t unauthenticated;	/* messages refused: not their host's */
	uint64_t torn;		/* messages cut short, the next glued on */
	uint64_t retries, retired;
	uint64_t refused;	/* rows ClickHouse refused, kept in bad_messages */
	uint64_t beats, beats_failed;	/* tcprt.centrals rows written, not */
	struct rows_stats load;
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
	int fd = open(g->state, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "r");
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
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	f = fd < 0 ? NULL : fdopen(fd, "w");
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
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
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

/* The batch's number of spool file @name (the files come one by one). */
static uint32_t batch_file(struct ingest *g, const char *name)
{
	if (g->nbfiles && !strcmp(g->bfiles[g->nbfiles - 1], name))
		return g->nbfiles - 1;
	g->bfiles = xrealloc(g->bfiles, g->nbfiles + 1, sizeof(*g->bfiles));
	g->bfiles[g->nbfiles] = strdup(name);
	if (!g->bfiles[g->nbfiles])
		die(EXIT_RUNTIME, "out of memory");
	return g->nbfiles++;
}

static void record_row(struct ingest *g, const char *file, uint64_t off,
		       const struct frame_hdr *h, uint64_t seq,
		       const char *line, size_t len, int kind, int role,
		       uint64_t *sec)
{
	g->records++;
	rows_begin(&g->rec, batch_file(g, file), off);
	if (!store_record_row(&g->rec.b, h, seq, line, len, kind, role,
			      &g->span, sec))
		g->invalid++;
}

/* What a bad message stands for: the claimed host, epoch and number, and
 * how many records of it are lost (schema 3's columns). */
struct bad_of {
	const char *host;
	size_t host_len;
	uint64_t epoch, seq, records;
};

static void bad_row(struct ingest *g, const char *file, uint64_t off,
		    const char *why, const char *msg, size_t len,
		    const struct bad_of *of)
{
	static const struct bad_of none = { .host = "" };
	struct buf *b = &g->bad.b;

	if (!of)
		of = &none;
	rows_begin(&g->bad, batch_file(g, file), off);
	buf_tsv(b, g->where, strlen(g->where));
	buf_tsv(b, file, strlen(file));
	tsv_u(b, off);
	buf_add(b, "\t", 1);
	buf_tsv(b, why, strlen(why));
	buf_add(b, "\t", 1);
	buf_tsv(b, msg, len > BAD_KEEP ? BAD_KEEP : len);
	buf_add(b, "\t", 1);
	buf_tsv(b, of->host, of->host_len);
	tsv_u(b, of->epoch);
	tsv_u(b, of->seq);
	tsv_u(b, of->records);
	buf_add(b, "\n", 1);
}

static void bad_message(struct ingest *g, const char *file, uint64_t off,
			const char *why, const char *msg, size_t len)
{
	bad_row(g, file, off, why, msg, len, NULL);
	g->bad_messages++;
	g->rows++;
}

/*
 * What a spool line is, found without a side effect (so that a torn line's
 * parts can be tried): a message of its claimed host's (signed with its
 * key, unless --unsigned), parsed, or why not.
 */
enum verdict { MSG_OK, MSG_BAD, MSG_UNAUTHENTIC };

struct check {
	enum verdict v;
	char why[PARSE_WHY_MAX + 160];
	char host[HOST_ID_MAX + 1];	/* MSG_UNAUTHENTIC: the host claimed */
	bool bad_mac;			/* MSG_UNAUTHENTIC: signed, wrongly */
	const char *body;		/* the message past its signature */
	size_t blen;
	char kind;			/* 'D', 'C', 'L' */
	struct frame_hdr h;		/* D */
	struct frame_ctl c;		/* C */
	struct frame_cpu l;		/* L */
};

/* D's items: the last check's (one message at a time) */
static const char *items[ITEMS_MAX];
static size_t lens[ITEMS_MAX];

static void check_signature(struct ingest *g, const char *mac, bool is_signed,
			    struct check *c)
{
	if (g->unsigned_ok || !sign_claimed_host(c->body, c->blen, c->host))
		return;		/* unparsable: the parse says why */
	if (!is_signed) {
		c->v = MSG_UNAUTHENTIC;
		snprintf(c->why, sizeof(c->why), "unauthenticated: unsigned message claiming host %s (ingest checks signatures)",
			 c->host);
		return;
	}
	if (strcmp(c->host, g->key_host)) {
		sign_derive(g->master, c->host, g->key);
		strcpy(g->key_host, c->host);
	}
	if (!sign_check(g->key, mac, c->body, c->blen)) {
		c->v = MSG_UNAUTHENTIC;
		c->bad_mac = true;
		snprintf(c->why, sizeof(c->why), "unauthenticated: not signed with the key of host %s",
			 c->host);
	}
}

static void check_message(struct ingest *g, const char *raw, size_t len,
			  struct check *c)
{
	char line[PARSE_LINE_MAX], why[PARSE_WHY_MAX];
	const char *mac = NULL;
	bool is_signed = sign_split(raw, len, &mac, &c->body, &c->blen);
	unsigned int i;

	c->v = MSG_OK;
	c->bad_mac = false;
	if (!is_signed) {
		c->body = raw;
		c->blen = len;
	}
	check_signature(g, mac, is_signed, c);
	if (c->v != MSG_OK)
		return;
	c->kind = frame_kind(c->body, c->blen);
	c->v = MSG_BAD;
	if (c->kind == 'C') {
		if (!frame_parse_ctl(c->body, c->blen, &c->c, why)) {
			snprintf(c->why, sizeof(c->why), "%s", why);
			return;
		}
	} else if (c->kind == 'L') {
		if (!frame_parse_cpu(c->body, c->blen, &c->l, why)) {
			snprintf(c->why, sizeof(c->why), "L1: %s", why);
			return;
		}
	} else if (c->kind == 'D') {
		if (!frame_parse_data(c->body, c->blen, &c->h, items, lens,
				      ITEMS_MAX, why)) {
			snprintf(c->why, sizeof(c->why), "%s", why);
			return;
		}
		/* a defective item makes the whole message bad */
		for (i = 0; i < c->h.n; i++) {
			size_t n;
			int role;

			if (frame_item_line(items[i], lens[i], line, &n, &role) < 0) {
				snprintf(c->why, sizeof(c->why), "item %u is not a record's",
					 i + 1);
				return;
			}
		}
	} else {
		snprintf(c->why, sizeof(c->why), "not a message of tcprt ship");
		return;
	}
	c->v = MSG_OK;
}

/*
 * A line that is no message may be a message cut short (a writer that
 * stopped mid-line) with the next one glued on: where a whole message
 * starts further in, or 0.  Only a line that fails to parse, or whose
 * signature fails, is tried (an unsigned message is whole), at its first
 * RESYNC_TRIES places that look like a message's start: a crafted line
 * costs a few checks, not one per byte.
 */
#define RESYNC_TRIES	8

static size_t next_start(struct ingest *g, const char *raw, size_t len,
			 const struct check *failed)
{
	unsigned int tries = 0;
	struct check c;
	size_t i;

	if (failed->v == MSG_UNAUTHENTIC && !failed->bad_mac)
		return 0;
	for (i = 1; i + 3 <= len && tries < RESYNC_TRIES; i++) {
		if (!frame_kind(raw + i, len - i) &&
		    (raw[i] != 'S' || raw[i + 1] != '1' || raw[i + 2] != ' '))
			continue;
		tries++;
		check_message(g, raw + i, len - i, &c);
		if (c.v == MSG_OK)
			return i;
	}
	return 0;
}

/*
 * The hour a spool file's name says (YYYYMMDDHH.frames: the central's UTC
 * hour when it wrote the file), as Unix seconds; the clock's now for
 * another name.  The time of a message that carries none of its own.
 */
static uint64_t file_hour_sec(const char *file)
{
	struct tm tm = { 0 };
	unsigned int y, mo, d, h;
	char rest[16];

	if (sscanf(file, "%4u%2u%2u%2u%15s", &y, &mo, &d, &h, rest) != 5 ||
	    strcmp(rest, SPOOL_SUFFIX) || y < 1970 || mo < 1 || mo > 12 ||
	    d < 1 || d > 31 || h > 23)
		return now_us() / USEC_PER_SEC;
	tm.tm_year = (int)y - 1900;
	tm.tm_mon = (int)mo - 1;
	tm.tm_mday = (int)d;
	tm.tm_hour = (int)h;
	return (uint64_t)timegm(&tm);
}

/*
 * The times a message in spool file @file may claim (store.h): from the
 * hour the file's name says, or this hour if that one is still to come (a
 * central whose clock ran ahead).
 */
static void message_span(struct ingest *g, const char *file)
{
	uint64_t arrival = file_hour_sec(file);
	uint64_t hour = now_us() / USEC_PER_SEC / 3600 * 3600;

	store_span_of(&g->span, arrival < hour ? arrival : hour, g->max_age_s);
}

/*
 * The time of the first record of message @c at or after item @from, or
 * @none: a malformed line's row takes the time of the record before it in
 * its message, or after it, so that it lives as long as they do
 * (retention drops whole days) and every copy of the message gives it the
 * same.  A message with no record at all takes its spool file's hour
 * (@none): not time 0, which the window of every account misses and the
 * first expire drops.  A record whose time the span refuses is none.
 */
static uint64_t next_record_sec(const struct ingest *g, const struct check *c,
				unsigned int from, uint64_t none)
{
	char line[PARSE_LINE_MAX], why[PARSE_WHY_MAX];
	struct record r;
	unsigned int i;

	for (i = from; i < c->h.n; i++) {
		size_t n;
		int role;

		if (frame_item_line(items[i], lens[i], line, &n, &role) == 1 &&
		    parse_log_line(line, n, &r, why) &&
		    store_span_time(&g->span, r.sec) == r.sec)
			return r.sec;
	}
	return none;
}

/*
 * A D3's series lines.  A malformed one takes the time of the series line
 * before it in its message, or of the first one, or, with none, its spool
 * file's hour (retention, as above).
 */
static void series_rows(struct ingest *g, const char *file, uint64_t off,
			const struct check *c)
{
	char line[PARSE_LINE_MAX + 1];
	uint64_t sec = 0;
	unsigned int i;

	message_span(g, file);
	for (i = 0; i < c->h.n && !sec; i++) {
		struct series_row r;
		unsigned int ext = 0;
		size_t n;
		int role;

		if (frame_item_line(items[i], lens[i], line, &n, &role) == 1) {
			line[n] = '\0';
			if (series_line_parse(line, &r, &ext) &&
			    store_span_time(&g->span, r.t_us / USEC_PER_SEC) ==
			    r.t_us / USEC_PER_SEC)
				sec = r.t_us / USEC_PER_SEC;
		}
	}
	if (!sec)
		sec = file_hour_sec(file);
	for (i = 0; i < c->h.n; i++) {
		size_t n;
		int role, kind;

		kind = frame_item_line(items[i], lens[i], line, &n, &role);
		g->records++;
		rows_begin(&g->rec, batch_file(g, file),
			   off + (uint64_t)(items[i] - c->body));
		if (!store_series_row(&g->rec.b, &c->h, c->h.seq + i, line, n,
				      kind, &g->span, &sec))
			g->invalid++;
	}
	g->rows += c->h.n;
}

static void data_rows(struct ingest *g, const char *file, uint64_t off,
		      const struct check *c)
{
	char line[PARSE_LINE_MAX];
	uint64_t sec = UINT64_MAX;	/* no record yet */
	uint64_t outside;
	unsigned int i;

	message_span(g, file);
	for (i = 0; i < c->h.n; i++) {
		size_t n, at = g->rec.b.len;
		int role, kind;

		kind = frame_item_line(items[i], lens[i], line, &n, &role);
		if (sec == UINT64_MAX && kind != 1)
			sec = next_record_sec(g, c, i + 1, file_hour_sec(file));
		/* the item's own place: a row refused alone is found by it */
		record_row(g, file, off + (uint64_t)(items[i] - c->body), &c->h,
			   c->h.seq + i, line, n, kind, role, &sec);
		if (sec == UINT64_MAX) {
			/* a record line that did not parse, before any record
			 * of its message: its row again, with their time */
			sec = next_record_sec(g, c, i + 1, file_hour_sec(file));
			g->rec.b.len = at;
			/* counted once, above */
			outside = g->span.outside;
			store_record_row(&g->rec.b, &c->h, c->h.seq + i, line, n,
					 kind, role, &g->span, &sec);
			g->span.outside = outside;
		}
	}
	g->rows += c->h.n;
}

static void ctl_row(struct ingest *g, const char *file, uint64_t off,
		    const struct frame_ctl *c)
{
	unsigned int i;

	rows_begin(&g->ctl, batch_file(g, file), off);
	buf_tsv(&g->ctl.b, c->host, strlen(c->host));
	tsv_u(&g->ctl.b, c->epoch);
	tsv_u(&g->ctl.b, c->ctl_seq);
	for (i = 0; i < CTL_NFIELDS; i++)
		tsv_u(&g->ctl.b, c->v[i]);
	tsv_u(&g->ctl.b, c->sent_known);
	if (g->centrals) {
		buf_add(&g->ctl.b, "\t", 1);
		buf_tsv(&g->ctl.b, g->where, strlen(g->where));
	}
	buf_add(&g->ctl.b, "\n", 1);
	g->controls++;
	g->rows++;
}

static void cpu_row(struct ingest *g, const char *file, uint64_t off,
		    const struct frame_cpu *c)
{
	struct buf *b = &g->cpu.b;
	unsigned int i;

	rows_begin(&g->cpu, batch_file(g, file), off);
	buf_tsv(b, c->host, strlen(c->host));
	tsv_u(b, c->epoch);
	tsv_u(b, c->ctl_seq);
	tsv_u(b, c->load_id);
	buf_printf(b, "\t%d", c->cpu);
	for (i = 0; i < CPU_NFIELDS; i++)
		tsv_u(b, c->v[i]);
	buf_add(b, "\n", 1);
	g->accounts++;
	g->rows++;
}

/* Refused as not its claimed host's: kept, counted for that host id. */
static void unauthenticated(struct ingest *g, const char *file, uint64_t off,
			    const char *msg, size_t len, const struct check *c)
{
	struct bad_of of = { .host = c->host, .host_len = strlen(c->host) };

	bad_row(g, file, off, c->why, msg, len, &of);
	g->unauthenticated++;
	g->bad_messages++;
	g->rows++;
}

static void message(struct ingest *g, const char *file, uint64_t off,
		    const char *raw, size_t rlen)
{
	struct check c;
	size_t at;

	g->messages++;
	if (!g->first_us)
		g->first_us = mono_us();
	check_message(g, raw, rlen, &c);
	if (c.v != MSG_OK && (at = next_start(g, raw, rlen, &c))) {
		/* the torn start is kept; the message after it is whole */
		bad_message(g, file, off, "torn: the start of a message cut short, then the next message",
			    raw, at);
		g->torn++;
		message(g, file, off + at, raw + at, rlen - at);
		return;
	}
	switch (c.v) {
	case MSG_UNAUTHENTIC:
		unauthenticated(g, file, off, raw, rlen, &c);
		return;
	case MSG_BAD:
		bad_message(g, file, off, c.why, raw, rlen);
		return;
	case MSG_OK:
		break;
	}
	/* the items' offsets in the file: past the signature */
	off += (uint64_t)(c.body - raw);
	if (c.kind == 'D' && c.h.width_us)
		series_rows(g, file, off, &c);
	else if (c.kind == 'D')
		data_rows(g, file, off, &c);
	else if (c.kind == 'L')
		cpu_row(g, file, off, &c.l);
	else
		ctl_row(g, file, off, &c.c);
}

/* ---- loading --------------------------------------------------------------- */

/*
 * The tables' columns.  The controls' and the cpu_accounts': a message's
 * fields, named as on the wire (frame.c's ctl_field_name and
 * cpu_field_name; fleet/schema.sql, checked by tests/test_frame).
 */
static void tables_init(struct ingest *g)
{
	static struct buf ctl, cpu;
	size_t i;

	buf_printf(&ctl, "host, epoch, ctl_seq");
	for (i = 0; i < CTL_NFIELDS; i++)
		buf_printf(&ctl, ", %s", ctl_field_name[i]);
	buf_printf(&ctl, ", sent_known");
	g->ctl_same = xstrdup(ctl.p);
	if (g->centrals)
		buf_printf(&ctl, ", central");
	buf_printf(&cpu, "host, epoch, ctl_seq, load_id, cpu");
	for (i = 0; i < CPU_NFIELDS; i++)
		buf_printf(&cpu, ", %s", cpu_field_name[i]);
	g->rec.table = "records";
	g->rec.cols = store_records_cols;
	g->ctl.table = "controls";
	g->ctl.cols = ctl.p;
	g->cpu.table = "cpu_accounts";
	g->cpu.cols = cpu.p;
	g->bad.table = "bad_messages";
	g->bad.cols = "file, offset, reason, message, host, epoch, seq, records";
}

static void reset_batch(struct ingest *g)
{
	size_t i;

	rows_truncate(&g->rec, 0);
	rows_truncate(&g->ctl, 0);
	rows_truncate(&g->cpu, 0);
	rows_truncate(&g->bad, 0);
	for (i = 0; i < g->nbfiles; i++)
		free(g->bfiles[i]);
	g->nbfiles = 0;
	g->rows = 0;
	g->first_us = 0;
	for (i = 0; i < g->nfiles; i++)
		g->files[i].read = g->files[i].done;
}

static bool insert_rows(void *ctx, const struct rows *t, size_t lo,
			size_t hi, const char **err, bool *wide)
{
	struct ingest *g = ctx;
	size_t end = hi < t->n ? t->src[hi].at : t->b.len;
	char sql[1024];

	snprintf(sql, sizeof(sql), "INSERT INTO tcprt.%s (%s) FORMAT TabSeparated",
		 t->table, t->cols);
	if (ch_insert(&g->ch, sql, t->b.p + t->src[lo].at, end - t->src[lo].at))
		return true;
	*err = g->ch.err;
	*wide = !ch_refused_data(&g->ch);
	return false;
}

/* The first @n TabSeparated fields of @row (@len bytes): their lengths. */
static bool row_fields(const char *row, size_t len, const char **f,
		       size_t *flen, size_t n)
{
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		const char *tab = memchr(row + o, '\t', len - o);

		if (!tab)
			return false;
		f[i] = row + o;
		flen[i] = (size_t)(tab - row) - o;
		o = (size_t)(tab - row) + 1;
	}
	return true;
}

/*
 * A row ClickHouse refused alone: into bad_messages, with its error and
 * the record (or control message) it is, so that fleet gaps counts it for
 * its epoch.  A row of bad_messages itself it refused has nowhere to go:
 * counted, and said.
 */
static void refused_row(void *ctx, const struct rows *t, size_t i,
			const char *err)
{
	struct ingest *g = ctx;
	const struct row_src *src = &t->src[i];
	struct bad_of of = { .host = "" };
	char why[1200], tmp[24];
	const char *row, *f[3];
	size_t len = rows_text(t, i, &row), flen[3];

	if (t == &g->bad) {
		/* nowhere else to keep it: the load is held (load_batch) */
		g->load_lost++;
		return;
	}
	/* records, controls and cpu_accounts all begin host, epoch, seq (or
	 * ctl_seq) */
	if (row_fields(row, len, f, flen, 3)) {
		of.host = f[0];
		of.host_len = flen[0];
		snprintf(tmp, sizeof(tmp), "%.*s", (int)(flen[1] > 20 ? 20 : flen[1]), f[1]);
		parse_u64(tmp, strlen(tmp), &of.epoch);
		snprintf(tmp, sizeof(tmp), "%.*s", (int)(flen[2] > 20 ? 20 : flen[2]), f[2]);
		parse_u64(tmp, strlen(tmp), &of.seq);
	}
	of.records = t == &g->rec;
	snprintf(why, sizeof(why), "refused by ClickHouse, alone, in tcprt.%s: %s",
		 t->table, err);
	bad_row(g, g->bfiles[src->file], src->off, why, row, len, &of);
	g->load_refused++;
}

/* Row @i of @t's first three fields, host, epoch and ctl_seq, as a key. */
static size_t ctl_key(const struct rows *t, size_t i, char *key, size_t len)
{
	const char *row, *f[3];
	size_t n = rows_text(t, i, &row), fl[3];

	if (!row_fields(row, n, f, fl, 3))
		return 0;
	n = (size_t)(f[2] + fl[2] - row);
	if (n >= len)
		return 0;
	memcpy(key, row, n);
	key[n] = '\0';
	return n;
}

/* qsort's and bsearch's order of strings, given their addresses. */
static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Control rows asked for in one query: a few tens of KB of SQL, well
 * under ClickHouse's max_query_size (256 KiB). */
#define CTL_ASK_MAX	500

/*
 * The rows the store has of the keys (host, epoch, ctl_seq) of control
 * rows [@lo, @hi), each as a row of the batch is written (TabSeparated,
 * the same columns but central), appended to @have, a line each.  False
 * when the store fails.
 */
static bool stored_controls(struct ingest *g, size_t lo, size_t hi,
			    struct buf *have)
{
	struct buf q = { 0 }, ans = { 0 };
	char key[HOST_ID_MAX + 64], *row, *f[3];
	const char *sep = "";
	size_t i, pos = 0;
	bool ok;

	buf_printf(&q, "SELECT %s FROM tcprt.controls WHERE (host, epoch, ctl_seq) IN (",
		   g->ctl_same);
	for (i = lo; i < hi; i++) {
		if (!ctl_key(&g->ctl, i, key, sizeof(key)) ||
		    ch_fields(key, f, 3) != 3)
			continue;
		/* a host id is letters, digits, '.', '_' and '-' (frame.c) */
		buf_printf(&q, "%s('%s', %s, %s)", sep, f[0], f[1], f[2]);
		if (!*sep)	/* twice: a set of one tuple would be read as the tuple */
			buf_printf(&q, ", ('%s', %s, %s)", f[0], f[1], f[2]);
		sep = ", ";
	}
	buf_printf(&q, ") FORMAT TabSeparated");
	ok = !*sep || ch_query(&g->ch, q.p, &ans);
	buf_free(&q);
	while (ok && (row = ch_row(&ans, &pos)))
		buf_printf(have, "%s\n", row);
	buf_free(&ans);
	return ok;
}

/*
 * The batch's control messages the store has already, every field alike:
 * dropped from the batch, counted.  A copy is a spool loaded again, a
 * second central's (tcprt-ship-mirror.conf), or a message replayed
 * (issue 65, F8): loaded again, its row's received - the arrival fleet
 * gaps judges an epoch alive or ended by - would be the copy's, and an
 * epoch that ended would seem to live again.  A message of the same
 * host, epoch and ctl_seq that says something else is loaded as before:
 * a successor closing a dead epoch from a state file a power loss rolled
 * back reuses a ctl_seq the dead ship sent.  Which central loaded it
 * does not count: the second central's copy is a copy.  False when the
 * store fails (the load held, tried again whole).
 */
static bool drop_stored_controls(struct ingest *g)
{
	struct rows keep = { .table = g->ctl.table, .cols = g->ctl.cols };
	struct buf have = { 0 };
	char **keys = NULL, *p, *k = NULL;
	size_t i, n, nkeys = 0;

	for (i = 0; i < g->ctl.n; i += CTL_ASK_MAX)
		if (!stored_controls(g, i, i + CTL_ASK_MAX < g->ctl.n ?
					   i + CTL_ASK_MAX : g->ctl.n, &have)) {
			buf_free(&have);
			return false;
		}
	if (!have.len) {
		buf_free(&have);
		return true;
	}
	/* the stored rows, sorted, each a string of its own */
	for (p = have.p; p < have.p + have.len; p = strchr(p, '\0') + 1) {
		keys = xrealloc(keys, nkeys + 1, sizeof(*keys));
		keys[nkeys++] = p;
		*strchr(p, '\n') = '\0';
	}
	qsort(keys, nkeys, sizeof(*keys), str_cmp);
	for (i = 0; i < g->ctl.n; i++) {
		const char *text, *tab;
		size_t same;

		n = rows_text(&g->ctl, i, &text);
		/* the row without its central, the last field */
		for (tab = text + n; g->centrals && tab > text && tab[-1] != '\t'; tab--)
			;
		same = g->centrals && tab > text ? (size_t)(tab - 1 - text) : n;
		k = xrealloc(k, same + 1, 1);
		memcpy(k, text, same);
		k[same] = '\0';
		if (bsearch(&k, keys, nkeys, sizeof(*keys), str_cmp)) {
			g->ctl_copies++;
			g->rows--;
			continue;
		}
		rows_begin(&keep, g->ctl.src[i].file, g->ctl.src[i].off);
		buf_add(&keep.b, text, n);
		buf_add(&keep.b, "\n", 1);
	}
	free(k);
	free(keys);
	buf_free(&have);
	rows_free(&g->ctl);
	g->ctl = keep;
	return true;
}

/* Load the batch; true once ClickHouse acknowledged all of it. */
static bool load_batch(struct ingest *g)
{
	size_t nbad = g->bad.n, nfiles = g->nbfiles;
	struct rows_stats st = { 0 };
	bool ok;
	size_t i;

	if (!g->rows)
		goto done;
	g->load_refused = g->load_lost = 0;
	/*
	 * bad_messages last: the rows refused in the others join it.  A row
	 * of it refused would be lost: the store's failure, the load held.
	 */
	ok = rows_load(&g->rec, insert_rows, refused_row, g, &st) &&
	     drop_stored_controls(g) &&
	     rows_load(&g->ctl, insert_rows, refused_row, g, &st) &&
	     rows_load(&g->cpu, insert_rows, refused_row, g, &st) &&
	     rows_load(&g->bad, insert_rows, refused_row, g, &st) &&
	     !g->load_lost;
	if (!ok) {
		/* sent again whole: the refused rows are found again */
		rows_truncate(&g->bad, nbad);
		while (g->nbfiles > nfiles)
			free(g->bfiles[--g->nbfiles]);
		return false;
	}
	g->batches++;
	g->refused += g->load_refused;
	g->load.inserts += st.inserts;
	g->load.split += st.split;
	g->load.refused += st.refused;
	if (g->load_refused)
		warnx_("ingest: ClickHouse refused %llu rows of a load of %llu (split %llu times to find them); they are in tcprt.bad_messages, the rest is loaded",
		       (unsigned long long)g->load_refused,
		       (unsigned long long)g->rows,
		       (unsigned long long)st.split);
done:
	for (i = 0; i < g->nfiles; i++)
		g->files[i].done = g->files[i].read;
	save_state(g);
	reset_batch(g);
	return true;
}

/*
 * Load, holding the batch while the store fails as a whole and retrying,
 * 1 to 30 s apart; each new kind of error (unreachable, or ClickHouse's
 * code) is said once.  False on stop, and with --once on a failure other
 * than the store unreachable (g->failed set; what was read is read again
 * at the next start).
 */
static bool commit(struct ingest *g)
{
	uint64_t wait = USEC_PER_SEC;
	bool said = false, said_unreachable = false;
	int said_code = 0;

	while (!load_batch(g)) {
		if (g->once && !g->ch.unreachable) {
			warnx_("ingest: %s", g->ch.err);
			g->failed = true;
			return false;
		}
		if (!said || said_code != g->ch.code ||
		    said_unreachable != g->ch.unreachable) {
			warnx_("ingest: %s; holding %llu rows and retrying",
			       g->ch.err, (unsigned long long)g->rows);
			said = true;
			said_code = g->ch.code;
			said_unreachable = g->ch.unreachable;
		}
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
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", g->spool, f->name);
	/* the central rsyslog's own files: never a link, a FIFO or a device
	 * someone else put there */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT && !f->refused)
			warnx_("ingest: %s: %s; not loaded", path,
			       errno == ELOOP ? "a symbolic link" : strerror(errno));
		f->refused = errno != ENOENT;
		return false;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		if (!f->refused)
			warnx_("ingest: %s: not a regular file; not loaded", path);
		f->refused = true;
		close(fd);
		return false;
	}
	/* shorter than what was loaded of it: a new file of that name (the
	 * writer made it again after its retirement, or an operator) */
	if ((uint64_t)st.st_size < f->read && f->read == f->done) {
		warnx_("ingest: %s: %llu bytes, %llu loaded before: a new file of that name, loaded from its start",
		       path, (unsigned long long)st.st_size, (unsigned long long)f->done);
		f->read = f->done = 0;
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
			bad_message(g, f->name, f->read, "line longer than 1 MiB",
				    chunk, have);
			f->read += have;
			have = 0;
		}
	}
	close(fd);
	return false;
}

/*
 * The file at @path, opened and locked for its removal: tcprt spool holds
 * a shared lock on the file it writes (cmd_spool.c), so an exclusive one
 * taken here means no writer has it - whatever its name says, the newest
 * or not.  -1: the writer has it, or it is not the file that was loaded
 * (@size bytes; replaced since).
 */
static int lock_for_removal(const char *path, uint64_t size)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX | LOCK_NB) || fstat(fd, &st) ||
	    (uint64_t)st.st_size != size) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Remove the files loaded to their end, idle, that no writer holds.  The
 * state file is written without them first, then they are removed: a
 * crash in between loads nothing twice and misses nothing, for a file of
 * the same name that the writer makes again later starts from its start.
 */
static void retire(struct ingest *g)
{
	uint64_t now = now_us();
	size_t i, w = 0, ngone = 0;
	struct {
		char *name;
		int fd;
	} *gone = NULL;

	for (i = 0; i < g->nfiles; i++) {
		struct spool_file *f = &g->files[i];
		char path[4352];
		struct stat st;
		int fd;

		snprintf(path, sizeof(path), "%s/%s", g->spool, f->name);
		if (!f->seen) {
			free(f->name);	/* gone: someone else removed it */
			continue;
		}
		if (!stat(path, &st) && f->done == (uint64_t)st.st_size) {
			if (!f->ended_us)
				f->ended_us = now;
		} else {
			f->ended_us = 0;	/* written since */
		}
		/*
		 * loaded to its end --retire ago, untouched as long: what
		 * ClickHouse acknowledged is on its disk by then (docs/fleet.md,
		 * "What a node's loss can cost"), and a file is never removed
		 * the moment its load ends, however old
		 */
		if (!g->keep && f->ended_us && f->ended_us + g->retire_us < now &&
		    (uint64_t)st.st_mtime * USEC_PER_SEC + g->retire_us < now &&
		    (fd = lock_for_removal(path, f->done)) >= 0) {
			gone = xrealloc(gone, ngone + 1, sizeof(*gone));
			gone[ngone].name = f->name;
			gone[ngone++].fd = fd;
			continue;
		}
		g->files[w++] = *f;
	}
	if (w == g->nfiles)
		return;
	g->nfiles = w;
	save_state(g);
	for (i = 0; i < ngone; i++) {
		char path[4352];

		snprintf(path, sizeof(path), "%s/%s", g->spool, gone[i].name);
		if (unlink(path) == 0)
			g->retired++;
		close(gone[i].fd);
		free(gone[i].name);
	}
	free(gone);
}

/*
 * The spool folder, stat()ed into @st.  Not there yet, a loader started
 * before the central's first frame (tcprt spool makes the folder then;
 * the package's tmpfiles.d at install) waits for it, said once; with
 * --once it is an error.  False: stopped while waiting.
 */
static bool spool_there(const char *spool, bool once, struct stat *st)
{
	bool said = false;

	while (stat(spool, st)) {
		if (errno != ENOENT || once)
			die(EXIT_RUNTIME, "ingest: --spool %s: %s", spool, strerror(errno));
		if (!said)
			warnx_("ingest: --spool %s does not exist yet: waiting for it (tcprt spool makes it at the central's first frame)",
			       spool);
		said = true;
		if (stop_requested)
			return false;
		sleep_us(DEFAULT_POLL_US);
	}
	if (said)
		warnx_("ingest: --spool %s is there", spool);
	return true;
}

/* "<host>:<spool's absolute path>/" (struct ingest's where). */
static char *spool_where(const char *spool)
{
	char host[256] = "", *abs = realpath(spool, NULL), *w;

	if (gethostname(host, sizeof(host) - 1))
		strcpy(host, "?");
	w = xcalloc(strlen(host) + strlen(abs ? abs : spool) + 3, 1);
	sprintf(w, "%s:%s/", host, abs ? abs : spool);
	free(abs);
	return w;
}

/* ---- how far the spool is loaded (tcprt.centrals) --------------------------------- */

/*
 * Schema 6: this central's row says how far its spool is loaded, so that
 * fleet gaps takes a loader stalled or behind for what it is, not for
 * epochs that ended (issue 65, F8).  From the last row of an earlier run;
 * 0 (never loaded whole) for a central new to the store.
 */
static void centrals_init(struct ingest *g)
{
	struct buf q = { 0 };
	const char *p;

	g->centrals = g->ch.version >= STORE_CENTRALS;
	if (!g->centrals) {
		warnx_("ingest: the store is of schema %d: until tcprt fleet init upgrades it to %d, fleet gaps takes a stalled loader's epochs for ended ones",
		       g->ch.version, STORE_CENTRALS);
		return;
	}
	/* where: a host name and a path, which may hold a quote */
	buf_printf(&q, "SELECT max(loaded_to) FROM tcprt.centrals WHERE central = '");
	for (p = g->where; *p; p++)
		buf_printf(&q, "%s%c", *p == '\'' || *p == '\\' ? "\\" : "", *p);
	buf_printf(&q, "' FORMAT TabSeparated");
	ch_query_u64(&g->ch, q.p, &g->loaded_to);	/* 0 when it fails */
	buf_free(&q);
}

/* Rows of tcprt.centrals: every --interval, at most one a second. */
static uint64_t beat_every(const struct ingest *g)
{
	return g->interval_us > BEAT_MIN_US ? g->interval_us : BEAT_MIN_US;
}

/*
 * Before a pass, at most every beat_every(): the store's clock.  Once what
 * the pass read is loaded (no row held), every message the spool held at
 * that time is in the store: beat_end() writes it as loaded_to.
 */
static void beat_start(struct ingest *g)
{
	if (g->centrals && !g->pass_at && mono_us() >= g->beat_due_us)
		ch_query_u64(&g->ch, "SELECT toUInt32(now()) FORMAT TabSeparated",
			     &g->pass_at);	/* 0 when it fails: none */
}

/*
 * After a pass and its load: this central's row, with loaded_to moved on
 * when nothing read is held; while rows stay held (a load every
 * --interval), one with loaded_to as it was once beat_every() is past
 * twice, so that a loader alive but behind says so.  A failure is said
 * once, counted, and tried again at the next interval.
 */
static void beat_end(struct ingest *g)
{
	struct buf row = { 0 };
	uint64_t now = mono_us();

	if (!g->centrals || now < g->beat_due_us)
		return;
	if (g->pass_at && !g->rows) {
		g->loaded_to = g->pass_at;
		g->pass_at = 0;
	} else if (now < g->beat_due_us + beat_every(g)) {
		return;
	}
	buf_tsv(&row, g->where, strlen(g->where));
	buf_printf(&row, "\t%llu\n", (unsigned long long)g->loaded_to);
	if (ch_insert(&g->ch, "INSERT INTO tcprt.centrals (central, loaded_to) FORMAT TabSeparated",
		      row.p, row.len)) {
		g->beats++;
		if (g->beat_failing)
			warnx_("ingest: tcprt.centrals written again");
		g->beat_failing = false;
	} else {
		g->beats_failed++;
		if (!g->beat_failing)
			warnx_("ingest: tcprt.centrals: %s; fleet gaps sees this central's loading stopped until a row is written",
			       g->ch.err);
		g->beat_failing = true;
	}
	buf_free(&row);
	g->beat_due_us = now + beat_every(g);
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
		while (read_file(g, &g->files[i]))
			if (!commit(g))
				return false;
	}
	return g->messages != before;
}

static void report(const struct ingest *g)
{
	warnx_("ingest: %llu messages: %llu record rows (%llu of malformed lines, %llu of them of times outside --max-age), %llu control rows (%llu of them the store had: not loaded again), %llu log account rows, %llu bad messages (%llu not signed by the host they claim, %llu torn); %llu batches loaded, %llu retries, %llu files retired; %llu rows refused by ClickHouse (in bad_messages; %llu loads split); %llu tcprt.centrals rows (%llu failed)",
	       (unsigned long long)g->messages, (unsigned long long)g->records,
	       (unsigned long long)g->invalid,
	       (unsigned long long)g->span.outside,
	       (unsigned long long)g->controls,
	       (unsigned long long)g->ctl_copies,
	       (unsigned long long)g->accounts,
	       (unsigned long long)g->bad_messages,
	       (unsigned long long)g->unauthenticated,
	       (unsigned long long)g->torn,
	       (unsigned long long)g->batches, (unsigned long long)g->retries,
	       (unsigned long long)g->retired,
	       (unsigned long long)g->refused,
	       (unsigned long long)g->load.split,
	       (unsigned long long)g->beats,
	       (unsigned long long)g->beats_failed);
}

/* The master secret every host's frame key derives from (sign.h). */
static void take_master(struct ingest *g, const char *path)
{
	char err[512];

	if (!sign_read_master(path ? path : DEFAULT_MASTER, g->master, err, sizeof(err)))
		die(EXIT_RUNTIME, "ingest: %s; the central stores a message under a host id only when that host signed it (make-certs.sh ca makes the master, docs/fleet.md), or, with --unsigned, whatever any sender claims",
		    err);
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
		{ "max-age", required_argument, NULL, 'a' },
		{ "once", no_argument, NULL, '1' },
		{ "frame-master", required_argument, NULL, 'm' },
		{ "unsigned", no_argument, NULL, 'U' },
		{ "help", no_argument, NULL, 'h' },
		CH_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	static struct ingest g;
	struct ch_conn store = { 0 };
	const char *state = NULL, *master = NULL;
	bool once = false, usage;
	struct stat st;
	uint64_t v;
	int o;

	g.batch_rows = DEFAULT_BATCH;
	g.interval_us = DEFAULT_INTERVAL_US;
	g.retire_us = DEFAULT_RETIRE_US;
	g.max_age_s = DEFAULT_MAX_AGE_S;
	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":s:u:b:i:S:r:ka:1m:Uh", opts, NULL)) != -1) {
		switch (o) {
		case 's': g.spool = optarg; break;
		case 'u': store.url = optarg; break;
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
		case 'a':
			if (!store_duration(optarg, &g.max_age_s))
				usage_error("ingest", "--max-age: '%s' is not a duration (30d, 12h, 90m, 3600s, or forever)",
					    optarg);
			break;
		case '1': once = g.once = true; break;
		case 'm': master = optarg; break;
		case 'U': g.unsigned_ok = true; break;
		case 'h': fputs(help, stdout); return EXIT_OK;
		default:
			if (!ch_conn_option(&store, o, optarg))
				bad_option("ingest", o, argv);
		}
	}
	if (optind < argc)
		usage_error("ingest", "unexpected argument '%s'", argv[optind]);
	if (!g.spool)
		usage_error("ingest", "--spool DIR is required (the central rsyslog's spool folder)");
	if (master && g.unsigned_ok)
		usage_error("ingest", "--frame-master and --unsigned: one or the other");
	signals_init();
	if (!spool_there(g.spool, once, &st))
		return EXIT_OK;
	if (!S_ISDIR(st.st_mode))
		die(EXIT_RUNTIME, "ingest: --spool %s: not a folder", g.spool);
	if (!g.unsigned_ok)
		take_master(&g, master);
	g.where = spool_where(g.spool);
	if (state) {
		g.state = strdup(state);
	} else {
		g.state = xcalloc(strlen(g.spool) + sizeof(STATE_NAME) + 2, 1);
		sprintf(g.state, "%s/%s", g.spool, STATE_NAME);
	}

	if (!ch_open(&g.ch, &store, 120, &usage)) {
		if (usage)
			usage_error("ingest", "%s", g.ch.err);
		die(EXIT_RUNTIME, "ingest: %s", g.ch.err);
	}
	/*
	 * schema 5 changed no column: a store of 4 is loaded as it is; and
	 * one of 4 or 5 without tcprt.centrals (centrals_init())
	 */
	if (!ch_check_schema(&g.ch, STORE_SEQ)) {
		warnx_("ingest: %s", g.ch.err);
		ch_close(&g.ch);
		return EXIT_RUNTIME;
	}
	lock_state(&g);
	load_state(&g);
	centrals_init(&g);
	tables_init(&g);
	reset_batch(&g);
	while (!stop_requested) {
		bool got;

		beat_start(&g);
		got = pass(&g);
		if (stop_requested || g.failed)
			break;
		if (g.rows && (!got || once ||
			       mono_us() - g.first_us >= g.interval_us) &&
		    !commit(&g))
			break;
		beat_end(&g);
		retire(&g);
		if (once && !got && !g.rows)
			break;
		if (!got)
			sleep_us(DEFAULT_POLL_US);
	}
	/* what was read but not loaded is read again at the next start */
	report(&g);
	ch_close(&g.ch);
	return g.failed ? EXIT_RUNTIME : EXIT_OK;
}
