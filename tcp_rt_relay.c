// SPDX-License-Identifier: GPL-2.0
/*
 * The relay files the logs (tcp_rt_log.c) and the stats (tcp_rt_stats.c)
 * are read by: relay's own open, poll and release, no mmap (debugfs
 * refuses it under kernel lockdown, and never forwarded it anyway), and a
 * read of our own that hands out whole records only (see "Reading"); the
 * calls their writers put a record with (see "Writing"); and the channels'
 * open and close, which give each buffer its switch count and read lock.
 *
 * A binary buffer has three files: its records (rt-network-bin<cpu>),
 * their text, made as they are read (rt-network-text<cpu>, the text view),
 * and a text view that does not consume (rt-network-peek<cpu>, see "Peek").
 *
 * Concurrency: tcp_rt_relay_fops is set up before the first channel opens
 * and released after the last one closed, both under the module's
 * init/exit serialisation; tcp_rt_relay_readers is only touched from
 * relay_close(), in module exit.  A buffer's reading position (relay's
 * subbufs_consumed and bytes_consumed) is changed by its readers only,
 * under the buffer's read lock (struct tcp_rt_relay_buf), which the
 * readers of both its files take: they share the one position.
 * reads_lapped is an atomic, bumped by readers of any file.  A buffer's
 * switch count (see "Writing") is changed by that buffer's one writer
 * only.  Both live as long as the channel (tcp_rt_relay_open() to
 * tcp_rt_relay_close()), as does the text view's dentry, set when relay
 * creates the buffer's files and removed with them.  An indexed channel's
 * (see "Records lost"): each sub-buffer's first index, written by the
 * buffer's writer, read under the read lock; the next index a read hands
 * out and the records reads passed over, under the read lock.  A peek's
 * open file has a reading position of its own (struct tcp_rt_relay_peek),
 * under that file's own lock.
 */

#define pr_fmt(fmt) "tcp_rt: " fmt

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kmemleak.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/relay.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "include/tcp_rt.h"
#include "include/tcp_rt_bin.h"
#include "include/tcp_rt_fmt.h"
#include "include/tcp_rt_relay.h"

/* What a file of a buffer hands out of it. */
enum tcp_rt_relay_view {
	TCP_RT_VIEW_TEXT,	/* a text buffer's lines */
	TCP_RT_VIEW_BIN,	/* a binary buffer's records */
	TCP_RT_VIEW_BIN_TEXT,	/* a binary buffer's records, as lines */
	TCP_RT_VIEWS,
};

/* What a reader of an indexed channel met of the indexes ("Records lost"). */
struct tcp_rt_relay_idx {
	u64 next;		/* the index after the last record handed out */
	u64 passed;		/* the indexes skipped between those handed out */
};

/*
 * What tcp_rt_relay_open() keeps for each buffer of a channel, indexed by
 * the buffer's CPU (0 for a global buffer): the channel's private data.
 */
struct tcp_rt_relay_buf {
	unsigned long switches;		/* "Writing" */
	struct mutex read_lock;		/* the buffer's reading position */
	struct dentry *text_view;	/* a binary buffer's, or NULL */
	struct dentry *peek;		/* a binary buffer's, or NULL */
	/* an indexed channel's ("Records lost"); first_idx NULL otherwise */
	u64 *first_idx;			/* per sub-buffer */
	struct tcp_rt_relay_idx idx;	/* its consuming reads' */
};

/*
 * A reading position in a buffer: a sub-buffer, counted as relay counts
 * subbufs_produced (from 0 at the buffer's creation, never wrapping), and
 * the bytes read of it.  A consuming read's are relay's own
 * subbufs_consumed and bytes_consumed; a peek's are its open file's, and
 * it ends where the writer was at the open: @end_bytes into sub-buffer
 * @end_subbuf (SIZE_MAX: no end).
 */
struct tcp_rt_relay_pos {
	size_t *subbuf;
	size_t *bytes;
	size_t end_subbuf;
	size_t end_bytes;
};

/* the files' operations, one a view */
static const struct file_operations *tcp_rt_relay_fops;
static unsigned int tcp_rt_relay_readers;
static atomic_long_t tcp_rt_relay_lapped = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_relay_peek_skipped = ATOMIC_LONG_INIT(0);
static atomic_long_t tcp_rt_relay_peek_cut = ATOMIC_LONG_INIT(0);

/*
 * Reading.  relay's own read copies straight from the buffer while the
 * writers go on.  In flight-recorder mode a writer that laps a slow reader
 * overwrites the bytes being copied, and a reader lapped between two reads
 * is moved on to the oldest sub-buffer, where the head of its last line,
 * read before the lap, is joined to bytes written after it: with
 * log_buf_num=1 and a reader of 512 bytes at a time, 98 of 178,000 lines
 * read in 30 s were spliced from two records (selftests/lapped_reader.py).
 *
 * This read copies a chunk into a bounce buffer, then checks that the
 * writer did not come back to that sub-buffer meanwhile: relay_switch_subbuf()
 * raises subbufs_produced, then a full barrier, before it writes a byte of
 * a new sub-buffer, so a sub-buffer the writer may have reentered shows as
 * subbufs_produced n_subbufs or more past it.  A chunk the writer overtook
 * is thrown away and counted (reads_lapped; the records lost are the
 * writer's overwrite, counted in log_subbufs_overwritten), and the read
 * goes on from the oldest sub-buffer, whose first byte begins a record.
 * Only whole records are handed out: a read of a text file stops after
 * the last newline it copied, one of a binary file (rt-network-bin<cpu>)
 * after the last whole record, by the lengths the records say, checked
 * in the bounce copy (tcp_rt_bin_check()), and one of a text view
 * (rt-network-text<cpu>) after the line of the last whole record whose
 * line fits, made from that copy; the position moves on by the binary
 * bytes those lines were made from.  A read whose buffer cannot hold the
 * next record fails with -EINVAL, as /dev/kmsg's does (a record is at
 * most TCP_RT_REC_LEN + TCP_RT_REC_LEN_SEQ bytes, tcp_rt_log.c,
 * TCP_RT_BIN_LEN_MAX, or as a line TCP_RT_FMT_MAX).
 *
 * A completed sub-buffer ends where its padding begins, which the writer
 * stores before subbufs_produced is raised (tcp_rt_relay_switch()); the
 * current one ends at buf->offset, which the writer raises only after a
 * record's bytes are in place (tcp_rt_relay_commit()): both with the
 * ordering a weakly ordered CPU (arm64) needs, not x86's store order
 * alone.  But relay_switch_subbuf() raises subbufs_produced before it
 * sets the offset back to 0: in between, the new current sub-buffer
 * would seem to end where the old one did, and a reader would hand out
 * a lap-old sub-buffer's bytes and skip as many of the new one's.  The
 * buffer's switch count, odd during the switch, shows that window.
 */
#define TCP_RT_READ_CHUNK	4096
#define TCP_RT_READ_TRIES	16	/* chunks overtaken in one read, at most */

/* What @chan keeps for its buffer of @cpu. */
static struct tcp_rt_relay_buf *tcp_rt_relay_buf(struct rchan *chan,
						 unsigned int cpu)
{
	return (struct tcp_rt_relay_buf *)chan->private_data + cpu;
}

/* @buf's switch count ("Writing"). */
static unsigned long *tcp_rt_relay_switches(struct rchan_buf *buf)
{
	return &tcp_rt_relay_buf(buf->chan, buf->cpu)->switches;
}

/*
 * Copy the next bytes at @pos in @buf, at most @max, to @to: how many (0:
 * nothing to read now, or the end of a peek), or -EAGAIN if the writer
 * overtook them or the sub-buffer ended while they were copied.
 */
static ssize_t tcp_rt_relay_copy(struct rchan_buf *buf,
				 const struct tcp_rt_relay_pos *pos,
				 char *to, size_t max)
{
	size_t size = buf->chan->subbuf_size, n = buf->chan->n_subbufs;
	unsigned long *switches = tcp_rt_relay_switches(buf);
	size_t *sub = pos->subbuf, *bytes = pos->bytes;
	size_t produced, seen, slot, end, len;
	unsigned long sw;

	/* pairs with tcp_rt_relay_switch()'s release of the count */
	sw = smp_load_acquire(switches);
	/* pairs with tcp_rt_relay_switch()'s smp_wmb() */
	produced = smp_load_acquire(&buf->subbufs_produced);
	for (;;) {
		if (produced - *sub >= n) {
			/* lapped: the oldest sub-buffer not being written */
			*sub = produced - n + 1;
			*bytes = 0;
		}
		if (*sub > pos->end_subbuf)
			return 0;
		slot = *sub % n;
		if (*sub == produced) {
			/* mid-switch, the offset is the old sub-buffer's */
			if (sw & 1)
				return -EAGAIN;
			/* pairs with tcp_rt_relay_commit()'s release */
			end = min(smp_load_acquire(&buf->offset), size);
		} else {
			end = size - READ_ONCE(buf->padding[slot]);
		}
		if (*sub == pos->end_subbuf)
			end = min(end, pos->end_bytes);
		if (*bytes < end)
			break;
		if (*sub == produced || *sub == pos->end_subbuf)
			return 0;
		(*sub)++;
		*bytes = 0;
	}

	len = min(end - *bytes, max);
	memcpy(to, buf->start + slot * size + *bytes, len);
	/* the copy before the second look: a switch it missed shows there */
	smp_rmb();
	seen = READ_ONCE(buf->subbufs_produced);
	if (seen - *sub >= n) {
		atomic_long_inc(&tcp_rt_relay_lapped);
		return -EAGAIN;
	}
	/*
	 * The current sub-buffer ended, or a switch to it was under way: its
	 * end was maybe another's.
	 */
	if (*sub == produced &&
	    (seen != produced || READ_ONCE(*switches) != sw))
		return -EAGAIN;
	return len;
}

/* The length of @p's whole lines: up to and including its last newline. */
static size_t tcp_rt_whole_lines(const char *p, size_t len)
{
	while (len && p[len - 1] != '\n')
		len--;
	return len;
}

/*
 * The length of @p's whole binary records, from its start: each checked,
 * 8-byte aligned as the bounce buffer and the records are.
 */
static size_t tcp_rt_whole_records(const char *p, size_t len)
{
	size_t done = 0, n;

	while ((n = tcp_rt_bin_check((const struct tcp_rt_bin *)(p + done),
				     len - done)))
		done += n;
	return done;
}

/*
 * The text view's lines (tcp_rt_fmt_bin()) of the whole binary records
 * at @in, @len bytes, as many as fit in @room bytes and in @out's
 * TCP_RT_READ_CHUNK: their length, and in *@used the binary bytes they
 * were made from.
 */
static size_t tcp_rt_records_text(const char *in, size_t len, char *out,
				  size_t room, size_t *used)
{
	const struct tcp_rt_bin *rec;
	size_t text = 0, n, line;

	*used = 0;
	/* tcp_rt_fmt_bin() writes within TCP_RT_FMT_MAX bytes of its start */
	while (text + TCP_RT_FMT_MAX <= TCP_RT_READ_CHUNK) {
		rec = (const struct tcp_rt_bin *)(in + *used);
		n = tcp_rt_bin_check(rec, len - *used);
		if (!n)
			break;
		line = tcp_rt_fmt_bin(out + text, rec);
		if (line > room - text)
			break;
		text += line;
		*used += n;
	}
	return text;
}

/*
 * Records lost.  A binary record carries its index in its CPU's log
 * (struct tcp_rt_bin's idx, from 0 at load, one more a record placed), so
 * what the writer overwrote before a read reached it is exact: a read
 * counts the indexes it passes over between the records it hands out
 * (passed), and the writer stores each sub-buffer's first index as it
 * enters it (tcp_rt_relay_first_idx(), from its subbuf_start callback),
 * so that the records overwritten ahead of the readers - a lap no read
 * has met yet - are counted too: from the reading position's next index
 * to the first index of the oldest sub-buffer the writer has not
 * reentered.  What was handed out of a sub-buffer before the writer came
 * back to it was read, not lost: the indexes say so, whatever the
 * position.  Exact whenever the writer is still; while it writes, a
 * count taken between its entering a sub-buffer and storing its index
 * may be off by that sub-buffer's records, until the next count.
 */

/* Past the whole records at @p, @len bytes: the indexes they skip. */
static void tcp_rt_relay_pass(struct tcp_rt_relay_idx *ix, const char *p,
			      size_t len)
{
	const struct tcp_rt_bin *rec;
	size_t done;

	for (done = 0; done < len; done += rec->len) {
		rec = (const struct tcp_rt_bin *)(p + done);
		if (rec->idx > ix->next)
			ix->passed += rec->idx - ix->next;
		if (rec->idx >= ix->next)
			ix->next = rec->idx + 1;
	}
}

/*
 * The writer of @buf enters @subbuf, its next record's index @idx: in the
 * writer's section (tcp_rt_relay.h), from the channel's subbuf_start.
 */
void tcp_rt_relay_first_idx(struct rchan_buf *buf, void *subbuf, u64 idx)
{
	struct tcp_rt_relay_buf *rb = tcp_rt_relay_buf(buf->chan, buf->cpu);
	size_t slot = ((char *)subbuf - (char *)buf->start) /
		      buf->chan->subbuf_size;

	if (rb->first_idx)
		WRITE_ONCE(rb->first_idx[slot], idx);
}

/* @buf's records overwritten before any read reached them, under its lock. */
static u64 tcp_rt_relay_ahead(struct rchan_buf *buf,
			      const struct tcp_rt_relay_buf *rb)
{
	size_t n = buf->chan->n_subbufs, produced;
	u64 first;

	/* pairs with tcp_rt_relay_switch()'s smp_wmb(), as a read's does */
	produced = smp_load_acquire(&buf->subbufs_produced);

	if (produced - buf->subbufs_consumed < n)
		return 0;
	first = READ_ONCE(rb->first_idx[(produced - n + 1) % n]);
	return first > rb->idx.next ? first - rb->idx.next : 0;
}

/* The records an indexed channel's writer of @cpu overwrote unread. */
u64 tcp_rt_relay_records_lost_cpu(struct rchan *chan, unsigned int cpu)
{
	struct tcp_rt_relay_buf *rb;
	struct rchan_buf *buf;
	u64 n;

	if (!chan)
		return 0;
	buf = *per_cpu_ptr(chan->buf, cpu);
	rb = tcp_rt_relay_buf(chan, cpu);
	if (!buf || !rb->first_idx)
		return 0;
	mutex_lock(&rb->read_lock);
	n = rb->idx.passed + tcp_rt_relay_ahead(buf, rb);
	mutex_unlock(&rb->read_lock);
	return n;
}

/* The records an indexed channel's writers overwrote unread, every CPU's. */
u64 tcp_rt_relay_records_lost(struct rchan *chan)
{
	unsigned int cpu;
	u64 sum = 0;

	for_each_possible_cpu(cpu)
		sum += tcp_rt_relay_records_lost_cpu(chan, cpu);
	return sum;
}

/*
 * A read of whole records at @pos, as @view gives them: each step copies a
 * chunk (tcp_rt_relay_copy()), hands out what it holds of whole records,
 * and moves the reading position past the bytes they took; @ix, if not
 * NULL, counts the indexes they skip.  The text view's room is text: it
 * copies a chunk of records whatever the room, and makes their lines from
 * that copy, checked already, never from the buffer.  The caller holds
 * the lock of @pos.
 */
static ssize_t tcp_rt_relay_read_pos(struct rchan_buf *buf,
				     const struct tcp_rt_relay_pos *pos,
				     struct tcp_rt_relay_idx *ix,
				     char __user *ubuf, size_t count,
				     enum tcp_rt_relay_view view)
{
	bool text_view = view == TCP_RT_VIEW_BIN_TEXT;
	size_t done = 0, room, whole, used;
	unsigned int tries = 0;
	char *bounce, *text;
	ssize_t err = 0, n;

	if (!count)
		return 0;
	bounce = kmalloc((text_view ? 2 : 1) * TCP_RT_READ_CHUNK, GFP_KERNEL);
	if (!bounce)
		return -ENOMEM;
	text = bounce + TCP_RT_READ_CHUNK;

	while (done < count) {
		room = min_t(size_t, count - done, TCP_RT_READ_CHUNK);
		n = tcp_rt_relay_copy(buf, pos, bounce,
				      text_view ? TCP_RT_READ_CHUNK : room);
		if (n == -EAGAIN && ++tries <= TCP_RT_READ_TRIES)
			continue;
		if (n <= 0)
			break;
		if (text_view) {
			whole = tcp_rt_records_text(bounce, n, text, room,
						    &used);
		} else {
			used = view == TCP_RT_VIEW_BIN ?
			       tcp_rt_whole_records(bounce, n) :
			       tcp_rt_whole_lines(bounce, n);
			whole = used;
		}
		if (!whole) {
			/* the next record does not fit in what is left */
			err = -EINVAL;
			break;
		}
		if (copy_to_user(ubuf + done, text_view ? text : bounce,
				 whole)) {
			err = -EFAULT;
			break;
		}
		done += whole;
		*pos->bytes += used;
		if (ix)
			tcp_rt_relay_pass(ix, bounce, used);
	}

	kfree(bounce);
	return done ? done : err;
}

/* A consuming read of whole records, at the buffer's reading position. */
static ssize_t tcp_rt_relay_read_whole(struct file *filp, char __user *ubuf,
				       size_t count,
				       enum tcp_rt_relay_view view)
{
	struct rchan_buf *buf = filp->private_data;
	struct tcp_rt_relay_buf *rb = tcp_rt_relay_buf(buf->chan, buf->cpu);
	const struct tcp_rt_relay_pos pos = {
		.subbuf		= &buf->subbufs_consumed,
		.bytes		= &buf->bytes_consumed,
		.end_subbuf	= SIZE_MAX,
	};
	ssize_t ret;

	mutex_lock(&rb->read_lock);
	ret = tcp_rt_relay_read_pos(buf, &pos, rb->first_idx ? &rb->idx : NULL,
				    ubuf, count, view);
	mutex_unlock(&rb->read_lock);
	return ret;
}

static ssize_t tcp_rt_relay_read(struct file *filp, char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	return tcp_rt_relay_read_whole(filp, ubuf, count, TCP_RT_VIEW_TEXT);
}

static ssize_t tcp_rt_relay_read_bin(struct file *filp, char __user *ubuf,
				     size_t count, loff_t *ppos)
{
	return tcp_rt_relay_read_whole(filp, ubuf, count, TCP_RT_VIEW_BIN);
}

static ssize_t tcp_rt_relay_read_bin_text(struct file *filp,
					  char __user *ubuf, size_t count,
					  loff_t *ppos)
{
	return tcp_rt_relay_read_whole(filp, ubuf, count,
				       TCP_RT_VIEW_BIN_TEXT);
}

/*
 * Peek: what a binary buffer holds, as text, read without consuming it
 * (rt-network-peek<cpu>) - every record still there, whether a consuming
 * reader took it already or not.  Each open file reads from a position of
 * its own, from the oldest sub-buffer the writer is not in to where the
 * writer was at the open: a snapshot, read with the consuming read's lap
 * checks (tcp_rt_relay_read_pos()).  What the writer overwrites before the
 * peek reaches it is skipped, whole records still handed out only, and
 * counted by the indexes missing between those handed out, from the
 * oldest sub-buffer's first index at the open (status:
 * peek_records_skipped).  A peek the writer overtakes past its end has
 * lost the rest of its snapshot, how many records unknown: it ends there,
 * counted (status: peek_cut_short).
 *
 * Its open and release are this module's code, which must not be called
 * once the module is gone: its operations name their owner, so that
 * debugfs holds the module while a peek file is open (rmmod is refused,
 * "in use", until it is closed; the other files' readers do not hold it,
 * see tcp_rt_relay_init()).
 */
struct tcp_rt_relay_peek {
	struct rchan_buf *buf;
	struct mutex lock;		/* the fields below: one read at a time */
	size_t subbuf;
	size_t bytes;
	struct tcp_rt_relay_pos pos;	/* at subbuf and bytes */
	struct tcp_rt_relay_idx idx;
	bool ended;			/* a read found no more */
};

/*
 * Where @pk starts and ends: the writer's position, taken between two
 * switches, and the oldest sub-buffer it is not in, with its first index.
 */
static int tcp_rt_relay_peek_start(struct tcp_rt_relay_peek *pk)
{
	struct rchan_buf *buf = pk->buf;
	struct tcp_rt_relay_buf *rb = tcp_rt_relay_buf(buf->chan, buf->cpu);
	size_t n = buf->chan->n_subbufs, produced, offset, first;
	unsigned long *switches = &rb->switches, sw;
	unsigned int tries;
	u64 idx = 0;

	for (tries = 0; tries < TCP_RT_READ_TRIES; tries++) {
		/* pairs with tcp_rt_relay_switch()'s release of the count */
		sw = smp_load_acquire(switches);
		/* pairs with tcp_rt_relay_switch()'s smp_wmb() */
		produced = smp_load_acquire(&buf->subbufs_produced);
		/* pairs with tcp_rt_relay_commit()'s release */
		offset = min(smp_load_acquire(&buf->offset),
			     buf->chan->subbuf_size);
		first = produced >= n ? produced - n + 1 : 0;
		if (rb->first_idx)
			idx = READ_ONCE(rb->first_idx[first % n]);
		/* the loads before the second look at the count */
		smp_rmb();
		if (!(sw & 1) && READ_ONCE(*switches) == sw)
			goto found;
		cond_resched();
	}
	return -EAGAIN;
found:
	pk->subbuf = first;
	pk->bytes = 0;
	pk->pos.subbuf = &pk->subbuf;
	pk->pos.bytes = &pk->bytes;
	pk->pos.end_subbuf = produced;
	pk->pos.end_bytes = offset;
	pk->idx.next = idx;
	return 0;
}

static int tcp_rt_relay_peek_open(struct inode *inode, struct file *filp)
{
	struct tcp_rt_relay_peek *pk;
	int err;

	pk = kzalloc(sizeof(*pk), GFP_KERNEL);
	if (!pk)
		return -ENOMEM;
	/* relay's: holds the buffer, as filp->private_data */
	err = relay_file_operations.open(inode, filp);
	if (err)
		goto fail;
	pk->buf = filp->private_data;
	mutex_init(&pk->lock);
	err = tcp_rt_relay_peek_start(pk);
	if (err) {
		mutex_destroy(&pk->lock);
		relay_file_operations.release(inode, filp);
		goto fail;
	}
	filp->private_data = pk;
	return 0;
fail:
	kfree(pk);
	return err;
}

static ssize_t tcp_rt_relay_peek_read(struct file *filp, char __user *ubuf,
				      size_t count, loff_t *ppos)
{
	struct tcp_rt_relay_peek *pk = filp->private_data;
	ssize_t ret;
	u64 passed;

	mutex_lock(&pk->lock);
	if (pk->ended) {
		mutex_unlock(&pk->lock);
		return 0;
	}
	passed = pk->idx.passed;
	ret = tcp_rt_relay_read_pos(pk->buf, &pk->pos, &pk->idx, ubuf, count,
				    TCP_RT_VIEW_BIN_TEXT);
	atomic_long_add(pk->idx.passed - passed, &tcp_rt_relay_peek_skipped);
	if (!ret && count) {
		/* the end, where it was at the open or not */
		pk->ended = true;
		if (pk->subbuf != pk->pos.end_subbuf ||
		    pk->bytes < pk->pos.end_bytes)
			atomic_long_inc(&tcp_rt_relay_peek_cut);
	}
	mutex_unlock(&pk->lock);
	return ret;
}

static int tcp_rt_relay_peek_release(struct inode *inode, struct file *filp)
{
	struct tcp_rt_relay_peek *pk = filp->private_data;

	/* relay's lets go of the buffer */
	filp->private_data = pk->buf;
	mutex_destroy(&pk->lock);
	kfree(pk);
	return relay_file_operations.release(inode, filp);
}

/* read-only, no mmap, no ioctl: opened under kernel lockdown too */
static const struct file_operations tcp_rt_relay_peek_fops = {
	.owner		= THIS_MODULE,
	.open		= tcp_rt_relay_peek_open,
	.read		= tcp_rt_relay_peek_read,
	.release	= tcp_rt_relay_peek_release,
};

unsigned long tcp_rt_relay_peek_skipped_records(void)
{
	return atomic_long_read(&tcp_rt_relay_peek_skipped);
}

unsigned long tcp_rt_relay_peek_cut_short(void)
{
	return atomic_long_read(&tcp_rt_relay_peek_cut);
}

/*
 * Writing (include/tcp_rt_relay.h): tcp_rt_relay_reserve()'s slow path,
 * the switch to the next sub-buffer.  The padding relay is about to store
 * for the ending sub-buffer is stored first, ordered by the write barrier
 * before relay's subbufs_produced++ together with every byte of that
 * sub-buffer; relay then stores the same value again.  The buffer's switch
 * count is odd from before that barrier until relay has set the offset
 * for the new sub-buffer.
 */
char *tcp_rt_relay_switch(struct rchan_buf *buf, size_t len)
{
	unsigned long *switches = tcp_rt_relay_switches(buf);
	size_t size = buf->chan->subbuf_size, slot;
	size_t ok;

	WRITE_ONCE(*switches, *switches + 1);
	if (buf->offset != size + 1) {	/* relay's test: not refused before */
		slot = buf->subbufs_produced % buf->chan->n_subbufs;
		WRITE_ONCE(buf->padding[slot], size - buf->offset);
	}
	/* pairs with the acquire of subbufs_produced in tcp_rt_relay_copy() */
	smp_wmb();
	ok = relay_switch_subbuf(buf, len);
	/* pairs with the acquire of the count in tcp_rt_relay_copy() */
	smp_store_release(switches, *switches + 1);
	if (WARN_ON_ONCE(!ok))
		return NULL;
	return (char *)buf->data + buf->offset;
}

/*
 * A relay channel whose buffers have switch counts and read locks: its
 * private data, struct tcp_rt_relay_buf, for every possible CPU.
 * @indexed: its records are binary, each with its index ("Records lost");
 * its subbuf_start calls tcp_rt_relay_first_idx().  Close it with
 * tcp_rt_relay_close().
 */
struct rchan *tcp_rt_relay_open(const char *base, struct dentry *parent,
				size_t subbuf_size, size_t n_subbufs,
				tcp_rt_relay_cb_const struct rchan_callbacks *cb,
				bool indexed)
{
	struct tcp_rt_relay_buf *bufs;
	struct rchan *chan;
	u64 *first = NULL;
	unsigned int i;

	bufs = kcalloc(nr_cpu_ids, sizeof(*bufs), GFP_KERNEL);
	if (indexed && bufs)
		first = kcalloc(array_size(nr_cpu_ids, n_subbufs),
				sizeof(*first), GFP_KERNEL);
	if (!bufs || (indexed && !first))
		goto fail;
	for (i = 0; i < nr_cpu_ids; i++) {
		mutex_init(&bufs[i].read_lock);
		if (indexed)
			bufs[i].first_idx = first + (size_t)i * n_subbufs;
	}
	chan = relay_open(base, parent, subbuf_size, n_subbufs, cb, bufs);
	if (chan)
		return chan;
fail:
	kfree(first);
	kfree(bufs);
	return NULL;
}

/* After relay_close() no read runs and none can start: see below. */
void tcp_rt_relay_close(struct rchan *chan)
{
	struct tcp_rt_relay_buf *bufs;
	unsigned int i;

	if (!chan)
		return;
	bufs = chan->private_data;
	relay_close(chan);
	for (i = 0; i < nr_cpu_ids; i++)
		mutex_destroy(&bufs[i].read_lock);
	kfree(bufs[0].first_idx);	/* the one array of them all */
	kfree(bufs);
}

unsigned long tcp_rt_relay_reads_lapped(void)
{
	return atomic_long_read(&tcp_rt_relay_lapped);
}

/*
 * Under kernel lockdown (Secure Boot hosts) debugfs opens a file only if it
 * is read-only and its operations have no mmap and no ioctl.  relay's have
 * mmap, which debugfs's proxy never forwarded.  The copy is not owned by
 * this module, so that an open reader (tcprt read --follow) does not pin
 * it, as relay's own operations did not; it must then outlive the module
 * while a file is still open, see tcp_rt_relay_exit().  Of what it
 * points to only relay's release is called then: debugfs's proxy fails
 * every read once the file is removed (relay_close(), in module exit),
 * and its removal waits for the reads in flight.
 */
int tcp_rt_relay_init(void)
{
#define TCP_RT_RELAY_FOPS(read_fn) {				\
		.open		= relay_file_operations.open,	\
		.read		= read_fn,			\
		.poll		= relay_file_operations.poll,	\
		.llseek		= relay_file_operations.llseek,	\
		.release	= relay_file_operations.release,	\
	}
	const struct file_operations fops[TCP_RT_VIEWS] = {
		[TCP_RT_VIEW_TEXT]	= TCP_RT_RELAY_FOPS(tcp_rt_relay_read),
		[TCP_RT_VIEW_BIN]	= TCP_RT_RELAY_FOPS(tcp_rt_relay_read_bin),
		[TCP_RT_VIEW_BIN_TEXT]	=
			TCP_RT_RELAY_FOPS(tcp_rt_relay_read_bin_text),
	};
#undef TCP_RT_RELAY_FOPS

	tcp_rt_relay_fops = kmemdup(fops, sizeof(fops), GFP_KERNEL);
	return tcp_rt_relay_fops ? 0 : -ENOMEM;
}

/*
 * Called after every channel is closed.  A file still open keeps its relay
 * buffer, and debugfs will call the release in these operations when it is
 * closed: then they are left allocated, and said so, rather than freed.
 */
void tcp_rt_relay_exit(void)
{
	if (tcp_rt_relay_readers) {
		pr_info("%u relay file(s) still open: %zu bytes of file operations kept for them\n",
			tcp_rt_relay_readers,
			TCP_RT_VIEWS * sizeof(*tcp_rt_relay_fops));
		kmemleak_not_leak(tcp_rt_relay_fops);
	} else {
		kfree(tcp_rt_relay_fops);
	}
	tcp_rt_relay_fops = NULL;
}

struct dentry *tcp_rt_relay_create_file(const char *name,
					struct dentry *parent, umode_t mode,
					struct rchan_buf *buf)
{
	return debugfs_create_file(name, mode, parent, buf,
				   &tcp_rt_relay_fops[TCP_RT_VIEW_TEXT]);
}

/*
 * A binary buffer's three files: @name, its records, @text_name, their
 * lines (the text view), and @peek_name, its peek ("Peek").  Its dentry
 * is @name's, which relay keeps; the others are removed with it
 * (tcp_rt_relay_remove_file()).  NULL if one cannot be made.  @cpu is the
 * buffer's: relay sets buf->cpu only once its create_buf_file callback
 * returned.
 */
struct dentry *tcp_rt_relay_create_bin_file(const char *name,
					    const char *text_name,
					    const char *peek_name,
					    struct dentry *parent, umode_t mode,
					    struct rchan_buf *buf,
					    unsigned int cpu)
{
	struct dentry *bin, *text, *peek;

	if (WARN_ON_ONCE(cpu >= nr_cpu_ids))
		return NULL;
	bin = debugfs_create_file(name, mode, parent, buf,
				  &tcp_rt_relay_fops[TCP_RT_VIEW_BIN]);
	if (IS_ERR_OR_NULL(bin))
		return NULL;
	text = debugfs_create_file(text_name, mode, parent, buf,
				   &tcp_rt_relay_fops[TCP_RT_VIEW_BIN_TEXT]);
	if (IS_ERR_OR_NULL(text))
		goto fail_text;
	peek = debugfs_create_file(peek_name, mode, parent, buf,
				   &tcp_rt_relay_peek_fops);
	if (IS_ERR_OR_NULL(peek))
		goto fail_peek;
	tcp_rt_relay_buf(buf->chan, cpu)->text_view = text;
	tcp_rt_relay_buf(buf->chan, cpu)->peek = peek;
	return bin;
fail_peek:
	debugfs_remove(text);
fail_text:
	debugfs_remove(bin);
	return NULL;
}

/*
 * relay_close() calls this before dropping its own reference to @dentry's
 * buffer; every other reference is a file open on it.  Once
 * debugfs_remove() returns no open is in flight and none can start.
 */
int tcp_rt_relay_remove_file(struct dentry *dentry)
{
	struct rchan_buf *buf = d_inode(dentry)->i_private;
	struct tcp_rt_relay_buf *rb = tcp_rt_relay_buf(buf->chan, buf->cpu);

	debugfs_remove(rb->peek);
	rb->peek = NULL;
	debugfs_remove(rb->text_view);
	rb->text_view = NULL;
	debugfs_remove(dentry);
	if (kref_read(&buf->kref) > 1)
		tcp_rt_relay_readers++;
	return 0;
}
