/* SPDX-License-Identifier: GPL-2.0 */
/* The commands, and the option helpers they share. */
#ifndef TCPRT_CMD_H
#define TCPRT_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "input.h"
#include "record.h"

#ifndef TCPRT_VERSION	/* tcp_rt's, from include/tcp_rt.h (Makefile) */
#error "TCPRT_VERSION undefined: build tcprt with its Makefile"
#endif

/* Defaults, documented in README and --help. */
#define DEFAULT_REORDER_US	(5 * 1000000ULL)	/* merge window */
#define DEFAULT_POLL_US		200000ULL		/* --follow polling */
#define DEFAULT_MAX_HELD	262144			/* records in the merge */
#define DEFAULT_MAX_PORTS	64
#define DEFAULT_MAX_CONTAINERS	64

int cmd_read(int argc, char **argv);
int cmd_summary(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_series(int argc, char **argv);
int cmd_live(int argc, char **argv);
int cmd_ship(int argc, char **argv);
int cmd_ingest(int argc, char **argv);
int cmd_fleet(int argc, char **argv);
int cmd_spool(int argc, char **argv);
/* tcprt fleet key (cmd_fleet_key.c) */
int fleet_key(int argc, char **argv);
/* tcprt fleet expire (cmd_fleet_expire.c) */
int fleet_expire(int argc, char **argv);

/* "tcprt: CMD: message" + "try tcprt CMD --help", exit 2. */
void usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

struct option;
/* The long name of the option getopt_long returned @o for, in @opts. */
const char *opt_long_name(const struct option *opts, int o);

/* getopt_long returned ':' or '?': a usage error naming the option. */
void bad_option(const char *cmd, int o, char **argv)
	__attribute__((noreturn));

/* Option values; each exits with a usage error when the value is bad. */
uint16_t opt_port(const char *cmd, const char *arg);
uint64_t opt_seconds(const char *cmd, const char *opt, const char *arg,
		     bool zero_ok);
/* A time (parse_when(): Unix seconds, ISO UTC, or an age before @now). */
uint64_t opt_when(const char *cmd, const char *opt, const char *arg,
		  uint64_t now);
/* --netns: N or net:[N], N > 0. */
uint64_t opt_netns(const char *cmd, const char *arg);
/* --container: an id, a prefix of 12 digits or more (not of two running
 * containers), or NAME.service; returns @arg. */
const char *opt_container(const char *cmd, const char *arg);
/*
 * The same checks for a value from elsewhere (a configuration file): 0,
 * or -1 with why @arg is not one in @err ("'ARG' is not ...").
 */
int check_netns(const char *arg, uint64_t *ino, char *err, size_t len);
int check_container(const char *arg, char *err, size_t len);
/*
 * A sink's filter setting (port, netns, container; the container's
 * string copied): 0, 1 when @name is none of them, -1 as above.
 */
struct ct_filter;
int set_filter(const char *name, const char *v, int *port,
	       struct ct_filter *ctf, char *err, size_t len);
/* A setting's string, its conf's own copy (replacing an earlier one). */
void set_str(char **to, const char *v);
/*
 * A flag: given alone (an option, @v NULL), or yes/no, true/false, 1/0
 * (a key): 0, or -1 with "'V' is not yes or no" in @err.
 */
int set_flag(bool *to, const char *v, char *err, size_t len);
/*
 * Seconds (fractions allowed), up to a year; 0 only when @zero_ok: 0, or
 * -1 with "'V' is not a number of seconds[ > 0]" in @err.  opt_seconds()
 * is this for an option.
 */
int set_seconds(uint64_t *to, const char *v, bool zero_ok, char *err,
		size_t len);
/* "R,W,N,P,E" -> a bit mask of 1 << REC_x. */
unsigned int opt_types(const char *cmd, const char *arg);
/*
 * --input-format auto|text|binary, a long option alone (its getopt value
 * OPT_INPUT_FORMAT), of every command that reads the logs.
 */
#define OPT_INPUT_FORMAT	0x1000
#define INPUT_FORMAT_HELP \
"      --input-format F  the log files read: auto (default: binary when the\n" \
"                      module writes binary only, log_format=binary, its\n" \
"                      default; in a\n" \
"                      --dir, the text files if any), text\n" \
"                      (rt-network-log<cpu>) or binary (rt-network-bin<cpu>)\n"
enum input_format opt_input_format(const char *cmd, const char *arg);

#endif
