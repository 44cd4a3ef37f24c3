/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The files tcprt reads: every rt-network-log* of a directory (and
 * rt-network-stats when asked, or the vendor's older rt-network-real<cpu>),
 * read to their current end, cut into lines,
 * validated and turned into records.  A bad line is counted and reported on
 * stderr with its file, line number and reason; it never stops the stream.
 */
#ifndef TCPRT_INPUT_H
#define TCPRT_INPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "parse.h"
#include "record.h"

#define DEBUGFS_DIR	"/sys/kernel/debug/tcp-rt"

struct input_file;

/* What log files are read (--input-format). */
enum input_format {
	INPUT_AUTO,		/* what the module writes, or the folder holds */
	INPUT_TEXT,		/* rt-network-log<cpu> */
	INPUT_BINARY,		/* rt-network-bin<cpu>, made text as read */
	/*
	 * rt-network-peek<cpu> (tcprt read --peek): what the module's binary
	 * logs hold now, as text, read without consuming; the module's files only
	 */
	INPUT_PEEK,
	INPUT_FORMAT_BAD,
};

struct archive;

struct input {
	char *dir;
	bool debugfs;		/* the module's own directory: reading consumes */
	enum input_format format;	/* as asked for */
	bool binary;		/* the log files read are rt-network-bin<cpu> */
	bool peek;		/* ... or rt-network-peek<cpu> */
	bool bin_refused;	/* one's layout version is not ours: to text */
	bool stats;		/* also read rt-network-stats */
	bool quiet;		/* do not report bad lines one by one */
	bool gone;		/* the directory vanished (follow mode) */
	/* read each file to its end in turn, not the earliest line first */
	bool by_file;
	struct input_file **files;
	size_t nfiles;
	struct archive *archive;	/* if set, every valid log line is appended */
	record_fn fn;
	void *ctx;
	/*
	 * If set, called with every line of a log file as read, valid or
	 * not, and the number of its file (-1 when the name has none): @r is
	 * the parsed record, or NULL for a malformed, truncated or overlong
	 * line (then @line is what was kept of it, at most PARSE_LINE_MAX
	 * bytes).  Before @fn, for valid lines.
	 */
	void (*line_fn)(const char *line, size_t len, int cpu, uint64_t tag,
			const struct record *r, void *ctx);
	/*
	 * If set, called with every chunk read from a log file, before any
	 * of its lines is cut, with the file's number and tag: what a reader
	 * that consumes the files holds from then on.
	 */
	void (*chunk_fn)(const char *buf, size_t len, int cpu, uint64_t tag,
			 void *ctx);
	/*
	 * If set, gives each log file its tag when it is opened, and again
	 * before each chunk while the tag is 0.
	 */
	uint64_t (*open_fn)(int cpu, void *ctx);
	uint64_t records;	/* valid lines */
	uint64_t bad;		/* malformed lines */
};

/*
 * Open the files of @dir, or of the debugfs directory when @dir is NULL
 * (after checking, with a clear message for each, that debugfs is mounted,
 * the module loaded and the files readable): the log files of @fmt.
 * Records are passed to @fn.  Returns EXIT_OK, or EXIT_RUNTIME after
 * printing why (nothing left open; input_close() may still be called).
 */
/* 0 when debugfs is mounted, tcp_rt loaded and its directory readable;
 * otherwise -1, the reason said on stderr. */
int input_check_module(void);
/*
 * Whether the loaded module numbers its records (log_ext lists seq): 1,
 * 0, or -1 when it cannot tell (not loaded, a tcp_rt before log_ext).
 */
int input_module_numbered(void);
/* Say why opening @path of the module failed with @err. */
void input_open_failed(const char *path, int err);

int input_open(struct input *in, const char *dir, bool stats,
	       enum input_format fmt, record_fn fn, void *ctx);
/* "auto", "text", "binary": its value; else INPUT_FORMAT_BAD (INPUT_PEEK is
 * tcprt read --peek's, not an --input-format). */
enum input_format input_format_of(const char *s);

/*
 * The module's status key that counts what it overwrote before a reader
 * of @in's log files got it: a binary buffer's records, exactly
 * (*@records true), or a text log's sub-buffers.
 */
const char *input_loss_key(const struct input *in, bool *records);

/* Read what every file holds now; returns the number of lines read. */
uint64_t input_read(struct input *in);

/* Set in->open_fn, and tag the log files already open with it. */
void input_set_open_fn(struct input *in, uint64_t (*fn)(int cpu, void *ctx));

/* Follow mode: open files that appeared, close those that vanished. */
void input_rescan(struct input *in);

/* End of input: a last line without its '\n' is reported as truncated. */
void input_finish(struct input *in);

/* One stderr line with the malformed-line count per file, if any. */
void input_report(const struct input *in);

void input_close(struct input *in);

/* Read DIR/status ("key value" lines); calls @fn per numeric line. */
void input_status(const struct input *in,
		  void (*fn)(const char *key, uint64_t value, void *ctx),
		  void *ctx);
/* The same of @dir (the module's when NULL), for a reader's sink. */
void status_read(const char *dir,
		 void (*fn)(const char *key, uint64_t value, void *ctx),
		 void *ctx);

#endif
