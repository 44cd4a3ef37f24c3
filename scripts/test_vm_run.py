#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Tests of scripts/vm-run's kernel log check, on crafted kernel logs: which
line fails a run, and what it says of tcp_rt (loaded yet? in the trace?);
and of the QEMU options it takes from the environment.

    python3 scripts/test_vm_run.py [-v]
"""

import importlib.machinery
import importlib.util
import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)                # vm-run imports kimage
_loader = importlib.machinery.SourceFileLoader("vm_run", os.path.join(HERE, "vm-run"))
_spec = importlib.util.spec_from_loader("vm_run", _loader)
vm_run = importlib.util.module_from_spec(_spec)
_loader.exec_module(vm_run)

BOOT = """\
[    0.000000] Linux version 6.1.192-tcp-rt-debug
[    0.006812] tsc: Unable to calibrate against PIT
"""
# The report issue 20 quotes: at boot, long before any module.
BOOT_KASAN = """\
[    0.006890] ==================================================================
[    0.006891] BUG: KASAN: wild-memory-access in do_raw_spin_lock+0x11f/0x270
[    0.006892] Write of size 4 at addr ff110000010720a8 by task swapper/0/0
[    0.006893] Call Trace:
[    0.006894]  handle_edge_irq+0x1a/0x2c0
[    0.006895]  __common_interrupt+0x6c/0x130
[    0.006896] ==================================================================
"""
START = "vm-init: starting the command\n"
LOADED = """\
[   12.100000] tcp_rt: loading out-of-tree module taints kernel.
[   12.100100] tcp_rt: loaded, version 0.2
"""
# A use-after-free in the module's code, made up for the test.
MODULE_KASAN = """\
[   20.000000] BUG: KASAN: slab-use-after-free in tcp_rt_hook_xmit+0x2c/0x90 [tcp_rt]
[   20.000001] Read of size 8 at addr ffff888004c3a000 by task rt_peer/321
[   20.000002] Call Trace:
[   20.000003]  <IRQ>
[   20.000004]  tcp_rt_ftrace+0x61/0xa0 [tcp_rt]
[   20.000005]  tcp_rate_skb_sent+0x5/0x120
"""
# A lockdep report from elsewhere while the module is loaded.
OTHER_LOCKDEP = """\
[   30.000000] WARNING: possible circular locking dependency detected
[   30.000001] kworker/0:1/42 is trying to acquire lock:
[   30.000002]  (&pool->lock){-.-.}-{2:2}, at: __queue_work+0x1c1/0x6f0
[   30.000003] ---[ end trace 0000000000000000 ]---
[   30.000004]  tcp_rt_unrelated+0x1/0x2 [tcp_rt]
"""


# What make check-debug's PREEMPT_RT kernel prints for a spinlock_t taken
# with preemption off (made up for the test, after 6.12's formats); the
# lockdep one begins with "[ BUG:", not "BUG:".
RT_SLEEP = """\
[   40.000000] BUG: sleeping function called from invalid context at kernel/locking/spinlock_rt.c:48
[   40.000001] in_atomic(): 1, irqs_disabled(): 0, non_block: 0, pid: 321, name: rt_peer
[   40.000002] preempt_count: 1, expected: 0
[   40.000003] Call Trace:
[   40.000004]  rt_spin_lock+0x4e/0x1a0
[   40.000005]  tcp_rt_conn_alloc+0x41/0x1c0 [tcp_rt]
"""
RT_SCHED = "[   41.000000] BUG: scheduling while atomic: rt_peer/321/0x00000002\n"
WAIT_CONTEXT = """\
[   42.000000] =============================
[   42.000001] [ BUG: Invalid wait context ]
[   42.000002] 6.12.117-tcp-rt-debug-rt #1 Not tainted
[   42.000003] -----------------------------
"""


class LogCheckTest(unittest.TestCase):

    def test_clean_log_passes(self):
        self.assertIsNone(vm_run.log_problem(BOOT + START + LOADED))
        self.assertIsNone(vm_run.early_problem(BOOT + START + LOADED))

    def test_boot_report_before_the_module(self):
        kind, line, who = vm_run.log_problem(BOOT + BOOT_KASAN + START + LOADED)
        self.assertEqual(kind, "KASAN report")
        self.assertTrue(line.startswith("BUG: KASAN: wild-memory-access"))
        self.assertEqual(who, "before tcp_rt was loaded, no tcp_rt frame")

    def test_boot_report_is_early_and_boots_again(self):
        # before the marker: vm-run may boot again; during the boot (no
        # marker yet) too
        self.assertEqual(vm_run.early_problem(BOOT + BOOT_KASAN)[0], "KASAN report")
        self.assertEqual(vm_run.early_problem(BOOT + BOOT_KASAN + START)[0],
                         "KASAN report")

    def test_module_report_fails_with_its_attribution(self):
        text = BOOT + START + LOADED + MODULE_KASAN
        self.assertIsNone(vm_run.early_problem(text))   # never a reboot
        kind, line, who = vm_run.log_problem(text)
        self.assertEqual(kind, "KASAN report")
        self.assertIn("tcp_rt_hook_xmit", line)
        self.assertEqual(who, "after tcp_rt was loaded, tcp_rt in its trace")

    def test_report_elsewhere_while_loaded(self):
        # a tcp_rt frame after the report's end marker is not its own
        kind, _, who = vm_run.log_problem(BOOT + START + LOADED + OTHER_LOCKDEP)
        self.assertEqual(kind, "lockdep report")
        self.assertEqual(who, "after tcp_rt was loaded, no tcp_rt frame")

    def test_sleep_in_atomic_context(self):
        kind, line, who = vm_run.log_problem(BOOT + START + LOADED + RT_SLEEP)
        self.assertEqual(kind, "sleep in atomic context")
        self.assertTrue(line.startswith("BUG: sleeping function called"))
        self.assertEqual(who, "after tcp_rt was loaded, tcp_rt in its trace")
        self.assertEqual(vm_run.log_problem(BOOT + START + RT_SCHED)[0],
                         "sleep in atomic context")
        kind, line, _ = vm_run.log_problem(BOOT + START + WAIT_CONTEXT)
        self.assertEqual((kind, line), ("lockdep report", "[ BUG: Invalid wait context ]"))

    def test_marker_is_no_init_failure(self):
        path = os.path.join(os.environ.get("TMPDIR", "/tmp"),
                            f"test_vm_run.{os.getpid()}.log")
        self.addCleanup(os.unlink, path)
        with open(path, "w", encoding="ascii") as f:
            f.write(BOOT + START)
        self.assertIsNone(vm_run.init_error(path))
        with open(path, "a", encoding="ascii") as f:
            f.write("vm-init: cannot mount the project\n")
        self.assertEqual(vm_run.init_error(path), "vm-init: cannot mount the project")


class QemuArgvTest(unittest.TestCase):

    ENV = ("VM_CPU", "VM_PLUGIN", "VM_ICOUNT", "VM_ACCEL", "VM_MODULES_DIR", "VM_APPEND",
           "VM_SHARE")

    def setUp(self):
        saved = {k: os.environ.get(k) for k in self.ENV}
        self.addCleanup(self.restore, saved)
        for k in self.ENV:
            os.environ.pop(k, None)
        os.environ["VM_ACCEL"] = "tcg"

    @staticmethod
    def restore(saved):
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    @staticmethod
    def argv():
        return vm_run.qemu_argv({"cpus": 1, "mem": 512}, "/k", "/i", "/l", "/r",
                                "/s", "/", "6.1")

    @staticmethod
    def option(argv, name):
        return argv[argv.index(name) + 1] if name in argv else None

    def test_default_cpu_no_plugin(self):
        argv = self.argv()
        self.assertEqual(self.option(argv, "-cpu"), "max")
        self.assertIsNone(self.option(argv, "-plugin"))

    def test_cpu_and_plugin_from_the_environment(self):
        # check-debug's guest: no 5-level paging (KASAN's boot false positive)
        os.environ["VM_CPU"] = "max,la57=off"
        os.environ["VM_PLUGIN"] = "tools/bench/insn_plugin.so,marker=0x1,out=/tmp/d"
        argv = self.argv()
        self.assertEqual(self.option(argv, "-cpu"), "max,la57=off")
        self.assertEqual(self.option(argv, "-plugin"),
                         "tools/bench/insn_plugin.so,marker=0x1,out=/tmp/d")

    def test_kernel_command_line(self):
        base = self.option(self.argv(), "-append")
        self.assertTrue(base.startswith("console=ttyS0 "))
        os.environ["VM_APPEND"] = "possible_cpus=80"
        self.assertEqual(self.option(self.argv(), "-append"), base + " possible_cpus=80")

    def test_extra_share(self):
        # selftests/deb_install.sh's chroot: read-only, tag "share"
        self.assertFalse([a for a in self.argv() if "mount_tag=share" in a])
        with tempfile.TemporaryDirectory() as d:
            os.environ["VM_SHARE"] = d
            shares = [a for a in self.argv() if "mount_tag=share" in a]
            self.assertEqual(len(shares), 1)
            self.assertTrue(shares[0].startswith(f"local,path={os.path.realpath(d)},"))
            self.assertIn("readonly=on", shares[0])
            os.environ["VM_SHARE"] = os.path.join(d, "missing")
            with self.assertRaises(vm_run.Fail):
                self.argv()


if __name__ == "__main__":
    unittest.main()
