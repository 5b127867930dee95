#!/usr/bin/env bats
# fuzz.bats -- every input the fuzz harnesses of fuzz/ found a crash with
# (kept in fuzz/corpus/NAME too), fed to the program that reads it.  The
# crashes were out-of-bounds reads that only the sanitizer build sees
# fail; the release build checks the answer.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
}

@test "fuzz: a time cut short after its dot is read as .000, never past its end" {
	mkdir logs rerun
	printf '{"unit":"b","ok":false,"at":"2024-01-02T00:00:34."}\n' > logs/agent-0.jsonl
	printf '{"unit":"b","ok":true,"at":"2024-01-02T00:00:34."}\n' > rerun/agent-0.jsonl
	run -0 --separate-stderr corral-merge -q -o out logs rerun
	assert_json '.unit == "b"' out/successes.jsonl
	[ ! -s out/failures.jsonl ] || flunk "the earlier layer won the tie"
}

# stand-in harnesses: each prints libFuzzer's closing lines, or fails
_harness() {
	printf '#!/bin/sh\n%s\n' "$2" > "$1"
	chmod +x "$1"
}

@test "fuzz: harnesses run one per CPU at once; one that fails fails the run, and every other still reports" {
	mkdir -p build/fuzz fuzz/corpus
	for n in a b c; do
		_harness $n 'echo "stat::number_of_executed_units: 5"; echo "Done 5 runs in 1 second"'
	done
	_harness bad 'echo the sanitizer report; exit 1'
	run --separate-stderr env FUZZ_JOBS=2 sh "$CORRAL_ROOT/build-aux/fuzz" -runs=5 ./a ./bad ./b ./c
	[ "$status" -eq 1 ] || flunk "a failed harness left exit $status"
	[ "${#lines[@]}" -eq 4 ] || flunk "wanted a line per passing harness and the total: $output"
	[[ ${lines[0]} == *" a "*"5 runs"* && ${lines[1]} == *" b "* && ${lines[2]} == *" c "* ]] ||
		flunk "the lines are not in the order given: $output"
	[[ ${lines[3]} == *"15 runs in all" ]] || flunk "the total: $output"
	[[ $stderr == *"the sanitizer report"*"fuzz: 'bad' failed; its log is 'build/fuzz/bad.log'"* ]] ||
		flunk "the failure's log tail and name: $stderr"
}
