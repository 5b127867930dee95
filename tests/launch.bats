#!/usr/bin/env bats
# launch.bats -- CORRAL_LAUNCH: every slice's agent under a command prefix
# (for Slurm, srun inside one salloc), tested with a stub launcher that,
# like srun, starts the agent as a child of its own with none of the
# caller's descriptors, and gives it a step id.  Timeouts, the guard,
# Ctrl-C and SIGTERM still end everything.

bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
	mkdir -p proj
	# The stub: one line per launch in launches, its own options skipped,
	# the lock's descriptor closed (srun passes none), the agent a child,
	# a step id, signals passed on; with STUB_KILL, the step is killed
	# 0.5 s after it starts.
	cat > launch <<'EOF'
#!/bin/sh
echo "$*" >> "$LAUNCHES"
while [ "$#" -gt 0 ]; do case $1 in -*) shift ;; *) break ;; esac; done
[ -z "${__corral_lock:-}" ] || eval "exec $__corral_lock>&-"
STUB_STEP_ID=$$
export STUB_STEP_ID
"$@" &
child=$!
trap 'kill -TERM $child 2>/dev/null' TERM INT
if [ -n "${STUB_KILL:-}" ]; then sleep 0.5; kill -KILL $child; fi
wait $child
st=$?
wait $child 2>/dev/null && st=0
exit $st
EOF
	chmod +x launch
	LAUNCHES=$PWD/launches
	export LAUNCHES
}

# project CMD UNITS...: a project whose units run CMD
project() {
	local cmd=$1
	shift
	_corral_project "$@" <<EOF
CORRAL_CMD = printf '%s %s\\n' "\$\$CORRAL_UNIT" "\$\$STUB_STEP_ID" >> "$PWD/ran"; $cmd
CORRAL_LAUNCH = $PWD/launch -n1 --exact
EOF
}

@test "launch: CORRAL_LAUNCH runs every slice's agent under the prefix, each its own step, every unit exactly once" {
	project true a b c d e f
	run -0 make -C proj -j3 corral-run CORRAL_AGENTS=3 CORRAL_WAIT=10
	assert_equal 3 "$(grep -c '^-n1 --exact [^ ]*/corral-run-slice ' launches)"
	assert_equal "a b c d e f" "$(cut -d' ' -f1 ran | sort | tr '\n' ' ' | sed 's/ $//')"
	assert_equal 3 "$(cut -d' ' -f2 ran | sort -u | wc -l)"
	assert_json '.units == 6 and .successes == 6 and .missing == 0' proj/.corral/summary.json
}

@test "launch: a unit's timeout still ends it under the launcher" {
	project 'sleep 30' a
	SECONDS=0
	run -2 make -C proj corral-run CORRAL_TIMEOUT=0.5 CORRAL_GRACE=0.2
	[ "$SECONDS" -lt 15 ] || flunk "the timeout took ${SECONDS}s"
	run -0 jq -r .status proj/.corral/failures.jsonl
	assert_output timeout
}

# run_bg: make corral-run in the background, in a process group of its
# own, until a unit has started (30 s at most); $pid is make's.  A
# background job of a script starts with SIGINT ignored: undone, as a
# terminal's make has it.
run_bg() {
	setsid perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV' \
		make -C proj corral-run CORRAL_GRACE=0.2 >out 2>&1 &
	pid=$!
	echo "$pid" >> "$BATS_TEST_TMPDIR/bg.pids"
	for _ in $(seq 300); do [ ! -s ran ] || break; sleep 0.1; done
	[ -s ran ] || flunk "no unit started"
}

# gone PATTERN: within 10 s, no process whose command line matches
gone() {
	for _ in $(seq 100); do
		pgrep -f "$1" >/dev/null || return 0
		sleep 0.1
	done
	flunk "still running: $(pgrep -af "$1")"
}

@test "launch: SIGTERM to make ends the agents under the launcher and their units" {
	project "sleep 31.$$" a b
	run_bg
	kill -TERM "$pid"
	wait "$pid" || true
	gone "sleep 31.$$"
	gone "corral-run-slice.*$PWD/proj"
}

@test "launch: Ctrl-C (SIGINT to make's process group) ends everything" {
	project "sleep 32.$$" a b
	run_bg
	SECONDS=0
	kill -INT -- "-$pid"
	wait "$pid" || true
	# the units would end by themselves only after 64 s
	[ "$SECONDS" -lt 15 ] || flunk "make ended ${SECONDS}s after the interrupt"
	gone "sleep 32.$$"
	gone "corral-run-slice.*$PWD/proj"
}

@test "launch: a step the launcher kills leaves its units not-run, named, and a re-run completes them" {
	project 'sleep 2' a
	STUB_KILL=1 run -2 --separate-stderr make -C proj corral-run
	assert_contains "$stderr" "corral-merge: unit 'a' is missing"
	run -0 jq -r .status proj/.corral/failures.jsonl
	assert_output not-run
	project true a
	run -0 make -C proj corral-run
	assert_json '.successes == 1 and .missing == 0' proj/.corral/summary.json
}

@test "launch: an agent launched on another node does not take make's pid, meaningless there, for its guard" {
	project true a b
	# Another node: another host name, and make's pid names nobody there.
	cat > remote <<'EOS'
#!/bin/sh
n=0
for a in "$@"; do
	n=$((n + 1))
	if [ "$prev" = -G ]; then set -- "$@" 999999999; else set -- "$@" "$a"; fi
	prev=$a
done
shift "$n"
__corral_guard_node=node-elsewhere exec "$@"
EOS
	chmod +x remote
	run -0 make -C proj corral-run CORRAL_LAUNCH="$PWD/remote"
	assert_json '.successes == 2 and .missing == 0' proj/.corral/summary.json
}
