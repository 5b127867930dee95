#!/usr/bin/env bats
# paths.bats -- paths that are not regular files.  An output that exists
# and is not a regular file is written in place (a named descriptor, a
# character device, a FIFO) or refused, never replaced; an input that is
# not a regular file is refused at once, never waited on.  Devices are made
# here with mknod (1,7 is a full device, 1,3 a null one), never the real
# /dev/full: a regression would replace it.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
	mkdir src
	echo a > src/a
	mknod full c 1 7
	mknod null c 1 3
	mkfifo fifo
}

# results: merged results of one passing unit in out/
results() {
	printf 'a\n' > slice
	corral-run-slice -c true -l out/logs 0 slice
	corral-merge -q -o out out/logs
}

# read_fifo FILE: copy what the FIFO gives to FILE, in the background
read_fifo() {
	timeout 10 cat fifo > "$1" &
}

# --- outputs ------------------------------------------------------------

@test "paths: checkout -m writes a device in place, full or not, and never replaces it" {
	run -2 --separate-stderr timeout 10 corral-checkout -m full src a
	assert_stderr "corral-checkout: cannot write 'full': No space left on device"
	[ -c full ] || flunk "full was replaced"
	run -0 --separate-stderr timeout 10 corral-checkout -m null src a
	[ -c null ] || flunk "null was replaced"
	run -0 ls -A
	assert_output "$(printf 'fifo\nfull\nnull\nsrc')"
}

@test "paths: report -j writes a device in place, full or not, and never replaces it" {
	results
	run -2 --separate-stderr timeout 10 corral-report -j full out
	assert_stderr "corral-report: cannot write 'full': No space left on device"
	[ -c full ] || flunk "full was replaced"
	run -0 --separate-stderr timeout 10 corral-report -j null out
	[ -c null ] || flunk "null was replaced"
	run -0 ls -A
	assert_output "$(printf 'fifo\nfull\nnull\nout\nslice\nsrc')"
}

@test "paths: checkout -m and report -j write a FIFO in place for its reader" {
	results
	read_fifo got.manifest
	run -0 --separate-stderr timeout 10 corral-checkout -m fifo src a
	wait
	[ -p fifo ] || flunk "the FIFO was replaced"
	assert_contains "$(cat got.manifest)" " a"
	read_fifo got.xml
	run -0 --separate-stderr timeout 10 corral-report -j fifo out
	wait
	[ -p fifo ] || flunk "the FIFO was replaced"
	assert_contains "$(cat got.xml)" "<testsuites"
}

@test "paths: report -j /dev/fd/1 writes standard output, also when it is a file" {
	results
	timeout 10 corral-report -j /dev/fd/1 out > got.xml
	assert_contains "$(cat got.xml)" "<testsuites"
	run -0 --separate-stderr timeout 10 corral-checkout -m /dev/fd/1 src a
	assert_contains "$output" " a"
}

@test "paths: a directory, or a socket, as an output is refused by name" {
	mkdir dir
	run -2 --separate-stderr corral-checkout -m dir src a
	assert_stderr "corral-checkout: 'dir' is a directory, not a regular file"
	[ -d dir ] || flunk "dir was replaced"
	python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("sock")'
	run -2 --separate-stderr corral-checkout -m sock src a
	assert_stderr "corral-checkout: 'sock' is a socket, not a regular file"
	[ -S sock ] || flunk "sock was replaced"
}

@test "paths: merge refuses a device or a FIFO among its results and replaces neither" {
	printf '{"agent_id":"0","unit":"a","ok":true}\n' > agent-0.jsonl
	mkdir -p logs out
	mv agent-0.jsonl logs/
	mknod out/successes.jsonl c 1 7
	run -2 --separate-stderr timeout 10 corral-merge -q -o out logs
	assert_stderr "corral-merge: 'out/successes.jsonl' is a character device, not a regular file"
	[ -c out/successes.jsonl ] || flunk "the device was replaced"
	rm out/successes.jsonl
	mkfifo out/summary.json
	run -2 --separate-stderr timeout 10 corral-merge -q -o out logs
	assert_stderr "corral-merge: 'out/summary.json' is a FIFO, not a regular file"
	[ -p out/summary.json ] || flunk "the FIFO was replaced"
}

@test "paths: split refuses a device or a FIFO as a slice file and replaces neither" {
	printf 'a\nb\n' > units
	mkdir slices
	mknod slices/0.units c 1 7
	mkfifo slices/1.units
	run -2 --separate-stderr timeout 10 corral-split -n 2 -o slices units
	assert_stderr "corral-split: 'slices/0.units' is a character device, not a regular file"
	[ -c slices/0.units ] || flunk "the device was replaced"
	rm slices/0.units
	run -2 --separate-stderr timeout 10 corral-split -n 2 -o slices units
	assert_stderr "corral-split: 'slices/1.units' is a FIFO, not a regular file"
	[ -p slices/1.units ] || flunk "the FIFO was replaced"
}

# --- inputs -------------------------------------------------------------

@test "paths: merge refuses at once a FIFO named like an agent log" {
	mkdir logs
	printf '{"agent_id":"0","unit":"a","ok":true}\n' > logs/agent-0.jsonl
	mkfifo logs/agent-1.jsonl
	run -2 --separate-stderr timeout 10 corral-merge -q logs
	assert_stderr "corral-merge: 'logs/agent-1.jsonl' is a FIFO, not a regular file"
	assert_no_file successes.jsonl
}

@test "paths: merge refuses at once a FIFO as units file or as history" {
	mkdir logs
	printf '{"agent_id":"0","unit":"a","ok":true}\n' > logs/agent-0.jsonl
	run -2 --separate-stderr timeout 10 corral-merge -q -u fifo logs
	assert_stderr "corral-merge: 'fifo' is a FIFO, not a regular file"
	mkfifo history.jsonl
	run -2 --separate-stderr timeout 10 corral-merge -q logs
	assert_stderr "corral-merge: 'history.jsonl' is a FIFO, not a regular file"
	[ -p history.jsonl ] || flunk "the FIFO was replaced"
}

@test "paths: split, plan and run-slice refuse at once a FIFO or a device as units file or history" {
	printf 'a\n' > units
	run -2 --separate-stderr timeout 10 corral-split -n 2 -o s fifo
	assert_stderr "corral-split: 'fifo' is a FIFO, not a regular file"
	run -2 --separate-stderr timeout 10 corral-split -n 2 -o s -H fifo units
	assert_stderr "corral-split: 'fifo' is a FIFO, not a regular file"
	run -2 --separate-stderr timeout 10 corral-plan -n 2 full
	assert_stderr "corral-plan: 'full' is a character device, not a regular file"
	run -2 --separate-stderr timeout 10 corral-run-slice -c true -l logs 0 fifo
	assert_stderr "corral-run-slice: 'fifo' is a FIFO, not a regular file"
}

@test "paths: checkout refuses at once a FIFO or a directory as parts file" {
	run -2 --separate-stderr timeout 10 corral-checkout -p fifo -m m src
	assert_stderr "corral-checkout: 'fifo' is a FIFO, not a regular file"
	run -2 --separate-stderr timeout 10 corral-checkout -p src -m m src
	assert_stderr "corral-checkout: 'src' is a directory, not a regular file"
	assert_no_file m
}

@test "paths: standard input named as - or /dev/stdin, or a descriptor of <(...), is read as a stream" {
	run -0 --separate-stderr corral-split -n 2 - <<<'a'
	run -0 --separate-stderr corral-split -n 2 -o s1 /dev/stdin < <(printf 'a\nb\n')
	run -0 cat s1/0.units s1/1.units
	assert_output "$(printf 'a\nb')"
	run -0 --separate-stderr corral-checkout -p <(printf 'a\n') -m m src
	assert_contains "$(cat m)" " a"
}
