// SPDX-License-Identifier: GPL-2.0
/*
 * The relay files the logs (tcp_rt_log.c) and the stats (tcp_rt_stats.c)
 * are read by: relay's own open, poll and release, no mmap (debugfs
 * refuses it under kernel lockdown, and never forwarded it anyway), and a
 * read of our own that hands out whole records only (see "Reading"); the
 * calls their writers put a record with (see "Writing"); and the channels'
 * open and close, which give each buffer its switch count.
 *
 * Concurrency: tcp_rt_relay_fops is set up before the first channel opens
 * and released after the last one closed, both under the module's
 * init/exit serialisation; tcp_rt_relay_readers is only touched from
 * relay_close(), in module exit.  A buffer's reading position (relay's
 * subbufs_consumed and bytes_consumed) is changed by its readers only,
 * under its file's inode lock, as relay's own read does.  reads_lapped is
 * an atomic, bumped by readers of any file.  A buffer's switch count (see
 * "Writing") is changed by that buffer's one writer only, and lives as
 * long as its channel (tcp_rt_relay_open() to tcp_rt_relay_close()).
 */

#define pr_fmt(fmt) "tcp_rt: " fmt

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kmemleak.h>
#include <linux/relay.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "include/tcp_rt.h"
#include "include/tcp_rt_bin.h"
#include "include/tcp_rt_relay.h"

/* the text files' operations, then the binary files' */
static const struct file_operations *tcp_rt_relay_fops;
static const struct file_operations *tcp_rt_relay_bin_fops;
static unsigned int tcp_rt_relay_readers;
static atomic_long_t tcp_rt_relay_lapped = ATOMIC_LONG_INIT(0);

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
 * in the bounce copy (tcp_rt_bin_check()); one whose buffer cannot hold
 * the next record fails with -EINVAL, as /dev/kmsg's does (a record is at
 * most TCP_RT_REC_LEN + TCP_RT_REC_LEN_SEQ bytes, tcp_rt_log.c, or
 * TCP_RT_BIN_LEN_MAX).
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

/*
 * Copy the next bytes at @buf's reading position, at most @max, to @to:
 * how many (0: nothing to read now), or -EAGAIN if the writer overtook
 * them or the sub-buffer ended while they were copied.
 */
static ssize_t tcp_rt_relay_copy(struct rchan_buf *buf, char *to, size_t max)
{
	size_t size = buf->chan->subbuf_size, n = buf->chan->n_subbufs;
	unsigned long *switches = tcp_rt_relay_switches(buf);
	size_t produced, seen, slot, end, len;
	unsigned long sw;

	/* pairs with tcp_rt_relay_switch()'s release of the count */
	sw = smp_load_acquire(switches);
	/* pairs with tcp_rt_relay_switch()'s smp_wmb() */
	produced = smp_load_acquire(&buf->subbufs_produced);
	for (;;) {
		if (produced - buf->subbufs_consumed >= n) {
			/* lapped: the oldest sub-buffer not being written */
			buf->subbufs_consumed = produced - n + 1;
			buf->bytes_consumed = 0;
		}
		slot = buf->subbufs_consumed % n;
		if (buf->subbufs_consumed == produced) {
			/* mid-switch, the offset is the old sub-buffer's */
			if (sw & 1)
				return -EAGAIN;
			/* pairs with tcp_rt_relay_commit()'s release */
			end = min(smp_load_acquire(&buf->offset), size);
		} else {
			end = size - READ_ONCE(buf->padding[slot]);
		}
		if (buf->bytes_consumed < end)
			break;
		if (buf->subbufs_consumed == produced)
			return 0;
		buf->subbufs_consumed++;
		buf->bytes_consumed = 0;
	}

	len = min(end - buf->bytes_consumed, max);
	memcpy(to, buf->start + slot * size + buf->bytes_consumed, len);
	/* the copy before the second look: a switch it missed shows there */
	smp_rmb();
	seen = READ_ONCE(buf->subbufs_produced);
	if (seen - buf->subbufs_consumed >= n) {
		atomic_long_inc(&tcp_rt_relay_lapped);
		return -EAGAIN;
	}
	/*
	 * The current sub-buffer ended, or a switch to it was under way: its
	 * end was maybe another's.
	 */
	if (buf->subbufs_consumed == produced &&
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

/* A read of whole records: lines, or binary records (@bin). */
static ssize_t tcp_rt_relay_read_whole(struct file *filp, char __user *ubuf,
				       size_t count, bool bin)
{
	struct rchan_buf *buf = filp->private_data;
	unsigned int tries = 0;
	ssize_t err = 0, n;
	size_t done = 0, whole;
	char *bounce;

	if (!count)
		return 0;
	bounce = kmalloc(TCP_RT_READ_CHUNK, GFP_KERNEL);
	if (!bounce)
		return -ENOMEM;

	inode_lock(file_inode(filp));
	while (done < count) {
		n = tcp_rt_relay_copy(buf, bounce,
				      min_t(size_t, count - done,
					    TCP_RT_READ_CHUNK));
		if (n == -EAGAIN && ++tries <= TCP_RT_READ_TRIES)
			continue;
		if (n <= 0)
			break;
		whole = bin ? tcp_rt_whole_records(bounce, n) :
			      tcp_rt_whole_lines(bounce, n);
		if (!whole) {
			/* the next record does not fit in what is left */
			err = -EINVAL;
			break;
		}
		if (copy_to_user(ubuf + done, bounce, whole)) {
			err = -EFAULT;
			break;
		}
		done += whole;
		buf->bytes_consumed += whole;
	}
	inode_unlock(file_inode(filp));

	kfree(bounce);
	return done ? done : err;
}

static ssize_t tcp_rt_relay_read(struct file *filp, char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	return tcp_rt_relay_read_whole(filp, ubuf, count, false);
}

static ssize_t tcp_rt_relay_read_bin(struct file *filp, char __user *ubuf,
				     size_t count, loff_t *ppos)
{
	return tcp_rt_relay_read_whole(filp, ubuf, count, true);
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
 * A relay channel whose buffers have switch counts: its private data, one
 * count per buffer, indexed by the buffer's CPU (0 for a global buffer).
 * Close it with tcp_rt_relay_close().
 */
struct rchan *tcp_rt_relay_open(const char *base, struct dentry *parent,
				size_t subbuf_size, size_t n_subbufs,
				tcp_rt_relay_cb_const struct rchan_callbacks *cb)
{
	unsigned long *switches;
	struct rchan *chan;

	switches = kcalloc(nr_cpu_ids, sizeof(*switches), GFP_KERNEL);
	if (!switches)
		return NULL;
	chan = relay_open(base, parent, subbuf_size, n_subbufs, cb, switches);
	if (!chan)
		kfree(switches);
	return chan;
}

/* After relay_close() no read runs and none can start: see below. */
void tcp_rt_relay_close(struct rchan *chan)
{
	unsigned long *switches;

	if (!chan)
		return;
	switches = chan->private_data;
	relay_close(chan);
	kfree(switches);
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
	const struct file_operations fops = {
		.open		= relay_file_operations.open,
		.read		= tcp_rt_relay_read,
		.poll		= relay_file_operations.poll,
		.llseek		= relay_file_operations.llseek,
		.release	= relay_file_operations.release,
	}, bin_fops = {
		.open		= relay_file_operations.open,
		.read		= tcp_rt_relay_read_bin,
		.poll		= relay_file_operations.poll,
		.llseek		= relay_file_operations.llseek,
		.release	= relay_file_operations.release,
	};

	tcp_rt_relay_fops = kmemdup(&fops, sizeof(fops), GFP_KERNEL);
	tcp_rt_relay_bin_fops = kmemdup(&bin_fops, sizeof(bin_fops),
					GFP_KERNEL);
	if (tcp_rt_relay_fops && tcp_rt_relay_bin_fops)
		return 0;
	kfree(tcp_rt_relay_fops);
	kfree(tcp_rt_relay_bin_fops);
	tcp_rt_relay_fops = NULL;
	tcp_rt_relay_bin_fops = NULL;
	return -ENOMEM;
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
			tcp_rt_relay_readers, 2 * sizeof(*tcp_rt_relay_fops));
		kmemleak_not_leak(tcp_rt_relay_fops);
		kmemleak_not_leak(tcp_rt_relay_bin_fops);
	} else {
		kfree(tcp_rt_relay_fops);
		kfree(tcp_rt_relay_bin_fops);
	}
	tcp_rt_relay_fops = NULL;
	tcp_rt_relay_bin_fops = NULL;
}

struct dentry *tcp_rt_relay_create_file(const char *name,
					struct dentry *parent, umode_t mode,
					struct rchan_buf *buf)
{
	return debugfs_create_file(name, mode, parent, buf, tcp_rt_relay_fops);
}

struct dentry *tcp_rt_relay_create_bin_file(const char *name,
					    struct dentry *parent, umode_t mode,
					    struct rchan_buf *buf)
{
	return debugfs_create_file(name, mode, parent, buf,
				   tcp_rt_relay_bin_fops);
}

/*
 * relay_close() calls this before dropping its own reference to @dentry's
 * buffer; every other reference is a file open on it.  Once
 * debugfs_remove() returns no open is in flight and none can start.
 */
int tcp_rt_relay_remove_file(struct dentry *dentry)
{
	struct rchan_buf *buf = d_inode(dentry)->i_private;

	debugfs_remove(dentry);
	if (kref_read(&buf->kref) > 1)
		tcp_rt_relay_readers++;
	return 0;
}
