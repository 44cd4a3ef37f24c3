# SPDX-License-Identifier: GPL-2.0
#
# The bench's reader, sourced by tools/bench/run, parts and profile after
# selftests/lib.sh.  A collector as production would run one: one process,
# every file kept open, drained every 100 ms (not a process forked per
# read).  Measured only once it runs: the interpreter's start would land in
# the measurement (likely the 3 % low first tracked measurement of issue
# 15's trial).

# reader_start [GLOB]: the log files GLOB names, and rt-network-stats.  By
# default what tcprt reads of the module as loaded: the binary records
# (rt-network-bin*, log_format=binary, the default), else the text logs
# (rt-network-log*); rt-network-log* of a binary module is its text views,
# the text made in their read().
reader_start() {
	local glob=rt-network-log*

	[ "$(cat "$PARAMS/log_format" 2> /dev/null)" = binary ] && glob=rt-network-bin*
	rm -f /tmp/reader.ready
	python3 - "$DBG" /tmp/reader.ready "${1:-$glob}" <<'PY' &
import glob, sys, time
files = [open(f, "rb", buffering=0) for f in
         sorted(glob.glob(sys.argv[1] + "/" + sys.argv[3])) +
         [sys.argv[1] + "/rt-network-stats"]]
open(sys.argv[2], "w").close()
while True:
    for f in files:
        while f.read(1 << 20):
            pass
    time.sleep(0.1)
PY
	READER=$!
	wait_started "the reader" "$READER" test -e /tmp/reader.ready || exit 1
}

reader_stop() {
	kill "$READER" 2>/dev/null
	wait "$READER" 2>/dev/null
}
