// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin for tools/bench/insns: it counts the guest's executed
 * instructions by the start address of the translation block that ran
 * them (and how often each block ran), and each time the guest runs the
 * block at MARKER (the entry point of tools/bench/marker) writes the counts
 * to OUT.N, N = 0, 1, ..., and zeroes them.  So a window of guest work
 * between two runs of the marker is counted exactly, kernel and processes
 * alike, whatever the host's load.
 *
 *   qemu-system-x86_64 ... -plugin tools/bench/insn_plugin.so,marker=0xADDR,out=PREFIX
 *
 * One vCPU only (make bench's icount guest): counters are bumped inline,
 * without atomics.  A block counts all its instructions when it starts, so
 * one left by an exception midway counts a few too many.
 *
 * Debian ships no qemu-plugin.h: the few declarations of QEMU's plugin
 * interface used here are written out below (its version 1: QEMU 5.2 to
 * 8.1, Debian 12 has 7.2).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef uint64_t qemu_plugin_id_t;

typedef struct {
	const char *target_name;
	struct {
		int min;
		int cur;
	} version;
	bool system_emulation;
	union {
		struct {
			int smp_vcpus;
			int max_vcpus;
		} system;
	};
} qemu_info_t;

struct qemu_plugin_tb;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };

typedef void (*tb_trans_cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*vcpu_udata_cb)(unsigned int vcpu, void *data);
typedef void (*udata_cb)(qemu_plugin_id_t id, void *data);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, vcpu_udata_cb cb,
					  enum qemu_plugin_cb_flags flags, void *data);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
					      enum qemu_plugin_op op, void *ptr,
					      uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, udata_cb cb, void *data);

EXPORT int qemu_plugin_version = 1;
EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
			       int argc, char **argv);

/* One per translation: a block translated again gets another. */
struct block {
	uint64_t vaddr;
	uint64_t insns;		/* executed, since the last dump */
	uint64_t runs;		/* times the block ran, since the last dump */
};

#define CHUNK 65536
struct chunk {
	struct chunk *next;
	size_t used;
	struct block b[CHUNK];
};

static struct chunk *chunks;
static uint64_t marker;
static const char *out;
static unsigned int dumps;

static struct block *block_new(uint64_t vaddr)
{
	struct chunk *c = chunks;

	if (!c || c->used == CHUNK) {
		c = calloc(1, sizeof(*c));
		if (!c) {
			fprintf(stderr, "insn_plugin: out of memory\n");
			abort();
		}
		c->next = chunks;
		chunks = c;
	}
	c->b[c->used].vaddr = vaddr;
	return &c->b[c->used++];
}

/* "vaddr instructions runs" per block that ran since the last dump */
static void dump(unsigned int vcpu, void *data)
{
	char path[4096];
	struct chunk *c;
	FILE *f;
	size_t i;

	(void)vcpu;
	(void)data;
	snprintf(path, sizeof(path), "%s.%u", out, dumps++);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		return;
	}
	for (c = chunks; c; c = c->next)
		for (i = 0; i < c->used; i++) {
			if (!c->b[i].insns)
				continue;
			fprintf(f, "%" PRIx64 " %" PRIu64 " %" PRIu64 "\n",
				c->b[i].vaddr, c->b[i].insns, c->b[i].runs);
			c->b[i].insns = 0;
			c->b[i].runs = 0;
		}
	if (fclose(f))
		perror(path);
}

static void translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
	struct block *b = block_new(vaddr);

	(void)id;
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &b->insns,
						 qemu_plugin_tb_n_insns(tb));
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &b->runs, 1);
	if (vaddr == marker)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, dump, QEMU_PLUGIN_CB_NO_REGS, NULL);
}

static void done(qemu_plugin_id_t id, void *data)
{
	struct chunk *c;

	(void)id;
	(void)data;
	while (chunks) {
		c = chunks;
		chunks = c->next;
		free(c);
	}
}

int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	int i;

	if (!info->system_emulation || info->system.smp_vcpus != 1) {
		fprintf(stderr, "insn_plugin: one vCPU of system emulation only\n");
		return -1;
	}
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "marker=", 7)) {
			marker = strtoull(argv[i] + 7, NULL, 0);
		} else if (!strncmp(argv[i], "out=", 4)) {
			out = argv[i] + 4;
		} else {
			fprintf(stderr, "insn_plugin: unknown argument %s\n", argv[i]);
			return -1;
		}
	}
	if (!marker || !out) {
		fprintf(stderr, "insn_plugin: needs marker=ADDR and out=PREFIX\n");
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
	qemu_plugin_register_atexit_cb(id, done, NULL);
	return 0;
}
