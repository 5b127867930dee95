#!/usr/bin/env bats
# usage.bats -- every program says what it is: -h and --help print the
# synopsis and a line per option, --version its name and version.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
}

# version: CORRAL_VERSION as the library defines it.
version() {
	sed -n 's/^#define CORRAL_VERSION "\(.*\)"$/\1/p' "$CORRAL_ROOT/src/base/base.h"
}

# What --version prints for program $1: its name and version, then the
# copyright and licence lines GNU programs print.
version_text() {
	printf '%s %s\n%s' "$1" "$(version)" "Copyright (C) 2026 the corral authors.
License MIT: <https://opensource.org/licenses/MIT>.
This is free software: you are free to change and redistribute it.
There is NO WARRANTY, to the extent permitted by law."
}

@test "usage: every program answers -h and --help with its synopsis on stdout, exit 0 and nothing on stderr" {
	local prog name opt n=0
	for prog in "$CORRAL_TEST_BIN"/corral*; do
		name=$(basename "$prog")
		for opt in -h --help; do
			run -0 --separate-stderr "$prog" "$opt"
			[ -z "$stderr" ] || flunk "$name $opt wrote to stderr: $stderr"
			[[ ${lines[0]} == "usage: $name"* ]] ||
				flunk "$name $opt: first line is '${lines[0]}'"
		done
		n=$((n + 1))
	done
	[ "$n" -ge 17 ] || flunk "only $n programs checked"
}

@test "usage: every program's --help has one line for each option of its synopsis, -h and --version too" {
	local prog name letter
	for prog in "$CORRAL_TEST_BIN"/corral*; do
		name=$(basename "$prog")
		run -0 --separate-stderr "$prog" --help
		grep -qE '^  -h, --help ' <<<"$output" || flunk "$name: no -h line"
		grep -qE '^  --version ' <<<"$output" || flunk "$name: no --version line"
		for letter in $(printf '%s\n' "$output" |
		    sed -n '1{/^usage: /p;};/^       /p' |
		    grep -oE '(^|[][ |])-[A-Za-z0-9]+' | sed 's/^[][ |]*-//' |
		    fold -w1 | sort -u); do
			grep -qE -- "^  -$letter[ ,]" <<<"$output" ||
				flunk "$name --help has no line for -$letter"
		done
	done
}

@test "usage: every program prints its name and version, then the copyright and licence, for --version, exit 0" {
	local prog name
	for prog in "$CORRAL_TEST_BIN"/corral*; do
		name=$(basename "$prog")
		run -0 --separate-stderr "$prog" --version
		[ "$output" = "$(version_text "$name")" ] ||
			flunk "$name --version printed '$output'"
		[ -z "$stderr" ] || flunk "$name --version wrote to stderr"
	done
}

@test "usage: a usage error prints the synopsis alone on stderr and exits 2" {
	run -2 --separate-stderr corral-split
	[ -z "$output" ] || flunk "stdout: $output"
	[ "$stderr" = "usage: corral-split [-0Fhjq] [-C DIR] [-H HISTORY] [-l LOGDIR] [-o DIR] [-s STRATEGY] -n N|auto [FILE]
       corral-split -L" ] ||
		flunk "stderr: $stderr"
}

@test "usage: corral-split's synopsis shows -n as required, as its parser makes it" {
	run -0 --separate-stderr corral-split -h
	[[ ${lines[0]} == *" -n N|auto [FILE]" ]] || flunk "${lines[0]}"
	[[ ${lines[0]} != *"[-n N]"* ]] || flunk "${lines[0]}"
	run -2 --separate-stderr corral-split </dev/null
}

@test "usage: --help on a full standard output exits 2 with one line" {
	run -2 --separate-stderr sh -c 'corral-split --help >/dev/full'
	[ "$stderr" = "corral-split: cannot write standard output: No space left on device" ] ||
		flunk "$stderr"
}

@test "usage: --help and --version are answered after options and operands, as GNU programs do, not after -- or as an option's value" {
	local prog name n=0
	for prog in "$CORRAL_TEST_BIN"/corral*; do
		name=$(basename "$prog")
		# their first operand starts a command, whose arguments are its own
		# (corral-run's are all make's, corral-cache's its command's)
		case $name in corral | corral-cache | corral-lock | corral-run) continue ;; esac
		run -0 --separate-stderr "$prog" operand --help
		[[ ${lines[0]} == "usage: $name"* ]] ||
			flunk "$name operand --help: first line is '${lines[0]}'"
		run -0 --separate-stderr "$prog" operand --version
		[ "$output" = "$(version_text "$name")" ] ||
			flunk "$name operand --version printed '$output'"
		n=$((n + 1))
	done
	[ "$n" -ge 15 ] || flunk "only $n programs checked"
	run -0 --separate-stderr corral-split -n 2 --help
	[[ ${lines[0]} == "usage: corral-split"* ]] || flunk "${lines[0]}"
	run -0 --separate-stderr corral-report --junit=x --version
	assert_output "$(version_text corral-report)"
	run -2 --separate-stderr corral-split -n 2 -- --help
	assert_stderr "corral-split: cannot open '--help': No such file or directory"
	run -2 --separate-stderr corral-split -s --help -n 2
	assert_stderr "corral-split: -s '--help' is not a strategy (roundrobin, weighted or auto)"
	run -2 --separate-stderr corral-split -n--help
	assert_stderr "corral-split: -n '--help' is not a number"
	run -0 --separate-stderr corral-lock -w 1 --help
	[[ ${lines[0]} == "usage: corral-lock"* ]] || flunk "${lines[0]}"
	# a command's --help is the command's
	run -0 --separate-stderr corral split --help
	[[ ${lines[0]} == "usage: corral-split"* ]] || flunk "${lines[0]}"
}

@test "usage: the programs in sh name themselves and the option for an unknown option or a missing value, then print the synopsis, exit 2" {
	local prog name n=0
	for prog in "$CORRAL_TEST_BIN"/corral*; do
		head -c 2 "$prog" | grep -q '#!' || continue
		name=$(basename "$prog")
		run -2 --separate-stderr "$prog" -V
		[ "${stderr_lines[0]}" = "$name: unknown option -V" ] ||
			flunk "$name -V: '${stderr_lines[0]}'"
		[[ ${stderr_lines[1]} == "usage: $name"* ]] ||
			flunk "$name -V: no synopsis: '${stderr_lines[1]}'"
		n=$((n + 1))
	done
	[ "$n" -ge 3 ] || flunk "only $n programs in sh"
	run -2 --separate-stderr corral-find-suite -j
	[ "${stderr_lines[0]}" = "corral-find-suite: option -j needs a value" ] ||
		flunk "${stderr_lines[0]}"
}
