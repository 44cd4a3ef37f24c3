/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tcp_rt - how the logs (tcp_rt_log.c) and the stats (tcp_rt_stats.c) put
 * a record into their relay channel: as relay_write() would, with the two
 * orderings relay_write() does not give a reader that reads without the
 * writer's exclusion, as ours does (tcp_rt_relay.c, "Reading"):
 * relay_switch_subbuf() stores the ending sub-buffer's padding and then
 * raises subbufs_produced with no barrier between, and relay_write() raises
 * buf->offset with a plain store after copying the bytes.  x86's store
 * order hides both; arm64's does not.
 *
 * Callers run with interrupts off, as relay_write() does, and each buffer
 * has one writer at a time: a log buffer its CPU's, the stats' global
 * buffer the stats worker.
 */
#ifndef _TCP_RT_RELAY_H
#define _TCP_RT_RELAY_H

#include <linux/compiler.h>
#include <linux/relay.h>
#include <asm/barrier.h>

#include "tcp_rt_compat.h"

struct rchan *tcp_rt_relay_open(const char *base, struct dentry *parent,
				size_t subbuf_size, size_t n_subbufs,
				tcp_rt_relay_cb_const struct rchan_callbacks *cb,
				bool indexed);
void tcp_rt_relay_close(struct rchan *chan);
char *tcp_rt_relay_switch(struct rchan_buf *buf, size_t len);
void tcp_rt_relay_first_idx(struct rchan_buf *buf, void *subbuf, u64 idx);
u64 tcp_rt_relay_records_lost(struct rchan *chan);
u64 tcp_rt_relay_records_lost_cpu(struct rchan *chan, unsigned int cpu);

/*
 * Room for @len bytes at the current offset, after switching to the next
 * sub-buffer if they do not fit; NULL if relay refused the switch (a
 * flight recorder never does).
 */
static inline char *tcp_rt_relay_reserve(struct rchan_buf *buf, size_t len)
{
	if (likely(buf->offset + len <= buf->chan->subbuf_size))
		return (char *)buf->data + buf->offset;
	return tcp_rt_relay_switch(buf, len);
}

/* The record's bytes, up to @end, before the offset that covers them. */
static inline void tcp_rt_relay_commit(struct rchan_buf *buf, const char *end)
{
	/* pairs with tcp_rt_relay_copy()'s acquire of the offset */
	smp_store_release(&buf->offset, end - (char *)buf->data);
}

#endif /* _TCP_RT_RELAY_H */
