#!/usr/bin/env bats
# marker.bats -- the built-in marker finder and patcher, which corral-fix
# uses when no other is named: one finding per file holding DEADCANARY,
# "could not look" is exit 2 and never "found nothing", and the patcher
# changes only the file its finding names, inside the directory it got.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
	mkdir -p dir/pkg dir/.git dir/node_modules
	printf 'x = 1  # DEADCANARY\n' > dir/b.py
	printf 'DEADCANARY\n' > dir/pkg/a.py
	printf 'clean\n' > dir/clean.py
	printf 'DEADCANARY\n' > dir/.git/config
	printf 'DEADCANARY\n' > dir/node_modules/x.js
}

# line ID LOCATION: the finding the marker finder prints
line() {
	printf '{"identity":"%s","location":"%s","corroboration":2,"max_confidence":0.8,"trust":"corroborated"}' "$1" "$2"
}

@test "marker-find: one finding per marked file, sorted, with the five fields" {
	run -0 --separate-stderr corral-marker-find dir
	assert_stderr ""
	assert_output "$(line dc:b.py b.py)
$(line dc:pkg/a.py pkg/a.py)"
	run -0 --separate-stderr sh -c 'cd dir && corral-marker-find'
	assert_equal "${lines[0]}" "$(line dc:b.py b.py)"
}

@test "marker-find: .git and node_modules are skipped, symlinks are not followed" {
	mkdir elsewhere
	printf 'DEADCANARY\n' > elsewhere/e.py
	ln -s ../elsewhere dir/link
	ln -s b.py dir/alias.py
	run -0 --separate-stderr corral-marker-find dir
	refute_contains "$output" ".git"
	refute_contains "$output" "node_modules"
	refute_contains "$output" "e.py"
	refute_contains "$output" "alias.py"
	assert_equal "${#lines[@]}" 2
}

@test "marker-find: an odd file name is written as a JSON string" {
	printf 'DEADCANARY\n' > "dir/we\"ird \\ name.py"
	run -0 --separate-stderr corral-marker-find dir
	assert_equal "$(jq -r .location <<<"${lines[2]}")" "we\"ird \\ name.py"
}

@test "marker-find: a directory it cannot read means could not look: exit 2" {
	run -2 --separate-stderr corral-marker-find nothere
	assert_output ""
	assert_stderr "corral-marker-find: cannot stat 'nothere': No such file or directory"
}

@test "marker-find and marker-patch: -h prints usage; two operands exit 2" {
	assert_help "usage: corral-marker-find [DIR]" corral-marker-find -h
	assert_usage_error "usage: corral-marker-find [DIR]" corral-marker-find a b
	assert_help "usage: corral-marker-patch [DIR]" corral-marker-patch -h
	assert_usage_error "usage: corral-marker-patch [DIR]" corral-marker-patch a b
}

@test "marker-patch: replaces every marker in the finding's location and exits 0" {
	printf 'DEADCANARY and DEADCANARY\n' > dir/pkg/a.py
	CORRAL_FINDING=$(line dc:pkg/a.py pkg/a.py) run -0 --separate-stderr corral-marker-patch dir
	run -0 cat dir/pkg/a.py dir/b.py
	assert_output "real_assert() and real_assert()
x = 1  # DEADCANARY"
}

@test "marker-patch: reads the finding from standard input without CORRAL_FINDING" {
	line dc:b.py b.py > finding
	run -0 --separate-stderr corral-marker-patch dir < finding
	run -0 cat dir/b.py
	assert_output "x = 1  # real_assert()"
}

@test "marker-patch: exits 1 when there is nothing to patch" {
	before=$(tree_digest dir)
	CORRAL_FINDING=$(line dc:clean.py clean.py) run -1 --separate-stderr corral-marker-patch dir
	CORRAL_FINDING=$(line dc:gone.py gone.py) run -1 --separate-stderr corral-marker-patch dir
	assert_equal "$before" "$(tree_digest dir)"
}

@test "marker-patch: a location outside DIR, or through a symlink, is refused with exit 2" {
	printf 'DEADCANARY\n' > outside.py
	ln -s .. dir/up
	before=$(tree_digest .)
	CORRAL_FINDING=$(line x ../outside.py) run -2 --separate-stderr corral-marker-patch dir
	assert_stderr "corral-marker-patch: path '../outside.py' leaves the tree"
	CORRAL_FINDING=$(line x up/outside.py) run -2 --separate-stderr corral-marker-patch dir
	assert_stderr "corral-marker-patch: 'up/outside.py' goes through symlink 'up'"
	CORRAL_FINDING=$(line x "$PWD/outside.py") run -2 --separate-stderr corral-marker-patch dir
	assert_contains "$stderr" "is absolute"
	assert_equal "$before" "$(tree_digest .)"
}

@test "marker-patch: a finding that is not JSON is an error, exit 2" {
	CORRAL_FINDING='{"location":' run -2 --separate-stderr corral-marker-patch dir
	assert_stderr "corral-marker-patch: 'finding' line 1: invalid JSON at byte 13"
}

