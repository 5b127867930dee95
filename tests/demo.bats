#!/usr/bin/env bats
# demo.bats -- corral-demo runs 12 checks in 12 slices, 4 agents at a time
# (make -j4, CORRAL_AGENTS=4), through corral.mk in a temporary directory, prints what it read back, removes
# the directory, and never claims what did not happen.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
	_corral_tmpdir
}

# A make on PATH before the real one: it logs its arguments to make.log
# and runs the real make with them, followed by the one argument
# MAKE_EXTRA when that is set.
make_stub() {
	mkdir -p stubs
	cat > stubs/make <<'EOF'
#!/bin/sh
printf '%s\n' "$*" >> "$MAKE_LOG"
exec /usr/bin/make "$@" ${MAKE_EXTRA:+"$MAKE_EXTRA"}
EOF
	chmod +x stubs/make
	export MAKE_LOG=$PWD/make.log
}

@test "demo: -h prints usage; an operand is a usage error" {
	assert_help "usage: corral-demo [-h]" corral-demo -h
	assert_usage_error "usage: corral-demo [-h]" corral demo extra
}

@test "demo: 12 checks in 12 slices, 4 agents at a time: slices 12, merged 12, successes 9, failures 3, exit 0" {
	run -0 --separate-stderr corral demo
	assert_stderr ""
	local dir
	dir=$(printf '%s\n' "$output" | sed -n 's/^  ran make -j4 corral-run in \(corral_demo_[A-Za-z0-9]*\)\/, .*/\1/p')
	[ -n "$dir" ] || flunk "no directory named in: $output"
	assert_output "corral demo -- 12 checks in 12 slices, 4 isolated agents at a time
================================================================
  ran make -j4 corral-run in $dir/, whose Makefile includes
  $CORRAL_ROOT/corral.mk
  slices: 12   merged: 12   successes: 9   failures: 3
  no history yet: CORRAL_AGENTS=4 is how many agents run at once, and the
  first plan cuts a slice per check for make's queue to balance
  each agent wrote its OWN log in $dir/.corral/logs/agent-*.jsonl
  ONE merge folded them into successes.jsonl + failures.jsonl -- no shared-folder
  contention, every result present exactly once; check-00, check-05 and
  check-10 failed on purpose.

For a real subagent fan-out: corral plan gives each agent the parts to clone,
what to test, and a unique log path; start the agents, then run corral merge once."
}

@test "demo: the temporary directory it used is gone afterwards" {
	run -0 --separate-stderr corral demo
	assert_contains "$output" "corral_demo_"
	run -0 ls -A "$TMPDIR"
	assert_output ""
}

@test "demo: it goes through make -j4 corral-run, whatever CORRAL_* or MAKEFLAGS the caller exported" {
	skip_if_wrapped
	make_stub
	CORRAL_AGENTS=7 CORRAL_V=1 MAKEFLAGS=-n PATH=$PWD/stubs:$PATH \
		run -0 --separate-stderr corral demo
	assert_contains "$output" "slices: 12   merged: 12   successes: 9   failures: 3"
	run -0 cat make.log
	assert_contains "$output" "--no-print-directory -j4 corral-run CORRAL_AGENTS=4 CORRAL_BIN=$CORRAL_TEST_BIN"
}

@test "demo: when what it shows is not what it claims, it says which claim failed and exits 1" {
	make_stub
	# round-robin keeps CORRAL_AGENTS=4 slices: not the plan it describes
	MAKE_EXTRA=CORRAL_SPLIT=roundrobin PATH=$PWD/stubs:$PATH \
		run -1 --separate-stderr corral demo
	assert_contains "$output" "  slices: 4   merged: 12   successes: 9   failures: 3"
	refute_contains "$output" "ONE merge folded them"
	assert_contains "$stderr" "corral-demo: the demo did not behave as described: there are not exactly 12 finished agent logs, one a slice"
	assert_contains "$stderr" "corral-demo: what make printed:"
	run -0 ls -A "$TMPDIR"
	assert_output ""
}

@test "demo: checks that all pass are caught: the wrong failures, and a make that exits 0" {
	make_stub
	MAKE_EXTRA=CORRAL_CMD=true PATH=$PWD/stubs:$PATH \
		run -1 --separate-stderr corral demo
	assert_contains "$output" "  slices: 12   merged: 12   successes: 12   failures: 0"
	assert_contains "$stderr" "corral-demo: the demo did not behave as described: make corral-run did not report the failed checks in its exit status"
	assert_contains "$stderr" "corral-demo: the demo did not behave as described: the failures are not exactly check-00, check-05 and check-10"
}

@test "demo: a clone holding another agent's checks is caught" {
	make_stub
	MAKE_EXTRA='CORRAL_PARTS=check.sh checks' PATH=$PWD/stubs:$PATH \
		run -1 --separate-stderr corral demo
	assert_contains "$stderr" "the demo did not behave as described: a clone held checks of another agent"
}

@test "demo: without make it cannot run: exit 2, the reason, no directory left" {
	skip_if_wrapped
	run -2 --separate-stderr env PATH=/nonexistent "$CORRAL_TEST_BIN/corral-demo"
	assert_output ""
	assert_stderr "corral-demo: cannot run 'make': No such file or directory"
	run -0 ls -A "$TMPDIR"
	assert_output ""
}

@test "demo: without corral.mk near the programs it exits 2 and names where it looked" {
	skip_if_wrapped
	mkdir bin
	cp "$CORRAL_TEST_BIN/corral-demo" bin/
	run -2 --separate-stderr bin/corral-demo
	assert_stderr "corral-demo: corral.mk not found; looked for '$PWD/bin/../share/corral/corral.mk', '$PWD/bin/../corral.mk'"
}

@test "demo: a write error on standard output exits 2" {
	run -2 --separate-stderr sh -c 'corral demo > /dev/full'
	assert_stderr "corral-demo: cannot write standard output: No space left on device"
}
