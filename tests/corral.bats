#!/usr/bin/env bats
# corral.bats -- the umbrella: "corral CMD" execs corral-CMD (beside its
# own binary, then on PATH) so that status and signals pass through; its
# help, version and usage errors; and corral-mk-path, which tells a
# Makefile where corral.mk is.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
}

USAGE='usage: corral [-hV] [COMMAND [ARG...]]'

# lone DIR: a copy of the corral binary alone in DIR (helpers are added
# by the test)
lone() {
	skip_if_wrapped
	mkdir -p "$1"
	cp "$CORRAL_TEST_BIN/corral" "$1/corral"
}

# stub DIR NAME BODY: an executable sh script DIR/NAME
stub() {
	mkdir -p "$1"
	printf '#!/bin/sh\n%s\n' "$3" > "$1/$2"
	chmod +x "$1/$2"
}

@test "corral: -h prints usage and every command with a one-line summary to stdout, exit 0" {
	local prog name
	run -0 --separate-stderr corral -h
	assert_equal "$USAGE" "${lines[0]}"
	assert_stderr ""
	for prog in "$CORRAL_TEST_BIN"/corral-*; do
		name=${prog##*/corral-}
		printf '%s\n' "$output" | grep -qE "^   $name +[a-z].{20,}$" ||
			flunk "corral -h does not list '$name' with a summary" "$output"
	done
	assert_contains "$output" 'Start with "corral demo", then "corral doctor".'
}

@test "corral: --help and help print the same as -h" {
	run -0 --separate-stderr corral -h
	local want=$output
	run -0 --separate-stderr corral --help
	assert_output "$want"
	run -0 --separate-stderr corral help
	assert_output "$want"
}

@test "corral: help CMD prints that command's own usage, for every command" {
	local prog name
	for prog in "$CORRAL_TEST_BIN"/corral-*; do
		name=${prog##*/corral-}
		run -0 --separate-stderr "$prog" -h
		local want=$output
		run -0 --separate-stderr corral help "$name"
		assert_output "$want"
	done
}

@test "corral: --version and -V print the version in base.h" {
	local version
	version=$(sed -n 's/^#define CORRAL_VERSION "\(.*\)"$/\1/p' "$CORRAL_ROOT/src/base/base.h")
	run -0 --separate-stderr corral --version
	[ "${lines[0]}" = "corral $version" ] || flunk "${lines[0]}"
	[ "${lines[1]}" = "Copyright (C) 2026 the corral authors." ] || flunk "${lines[1]}"
	run -0 --separate-stderr corral -V
	[ "${lines[0]}" = "corral $version" ] || flunk "${lines[0]}"
}

@test "corral: an unknown command is named and exits 2" {
	run -2 --separate-stderr corral frob
	assert_output ""
	assert_stderr "corral: 'frob' is not a corral command"
	run -2 --separate-stderr corral help frob
	assert_stderr "corral: 'frob' is not a corral command"
}

@test "corral: a command holding a slash, or an empty one, is no command" {
	run -2 --separate-stderr corral ../bin/corral-split
	assert_stderr "corral: '../bin/corral-split' is not a corral command"
	run -2 --separate-stderr corral ''
	assert_stderr "corral: '' is not a corral command"
}

@test "corral: an unknown option, or help with two commands, prints usage to stderr and exits 2" {
	assert_usage_error "$USAGE" corral -x
	assert_usage_error "$USAGE" corral help split merge
}

@test "corral: CMD runs corral-CMD with the remaining arguments, status included" {
	printf 'a\nb\nc\n' > units
	run -0 --separate-stderr corral split -n 2 units
	assert_output '{"0":["a","c"],"1":["b"]}'
	run -2 --separate-stderr corral split
	# the synopsis: the "usage: " line and its indented second form
	assert_stderr "$(corral-split -h | sed -n '1p;/^       /p')"
}

@test "corral: the helper's exit status passes through unchanged" {
	lone bin
	stub bin corral-seven 'echo "args: $*"; exit 7'
	run -7 --separate-stderr bin/corral seven a 'b c'
	assert_output "args: a b c"
}

@test "corral: a signal that kills the helper kills corral the same way (exec, no wrapper)" {
	lone bin
	stub bin corral-die 'kill -TERM $$'
	run -143 bin/corral die
	stub bin corral-pid 'echo $$'
	run -0 sh -c 'bin/corral pid & echo $!; wait'
	assert_equal "${lines[0]}" "${lines[1]}"
}

@test "corral: the helper beside the binary wins over one on PATH, also through a symlink" {
	lone bin
	stub bin corral-who 'echo beside'
	stub path corral-who 'echo path'
	PATH=$PWD/path:$PATH run -0 bin/corral who
	assert_output "beside"
	mkdir link && ln -s ../bin/corral link/corral
	PATH=$PWD/path:$PATH run -0 link/corral who
	assert_output "beside"
}

@test "corral: a helper found only on PATH runs, like a git extension" {
	lone bin
	stub path corral-ext 'echo "extension $1"'
	PATH=$PWD/path:$PATH run -0 --separate-stderr bin/corral ext x
	assert_output "extension x"
}

@test "corral: a listed command whose helper is nowhere exits 127 and says so" {
	lone bin
	PATH=/usr/bin:/bin run -127 --separate-stderr bin/corral merge
	assert_output ""
	assert_stderr "corral: cannot run 'corral-merge': not found beside '$PWD/bin' or on PATH"
}

@test "corral: a helper that cannot be executed exits 126" {
	lone bin
	stub bin corral-noexec 'echo never'
	chmod 644 bin/corral-noexec
	run -126 --separate-stderr bin/corral noexec
	assert_output ""
	assert_stderr "corral: cannot run '$PWD/bin/corral-noexec': Permission denied"
}

@test "corral: with no arguments it prints its usage on stderr and exits 2, running nothing, as every other tool does" {
	export TMPDIR=$BATS_TEST_TMPDIR/tmp
	mkdir "$TMPDIR"
	run -2 --separate-stderr corral
	assert_output ""
	assert_stderr "$USAGE"
	run -0 ls -A "$TMPDIR"
	assert_output ""
}

@test "corral: scoreboard is corral-scoreboard, COULD NOT TELL and usage errors included" {
	assert_usage_error "usage: corral-scoreboard [-fhju] [-s N] [-t N] [-U FILE] DIR" corral scoreboard
	mkdir empty
	run -2 --separate-stderr corral scoreboard empty
	assert_contains "$output" "COULD NOT TELL: empty holds neither successes.jsonl nor failures.jsonl"
	mkdir run
	printf '{"unit":"a","ok":true,"note":"CAUGHT: x"}\n' > run/successes.jsonl
	printf '{"unit":"b","ok":false,"note":"GAP: y"}\n' > run/failures.jsonl
	run -0 --separate-stderr corral scoreboard run
	assert_contains "$output" "2 units  ->  1 success, 1 failure"
	assert_contains "$output" "CAUGHT"
}

@test "corral: a write error on --version exits 2" {
	run -2 --separate-stderr sh -c 'corral --version > /dev/full'
	assert_stderr "corral: cannot write standard output: No space left on device"
}

# --- corral mk-path -------------------------------------------------------

@test "mk-path: -h prints usage; an operand is a usage error" {
	assert_help "usage: corral-mk-path [-h]" corral-mk-path -h
	assert_usage_error "usage: corral-mk-path [-h]" corral mk-path x
}

@test "mk-path: in a checkout it prints the corral.mk of the tree" {
	run -0 --separate-stderr corral mk-path
	assert_output "$CORRAL_ROOT/corral.mk"
}

@test "mk-path: include \$(shell corral mk-path) runs a project" {
	mkdir proj
	cat > proj/Makefile <<'EOF'
CORRAL_UNITS = one two three
CORRAL_CMD = test "$$CORRAL_UNIT" != two
include $(shell corral mk-path)
EOF
	run -2 make -C proj -j2 corral-run
	assert_json '.units == 3 and .successes == 2 and .failures == 1' proj/.corral/summary.json
}

@test "mk-path: with no corral.mk near the programs it exits 2 and names where it looked" {
	skip_if_wrapped
	mkdir bin
	cp "$CORRAL_TEST_BIN/corral-mk-path" bin/
	run -2 --separate-stderr bin/corral-mk-path
	assert_output ""
	assert_stderr "corral-mk-path: corral.mk not found; looked for '$PWD/bin/../share/corral/corral.mk', '$PWD/bin/../corral.mk'"
}
