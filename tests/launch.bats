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

# refuse UNIT STATUS [LINE...]: a launcher that starts the agent under the
# stub, but for a slice holding UNIT (every slice when UNIT is empty; the
# agent's last operand is the slice's units) starts nothing: it adds the
# slice's units to refused, prints LINE... to stderr, as srun does, and
# exits STATUS.
refuse() {
	: > refuse.msg
	[ "$#" -le 2 ] || printf '%s\n' "${@:3}" > refuse.msg
	cat > refuse <<EOF2
#!/bin/sh
eval "slice=\\\${\$#}"
if [ -z "$1" ] || grep -qxF "$1" "\$slice"; then
	cat "\$slice" >> "$PWD/refused"
	cat "$PWD/refuse.msg" >&2
	exit $2
fi
exec "$PWD/launch" "\$@"
EOF2
	chmod +x refuse
}

# notrun: the units of failures.jsonl that are not-run, sorted, one line
notrun() {
	jq -r 'select(.status == "not-run") | .unit' proj/.corral/failures.jsonl |
		sort | tr '\n' ' '
}

@test "launch: a step srun lost ('Node failure', status 0): its slice's units not-run, the note quoting srun; a re-run runs exactly those" {
	project true a b c d e f
	refuse c 0 'slurmstepd-n2: error: *** STEP 7.2 ON n2 CANCELLED AT 2026-12-02T01:00:00 DUE TO NODE FAILURE ***' \
		'srun: error: Node failure on n2'
	run -2 --separate-stderr make -C proj -j3 corral-run CORRAL_AGENTS=3 CORRAL_LAUNCH="$PWD/refuse"
	# srun's own lines still reach the user, and the engine says it once
	assert_contains "$stderr" "DUE TO NODE FAILURE ***
srun: error: Node failure on n2"
	assert_contains "$stderr" "was not started (or lost) by the launcher (status 0): srun: error: Node failure on n2; its units count as not run"
	lost=$(sort refused | tr '\n' ' ')
	[ -n "$lost" ] || flunk "no slice was refused"
	assert_equal "$lost" "$(notrun)"
	run -0 jq -r 'select(.status == "not-run") | .note' proj/.corral/failures.jsonl
	assert_equal "NOT-RUN: launcher: srun: error: Node failure on n2" "$(sort -u <<<"$output")"
	n=$(wc -l < refused)
	assert_json ".units == 6 and .successes == 6 - $n and .missing == $n" proj/.corral/summary.json
	: > ran
	run -0 make -C proj -j3 corral-run CORRAL_AGENTS=3
	assert_equal "$lost" "$(cut -d' ' -f1 ran | sort | tr '\n' ' ')"
	assert_json '.successes == 6 and .missing == 0' proj/.corral/summary.json
}

@test "launch: a launcher refused before the agent starts (status 1) is told from a unit that fails" {
	project 'test "$$CORRAL_UNIT" != a' a b c d e f
	refuse d 1 'srun: error: Unable to create step for job 7: Requested node configuration is not available'
	run -2 --separate-stderr make -C proj -j3 corral-run CORRAL_AGENTS=6 CORRAL_LAUNCH="$PWD/refuse"
	assert_equal d "$(cat refused)"
	assert_contains "$stderr" "was not started (or lost) by the launcher (status 1): srun: error: Unable to create step"
	assert_equal "d " "$(notrun)"
	run -0 jq -r 'select(.unit == "d") | .note' proj/.corral/failures.jsonl
	assert_output "NOT-RUN: launcher: srun: error: Unable to create step for job 7: Requested node configuration is not available"
	# a unit's own exit 1 stays a fail
	run -0 jq -r 'select(.unit == "a") | "\(.status) \(.exit) \(.note)"' proj/.corral/failures.jsonl
	assert_output "fail 1 FAIL: exit 1"
	assert_json '.units == 6 and .successes == 4 and .missing == 1' proj/.corral/summary.json
}

@test "launch: every launch refused, saying nothing: still a result, every unit not-run, the note naming the launcher's status" {
	project true a b c
	refuse '' 1
	run -2 --separate-stderr make -C proj -j3 corral-run CORRAL_AGENTS=3 CORRAL_LAUNCH="$PWD/refuse"
	assert_contains "$stderr" "by the launcher (status 1); its units count as not run"
	assert_json '.units == 3 and .merged == 0 and .missing == 3' proj/.corral/summary.json
	assert_equal "a b c " "$(notrun)"
	run -0 jq -r .note proj/.corral/failures.jsonl
	assert_equal "NOT-RUN: launcher exited with status 1" "$(sort -u <<<"$output")"
}

@test "launch: the launcher's message in a note is one shown line, bounded" {
	project true a
	refuse a 0 "srun: error: $(printf '\033]0;owned\007')$(printf '%0500d' 0)"
	run -2 make -C proj corral-run CORRAL_LAUNCH="$PWD/refuse"
	run -0 jq -r .note proj/.corral/failures.jsonl
	assert_contains "$output" "NOT-RUN: launcher: srun: error: ?]0;owned?000"
	[ "${#output}" -le 240 ] || flunk "a note of ${#output} bytes"
}

# --- CORRAL_WORK: the clones on the node's own scratch ------------------
#
# node_project UNITS...: a project whose agents run under ./node, a
# launcher that, like srun on a cluster, starts the agent on a "node":
# SLURMD_NODENAME is STUB_NODE, else one of n1-n3 by its pid.  Each
# unit notes its name, node and working directory (its clone) in ran.
node_project() {
	cat > node <<'EOS'
#!/bin/sh
while [ "$#" -gt 0 ]; do case $1 in -*) shift ;; *) break ;; esac; done
SLURMD_NODENAME=${STUB_NODE:-n$(($$ % 3 + 1))}
export SLURMD_NODENAME
exec "$@"
EOS
	chmod +x node
	_corral_project "$@" <<EOF
CORRAL_CMD = printf '%s %s %s\\n' "\$\$CORRAL_UNIT" "\$\$SLURMD_NODENAME" "\$\$PWD" >> "$PWD/ran"
CORRAL_LAUNCH = $PWD/node
EOF
}

@test "launch: CORRAL_WORK puts each agent's clone in its node's own directory, \$NAME expanded where the agent runs; CORRAL_OUT keeps logs and results and no clone" {
	node_project a b c d e f
	# relative: to the project's directory, like every path knob
	run -0 make -C proj -j3 corral-run CORRAL_AGENTS=6 \
		CORRAL_WORK='scratch-$$SLURMD_NODENAME'
	assert_json '.units == 6 and .successes == 6 and .missing == 0' proj/.corral/summary.json
	assert_equal 6 "$(wc -l < ran)"
	local unit node dir
	while read -r unit node dir; do
		case $dir in
		"$PWD/proj/scratch-$node/corral-"*/*/corral-*) ;;
		*) flunk "unit $unit ran on $node in '$dir', not under proj/scratch-$node" ;;
		esac
	done < ran
	assert_no_file proj/.corral/work
	# the agents removed their clones: each node keeps one empty
	# directory of the run, in one of this CORRAL_OUT
	run -0 sh -c 'cd proj && find scratch-* -mindepth 1 | sed "s|^[^/]*/corral-[0-9a-f]*/[^/]*$|RUN|;s|/corral-[0-9a-f]*$|/OUT|" | sort -u'
	assert_output "$(printf '%s\n' RUN $(cd proj && ls -d scratch-* | sed 's|$|/OUT|') | sort)"
}

@test "launch: a clone a lost node left under CORRAL_WORK is removed by the next run that lands on that node, not another CORRAL_OUT's" {
	node_project a b
	export STUB_NODE=n1 SCRATCH=$PWD/s
	run -0 make -C proj corral-run CORRAL_WORK='$$SCRATCH/$$SLURMD_NODENAME'
	local mine first
	mine=$(ls -d s/n1/corral-*)
	first=$(ls "$mine")
	# what a run on a node lost mid-slice left: its clone, a directory
	# made unreadable in it, and a sweep cut short; another CORRAL_OUT's
	mkdir -p "$mine/20261201T000000000Z/corral-0.AbCdEf/sub" \
		"$mine/.gone.20261201T000000000Z.77.0/x" s/n1/corral-0123456789abcdef/20261201T000000000Z/corral-0.x
	chmod 000 "$mine/20261201T000000000Z/corral-0.AbCdEf/sub"
	: > ran
	run -0 make -C proj -B corral-run CORRAL_WORK='$$SCRATCH/$$SLURMD_NODENAME'
	assert_equal 2 "$(wc -l < ran)"
	run -0 ls -A "$mine"
	[ "${#lines[@]}" -eq 1 ] && [ "$output" != "$first" ] ||
		flunk "left in $mine: $output"
	[ -d s/n1/corral-0123456789abcdef/20261201T000000000Z/corral-0.x ] ||
		flunk "another CORRAL_OUT's clone was removed"
}
