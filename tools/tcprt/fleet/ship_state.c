// SPDX-License-Identifier: GPL-2.0
/* tcprt ship's state file: see ship_state.h. */
#include "ship_state.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parse.h"
#include "util.h"

#define STATE_MAGIC	"TCPRTSH\n"
#define STATE_VERSION	1

static int state_fd = -1;
static bool sync_failed;

static void state_init(struct ship_state *st)
{
	memset(st, 0, sizeof(*st));
	memcpy(st->magic, STATE_MAGIC, sizeof(st->magic));
	st->version = STATE_VERSION;
	st->size = sizeof(*st);
}

static bool state_valid(const struct ship_state *st)
{
	return !memcmp(st->magic, STATE_MAGIC, sizeof(st->magic)) &&
	       st->version == STATE_VERSION && st->size == sizeof(*st);
}

/*
 * The running epoch of a ship that died becomes the dead one to close;
 * an older dead one not closed yet (its successor died too before it
 * could send) is dropped: the central shows that epoch as ended.
 */
/* @e read no numbered record and numbered no line: nothing to account. */
static bool epoch_empty(const struct ship_epoch *e)
{
	unsigned int i;

	if (e->next_seq)
		return false;
	for (i = 0; i < SHIP_STATE_SLOTS; i++)
		if (e->slot[i].used == 2)
			return false;
	return true;
}

/*
 * The running epoch of a ship that died becomes the dead one to close;
 * an older dead one not closed yet (its successor died too before it
 * could send) is dropped: the central shows that epoch as ended.  A
 * successor that died having read nothing leaves the older in place.
 * The epoch number goes first: a kill in the middle of the clearing
 * leaves an epoch 0, which is none.
 */
static void state_take_over(struct ship_state *st, uint64_t *dropped)
{
	if (st->cur.epoch && !st->cur.closed) {
		bool pending = st->dead.epoch && !st->dead.closed;

		if (!pending || !epoch_empty(&st->cur)) {
			if (pending)
				(*dropped)++;
			st->dead.epoch = 0;
			STATE_ORDER();
			memcpy(&st->dead, &st->cur, sizeof(st->dead));
		}
	}
	st->cur.epoch = 0;
	STATE_ORDER();
	memset(&st->cur, 0, sizeof(st->cur));
}

/* The file starts with the magic (of any version): a state file of ship. */
static bool state_is_ours(int fd)
{
	char magic[sizeof(STATE_MAGIC) - 1];

	return pread(fd, magic, sizeof(magic), 0) == (ssize_t)sizeof(magic) &&
	       !memcmp(magic, STATE_MAGIC, sizeof(magic));
}

static struct ship_state *map_anon(void)
{
	struct ship_state *st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (st == MAP_FAILED)
		die(EXIT_RUNTIME, "ship: out of memory for its state");
	state_init(st);
	return st;
}

/* -1 with "state file PATH: ..." in @err, @fd closed. */
static int refuse(int fd, const char *path, char *err, size_t len,
		  const char *why)
{
	snprintf(err, len, "state file %s: %s", path, why);
	if (fd >= 0)
		close(fd);
	return -1;
}

/* Open, lock and check @path: its descriptor, or -1 with why in @err. */
static int state_file(const char *path, char *err, size_t len)
{
	struct stat sb;
	int fd;

	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		char why[300];

		snprintf(why, sizeof(why), "%s (state: a file in a folder only root may write, e.g. /var/lib/tcprt)",
			 strerror(errno));
		return refuse(fd, path, err, len, why);
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		return refuse(fd, path, err, len, errno == EWOULDBLOCK ?
			      "another tcprt ship uses it" : strerror(errno));
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode))
		return refuse(fd, path, err, len, "not a regular file");
	/* another user's file, or a second name of another file: not ours */
	if (sb.st_uid != geteuid() || sb.st_nlink != 1)
		return refuse(fd, path, err, len, sb.st_uid != geteuid() ?
			      "owned by another user" : "has other names (hard links)");
	if (sb.st_size && !state_is_ours(fd))
		return refuse(fd, path, err, len,
			      "not a state file of tcprt ship; give it a path of its own");
	/* it names hosts and counts their records: its owner's alone */
	if ((sb.st_mode & 077) && fchmod(fd, 0600) < 0)
		return refuse(fd, path, err, len, strerror(errno));
	if ((size_t)sb.st_size != sizeof(struct ship_state) &&
	    ftruncate(fd, sizeof(struct ship_state)) < 0)
		return refuse(fd, path, err, len, strerror(errno));
	/* every block now: a store to a hole on a full disk would be SIGBUS */
	errno = posix_fallocate(fd, 0, sizeof(struct ship_state));
	if (errno)
		return refuse(fd, path, err, len, strerror(errno));
	return fd;
}

struct ship_state *ship_state_open(const char *path, uint64_t *dropped,
				   char *err, size_t len)
{
	struct ship_state *st;
	bool had;
	int fd;

	*dropped = 0;
	if (!path)
		return map_anon();
	fd = state_file(path, err, len);
	if (fd < 0)
		return NULL;
	had = state_is_ours(fd);
	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (st == MAP_FAILED) {
		refuse(fd, path, err, len, strerror(errno));
		return NULL;
	}
	if (had && !state_valid(st))
		warnx_("ship: state file %s is of another version of tcprt: started anew; an epoch it held is shown as ended by the central",
		       path);
	if (!state_valid(st))
		state_init(st);
	else
		state_take_over(st, dropped);
	state_fd = fd;
	return st;
}

bool ship_state_sync(struct ship_state *st)
{
	(void)st;
	if (state_fd < 0 || fdatasync(state_fd) == 0)
		return true;
	if (!sync_failed)
		warnx_("ship: state file: fdatasync: %s (a power loss may cost its account)",
		       strerror(errno));
	sync_failed = true;
	return false;
}

void ship_state_close(struct ship_state *st)
{
	if (state_fd >= 0)
		ship_state_sync(st);
	munmap(st, sizeof(*st));
	if (state_fd >= 0)
		close(state_fd);
	state_fd = -1;
}

struct ship_slot *ship_slot_of(struct ship_epoch *e, uint64_t load_id, int cpu)
{
	unsigned int h = ((unsigned int)cpu * 2654435761u ^ (unsigned int)load_id) %
			 SHIP_STATE_SLOTS;
	unsigned int i;

	for (i = 0; i < SHIP_STATE_SLOTS; i++) {
		struct ship_slot *s = &e->slot[(h + i) % SHIP_STATE_SLOTS];

		if (!s->used) {
			memset(s, 0, sizeof(*s));
			s->load_id = load_id;
			s->cpu = cpu;
			s->used = 1;
			return s;
		}
		if (s->load_id == load_id && s->cpu == cpu)
			return s;
	}
	return NULL;
}

bool ship_line_seq(const char *line, size_t len, uint64_t *seq)
{
	static const char key[] = " seq=";
	size_t d = len;

	while (d > 0 && line[d - 1] >= '0' && line[d - 1] <= '9')
		d--;
	if (d == len || d < sizeof(key) - 1 ||
	    memcmp(line + d - (sizeof(key) - 1), key, sizeof(key) - 1))
		return false;
	return parse_u64(line + d, len - d, seq) && *seq != UINT64_MAX;
}

/* A numbered line read: the slot's counters move. */
static void slot_read(struct ship_slot *s, uint64_t seq, uint64_t *backwards)
{
	uint64_t skipped;

	if (s->used == 1) {
		/* its first: the epoch's account of this log starts here */
		s->first = seq;
		s->sent_next = seq;
		s->line_next = seq;
		s->read_next = seq + 1;
		STATE_ORDER();
		s->used = 2;
		return;
	}
	if (seq < s->read_next) {
		(*backwards)++;
		return;
	}
	/*
	 * read_next first, relay_skipped then unsent_skipped: at any point
	 * a kill leaves an account L1's checks take (frame.h).
	 */
	skipped = seq - s->read_next;
	s->read_next = seq + 1;
	STATE_ORDER();
	s->relay_skipped += skipped;
	STATE_ORDER();
	s->unsent_skipped += skipped;
}

void ship_slot_sent(struct ship_slot *s, uint64_t to, uint64_t handled)
{
	uint64_t skipped;

	if (to <= s->sent_next)
		return;
	skipped = to - s->sent_next - handled;
	/* sent_next first: a kill between counts them nowhere, never twice */
	s->sent_next = to;
	STATE_ORDER();
	s->unsent_skipped -= skipped < s->unsent_skipped ? skipped : s->unsent_skipped;
}

/* The line @p .. @p + @n (no newline), after what the slot kept of it. */
static void chunk_line(struct ship_slot *s, const char *p, size_t n,
		       uint64_t *backwards)
{
	char joined[sizeof(s->tail) * 2];
	uint64_t seq;

	/*
	 * " seq=" and its digits (25 bytes at most) end the line: a
	 * continuation as long as the tail holds them all by itself.
	 */
	if (s->tail_len && n < sizeof(s->tail)) {
		memcpy(joined, s->tail, s->tail_len);
		memcpy(joined + s->tail_len, p, n);
		p = joined;
		n += s->tail_len;
	}
	s->tail_len = 0;
	if (ship_line_seq(p, n, &seq))
		slot_read(s, seq, backwards);
}

void ship_chunk(struct ship_slot *slot, const char *buf, size_t len,
		uint64_t *backwards)
{
	const char *p = buf, *end = buf + len, *nl;

	while (p < end && (nl = memchr(p, '\n', (size_t)(end - p)))) {
		chunk_line(slot, p, (size_t)(nl - p), backwards);
		p = nl + 1;
	}
	if (p < end) {
		/* a line cut here: keep its last bytes */
		size_t n = (size_t)(end - p), room = sizeof(slot->tail);

		if (slot->tail_len + n <= room) {
			memcpy(slot->tail + slot->tail_len, p, n);
			slot->tail_len += (uint32_t)n;
		} else if (n >= room) {
			memcpy(slot->tail, end - room, room);
			slot->tail_len = (uint32_t)room;
		} else {
			memmove(slot->tail, slot->tail + slot->tail_len - (room - n),
				room - n);
			memcpy(slot->tail + room - n, p, n);
			slot->tail_len = (uint32_t)room;
		}
	}
}
