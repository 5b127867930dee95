#!/usr/bin/env bats
# parts-mk.bats -- corral.mk's parts without guesswork: a part that does
# not exist stops the run up front, links inside the tree bring their
# targets, CORRAL_PARTS_CHECK says when a unit passes with the whole tree,
# and CORRAL_PARTS = auto learns what each unit reads.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
	mkdir -p proj/lib proj/tests
	_corral_ran
}

# project PARTS [UNITS...]: units tests/U.sh, each recording that it ran
# and then running itself with sh; CORRAL_PARTS is PARTS.
project() {
	local parts=$1 u
	shift
	for u in "$@"; do
		[ -e "proj/tests/$u.sh" ] || echo 'exit 0' > "proj/tests/$u.sh"
	done
	_corral_project $(printf 'tests/%s.sh ' "$@") <<EOF
CORRAL_CMD = printf '%s\\n' "\$\$CORRAL_UNIT" >> "\$\$RAN"; sh "\$\$CORRAL_UNIT"
CORRAL_PARTS = $parts
EOF
}

@test "parts-mk: a CORRAL_PARTS entry that does not exist stops the run before any unit, named once with the nearest path" {
	project 'lbi' a b c d
	run -2 --separate-stderr make -C proj -j4 corral-run
	assert_equal 0 "$(ran_count)"
	assert_equal 1 "$(grep -c "part 'lbi'" <<<"$stderr")"
	assert_contains "$stderr" "corral-parts: part 'lbi' not found in '$PWD/proj'; nearest is 'lib'"
	assert_no_file proj/.corral/logs/agent-0.jsonl
}

@test "parts-mk: a part CORRAL_PARTS_CMD prints that does not exist is named once per run, not once per agent" {
	project lib a b c d
	echo 'CORRAL_PARTS_CMD = echo shared/config' >> proj/Makefile
	run -0 --separate-stderr make -C proj -j4 corral-run
	assert_equal 4 "$(ran_count)"
	assert_equal 1 "$(grep -c "shared/config" <<<"$stderr")"
	assert_contains "$stderr" "corral: part 'shared/config' not found in '$PWD/proj'; not cloned"
}

@test "parts-mk: a unit that is a symlink into the tree runs with its target, which no part names" {
	mkdir -p proj/libexec
	echo 'echo real; exit 0' > proj/libexec/real.sh
	project '' a
	ln -s ../libexec/real.sh proj/tests/link.sh
	printf 'tests/%s.sh\n' a link > proj/units.txt
	run -0 make -C proj -j2 corral-run
	assert_json '.successes == 2 and .failures == 0' proj/.corral/summary.json
}

# needs UNIT FILE: tests/UNIT.sh reads FILE, and fails when its clone
# lacks it.
needs() {
	printf 'cat %s > /dev/null 2>&1 || { echo "no %s"; exit 1; }\n' "$2" "$2" > "proj/tests/$1.sh"
}

# checked_fails NOTE: unit a, with CORRAL_PARTS = tests and
# CORRAL_PARTS_CHECK = 1, fails the run with NOTE
checked_fails() {
	project 'tests' a
	echo 'CORRAL_PARTS_CHECK = 1' >> proj/Makefile
	run -2 make -C proj corral-run
	run -0 jq -r .note proj/.corral/failures.jsonl
	assert_output "$1"
}

# relearned PART...: once tests/a.sh changes again, the next run learns
# it afresh: slice 0's parts are PART..., and it passes plainly
relearned() {
	echo >> proj/tests/a.sh
	run -0 make -C proj corral-run
	run -0 cat proj/.corral/slices/0.parts
	assert_output "$(printf '%s\n' "$@")"
	run -0 jq -r .note proj/.corral/successes.jsonl
	assert_output "PASS: exit 0"
}

@test "parts-mk: by default (CORRAL_PARTS_CHECK = 0) a unit missing a part fails as it is, tried once" {
	echo data > proj/lib/data
	needs a lib/data
	project 'tests' a
	run -2 make -C proj corral-run
	assert_equal 1 "$(ran_count)"
	run -0 jq -r .note proj/.corral/failures.jsonl
	assert_output "FAIL: exit 1: no lib/data"
	assert_no_file proj/.corral/logs/agent-0/1.2.out
}

@test "parts-mk: CORRAL_PARTS_CHECK = 1: a unit that passes with the whole tree fails saying a part is missing, naming what its clone lacked, a directory it lacked whole as one" {
	echo data > proj/lib/data
	needs a lib/data
	project 'tests' a b
	echo 'CORRAL_PARTS_CHECK = 1' >> proj/Makefile
	run -2 make -C proj corral-run
	assert_equal 3 "$(ran_count)"
	run -0 jq -r '[.unit, .note, (.reads | join(" "))] | @tsv' proj/.corral/failures.jsonl
	assert_output "$(printf '%s\t%s\t%s' tests/a.sh "FAIL: passes with the whole tree: a part is missing; its clone lacked 'lib/'" 'lib/data tests/a.sh')"
	assert_json '.successes == 1 and .failures == 1' proj/.corral/summary.json
	run -0 ls proj/.corral/work
	assert_output ""
}

@test "parts-mk: CORRAL_PARTS_CHECK = 1: a unit that fails with the whole tree too says so, and the whole tree holds no .git" {
	mkdir proj/.git
	echo 'test ! -e .git || echo "has .git"; exit 1' > proj/tests/a.sh
	checked_fails "FAIL: exit 1; fails with the whole tree too"
}

@test "parts-mk: a CORRAL_PARTS_CHECK other than 0 or 1 stops make naming it" {
	project lib a
	run -2 --separate-stderr make -C proj corral-run CORRAL_PARTS_CHECK=yes
	assert_contains "$stderr" "*** corral: CORRAL_PARTS_CHECK is 'yes'; it must be 0 or 1.  Stop."
	assert_equal 0 "$(ran_count)"
}

@test "parts-mk: CORRAL_PARTS = auto learns each unit in a whole-tree clone, then clones only what it read" {
	echo data > proj/lib/data
	echo other > proj/lib/other
	needs a lib/data
	project 'auto' a b
	run -0 make -C proj -j2 corral-run
	run -0 cat proj/.corral/slices/0.parts
	assert_output "$(printf '%s\n' . tests/a.sh)"
	run -0 jq -r 'select(.reads) | [.unit, (.reads | join(" "))] | @tsv' proj/.corral/history.jsonl
	assert_output "$(printf '%s\t%s\n' tests/a.sh 'lib/data tests/a.sh' tests/b.sh tests/b.sh | sort)"
	# What they read is as it was: the learning run's passes stand.
	: > "$RAN"
	run -0 make -C proj -j2 corral-run
	assert_equal 0 "$(ran_count)"
	run -0 cat proj/.corral/slices/*.parts
	assert_output "$(printf '%s\n' lib/data tests/a.sh tests/b.sh | sort)"
	run -0 corral-parts -H proj/.corral/history.jsonl
	assert_output "$(printf '%s\n' lib/data tests/a.sh tests/b.sh)"
	# A file no unit reads changes: nothing runs again.
	echo changed > proj/lib/other
	run -0 make -C proj -j2 corral-run
	assert_equal 0 "$(ran_count)"
	echo changed > proj/lib/data
	run -0 make -C proj -j2 corral-run
	run -0 cat "$RAN"
	assert_output tests/a.sh
}

@test "parts-mk: auto: a unit whose learned parts stop being enough passes with the whole tree, says so, and is learned again" {
	echo data > proj/lib/data
	echo more > proj/lib/more
	needs a lib/data
	project 'auto' a
	run -0 make -C proj corral-run
	printf 'cat lib/data lib/more > /dev/null\n' > proj/tests/a.sh
	touch -d '+1 second' proj/tests/a.sh
	run -0 make -C proj corral-run
	run -0 jq -r '[.note, .attempt, (.reads | join(" "))] | @tsv' proj/.corral/successes.jsonl
	assert_output "$(printf '%s\t%s\t%s' "PASS: with the whole tree; its learned parts were not enough; its clone lacked 'lib/more'; learned again" 2 'lib/data lib/more tests/a.sh')"
	relearned lib/data lib/more tests/a.sh
}

@test "parts-mk: auto: a unit that fails with what it opened, which its clone held, keeps the whole tree" {
	echo data > proj/lib/data
	# 'test -e' only stats: no watch sees it.
	echo 'test -e lib/data' > proj/tests/a.sh
	project 'auto' a
	run -0 make -C proj corral-run
	# a change, not a touch: the cache answers for a unit whose inputs
	# are as they were
	echo '# again' >> proj/tests/a.sh
	run -0 make -C proj corral-run
	run -0 jq -r '[.note, (.reads | join(" "))] | @tsv' proj/.corral/successes.jsonl
	assert_output "$(printf '%s\t%s' "PASS: with the whole tree; its learned parts were not enough; it opened nothing its clone lacked (what it lists or stats is not seen); it keeps the whole tree" .)"
	relearned . tests/a.sh
}

@test "parts-mk: auto: a failed attempt teaches nothing: a unit that failed early, having read one file, then runs once in the whole tree, not twice" {
	echo data > proj/lib/data
	echo more > proj/lib/more
	# the toggle lies outside the tree: it breaks the unit after one read
	printf '%s\n' 'cat lib/data > /dev/null' '[ ! -e "$TOGGLE" ] || exit 1' \
		'cat lib/more > /dev/null' > proj/tests/a.sh
	export TOGGLE=$PWD/broken
	touch broken
	project 'auto' a
	run -2 --separate-stderr make -C proj corral-run
	run -0 jq -r 'has("reads")' proj/.corral/failures.jsonl
	assert_output false
	rm broken
	: > "$RAN"
	run -0 --separate-stderr make -C proj corral-run
	assert_equal 1 "$(ran_count)"
	run -0 jq -r '[.attempt, (.reads | join(" "))] | @tsv' proj/.corral/successes.jsonl
	assert_output "$(printf '1\tlib/data lib/more tests/a.sh')"
}

@test "parts-mk: auto: a program a unit runs and a directory it lists are learned" {
	mkdir -p proj/tools proj/data/sub
	printf '#!/bin/sh\nexit 0\n' > proj/tools/helper
	chmod +x proj/tools/helper
	: > proj/data/one
	: > proj/data/sub/deep
	: > proj/lib/unread
	printf './tools/helper && ls data > /dev/null\n' > proj/tests/a.sh
	project 'auto' a
	run -0 make -C proj corral-run
	run -0 corral-parts -H proj/.corral/history.jsonl
	assert_output "$(printf '%s\n' data/ tests/a.sh tools/helper)"
}

# ran_now UNIT...: after the next run, exactly UNIT... ran (none: nothing)
ran_now() {
	: > "$RAN"
	run -0 make -C proj -j2 corral-run
	run -0 sort "$RAN"
	assert_output "$(for u in "$@"; do printf '%s\n' "$u"; done | sort)"
}

@test "parts-mk: auto: a unit that lists a directory and reads one file there depends on the names in it: another file there changing runs nothing, the file it read changing runs it again" {
	mkdir -p proj/data
	echo one > proj/data/one
	echo two > proj/data/two
	printf 'ls data > /dev/null\ncat data/one > /dev/null\n' > proj/tests/a.sh
	project 'auto' a
	run -0 make -C proj corral-run
	run -0 corral-parts -H proj/.corral/history.jsonl
	assert_output "$(printf '%s\n' data/ data/one tests/a.sh)"
	# the learning run's pass stands: the listing is a line of the whole tree's
	ran_now
	echo changed > proj/data/two
	touch -d '+1 second' proj/data/two
	ran_now
	echo changed > proj/data/one
	ran_now tests/a.sh
}

@test "parts-mk: auto: an entry added to, renamed in or removed from a directory a unit lists (ls, find) runs it again; one below it, only the unit that listed there" {
	mkdir -p proj/data/sub
	echo one > proj/data/one
	printf 'ls data > /dev/null\n' > proj/tests/a.sh
	printf 'find data > /dev/null\n' > proj/tests/b.sh
	project 'auto' a b
	echo 'CORRAL_AGENTS = 2' >> proj/Makefile
	run -0 make -C proj -j2 corral-run
	# find opens '.', to come back to it: the root counts as listed too
	run -0 corral-parts -u -H proj/.corral/history.jsonl
	assert_output "$(printf 'tests/a.sh\t%s\n' data/ tests/a.sh; printf 'tests/b.sh\t%s\n' ./ data/ data/sub/ tests/b.sh)"
	ran_now
	: > proj/data/new
	ran_now tests/a.sh tests/b.sh
	mv proj/data/new proj/data/renamed
	ran_now tests/a.sh tests/b.sh
	# (removing renamed would give back the first run's names, whose pass
	# the cache holds: remove another)
	rm proj/data/one
	ran_now tests/a.sh tests/b.sh
	: > proj/data/sub/deep
	ran_now tests/b.sh
}

@test "parts-mk: auto: a directory a unit lists is cloned as its names: what it read whole, every other entry a placeholder of the same type, mode, size and mtime that reads as zeros, a link's target likewise" {
	mkdir -p proj/data/sub
	echo one > proj/data/one
	echo secret > proj/data/two
	chmod 0751 proj/data/two
	echo far > proj/lib/far
	ln -s one proj/data/near
	ln -s ../lib/far proj/data/far
	# shape.sh, outside the tree: how data looks to one who lists and stats it
	cat > shape.sh <<'EOF'
find data -mindepth 1 ! -type l -printf '%p %y %m %T@\n' | sort
find data -type f -printf '%p %s\n' | sort
find data -type l -printf '%p -> %l\n' | sort
test -f data/far && echo 'data/far leads to a file'
EOF
	# with SHAPE set, the unit writes that, then what two and one hold
	printf '%s\n' 'ls data > /dev/null' 'cat data/one > /dev/null' \
		'[ -z "$SHAPE" ] || { sh "$SHAPE"; od -An -tx1 data/two; cat data/one; } > "$SHAPE.out"' \
		> proj/tests/a.sh
	project 'auto' a
	run -0 make -C proj corral-run
	export SHAPE=$PWD/shape.sh
	echo '# again' >> proj/tests/a.sh
	: > "$RAN"
	run -0 make -C proj corral-run
	assert_equal 1 "$(ran_count)"
	run -0 jq -r '[.attempt, .note] | @tsv' proj/.corral/successes.jsonl
	assert_output "$(printf '1\tPASS: exit 0')"
	run -0 sh -c 'cd proj && sh "$SHAPE"'
	assert_output "$(sed '$d' shape.sh.out | sed '$d')"
	assert_contains "$output" "data/far leads to a file"
	assert_equal "$(tail -2 shape.sh.out)" "$(printf ' 00 00 00 00 00 00 00\none')"
}

@test "parts-mk: auto: a unit that opens a Python bytecode cache reads its source beside it, which Python checks only by stat: the source changing runs it again" {
	mkdir -p proj/lib/__pycache__
	echo 'X = 1' > proj/lib/m.py
	: > proj/lib/__pycache__/m.cpython-311.pyc
	: > proj/lib/__pycache__/gone.cpython-311.pyc
	printf 'cat lib/__pycache__/m.cpython-311.pyc lib/__pycache__/gone.cpython-311.pyc > /dev/null\n' > proj/tests/a.sh
	project 'auto' a
	run -0 make -C proj corral-run
	run -0 corral-parts -H proj/.corral/history.jsonl
	assert_output "$(printf '%s\n' lib/__pycache__/gone.cpython-311.pyc lib/__pycache__/m.cpython-311.pyc lib/m.py tests/a.sh)"
	ran_now
	echo 'X = 2' > proj/lib/m.py
	ran_now tests/a.sh
}

# pyproject UNIT...: a Python package, pkg, and tests/UNIT.py for each
# UNIT, importing it with the root on its path after its own directory
# (so Python lists tests/, as pytest does); Python has already run here
# once, so its bytecode caches are in the tree.
pyproject() {
	local u py='env -u PYTHONDONTWRITEBYTECODE -u PYTHONPYCACHEPREFIX python3'
	mkdir -p proj/pkg
	: > proj/pkg/__init__.py
	printf 'def f():\n    return 1\n' > proj/pkg/core.py
	for u in "$@"; do
		printf '%s\n' 'import os, sys' 'sys.path.append(os.getcwd())' \
			'import pkg.core' 'assert pkg.core.f() == 1' > "proj/tests/$u.py"
	done
	(cd proj && for u in "$@"; do $py "tests/$u.py" || exit; done)
	_corral_project $(printf 'tests/%s.py ' "$@") <<EOF
CORRAL_CMD = printf '%s\\n' "\$\$CORRAL_UNIT" >> "\$\$RAN"; $py "\$\$CORRAL_UNIT"
CORRAL_PARTS = auto
CORRAL_AGENTS = $#
EOF
}

@test "parts-mk: auto: Python tests that import a package: editing one test file runs that one alone, editing the package (its caches stale) runs them all" {
	pyproject test_a test_b
	run -0 make -C proj -j2 corral-run
	# what it read: pkg's caches, and through them the sources; of
	# tests/, its own file and the names
	run -0 corral-parts -H proj/.corral/history.jsonl tests/test_a.py
	assert_equal 1 "$(grep -c '^pkg/__pycache__/core\.cpython-.*\.pyc$' <<<"$output")"
	assert_equal "$(grep -v __pycache__ <<<"$output")" "$(printf '%s\n' ./ pkg/ pkg/__init__.py pkg/core.py tests/ tests/test_a.py)"
	ran_now
	echo '# edited' >> proj/tests/test_b.py
	ran_now tests/test_b.py
	echo '# edited' >> proj/pkg/core.py
	ran_now tests/test_a.py tests/test_b.py
}

@test "parts-mk: auto: a learned file that is gone makes its unit run again, named once as not found, and fail" {
	echo data > proj/lib/data
	needs a lib/data
	project 'auto' a b
	run -0 make -C proj -j2 corral-run
	: > "$RAN"
	rm proj/lib/data
	run -2 --separate-stderr make -C proj -j2 corral-run
	assert_equal 1 "$(grep -c "part 'lib/data'" <<<"$stderr")"
	assert_contains "$stderr" "corral: part 'lib/data' not found in '$PWD/proj'; not cloned"
	# Once with its learned parts, once in the whole tree.
	run -0 cat "$RAN"
	assert_output "$(printf '%s\n' tests/a.sh tests/a.sh)"
	run -0 jq -r .note proj/.corral/failures.jsonl
	assert_output "FAIL: exit 1: no lib/data; fails with the whole tree too"
}

@test "parts-mk: CORRAL_PARTS_CHECK = 1 names what the unit opened before what it only listed" {
	echo data > proj/lib/data
	printf 'ls . > /dev/null\ncat lib/data > /dev/null\n' > proj/tests/a.sh
	checked_fails "FAIL: passes with the whole tree: a part is missing; its clone lacked 'lib/'"
}

@test "parts-mk: auto: a history line whose reads name a path outside the tree (../x, /etc/passwd, lib/../../x, ./lib/data, a newline) never stops a run: the read is dropped with one warning naming the unit and the read, and corral-run, make -B and corral-rerun-failed run the unit and pass" {
	echo data > proj/lib/data
	needs a lib/data
	project 'auto' a b
	run -0 make -C proj -j2 corral-run
	local h=proj/.corral/history.jsonl line r
	line=$(jq -c 'select(.unit == "tests/a.sh" and .reads)' "$h" | tail -1)
	[ -n "$line" ] || flunk "nothing learned for tests/a.sh"
	for r in ../x /etc/passwd lib/../../x ./lib/data $'lib/data\nx'; do
		jq -c --arg r "$r" '.reads = [$r, "lib/data", "tests/a.sh"]' <<<"$line" >> "$h"
		run -0 --separate-stderr make -C proj -j2 corral-run
		assert_equal 1 "$(grep -c "unit 'tests/a.sh': learned read '" <<<"$stderr")"
		assert_json '.successes == 2 and .missing == 0' proj/.corral/summary.json
		run -0 --separate-stderr make -C proj -j2 -B corral-run
		assert_json '.successes == 2 and .missing == 0' proj/.corral/summary.json
	done
	assert_contains "$stderr" "'$PWD/$h': unit 'tests/a.sh': learned read"
	# a fails once (its file gone); re-run, with the planted line last
	mv proj/lib/data proj/lib/gone
	run make -C proj -j2 -B corral-run
	run -0 cat proj/.corral/failed.units
	assert_output tests/a.sh
	mv proj/lib/gone proj/lib/data
	jq -c '.reads = ["../x", "lib/data", "tests/a.sh"]' <<<"$line" >> "$h"
	run -0 --separate-stderr make -C proj -j2 corral-rerun-failed
	assert_contains "$stderr" "unit 'tests/a.sh': learned read '../x' leaves the tree; dropped"
	assert_json '.successes == 2 and .missing == 0' proj/.corral/summary.json
}

@test "parts-mk: a missing part whose name holds OSC, clear screen, CR and other C0 bytes is named with each of them shown as '?'" {
	project lib a b
	printf '%s\n' 'CORRAL_PARTS_CMD = printf "sh\033]0;t\007\033[2J\rX\001\n"' >> proj/Makefile
	run -0 --separate-stderr make -C proj -j2 corral-run
	printf '%s\n' "$stderr" > err
	assert_shown err
	assert_contains "$stderr" "corral: part 'sh?]0;t??[2J?X?' not found in '$PWD/proj'; not cloned"
}
