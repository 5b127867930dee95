#!/usr/bin/env bats
# processes.bats -- what a run costs in programs, and how short its
# recipes are (issue 23): a first run of a one-unit project starts at most
# 25 programs and a no-op run at most 12, counted as bench/execs.sh counts
# them (successful execve under strace -f, make's own included), and
# 'make -n corral-run' prints no line longer than 200 characters.  Counts,
# never times.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
}

@test "processes: a first corral-run of one unit starts at most 25 programs, a no-op one at most 12" {
	skip_if_wrapped
	command -v strace > /dev/null 2>&1 || skip "no strace"
	strace -f -qq -o /dev/null true 2> /dev/null || skip "strace cannot trace here"
	# a sanitizer build counts the same; its leak check cannot run traced
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		run -0 --separate-stderr sh "$CORRAL_ROOT/bench/execs.sh"
	local first noop
	first=$(sed -n 's/^first \([0-9]*\)$/\1/p' <<<"$output")
	noop=$(sed -n 's/^noop \([0-9]*\)$/\1/p' <<<"$output")
	[ -n "$first" ] && [ -n "$noop" ] || flunk "bench/execs.sh printed no counts:" "$output"
	[ "$first" -le 25 ] || flunk "a first run started $first programs (at most 25):" "$output"
	[ "$noop" -le 12 ] || flunk "a no-op run started $noop programs (at most 12):" "$output"
}

@test "processes: make -n corral-run of three units prints only lines of at most 200 characters" {
	mkdir proj
	printf '%s\n' 'CORRAL_UNITS = a b c' 'CORRAL_CMD = true' \
		"include $CORRAL_ROOT/corral.mk" > proj/Makefile
	run -0 --separate-stderr make -n --no-print-directory -C proj corral-run
	[ -n "$output" ] || flunk "make -n printed nothing"
	local long
	long=$(awk 'length($0) > 200 { printf "line %d: %d characters\n", NR, length($0) }' <<<"$output")
	[ -z "$long" ] || flunk "make -n corral-run prints lines longer than 200 characters:" "$long"
	assert_no_file proj/.corral
}

@test "processes: no program links libcurl, not even corral-run-slice, which loads it at its first HTTP request (the cache tests prove that it does)" {
	skip_if_wrapped
	command -v readelf > /dev/null 2>&1 || skip "no readelf"
	local p
	for p in corral-engine corral-fix corral-run-slice corral-cache; do
		run -0 readelf -d "$CORRAL_TEST_BIN/$p"
		assert_contains "$output" "(NEEDED)"
		refute_contains "$output" "libcurl"
	done
}
