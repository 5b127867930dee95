#!/usr/bin/env bats
# paths.bats -- paths that are not regular files.  An output that exists
# and is not a regular file is written in place (a named descriptor, a
# character device, a FIFO) or refused, never replaced; an input that is
# not a regular file is refused at once, never waited on.  Devices are made
# here with mknod (1,7 is a full device, 1,3 a null one), never the real
# /dev/full: a regression would replace it.  And corral.mk's path knobs
# holding the characters a shell or a glob reads as syntax: each used
# exactly where its value says, never globbed.
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

# --- corral.mk's path knobs ---------------------------------------------
#
# README: a path may hold any character but white space.  Every path knob
# of corral.mk (each __corral-path of corral.mk, and CORRAL_SHARDS, a list
# of them) is given a value holding ? * [ ] & $ ; ' " in a real run, and
# must be written or read exactly there.  Beside each such directory
# stands its DECOY, the one name that the value, read as a glob, matches
# (ODD does not match itself: its [c] wants a c where ODD holds a ']'), so
# that a value globbed on the way reads or writes the decoy and shows.
# The decoys are real corral worlds that ran first, and must not change.
# How make carries each character: all of these but '$' as they are, on
# make's command line (as here) and in a makefile alike; '$' is written
# '$$' in both (mk_value), since make expands every value it reads, the
# command line's and the environment's too.  None of them is beyond make;
# white space is (corral.mk refuses it, tests/corral-mk.bats).
ODD='a?b*[c]&$;'\''"'
DECOY='a1bZc&$;'\''"'

# mk_value TEXT: TEXT as a make value: each '$' doubled
mk_value() {
	printf '%s' "${1//\$/\$\$}"
}

# world DIR TAG: in DIR, a world for every path knob: src/ with the units
# t/u1.sh and t/u2.sh (TAG decoy: t/u9.sh), units listing them, bin/ with
# every corral program as a script that notes "TAG NAME" in $CALLS and
# runs the real one, sh the same for /bin/sh
world() {
	local p u
	mkdir -p "$1/src/t" "$1/bin"
	for u in $([ "$2" = decoy ] && echo u9 || echo u1 u2); do
		echo 'true' > "$1/src/t/$u.sh"
		echo "t/$u.sh"
	done > "$1/units"
	for p in "$CORRAL_TEST_BIN"/corral-*; do
		printf '#!/bin/sh\necho "%s ${0##*/}" >> "$CALLS"\nexec "$CORRAL_TEST_BIN/${0##*/}" "$@"\n' \
			"$2" > "$1/bin/${p##*/}"
		chmod +x "$1/bin/${p##*/}"
	done
	printf '#!/bin/sh\necho "%s sh" >> "$CALLS"\nexec /bin/sh "$@"\n' "$2" > "$1/sh"
	chmod +x "$1/sh"
}

# run_world DIR TARGET [MAKE ARGS]: make TARGET in the plain project proj/,
# every path knob naming a place in DIR; its units note themselves in RAN
run_world() {
	local d=$PWD/$1 t=$2
	shift 2
	run --separate-stderr make -C proj "$t" \
		CORRAL_SRC="$(mk_value "$d/src")" CORRAL_OUT="$(mk_value "$d/out")" \
		CORRAL_UNITS_FILE="$(mk_value "$d/units")" \
		CORRAL_JUNIT="$(mk_value "$d/j.xml")" CORRAL_TRACE="$(mk_value "$d/t.json")" \
		CORRAL_HTML="$(mk_value "$d/h.html")" CORRAL_BIN="$(mk_value "$d/bin")" \
		CORRAL_SHELL="$(mk_value "$d/sh")" "$@"
}

@test "paths: CORRAL_SRC, _OUT, _UNITS_FILE, _JUNIT, _TRACE, _HTML, _BIN and _SHELL holding ? * [ ] & \$ ; ' \" are used exactly there, and no glob match or stray file appears" {
	_corral_tmpdir
	_corral_ran
	export CALLS=$PWD/calls
	mkdir proj
	# a unit that needs a shell, so that CORRAL_SHELL runs it
	printf '%s\n' 'CORRAL_CMD = printf '\''%s\n'\'' "$$CORRAL_UNIT" >> "$$RAN"; . ./"$$CORRAL_UNIT"' \
		"include $CORRAL_ROOT/corral.mk" > proj/Makefile
	world "top/$DECOY" decoy
	world "top/$ODD" real
	[[ $DECOY == $ODD ]] && [[ $ODD != $ODD ]] || flunk "ODD, read as a glob, must match DECOY and not itself"
	run_world "top/$DECOY" corral-run
	[ "$status" -eq 0 ] || flunk "the decoy's run failed: $stderr"
	local decoy
	decoy=$(tree_digest "top/$DECOY")
	: > "$RAN"
	: > "$CALLS"
	run_world "top/$ODD" corral-run
	[ "$status" -eq 0 ] || flunk "status $status: $stderr"
	assert_json '.units == 2 and .successes == 2' "top/$ODD/out/summary.json"
	run -0 sort "$RAN"
	assert_output "$(printf 't/u1.sh\nt/u2.sh')"
	# every program, and the unit's shell, from where the value says
	run -0 sort -u "$CALLS"
	refute_contains "$output" decoy
	assert_contains "$output" "real corral-run-slice"
	assert_contains "$output" "real corral-merge"
	assert_contains "$output" "real sh"
	assert_contains "$(cat "top/$ODD/j.xml")" "<testsuites"
	assert_contains "$(cat "top/$ODD/t.json")" "traceEvents"
	assert_contains "$(cat "top/$ODD/h.html")" "<html"
	run -0 ls -A "top/$ODD"
	assert_output "$(printf '%s\n' bin h.html j.xml out sh src t.json units)"
	run -0 ls -A top
	assert_output "$(printf '%s\n' "$DECOY" "$ODD" | LC_ALL=C sort)"
	run -0 ls -A proj
	assert_output Makefile
	run -0 make -C proj -s corral-merge CORRAL_OUT="$(mk_value "$PWD/top/$ODD/out")" \
		CORRAL_SRC="$(mk_value "$PWD/top/$ODD/src")" CORRAL_UNITS_FILE="$(mk_value "$PWD/top/$ODD/units")"
	assert_contains "$output" "2 passed"
	run_world "top/$ODD" corral-clean
	[ "$status" -eq 0 ] || flunk "corral-clean: status $status: $stderr"
	assert_no_file "top/$ODD/out"
	assert_equal "$decoy" "$(tree_digest "top/$DECOY")"
}

# shard_world DIR LONG: a project in DIR/src of the units t/u1.sh to
# t/u4.sh, and DIR/hist.jsonl, a history in which unit LONG takes 100 s
# and the others 1 s: a cut of 2 shards by it puts LONG alone in shard 1
shard_world() {
	local u
	mkdir -p "$1/src/t"
	for u in t/u1.sh t/u2.sh t/u3.sh t/u4.sh; do
		echo true > "$1/src/$u"
		printf '{"agent_id":"0","unit":"%s","ok":true,"note":"PASS: x","at":"2026-01-01T00:00:00Z","duration_ms":%d}\n' \
			"$u" "$([ "$u" = "$2" ] && echo 100000 || echo 1000)"
	done > "$1/hist.jsonl"
	printf '%s\n' 'CORRAL_DISCOVER = ls t/*.sh' 'CORRAL_CMD = sh "$$CORRAL_UNIT"' \
		"include $CORRAL_ROOT/corral.mk" > "$1/src/Makefile"
}

# shards_of DIR: both shards of DIR/src run, cut by DIR/hist.jsonl, into
# their default places (DIR/src/.corral/shard-K-of-2)
shards_of() {
	local k
	for k in 1 2; do
		run --separate-stderr make -C "$1/src" corral-run CORRAL_SHARD=$k/2 \
			CORRAL_HISTORY="$(mk_value "$PWD/$1/hist.jsonl")"
		[ "$status" -eq 0 ] || flunk "shard $k/2 of $1: status $status: $stderr" || return
	done
}

@test "paths: CORRAL_HISTORY and CORRAL_SHARDS holding ? * [ ] & \$ ; ' \", and the default shards under such a CORRAL_SRC, are read exactly there, never globbed" {
	shard_world "top/$DECOY" t/u4.sh
	shards_of "top/$DECOY"
	local decoy s=$PWD/top/$ODD/src/.corral
	decoy=$(tree_digest "top/$DECOY")
	shard_world "top/$ODD" t/u1.sh
	shards_of "top/$ODD"
	# cut by this history, not the decoy's (nor none)
	run -0 cat "$s/shard-1-of-2/units"
	assert_output t/u1.sh
	# the default: the shards under this CORRAL_SRC, not the decoy's too
	run --separate-stderr make -C "top/$ODD/src" corral-merge-shards \
		CORRAL_HISTORY="$(mk_value "$PWD/top/$ODD/hist.jsonl")"
	[ "$status" -eq 0 ] || flunk "status $status: $stderr"
	assert_json '.units == 4 and .merged == 4 and .successes == 4 and .duplicates == 0' "$s/summary.json"
	# named: into an odd CORRAL_OUT of its own
	run --separate-stderr make -C "top/$ODD/src" corral-merge-shards \
		CORRAL_SHARDS="$(mk_value "$s/shard-1-of-2 $s/shard-2-of-2")" \
		CORRAL_OUT="$(mk_value "$PWD/top/$ODD/m")" \
		CORRAL_HISTORY="$(mk_value "$PWD/top/$ODD/hist.jsonl")"
	[ "$status" -eq 0 ] || flunk "status $status: $stderr"
	assert_json '.units == 4 and .merged == 4 and .successes == 4 and .duplicates == 0' "top/$ODD/m/summary.json"
	run -0 ls -A "top/$ODD"
	assert_output "$(printf '%s\n' hist.jsonl m src)"
	run -0 ls -A top
	assert_output "$(printf '%s\n' "$DECOY" "$ODD" | LC_ALL=C sort)"
	assert_equal "$decoy" "$(tree_digest "top/$DECOY")"
}

@test "paths: CORRAL_LAUNCH is split into its words but never globbed: a launcher under ? * [ ] & \$ ; ' \" and the words a*, [u]nits, ?md reach it as written" {
	local d
	export LAUNCHES=$PWD/launches
	for d in "top/$DECOY" "top/$ODD"; do
		mkdir -p "$d"
		# its words up to --, one a line, then the agent
		printf '#!/bin/sh\n[ %s = real ] || echo decoy >> "$LAUNCHES"\nwhile [ "$1" != -- ]; do printf "%%s\\n" "$1" >> "$LAUNCHES"; shift; done\nshift\nexec "$@"\n' \
			"$([ "$d" = "top/$ODD" ] && echo real || echo decoy)" > "$d/launch"
		chmod +x "$d/launch"
	done
	mkdir proj
	printf '%s\n' 'CORRAL_UNITS = a' 'CORRAL_CMD = true' "include $CORRAL_ROOT/corral.mk" > proj/Makefile
	# a* [u]nits ?md: what the engine's directory (CORRAL_OUT) would glob
	# them to (agents, units, cmd)
	run --separate-stderr make -C proj corral-run \
		CORRAL_LAUNCH="$(mk_value "$PWD/top/$ODD/launch") a* [u]nits ?md --"
	[ "$status" -eq 0 ] || flunk "status $status: $stderr"
	assert_json '.units == 1 and .successes == 1' proj/.corral/summary.json
	run -0 cat launches
	assert_output "$(printf '%s\n' 'a*' '[u]nits' '?md')"
}
