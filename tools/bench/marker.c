// SPDX-License-Identifier: GPL-2.0
/*
 * tools/bench/insns' marker: a static program, no libc, whose entry point
 * insn_plugin.so watches for.  Running it ends one counted window of guest
 * work and begins the next; it exits at once.
 */
void _start(void)
{
	__asm__ volatile("mov $60, %eax\n\t"	/* exit(0) */
			 "xor %edi, %edi\n\t"
			 "syscall");
}
