/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ship sink: the records of this host, numbered, capped, signed and
 * handed to the local rsyslog, which carries them to the central
 * (docs/fleet.md).  tcprt ship is this sink behind its options, fed by a
 * reader of its own; tcprt agent's [ship] section is the same sink beside
 * the others (docs/agent.md).
 *
 * Its settings are named once, here: tcprt ship's long options and the
 * keys of [ship] are the same names, set through ship_set() and checked
 * together by ship_check().
 */
#ifndef TCPRT_SINK_SHIP_H
#define TCPRT_SINK_SHIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sink.h"

struct ship_conf {
	/* as set; the strings are the conf's own */
	char *key_file, *host_id, *socket, *state, *series;
	bool unsigned_, unnumbered, burst_set, state_set;
	uint64_t rate, burst, interval_us, send_wait_us;
	/* tcprt agent's [ship] queue: the send queue's bytes (0: none) */
	uint64_t queue;
	/* the reader's, set by the caller: recorded logs (NULL: the module's) */
	const char *dir;
};

/* The defaults: 10 MB/s, control messages every 10 s, 1 s of send wait. */
void ship_conf_init(struct ship_conf *c);

/*
 * tcprt agent's [ship] queue when its section sets none: 16 MB, about
 * 100,000 records, so that rsyslog's socket full for seconds holds no
 * other sink and refuses nothing (fleet.sh's agent fault cases); tcprt
 * ship alone has none and waits, as before.
 */
#define SHIP_AGENT_QUEUE	(16ULL * 1000 * 1000)

/*
 * Set @name (a long option's name, without "--") to @value (NULL for a
 * flag given alone): 0; 1 when @name is none of the sink's; -1 with the
 * reason in @err.
 */
int ship_set(struct ship_conf *c, const char *name, const char *value,
	     char *err, size_t len);

/*
 * Once every setting is set, and @c->dir: what goes together, the
 * module's numbering: 0, or -1 with the reason in @err.
 */
int ship_check(struct ship_conf *c, char *err, size_t len);

void ship_conf_free(struct ship_conf *c);

/*
 * Start the sink of @c (checked) into @s: its key, its state file (the
 * account of a dead epoch closed), a new epoch.  0, or -1 with the reason
 * in @err (-2: the settings contradict the key: host-id is not its).  The sink keeps what it needs of @c.  Stopping it sends the
 * epoch's final control message; stop() is false when that failed.
 */
int ship_sink_start(struct sink *s, const struct ship_conf *c, char *err,
		    size_t len);

#endif
