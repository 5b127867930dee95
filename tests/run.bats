#!/usr/bin/env bats
# run.bats -- corral run is make corral-run with an exit status a CI can
# read: 0 every unit passed, 1 units failed or the result is incomplete,
# 2 the run could not happen (usage, the lock, a bad setting).
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
	_corral_tmpdir
	_corral_proj
	_corral_project ok-1 ok-2 FAIL-3 <<'EOF2'
CORRAL_CMD = case "$$CORRAL_UNIT" in FAIL*) [ -n "$$PASS_ALL" ] || exit 1 ;; esac
# the units' result hangs on PASS_ALL: it joins their cache key
CORRAL_CACHE_ENV = PASS_ALL
EOF2
}

@test "run: -h and --help print usage to stdout, exit 0; every other argument is make's" {
	assert_help "usage: corral-run [MAKE-ARG...]" corral run -h
	run -0 --separate-stderr corral run --help
	assert_equal "usage: corral-run [MAKE-ARG...]" "${lines[0]}"
}

@test "run: every unit passed exits 0; units that failed exit 1, with the result written as make corral-run writes it" {
	PASS_ALL=1 run -0 --separate-stderr corral run -C proj -j2
	assert_json '.successes == 3' proj/.corral/summary.json
	run -1 --separate-stderr corral run -C proj -j2 -B
	assert_json '.failures == 1 and .successes == 2' proj/.corral/summary.json
	assert_contains "$output" "1 failure"
	# make itself says 2 for the same run
	run -2 --separate-stderr make -C proj -j2 corral-run
}

@test "run: another run holding the lock, a malformed CORRAL_SHARD and a bad knob exit 2, not 1, though old failures are on file" {
	run -1 --separate-stderr corral run -C proj -j2 -B
	run -2 --separate-stderr corral run -C proj CORRAL_SHARD=5/3
	assert_contains "$stderr" "corral-run: make corral-run could not run; no verdict"
	run -2 --separate-stderr corral run -C proj CORRAL_RETRIES=many
	mkfifo go
	corral-lock -w 0 proj/.corral sh -c 'cat go > /dev/null' 3>&- &
	wait_for test -e proj/.corral/.lock
	sleep 0.2
	CORRAL_WAIT=0 run -2 --separate-stderr corral run -C proj
	echo > go
	wait
	assert_contains "$stderr" "no verdict"
}

@test "run: an incomplete result (a unit never reported) exits 1" {
	run -1 --separate-stderr corral run -C proj -j2 CORRAL_CMD='case $$CORRAL_UNIT in FAIL*) kill -9 $$PPID ;; esac'
	assert_json '.missing >= 1 or .failures >= 1' proj/.corral/summary.json
}

@test "run: a unit's own corral.mk project does not answer for the run: the verdict is the outer run's" {
	mkdir proj/inner
	printf '%s\n' 'CORRAL_UNITS = x' 'CORRAL_CMD = true' "include $CORRAL_ROOT/corral.mk" > proj/inner/Makefile
	# every unit runs the inner project, which passes; FAIL-3 then fails
	run -1 --separate-stderr corral run -C proj -j2 CORRAL_PARTS=inner \
		CORRAL_CMD='make -C inner corral-run > inner.log 2>&1 || exit 3; case $$CORRAL_UNIT in FAIL*) exit 1 ;; esac'
	run -0 jq -r '[.unit, .exit] | join(" ")' proj/.corral/failures.jsonl
	assert_output "FAIL-3 1"
}
