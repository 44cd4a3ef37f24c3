# SPDX-License-Identifier: GPL-2.0
#
# tcp_rt: build the module against KDIR, test it in a VM that boots the
# matching Debian kernel.  `make check` is the one test command.

KDIR ?= $(shell scripts/kdir)
PWD  := $(CURDIR)

.PHONY: all modules install clean check check-debug demo bench sparse checkpatch selftests deps tcprt

all: modules tcprt

tcprt:
	$(MAKE) -C tools/tcprt

deps:
	@scripts/install-deps

modules:
	$(MAKE) -C $(KDIR) M=$(PWD) W=1 modules

sparse:
	$(MAKE) -C $(KDIR) M=$(PWD) W=1 C=2 modules

install: modules tcprt
	$(MAKE) -C $(KDIR) M=$(PWD) modules_install
	depmod -a $(shell cat $(KDIR)/include/config/kernel.release)
	$(MAKE) -C tools/tcprt install

selftests:
	$(MAKE) -C selftests KDIR=$(KDIR)

checkpatch:
	@scripts/checkpatch-run

check:
	@scripts/check

# The selftests on a debug kernel (KASAN, kmemleak, lockdep, fault injection),
# built once from linux-source-6.1 and cached: scripts/check-debug.
check-debug:
	@scripts/check-debug

demo:
	@scripts/demo

bench:
	@scripts/bench

clean:
	$(MAKE) -C $(KDIR) M=$(PWD) clean
	$(MAKE) -C selftests clean
	$(MAKE) -C tools/bench clean
	$(MAKE) -C tools/tcprt clean
