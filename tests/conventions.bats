#!/usr/bin/env bats
# conventions.bats -- what users of make and of test runners expect of
# corral.mk: the includer's default goal, make -s and V=1, one line of
# make's error for a failed run, CORRAL_SHELL, skips, halting, subsets,
# the slowest units, an empty population and the progress total; and the
# source's own: the library never exits, merge/ imports nothing of agent/.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
	_corral_proj
}

# project UNIT...: each unit records that it ran, then fails when its
# name holds FAIL and exits 77 when it holds SKIP.
project() {
	_corral_project "$@" <<EOF
CORRAL_CMD = printf '%s\\n' "\$\$CORRAL_UNIT" >> "\$\$RAN"; \
	case "\$\$CORRAL_UNIT" in *FAIL*) echo "bad \$\$CORRAL_UNIT" >&2; exit 1 ;; \
	*SKIP*) exit 77 ;; esac
EOF
}

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

@test "conventions: make -s prints no PLAN, SLICE or MERGE line, no plan note and no progress; the summary and errors stay" {
	project ok-1 FAIL-2 ok-3
	run -2 --separate-stderr make -s -C proj -j2 corral-run
	refute_contains "$output" "  PLAN "
	refute_contains "$output" "  SLICE "
	refute_contains "$output" "  MERGE "
	refute_contains "$stderr" "corral: ["
	refute_contains "$stderr" "corral-split:"
	assert_contains "$output" "merged 3 units from 3 agents: 2 passed, 1 failed"
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
	assert_contains "$stderr" "corral-split: weighted plan from history: 3 units"
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
	run -2 --separate-stderr make --no-print-directory -C proj -j2 corral-run
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
	run -2 --separate-stderr make --no-print-directory -C proj -j2 corral-run
	assert_contains "$output" "merged 3 units from 3 agents: 1 passed, 1 skipped, 1 failed"
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
	run -2 --separate-stderr make --no-print-directory -C proj -j2 corral-run
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

@test "conventions: exit 99 is a hard error, as automake's: status error in failures.jsonl and an <error> in JUnit; CORRAL_ERROR_CODES changes which" {
	_corral_project ok-1 ERR-2 <<'EOF'
CORRAL_CMD = case "$$CORRAL_UNIT" in ERR*) echo "no database" >&2; exit 99 ;; esac
CORRAL_JUNIT = junit.xml
EOF
	run -2 --separate-stderr make --no-print-directory -C proj -j2 corral-run
	run -0 jq -c 'select(.unit == "ERR-2") | [.status, .ok, .exit, .note]' proj/.corral/failures.jsonl
	assert_output '["error",false,99,"ERROR: exit 99: no database"]'
	run -0 xmllint --xpath 'count(//testcase[@name="ERR-2"]/error)' proj/junit.xml
	assert_output 1
	run -2 --separate-stderr make -C proj -B -j2 corral-run CORRAL_ERROR_CODES=
	run -0 jq -r 'select(.unit == "ERR-2") | .status' proj/.corral/failures.jsonl
	assert_output fail
	run -2 --separate-stderr make -C proj corral-run CORRAL_ERROR_CODES=x
	assert_contains "$stderr" "corral: CORRAL_ERROR_CODES is 'x'; it must be exit codes separated by commas or spaces"
}

@test "conventions: TAP is taken at its word, as prove takes it: a unit that exits 0 after not ok, a short plan or Bail out! fails, the note naming why; CORRAL_VERDICT=exit trusts the exit status alone" {
	_corral_project notok short bail fine <<'EOF'
CORRAL_CMD = case "$$CORRAL_UNIT" in \
	notok) printf '1..2\nok 1 - shown\nnot ok 2 - hidden\n' ;; \
	short) printf '1..3\nok 1 - one\n' ;; \
	bail) printf '1..2\nok 1 - one\nBail out! no database\n' ;; \
	fine) printf '1..1\nok 1\n' ;; esac
CORRAL_JUNIT = junit.xml
EOF
	run -2 --separate-stderr make --no-print-directory -C proj -j2 corral-run
	run -0 jq -r '[.unit, .status, .note] | join("|")' proj/.corral/failures.jsonl
	assert_equal "bail|fail|FAIL: TAP: Bail out! no database
notok|fail|FAIL: TAP: not ok 2 - hidden
short|fail|FAIL: TAP: planned 3, ran 1" "$(sort <<<"$output")"
	run -0 jq -r '.unit' proj/.corral/successes.jsonl
	assert_output fine
	assert_json '.failures == 3 and .successes == 1' proj/.corral/summary.json
	# the JUnit agrees with the record, and a bare "ok 1" has a name
	run -0 xmllint --xpath 'count(//testsuite[@name="notok"]//failure)' proj/junit.xml
	[ "$output" -ge 1 ] || flunk "no failure for notok"
	run -0 xmllint --xpath 'string(//testcase[@classname="fine"]/@name)' proj/junit.xml
	assert_output "test 1"
	run -0 --separate-stderr make -C proj -j2 corral-run CORRAL_VERDICT=exit
	assert_json '.failures == 0 and .successes == 4' proj/.corral/summary.json
	run -2 --separate-stderr make -C proj corral-run CORRAL_VERDICT=prove
	assert_contains "$stderr" "corral: CORRAL_VERDICT is 'prove'; it must be tap or exit"
}

@test "conventions: each unit gets an empty TMPDIR (and TMP, TEMP) of its own, outside CORRAL_OUT and removed after it, so two suites that keep scratch in one fixed place under TMPDIR do not meet; CORRAL_TMP=shared shares it" {
	mkdir sync
	export SYNC=$PWD/sync
	# the shape of ruby-build's helper: a fixed directory under TMPDIR,
	# made in setup and removed in teardown; both units hold it at once
	_corral_project one two <<'EOF'
CORRAL_CMD = d=$${TMPDIR:-/tmp}/fixed-scratch; mkdir "$$d"; st=$$?; \
	touch "$$SYNC/$$CORRAL_UNIT"; i=0; \
	while [ ! -e "$$SYNC/one" ] || [ ! -e "$$SYNC/two" ]; do \
	i=$$((i + 1)); [ $$i -lt 200 ] || exit 3; sleep 0.05; done; \
	printf '%s %s %s\n' "$$TMPDIR" "$$TMP" "$$TEMP" >> "$$RAN"; \
	ls -A "$$d" > "$$RAN.$$CORRAL_UNIT"; [ $$st -eq 0 ] && rmdir "$$d"
EOF
	export TMPDIR=$BATS_TEST_TMPDIR/tmp
	mkdir -p "$TMPDIR"
	run -0 --separate-stderr make -C proj -j2 corral-run
	assert_json '.successes == 2' proj/.corral/summary.json
	# each its own, the same in all three names, outside CORRAL_OUT, gone
	while read -r t tmp temp; do
		[ "$t" = "$tmp" ] && [ "$t" = "$temp" ] || flunk "TMPDIR $t, TMP $tmp, TEMP $temp"
		[[ $t != "$PWD/proj/.corral"* ]] || flunk "$t is in CORRAL_OUT"
		[ ! -e "$t" ] || flunk "$t is still there"
	done < "$RAN"
	[ "$(cut -d' ' -f1 "$RAN" | sort -u | wc -l)" -eq 2 ] || flunk "one TMPDIR for both: $(cat "$RAN")"
	[ -z "$(cat "$RAN.one" "$RAN.two")" ] || flunk "a TMPDIR was not empty"
	# shared: the second mkdir finds the first's directory
	rm -f sync/* "$RAN"
	run -2 --separate-stderr make -C proj -B -j2 corral-run CORRAL_TMP=shared
	assert_json '.failures == 1 and .successes == 1' proj/.corral/summary.json
}

teardown() {
	[ -z "${OUTSIDE:-}" ] || rm -rf "$OUTSIDE"
	[ -z "${FIXED:-}" ] || rm -f "$FIXED"
}

# private_project: two units at once, each writing its own unit name into
# one fixed absolute path /tmp/NAME (TMPDIR ignored) and reading it back
# once both have written, with its /proc/self/ns/mnt beside it in $RAN.
# What they share goes in OUTSIDE, out of /tmp (which a private /tmp
# hides, bats' own directories with it).
private_project() {
	OUTSIDE=$(mktemp -d /var/tmp/corral-test.XXXXXX)
	mkdir "$OUTSIDE/sync"
	export SYNC=$OUTSIDE/sync RAN=$OUTSIDE/ran
	export FIXED=/tmp/corral-private-probe.$$.$BATS_TEST_NUMBER
	: > "$RAN"
	_corral_project one two <<'EOF'
CORRAL_CMD = printf '%s\n' "$$CORRAL_UNIT" > "$$FIXED"; \
	touch "$$SYNC/$$CORRAL_UNIT"; i=0; \
	while [ ! -e "$$SYNC/one" ] || [ ! -e "$$SYNC/two" ]; do \
	i=$$((i + 1)); [ $$i -lt 200 ] || exit 3; sleep 0.05; done; \
	printf '%s %s %s\n' "$$CORRAL_UNIT" "$$(readlink /proc/self/ns/mnt)" \
	"$$TMPDIR" >> "$$RAN"; [ "$$(cat "$$FIXED")" = "$$CORRAL_UNIT" ]
EOF
}

@test "conventions: CORRAL_TMP=private gives each unit a /tmp of its own in a mount namespace of its own: two units writing one fixed /tmp path at once do not meet, and the host's /tmp never sees it" {
	private_project
	run -0 --separate-stderr make -C proj -j2 corral-run CORRAL_TMP=private
	[ ! -e "$FIXED" ] || { rm -f "$FIXED"; flunk "$FIXED reached the host's /tmp"; }
	assert_json '.successes == 2' proj/.corral/summary.json
	local mine
	mine=$(readlink /proc/self/ns/mnt)
	while read -r unit ns tmp; do
		[ "$ns" != "$mine" ] || flunk "$unit ran in the test's mount namespace"
		[ "$tmp" = /tmp ] || flunk "$unit: TMPDIR $tmp"
	done < "$RAN"
	[ "$(wc -l < "$RAN")" -eq 2 ] || flunk "$(cat "$RAN")"
	[ "$(cut -d' ' -f2 "$RAN" | sort -u | wc -l)" -eq 2 ] || flunk "one namespace for both: $(cat "$RAN")"
	# dir: the same namespace as ours, and the second write wins for both
	rm -f "$SYNC"/* "$RAN"
	run -2 --separate-stderr make -C proj -B -j2 corral-run CORRAL_TMP=dir
	rm -f "$FIXED"
	assert_json '.failures == 1 and .successes == 1' proj/.corral/summary.json
	[ "$(cut -d' ' -f2 "$RAN" | sort -u)" = "$mine" ] || flunk "$(cat "$RAN")"
}

@test "conventions: CORRAL_TMP=private where the kernel refuses a mount namespace (no capability, no user mapping) stops the run before any unit, naming the knob" {
	private_project
	# only the agents in a user namespace without a mapping: no capability
	mkdir wrapbin
	ln -s "$CORRAL_TEST_BIN"/corral-* wrapbin/
	rm wrapbin/corral-run-slice
	printf '#!/bin/sh\nexec unshare --user %s "$@"\n' "$CORRAL_TEST_BIN/corral-run-slice" > wrapbin/corral-run-slice
	chmod +x wrapbin/corral-run-slice
	run -2 --separate-stderr make -C proj -j2 corral-run CORRAL_TMP=private CORRAL_BIN=$PWD/wrapbin
	assert_contains "$stderr" "corral-run-slice: CORRAL_TMP = private asked for, but the kernel refuses a unit a private /tmp here (Operation not permitted;"
	assert_json '.missing == 2 and .attempts == 0' proj/.corral/summary.json
	[ ! -s "$RAN" ] || flunk "a unit ran: $(cat "$RAN")"
	[ ! -e "$FIXED" ] || { rm -f "$FIXED"; flunk "$FIXED reached the host's /tmp"; }
}

@test "conventions: CORRAL_ONLY runs only the units matching its shell patterns, over the result so far, and plans nothing again" {
	project a1 a2 b1 'c d' FAIL-x
	run -2 --separate-stderr make --no-print-directory -C proj -j2 corral-run
	local plan
	plan=$(cat proj/.corral/plan.mk proj/.corral/slices/*.units | sha256sum)
	: > "$RAN"
	run -2 --separate-stderr make -C proj corral-run CORRAL_ONLY='a* c?d'
	# they passed on these inputs: the cache answers for each of them
	assert_equal "" "$(sort "$RAN")"
	run -0 sh -c "jq -r 'select(.cached) | .unit' proj/.corral/successes.jsonl | sort"
	assert_output "$(printf 'a1\na2\nc d')"
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
	run -2 --separate-stderr make --no-print-directory -C proj -j2 corral-run
	run -2 --separate-stderr make -C proj corral-rerun-failed
	run -2 --separate-stderr make -C proj corral-run CORRAL_ONLY=a
	assert_json '.attempts == 5' proj/.corral/summary.json
	: > "$RAN"
	run -2 --separate-stderr make --no-print-directory -C proj -j2 corral-run
	assert_contains "$output" "merged 3 units from 3 agents: 2 passed, 1 failed"
	refute_contains "$output" "attempts"
	assert_json '.attempts == 3 and .units == 3 and .successes == 2' proj/.corral/summary.json
	assert_no_file proj/.corral/rerun
	# what the layers ran is run again by the main layer, nothing else;
	# a passed on these inputs, so the cache answers for it
	run -0 sort "$RAN"
	assert_output FAIL-c
	run -0 jq -r 'select(.cached) | .unit' proj/.corral/successes.jsonl
	assert_output a
}

@test "conventions: CORRAL_HALT=2 starts no unit once 2 failed; the rest are not-run, noted as halted, counted as not run, and the result is complete" {
	# agent 0 has FAIL-1, FAIL-3 and u5; agent 1, which starts after it, the rest
	project FAIL-1 u2 FAIL-3 u4 u5 u6
	run -2 --separate-stderr make -C proj -j1 corral-run CORRAL_HALT=2 CORRAL_AGENTS=2 CORRAL_SPLIT=roundrobin
	assert_equal "$(printf 'FAIL-1\nFAIL-3')" "$(cat "$RAN")"
	assert_contains "$output" "merged 6 units from 2 agents: 0 passed, 2 failed, 4 not run"
	assert_json '.units == 6 and .merged == 6 and .missing == 0 and .failures == 6' proj/.corral/summary.json
	run -0 jq -r 'select(.status == "not-run") | .note' proj/.corral/failures.jsonl
	assert_equal 4 "${#lines[@]}"
	assert_equal "NOT-RUN: the run was halted once 2 units had failed" "$(printf '%s\n' "$output" | sort -u)"
	# without it every unit runs
	: > "$RAN"
	run -2 --separate-stderr make -C proj -j1 corral-run CORRAL_AGENTS=2
	assert_equal 6 "$(ran_count)"
	run -2 --separate-stderr make -C proj corral-run CORRAL_HALT=x
	assert_contains "$stderr" "corral: CORRAL_HALT is 'x'; it must be a number"
}

@test "conventions: the summary ends with the CORRAL_SLOWEST slowest units of the run, 5 by default, 0 none" {
	project u1 u2 u3 u4 u5 u6 u7
	cat >> proj/Makefile <<'EOF2'
CORRAL_CMD = case "$$CORRAL_UNIT" in u7) sleep 0.6 ;; u3) sleep 0.3 ;; esac
EOF2
	run -0 --separate-stderr make --no-print-directory -C proj -j2 corral-run
	assert_equal "  slowest units:" "${lines[${#lines[@]} - 6]}"
	assert_contains "${lines[${#lines[@]} - 5]}" "  u7"
	assert_contains "${lines[${#lines[@]} - 4]}" "  u3"
	run -0 --separate-stderr make --no-print-directory -C proj -B -j2 corral-run CORRAL_SLOWEST=1
	assert_equal "  slowest units:" "${lines[${#lines[@]} - 2]}"
	run -0 --separate-stderr make -C proj -B -j2 corral-run CORRAL_SLOWEST=0
	refute_contains "$output" "slowest"
	# a run that ran nothing has no slowest units
	run -0 --separate-stderr make --no-print-directory -C proj -j2 corral-run
	refute_contains "$output" "slowest"
}

@test "conventions: an empty population says so in one line and exits non-zero" {
	printf 'CORRAL_DISCOVER = true\nCORRAL_CMD = true\ninclude %s/corral.mk\n' "$CORRAL_ROOT" > proj/Makefile
	run -2 --separate-stderr make -C proj corral-run
	assert_stderr "$(printf '%s\n' "corral: no units: CORRAL_DISCOVER printed nothing" \
		"make: *** [$CORRAL_ROOT/corral.mk:$(grep -n '__corral_run_goal)$' "$CORRAL_ROOT/corral.mk" | cut -d: -f1): corral-run] Error 2")"
	refute_contains "$output" "COULD NOT TELL"
	: > proj/units.txt
	printf 'CORRAL_UNITS_FILE = units.txt\nCORRAL_CMD = true\ninclude %s/corral.mk\n' "$CORRAL_ROOT" > proj/Makefile
	run -2 --separate-stderr make -C proj corral-run
	assert_contains "$stderr" "corral: no units: CORRAL_UNITS_FILE '$PWD/proj/units.txt' is empty"
}

@test "conventions: the progress total is the run's from the first line, not the agents' started so far" {
	project u1 u2 u3 u4 u5 u6
	run -0 --separate-stderr make -C proj -j1 corral-run CORRAL_AGENTS=3
	assert_equal 6 "$(grep -c '^corral: \[[1-6]/6\] pass ' <<<"$stderr")"
	# a second run with one slice to run again counts that slice's units
	sed -i 's/^CORRAL_CMD = /&test ! -e "$$CORRAL_WORKDIR\/..\/..\/..\/redo" || sleep 0; /' proj/Makefile
	run -0 --separate-stderr make -C proj -j1 corral-run CORRAL_AGENTS=3
	assert_equal 6 "$(grep -c '^corral: \[[1-6]/6\] pass ' <<<"$stderr")"
	# (its units not in the local store: else the stores answer it
	# before any agent starts, and it shows no progress)
	rm -r proj/.corral/slices/1.pass proj/.corral/cache
	run -0 --separate-stderr make -C proj -j1 corral-run CORRAL_AGENTS=3
	assert_equal 2 "$(grep -c '^corral: \[[1-2]/2\] pass ' <<<"$stderr")"
}

@test "conventions: CORRAL_OUT gets a .gitignore holding * when corral makes it" {
	project a
	git init -q proj
	run -0 make -C proj corral-run
	assert_equal '*' "$(cat proj/.corral/.gitignore)"
	run -0 git -C proj status --porcelain --untracked-files=all
	refute_contains "$output" ".corral"
	# one the user changed is left alone
	echo '!keep' > proj/.corral/.gitignore
	run -0 make -C proj -B corral-run
	assert_equal '!keep' "$(cat proj/.corral/.gitignore)"
}

@test "conventions: on a terminal, the progress line of an interrupted run ends with a newline, once" {
	printf 'a\nb\n' > slice
	script -qfec "corral-run-slice -v -S out/live -c 'case \$CORRAL_UNIT in b) sleep 1000 ;; esac' -l out/logs 0 slice" /dev/null > ts.out 2>&1 3>&- &
	local i
	for i in $(seq 100); do
		grep -q '"unit":"b"' out/live/agent-0.status 2>/dev/null && break
		sleep 0.1
	done
	kill -TERM "$(head -1 out/live/agent-0.status | jq .pid)"
	wait
	assert_contains "$(cat ts.out)" "1/2 done (1 pass"
	assert_equal '0a' "$(tail -c 1 ts.out | od -An -tx1 | tr -d ' ')"
	assert_file_exists out/live/interrupted
}

# --- the source's own conventions -----------------------------------------

# src_code FILE...: each line of FILEs that holds code, as FILE:TEXT (the
# lines of comments left out)
src_code() {
	grep -H '' "$@" | grep -vE '^[^:]+:[[:space:]]*(/?\*|//)'
}

@test "conventions: the library never exits: no exit(, _exit( or corral_die in src/ but the _exit of a forked child (corral_child_exit, proc.c's vfork child)" {
	cd "$CORRAL_ROOT"
	run -0 src_code src/*.h src/*/*.[ch]
	run -0 grep -E '(^|[^[:alnum:]_])(exit|_exit|_Exit)[[:space:]]*\(|corral_die' <<<"$output"
	assert_output "$(printf '%s\n' 'src/base/err.c:	_exit(status);' \
		'src/base/proc.c:	_exit(127);')"
	# corral_child_exit is the one in err.c, and the library reaches
	# tools/ for nothing (what exits is there)
	run -0 grep -B7 '_exit(status);' src/base/err.c
	assert_contains "$output" "corral_child_exit(int status)"
	run -1 grep -rlE '#include "(\.\./)*(tools/)?tool/' src
}

@test "conventions: no module of merge/ or report/ includes a header of agent/, and report/ includes none of merge/'s" {
	cd "$CORRAL_ROOT"
	run grep -lE '#include "agent/' src/merge/* src/report/*
	assert_output ""
	run grep -lE '#include "merge/' src/report/*
	assert_output ""
}
