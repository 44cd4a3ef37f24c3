# SPDX-License-Identifier: GPL-2.0
#
# The bench's reader, sourced by tools/bench/run, parts and profile after
# selftests/lib.sh.  A collector as production would run one: one process,
# every file kept open, drained every 100 ms (not a process forked per
# read).  Measured only once it runs: the interpreter's start would land in
# the measurement (likely the 3 % low first tracked measurement of issue
# 15's trial).

# reader_start [GLOB]: the log files GLOB names (default rt-network-log*:
# the text logs, or log_format=binary's text views; rt-network-bin* the
# binary records), and rt-network-stats.
reader_start() {
	rm -f /tmp/reader.ready
	python3 - "$DBG" /tmp/reader.ready "${1:-rt-network-log*}" <<'PY' &
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
	wait_until "the reader" test -e /tmp/reader.ready || exit 1
}

reader_stop() {
	kill "$READER" 2>/dev/null
	wait "$READER" 2>/dev/null
}
