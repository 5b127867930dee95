#!/usr/bin/env bats
# examples.bats -- every project under examples/ runs as its README says.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
}

@test "examples: textkit through corral.mk gives 12 units, 10 passed, the 2 planted failures failed" {
	run -2 make -C "$CORRAL_ROOT/examples/textkit" -j4 corral-run \
		CORRAL_OUT="$PWD/out" CORRAL_BIN="$CORRAL_TEST_BIN"
	assert_json '[.units, .successes, .failures, .missing, .duplicates, .agents] == [12, 10, 2, 0, 0, 4]' out/summary.json
	run -0 jq -r .unit out/failures.jsonl
	assert_output "$(printf 'tests/slug-squeeze.sh\ntests/titlecase.sh')"
}

@test "examples: the textkit run left no clone behind and wrote only under CORRAL_OUT" {
	local before
	before=$(cd "$CORRAL_ROOT/examples/textkit" && find . -path ./.corral -prune -o -print | LC_ALL=C sort | sha256sum)
	run -2 make -C "$CORRAL_ROOT/examples/textkit" -j4 corral-run \
		CORRAL_OUT="$PWD/out" CORRAL_BIN="$CORRAL_TEST_BIN"
	run -0 find out/work -mindepth 1
	assert_output ""
	assert_equal "$before" "$(cd "$CORRAL_ROOT/examples/textkit" && find . -path ./.corral -prune -o -print | LC_ALL=C sort | sha256sum)"
}

@test "examples: by-hand/fanout.sh does the same fan-out with the four programs and xargs -P" {
	run -1 --separate-stderr "$CORRAL_ROOT/examples/by-hand/fanout.sh" \
		"$CORRAL_ROOT/examples/textkit" 4 out
	assert_output "merged 12 units from 4 agents: 10 passed, 2 failed"
	assert_json '.units == 12 and .successes == 10 and .failures == 2 and .missing == 0' out/summary.json
	run -0 ls out/logs
	assert_contains "$output" "agent-3.jsonl"
}

@test "examples: make demo runs the bundled example from scratch and checks its result" {
	run -0 make -C "$CORRAL_ROOT" --no-print-directory demo
	assert_contains "$output" "demo: as expected -- 12 units, 10 passed, 2 failed on purpose, none lost or doubled"
}
