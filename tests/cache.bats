#!/usr/bin/env bats
# cache.bats -- results that travel: a unit's pass is kept under the key
# of what it read (the local store in CORRAL_OUT, and CORRAL_CACHE), and a
# unit whose key is stored does not run; its record says so.  A wrong hit
# is found by sampling (CORRAL_CACHE_VERIFY); a store that cannot be used
# never fails the run.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
	_corral_tmpdir
	_corral_ran
}

# project DIR N [SETTINGS...]: DIR/tests/uK.sh for K in 1..N, the first
# three reading lib/shared; each unit notes that it ran, then runs
# itself; CORRAL_PARTS = auto; more make lines after.
project() {
	local dir=$1 n=$2 i
	shift 2
	mkdir -p "$dir/lib" "$dir/tests"
	echo v1 > "$dir/lib/shared"
	echo other > "$dir/lib/other"
	for i in $(seq "$n"); do
		if [ "$i" -le 3 ]; then
			echo 'read -r v < lib/shared; exit 0' > "$dir/tests/u$i.sh"
		else
			echo 'exit 0' > "$dir/tests/u$i.sh"
		fi
	done
	{
		echo 'CORRAL_DISCOVER = ls tests/*.sh'
		echo 'CORRAL_CMD = printf "%s\n" "$$CORRAL_UNIT" >> "$$RAN"; sh "$$CORRAL_UNIT"'
		echo 'CORRAL_PARTS = auto'
		printf '%s\n' "$@"
		echo "include $CORRAL_ROOT/corral.mk"
	} > "$dir/Makefile"
}

@test "cache: with no store, editing a file 3 of 60 units read runs exactly those 3; a touch or a change elsewhere runs none; make -B runs all 60" {
	project proj 60
	run -0 make -C proj -j4 corral-run
	assert_equal 60 "$(ran_count)"
	: > "$RAN"
	echo v2 > proj/lib/shared
	run -0 make -C proj -j4 corral-run
	run -0 sort "$RAN"
	assert_output "$(printf 'tests/u%s.sh\n' 1 2 3)"
	assert_json '.successes == 60 and .failures == 0' proj/.corral/summary.json
	: > "$RAN"
	touch proj/lib/shared proj/tests/u7.sh
	run -0 make -C proj -j4 corral-run
	assert_equal 0 "$(ran_count)"
	run -0 make -C proj -j4 -B corral-run
	assert_equal 60 "$(ran_count)"
	run -0 jq -s 'map(select(.cached)) | length' proj/.corral/successes.jsonl
	assert_output 0
}

@test "cache: a failing unit no longer drags the passing units of its slice along; corral-rerun-failed runs the failed one" {
	project proj 12 'CORRAL_AGENTS = 2' \
		'CORRAL_CMD = printf "%s\n" "$$CORRAL_UNIT" >> "$$RAN"; ! grep -qx "$$CORRAL_UNIT" "$$FAILING"'
	export FAILING=$PWD/failing
	echo tests/u5.sh > failing
	run -2 make -C proj corral-run
	assert_equal 12 "$(ran_count)"
	: > "$RAN"
	run -2 make -C proj corral-run
	run -0 cat "$RAN"
	assert_output tests/u5.sh
	: > failing
	: > "$RAN"
	run -0 make -C proj corral-rerun-failed
	run -0 cat "$RAN"
	assert_output tests/u5.sh
	: > "$RAN"
	run -0 make -C proj corral-run
	assert_equal 0 "$(ran_count)"
	assert_json '.successes == 12 and .failures == 0' proj/.corral/summary.json
}

@test "cache: a cached unit's record is this run's, with the pass it reuses under cached, its duration and its output's tail; the summary, JUnit and TAP say cached" {
	project proj 4 'CORRAL_AGENTS = 1' "CORRAL_JUNIT = $PWD/junit.xml"
	echo 'echo "the tail of u4"; sleep 0.3' > proj/tests/u4.sh
	run -0 make -C proj corral-run
	local first
	first=$(jq -r 'select(.unit == "tests/u4.sh") | .run' proj/.corral/successes.jsonl)
	rm proj/.corral/slices/*.pass
	: > "$RAN"
	run -0 make -C proj corral-run
	assert_equal 0 "$(ran_count)"
	assert_contains "$output" "4 cached: passed before on the same inputs, not run again"
	run -0 jq -r 'select(.unit == "tests/u4.sh") |
		[(.run != $first), .cached.run, (.cached.key | length), (.duration_ms >= 300)] | @tsv' \
		--arg first "$first" proj/.corral/successes.jsonl
	assert_output "$(printf 'true\t%s\t64\ttrue' "$first")"
	run -0 cat "$(jq -r 'select(.unit == "tests/u4.sh") | .output' proj/.corral/successes.jsonl)"
	assert_output "the tail of u4"
	assert_equal 4 "$(grep -c '(cached) PASSED' junit.xml)"
	run -0 corral-report -t proj/.corral
	assert_contains "$output" "ok 4 - tests/u4.sh (cached)"
}

@test "cache: a fresh clone with a restored store runs no unit and reports every unit exactly once" {
	project a 30 "CORRAL_CACHE = $PWD/store"
	run -0 make -C a -j4 corral-run
	assert_equal 30 "$(ran_count)"
	cp -r a b
	rm -rf b/.corral
	: > "$RAN"
	run -0 make -C b -j4 corral-run
	assert_equal 0 "$(ran_count)"
	assert_json '.successes == 30 and .failures == 0 and .missing == 0 and .duplicates == 0' b/.corral/summary.json
	run -0 jq -rs 'map(select(.cached)) | map(.unit) | unique | length' b/.corral/successes.jsonl
	assert_output 30
	# each hit tells what its unit read, so b's history learns it too
	run -0 jq -r 'select(.unit == "tests/u1.sh") | .reads | join(" ")' b/.corral/successes.jsonl
	assert_output "lib/shared tests/u1.sh"
	run -0 sh -c "jq -r .unit b/.corral/successes.jsonl | sort | uniq -d"
	assert_output ""
	# corral-clean takes the local results away; the store still answers
	run -0 make -C a corral-clean
	run -0 make -C a -j4 corral-run
	assert_equal 0 "$(ran_count)"
	assert_json '.successes == 30' a/.corral/summary.json
}

@test "cache: a slice whose every unit the store answers makes no clone (its work directory a path through a regular file, a fresh CORRAL_OUT still passes) and no file or directory in the local store but the store itself (a hit's why is its record; a directory store's entries are not copied); explain and verify still see the hits" {
	project a 20 "CORRAL_CACHE = $PWD/store" 'CORRAL_AGENTS = 4'
	run -0 make -C a -j2 corral-run
	assert_equal 20 "$(ran_count)"
	# no directory can be made under blocker/ (root included): any
	# clone an agent tried would fail its slice
	echo file > blocker
	project b 20 "CORRAL_CACHE = $PWD/store" 'CORRAL_AGENTS = 4' \
		"CORRAL_WORK = $PWD/blocker/corral-w"
	: > "$RAN"
	run -0 make -C b -j2 corral-run
	assert_equal 0 "$(ran_count)"
	assert_json '.successes == 20 and .failures == 0 and .missing == 0 and .duplicates == 0' b/.corral/summary.json
	run -0 jq -rs 'map(select(.cached and .run != null)) | length' b/.corral/successes.jsonl
	assert_output 20
	# a hit taken writes nothing there: its record says it hit, and by
	# which key (a why file a hit, even a link, is a directory entry
	# whose lock every -q process takes; a new directory an inode)
	assert_equal "b/.corral/cache" "$(find b/.corral/cache | xargs)"
	run -0 corral-cache -d b/.corral/cache explain tests/u2.sh
	assert_output "tests/u2.sh: a hit, key $(cut -c1-16 <<< "$(jq -r 'select(.unit == "tests/u2.sh") | .cached.key' b/.corral/successes.jsonl)")"
	run -0 corral-cache -d b/.corral/cache verify
	assert_equal 20 "$(grep -c '^hit ' <<< "$output")"
	# the same slices with a miss do try their clone there, and fail
	echo v2 > b/lib/shared
	rm -rf b/.corral
	run -2 make -C b -j2 corral-run
	assert_equal 0 "$(ran_count)"
	assert_contains "$output" "blocker/corral-w"
}

# agentbin: logbin/ (test_helper's _corral_logbin), where the pass that
# answers slices before the graph is read logs "corral-run-slice -q";
# agents: the agents that calls holds, answerers: the passes.
agentbin() { _corral_logbin; }
agents() { grep -c '^corral-run-slice$' calls || true; }
answerers() { grep -c '^corral-run-slice -q$' calls || true; }
# how many -q a make -j2 run of project DIR starts: one a job slot and a
# CPU, 16 slices each at the least
answerers_j2() {
	local n j=2
	n=$(ls "$1"/.corral/slices/*.units | wc -l)
	[ "$(nproc)" -ge 2 ] || j=1
	[ $((n / 16)) -ge "$j" ] || j=$((n / 16))
	echo $((j < 1 ? 1 : j))
}

@test "cache: a fresh CORRAL_OUT whose every unit the store answers starts no agent (corral-run-slice -q, one a job slot, answers every slice before make reads the graph); a changed unit starts its own slice's agent alone; a no-op run asks no store" {
	project a 40 "CORRAL_CACHE = $PWD/store" 'CORRAL_AGENTS = 4'
	run -0 make -C a -j2 corral-run
	agentbin
	rm -rf a/.corral
	: > "$RAN"
	CORRAL_BIN=$PWD/logbin run -0 make -C a -j2 corral-run
	assert_equal 0 "$(ran_count)"
	assert_equal "$(answerers_j2 a)" "$(answerers)"
	assert_equal 0 "$(agents)"
	assert_json '.successes == 40 and .cached == 40 and .missing == 0 and .duplicates == 0' a/.corral/summary.json
	run -0 sh -c "jq -r .unit a/.corral/successes.jsonl | sort | uniq -d"
	assert_output ""
	: > calls
	CORRAL_BIN=$PWD/logbin run -0 make -C a -j2 corral-run
	assert_equal 0 "$(answerers)"
	assert_equal 0 "$(agents)"
	echo 'exit 0 # changed' > a/tests/u5.sh
	rm -rf a/.corral
	: > calls
	CORRAL_BIN=$PWD/logbin run -0 make -C a -j2 corral-run
	run -0 cat "$RAN"
	assert_output tests/u5.sh
	assert_equal "$(answerers_j2 a)" "$(answerers)"
	assert_equal 1 "$(agents)"
	assert_json '.successes == 40 and .cached == 39 and .missing == 0 and .duplicates == 0' a/.corral/summary.json
	# make -B asks no store, and a fresh CORRAL_OUT's new plan is read
	rm -rf a/.corral
	: > calls
	: > "$RAN"
	CORRAL_BIN=$PWD/logbin run -0 make -C a -j2 -B corral-run
	assert_equal 40 "$(ran_count)"
	assert_equal 0 "$(answerers)"
}

@test "cache: under make -j2, two corral-run-slice -q share the stale slices of a fresh CORRAL_OUT, each slice answered once by one of them; without -j, or with few slices, one answers all" {
	[ "$(nproc)" -ge 2 ] || skip "one CPU: one -q a CPU"
	project a 80 "CORRAL_CACHE = $PWD/store" 'CORRAL_AGENTS = 40'
	run -0 make -C a -j2 corral-run
	agentbin
	rm -rf a/.corral
	: > "$RAN"
	CORRAL_BIN=$PWD/logbin run -0 make -C a -j2 corral-run
	assert_equal 40 "$(ls a/.corral/slices/*.pass | wc -l)"
	assert_equal 0 "$(ran_count)"
	assert_equal 2 "$(answerers)"
	assert_equal 0 "$(agents)"
	assert_json '.successes == 80 and .cached == 80 and .missing == 0 and .duplicates == 0' a/.corral/summary.json
	assert_equal 40 "$(ls a/.corral/logs/*.jsonl | wc -l)"
	rm -rf a/.corral
	: > calls
	CORRAL_BIN=$PWD/logbin run -0 make -C a corral-run
	assert_equal 1 "$(answerers)"
	assert_equal 0 "$(agents)"
	assert_json '.successes == 80 and .cached == 80 and .missing == 0 and .duplicates == 0' a/.corral/summary.json
	# a changed unit in a fresh CORRAL_OUT: its slice alone is left
	echo 'exit 0 # changed' > a/tests/u7.sh
	rm -rf a/.corral
	: > calls
	CORRAL_BIN=$PWD/logbin run -0 make -C a -j2 corral-run
	run -0 cat "$RAN"
	assert_output tests/u7.sh
	assert_equal 2 "$(answerers)"
	assert_equal 1 "$(agents)"
	assert_json '.successes == 80 and .cached == 79 and .missing == 0 and .duplicates == 0' a/.corral/summary.json
}

@test "cache: the hits sampled to verify are the same ones whether the pass before the graph or the slice's own agent looks them up: each agent started verifies a hit" {
	local round
	project a 100 "CORRAL_CACHE = $PWD/store" 'CORRAL_AGENTS = 10'
	run -0 make -C a -j2 corral-run
	# a plan from history holds to CORRAL_AGENTS: 10 slices of about 10
	# units, each of which samples none or one at 5 percent
	run -0 make -C a corral-plan
	agentbin
	for round in 1 2 3; do
		rm -f a/.corral/slices/*.pass
		: > calls
		: > "$RAN"
		CORRAL_BIN=$PWD/logbin run -0 make -C a -j2 corral-run CORRAL_CACHE_VERIFY=5
		assert_equal "$(agents)" "$(ran_count)"
		assert_json '.successes == 100 and .missing == 0 and .duplicates == 0' a/.corral/summary.json
	done
}

@test "cache: in a slice the store answers but for one unit, the keys are looked up before any clone is made, and that unit runs in a clone, not in the tree" {
	# CORRAL_CACHE_KEY runs once an agent, before its first lookup: it
	# notes the clones there are then (its output, the key's, is "k")
	project a 8 "CORRAL_CACHE = $PWD/store" 'CORRAL_AGENTS = 1' \
		'CORRAL_CMD = printf "%s %s\n" "$$CORRAL_UNIT" "$$PWD" >> "$$RAN"; sh "$$CORRAL_UNIT"' \
		"CORRAL_CACHE_KEY = find '$PWD/a/.corral/work' -name 'corral-*' -prune >> '$PWD/seen'; echo k"
	run -0 make -C a corral-run
	assert_equal 8 "$(ran_count)"
	: > "$RAN"
	: > seen
	rm -rf a/.corral
	echo 'exit 0 # changed' > a/tests/u5.sh
	run -0 make -C a corral-run
	run -0 cat seen
	assert_output ""
	run -0 cat "$RAN"
	assert_equal 1 "${#lines[@]}"
	local unit where
	read -r unit where < "$RAN"
	assert_equal tests/u5.sh "$unit"
	# a clone of the tree under CORRAL_OUT/work, made for this unit
	case $where in
	"$PWD"/a/.corral/work/*) ;;
	*) fail "tests/u5.sh ran in '$where', not in a clone" ;;
	esac
	run -0 jq -rs 'map(select(.cached)) | length' a/.corral/successes.jsonl
	assert_output 7
	run -0 jq -rs 'map(select(.unit == "tests/u5.sh" and .checkout != null)) | length' a/.corral/successes.jsonl
	assert_output 1
}

# entry UNIT: the result of tests/UNIT in store/
entry() { grep -l "\"tests/$1\"" store/r/*/*.json; }

@test "cache: a truncated, a foreign and a mis-keyed entry are misses, each with a warning, never a pass" {
	project proj 6 "CORRAL_CACHE = $PWD/store" 'CORRAL_AGENTS = 1'
	run -0 make -C proj corral-run
	run -0 make -C proj corral-clean
	local e1 e2 e3 e4
	e1=$(entry u4.sh)
	e2=$(entry u5.sh)
	e3=$(entry u6.sh)
	e4=$(entry u1.sh)
	head -c 40 "$e1" > t && mv t "$e1"
	cp "$e4" "$e2"
	sed 's/"key":"\([0-9a-f]*\)"/"key":"0\1"/' "$e3" > t && mv t "$e3"
	: > "$RAN"
	run -0 --separate-stderr make -C proj corral-run
	run -0 sort "$RAN"
	assert_output "$(printf 'tests/u%s.sh\n' 4 5 6)"
	assert_contains "$stderr" "is unreadable"
	assert_equal 2 "$(grep -c 'records another key, unit or result; not trusted' <<<"$stderr")"
	assert_json '.successes == 6' proj/.corral/summary.json
}

@test "cache: a FIFO, a directory or a link to another unit's entry planted at an entry's name is a miss with a warning, never a pass, and no read waits" {
	project proj 4 "CORRAL_CACHE = $PWD/store" 'CORRAL_AGENTS = 1'
	run -0 make -C proj corral-run
	run -0 make -C proj corral-clean
	local e1 e2 e3 e4
	e2=$(entry u2.sh)
	e3=$(entry u3.sh)
	e4=$(entry u4.sh)
	e1=$(entry u1.sh)
	rm "$e2" "$e3" "$e4"
	ln -s "$PWD/$e1" "$e2"
	mkfifo "$e3"
	mkdir "$e4"
	: > "$RAN"
	run -0 --separate-stderr timeout 120 make -C proj corral-run
	run -0 sort "$RAN"
	assert_output "$(printf 'tests/u%s.sh\n' 2 3 4)"
	assert_contains "$stderr" "is a directory, not a regular file"
	assert_contains "$stderr" "is a FIFO, not a regular file"
	assert_contains "$stderr" "records another key, unit or result; not trusted"
	# u2's result is not written through the link: the store is said
	# and left
	assert_contains "$stderr" "cannot be used (cannot write in it: '$PWD/$e2' is a symbolic link, not a regular file)"
	[ -L "$e2" ] && [ "$(cat "$e1")" = "$(cat "$e2")" ] || flunk "the link was followed"
	assert_json '.successes == 4 and .cached == 1' proj/.corral/summary.json
}

@test "cache: a store through a regular file leaves the run uncached, said once" {
	project proj 8 "CORRAL_CACHE = $PWD/file/store"
	: > file
	run -0 --separate-stderr make -C proj -j4 corral-run
	assert_equal 8 "$(ran_count)"
	assert_equal 1 "$(grep -c "the cache '$PWD/file/store' cannot be used" <<<"$stderr")"
	assert_contains "$stderr" "going on uncached"
	assert_json '.successes == 8' proj/.corral/summary.json
}

@test "cache: a full file system under the store leaves the run uncached, said once, and the run passes" {
	mkdir full
	mount -t tmpfs -o size=16k tmpfs full 2>/dev/null || skip "cannot mount a tmpfs here"
	dd if=/dev/zero of=full/fill bs=1k count=16 2>/dev/null || true
	project proj 8 "CORRAL_CACHE = $PWD/full/store"
	mkdir -p full/store 2>/dev/null || true
	run -0 --separate-stderr make -C proj -j4 corral-run
	umount full
	assert_equal 8 "$(ran_count)"
	assert_equal 1 "$(grep -c "the cache '$PWD/full/store' cannot be used" <<<"$stderr")"
	assert_json '.successes == 8' proj/.corral/summary.json
}

@test "cache: two runs writing one store at once, round after round, leave only whole entries and right results" {
	project a 20 "CORRAL_CACHE = $PWD/store"
	cp -r a b
	local i
	for i in 1 2 3 4 5 6; do
		echo "round $i" > a/lib/shared
		echo "round $i" > b/lib/shared
		echo "exit 0 # $i" >> a/tests/u9.sh
		echo "exit 0 # $i" >> b/tests/u9.sh
		make -C a -j4 corral-run > a.out 2>&1 & local pa=$!
		make -C b -j4 corral-run > b.out 2>&1 & local pb=$!
		wait "$pa" || { cat a.out; flunk "round $i: a failed"; }
		wait "$pb" || { cat b.out; flunk "round $i: b failed"; }
		assert_json '.successes == 20 and .failures == 0' a/.corral/summary.json
		assert_json '.successes == 20 and .failures == 0' b/.corral/summary.json
	done
	run -0 corral-cache -d store verify
	assert_equal "removed 0 unreadable results" "${lines[0]}"
	for f in store/r/*/*.json; do
		jq -e --arg k "$(basename "$f" .json)" '.key == $k' "$f" > /dev/null ||
			flunk "'$f' is not a whole entry"
	done
}

# planted DIR N: units that pass unless PLANT is set, which no key names.
planted() {
	local dir=$1 n=$2 i
	mkdir -p "$dir/tests"
	for i in $(seq "$n"); do
		echo '[ -z "$PLANT" ] || { echo "planted"; exit 1; }' > "$dir/tests/p$i.sh"
	done
	cat > "$dir/Makefile" <<EOF
CORRAL_DISCOVER = ls tests/*.sh
CORRAL_CMD = printf '%s\\n' "\$\$CORRAL_UNIT" >> "\$\$RAN"; sh "\$\$CORRAL_UNIT"
CORRAL_CACHE = $PWD/store
CORRAL_AGENTS = 1
include $CORRAL_ROOT/corral.mk
EOF
}

@test "cache: CORRAL_CACHE_VERIFY=100 runs every hit again: a planted unit whose result hangs on a variable outside its key fails, says the cache was wrong, and its entry goes" {
	planted proj 1
	run -0 make -C proj corral-run
	run -0 make -C proj corral-clean
	export PLANT=1
	: > "$RAN"
	run -2 make -C proj corral-run CORRAL_CACHE_VERIFY=100
	assert_equal 1 "$(ran_count)"
	run -0 jq -r '.note' proj/.corral/failures.jsonl
	assert_contains "$output" "the cache held a pass its key did not justify"
	run -0 corral-cache -d store stats
	assert_output "0 results, 0 bytes, 1 units known"
	# without the entry the unit is a miss, and fails on its own
	run -0 make -C proj corral-clean
	run -2 make -C proj corral-run CORRAL_CACHE_VERIFY=0
	assert_equal 2 "$(ran_count)"
}

@test "cache: at the default CORRAL_CACHE_VERIFY, one in 50 hits runs again: of 50 planted units one is caught" {
	unset CORRAL_CACHE_VERIFY
	planted proj 50
	run -0 make -C proj corral-run
	# a plan from history holds to CORRAL_AGENTS = 1 (a first plan is
	# finer); the local results go: one agent asks the store for 50 hits
	run -0 make -C proj corral-plan
	rm -rf proj/.corral/cache proj/.corral/slices/*.pass
	export PLANT=1
	: > "$RAN"
	run -2 make -C proj corral-run
	assert_equal 1 "$(ran_count)"
	assert_json '.successes == 49 and .failures == 1' proj/.corral/summary.json
}

@test "cache: corral-cache explain names the part that changed, a hit, and a unit it knows nothing of" {
	project proj 4
	run -0 make -C proj corral-run
	echo v2 > proj/lib/shared
	rm proj/.corral/slices/*.pass
	run -0 make -C proj corral-run
	run -0 corral-cache -d proj/.corral/cache explain tests/u1.sh
	assert_contains "$output" "tests/u1.sh: a miss"
	assert_contains "$output" "  file lib/shared: changed"
	run -0 corral-cache -d proj/.corral/cache explain tests/u4.sh
	assert_contains "$output" "tests/u4.sh: a hit"
	run -1 --separate-stderr corral-cache -d proj/.corral/cache explain tests/none.sh
	assert_equal "corral-cache: the cache 'proj/.corral/cache' knows nothing of 'tests/none.sh'" "$stderr"
}

@test "cache: corral-cache stats counts, prune keeps the newest results within a size" {
	project proj 10
	run -0 make -C proj corral-run
	run -0 corral-cache -d proj/.corral/cache stats
	assert_contains "$output" "10 results,"
	run -0 corral-cache -d proj/.corral/cache prune --max-size 0
	assert_output "removed 10 results"
	run -0 corral-cache -d proj/.corral/cache stats
	assert_contains "$output" "0 results, 0 bytes"
}

@test "cache: corral-cache without a command, or prune without a size, is a usage error" {
	run -2 --separate-stderr corral-cache
	assert_contains "${stderr_lines[0]}" "usage: corral-cache"
	run -2 --separate-stderr corral-cache prune
	assert_contains "${stderr_lines[0]}" "usage: corral-cache"
	run -2 --separate-stderr corral-cache -d /nonexistent explain
	assert_contains "${stderr_lines[0]}" "usage: corral-cache"
}

@test "cache: a variable CORRAL_CACHE_ENV names, CORRAL_CACHE_KEY's output and a program CORRAL_CMD starts each join the key: a change to one is a miss that explain names" {
	mkdir -p tools
	printf '#!/bin/sh\nexit 0\n' > tools/mytool
	chmod +x tools/mytool
	export PATH=$PWD/tools:$PATH FLAVOUR=plain
	echo 1.0 > toolver
	project proj 3 'CORRAL_CACHE_ENV = FLAVOUR' "CORRAL_CACHE_KEY = cat $PWD/toolver" \
		'CORRAL_CMD = printf "%s\n" "$$CORRAL_UNIT" >> "$$RAN"; mytool "$$CORRAL_UNIT"'
	run -0 make -C proj corral-run
	assert_equal 3 "$(ran_count)"
	again() {
		rm proj/.corral/slices/*.pass
		: > "$RAN"
		run -0 make -C proj corral-run
	}
	again
	assert_equal 0 "$(ran_count)"
	FLAVOUR=spicy again
	assert_equal 3 "$(ran_count)"
	run -0 corral-cache -d proj/.corral/cache explain tests/u1.sh
	assert_contains "$output" "  env FLAVOUR: changed"
	echo 2.0 > toolver
	again
	assert_equal 3 "$(ran_count)"
	run -0 corral-cache -d proj/.corral/cache explain tests/u2.sh
	assert_contains "$output" "  key-command: changed"
	printf '#!/bin/sh\n# 2\nexit 0\n' > tools/mytool
	again
	assert_equal 3 "$(ran_count)"
	run -0 corral-cache -d proj/.corral/cache explain tests/u3.sh
	assert_contains "$output" "  tool $PWD/tools/mytool: changed"
}

@test "cache: an HTTP store (a real nginx, WebDAV PUT) serves a fresh clone: no unit runs, every unit once" {
	_http_store_start "$PWD/nginx"
	project a 20 "CORRAL_CACHE = $HTTP_STORE"
	run -0 --separate-stderr make -C a -j4 corral-run
	_http_store_stop "$PWD/nginx"
	assert_equal 20 "$(ran_count)"
	[[ $stderr != *"cannot be used"* ]] || flunk "the store was refused: $stderr"
	# what the server keeps is what a directory store keeps
	assert_equal 20 "$(find "$HTTP_STORE_DIR/r" -name '*.json' | wc -l)"
	cp -r a b
	rm -rf b/.corral
	: > "$RAN"
	_http_store_start "$PWD/nginx"
	run -0 --separate-stderr make -C b -j4 corral-run CORRAL_CACHE="$HTTP_STORE"
	_http_store_stop "$PWD/nginx"
	assert_equal 0 "$(ran_count)"
	assert_json '.successes == 20 and .missing == 0 and .duplicates == 0' b/.corral/summary.json
	run -0 jq -rs 'map(select(.cached)) | length' b/.corral/successes.jsonl
	assert_output 20
}

@test "cache: an HTTP store that is not there, or is stopped mid-run, leaves the run uncached, said once, and the run passes" {
	# nothing listens: every agent finds out, the run says it once
	project a 12 "CORRAL_CACHE = http://127.0.0.1:9/corral"
	run -0 --separate-stderr make -C a -j4 corral-run
	assert_equal 12 "$(ran_count)"
	assert_equal 1 "$(grep -c "the cache 'http://127.0.0.1:9/corral' cannot be used" <<<"$stderr")"
	assert_json '.successes == 12' a/.corral/summary.json
	# the server goes away while the units run: the rest go on uncached
	_http_store_start "$PWD/nginx"
	project b 12 "CORRAL_CACHE = $HTTP_STORE" 'CORRAL_AGENTS = 1'
	sed -i 's|^CORRAL_CMD = .*|&; case "$$CORRAL_UNIT" in */u6.sh) kill -QUIT $$(cat '"$PWD"'/nginx/nginx.pid); sleep 0.5 ;; esac|' b/Makefile
	: > "$RAN"
	run -0 --separate-stderr make -C b corral-run
	_http_store_stop "$PWD/nginx"
	assert_equal 12 "$(ran_count)"
	assert_equal 1 "$(grep -c "the cache '$HTTP_STORE' cannot be used" <<<"$stderr")"
	assert_json '.successes == 12 and .failures == 0' b/.corral/summary.json
	# what was stored before it went is whole
	local f
	for f in "$HTTP_STORE_DIR"/r/*/*.json; do
		jq -e '.corral_cache == "result"' "$f" >/dev/null || flunk "a torn entry: $f"
	done
}

@test "cache: corral-cache refuses an HTTP store's URL by name, exit 2: the server keeps it" {
	run -2 --separate-stderr corral-cache -d http://127.0.0.1:9/corral stats
	assert_equal "corral-cache: 'http://127.0.0.1:9/corral' is an HTTP store: corral-cache reads a directory (the local one, or a CORRAL_CACHE directory)" "$stderr"
}

@test "cache: the local store keeps each unit's last result only: a shared store keeps every state, the local one one entry a unit" {
	project proj 6 "CORRAL_CACHE = $PWD/store"
	local v
	for v in v2 v3 v4; do
		echo "$v" > proj/lib/shared
		run -0 make -C proj -j2 corral-run
	done
	assert_equal 6 "$(find proj/.corral/cache/r -name '*.json' | wc -l)"
	# the three units that read lib/shared were stored in three states
	assert_equal $((6 + 3 * 2)) "$(find store/r -name '*.json' | wc -l)"
	# an earlier state comes back: the shared store answers, locally too
	echo v2 > proj/lib/shared
	: > "$RAN"
	run -0 make -C proj -j2 corral-run
	assert_equal 0 "$(ran_count)"
	assert_equal 6 "$(find proj/.corral/cache/r -name '*.json' | wc -l)"
}

@test "cache: summary.json counts the cached units, corral-merge's line says how many, each one's progress line says cached, and the slowest units are those that ran" {
	project proj 6
	echo 'sleep 0.3' > proj/tests/u4.sh
	run -0 make -C proj corral-run
	assert_json '.cached == 0' proj/.corral/summary.json
	# one slice runs again (a plan from history holds to CORRAL_AGENTS);
	# only the units that read lib/shared miss
	echo v2 > proj/lib/shared
	rm proj/.corral/slices/*.pass
	: > "$RAN"
	run -0 --separate-stderr make -C proj corral-run CORRAL_AGENTS=1
	assert_equal 3 "$(ran_count)"
	assert_contains "$output" "merged 6 units from 1 agent: 6 passed, 0 failed; 3 cached"
	assert_contains "$output" "3 cached: passed before on the same inputs, not run again"
	assert_json '.cached == 3 and .successes == 6 and .attempts == 6' proj/.corral/summary.json
	# u4 took 0.3 s once; now its line gives no time but cached
	run -0 grep -E '^corral: \[[1-6]/6\] pass +cached  tests/u[456]\.sh$' <<< "$stderr"
	assert_equal 3 "${#lines[@]}"
	run -0 grep -cE '^corral: \[[1-6]/6\] pass +[0-9.]+s  tests/u[123]\.sh$' <<< "$stderr"
	assert_output 3
	# u4 took 0.3 s when it ran, but not now: the slowest are u1..u3
	run -0 corral-scoreboard -s 5 proj/.corral
	run -0 sed -n '/slowest units:/,$p' <<< "$output"
	refute_contains "$output" "tests/u4.sh"
	assert_equal 3 "$(grep -c 'tests/u[123].sh' <<< "$output")"
}

@test "cache: a cached unit is a moment in the trace, its event lasting 0 with args.cached, and a mark of its own on the page, not a bar of the time it once took" {
	project proj 4 'CORRAL_AGENTS = 1' "CORRAL_TRACE = $PWD/trace.json" "CORRAL_HTML = $PWD/page.html"
	echo 'sleep 0.3' > proj/tests/u4.sh
	run -0 make -C proj corral-run
	local first
	first=$(jq -r 'select(.unit == "tests/u4.sh") | .run' proj/.corral/successes.jsonl)
	assert_json '[.traceEvents[] | select(.cat == "unit" and .name == "tests/u4.sh") | .dur >= 300000 and (.args | has("cached") | not)] == [true]' trace.json
	grep -q '<rect class="bar pass" [^>]*data-unit="tests/u4.sh"' page.html
	rm proj/.corral/slices/*.pass
	: > "$RAN"
	run -0 make -C proj corral-run
	assert_equal 0 "$(ran_count)"
	assert_json '[.traceEvents[] | select(.cat == "unit")] | length == 4 and all(.dur == 0 and .args.cached == true)' trace.json
	run -0 jq -c --arg first "$first" '[.traceEvents[] | select(.name == "tests/u4.sh") |
		.args.cached_run == $first and .args.cached_duration_ms >= 300 and .args.status == "pass"]' trace.json
	assert_output "[true]"
	# the page: four cached marks, none a bar of a status; in the legend
	# and the counts; nothing ran, so no attempt, no slowest unit
	assert_equal 4 "$(grep -c '<rect class="bar cached" x="[0-9.]*" y="[0-9]*" width="4.00"' page.html)"
	run -1 grep -c '<rect class="bar pass"' page.html
	run -0 grep -o '<rect class="bar cached" [^>]*data-unit="tests/u4.sh"><title>[^<]*' <(tr '\n' ' ' < page.html)
	assert_contains "$output" "cached: pass (exit 0), not run again; it took "
	assert_contains "$output" " in run $first"
	grep -q '<i class="cached"></i>cached' page.html
	grep -q '4 cached, not run again</span><span>4 attempts</span>' page.html
	run -0 sh -c 'xmllint --html --xpath "count(//h2[@id=\"slowest\"]/following-sibling::table[1]//tr)" page.html 2>/dev/null'
	assert_output 1
}

@test "cache: a CORRAL_CACHE of a scheme but http:// and https://, and a CORRAL_CACHE_VERIFY above 100, are refused by the settings table in one line naming the knob, before anything runs" {
	local kv
	project proj 2
	for kv in 'CORRAL_CACHE=ftp://host/cache|one path or http:// or https:// URL without spaces' \
		'CORRAL_CACHE=S3+x.y://bucket|one path or http:// or https:// URL without spaces' \
		'CORRAL_CACHE_VERIFY=101|a whole number from 0 to 100 (a percent)' \
		'CORRAL_CACHE_VERIFY=99999999999999999999|a whole number from 0 to 100 (a percent)'; do
		set -- "${kv%%|*}" "${kv#*|}"
		run -2 --separate-stderr make -C proj corral-run "$1"
		assert_equal "corral: ${1%%=*} is '${1#*=}'; it must be $2" "$(grep '^corral:' <<< "$stderr")"
		# beside it only make's own line for the target
		assert_equal 1 "$(grep -vc '^make: \*\*\* \[.*corral-run\] Error 2$' <<< "$stderr")"
		assert_no_file proj/.corral
		assert_equal 0 "$(ran_count)"
	done
	# what is not digits at all corral.mk refuses as it reads the
	# makefile, in the same words
	run -2 --separate-stderr make -C proj corral-run CORRAL_CACHE_VERIFY=2%
	assert_contains "$stderr" "*** corral: CORRAL_CACHE_VERIFY is '2%'; it must be a whole number from 0 to 100 (a percent).  Stop."
	assert_no_file proj/.corral
	# not made a directory of the project named 'ftp:'
	run -0 find proj -name '*:*'
	assert_output ""
	# the bounds, a leading zero, an https:// URL and a path with a colon are taken
	run -0 make -C proj corral-run CORRAL_CACHE_VERIFY=100
	run -0 make -C proj -B corral-run CORRAL_CACHE_VERIFY=0
	run -0 make -C proj -B corral-run CORRAL_CACHE_VERIFY=007 CORRAL_CACHE=store:a/b://c
	assert_file_exists proj/store:a/b:/c
	run -0 make -C proj -B corral-run CORRAL_CACHE=https://127.0.0.1:9/cache
	assert_contains "$output" "going on uncached"
}
