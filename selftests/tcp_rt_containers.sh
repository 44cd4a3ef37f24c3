#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Containers: log_ext's netns and cgroup fields, the netns parameter, and a
# real container started by podman.  The truth each record is held to is
# the kernel's own answer for the process that served it: the inode of
# /proc/PID/ns/net and of its cgroup's directory under /sys/fs/cgroup, and
# the clients' own request counts and sizes.
. "$(dirname "$0")/lib.sh"

# one file of a --dir that tcprt reads
LOGDIR=/tmp/ct.logs
LOG=$LOGDIR/rt-network-log0
PORT=7700
TCPRT=$TOP/tools/tcprt/tcprt
CGROOT=/sys/fs/cgroup

# The network namespace inode of a process, as `lsns -t net` shows it.
ns_inum() {	# pid
	readlink "/proc/$1/ns/net" | tr -dc 0-9
}

# The cgroup v2 id of a process's cgroup: its directory's inode.
cg_inum() {	# pid
	stat -c %i "$CGROOT$(sed -n 's/^0:://p' "/proc/$1/cgroup")"
}

# Records of TYPE whose field NAME is VALUE.
records_where() {	# file type name value
	awk -v t="$2" -v f=" $3=$4( |\$)" '$1 == "V6" && $2 == t && $0 ~ f' "$1"
}

cg_cleanup() {
	local d
	command -v podman > /dev/null && podman_ rm -f -t 0 rt_ct rt_ct2 > /dev/null 2>&1
	mkdir -p $LOGDIR
	for d in "$CGROOT"/rtcg*; do
		[ -d "$d" ] && rmdir "$d" 2>/dev/null
	done
	return 0
}

# A namespace of its own (lo up) with an rt_peer server in a cgroup of its
# own, on $PORT; SRV_PID is the server's pid.
ns_server() {	# netns cgroup resp-bytes req-bytes conns
	local ready=/tmp/ready.$1
	ip netns add "$1"
	ip -n "$1" link set lo up
	mkdir -p "$CGROOT/$2"
	rm -f "$ready"
	(
		echo "$BASHPID" > "$CGROOT/$2/cgroup.procs"
		exec ip netns exec "$1" "$PEER" server --port $PORT \
			--resp-bytes "$3" --req-bytes "$4" --conns "$5" \
			--ready-file "$ready"
	) > /dev/null &
	SRV_PID=$!
	wait_until "server in $1" test -s "$ready" || fail "server in $1 did not start"
}

ns_client() {	# netns resp-bytes req-bytes [rt_peer client args...]
	local ns=$1 resp=$2 req=$3
	shift 3
	ip netns exec "$ns" "$PEER" client --port $PORT --resp-bytes "$resp" \
		--req-bytes "$req" "$@" > /dev/null
}

# A client's connection to $PORT in NETNS is established.
ns_estab() {	# netns n
	[ "$(ip netns exec "$1" ss -Htn state established "( dport = :$PORT )" | wc -l)" -ge "$2" ]
}

# The local port of the client connection in NETNS.
ns_client_port() {	# netns
	ip netns exec "$1" ss -Htn state established "( dport = :$PORT )" |
		awk '{ n = split($3, a, ":"); print a[n]; exit }'
}

# N server connections on $PORT answered (lib.sh's answered()), in the
# network namespace the command prefix enters.
answered_in() {	# n bytes cmd-prefix...
	local n=$1 bytes=$2
	shift 2
	"$@" bash -c "$(declare -f bytes_acked queued_is answered); answered $PORT $n $bytes"
}

# Every record line, of every type, ends with netns=N cgroup=N, in that order.
all_extended() {	# file
	! awk '$1 == "V6"' "$1" | grep -qvE ' netns=[0-9]+ cgroup=[0-9]+$'
}

case_two_namespaces() {
	local p1 p2 n1 n2 c1 c2 json
	cg_cleanup
	rm -f $LOG
	mod_load lports=$PORT log_ext=netns,cgroup
	ns_server rtns1 rtcg1 1000 100 1
	p1=$SRV_PID
	ns_server rtns2 rtcg2 2000 200 2
	p2=$SRV_PID
	n1=$(ns_inum "$p1")
	n2=$(ns_inum "$p2")
	c1=$(cg_inum "$p1")
	c2=$(cg_inum "$p2")
	expect_ne "$n1" "$n2" "the namespaces' inodes"
	expect_ne "$c1" "$c2" "the cgroups' inodes"
	ns_client rtns1 1000 100 --requests 3 || fail "client in rtns1"
	ns_client rtns2 2000 200 --requests 5 --conns 2 || fail "client in rtns2"
	wait_untracked
	drain_logs $LOG
	sed 's/^/# /' $LOG
	all_extended $LOG || fail "a record without netns=N cgroup=N at its end"
	# each stream is exactly its workload: rtns1 one connection of 3
	# requests of 100 bytes answered with 1000; rtns2 two of 5, 200/2000
	expect_eq "$(records_where $LOG R netns "$n1" | wc -l)" 3 "rtns1's R records"
	expect_eq "$(records_where $LOG R netns "$n2" | wc -l)" 10 "rtns2's R records"
	expect_eq "$(records_where $LOG E netns "$n1" | wc -l)" 1 "rtns1's E records"
	expect_eq "$(records_where $LOG E netns "$n2" | wc -l)" 2 "rtns2's E records"
	expect_eq "$(count_records $LOG R)" 13 "R records in all"
	expect_eq "$(awk '$1 == "V6"' $LOG | wc -l)" 16 "records in all"
	expect_eq "$(records_where $LOG R netns "$n1" | awk '$7 != 1000 || $14 != 100' | wc -l)" 0 \
		"rtns1's R records of another workload's sizes"
	expect_eq "$(records_where $LOG R netns "$n2" | awk '$7 != 2000 || $14 != 200' | wc -l)" 0 \
		"rtns2's R records of another workload's sizes"
	# and the cgroup of each server, on every one of its records
	expect_eq "$(records_where $LOG R netns "$n1" | grep -c " cgroup=$c1\$")" 3 "rtns1's cgroup"
	expect_eq "$(records_where $LOG R netns "$n2" | grep -c " cgroup=$c2\$")" 10 "rtns2's cgroup"
	# tcprt reads them, and tells the namespaces apart
	json=$("$TCPRT" read --format json --netns "$n2" --dir $LOGDIR)
	expect_eq "$(grep -c '"type":"R"' <<< "$json")" 10 "tcprt read --netns: R records"
	expect_eq "$(grep -c "\"netns\":$n2," <<< "$json")" 12 "tcprt read --netns: records with the netns"
}

# log_ext is taken when a connection is established: one established
# before a change keeps the lines it had.
case_log_ext_at_runtime() {
	local gate=/tmp/gate.ext aport n1 cpid
	cg_cleanup
	rm -f $LOG $gate
	mod_load lports=$PORT
	ns_server rtns1 rtcg1 1000 100 3
	n1=$(ns_inum "$SRV_PID")
	mkfifo $gate
	exec 7<> $gate
	ns_client rtns1 1000 100 --gate $gate &
	cpid=$!
	wait_until "the gated client connected" ns_estab rtns1 1 || fail "no connection"
	aport=$(ns_client_port rtns1)
	echo cgroup,netns > $PARAMS/log_ext
	expect_eq "$(cat $PARAMS/log_ext)" "netns,cgroup" "log_ext read back"
	ns_client rtns1 1000 100 --requests 2 || fail "second client"
	printf x >&7
	wait $cpid || fail "the gated client"
	wait_untracked
	drain_logs $LOG
	sed 's/^/# /' $LOG
	# the first connection's lines as they were: R has 16 fields, E 12
	expect_eq "$(records $LOG R | grep -F " 127.0.0.1:$aport " | awk '{ print NF }')" 16 \
		"fields of the R of the connection made before"
	expect_eq "$(records $LOG E | grep -F " 127.0.0.1:$aport " | awk '{ print NF }')" 12 \
		"fields of the E of the connection made before"
	expect_eq "$(grep -F " 127.0.0.1:$aport " $LOG | grep -c '=')" 0 "its extension fields"
	# the second's: the documented fields, then netns, then cgroup
	expect_eq "$(records $LOG R | grep -vF " 127.0.0.1:$aport " | awk '$17 ~ /^netns=/ && $18 ~ /^cgroup=/ && NF == 18' | wc -l)" 2 \
		"R records of the later connection with netns then cgroup"
	expect_eq "$(records_where $LOG R netns "$n1" | wc -l)" 2 "its netns"
	# back to none: the next connection's lines are the plain ones again
	echo > $PARAMS/log_ext
	rm -f $LOG
	ns_client rtns1 1000 100 || fail "third client"
	wait_untracked
	drain_logs $LOG
	expect_eq "$(grep -c '=' $LOG)" 0 "extension fields after log_ext was emptied"
	expect_eq "$(count_records $LOG R)" 1 "R records after log_ext was emptied"
}

# netns=N: the ports apply in N only; a change applies to connections
# established after it, as the ports' do.
case_netns_filter() {
	local n1 n2 g1=/tmp/gate.ns1 g2=/tmp/gate.ns2 c1 c2
	cg_cleanup
	rm -f $LOG $g1 $g2
	ns_server rtns1 rtcg1 1000 100 3
	n1=$(ns_inum "$SRV_PID")
	ns_server rtns2 rtcg2 1000 100 2
	n2=$(ns_inum "$SRV_PID")
	mod_load lports=$PORT log_ext=netns netns="$n1"
	expect_eq "$(cat $PARAMS/netns)" "$n1" "netns read back"
	mkfifo $g1 $g2
	exec 7<> $g1 8<> $g2
	# one connection in each, held before its request
	ns_client rtns1 1000 100 --gate $g1 &
	c1=$!
	ns_client rtns2 1000 100 --gate $g2 &
	c2=$!
	wait_until "both gated clients connected" eval 'ns_estab rtns1 1 && ns_estab rtns2 1' ||
		fail "no connections"
	expect_eq "$(status tracked)" 1 "tracked with netns=rtns1 (one connection in each)"
	# now only rtns2: the two open connections keep what they had
	echo "$n2" > $PARAMS/netns
	expect_eq "$(status tracked)" 1 "tracked after the change"
	printf x >&7
	printf x >&8
	wait $c1 || fail "the gated client in rtns1"
	wait $c2 || fail "the gated client in rtns2"
	# new connections: two requests each, this time
	ns_client rtns1 1000 100 --requests 2 || fail "second client in rtns1"
	ns_client rtns2 1000 100 --requests 2 || fail "second client in rtns2"
	wait_untracked
	drain_logs $LOG
	sed 's/^/# /' $LOG
	# rtns1: its first connection's one request; rtns2: its second's two
	expect_eq "$(records_where $LOG R netns "$n1" | wc -l)" 1 "rtns1's R records"
	expect_eq "$(records_where $LOG R netns "$n1" | awk '{ print $11 }')" 1 "rtns1's task_seq"
	expect_eq "$(records_where $LOG R netns "$n2" | wc -l)" 2 "rtns2's R records"
	expect_eq "$(records_where $LOG R netns "$n2" | awk '{ print $11 }' | sort -n | tr '\n' ' ')" "1 2 " \
		"rtns2's task_seq"
	expect_eq "$(count_records $LOG E)" 2 "E records"
	# empty again: every namespace
	echo > $PARAMS/netns
	expect_eq "$(cat $PARAMS/netns)" "" "netns emptied"
	rm -f $LOG
	ns_client rtns1 1000 100 || fail "third client in rtns1"
	wait_untracked
	drain_logs $LOG
	expect_eq "$(records_where $LOG R netns "$n1" | wc -l)" 1 "rtns1 tracked again"
}

# A namespace destroyed while its connections are tracked: they end as
# their close dictates, and the next namespace's connections on the same
# port are its own.
case_netns_destroyed() {
	local n1 n2 c2 cpid spid gate=/tmp/gate.gone
	cg_cleanup
	rm -f $LOG $gate
	mod_load lports=$PORT log_ext=netns,cgroup
	ns_server rtns1 rtcg1 1000 100 1
	spid=$SRV_PID
	n1=$(ns_inum "$spid")
	mkfifo $gate
	exec 7<> $gate
	# one request answered, then the client waits before its second
	# (not through ns_client: a subshell would note its child's death)
	ip netns exec rtns1 "$PEER" client --port $PORT --resp-bytes 1000 \
		--req-bytes 100 --requests 2 --gate $gate > /dev/null &
	cpid=$!
	printf x >&7
	wait_until "the first response" answered_in 1 1000 ip netns exec rtns1 ||
		fail "the first request was not answered"
	# the namespace goes: its processes killed, its name removed
	disown "$cpid" "$spid"	# no "Killed" notes from bash
	ip netns pids rtns1 | xargs -r kill -9
	ip netns del rtns1
	wait_untracked
	drain_logs $LOG
	sed 's/^/# /' $LOG
	expect_eq "$(records_where $LOG R netns "$n1" | wc -l)" 1 "R records of the namespace gone"
	expect_eq "$(records_where $LOG E netns "$n1" | wc -l)" 1 "E records of the namespace gone"
	expect_eq "$(awk '$1 == "V6"' $LOG | grep -vc " netns=$n1 ")" 0 "records of another namespace"
	# a new namespace, the same port
	rm -f $LOG
	ns_server rtns2 rtcg2 1000 100 1
	n2=$(ns_inum "$SRV_PID")
	c2=$(cg_inum "$SRV_PID")
	ns_client rtns2 1000 100 || fail "client in the new namespace"
	wait_untracked
	drain_logs $LOG
	expect_eq "$(records_where $LOG R netns "$n2" | wc -l)" 1 "R records in the new namespace"
	expect_eq "$(records_where $LOG R netns "$n2" | grep -c " cgroup=$c2\$")" 1 "their cgroup"
	expect_eq "$(count_records $LOG R)" 1 "R records in all"
}

# podman, with the state it keeps in the guest's tmpfs, no systemd and no
# image: cgroupfs, a log file for events, vfs storage.
podman_() {
	podman --cgroup-manager=cgroupfs --events-backend=file \
		--storage-driver=vfs "$@"
}

# Run rt_peer's server in a container NAME, from a root file system made
# here (the host's /usr, read-only), in a network namespace of its own
# (--network none: lo only); CT_ID is podman's id for it, CT_PID the
# server's pid.  The server exits, and the container with it, once it
# has served CONNS connections.
podman_server() {	# name conns
	local root=/tmp/ctr.root share=/tmp/ctr.share.$1
	rm -rf $root "$share"
	mkdir -p $root "$share"
	for d in bin lib lib64 sbin; do
		[ -L "/$d" ] && ln -s "$(readlink "/$d")" "$root/$d"
	done
	CT_ID=$(podman_ run -d --name "$1" --network none \
		-v /usr:/usr:ro -v "$TOP:$TOP:ro" -v "$share:/share" --rootfs $root \
		"$PEER" server --port $PORT --resp-bytes 3000 --req-bytes 300 \
		--conns "$2" --ready-file /share/ready) || fail "podman run $1"
	wait_until "the server in $1" test -s "$share/ready" ||
		fail "the server in $1 did not start: $(podman_ logs "$1")"
	CT_PID=$(podman_ inspect --format '{{.State.Pid}}' "$1")
	diag "podman: $1 is $CT_ID, pid $CT_PID, cgroup $(sed -n 's/^0:://p' /proc/"$CT_PID"/cgroup), $(readlink /proc/"$CT_PID"/ns/net)"
}

# A client in the network namespace of the process PID.
ct_client() {	# pid [rt_peer client args...]
	local pid=$1
	shift
	nsenter -t "$pid" -n "$PEER" client --port $PORT --resp-bytes 3000 \
		--req-bytes 300 "$@" > /dev/null
}

# Two real containers serving the same port, each in its own namespace;
# one stopped while a connection to it is tracked.
case_podman_containers() {
	local gate=/tmp/gate.ct id1 p1 n1 c1 id2 p2 n2 c2 json cpid
	command -v podman > /dev/null || fail "podman is not installed (scripts/install-deps)"
	# Debian's kernels have them; a debug kernel built before
	# debug-kernel/tcp_rt-debug.config asked for them has not
	if [ ! -e /proc/self/setgroups ]; then
		diag "no user namespaces in this kernel (CONFIG_USER_NS): crun cannot run"
		exit 4
	fi
	if ! grep -qw bpf /proc/filesystems; then
		diag "no BPF in this kernel (CONFIG_BPF_SYSCALL, CONFIG_CGROUP_BPF): crun cannot confine devices"
		exit 4
	fi
	cg_cleanup
	rm -f $LOG $gate
	mod_load lports=$PORT log_ext=netns,cgroup
	podman_server rt_ct 2
	id1=$CT_ID p1=$CT_PID n1=$(ns_inum "$CT_PID") c1=$(cg_inum "$CT_PID")
	# one connection more than it gets: a server that exits ends its
	# container, and tcprt could no longer name it
	podman_server rt_ct2 2
	id2=$CT_ID p2=$CT_PID n2=$(ns_inum "$CT_PID") c2=$(cg_inum "$CT_PID")
	expect_ne "$n1" "$n2" "the containers' namespaces"
	expect_ne "$c1" "$c2" "the containers' cgroups"
	ct_client "$p1" --requests 4 || fail "client of rt_ct: $(podman_ logs rt_ct)"
	ct_client "$p2" --requests 3 || fail "client of rt_ct2: $(podman_ logs rt_ct2)"
	# one more connection to rt_ct: a request answered, the next held back
	mkfifo $gate
	exec 7<> $gate
	ct_client "$p1" --requests 2 --gate $gate &
	cpid=$!
	printf x >&7
	wait_until "the held connection's first response" \
		answered_in 1 3000 nsenter -t "$p1" -n ||
		fail "the held connection's first request was not answered"
	expect_eq "$(status tracked)" 1 "tracked while rt_ct runs"
	# rt_ct goes, with its namespace, the connection still open
	podman_ rm -f -t 0 rt_ct > /dev/null || fail "podman rm"
	printf x >&7
	wait $cpid && fail "the held client's second request was answered"
	wait_untracked
	drain_logs $LOG
	sed 's/^/# /' $LOG
	expect_eq "$(records_where $LOG R netns "$n1" | grep -c " cgroup=$c1\$")" 5 \
		"rt_ct's R records with its netns and cgroup"
	expect_eq "$(records_where $LOG E netns "$n1" | grep -c " cgroup=$c1\$")" 2 \
		"rt_ct's E records with its netns and cgroup"
	expect_eq "$(records_where $LOG R netns "$n2" | grep -c " cgroup=$c2\$")" 3 \
		"rt_ct2's R records with its netns and cgroup"
	expect_eq "$(records_where $LOG E netns "$n2" | grep -c " cgroup=$c2\$")" 1 \
		"rt_ct2's E records with its netns and cgroup"
	expect_eq "$(awk '$1 == "V6"' $LOG | wc -l)" 11 "records in all"
	# tcprt names the running one with the id podman gave; the one gone
	# by then stays a number
	"$TCPRT" read --type R --dir $LOGDIR | sed 's/^/# tcprt: /'
	json=$("$TCPRT" read --format json --dir $LOGDIR)
	expect_eq "$(grep '"type":"R"' <<< "$json" | grep -c "\"runtime\":\"podman\",\"container\":\"$id2\"")" 3 \
		"tcprt read: R records naming rt_ct2's id"
	expect_eq "$(grep -c "\"container\":\"$id1\"" <<< "$json")" 0 \
		"tcprt read: records naming the removed rt_ct's id"
	expect_eq "$("$TCPRT" read --type R --container "${id2:0:12}" --dir $LOGDIR | wc -l)" 3 \
		"tcprt read --container <short id>: R records"
	podman_ rm -f -t 0 rt_ct2 > /dev/null || fail "podman rm rt_ct2"
}

case_bad_values_one_line_each() {
	local mark
	mod_load lports=$PORT log_ext=netns
	mark=$(kmsg_mark)
	expect_fail "log_ext=foo" sh -c "echo foo > $PARAMS/log_ext"
	expect_fail "netns=abc" sh -c "echo abc > $PARAMS/netns"
	expect_eq "$(cat $PARAMS/log_ext)" netns "log_ext kept"
	expect_eq "$(cat $PARAMS/netns)" "" "netns kept"
	kmsg_since "$mark" | sed 's/^/# /'
	expect_eq "$(kmsg_since "$mark" | wc -l)" 2 "kernel log lines"
	expect_eq "$(kmsg_since "$mark" 'tcp_rt: log_ext: no field .foo.' | wc -l)" 1 "log_ext's line"
	expect_eq "$(kmsg_since "$mark" "tcp_rt: netns: 'abc' is not a namespace inode number" | wc -l)" 1 \
		"netns's line"
}

trap 'cg_cleanup' EXIT
run_case "log_ext: two namespaces on one port, each record with its server's netns and cgroup" case_two_namespaces
run_case "log_ext: a change applies to connections established after it; plain lines without" case_log_ext_at_runtime
run_case "netns: the ports apply in the namespaces listed; a change applies to new connections" case_netns_filter
run_case "a namespace destroyed while tracked: records end, the next one is attributed anew" case_netns_destroyed
run_case "two podman containers on one port, one removed while tracked: netns, cgroup, tcprt names them" case_podman_containers
run_case "log_ext, netns: bad values refused with one line each, old value kept" case_bad_values_one_line_each
done_testing
