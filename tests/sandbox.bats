#!/usr/bin/env bats
# sandbox.bats -- CORRAL_SANDBOX=bwrap (corral-run-slice -X bwrap): each
# unit inside bubblewrap.  As root and as an unprivileged user, a unit
# cannot write the source tree or anything outside its clone, cannot read
# or write CORRAL_OUT, cannot reach a listener on 127.0.0.1 outside, and
# leaves no process behind; a hostile unit, root's too, has no capability
# to undo its mounts, no controlling terminal, no key of the agent's
# session keyring, no process outside in sight, and UTS, cgroup and IPC
# namespaces of its own; the same units escape without the sandbox, and
# ordinary units pass and are recorded the same way with it and without.
# Asked for where it cannot work, it stops before any unit runs.
bats_require_minimum_version 1.5.0

# The unprivileged user (nobody on Debian).
NOBODY=65534

setup() {
	load test_helper
	_corral_setup
	command -v bwrap > /dev/null || skip "bubblewrap is not installed (build-aux/deps installs it)"
	# Outside /tmp, which a sandbox replaces with its own: the source tree
	# is then in sight, read-only, and 'cannot write it' means something.
	W=$(mktemp -d /var/tmp/corral-sandbox.XXXXXX)
	chmod 755 "$W"
	mkdir -p "$W/src/lib" "$W/out/logs" "$W/out/work"
	: > "$W/out/.corral-out"
	printf 'data\n' > "$W/src/lib/input"
	printf 'secret\n' > "$W/out/secret"
	TAG=corral-sandbox-$$-$BATS_TEST_NUMBER
	export W TAG
}

teardown() {
	[ -n "${LISTENER:-}" ] && kill "$LISTENER" 2> /dev/null
	pkill -KILL -f -- "${TAG:-no-such-tag}" 2> /dev/null || true
	[ -n "${W:-}" ] && rm -rf "$W" "/tmp/$TAG"
	true
}

# as WHO CMD...: CMD as root, or as the unprivileged user with the files
# of $W made its own, and a TMPDIR of its own among them (the caller's,
# a unit's private one under corral, is root's alone)
as() {
	local who=$1
	shift
	if [ "$who" = root ]; then
		"$@"
	else
		mkdir -p "$W/tmp"
		chown -R "$NOBODY:$NOBODY" "$W"
		TMPDIR=$W/tmp setpriv --reuid="$NOBODY" --regid="$NOBODY" \
			--clear-groups -- "$@"
	fi
}

# need_nobody: skip unless this is root and the unprivileged user can
# run bwrap (user namespaces)
need_nobody() {
	[ "$(id -u)" -eq 0 ] || skip "needs root to become the unprivileged user"
	setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups -- bwrap --ro-bind / / true ||
		skip "unprivileged user namespaces are disabled here"
}

# slice WHO SANDBOX CMD UNIT...: run the units as WHO in slice K, with
# the log in $W/out/logs; the status in $status
slice() {
	local who=$1 sb=$2 cmd=$3
	shift 3
	printf '%s\n' "$@" > "$W/slice"
	rm -rf "$W/out/logs"/agent-K*
	run as "$who" corral-run-slice -X "$sb" -C "$W/src" -p lib \
		-w "$W/out/work" -l "$W/out/logs" -c "$cmd" K "$W/slice"
}

# verdicts: "UNIT STATUS" for each record of slice K
verdicts() {
	records "$W/out/logs/agent-K.jsonl" | jq -r '"\(.unit) \(.status)"'
}

# listen: a listener on 127.0.0.1 outside any sandbox; its port in PORT,
# each connection it takes a line in $W/connected
listen() {
	perl -MIO::Socket::INET -e '
		my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1",
		    LocalPort => 0, Listen => 5, ReuseAddr => 1) or die "listen: $!";
		open(my $p, ">", "$ARGV[0]/port.tmp") or die; print $p $s->sockport, "\n";
		close($p); rename("$ARGV[0]/port.tmp", "$ARGV[0]/port");
		while (my $c = $s->accept) {
			open(my $f, ">>", "$ARGV[0]/connected"); print $f "1\n"; close($f);
			close($c);
		}' "$W" "$TAG" &
	LISTENER=$!
	local i
	for i in $(seq 50); do [ -s "$W/port" ] && break; sleep 0.1; done
	PORT=$(cat "$W/port")
	export PORT
}

# The escapes: each unit tries one and exits 1 when it got through, 0
# when it was stopped; write-tmp writes /tmp, its own in the sandbox,
# and passes either way.
ESCAPE='case $CORRAL_UNIT in
write-src) echo x > "$W/src/lib/input" ;;
write-outside) echo x > "$W/outside" ;;
write-tmp) echo x > "/tmp/$TAG" && cat "/tmp/$TAG" > /dev/null; exit 0 ;;
read-out) cat "$W/out/secret" ;;
read-logs) ls "$W/out/logs/agent-K" | grep -v note ;;
write-out) echo x > "$W/out/written" ;;
connect) perl -MIO::Socket::INET -e "exit !IO::Socket::INET->new(PeerAddr => q(127.0.0.1), PeerPort => \$ARGV[0], Timeout => 2)" "$PORT" ;;
esac 2> /dev/null && exit 1; exit 0'
ESCAPES='write-src write-outside write-tmp read-out read-logs write-out connect'

# escapes WHO: the escapes all fail in the sandbox and get through
# without it, and the world outside shows which
escapes() {
	local who=$1
	listen
	# shellcheck disable=SC2086
	slice "$who" bwrap "$ESCAPE" $ESCAPES
	[ "$status" -eq 0 ] || flunk "in the sandbox, some escape got through:" "$output" "$(verdicts)"
	assert_equal "data" "$(cat "$W/src/lib/input")"
	assert_no_file "$W/outside"
	assert_no_file "$W/out/written"
	assert_no_file "/tmp/$TAG"
	assert_no_file "$W/connected"
	# shellcheck disable=SC2086
	slice "$who" none "$ESCAPE" $ESCAPES
	assert_equal 1 "$status"
	assert_equal "write-src fail
write-outside fail
write-tmp pass
read-out fail
read-logs fail
write-out fail
connect fail" "$(verdicts)"
	assert_equal "x" "$(cat "$W/src/lib/input")"
	assert_file_exists "/tmp/$TAG"
	assert_file_exists "$W/connected"
}

@test "sandbox: as root, a unit writes neither the source, nor outside its clone, nor the real /tmp, cannot read or write CORRAL_OUT or reach 127.0.0.1; without the sandbox it can" {
	escapes root
}

@test "sandbox: as an unprivileged user (user namespaces), the same escapes fail in the sandbox and get through without it" {
	need_nobody
	escapes nobody
}

# HOSTILE_UNIT, the hostile unit (HOSTILE, of test_helper, is hostile
# bytes): each probe a unit that exits 1 when it got through.
# Whatever touches mounts first checks it is in a mount namespace that is
# not the host's (and counts as through when it is not), so that no probe
# ever remounts or unmounts anything of the machine; the rest only read,
# or seize a sleep of the test's own.  A namespace is compared by its id
# (NS_uts ... are the host's), never by renaming anything.
HOSTILE_UNIT='inside() { [ "$(readlink /proc/self/ns/mnt)" != "$NS_mnt" ]; }
own() { eval "host=\$NS_$1"; [ "$(readlink "/proc/self/ns/$1")" != "$host" ]; }
case $CORRAL_UNIT in
caps) grep -q "^CapEff:[[:space:]]*0*$" /proc/self/status ;;
remount) inside || exit 1; mount -o remount,bind,rw / 2> /dev/null; ! echo unit > "$W/marker" ;;
umount-tmp) inside || exit 1; umount -l /tmp 2> /dev/null && exit 1; umount -l "$W/out" 2> /dev/null && exit 1
	[ ! -e "/tmp/$TAG.host" ] && ! cat "$W/out/secret" ;;
umount-proc) inside || exit 1; umount -l /proc 2> /dev/null && exit 1; [ ! -e "/proc/$VICTIM" ] ;;
ptrace) "$PY" -c "import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
sys.exit(libc.ptrace(0x4206, int(os.environ[\"VICTIM\"]), 0, 0) == 0)" ;;
tty) (exec 3< /dev/tty) && exit 1; [ "$(sed "s/.*) //" /proc/self/stat | cut -d" " -f5)" = 0 ] ;;
keyring) "$PY" "$W/keys.py" probe ;;
uts|cgroup|ipc) own "$CORRAL_UNIT" ;;
esac 2> /dev/null'
HOSTILES='caps remount umount-tmp umount-proc ptrace tty keyring uts cgroup ipc'

# keys: $W/keys.py, the keyring's two sides.  "run CMD...": CMD with a
# session keyring of its own holding a key named $TAG, after saying in
# $W/notty whether it has a controlling terminal; "probe": exit 1 when
# that key is found from the session keyring, or the user keyring is the
# host's ($HOST_UKEY).
keys() {
	cat > "$W/keys.py" <<-'EOF'
	import ctypes, os, platform, sys
	libc = ctypes.CDLL(None, use_errno=True)
	libc.syscall.restype = ctypes.c_long
	ADD_KEY, KEYCTL = {"x86_64": (248, 250), "aarch64": (217, 219)}[platform.machine()]
	SESSION, USER = ctypes.c_int(-3), ctypes.c_int(-4)
	tag = os.environ["TAG"].encode()
	if sys.argv[1] == "user":
	    print(libc.syscall(KEYCTL, 0, USER, 1))
	elif sys.argv[1] == "run":
	    try:
	        os.close(os.open("/dev/tty", os.O_RDONLY))
	    except OSError:
	        open(os.environ["W"] + "/notty", "w").close()
	    if libc.syscall(KEYCTL, 1, tag + b"-ring") < 0 or \
	        libc.syscall(ADD_KEY, b"user", tag, b"secret", 6, SESSION) < 0:
	        sys.exit("keys: " + os.strerror(ctypes.get_errno()))
	    os.execvp(sys.argv[2], sys.argv[2:])
	else:
	    found = libc.syscall(KEYCTL, 10, SESSION, b"user", tag, 0) >= 0
	    sys.exit(found or libc.syscall(KEYCTL, 0, USER, 0) == int(os.environ["HOST_UKEY"]))
	EOF
}

# hostile WHO: the hostile units as WHO in a sandbox, the agent started
# from a terminal of its own (script(1)), in a session keyring holding a
# key, beside a sleep of WHO's (VICTIM) outside; each probe must hold
hostile() {
	local who=$1 ns sb
	PY=/usr/bin/python3
	[ -x "$PY" ] || skip "no $PY for the ptrace and keyring probes"
	command -v script > /dev/null || skip "no script(1) to give the run a terminal"
	keys
	for ns in mnt uts cgroup ipc; do
		export "NS_$ns=$(readlink "/proc/self/ns/$ns")"
	done
	printf 'host\n' > "$W/marker"
	: > "/tmp/$TAG.host"
	printf '%s\n' $HOSTILES > "$W/slice"
	printf '%s\n' "$HOSTILE_UNIT" > "$W/hostile.sh"
	as "$who" perl -e 'sleep 1000' "$TAG" > /dev/null 2>&1 3>&- &
	VICTIM=$!
	HOST_UKEY=$(as "$who" "$PY" "$W/keys.py" user)
	export PY VICTIM HOST_UKEY
	sb="$PY $W/keys.py run corral-run-slice -X bwrap -C $W/src -w $W/out/work -l $W/out/logs"
	[ "$who" = root ] || sb="$PY $W/keys.py run setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups -- env TMPDIR=$W/tmp ${sb#* * run }"
	run script -qec "$sb -c '. $W/hostile.sh' K $W/slice" /dev/null < /dev/null
	kill "$VICTIM"
	assert_no_file "$W/notty"
	assert_equal "caps pass
remount pass
umount-tmp pass
umount-proc pass
ptrace pass
tty pass
keyring pass
uts pass
cgroup pass
ipc pass" "$(verdicts)"
	assert_equal 0 "$status"
	assert_equal host "$(cat "$W/marker")"
	rm -f "/tmp/$TAG.host"
}

@test "sandbox: as root, a hostile unit has no capability, cannot remount / writable, unmount /tmp, CORRAL_OUT or /proc, see or ptrace a process outside, reach a controlling terminal or the session keyring, and has its own host name, cgroup and IPC namespaces" {
	hostile root
}

@test "sandbox: as an unprivileged user, the same hostile unit is held the same way" {
	need_nobody
	hostile nobody
}

# DETACH: a unit that leaves processes running out of its group and its
# session, tagged with $TAG
DETACH='setsid sh -c "sleep 1000; : $TAG" > /dev/null 2>&1 &
(sh -c "sleep 1000; : $TAG" > /dev/null 2>&1 &)
nohup sh -c "trap \"\" TERM HUP; sleep 1000; : $TAG" > /dev/null 2>&1 &
sleep 0.2; exit 0'

@test "sandbox: as root and unprivileged, a unit that detaches (setsid, double fork, nohup) leaves no process behind" {
	slice root bwrap "$DETACH" d1 d2
	assert_equal 0 "$status"
	no_process "$TAG"
	[ "$(id -u)" -eq 0 ] || return 0
	slice nobody bwrap "$DETACH" d3
	assert_equal 0 "$status"
	no_process "$TAG"
}

@test "sandbox: an agent killed outright (SIGKILL) leaves nothing of its sandboxed unit running" {
	printf 'u\n' > "$W/slice"
	corral-run-slice -X bwrap -C "$W/src" -w "$W/out/work" -l "$W/out/logs" \
		-c "setsid sh -c 'sleep 1000; : \$TAG' & echo started > \"\$CORRAL_NOTE\"; sleep 1000" \
		K "$W/slice" 3>&- &
	local agent=$! i note=$W/out/logs/agent-K/1.note
	for i in $(seq 100); do [ -s "$note" ] && break; sleep 0.1; done
	assert_equal started "$(cat "$note")"
	kill -KILL "$agent"
	wait "$agent" || true
	no_process "$TAG"
}

# NEIGHBOURS: two units of one slice, one after the other in its one
# sandbox.  'first' leaves all it can for 'second': files in /tmp and
# /dev/shm, a System V shared memory segment, a process that holds a lock
# on a file of the clone (which the slice's units share by design), and
# pids used up.  'second' exits 1 for each that reaches it: a file, a
# segment, the lock still held, a shell that is not its PID namespace's
# first process but its init (namespace ids cannot tell: the kernel
# reuses the first's once it is gone).
NEIGHBOURS='case $CORRAL_UNIT in
first) echo x > /tmp/left && echo x > /dev/shm/left && ipcmk -M 4096 > /dev/null &&
	{ setsid flock left.lock sh -c "echo held > held; sleep 1000; : $TAG" > /dev/null 2>&1 & } &&
	while [ ! -s held ]; do sleep 0.05; done ;;
second) r=0
	[ -e /tmp/left ] && { echo "/tmp/left"; r=1; }
	[ -e /dev/shm/left ] && { echo "/dev/shm/left"; r=1; }
	[ "$(ipcs -m | grep -c "^0x")" = 0 ] || { echo "a segment"; r=1; }
	flock -n left.lock true || { echo "the lock"; r=1; }
	[ "$$" = 2 ] || { echo "pid $$"; r=1; }
	exit $r ;;
esac'

# neighbours WHO: the two in one slice as WHO; nothing of the first
# reaches the second, nor outlives the slice
neighbours() {
	slice "$1" bwrap "$NEIGHBOURS" first second
	assert_equal "first pass
second pass" "$(verdicts)" || flunk "what reached the second:" "$(cat "$W/out/logs/agent-K/2.out")"
	assert_equal 0 "$status"
	no_process "$TAG"
}

@test "sandbox: two units of one slice share no PID or IPC namespace, /tmp, /dev/shm, segment or process (as root)" {
	neighbours root
}

@test "sandbox: unprivileged, two units of one slice share none of it either" {
	need_nobody
	neighbours nobody
}

# ORDINARY: units that do what units do: build in the clone, use /tmp,
# read their inputs, write a note, print, fail, crash, time out (with a
# trap that cleans up in its grace period, or deaf to SIGTERM), pass on
# a retry, hit a limit, print more than the cap
ORDINARY='case $CORRAL_UNIT in
build) cat lib/input > built && mkdir -p obj && cp built obj/ && cat obj/built ;;
tmp) t=$(mktemp) && echo hi > "$t" && cat "$t" && rm "$t" ;;
note) echo "all good here" > "$CORRAL_NOTE" ;;
fail) echo "it broke"; exit 3 ;;
crash) sh -c "kill -SEGV \$\$" ;;
killed) sh -c "kill -KILL \$\$" ;;
graceful) trap "echo cleaned up; exit 7" TERM; while :; do :; done ;;
deaf) trap "" TERM; sleep 10 ;;
flaky) [ -e tried ] && exit 0; touch tried; echo first; exit 1 ;;
big) head -c 5000 /dev/zero | tr "\\0" x; echo ;;
fsize) head -c 100000 /dev/zero > big ;;
esac'
ORDINARIES='build tmp note fail crash killed graceful deaf flaky big fsize'

# recorded WHO SANDBOX: each record of the ordinary units, less its times,
# and the output each left, in $W/recorded.SANDBOX
recorded() {
	local who=$1 sb=$2 f
	printf '%s\n' $ORDINARIES > "$W/slice"
	rm -rf "$W/out/logs"/agent-K*
	as "$who" corral-run-slice -X "$sb" -C "$W/src" -p lib -w "$W/out/work" \
		-l "$W/out/logs" -t 1.5 -g 0.5 -R 1 -o 1000 -L fsize=10000 \
		-c "$ORDINARY" K "$W/slice" 2> /dev/null || true
	{
		records "$W/out/logs/agent-K.jsonl" |
			jq -c 'del(.run) | walk(if type == "object" then
				del(.at, .duration_ms) else . end)'
		for f in "$W/out/logs/agent-K"/*; do
			printf '%s: ' "${f##*/}"; tr '\n' '|' < "$f"; echo
		done
	} > "$W/recorded.$sb"
}

@test "sandbox: passes, failures, crashes, timeouts with and without grace, retries, limits, notes and capped output are recorded the same with it and without" {
	recorded root none
	recorded root bwrap
	diff -u "$W/recorded.none" "$W/recorded.bwrap"
	# And they are what they should be.
	run jq -r '"\(.unit) \(.status) \(.attempt)"' "$W/out/logs/agent-K.jsonl"
	assert_contains "$output" "build pass 1"
	assert_contains "$output" "crash crash 1"
	assert_contains "$output" "killed crash 1"
	assert_contains "$output" "graceful timeout 1"
	assert_contains "$output" "flaky flaky 2"
	assert_contains "$output" "fsize fail 1"
	grep -q '"note":"TIMEOUT: after 1.5s, ended by SIGTERM: cleaned up"' "$W/recorded.bwrap"
	grep -q '"note":"TIMEOUT: after 1.5s, ended by SIGKILL (SIGTERM did not end it within 0.5s)"' "$W/recorded.bwrap"
	grep -q '"note":"all good here"' "$W/recorded.bwrap"
}

@test "sandbox: unprivileged, the ordinary units are recorded the same with it and without" {
	need_nobody
	recorded nobody none
	recorded nobody bwrap
	diff -u "$W/recorded.none" "$W/recorded.bwrap"
}

@test "sandbox: a unit's note is the one file of CORRAL_OUT it may write; an empty one is removed as without the sandbox" {
	slice root bwrap 'echo "mine" > "$CORRAL_NOTE"; [ "$CORRAL_UNIT" = b ] && : > "$CORRAL_NOTE"; ls "$W/out/logs/agent-K"' a b
	assert_equal 0 "$status"
	assert_json '.note == "mine"' <(records "$W/out/logs/agent-K.jsonl" | head -n 1)
	assert_equal "1.note" "$(cat "$W/out/logs/agent-K/1.out")"
	assert_equal "2.note" "$(cat "$W/out/logs/agent-K/2.out")"
	assert_file_exists "$W/out/logs/agent-K/1.note"
	assert_no_file "$W/out/logs/agent-K/2.note"
}

@test "sandbox: CORRAL_SANDBOX_ARGS (-a) adds the user's own bwrap options: a read-write bind" {
	mkdir "$W/shared"
	printf 'u\n' > "$W/slice"
	run corral-run-slice -X bwrap -a --bind -a "$W/shared" -a "$W/shared" \
		-C "$W/src" -w "$W/out/work" -l "$W/out/logs" \
		-c 'echo hello > "$W/shared/f"' K "$W/slice"
	assert_equal 0 "$status"
	assert_equal hello "$(cat "$W/shared/f")"
}

# nobwrap: a directory of everything in /usr/bin but bwrap
nobwrap() {
	local f
	mkdir -p "$W/nobwrap"
	for f in /usr/bin/*; do
		[ "${f##*/}" = bwrap ] || ln -s "$f" "$W/nobwrap/"
	done
}

# stub: a bwrap that fails as one does where namespaces are refused
stub() {
	mkdir -p "$W/stub"
	cat > "$W/stub/bwrap" <<-'EOF'
	#!/bin/sh
	echo "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2
	exit 1
	EOF
	chmod +x "$W/stub/bwrap"
}

@test "sandbox: asked for without bwrap on PATH, corral-run-slice says so in one line and exits 2 before any unit" {
	nobwrap
	printf 'u\n' > "$W/slice"
	PATH=$CORRAL_TEST_BIN:$W/nobwrap run -2 --separate-stderr corral-run-slice -X bwrap \
		-C "$W/src" -w "$W/out/work" -l "$W/out/logs" -c 'touch "$W/ran"' K "$W/slice"
	assert_stderr "corral-run-slice: sandbox 'bwrap' asked for, but there is no 'bwrap' on PATH"
	assert_no_file "$W/ran"
	assert_no_file "$W/out/logs/agent-K.jsonl"
	assert_no_file "$W/out/logs/agent-K"
	PATH=$CORRAL_TEST_BIN:$W/nobwrap run -2 --separate-stderr corral-run-slice -n -X bwrap
	assert_stderr "corral-run-slice: sandbox 'bwrap' asked for, but there is no 'bwrap' on PATH"
}

@test "sandbox: where bwrap fails (namespaces refused), corral-run-slice quotes it in one line and exits 2 before any unit" {
	stub
	printf 'u\n' > "$W/slice"
	PATH=$W/stub:$PATH run -2 --separate-stderr corral-run-slice -X bwrap \
		-C "$W/src" -w "$W/out/work" -l "$W/out/logs" -c 'touch "$W/ran"' K "$W/slice"
	assert_stderr "corral-run-slice: sandbox 'bwrap' asked for, but it does not work here (exit 1: bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.)"
	assert_no_file "$W/ran"
	assert_no_file "$W/out/logs/agent-K"
	run -0 corral-run-slice -n -X bwrap
	run -2 corral-run-slice -n
	run -2 --separate-stderr corral-run-slice -X docker -c true -l logs K slice
	assert_stderr "corral-run-slice: sandbox 'docker' is not 'none' or 'bwrap'"
}

# project: a project in $W/src whose units would touch $W/ran
project() {
	cat > "$W/src/Makefile" <<-EOF
	CORRAL_UNITS = u1 u2 u3
	CORRAL_CMD = touch "$W/ran.\$\$CORRAL_UNIT" 2> /dev/null; ! touch "$W/src/escaped" 2> /dev/null
	include $CORRAL_ROOT/corral.mk
	EOF
}

@test "sandbox: CORRAL_SANDBOX=bwrap where it cannot work stops make corral-run with one line and exit 2, no unit run, no agent started" {
	project
	nobwrap
	stub
	PATH=$CORRAL_TEST_BIN:$W/nobwrap run -2 --separate-stderr make -s -C "$W/src" -j3 corral-run CORRAL_SANDBOX=bwrap
	assert_equal 1 "$(grep -c "sandbox 'bwrap' asked for, but there is no 'bwrap' on PATH" <<<"$stderr")"
	refute_contains "$stderr" "agent"
	PATH=$W/stub:$PATH run -2 --separate-stderr make -s -C "$W/src" -j3 corral-rerun-failed CORRAL_SANDBOX=bwrap
	assert_equal 1 "$(grep -c "sandbox 'bwrap' asked for, but it does not work here" <<<"$stderr")"
	run -2 --separate-stderr make -s -C "$W/src" corral-run CORRAL_SANDBOX=yes
	assert_contains "$stderr" "corral: CORRAL_SANDBOX is 'yes'; it must be none or bwrap"
	assert_no_file "$W/ran.u1"
	assert_no_file "$W/src/.corral/logs"
}

@test "sandbox: make corral-run with CORRAL_SANDBOX=bwrap runs every unit sandboxed and passes; switched off, the slices run again and the same units fail" {
	project
	run -0 make -s -C "$W/src" -j3 corral-run CORRAL_SANDBOX=bwrap
	assert_contains "$output" "3 passed, 0 failed"
	assert_no_file "$W/src/escaped"
	assert_no_file "$W/ran.u1"
	run -2 make -s -C "$W/src" -j3 corral-run CORRAL_SANDBOX=none
	assert_contains "$output" "0 passed, 3 failed"
	assert_file_exists "$W/src/escaped"
}

@test "sandbox: a unit's own shell (-s bash) runs inside the sandbox" {
	printf 'u\n' > "$W/slice"
	run -0 corral-run-slice -X bwrap -s bash -C "$W/src" -w "$W/out/work" \
		-l "$W/out/logs" -c 'echo "$BASH_VERSION" > "$CORRAL_NOTE"; ! touch "$W/src/x"' K "$W/slice"
	assert_json '.note | startswith("5.")' <(records "$W/out/logs/agent-K.jsonl")
	assert_no_file "$W/src/x"
}
