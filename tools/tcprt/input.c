// SPDX-License-Identifier: GPL-2.0
/*
 * Reading, line splitting and validation of the log and stats files.
 *
 * The binary logs (rt-network-bin<cpu>, include/tcp_rt_bin.h) are made
 * text as they are read, by the module's own formatter (tcp_rt_fmt.h),
 * into the chunk a text file's read would have filled: from there on a
 * record takes the text's path, so every output - and the lines ship and
 * the archive copy - is the same bytes from either form.
 */
#include "input.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive.h"
#include "util.h"
#include "kcompat.h"
#include "../../include/tcp_rt_fmt.h"

#define LOG_PREFIX	"rt-network-log"
#define BIN_PREFIX	"rt-network-bin"
#define PEEK_PREFIX	"rt-network-peek"
#define STATS_NAME	"rt-network-stats"
/* the vendor's oldest generation: per-CPU stats files, rt-network-real<cpu> */
#define VENDOR_STATS_PREFIX	"rt-network-real"
#define DEBUGFS_MOUNT	"/sys/kernel/debug"
#define MODULE_DIR	"/sys/module/tcp_rt"
#define READ_CHUNK	16384
#define RAW_U64S	(READ_CHUNK / 8)	/* a binary file's read, in u64s */
#define SHOW_MAX	100	/* bad lines shown per file; all are counted */
#define EXCERPT_MAX	60

struct input_file {
	char *path;
	int fd;
	dev_t dev;
	ino_t ino;
	bool is_stats;
	bool vendor_stats;	/* rt-network-real*: only the vendor writes it */
	/*
	 * rt-network-bin<cpu>: raw holds what was read, rlen bytes, of which
	 * those before rpos are made text already; roff is raw's offset in
	 * the file, for messages
	 */
	bool binary;
	uint64_t *raw;
	size_t rlen, rpos;
	uint64_t roff;
	int cpu;
	uint64_t tag;		/* in->open_fn's, when it was opened */
	char chunk[READ_CHUNK];	/* read, not yet cut into lines */
	size_t clen, cpos;
	bool idle;		/* nothing more to read for now */
	uint64_t pos_us;	/* start time of the last record read */
	char line[PARSE_LINE_MAX + 1];
	size_t len;
	bool overlong;		/* skipping the rest of a too long line */
	uint64_t lineno;
	uint64_t bad, shown;
	/* the last task record, whose connection an E record may close */
	bool have_last;
	struct record last;
};

/* ---- bad lines ---------------------------------------------------------- */

static void excerpt(char *out, size_t outlen, const char *s, size_t len)
{
	size_t i, o = 0;

	for (i = 0; i < len && o + 5 < outlen && i < EXCERPT_MAX; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c <= 0x7e && c != '"' && c != '\\')
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", c);
	}
	if (i < len && o + 4 < outlen)
		o += (size_t)snprintf(out + o, outlen - o, "...");
	out[o] = '\0';
}

static void bad_line(struct input *in, struct input_file *f, const char *why,
		     const char *s, size_t len)
{
	char ex[EXCERPT_MAX * 4 + 8];

	f->bad++;
	in->bad++;
	if (in->line_fn && !f->is_stats)
		in->line_fn(s, len, f->cpu, f->tag, NULL, in->ctx);
	if (in->quiet || f->shown > SHOW_MAX)
		return;
	if (++f->shown > SHOW_MAX) {
		warnx_("%s: more than %d malformed lines: the rest are counted, not shown",
		       f->path, SHOW_MAX);
		return;
	}
	excerpt(ex, sizeof(ex), s, len);
	warnx_("%s:%llu: %s: \"%s\"", f->path, (unsigned long long)f->lineno,
	       why, ex);
}

/* ---- one line ------------------------------------------------------------- */

static bool same_conn(const struct record *a, const struct record *b)
{
	return a->peer_port == b->peer_port && a->local_port == b->local_port &&
	       !strcmp(a->peer_addr, b->peer_addr) &&
	       !strcmp(a->local_addr, b->local_addr);
}

/*
 * An E record is written right after the last R/W/N/P of its connection,
 * by the same hook, in the same file (docs/records.md, "Order across
 * CPUs"): it takes that record's role.  Without one (it was overwritten, or
 * the connection had no task in this file) parse's guess stands.
 */
static void set_e_role(struct input_file *f, struct record *r)
{
	if (r->type == REC_E) {
		if (f->have_last && same_conn(&f->last, r)) {
			r->role = f->last.role;
			r->port = f->last.port;
		}
		f->have_last = false;
	} else if (rec_is_task(r->type)) {
		f->last = *r;
		f->have_last = true;
	}
}

static void do_line(struct input *in, struct input_file *f, const char *s,
		    size_t len)
{
	char why[PARSE_WHY_MAX];
	struct record r;
	bool ok;

	f->lineno++;
	if (f->is_stats)
		ok = parse_stats_line(s, len, &r, why);
	else
		ok = parse_log_line(s, len, &r, why);
	if (!ok) {
		bad_line(in, f, why, s, len);
		return;
	}
	in->records++;
	f->pos_us = rec_time_us(&r);
	if (f->vendor_stats)
		r.source = SRC_VENDOR;
	if (!f->is_stats) {
		r.cpu = f->cpu;
		set_e_role(f, &r);
		if (in->archive)
			archive_line(in->archive, s, len);
		if (in->line_fn)
			in->line_fn(s, len, f->cpu, f->tag, &r, in->ctx);
	}
	in->fn(&r, in->ctx);
}

/* Add @len bytes to the line being assembled. */
static void append(struct input_file *f, const char *p, size_t len)
{
	if (f->overlong)
		return;
	if (f->len + len > PARSE_LINE_MAX) {
		/* keep the start, for the message */
		len = PARSE_LINE_MAX - f->len;
		f->overlong = true;
	}
	memcpy(f->line + f->len, p, len);
	f->len += len;
}

static void end_line(struct input *in, struct input_file *f)
{
	if (f->overlong) {
		char why[64];

		snprintf(why, sizeof(why), "line longer than %d bytes",
			 PARSE_LINE_MAX);
		f->lineno++;
		bad_line(in, f, why, f->line, f->len);
	} else {
		do_line(in, f, f->line, f->len);
	}
	f->len = 0;
	f->overlong = false;
}

/* Cut the next line out of what was read; false: no complete line left. */
static bool take_line(struct input *in, struct input_file *f)
{
	while (f->cpos < f->clen) {
		const char *p = f->chunk + f->cpos;
		size_t avail = f->clen - f->cpos;
		const char *nl = memchr(p, '\n', avail);
		size_t seg = nl ? (size_t)(nl - p) : avail;

		append(f, p, seg);
		f->cpos += seg;
		if (nl) {
			f->cpos++;
			end_line(in, f);
			return true;
		}
	}
	return false;
}

/* A last line without its newline: report it, as truncated. */
static void finish_file(struct input *in, struct input_file *f)
{
	if (f->binary && f->rlen > f->rpos) {
		f->lineno++;
		bad_line(in, f, "truncated binary record (the file ends inside it)",
			 "", 0);
		f->roff += f->rlen;
		f->rpos = f->rlen = 0;
	}
	if (f->len || f->overlong) {
		f->lineno++;
		bad_line(in, f, "truncated line (no newline at end of file)",
			 f->line, f->len);
	}
	f->len = 0;
	f->overlong = false;
}

/*
 * A binary record at rpos that does not check (tcp_rt_bin_check()): of a
 * layout version this tcprt does not read, said once and the text files
 * read instead (input_read()); else malformed, counted and shown as the
 * hex of its header.  Where the next record starts is not known: what is
 * held is dropped (the module's reads start at a record).
 */
static void bad_record(struct input *in, struct input_file *f)
{
	const struct tcp_rt_bin *rec =
		(const void *)((const char *)f->raw + f->rpos);
	char why[128], hex[2 * sizeof(*rec) + 1];
	size_t i;

	if (rec->ver != TCP_RT_BIN_VER) {
		warnx_("%s: a record of layout version %u at byte %llu; this tcprt reads version %d: reading the text files (%s*) instead",
		       f->path, rec->ver,
		       (unsigned long long)(f->roff + f->rpos),
		       TCP_RT_BIN_VER, LOG_PREFIX);
		in->bin_refused = true;
	} else {
		for (i = 0; i < sizeof(*rec); i++)
			snprintf(hex + 2 * i, 3, "%02x",
				 ((const unsigned char *)rec)[i]);
		snprintf(why, sizeof(why),
			 "malformed binary record at byte %llu (its header in hex)",
			 (unsigned long long)(f->roff + f->rpos));
		f->lineno++;
		bad_line(in, f, why, hex, strlen(hex));
	}
	f->roff += f->rlen;
	f->rpos = f->rlen = 0;
}

/*
 * Binary: the lines of the whole records held, into the chunk, as many as
 * it has room for; their length (0: no whole record held).
 */
static size_t make_text(struct input *in, struct input_file *f)
{
	size_t text = 0, n;

	/* tcp_rt_fmt_bin() writes within TCP_RT_FMT_MAX bytes of its start */
	while (text + TCP_RT_FMT_MAX <= sizeof(f->chunk)) {
		const struct tcp_rt_bin *rec =
			(const void *)((const char *)f->raw + f->rpos);
		size_t avail = f->rlen - f->rpos;

		if (avail < sizeof(*rec))
			break;
		/* its header alone: the length it says, or 0 */
		n = tcp_rt_bin_check(rec, TCP_RT_BIN_LEN_MAX);
		if (!n) {
			/* once the lines before it are taken: their numbers */
			if (!text)
				bad_record(in, f);
			break;
		}
		if (n > avail)
			break;
		text += tcp_rt_fmt_bin(f->chunk + text, rec);
		f->rpos += n;
	}
	return text;
}

/*
 * Binary: read into raw until a whole record is held, and make text of
 * what is: as read(2) into the chunk - bytes, 0 at the end for now, or -1
 * and errno.
 */
static ssize_t read_binary(struct input *in, struct input_file *f)
{
	size_t text;
	ssize_t n;

	for (;;) {
		text = make_text(in, f);
		if (text || in->bin_refused)
			return (ssize_t)text;
		/* a record begun: to the front, 8-byte aligned as it was */
		memmove(f->raw, (char *)f->raw + f->rpos, f->rlen - f->rpos);
		f->roff += f->rpos;
		f->rlen -= f->rpos;
		f->rpos = 0;
		n = read(f->fd, (char *)f->raw + f->rlen,
			 RAW_U64S * 8 - f->rlen);
		if (n <= 0)
			return n;
		f->rlen += (size_t)n;
	}
}

/* Read the next chunk; false at the current end of the file. */
static bool fill(struct input *in, struct input_file *f)
{
	ssize_t n;

	if (f->fd < 0)
		return false;
	do {
		n = f->binary ? read_binary(in, f) :
				read(f->fd, f->chunk, sizeof(f->chunk));
	} while (n < 0 && errno == EINTR);
	if (n > 0) {
		f->clen = (size_t)n;
		f->cpos = 0;
		/* opened before the module wrote what tags it: ask again */
		if (!f->tag && in->open_fn && !f->is_stats)
			f->tag = in->open_fn(f->cpu, in->ctx);
		if (in->chunk_fn && !f->is_stats)
			in->chunk_fn(f->chunk, f->clen, f->cpu, f->tag, in->ctx);
		return true;
	}
	if (n < 0 && errno != EAGAIN) {
		/* EIO once the module is unloaded: the rescan notices */
		if (!in->debugfs || errno != EIO)
			warnx_("%s: read: %s", f->path, strerror(errno));
		finish_file(in, f);
		close(f->fd);
		f->fd = -1;
	}
	return false;
}

/* Process the next line of @f; false when it has none for now. */
static bool next_line(struct input *in, struct input_file *f)
{
	do {
		if (take_line(in, f))
			return true;
	} while (fill(in, f));
	return false;
}

/* Read everything @f holds now (and nothing of the other files). */
static void drain_file(struct input *in, struct input_file *f)
{
	while (next_line(in, f))
		;
}

/* ---- the set of files ------------------------------------------------------- */

/* The prefix of the log files read: text, binary or peek. */
static const char *log_prefix(const struct input *in)
{
	if (in->peek)
		return PEEK_PREFIX;
	return in->binary ? BIN_PREFIX : LOG_PREFIX;
}

/* rt-network-log<N> (or -bin<N>): N; any other such name: -1. */
static int cpu_of(const char *name, const char *prefix)
{
	const char *p = name + strlen(prefix);
	uint64_t v;

	if (!parse_u64(p, strlen(p), &v) || v > 1000000)
		return -1;
	return (int)v;
}

static bool is_vendor_stats(const char *name)
{
	return !strncmp(name, VENDOR_STATS_PREFIX, strlen(VENDOR_STATS_PREFIX));
}

static bool wanted(const struct input *in, const char *name)
{
	if (!strncmp(name, log_prefix(in), strlen(log_prefix(in))))
		return true;
	return in->stats && (!strcmp(name, STATS_NAME) || is_vendor_stats(name));
}

static struct input_file *find_file(const struct input *in, const char *name)
{
	size_t i, dlen = strlen(in->dir);

	for (i = 0; i < in->nfiles; i++)
		if (!strcmp(in->files[i]->path + dlen + 1, name))
			return in->files[i];
	return NULL;
}

/*
 * The kernel's lockdown mode ("integrity", "confidentiality"), or NULL when
 * it is not locked down or cannot be told (securityfs not mounted).
 */
static const char *lockdown_mode(void)
{
	static char mode[32];
	char line[128], *l, *r;
	FILE *f = fopen("/sys/kernel/security/lockdown", "re");

	if (!f)
		return NULL;
	l = fgets(line, sizeof(line), f) ? strchr(line, '[') : NULL;
	fclose(f);
	r = l ? strchr(l, ']') : NULL;
	if (!r || r - l - 1 >= (long)sizeof(mode))
		return NULL;
	snprintf(mode, sizeof(mode), "%.*s", (int)(r - l - 1), l + 1);
	return strcmp(mode, "none") ? mode : NULL;
}

/* Why opening a file of the module failed, in the words a user needs. */
void input_open_failed(const char *path, int err)
{
	const char *lockdown;

	if (err == EACCES && geteuid() != 0) {
		warnx_("%s: permission denied: run tcprt as root", path);
	} else if (err == EPERM && (lockdown = lockdown_mode())) {
		warnx_("%s: the kernel is locked down (%s) and debugfs refuses this file: a tcp_rt older than 0.2 (README, \"On a Secure Boot host\")",
		       path, lockdown);
	} else {
		warnx_("%s: %s", path, err == EINVAL ?
		       "not a regular file" : strerror(err));
	}
}

static int open_file(struct input *in, const char *name)
{
	struct input_file *f = xcalloc(1, sizeof(*f));
	size_t plen = strlen(in->dir) + strlen(name) + 2;
	struct stat st;

	f->path = xcalloc(1, plen);
	snprintf(f->path, plen, "%s/%s", in->dir, name);
	f->fd = open(f->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (f->fd < 0 || fstat(f->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		int err = f->fd < 0 ? errno : EINVAL;

		if (f->fd >= 0)
			close(f->fd);
		input_open_failed(f->path, err);
		free(f->path);
		free(f);
		return -1;
	}
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->vendor_stats = is_vendor_stats(name);
	f->is_stats = f->vendor_stats || !strcmp(name, STATS_NAME);
	f->binary = in->binary && !f->is_stats;
	if (f->binary)
		f->raw = xcalloc(RAW_U64S, sizeof(*f->raw));
	f->cpu = f->is_stats ? -1 : cpu_of(name, log_prefix(in));
	if (in->open_fn && !f->is_stats)
		f->tag = in->open_fn(f->cpu, in->ctx);
	in->files = xrealloc(in->files, in->nfiles + 1, sizeof(*in->files));
	in->files[in->nfiles++] = f;
	return 0;
}

static void free_file(struct input_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	free(f->raw);
	free(f->path);
	free(f);
}

/* Files in CPU order, the stats file last. */
static int file_cmp(const void *a, const void *b)
{
	const struct input_file *x = *(struct input_file *const *)a;
	const struct input_file *y = *(struct input_file *const *)b;

	if (x->is_stats != y->is_stats)
		return x->is_stats ? 1 : -1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* Open every wanted file of the directory not open yet; -1: no directory. */
static int scan_dir(struct input *in, bool report)
{
	struct dirent *de;
	DIR *d;

	d = opendir(in->dir);
	if (!d) {
		if (report) {
			if (errno == EACCES && geteuid() != 0)
				warnx_("%s: permission denied: run tcprt as root",
				       in->dir);
			else
				warnx_("%s: %s", in->dir, strerror(errno));
		}
		return -1;
	}
	while ((de = readdir(d))) {
		if (wanted(in, de->d_name) && !find_file(in, de->d_name))
			open_file(in, de->d_name);
	}
	closedir(d);
	qsort(in->files, in->nfiles, sizeof(*in->files), file_cmp);
	return 0;
}

static bool debugfs_mounted(void)
{
	struct mntent *m;
	bool found = false;
	FILE *mt;

	mt = setmntent("/proc/self/mounts", "r");
	if (!mt)
		return true;	/* cannot tell: let opening the files decide */
	while ((m = getmntent(mt)))
		if (!strcmp(m->mnt_type, "debugfs") &&
		    !strcmp(m->mnt_dir, DEBUGFS_MOUNT))
			found = true;
	endmntent(mt);
	return found;
}

/* The three usual reasons the module's files cannot be read, in order. */
int input_check_module(void)
{
	struct stat st;

	if (!debugfs_mounted()) {
		warnx_("debugfs is not mounted on %s (mount -t debugfs none %s)",
		       DEBUGFS_MOUNT, DEBUGFS_MOUNT);
		return -1;
	}
	if (stat(MODULE_DIR, &st) < 0) {
		warnx_("the tcp_rt module is not loaded (no %s): load it first, e.g. modprobe tcp_rt lports=80",
		       MODULE_DIR);
		return -1;
	}
	if (stat(DEBUGFS_DIR, &st) < 0) {
		if (errno == EACCES)
			warnx_("%s: permission denied: tcprt must run as root to read the tcp_rt files",
			       DEBUGFS_DIR);
		else
			warnx_("%s: %s (is tcp_rt loaded?)", DEBUGFS_DIR,
			       strerror(errno));
		return -1;
	}
	return 0;
}

/* The log files open (the stats file is not one). */
static size_t log_files(const struct input *in)
{
	size_t i, n = 0;

	for (i = 0; i < in->nfiles; i++)
		n += !in->files[i]->is_stats;
	return n;
}

/*
 * The loaded module's parameter @name, its newline dropped, into @buf of
 * @size bytes: its length, or -1 if it cannot be read (not loaded, a
 * tcp_rt without the parameter).
 */
static ssize_t module_param(const char *name, char *buf, size_t size)
{
	char path[128];
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), MODULE_DIR "/parameters/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, size - 1);
	close(fd);
	if (len < 0)
		return -1;
	if (len && buf[len - 1] == '\n')
		len--;
	buf[len] = '\0';
	return len;
}

/* The loaded module's log_format is binary: its records are read so. */
static bool module_binary(void)
{
	char buf[32];

	/* a tcp_rt before log_format: text */
	return module_param("log_format", buf, sizeof(buf)) >= 0 &&
	       !strcmp(buf, "binary");
}

/* Whether @dir holds a file whose name begins with @prefix. */
static bool dir_has(const char *dir, const char *prefix)
{
	struct dirent *de;
	bool found = false;
	DIR *d = opendir(dir);

	if (!d)
		return false;
	while (!found && (de = readdir(d)))
		found = !strncmp(de->d_name, prefix, strlen(prefix));
	closedir(d);
	return found;
}

/*
 * @fmt made text or binary: auto reads what the module writes, binary
 * only when it writes nothing else (log_format=binary); in a folder of
 * saved files, the text files if there are any, else the binary ones.
 */
static bool read_binary_files(const struct input *in, enum input_format fmt)
{
	if (fmt == INPUT_PEEK)
		return false;	/* the peek files are text */
	if (fmt != INPUT_AUTO)
		return fmt == INPUT_BINARY;
	if (in->debugfs)
		return module_binary();
	return !dir_has(in->dir, LOG_PREFIX) && dir_has(in->dir, BIN_PREFIX);
}

enum input_format input_format_of(const char *s)
{
	if (!strcmp(s, "auto"))
		return INPUT_AUTO;
	if (!strcmp(s, "text"))
		return INPUT_TEXT;
	if (!strcmp(s, "binary"))
		return INPUT_BINARY;
	return INPUT_FORMAT_BAD;
}

int input_module_numbered(void)
{
	char buf[256], *tok, *save = NULL;

	if (module_param("log_ext", buf, sizeof(buf)) < 0)
		return -1;
	for (tok = strtok_r(buf, ", \n", &save); tok; tok = strtok_r(NULL, ", \n", &save))
		if (!strcmp(tok, "seq"))
			return 1;
	return 0;
}

const char *input_loss_key(const struct input *in, bool *records)
{
	*records = in->binary || in->peek || (in->debugfs && module_binary());
	return *records ? "log_bin_records_overwritten" : "log_subbufs_overwritten";
}

int input_open(struct input *in, const char *dir, bool stats,
	       enum input_format fmt, record_fn fn, void *ctx)
{
	size_t i;

	memset(in, 0, sizeof(*in));
	in->debugfs = !dir;
	in->stats = stats;
	in->fn = fn;
	in->ctx = ctx;
	in->dir = strdup(dir ? dir : DEBUGFS_DIR);
	if (!in->dir)
		die(EXIT_RUNTIME, "out of memory");
	/* no trailing slash: paths are dir + "/" + name */
	for (i = strlen(in->dir); i > 1 && in->dir[i - 1] == '/'; i--)
		in->dir[i - 1] = '\0';
	if (in->debugfs && input_check_module() < 0)
		goto fail;
	in->format = fmt;
	in->peek = fmt == INPUT_PEEK;
	if (in->peek && !in->debugfs) {
		warnx_("%s: a peek reads the module's own files, not a folder's", in->dir);
		goto fail;
	}
	in->binary = read_binary_files(in, fmt);
	if (scan_dir(in, true) < 0)
		goto fail;
	if (!log_files(in)) {
		warnx_("%s: no readable %s* file%s", in->dir, log_prefix(in),
		       in->peek ? " (a peek reads a binary log: tcp_rt loaded with log_format=both or binary)" : "");
		goto fail;
	}
	return EXIT_OK;
fail:
	input_close(in);
	return EXIT_RUNTIME;
}

/*
 * A binary record of a version this tcprt does not read: the binary files
 * are closed, and the text files (the module's text views, log_format=
 * binary) opened in their place, from where the binary ones were read to.
 * The stats file stays open where it was.
 */
static void to_text_files(struct input *in)
{
	size_t i, kept = 0;

	for (i = 0; i < in->nfiles; i++) {
		if (in->files[i]->binary)
			free_file(in->files[i]);
		else
			in->files[kept++] = in->files[i];
	}
	in->nfiles = kept;
	in->binary = false;
	in->bin_refused = false;
	if (scan_dir(in, true) < 0)
		return;
	if (!log_files(in))
		warnx_("%s: no readable %s* file either", in->dir, LOG_PREFIX);
}

/* One pass of input_read() over the files open. */
static void read_pass(struct input *in)
{
	size_t i;

	if (in->by_file) {
		for (i = 0; i < in->nfiles; i++)
			drain_file(in, in->files[i]);
		return;
	}
	for (i = 0; i < in->nfiles; i++)
		in->files[i]->idle = false;
	for (;;) {
		struct input_file *next = NULL;

		for (i = 0; i < in->nfiles; i++) {
			struct input_file *f = in->files[i];

			if (!f->idle && (!next || f->pos_us < next->pos_us))
				next = f;
		}
		if (!next)
			break;
		if (!next_line(in, next))
			next->idle = true;
	}
}

uint64_t input_read(struct input *in)
{
	uint64_t before = in->records + in->bad;

	read_pass(in);
	if (in->bin_refused) {
		to_text_files(in);
		read_pass(in);
	}
	if (in->archive)
		archive_flush(in->archive);
	return in->records + in->bad - before;
}

void input_set_open_fn(struct input *in, uint64_t (*fn)(int cpu, void *ctx))
{
	size_t i;

	in->open_fn = fn;
	for (i = 0; i < in->nfiles; i++)
		if (!in->files[i]->is_stats)
			in->files[i]->tag = fn(in->files[i]->cpu, in->ctx);
}

void input_rescan(struct input *in)
{
	size_t i, kept = 0, dropped;
	struct stat st;

	for (i = 0; i < in->nfiles; i++) {
		struct input_file *f = in->files[i];

		if (f->fd >= 0 && stat(f->path, &st) == 0 &&
		    st.st_dev == f->dev && st.st_ino == f->ino) {
			in->files[kept++] = f;
			continue;
		}
		/* gone or replaced (module reloaded): drain, then drop */
		drain_file(in, f);
		finish_file(in, f);
		free_file(f);
	}
	dropped = in->nfiles - kept;
	in->nfiles = kept;
	/* the module reloaded, maybe with another log_format: auto follows */
	if ((dropped || in->gone) && !log_files(in))
		in->binary = read_binary_files(in, in->format);
	if (scan_dir(in, false) < 0) {
		if (!in->gone)
			warnx_("%s is gone%s; waiting for it", in->dir,
			       in->debugfs ? " (tcp_rt unloaded?)" : "");
		in->gone = true;
		return;
	}
	if (in->gone)
		warnx_("%s is back", in->dir);
	else if (dropped)
		warnx_("%s: %zu file%s gone or replaced%s", in->dir, dropped,
		       dropped == 1 ? "" : "s",
		       in->debugfs ? " (tcp_rt reloaded?)" : "");
	in->gone = false;
}

void input_finish(struct input *in)
{
	size_t i;

	for (i = 0; i < in->nfiles; i++)
		finish_file(in, in->files[i]);
}

void input_report(const struct input *in)
{
	size_t i;

	if (!in->bad)
		return;
	for (i = 0; i < in->nfiles; i++)
		if (in->files[i]->bad)
			warnx_("%s: %llu malformed line%s skipped",
			       in->files[i]->path,
			       (unsigned long long)in->files[i]->bad,
			       in->files[i]->bad == 1 ? "" : "s");
	warnx_("%llu malformed line%s in all, %llu valid",
	       (unsigned long long)in->bad, in->bad == 1 ? "" : "s",
	       (unsigned long long)in->records);
}

void input_close(struct input *in)
{
	size_t i;

	for (i = 0; i < in->nfiles; i++)
		free_file(in->files[i]);
	free(in->files);
	free(in->dir);
	in->files = NULL;
	in->nfiles = 0;
	in->dir = NULL;
}

void input_status(const struct input *in,
		  void (*fn)(const char *key, uint64_t value, void *ctx),
		  void *ctx)
{
	status_read(in->dir, fn, ctx);
}

void status_read(const char *dir,
		 void (*fn)(const char *key, uint64_t value, void *ctx),
		 void *ctx)
{
	char path[4096], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/status", dir ? dir : DEBUGFS_DIR);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *sp = strchr(line, ' ');
		char *end;
		uint64_t v;

		if (!sp)
			continue;
		*sp++ = '\0';
		end = sp + strcspn(sp, "\n");
		*end = '\0';
		if (parse_u64(sp, strlen(sp), &v))
			fn(line, v, ctx);
	}
	fclose(f);
}
