#!/usr/bin/env bats
# status.bats -- corral-status shows, from another terminal, which agents
# of a run are on which unit, for how long against its usual time.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
	_corral_tmpdir
	mkdir -p out
}

teardown() {
	local pid
	for pid in ${AGENTS:-}; do
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
}

USAGE='usage: corral-status [-hj] [-f UNIT] [OUT]'

# agent K CMD UNIT...: start agent K of a run into out/, in the background
agent() {
	local k=$1 cmd=$2
	shift 2
	printf '%s\n' "$@" > "slice$k"
	corral-run-slice -S out/live -r R1 -c "$cmd" -l out/logs "$k" "slice$k" 3>&- &
	AGENTS="${AGENTS:-} $!"
}

# killed_mid_slice SIGNAL: agent 0 of a run of 'a b', killed by SIGNAL on a
killed_mid_slice() {
	agent 0 'sleep 1000' a b
	wait_for grep -q '"unit":"a"' out/live/agent-0.status
	kill -"$1" $AGENTS
	wait $AGENTS || true
	AGENTS=
}

@test "status: -h prints usage to stdout and exits 0" {
	assert_help "$USAGE" corral-status -h
}

@test "status: two operands print usage to stderr and exit 2" {
	assert_usage_error "$USAGE" corral-status a b
}

@test "status: a directory without a run to show exits 2 and says so" {
	run -2 --separate-stderr corral-status nothere
	assert_output ""
	assert_stderr "$(printf '%s\n' "corral-status: cannot open 'nothere/live': No such file or directory" \
		"corral-status: no run to show in 'nothere'")"
}

@test "status: while a run goes, every running agent with its unit and for how long, the longest running first; exit 0" {
	agent 0 'test "$CORRAL_UNIT" = first || sleep 1000' first stuck never
	wait_for grep -q '"unit":"stuck"' out/live/agent-0.status
	agent 1 'sleep 1000' 'later unit'
	wait_for grep -q '"unit":"later unit"' out/live/agent-1.status
	run -0 corral-status -j out
	assert_json '.run == "R1" and .total == 4 and .done == 1 and .pass == 1'
	assert_json '[.agents[] | [.agent, .state, .unit, .i, .units]] == [["0","running","stuck",2,3],["1","running","later unit",1,1]]'
	assert_json '.agents[0].for_ms >= .agents[1].for_ms'
	run -0 corral-status out
	assert_equal "corral status  out  run R1" "${lines[0]}"
	assert_contains "${lines[1]}" "1/4 done (1 pass, 0 fail, 0 skip, 0 flaky, 0 timeout)"
	[[ ${lines[3]} =~ ^\ \ 0\ +[0-9.ms]+\ +\?\ \ stuck\ \(2\ of\ 3\)$ ]] || flunk "${lines[3]}"
	[[ ${lines[4]} =~ ^\ \ 1\ +[0-9.ms]+\ +\?\ \ later\ unit\ \(1\ of\ 1\)$ ]] || flunk "${lines[4]}"
	assert_equal "  2 running, 0 finished" "${lines[5]}"
}

@test "status: -f UNIT prints that unit's output as it is written and exits 0 when it ends; a unit not running exits 1" {
	export GO=$PWD/go
	agent 0 'case "$CORRAL_UNIT" in slow) echo first; while [ ! -e "$GO" ]; do sleep 0.05; done; echo second ;; esac' quick slow after
	wait_for grep -q '"unit":"slow"' out/live/agent-0.status
	corral-status -f slow out > f.out 2> f.err &
	local follower=$!
	wait_for grep -qx first f.out
	[ ! -s f.err ] || flunk "corral-status -f said: $(cat f.err)"
	touch go
	local st=0
	wait "$follower" || st=$?
	assert_equal 0 "$st"
	assert_equal "$(printf 'first\nsecond')" "$(cat f.out)"
	wait $AGENTS
	AGENTS=
	run -1 --separate-stderr corral-status -f slow out
	assert_output ""
	assert_stderr "corral-status: 'slow' is not running in 'out'"
	run -2 --separate-stderr corral-status -f slow -j out
	assert_stderr "corral-status: -f and -j may not be given together"
}

@test "status: a unit's usual time comes from the agent's estimates" {
	printf '%s\n' slow > slice0
	printf '%s\n' 90000 > est
	corral-run-slice -S out/live -e est -c 'sleep 1000' -l out/logs 0 slice0 3>&- &
	AGENTS=$!
	wait_for grep -q '"unit":"slow"' out/live/agent-0.status
	run -0 corral-status -j out
	assert_json '.agents[0].expect_ms == 90000'
	run -0 corral-status out
	assert_contains "${lines[3]}" " 1m30s  slow (1 of 1)"
}

@test "status: once the run is over nothing runs, the tally is whole, and the answer is no (exit 1)" {
	agent 0 'exit 0' a b
	agent 1 'exit 3' c
	wait $AGENTS || true
	AGENTS=
	run -1 corral-status -j out
	assert_json '.total == 3 and .done == 3 and .pass == 2 and .fail == 1'
	assert_json '[.agents[].state] == ["done","done"]'
	run -1 corral-status out
	assert_equal "  0 running, 2 finished" "${lines[2]}"
}

@test "status: an agent killed in the middle of its slice shows as gone" {
	killed_mid_slice KILL
	run -1 corral-status out
	assert_equal "  0 running, 0 finished, agent 0 gone" "${lines[2]}"
}

@test "status: a unit's usual time comes from OUT/history.jsonl when its agent has no estimate" {
	printf '%s\n' '{"agent_id":"0","unit":"slow","ok":true,"note":"PASS: exit 0","at":"2026-11-29T10:00:00.000Z","status":"pass","exit":0,"signal":null,"duration_ms":90000,"attempt":1,"run":"R0"}' > out/history.jsonl
	agent 0 'sleep 1000' slow
	wait_for grep -q '"unit":"slow"' out/live/agent-0.status
	run -0 corral-status -j out
	assert_json '.agents[0].expect_ms == 90000 and .over == false'
	run -0 corral-status out
	assert_contains "${lines[3]}" " 1m30s  slow (1 of 1)"
	assert_contains "${lines[1]}" "elapsed, ETA"
}

@test "status: once the run is over it says so and how long it took, with no ETA, also when it was interrupted" {
	agent 0 'exit 0' a b
	wait $AGENTS || true
	AGENTS=
	run -1 corral-status out
	assert_contains "${lines[1]}" "2/2 done (2 pass, 0 fail, 0 skip, 0 flaky, 0 timeout), took "
	assert_contains "${lines[1]}" "; the run is over"
	refute_contains "$output" "ETA"
	run -1 corral-status -j out
	assert_json '.over == true'
	rm -rf out
	killed_mid_slice TERM
	run -1 corral-status out
	assert_contains "${lines[1]}" "0/2 done"
	assert_contains "${lines[1]}" "; the run is over"
	refute_contains "$output" "ETA"
}

# live_state NOW_MS TICK... < UNITS: out/live as a run leaves it, written by
# hand: the ticks given, and per line "AGENT UNIT RAN_MS EXPECT_MS" (-1:
# no estimate) an agent of this shell's pid on UNIT for RAN_MS
live_state() {
	local now=$1 agent unit ran expect
	shift
	mkdir -p out/live
	printf '%s\n' "$@" > out/live/ticks
	while read -r agent unit ran expect; do
		printf '{"agent":"%s","pid":%d,"run":"R1","units":1,"at_ms":%d}\n' \
			"$agent" "$$" "$((now - ran))" > "out/live/agent-$agent.status"
		if [ "$expect" -ge 0 ]; then
			printf '{"unit":"%s","i":1,"attempt":1,"at_ms":%d,"expect_ms":%d}\n' \
				"$unit" "$((now - ran))" "$expect"
		else
			printf '{"unit":"%s","i":1,"attempt":1,"at_ms":%d}\n' \
				"$unit" "$((now - ran))"
		fi >> "out/live/agent-$agent.status"
	done
}

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

@test "status: the ETA of units with known durations: two 6-second units 2.3 s in have 3.7 s left, not what the finished units' share says" {
	local now
	now=$(now_ms)
	live_state "$now" "T 4" "S 2 2 $((now - 4000))" "S 2 2 $((now - 4000))" \
		"p 1 1000" "p 1 1000" <<-EOF
	0 six-a 2300 6000
	1 six-b 2300 6000
	EOF
	run -0 corral-status -j out
	# it only falls as time goes: 3.7 s at most, and not much less
	assert_json '.eta_ms <= 3700 and .eta_ms >= 3000 and .done == 2 and .total == 4'
	run -0 corral-status out
	[[ ${lines[1]} =~ ETA\ 3\.[0-7]s$ ]] || flunk "${lines[1]}"
}

@test "status: the ETA without estimates comes from the run so far: 4 units done at 0.5 s each, 6 to go over 2 agents, about 1.5 s" {
	local now
	now=$(now_ms)
	live_state "$now" "T 10" "S 5 5 $((now - 2000))" "S 5 5 $((now - 2000))" \
		"p 1 500" "p 1 500" "f 1 500" "s 1 500" <<-EOF
	0 u5 0 -1
	1 u6 0 -1
	EOF
	run -0 corral-status -j out
	assert_json '.eta_ms <= 1500 and .eta_ms >= 1000 and .skip == 1 and .fail == 1'
	run -0 corral-status out
	assert_contains "${lines[1]}" "4/10 done (2 pass, 1 fail, 1 skip, 0 flaky, 0 timeout), "
}

@test "status: the progress line of a run of one agent a unit, on a terminal, counts skips and gives an ETA from the run so far, never 0.0s while units are left" {
	mkdir proj
	printf '%s\n' a b c d e f g h > proj/units.txt
	printf '%s\n' 'CORRAL_UNITS_FILE = units.txt' \
		'CORRAL_CMD = sleep 0.3; test "$$CORRAL_UNIT" != c || exit 77' \
		"include $CORRAL_ROOT/corral.mk" > proj/Makefile
	# script(1): the agents' standard error is a terminal, so they redraw
	run -0 script -qec 'make -C proj -j2 corral-run' /dev/null < /dev/null
	printf '%s' "$output" | tr '\r' '\n' | grep -o '[0-9]*/8 done (.*ETA [0-9.ms]*' > lines
	[ "$(wc -l < lines)" -ge 7 ] || flunk "$(cat lines)"
	# every line with units left has an ETA above 0
	grep -v '^8/8' lines | grep 'ETA 0\.0s' && flunk "an ETA of 0.0s with units left: $(cat lines)"
	grep -q '^8/8 done (7 pass, 0 fail, 1 skip, 0 flaky, 0 timeout), ' lines ||
		flunk "no last line: $(cat lines)"
}

@test "status: on a terminal the agents' status line is cleared before make's step lines, never run into them" {
	mkdir proj
	printf '%s\n' a b c d e f > proj/units.txt
	printf '%s\n' 'CORRAL_UNITS_FILE = units.txt' 'CORRAL_CMD = sleep 0.2' \
		"include $CORRAL_ROOT/corral.mk" > proj/Makefile
	run -0 script -qec 'make --no-print-directory -C proj -j2 corral-run' /dev/null < /dev/null
	printf '%s' "$output" > raw
	grep -aq 'SLICE' raw || flunk "no step lines: $output"
	grep -aq 'ETA' raw || flunk "no status line: $output"
	# each step line starts its line, or follows the clear that ends one
	tr '\r' '\n' < raw | sed 's/\x1b\[K//g' | grep -a '[^ ]  *\(SLICE\|MERGE\) ' &&
		flunk "a step line run into the status line"
	true
}
