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
