#!/usr/bin/env bats
# finders.bats -- the installed finders and patcher (tools/*.sh): one file
# each as built, lint-clean; -i PATH scopes what they look at, and .git,
# .corral and CORRAL_OUT are never looked at; corral-find-suite runs a
# corral.mk suite in a CORRAL_OUT of its own (with the environment's
# CORRAL_CACHE, the only setting it keeps) and reports each failing unit,
# or could not look when a unit was not merged exactly once.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
	export TMPDIR=$BATS_TEST_TMPDIR/tmp
	mkdir -p "$TMPDIR"
	unset CORRAL_OUT
}

# bad FILE: a shell script with an unquoted expansion (SC2086) at FILE
bad() {
	mkdir -p "$(dirname "$1")"
	printf '#!/bin/sh\necho $1\n' > "$1"
}

# ids: the identities of the findings in $output, one a line
ids() {
	jq -r .identity <<<"$output"
}

# suite DIR UNITS...: a corral.mk project in DIR whose unit U runs
# tests/U.sh (each given as "NAME:COMMAND")
suite() {
	local dir=$1 u
	shift
	mkdir -p "$dir/tests"
	for u in "$@"; do
		printf '%s\n' "${u#*:}" > "$dir/tests/${u%%:*}.sh"
	done
	cat > "$dir/suite.mk" <<-'EOF'
	CORRAL_DISCOVER = find tests -name '*.sh' | LC_ALL=C sort
	CORRAL_CMD      = sh "$$CORRAL_UNIT"
	include $(shell corral-mk-path)
	EOF
}

@test "finders: each installed finder and patcher is one file that passes shellcheck" {
	local p n=0
	for p in corral-find-shellcheck corral-find-cppcheck corral-find-gcc \
	    corral-find-combine corral-find-suite corral-patch-shellcheck; do
		assert_file_exists "$CORRAL_TEST_BIN/$p"
		run -1 grep -c '^#include ' "$CORRAL_TEST_BIN/$p"
		n=$((n + 1))
	done
	run -0 shellcheck "$CORRAL_TEST_BIN"/corral-find-* "$CORRAL_TEST_BIN/corral-patch-shellcheck"
	assert_equal 6 "$n"
}

@test "finders: -i PATH scopes the shellcheck finder to that folder, and is repeatable" {
	bad t/libexec/a
	bad t/bin/b
	bad t/tests/c.sh
	run -0 --separate-stderr corral-find-shellcheck t
	assert_equal "$(printf 'sc:SC2086:bin/b\nsc:SC2086:libexec/a\nsc:SC2086:tests/c.sh')" "$(ids)"
	run -0 --separate-stderr corral-find-shellcheck -i libexec t
	assert_equal "sc:SC2086:libexec/a" "$(ids)"
	run -0 --separate-stderr corral-find-shellcheck -i ./libexec/ -i tests/c.sh t
	assert_equal "$(printf 'sc:SC2086:libexec/a\nsc:SC2086:tests/c.sh')" "$(ids)"
	run -0 jq -r 'select(.identity == "sc:SC2086:libexec/a") | .location' <<<"$output"
	assert_output "libexec/a"
}

@test "finders: .git, .corral and CORRAL_OUT are never looked at, even under -i" {
	bad t/lib/a.sh
	bad t/.git/hooks/pre-commit
	bad t/sub/.git/x.sh
	bad t/.corral/work/agent-0/lib/a.sh
	bad t/results/work/lib/a.sh
	run -0 --separate-stderr corral-find-shellcheck t
	assert_equal "$(printf 'sc:SC2086:lib/a.sh\nsc:SC2086:results/work/lib/a.sh')" "$(ids)"
	CORRAL_OUT=results run -0 --separate-stderr corral-find-shellcheck t
	assert_equal "sc:SC2086:lib/a.sh" "$(ids)"
	CORRAL_OUT=$PWD/t/results run -0 --separate-stderr corral-find-shellcheck t
	assert_equal "sc:SC2086:lib/a.sh" "$(ids)"
	run -0 --separate-stderr corral-find-shellcheck -i .corral t
	assert_output ""
}

@test "finders: a -i path that is not in the tree is could-not-look; one outside it a usage error; both exit 2" {
	bad t/lib/a.sh
	run -2 --separate-stderr corral-find-shellcheck -i nope t
	assert_output ""
	assert_stderr "corral-find-shellcheck: could not look: no 'nope' in 't'"
	run -2 --separate-stderr corral-find-cppcheck -i ../x t
	assert_stderr "corral-find-cppcheck: -i '../x' is not a relative path inside the tree"
	run -2 --separate-stderr corral-find-gcc -i /etc t
	assert_stderr "corral-find-gcc: -i '/etc' is not a relative path inside the tree"
	ln -s /etc t/out
	run -2 --separate-stderr corral-find-shellcheck -i out t
	assert_stderr "corral-find-shellcheck: -i 'out' leads out of 't'"
}

@test "finders: the C finders compile only the -i files, with headers from the whole tree" {
	cp -R "$CORRAL_ROOT/proving-ground/planted" t
	run -0 --separate-stderr corral-find-cppcheck -i src/ring.c t
	assert_equal "cc:arrayIndexOutOfBounds:src/ring.c:ring_clear" "$(ids)"
	run -0 --separate-stderr corral-find-gcc -i src/ring.c t
	assert_equal "gcc:oob-index:src/ring.c:ring_clear" "$(ids)"
}

@test "finders: corral-find-combine -i prints only the findings located under the path" {
	bad t/libexec/a
	bad t/bin/b
	run -0 --separate-stderr corral-find-combine -i libexec corral-find-shellcheck t
	assert_equal "sc:SC2086:libexec/a" "$(ids)"
	run -0 --separate-stderr corral-find-combine corral-find-shellcheck 'corral-find-shellcheck -i bin' t
	assert_equal "$(printf 'sc:SC2086:bin/b\nsc:SC2086:bin/b\nsc:SC2086:libexec/a')" "$(ids)"
	run -2 --separate-stderr corral-find-combine -i nope corral-find-shellcheck t
	assert_stderr "corral-find-combine: could not look: no 'nope' in 't'"
}

@test "find-suite: one finding per failing unit, from a CORRAL_OUT of its own outside the tree" {
	suite p 'pass:exit 0' 'fails:echo broken; exit 1' 'also:exit 3'
	before=$(tree_digest p)
	CORRAL_OUT=$PWD/mine run -0 --separate-stderr corral-find-suite -f suite.mk -j 2 p
	assert_equal "$(printf 'suite:tests/also.sh\nsuite:tests/fails.sh')" "$(ids)"
	run -0 jq -c 'select(.location == "tests/fails.sh") | [.kind, .status, .message, .trust, .max_confidence]' <<<"$output"
	assert_output '["test-fails","fail","FAIL: exit 1: broken","single-method",0.9]'
	assert_equal "$before" "$(tree_digest p)"
	assert_no_file mine
	run -0 ls -A "$TMPDIR"
	assert_output ""
}

@test "find-suite: a suite that passes gives no finding; MAKEFLAGS of a calling make do not reach it" {
	suite p 'a:exit 0' 'b:exit 0'
	MAKEFLAGS='-k --no-such-flag' CORRAL_UNITS=bogus run -0 --separate-stderr corral-find-suite -f suite.mk p
	assert_output ""
}

@test "find-suite: the store CORRAL_CACHE names is its run's: a look again runs only the failing unit, and an edited unit runs again" {
	suite p "a:echo a >> $PWD/ran" "b:echo b >> $PWD/ran; exit 1"
	sed -i '1i CORRAL_CACHE_VERIFY = 0' p/suite.mk
	CORRAL_CACHE=$PWD/store run -0 --separate-stderr corral-find-suite -f suite.mk p
	assert_equal "suite:tests/b.sh" "$(ids)"
	CORRAL_CACHE=$PWD/store run -0 --separate-stderr corral-find-suite -f suite.mk p
	assert_equal "suite:tests/b.sh" "$(ids)"
	echo '# edited' >> p/tests/a.sh
	CORRAL_CACHE=$PWD/store run -0 --separate-stderr corral-find-suite -f suite.mk p
	assert_equal "suite:tests/b.sh" "$(ids)"
	run -0 sort ran
	assert_output "$(printf 'a\na\nb\nb\nb')"
}

@test "find-suite: a unit not merged exactly once is could-not-look, exit 2" {
	# sh "$CORRAL_UNIT" needs no shell of its own: the unit's sh is the
	# agent's child; each unit is a slice of its own
	suite p 'a:exit 0' 'killer:kill -9 $PPID; sleep 5'
	run -2 --separate-stderr corral-find-suite -f suite.mk -j 1 p
	assert_output ""
	assert_contains "$stderr" "corral-find-suite: could not look: not every unit was merged exactly once: "
	assert_contains "$stderr" '"missing":1'
}

@test "find-suite: no MAKEFILE in the tree is could-not-look, exit 2" {
	mkdir p
	run -2 --separate-stderr corral-find-suite -f suite.mk p
	assert_stderr "corral-find-suite: could not look: no 'suite.mk' in 'p'"
	run -2 --separate-stderr corral-find-suite -j 0 p
	assert_stderr "corral-find-suite: jobs '0' is not a number from 1"
}

@test "patch-shellcheck: another finder's finding is no patch (exit 1); a combined one is patched by its shellcheck rule" {
	bad t/lib/a.sh
	cp -R t before
	run -1 --separate-stderr corral-patch-shellcheck t <<<'{"identity":"suite:tests/x.sh","location":"tests/x.sh","rule":"test-fails","finder":"suite"}'
	assert_stderr ""
	run -0 diff -r before t
	run -0 --separate-stderr corral-patch-shellcheck t <<<'{"identity":"co:x:lib/a.sh","location":"lib/a.sh","rule":"SC2086 quoting","finder":"shellcheck+other"}'
	run -0 cat t/lib/a.sh
	assert_output "$(printf '#!/bin/sh\necho "$1"')"
}
