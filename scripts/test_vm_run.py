#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Tests of scripts/vm-run's kernel log check, on crafted kernel logs: which
line fails a run, and what it says of tcp_rt (loaded yet? in the trace?);
of the QEMU options it takes from the environment; and of how it tells
and boots an arm64 kernel.

    python3 scripts/test_vm_run.py [-v]
"""

import gzip
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


# arm64's formats (made up for the test, after 7.x's arm64 die() and
# __do_kernel_fault()): the fault's line, then die()'s "Internal error".
ARM64_OOPS = """\
[   50.000000] Unable to handle kernel NULL pointer dereference at virtual address 0000000000000010
[   50.000001] Mem abort info:
[   50.000002]   ESR = 0x0000000096000005
[   50.000003] Internal error: Oops: 0000000096000005 [#1]  SMP
[   50.000004] Modules linked in: tcp_rt(OE) sch_netem veth
[   50.000005] pc : tcp_rt_hook_xmit+0x2c/0x90 [tcp_rt]
[   50.000006] Call trace:
[   50.000007]  tcp_rt_hook_xmit+0x2c/0x90 [tcp_rt]
[   50.000008]  tcp_rate_skb_sent+0x5/0x120
"""
# The watchdog's report (6.1's format, made up for the test), the RCU stall
# that often comes with it, and a report of a boot's.
SOFT_LOCKUP = ("[  900.000000] watchdog: BUG: soft lockup - CPU#0 stuck for 44s! "
               "[ksoftirqd/0:15]\n")
RCU_STALL = "[  880.000000] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:\n"
ARM64_BUG = """\
[   51.000000] kernel BUG at net/ipv4/tcp_output.c:1234!
[   51.000001] Internal error: Oops - BUG: 00000000f2000800 [#1]  SMP
"""
ARM64_SERROR = "[   52.000000] SError Interrupt on CPU1, code 0x00000000be000011 -- SError\n"
ARM64_BAD_MODE = ("[   53.000000] Bad mode in Synchronous Abort handler detected on CPU0, "
                  "code 0x02000000 -- Unknown\n")


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

    def test_arm64_oops(self):
        kind, line, who = vm_run.log_problem(BOOT + START + LOADED + ARM64_OOPS)
        self.assertEqual(kind, "oops")
        self.assertTrue(line.startswith("Unable to handle kernel NULL pointer dereference"))
        self.assertEqual(who, "after tcp_rt was loaded, tcp_rt in its trace")
        # die()'s line alone (e.g. an undefined instruction) fails too
        kind, line, _ = vm_run.log_problem(BOOT + START + ARM64_OOPS.split("\n", 3)[3])
        self.assertEqual((kind, line[:16]), ("oops", "Internal error: "))
        self.assertEqual(vm_run.log_problem(BOOT + START + ARM64_BUG)[:2],
                         ("bug", "kernel BUG at net/ipv4/tcp_output.c:1234!"))
        self.assertEqual(vm_run.log_problem(BOOT + START + ARM64_SERROR)[0], "oops")
        self.assertEqual(vm_run.log_problem(BOOT + START + ARM64_BAD_MODE)[0], "oops")
        # at boot: early, booted again
        self.assertEqual(vm_run.early_problem(BOOT + ARM64_OOPS)[0], "oops")

    def test_arm64_words_elsewhere_pass(self):
        # anchored: another subsystem's message that merely contains them
        text = (BOOT + START + "[ 60.0] XFS (vda): Internal error xfs_trans_cancel at line 1\n"
                "[ 60.1] foo: Unable to handle kernel requests yet\n")
        self.assertIsNone(vm_run.log_problem(text))

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


    def test_soft_lockup(self):
        kind, line, who = vm_run.log_problem(BOOT + START + LOADED + SOFT_LOCKUP)
        self.assertEqual(kind, "soft lockup")
        self.assertTrue(line.startswith("watchdog: BUG: soft lockup - CPU#0"))
        self.assertEqual(who, "after tcp_rt was loaded, no tcp_rt frame")
        self.assertEqual(vm_run.log_problem(BOOT + START + "[ 9.0] NMI watchdog: Watchdog "
                                            "detected hard LOCKUP on cpu 1\n")[0],
                         "soft lockup")


class StuckWatchTest(unittest.TestCase):

    def setUp(self):
        self.path = os.path.join(os.environ.get("TMPDIR", "/tmp"),
                                 f"test_vm_run.stuck.{os.getpid()}.log")
        self.addCleanup(os.unlink, self.path)
        self.write(BOOT, "w")
        self.watch = vm_run.StuckWatch(self.path)

    def write(self, text, mode="a"):
        with open(self.path, mode, encoding="ascii") as f:
            f.write(text)

    def test_a_silent_command_after_a_soft_lockup_is_stopped(self):
        wait, poll = vm_run.STUCK_WAIT, vm_run.STUCK_POLL
        w = self.watch
        self.write(START + LOADED)
        self.assertIsNone(w.stuck(0, 0))
        self.write(SOFT_LOCKUP[:30])        # half a line: not read yet
        self.assertIsNone(w.stuck(poll, 0))
        self.assertIsNone(w.report)
        self.write(SOFT_LOCKUP[30:])
        self.assertIsNone(w.stuck(2 * poll, 0))
        self.assertEqual(w.report[0], "soft lockup")
        # the command printed after the report: it is getting on
        self.assertIsNone(w.stuck(2 * poll + wait, 3 * poll))
        said = w.stuck(3 * poll + wait, 3 * poll)
        self.assertIn("guest kernel soft lockup: watchdog: BUG: soft lockup - CPU#0", said)
        self.assertIn(f"the command silent for {wait} s after it", said)

    def test_other_reports_and_the_boots_are_left_to_the_end(self):
        wait = vm_run.STUCK_WAIT
        w = self.watch
        self.write(RCU_STALL.replace("880.", "1."))     # the boot's: booted again instead
        self.write(START + LOADED + MODULE_KASAN)       # not a stuck guest
        self.assertIsNone(w.stuck(0, 0))
        self.assertIsNone(w.stuck(2 * wait, 0))
        self.assertIsNone(w.report)
        self.write(RCU_STALL)
        self.assertIsNone(w.stuck(3 * wait, 0))
        self.assertEqual(w.report[0], "RCU stall")
        self.assertIn("RCU stall", w.stuck(4 * wait, 0))


class BootWatchTest(unittest.TestCase):

    def test_a_silent_boot_is_told_after_boot_stall(self):
        w = vm_run.BootWatch(0)
        stall = vm_run.BOOT_STALL
        self.assertIsNone(w.stalled("", 1))
        self.assertIsNone(w.stalled("[ 0.1] a\n", 2))
        self.assertIsNone(w.stalled("[ 0.1] a\n", 2 + stall))
        said = w.stalled("[ 0.1] a\n[ 2.2] Loading X\n", 3)
        self.assertIsNone(said)                 # it grew: progress
        self.assertIsNone(w.stalled("[ 0.1] a\n[ 2.2] Loading X\n", 3 + stall))
        said = w.stalled("[ 0.1] a\n[ 2.2] Loading X\n", 3 + stall + 0.5)
        self.assertIn(f"no progress for {stall} s", said)
        self.assertIn('silent after "[ 2.2] Loading X"', said)


class QemuArgvTest(unittest.TestCase):

    ENV = ("VM_CPU", "VM_PLUGIN", "VM_ICOUNT", "VM_ACCEL", "VM_MODULES_DIR", "VM_APPEND",
           "VM_SHARE", "VM_CPU_QUOTA", "VM_SLOWED")

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
    def argv(arch="amd64", root="/"):
        return vm_run.qemu_argv({"cpus": 1, "mem": 512}, "/k", "/i", "/l", "/r",
                                "/s", "/", "6.1", arch, root)

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

    def test_slowed_guest_waits_longer_for_stalls(self):
        base = self.option(self.argv(), "-append")
        self.assertNotIn("rcu_cpu_stall_timeout", base)
        for k, v in (("VM_SLOWED", "1"), ("VM_CPU_QUOTA", "50")):
            os.environ[k] = v
            os.environ["VM_APPEND"] = "possible_cpus=80"
            self.assertEqual(self.option(self.argv(), "-append"),
                             base + " rcupdate.rcu_cpu_stall_timeout=120 watchdog_thresh=60"
                             " possible_cpus=80")
            os.environ.pop(k)

    def test_cpu_quota_value(self):
        self.assertIsNone(vm_run.cpu_quota_pct())
        os.environ["VM_CPU_QUOTA"] = "50"
        self.assertEqual(vm_run.cpu_quota_pct(), 50)
        for bad in ("0", "half", "-5", "10001"):
            os.environ["VM_CPU_QUOTA"] = bad
            with self.assertRaises(vm_run.Fail):
                vm_run.cpu_quota_pct()

    def test_cpu_cgroup_v1_and_v2(self):
        with tempfile.TemporaryDirectory() as d:
            v1, v2, none = (os.path.join(d, n) for n in ("v1", "v2", "none"))
            for n in (v1, v2, none):
                os.mkdir(n)
            open(os.path.join(v1, "cpu.cfs_quota_us"), "w").close()
            with open(os.path.join(v2, "cgroup.controllers"), "w") as f:
                f.write("cpuset cpu io memory\n")
            open(os.path.join(v2, "cgroup.subtree_control"), "w").close()
            # v2 first where it has the cpu controller: 50 % of one CPU
            path, procs = vm_run.cpu_cgroup(50, (v2, v1))
            self.assertEqual(os.path.dirname(path), v2)
            self.assertEqual(procs, os.path.join(path, "cgroup.procs"))
            with open(os.path.join(path, "cpu.max")) as f:
                self.assertEqual(f.read(), "50000 100000")
            with open(os.path.join(v2, "cgroup.subtree_control")) as f:
                self.assertEqual(f.read(), "+cpu")
            # v1: the period and the quota; 150 %: a CPU and a half
            path, _ = vm_run.cpu_cgroup(150, (none, v1))
            self.assertEqual(os.path.dirname(path), v1)
            with open(os.path.join(path, "cpu.cfs_quota_us")) as f:
                self.assertEqual(f.read(), "150000")
            with open(os.path.join(path, "cpu.cfs_period_us")) as f:
                self.assertEqual(f.read(), "100000")
            with self.assertRaises(vm_run.Fail):
                vm_run.cpu_cgroup(50, (none,))

    def test_amd64_argv_as_before(self):
        # the x86-64 guest's command line as it was before arm64 guests
        want = ["qemu-system-x86_64", "-nodefaults", "-no-user-config", "-display", "none",
                "-monitor", "none", "-no-reboot", "-accel", "tcg", "-cpu", "max",
                "-smp", "1", "-m", "512", "-kernel", "/k", "-initrd", "/i",
                "-append", "console=ttyS0 loglevel=8 printk.devkmsg=on panic=-1 "
                "mitigations=off pci=noacpi tsc=reliable",
                "-chardev", "file,id=con,path=/l", "-serial", "chardev:con",
                "-virtfs", "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,"
                "multidevs=remap",
                "-virtfs", "local,path=/s,mount_tag=vmrun,security_model=none,readonly=on",
                "-device", "virtio-serial-pci"]
        if os.path.exists(vm_run.QBOOT):
            want += ["-bios", vm_run.QBOOT]
        for p in vm_run.PORTS:
            want += ["-chardev", f"socket,id={p},path=/r/{p}",
                     "-device", f"virtserialport,chardev={p},name=vmrun.{p}"]
        self.assertEqual(vm_run.qemu_argv({"cpus": 1, "mem": 512}, "/k", "/i", "/l", "/r",
                                          "/s", "/", "6.1"), want)
        self.assertEqual(self.argv(), want)

    def test_arm64_machine(self):
        argv = self.argv("arm64", "/cache/guest-root/arm64-x")
        self.assertEqual(argv[0], "qemu-system-aarch64")
        self.assertEqual(self.option(argv, "-machine"), "virt")
        self.assertEqual(self.option(argv, "-accel"), "tcg")
        self.assertEqual(self.option(argv, "-cpu"), "max,pauth-impdef=on")
        append = self.option(argv, "-append")
        self.assertTrue(append.startswith("console=ttyAMA0 loglevel=8 "))
        self.assertNotIn("pci=noacpi", append)   # x86's
        self.assertNotIn("-bios", argv)           # qboot is x86's; virt boots the Image
        roots = [a for a in argv if "mount_tag=hostroot" in a]
        self.assertEqual(roots, ["local,path=/cache/guest-root/arm64-x,mount_tag=hostroot,"
                                 "security_model=none,readonly=on,multidevs=remap"])
        os.environ["VM_CPU"] = "cortex-a72"
        os.environ["VM_APPEND"] = "nokaslr"
        argv = self.argv("arm64", "/r")
        self.assertEqual(self.option(argv, "-cpu"), "cortex-a72")
        self.assertTrue(self.option(argv, "-append").endswith(" mitigations=off nokaslr"))

    def test_arm64_accel_is_tcg(self):
        os.environ.pop("VM_ACCEL")
        self.assertEqual(self.option(self.argv("arm64"), "-accel"), "tcg")
        os.environ["VM_ACCEL"] = "tcg,thread=single"   # check-kernels' reload VM
        self.assertEqual(self.option(self.argv("arm64"), "-accel"), "tcg,thread=single")
        os.environ["VM_ACCEL"] = "kvm"
        with self.assertRaises(vm_run.Fail):
            self.argv("arm64")

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


class Arm64KernelTest(unittest.TestCase):
    """How vm-run tells an arm64 kernel and what it boots it with."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = tmp.name

    def write(self, name, data):
        path = os.path.join(self.dir, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def test_image_arch(self):
        image = bytearray(4096)
        image[0x38:0x3c] = b"ARM\x64"                     # arm64 Image header magic
        self.assertEqual(vm_run.image_arch(self.write("Image", image)), "arm64")
        self.assertEqual(vm_run.image_arch(self.write("Image.gz", gzip.compress(bytes(image)))),
                         "arm64")
        bz = bytearray(4096)
        bz[0x202:0x206] = b"HdrS"                        # x86 boot protocol header
        self.assertEqual(vm_run.image_arch(self.write("bzImage", bz)), "amd64")
        with self.assertRaises(vm_run.Fail):
            vm_run.image_arch(os.path.join(self.dir, "missing"))

    def test_arm64_image_booted_as_it_is(self):
        image = self.write("Image", b"\0" * 0x38 + b"ARM\x64")
        self.assertEqual(vm_run.guest_kernel(image, "7.3.4+deb13-arm64", self.dir, "arm64"), image)
        self.assertEqual(os.listdir(self.dir), ["Image"])  # nothing cached

    def cmd_sh(self, arch):
        share = tempfile.mkdtemp(dir=self.dir)
        vm_run.write_share(share, ["true"], "/p", "r", arch)
        with open(os.path.join(share, "cmd.sh"), encoding="utf-8") as f:
            return f.read().splitlines()

    def test_emulated_guest_is_slow(self):
        # the selftests' slack for an emulated arm64 guest, unless given
        saved = os.environ.pop("TCP_RT_SLOW", None)
        self.addCleanup(lambda: saved is None or os.environ.update(TCP_RT_SLOW=saved))
        self.assertIn("export TCP_RT_SLOW=2", self.cmd_sh("arm64"))
        self.assertFalse([ln for ln in self.cmd_sh("amd64") if "TCP_RT_SLOW" in ln])
        os.environ["TCP_RT_SLOW"] = "8"                  # check-debug's
        self.assertIn("export TCP_RT_SLOW=8", self.cmd_sh("arm64"))
        os.environ.pop("TCP_RT_SLOW")

    def test_busybox_from_the_guest_root(self):
        root = os.path.join(self.dir, "root")
        bb = self.write("root/usr/bin/busybox", b"\x7fELF")
        os.symlink("usr/bin", os.path.join(root, "bin"))  # merged /usr
        self.assertEqual(vm_run.root_busybox(root), bb)
        os.unlink(bb)
        os.symlink("/bin/busybox", bb)                    # would be the host's
        with self.assertRaises(vm_run.Fail):
            vm_run.root_busybox(root)

    def test_amd64_root_is_the_host(self):
        self.assertEqual(vm_run.guest_root("amd64"), "/")


if __name__ == "__main__":
    unittest.main()
