# SPDX-License-Identifier: GPL-2.0
# The TAP harness of tcprt's host test scripts (cli.sh, live.sh,
# grafana.sh), sourced by each: a case is a function run in a subshell
# with set -eE; it fails by fail() or any failing command, is skipped by
# returning 4.  $TCP_RT_CASES, when set, is a regular expression: only the
# cases whose description matches run (as in selftests/lib.sh).  A script
# that defines case_cleanup has it run after every case, failed or not.
n=0
failed=0

fail() {
	echo "# FAIL: $*"
	exit 1
}

run_case() {	# description function
	local rc t0=$SECONDS
	[[ -z ${TCP_RT_CASES:-} || $1 =~ $TCP_RT_CASES ]] || return 0
	n=$((n + 1))
	( set -eE; "$2" )
	rc=$?
	if declare -F case_cleanup > /dev/null; then
		case_cleanup
	fi
	echo "# case $n: $((SECONDS - t0)) s"
	if [ $rc = 0 ]; then
		echo "ok $n - $1"
	elif [ $rc = 4 ]; then
		echo "ok $n - $1 # SKIP"
	else
		echo "not ok $n - $1"
		failed=$((failed + 1))
	fi
}

# A text file of tcprt agent's without its own lines (tcprt_agent_status,
# each sink's counts): what tcprt export writes of the same records.
without_agent() {	# file
	grep -v 'tcprt_agent_status' "$1"
}

# Poll a command until it succeeds; fail the case, naming WHAT, after 30 s.
wait_for() {	# what cmd...
	local what=$1 i
	shift
	for ((i = 0; i < 600; i++)); do
		"$@" && return 0
		sleep 0.05
	done
	fail "timeout waiting for $what"
}

# The plan, and the script's exit status.
tap_end() {
	echo "1..$n"
	exit $((failed > 0))
}
