# shellcheck shell=bash
# TAP helpers shared by scripts/check, check-debug and check-kernels: one
# numbered stream, a skip never counted as a pass, and the closing line
# "N passed, N failed, N skipped".  Sourced; uses $log, a scratch folder.

n=0
passed=0
failed=0
skipped=0
log=$(mktemp -d "${TMPDIR:-/tmp}/tcp_rt-check.XXXXXX")
on_finish=""	# extra clean-up command, run by finish

tap() {	# status description [log]
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		passed=$((passed + 1))
		echo "ok $n - $2"
	else
		failed=$((failed + 1))
		echo "not ok $n - $2"
		[ -n "${3:-}" ] && sed 's/^/# /' "$3" | tail -n 40
	fi
}

# A host-side test program's output, each of its results one of ours: TAP
# ("ok N - what") or Python's unittest -v ("name (class) ... ok").  A
# program that fails without a failing result of its own adds one.
host_tests() {	# tap|unittest prefix log what cmd...
	local kind=$1 prefix=$2 out=$3 what=$4 st line reason
	shift 4
	"$@" > "$out" 2>&1
	st=$?
	while IFS= read -r line; do
		if [ "$kind" = tap ]; then
			case "$line" in
			"ok "*" # SKIP"*)
				line=${line#ok * - }
				reason=${line#* # SKIP}
				skip "$prefix${line%% # SKIP*}" "${reason# }"
				;;
			"ok "*) tap 0 "$prefix${line#ok * - }" ;;
			"not ok "*) tap 1 "$prefix${line#not ok * - }" "$out" ;;
			"#"*) echo "$line" ;;
			esac
		else
			case "$line" in
			*" ... ok") tap 0 "$prefix${line%% (*}" ;;
			*" ... FAIL" | *" ... ERROR") tap 1 "$prefix${line%% (*}" "$out" ;;
			esac
		fi
	done < "$out"
	[ "$st" = 0 ] || grep -qE '^not ok |\.\.\. (FAIL|ERROR)$' "$out" ||
		tap 1 "$what exited with status $st" "$out"
}

skip() {	# description reason
	n=$((n + 1))
	skipped=$((skipped + 1))
	echo "ok $n - $1 # SKIP $2"
}

# What a failed comparison kept in a work copy of the checkout
# (oracle_keep, selftests/lib.sh), moved into the checkout's own
# selftests/artifacts before the copy is removed, and named.
keep_artifacts() {	# work copy, checkout
	local f
	for f in "$1"/selftests/artifacts/*; do
		[ -e "$f" ] || continue
		mkdir -p "$2/selftests/artifacts" &&
			mv "$f" "$2/selftests/artifacts/" &&
			echo "# kept: $2/selftests/artifacts/${f##*/}"
	done
}

finish() {
	echo "1..$n"
	echo "$passed passed, $failed failed, $skipped skipped"
	rm -rf "$log"
	[ -n "$on_finish" ] && eval "$on_finish"
	exit $((failed > 0))
}

# The tests that attach and detach hooks under traffic: series runs (the
# receive hooks) and log_ext's time breakdown (a write hook and a
# tracepoint).  ftrace and the static keys patch a function's text while
# other CPUs run it, and bookworm's QEMU (7.2; fixed in 8.1) may go on
# running a stale translation of the site under multi-threaded TCG: on
# x86 an int3 a vCPU loops on (a soft lockup), on arm64 a hook just
# attached never called (docs/testing.md, "Hooks attached under traffic").
# scripts/check, check-debug and check-kernels run them in a VM with one
# TCG thread.
HOOKS_UNDER_TRAFFIC=(selftests/tcp_rt_series.sh selftests/tcp_rt_breakdown.sh)

# The lines of stdin (test paths) but those among the arguments.
lines_but() {	# path...
	local t
	while IFS= read -r t; do
		[[ " $* " == *" $t "* ]] || echo "$t"
	done
}

# The lines of stdin (test paths) among the arguments.
lines_among() {	# path...
	local t
	while IFS= read -r t; do
		[[ " $* " != *" $t "* ]] || echo "$t"
	done
}

# The lines of stdin (test paths) but HOOKS_UNDER_TRAFFIC's.
without_hooks_under_traffic() {
	lines_but "${HOOKS_UNDER_TRAFFIC[@]}"
}

# The VMs scripts/check and scripts/check-debug share out the selftests
# among, in this order: the main one (main_vm_tests: every other test);
# a guest with 10 of 80 possible CPUs online, for a failed load's
# teardown with connections arriving (tcp_rt_loadfail.sh: its run needs 9
# online CPUs to be refused) and series runs sized by the online CPUs, one
# coming online mid-run (tcp_rt_series_cpus.sh); one TCG thread for the
# tests that load the module while its hooks' functions run
# (tcp_rt_reload.sh) or attach hooks under traffic; the lockdown test
# last, as lockdown can only be raised (check-debug gives it a VM of its
# own: lockdown closes kmemleak's file).
VM_CPUS10=(selftests/tcp_rt_loadfail.sh selftests/tcp_rt_series_cpus.sh)
VM_SINGLE=("${HOOKS_UNDER_TRAFFIC[@]}" selftests/tcp_rt_reload.sh)
VM_LOCKED=(selftests/tcp_rt_lockdown.sh)

# The main VM's selftests: all but those of the VMs above.
main_vm_tests() {
	printf '%s\n' selftests/params_test selftests/tcp_rt_*.sh |
		lines_but "${VM_CPUS10[@]}" "${VM_SINGLE[@]}" "${VM_LOCKED[@]}"
}

# Run selftests/run (or $VM_GUEST_RUNNER) in a VM; the guest continues the
# TAP numbering.  A guest kernel problem, a crash or a timeout fails the
# run even when every test passed.
run_vm() {	# description [vm-run options] -- tests...
	local what=$1 out="$log/vm.out" err="$log/vm.err" st t opts=() reboots
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	t=$(date +%s)
	TCP_RT_TAP_START=$((n + 1)) scripts/vm-run "${opts[@]}" -- \
		"${VM_GUEST_RUNNER:-selftests/run}" "$@" 2> "$err" | tee "$out"
	st=${PIPESTATUS[0]}
	n=$((n + $(grep -cE '^(not )?ok ' "$out")))
	failed=$((failed + $(grep -cE '^not ok ' "$out")))
	skipped=$((skipped + $(grep -cE '^ok .*# SKIP' "$out")))
	passed=$((passed + $(grep -E '^ok ' "$out" | grep -cv '# SKIP')))
	grep -v '^$' "$err" | sed 's/^/# /'
	# a kernel report during the boot, before any test: vm-run booted again
	reboots=$(grep -c '^vm-run note: booting again' "$err")
	[ "$reboots" = 0 ] || echo "# $what: booted again after a kernel report or a hang during the boot ($reboots)"
	echo "# $what: VM ran $(($(date +%s) - t)) s"
	if grep -q '^vm-run:' "$err"; then
		tap 1 "$what: guest kernel log clean, VM ended normally"
	else
		tap 0 "$what: guest kernel log clean, VM ended normally"
	fi
	if [ "$st" != 0 ] && ! grep -qE '^not ok ' "$out" &&
	   ! grep -q '^vm-run:' "$err"; then
		tap 1 "$what: selftests exited with status $st"
	fi
}

# The Debian packages (debian/), built and checked on the host, then
# installed, upgraded and purged in a VM as a user would
# (selftests/deb_install.sh): the checkout's version, lintian clean, and a
# higher one for the upgrade, both under selftests/debs/ (the project
# folder the guest shares).  Kernel: a name of scripts/kernels, the
# machine's own when none; one with a chroot of its own suite gets the
# packages installed there (vm-run shares it).
# The packages' tcprt and OTLP, on the host: built with OTLP (its Depends
# has libprotobuf-c1), the agent takes [metrics] otlp; built without it
# (Debian 12's profile), it refuses it with one line that says why.  The
# higher version is built with OTLP when PROTO is given.
deb_otlp_test() {	# dir proto
	local v x d=$log/deb-otlp st=0 want out
	: > "$d"
	printf '[metrics]\notlp = http://127.0.0.1:4318/v1/metrics\n' > "$1/otlp.conf"
	for v in old new; do
		x=$1/$v/x
		dpkg-deb -x "$1"/$v/tcprt_*.deb "$x" || st=1
		if dpkg-deb -f "$1"/$v/tcprt_*.deb Depends | grep -q libprotobuf-c1; then
			want="good; sinks: metrics"
		else
			want="Debian 12 has no opentelemetry-proto"
			[ "$v" = new ] && [ -n "$2" ] && { echo "$v: built without OTLP" >> "$d"; st=1; }
		fi
		out=$("$x/usr/bin/tcprt" agent --check --config "$1/otlp.conf" 2>&1)
		echo "$v: $out" >> "$d"
		[[ $out == *"$want"* ]] || { echo "$v: not '$want'" >> "$d"; st=1; }
		rm -rf "$x"
	done
	tap "$st" "make deb: tcprt with OTLP where built with opentelemetry-proto, else refusing it with the reason" "$d"
}

# The packages built (both versions) and lintian-checked on the host, then
# installed, upgraded and purged in a VM.  DEB_BUILD_ONLY=1 (plain make
# check): the VM is left out, told as a skip - DKMS compiles the module
# twice in an emulated guest, about 10 minutes (make check-full runs it).
deb_install_test() {	# [kernel]
	local k=${1:-} dir=selftests/debs new root= kopt=() st proto
	new=$(scripts/version)+debtest1
	rm -rf "$dir"
	scripts/deb --out "$dir/old" > "$log/deb" 2>&1
	st=$?
	tap "$st" "${k:+$k: }make deb: tcp-rt-dkms and tcprt build, lintian clean" "$log/deb"
	[ "$st" = 0 ] || return 0
	# on the host's own kernel, the higher version with OTLP from Debian
	# 13's .proto files (scripts/otel-deps): the upgrade installs it
	[ -z "$k" ] && proto=$(scripts/otel-deps --proto-dir 2> /dev/null) || proto=
	scripts/deb --out "$dir/new" --version "$new" ${proto:+--otlp-proto "$proto"} > "$log/deb-new" 2>&1
	st=$?
	tap "$st" "${k:+$k: }make deb of a higher version, $new${proto:+, with OTLP}" "$log/deb-new"
	[ "$st" = 0 ] || return 0
	[ -n "$k" ] || deb_otlp_test "$dir" "$proto"
	if [ -n "${DEB_BUILD_ONLY:-}" ]; then
		skip "${k:+$k: }Debian packages installed, upgraded, purged" \
			"DKMS's two builds in an emulated guest: make check-full"
		rm -rf "$dir"
		return 0
	fi
	if [ -n "$k" ]; then
		root=$(scripts/kernels chroot "$k") || return 0
		kopt=(--kernel "$k")
	fi
	TCP_RT_DEBS=$PWD/$dir TCP_RT_DEB_NEW=$new TCP_RT_DEB_ROOT=$root VM_SHARE=$root \
		run_vm "${k:+$k: }Debian packages installed, upgraded, purged" "${kopt[@]}" \
		--timeout "${TCP_RT_CHECK_TIMEOUT:-7200}" -- selftests/deb_install.sh
	rm -rf "$dir"
}
