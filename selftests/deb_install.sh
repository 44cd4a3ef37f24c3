#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Debian packages as a user installs them (issue 33), in the VM:
# dpkg -i tcp-rt-dkms and tcprt, DKMS builds the module for the running
# kernel, modprobe loads it and it records a workload read by the
# package's tcprt; dpkg -i of a higher version rebuilds it and the reload
# runs the new build; dpkg --purge leaves no file of either package and
# the module unloaded.
#
# Run by scripts/deb-test, which builds the packages on the host
# ($TCP_RT_DEBS/old, $TCP_RT_DEBS/new, version $TCP_RT_DEB_NEW) and boots
# the kernel.  $TCP_RT_DEB_ROOT, when set, is a chroot of the kernel's own
# Debian suite (scripts/kernels: one with the compiler the kernel was
# built with, its headers installed as a package and dkms), shared
# read-only by vm-run: the packages go there, as on a host of that
# release.  Without it they go into the guest's own system (the host's,
# under the guest's tmpfs overlay), whose kernel is the host's.
. "$(dirname "$0")/lib.sh"

KEEP_MODULE=1	# the cases hand the module on to each other
PORT=7190
REQS=20
REL=$(uname -r)
R=/
[ -z "${TCP_RT_DEB_ROOT:-}" ] || R=/tmp/root
DEBS=/tmp/debs
OLD=$(dpkg-deb -f "$TCP_RT_DEBS"/old/tcp-rt-dkms_*.deb Version)
NEW=$TCP_RT_DEB_NEW

# A read-only folder made writable: an overlay on tmpfs.
writable() {	# lower mountpoint
	local d
	d=$(mktemp -d /tmp/ovl.XXXXXX)
	mkdir "$d/up" "$d/work"
	mount -t overlay -o "lowerdir=$1,upperdir=$d/up,workdir=$d/work" overlay "$2" ||
		fail "overlay of $1 on $2"
}

# The chroot: shared read-only, made writable, with the kernel's file
# systems.  Its /lib/modules/<release> gets the running kernel's modules
# (the guest's, from the kernel's image package, depmod run), as on a host
# where that package is installed: the chroot has its headers only, and
# DKMS skips depmod where it finds no modules.dep.  In the guest's own
# system, the running kernel's /lib/modules/<release> is a read-only share
# for a kernel of the matrix: made writable, so that dpkg and DKMS write
# wherever they would on a host.
setup_root() {
	local m=/lib/modules/$REL
	if [ "$R" != / ]; then
		mkdir -p $R
		writable "$TCP_RT_DEB_ROOT" $R
		mount -t proc proc $R/proc
		mount --rbind /sys $R/sys
		mount --rbind /dev $R/dev
		mount -t tmpfs tmpfs $R/tmp
		mount -t tmpfs tmpfs $R/run
		mkdir -p $R$m
		writable $m $R$m
	elif ! touch "$m/.w" 2>/dev/null; then
		writable $m $m
	else
		rm -f "$m/.w"
	fi
	mkdir -p $R$DEBS
	cp -r "$TCP_RT_DEBS"/old "$TCP_RT_DEBS"/new $R$DEBS/
}

in_root() {	# cmd...
	if [ "$R" = / ]; then
		"$@"
	else
		chroot $R "$@"
	fi
}

# Requests on PORT, answered by rt_peer (the checkout's: a workload, not
# part of the packages); the records read by the package's tcprt.
workload_recorded() {	# what
	local n
	start_server -- --port $PORT --req-bytes 100 --resp-bytes 1000 > /dev/null
	"$PEER" client --port $PORT --req-bytes 100 --resp-bytes 1000 \
		--requests $REQS > /dev/null || fail "client"
	wait_untracked
	n=$(in_root tcprt read --type R --port $PORT --format csv | tail -n +2 | wc -l)
	expect_eq "$n" $REQS "$1: R records read by the package's tcprt"
	pkill -f "$PEER" || true
}

loaded_version() {
	sed -n 's/^version //p' $DBG/status
}

dkms_status() {
	in_root dkms status tcp_rt 2> /dev/null
}

# dpkg in the root (its arguments' globs expanded there), its output in
# the test's when it fails.  While it runs, each minute its log or DKMS's
# build log grew, the newest line of either: DKMS building the module in
# the emulated guest took 1,022 s beside a busy host, and selftests/run
# ends a test that prints nothing for long (TCP_RT_TEST_TIMEOUT).
dpkg_ok() {	# log dpkg-args...
	local log=$1 pid size last=''
	shift
	in_root sh -c "dpkg $*" > "$log" 2>&1 &
	pid=$!
	# returns when dpkg ends, or after a minute
	while ! timeout 60 tail --pid=$pid -f /dev/null; do
		size=$(cat "$log" $R/var/lib/dkms/tcp_rt/*/build/make.log 2> /dev/null | wc -c)
		[ "$size" = "$last" ] && continue
		last=$size
		diag "dpkg: $(ls -t "$log" $R/var/lib/dkms/tcp_rt/*/build/make.log 2> /dev/null |
			head -1 | xargs tail -n 1 | cut -c1-160)"
	done
	wait $pid || {
		sed 's/^/# /' "$log"
		fail "dpkg $*"
	}
}

# One build's packages (old, new) installed, and DKMS built its version
# for the running kernel.
install_debs() {	# old|new version
	dpkg_ok /tmp/dpkg-$1.log -i "$DEBS/$1/tcp-rt-dkms_*.deb" "$DEBS/$1/tcprt_*.deb"
	diag "$(dkms_status)"
	dkms_status | grep -q "^tcp_rt/$2, $REL, .*: installed" ||
		fail "dkms status: $2 not installed for $REL"
}

case_install() {
	setup_root
	install_debs old "$OLD"
	in_root modprobe tcp_rt lports=$PORT || {
		sed 's/^/# /' /tmp/dpkg-old.log	# DKMS's build, for the reason
		fail "modprobe tcp_rt"
	}
	expect_eq "$(loaded_version)" "$OLD" "version of the loaded module"
	# the package ran systemd-tmpfiles: ship's socket folder is root's
	# alone before any rsyslog is restarted with the snippet (a root
	# without systemd, as the matrix's chroots, has no tmpfiles to run)
	if in_root sh -c 'command -v systemd-tmpfiles' > /dev/null; then
		expect_eq "$(stat -c '%a %U' $R/run/tcprt 2>&1)" "700 root" "/run/tcprt after dpkg -i"
	else
		diag "no systemd-tmpfiles in $R: /run/tcprt not checked"
	fi
	workload_recorded "$OLD"
	expect_eq "$(in_root tcprt --version | awk '{ print $1 }')" tcprt "tcprt --version"
	in_root dpkg -L tcprt | grep -q '/man8/tcprt\.8\.gz$' || fail "tcprt(8) not in the package"
	# the agent's configuration, a conffile, good as shipped
	in_root tcprt agent --check > /tmp/agent-check 2>&1 || fail "tcprt agent --check: $(cat /tmp/agent-check)"
	grep -q "^/etc/tcprt/agent.conf: good; sinks: metrics windows$" /tmp/agent-check ||
		fail "tcprt agent --check: $(cat /tmp/agent-check)"
	in_root dpkg-query -W -f '${Conffiles}' tcprt | grep -q '/etc/tcprt/agent.conf' ||
		fail "/etc/tcprt/agent.conf is not a conffile"
}

case_upgrade() {
	install_debs new "$NEW"
	dkms_status | grep -q "^tcp_rt/$OLD," && fail "dkms still has $OLD"
	# an upgrade leaves the running module alone (debian/tcp-rt-dkms.prerm)
	expect_eq "$(loaded_version)" "$OLD" "the loaded module across the upgrade"
	expect_eq "$(in_root modinfo -F version tcp_rt)" "$NEW" "the module on disk"
	in_root modprobe -r tcp_rt || fail "modprobe -r"
	in_root modprobe tcp_rt lports=$PORT || fail "modprobe tcp_rt ($NEW)"
	expect_eq "$(loaded_version)" "$NEW" "version of the reloaded module"
	workload_recorded "$NEW"
}

case_purge() {
	local f left=0
	in_root dpkg -L tcp-rt-dkms tcprt > /tmp/files || fail "dpkg -L"
	dpkg_ok /tmp/dpkg-purge.log --purge tcprt tcp-rt-dkms
	grep -q "tcp_rt unloaded" /tmp/dpkg-purge.log || fail "no unload said: $(cat /tmp/dpkg-purge.log)"
	[ ! -d /sys/module/tcp_rt ] || fail "tcp_rt still loaded"
	# every file the packages had (their folders may be shared: /usr/bin, ...)
	while read -r f; do
		[ -d "$R$f" ] && continue
		if [ -e "$R$f" ] || [ -L "$R$f" ]; then
			diag "left behind: $f"
			left=$((left + 1))
		fi
	done < /tmp/files
	expect_eq "$left" 0 "files of the packages left after the purge"
	# what DKMS made, which no package lists
	expect_eq "$(find $R/var/lib/dkms $R/usr/src $R/lib/modules/$REL -name '*tcp_rt*' 2> /dev/null)" "" \
		"DKMS's trees, the sources, built modules"
	expect_eq "$(find $R/etc/default -name 'tcprt*' | wc -l)" 0 "configuration files in /etc/default"
	[ ! -e $R/etc/tcprt/agent.conf ] || fail "/etc/tcprt/agent.conf left after the purge"
	expect_eq "$(in_root dpkg-query -W -f '${db:Status-Abbrev}' tcprt tcp-rt-dkms 2> /dev/null)" "" \
		"dpkg's knowledge of the packages"
}

run_case "deb: dpkg -i tcp-rt-dkms and tcprt, DKMS builds, modprobe, records read by tcprt" case_install
run_case "deb: dpkg -i of a higher version: rebuilt by DKMS, the reload runs it" case_upgrade
run_case "deb: dpkg --purge: module unloaded, no file of either package left" case_purge
done_testing
