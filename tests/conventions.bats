#!/usr/bin/env bats
# conventions.bats -- what users of make and of test runners expect of
# corral.mk: the includer's default goal, make -s and V=1, one line of
# make's error for a failed run, CORRAL_SHELL, skips, halting, subsets,
# the slowest units, an empty population and the progress total.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
	mkdir -p proj
	RAN=$PWD/ran
	: > "$RAN"
	export RAN
}

# project UNIT...: each unit records that it ran, then fails when its
# name holds FAIL and exits 77 when it holds SKIP.
project() {
	printf '%s\n' "$@" > proj/units.txt
	cat > proj/Makefile <<EOF
CORRAL_UNITS_FILE = units.txt
CORRAL_CMD = printf '%s\\n' "\$\$CORRAL_UNIT" >> "\$\$RAN"; \
	case "\$\$CORRAL_UNIT" in *FAIL*) echo "bad \$\$CORRAL_UNIT" >&2; exit 1 ;; \
	*SKIP*) exit 77 ;; esac
include $CORRAL_ROOT/corral.mk
EOF
}

ran_count() { wc -l < "$RAN" | tr -d ' '; }

# make_errors TEXT: the lines of make's own errors in TEXT
make_errors() {
	printf '%s\n' "$1" | grep -E '^make(\[[0-9]+\])?: \*\*\*' || true
}

# --- make's conventions ---------------------------------------------------

@test "conventions: including corral.mk before the includer's first target, or after it, keeps the includer's default goal" {
	local m=$CORRAL_ROOT/corral.mk
	printf 'CORRAL_UNITS = a\nCORRAL_CMD = true\ninclude %s\nmine: ; @echo mine ran\n' "$m" > before.mk
	printf 'CORRAL_UNITS = a\nCORRAL_CMD = true\nmine: ; @echo mine ran\ninclude %s\n' "$m" > after.mk
	printf '.DEFAULT_GOAL := other\nCORRAL_UNITS = a\nCORRAL_CMD = true\ninclude %s\nmine: ; @echo mine ran\nother: ; @echo other ran\n' "$m" > set.mk
	run -0 --separate-stderr make -f before.mk
	assert_output "mine ran"
	run -0 --separate-stderr make -f after.mk
	assert_output "mine ran"
	run -0 --separate-stderr make -f set.mk
	assert_output "other ran"
	assert_no_file .corral
	# alone, corral.mk gives make no default goal at all
	printf 'CORRAL_UNITS = a\nCORRAL_CMD = true\ninclude %s\n' "$m" > alone.mk
	run -2 --separate-stderr make -f alone.mk
	assert_stderr "make: *** No targets.  Stop."
	assert_no_file .corral
}

@test "conventions: make -s prints no PLAN, SLICE or MERGE line and no progress; the summary and errors stay" {
	project ok-1 FAIL-2 ok-3
	run -2 --separate-stderr make -s -C proj -j2 corral-run
	refute_contains "$output" "  PLAN "
	refute_contains "$output" "  SLICE "
	refute_contains "$output" "  MERGE "
	refute_contains "$stderr" "corral: ["
	assert_contains "$output" "merged 3 units from 2 agents: 2 passed, 1 failed"
	assert_contains "$output" "FAIL-2  FAIL: exit 1: bad FAIL-2"
	assert_equal 1 "$(make_errors "$stderr" | wc -l)"
	run -2 --separate-stderr make -s -C proj corral-rerun-failed
	refute_contains "$output" "RERUN"
	assert_contains "$output" "FAIL-2  FAIL: exit 1: bad FAIL-2"
	# without -s the same steps are shown
	run -2 --separate-stderr make -C proj -B -j2 corral-run
	assert_contains "$output" "  PLAN "
	assert_contains "$output" "  SLICE "
	assert_contains "$stderr" "corral: ["
}

@test "conventions: V=1 shows every command, as CORRAL_V=1 does" {
	project a
	run -0 --separate-stderr make -C proj corral-run
	refute_contains "$output" "corral-run-slice "
	run -0 --separate-stderr make -C proj -B corral-run V=1
	assert_contains "$output" "corral-run-slice "
	refute_contains "$output" "  SLICE "
	run -0 --separate-stderr make -C proj -B corral-run CORRAL_V=1
	assert_contains "$output" "corral-run-slice "
	run -0 --separate-stderr make -C proj -B corral-run V=0
	refute_contains "$output" "corral-run-slice "
}

@test "conventions: a run with failures prints its summary and one line of make's error, naming corral-run, none naming the engine" {
	project ok-1 FAIL-2
	run -2 --separate-stderr make -C proj -j2 corral-run
	assert_contains "$output" "failed units:"
	run -0 make_errors "$stderr"
	assert_output "make: *** [$CORRAL_ROOT/corral.mk:$(grep -n '__corral_run_goal)$' "$CORRAL_ROOT/corral.mk" | cut -d: -f1): corral-run] Error 1"
	refute_contains "$stderr" "engine.mk"
	# the answer is the same through corral-merge and corral-rerun-failed
	run -2 --separate-stderr make -C proj corral-merge
	assert_equal 1 "$(make_errors "$stderr" | wc -l)"
	assert_contains "$stderr" "corral-merge] Error 1"
	run -2 --separate-stderr make -C proj corral-rerun-failed
	assert_equal 1 "$(make_errors "$stderr" | wc -l)"
	assert_contains "$stderr" "corral-rerun-failed] Error 1"
	refute_contains "$stderr" "engine.mk"
	# nothing to merge: the message and one line of make's error
	run -0 --separate-stderr make -C proj corral-clean
	run -2 --separate-stderr make -C proj corral-merge
	assert_contains "$stderr" "corral: nothing to merge in"
	assert_equal 1 "$(make_errors "$stderr" | wc -l)"
	refute_contains "$stderr" "engine.mk"
}

@test "conventions: CORRAL_SHELL runs CORRAL_CMD, /bin/sh by default; make's SHELL does not apply; changing it re-runs the slices" {
	project a
	cat >> proj/Makefile <<'EOF'
SHELL = /bin/bash
CORRAL_CMD = echo "$$CORRAL_UNIT" >> "$$RAN"; test -n "$$BASH_VERSION"
EOF
	run -2 --separate-stderr make -C proj corral-run
	assert_json '.status == "fail"' proj/.corral/failures.jsonl
	run -0 --separate-stderr make -C proj corral-run CORRAL_SHELL=bash
	assert_json '.status == "pass"' proj/.corral/successes.jsonl
	run -0 --separate-stderr make -C proj corral-run CORRAL_SHELL=/bin/bash
	assert_equal 3 "$(ran_count)"
	run -2 --separate-stderr make -C proj corral-run CORRAL_SHELL=/no/such/shell
	run -0 jq -r .note proj/.corral/failures.jsonl
	assert_output "ERROR: cannot start: No such file or directory"
	run -2 --separate-stderr make -C proj corral-run CORRAL_SHELL=
	assert_contains "$stderr" "*** corral: CORRAL_SHELL is ''; it must be one path without spaces"
}

# --- test-runner conventions ----------------------------------------------

@test "conventions: exit 77 is a skip: status skip in successes.jsonl, counted in the summary, never re-run by corral-rerun-failed" {
	project ok-1 SKIP-2 FAIL-3
	run -2 --separate-stderr make -C proj -j2 corral-run
	assert_contains "$output" "merged 3 units from 2 agents: 1 passed, 1 skipped, 1 failed"
	assert_contains "$output" "3 units  ->  2 successes, 1 failure"
	assert_contains "$output" "SKIP             1"
	run -0 jq -c 'select(.unit == "SKIP-2") | [.status, .ok, .exit, .note]' proj/.corral/successes.jsonl
	assert_output '["skip",true,77,"SKIP: exit 77"]'
	assert_json '.by_status.skip == 1 and .failures == 1' proj/.corral/summary.json
	: > "$RAN"
	run -2 --separate-stderr make -C proj corral-rerun-failed
	assert_equal FAIL-3 "$(cat "$RAN")"
	# a second run re-runs the slice that failed, not the one that skipped
	: > "$RAN"
	run -2 --separate-stderr make -C proj -j2 corral-run
	assert_equal FAIL-3 "$(grep -v ok-1 "$RAN")"
}

@test "conventions: CORRAL_SKIP_CODES changes which exit codes are skips; empty: none" {
	project ok-1 SKIP-2
	run -2 --separate-stderr make -C proj -j2 corral-run CORRAL_SKIP_CODES=
	run -0 jq -r 'select(.unit == "SKIP-2") | .status' proj/.corral/failures.jsonl
	assert_output fail
	sed -i 's/exit 77/exit 3/' proj/Makefile
	run -0 --separate-stderr make -C proj -B -j2 corral-run CORRAL_SKIP_CODES='3, 4'
	run -0 jq -r 'select(.unit == "SKIP-2") | .status' proj/.corral/successes.jsonl
	assert_output skip
	run -2 --separate-stderr make -C proj corral-run CORRAL_SKIP_CODES=x
	assert_contains "$stderr" "corral: CORRAL_SKIP_CODES is 'x'; it must be exit codes separated by commas or spaces"
}

@test "conventions: CORRAL_ONLY runs only the units matching its shell patterns, over the result so far, and plans nothing again" {
	project a1 a2 b1 'c d' FAIL-x
	run -2 --separate-stderr make -C proj -j2 corral-run
	local plan
	plan=$(cat proj/.corral/plan.mk proj/.corral/slices/*.units | sha256sum)
	: > "$RAN"
	run -2 --separate-stderr make -C proj corral-run CORRAL_ONLY='a* c?d'
	assert_equal "$(printf 'a1\na2\nc d')" "$(sort "$RAN")"
	assert_json '.units == 5 and .successes == 4 and .failures == 1 and .missing == 0' proj/.corral/summary.json
	run -0 jq -r .unit proj/.corral/failures.jsonl
	assert_output FAIL-x
	assert_equal "$plan" "$(cat proj/.corral/plan.mk proj/.corral/slices/*.units | sha256sum)"
	# the others keep their result; the matched ones have the new run's
	run -0 jq -r 'select(.unit == "b1" or .unit == "a1") | .run' proj/.corral/successes.jsonl
	assert_equal 2 "$(printf '%s\n' "$output" | sort -u | wc -l)"
	run -2 --separate-stderr make -C proj corral-run CORRAL_ONLY=zz
	assert_contains "$stderr" "corral: no unit matches CORRAL_ONLY 'zz'"
}

@test "conventions: after a whole corral-run the layers of corral-rerun-failed and CORRAL_ONLY no longer count in the summary" {
	project a b FAIL-c
	run -2 --separate-stderr make -C proj -j2 corral-run
	run -2 --separate-stderr make -C proj corral-rerun-failed
	run -2 --separate-stderr make -C proj corral-run CORRAL_ONLY=a
	assert_json '.attempts == 5' proj/.corral/summary.json
	: > "$RAN"
	run -2 --separate-stderr make -C proj -j2 corral-run
	assert_contains "$output" "merged 3 units from 2 agents: 2 passed, 1 failed"
	refute_contains "$output" "attempts"
	assert_json '.attempts == 3 and .units == 3 and .successes == 2' proj/.corral/summary.json
	assert_no_file proj/.corral/rerun
	# what the layers ran is run again by the main layer, nothing else
	run -0 sort "$RAN"
	assert_output "$(printf 'FAIL-c\na')"
}
