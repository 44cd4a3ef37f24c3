# SPDX-License-Identifier: GPL-2.0
#
# tcp_rt: build the module against KDIR, test it in a VM that boots the
# matching Debian kernel.  `make check` is the one test command.

# KERNEL=<name> builds for a kernel of the matrix (scripts/kernels list),
# with that kernel's own compiler (in its chroot where it needs one).
ifdef KERNEL
KDIR := $(shell scripts/kernels kdir $(KERNEL))
KRUN := scripts/kernels run $(KERNEL)
endif
KDIR ?= $(shell scripts/kdir)
PWD  := $(CURDIR)

.PHONY: all modules install clean check check-full check-debug check-kernels dist demo bench bench-insns sparse \
	checkpatch selftests deps tcprt deadhook deb progs

all: modules tcprt

tcprt:
	$(MAKE) -C tools/tcprt

deps:
	@scripts/install-deps

modules:
	$(KRUN) $(MAKE) -C $(KDIR) M=$(PWD) W=1 modules

# The module again, with its ACK hook on a function no loopback exchange
# calls (TCP_RT_TEST_DEAD_HOOK), in selftests/deadhook/: the load-time hook
# check must refuse it (selftests/tcp_rt_module.sh); and with the time
# breakdown's write hook there (TCP_RT_TEST_DEAD_WRITE_HOOK), in
# selftests/deadhook-write/: log_ext must refuse the breakdown's fields
# (selftests/tcp_rt_breakdown.sh); and with the series' receive hook
# there instead of tcp_rcv_established (TCP_RT_TEST_DEAD_RCV_HOOK), in
# selftests/deadhook-rcv/: a run that counts received segments must be
# refused (selftests/tcp_rt_series.sh).
DEADHOOK := selftests/deadhook
DEADHOOK_WRITE := selftests/deadhook-write
DEADHOOK_RCV := selftests/deadhook-rcv
define deadhook_build
	@mkdir -p $(1)/include
	@for f in Kbuild $(wildcard tcp_rt*.c); do ln -sfn ../../$$f $(1)/$$f; done
	@for f in $(wildcard include/*.h); do ln -sfn ../../../$$f $(1)/$$f; done
	$(KRUN) $(MAKE) -C $(KDIR) M=$(PWD)/$(1) $(2)=y modules
endef
deadhook:
	$(call deadhook_build,$(DEADHOOK),TCP_RT_TEST_DEAD_HOOK)
	$(call deadhook_build,$(DEADHOOK_WRITE),TCP_RT_TEST_DEAD_WRITE_HOOK)
	$(call deadhook_build,$(DEADHOOK_RCV),TCP_RT_TEST_DEAD_RCV_HOOK)

sparse:
	$(MAKE) -C $(KDIR) M=$(PWD) W=1 C=2 modules

install: modules tcprt
	$(MAKE) -C $(KDIR) M=$(PWD) modules_install
	depmod -a $(shell cat $(KDIR)/include/config/kernel.release)
	$(MAKE) -C tools/tcprt install

selftests:
	$(MAKE) -C selftests KDIR=$(KDIR)

# What the VM runs besides the module: selftests' programs, tools/bench's
# rt_load and tcprt, for KERNEL's architecture, in place.  For an arm64
# kernel they are cross-built with Debian's aarch64 compiler against the
# root file system its guest runs on (scripts/guest-root, made on first use):
# the same glibc and libcurl.  A later native build (or plain make progs)
# rebuilds them for the host.
PROGS_ARCH = $(if $(KERNEL),$(shell scripts/kernels arch $(KERNEL)),amd64)
progs:
	@cc="$$(scripts/guest-root cc $(PROGS_ARCH))" && \
	$(MAKE) -C selftests CC="$$cc" && \
	$(MAKE) -C tools/bench rt_load CC="$$cc" && \
	$(MAKE) -C tools/tcprt tcprt CC="$$cc"

checkpatch:
	@scripts/checkpatch-run

check:
	@scripts/check

# make check plus its two longest tests (about 18 minutes more here): the
# fleet's store on a ClickHouse cluster, and the Debian packages installed,
# upgraded and purged in a VM.  Run it on changes to tools/tcprt/fleet or
# debian/, and before a release: scripts/check.
check-full:
	@TCP_RT_CHECK_FULL=1 scripts/check

# The selftests on two debug kernels (KASAN, kmemleak, lockdep, fault
# injection), each built once and cached: linux-source-6.1's, then a
# PREEMPT_RT one from linux-source-6.12; TCP_RT_DEBUG_FLAVOURS=default (or
# rt) runs one only: scripts/check-debug.
check-debug:
	@scripts/check-debug

# The core selftests on every kernel of the matrix (or those in KERNELS),
# each built through DKMS: scripts/check-kernels.
check-kernels:
	@scripts/check-kernels $(KERNELS)

# A source tarball for DKMS (dkms add/ldtarball): tcp_rt-<version>.tar.gz.
VERSION := $(shell scripts/version)
dist:
	@grep -qx 'PACKAGE_VERSION="$(VERSION)"' dkms.conf || \
		{ echo "dkms.conf's PACKAGE_VERSION is not $(VERSION)" >&2; exit 1; }
	git archive --prefix=tcp_rt-$(VERSION)/ -o tcp_rt-$(VERSION).tar.gz HEAD
	@echo tcp_rt-$(VERSION).tar.gz

# The Debian packages tcp-rt-dkms and tcprt (debian/), in a copy of the
# checkout, then lintian: scripts/deb (the .debs land in this folder).
deb:
	@scripts/deb

demo:
	@scripts/demo

bench:
	@scripts/bench

# every instruction a tracked request adds, by symbol (tools/bench/insns)
bench-insns: modules
	@tools/bench/insns

clean:
	$(KRUN) $(MAKE) -C $(KDIR) M=$(PWD) clean
	$(MAKE) -C selftests clean
	rm -rf $(DEADHOOK) $(DEADHOOK_WRITE) $(DEADHOOK_RCV)
	$(MAKE) -C tools/bench clean
	$(MAKE) -C tools/tcprt clean
