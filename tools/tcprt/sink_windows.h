/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The windows sink: sliding windows of the tasks (window.c), kept as the
 * records arrive, asked for on a local socket (live_socket.c), shown in a
 * terminal (live_view.c) or printed once as JSON (docs/live.md).  tcprt
 * live is this sink behind its options; tcprt agent's [windows] section
 * configures it with the same names (windows_set()).
 */
#ifndef TCPRT_SINK_WINDOWS_H
#define TCPRT_SINK_WINDOWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "container.h"
#include "live_view.h"
#include "sink.h"
#include "window.h"

enum win_by { BY_PORT, BY_CONTAINER, BY_NETNS, BY_PEER, BY_N };

#define WINDOWS_MAX_KEYS	1024

struct windows_conf {
	/* as set; the strings are the conf's own */
	unsigned int len[WIN_MAX], nwin;	/* ascending */
	enum win_by by;
	int port;			/* only this port; -1: all */
	struct ct_filter ctf;
	uint64_t max_keys;
	char *socket;			/* the query socket, or NULL */
	gid_t gid;			/* its group; (gid_t)-1: the caller's */
	int wall;			/* the clock: 1 wall, 0 records, -1 unset */
	/* the caller's: tcprt live's alone */
	bool view;			/* the terminal view */
	enum wm measure;		/* its measure and order */
	enum view_sort sort;
	bool print_at_end;		/* --once: every key's JSON at the end */
};

/* The defaults: 10 s, 1 min, 5 min by port, 1024 keys, no socket. */
void windows_conf_init(struct windows_conf *c);

/*
 * Set @name (a long option's name, without "--": windows, by, port,
 * netns, container, max-keys, socket, socket-group, clock) to @value: 0;
 * 1 when @name is none of these; -1 with the reason in @err.
 */
int windows_set(struct windows_conf *c, const char *name, const char *value,
		char *err, size_t len);

/* Once every setting is set: 0, or -1 with the reason in @err. */
int windows_check(const struct windows_conf *c, char *err, size_t len);

void windows_conf_free(struct windows_conf *c);

/*
 * Start the sink of @c into @s, its clock the wall's unless @c says
 * otherwise or @dir_input (recorded logs: the records'): 0, or -1 after
 * saying why on stderr.  The sink keeps what it needs of @c.
 */
int windows_sink_start(struct sink *s, const struct windows_conf *c,
		       bool dir_input);

#endif
