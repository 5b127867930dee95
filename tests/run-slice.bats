#!/usr/bin/env bats
# run-slice.bats -- corral-run-slice runs one agent's slice in a private
# clone and leaves one record per unit in LOGDIR/agent-AGENT.jsonl, which
# appears only when the whole slice ran.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
	# Clones go under $TMPDIR by default; keep them inside the test.
	_corral_tmpdir
	export OUT=$PWD
	mkdir -p src/dir
	printf 'alpha\n' > src/a.txt
	printf 'beta\n' > src/dir/b.txt
	printf 'gamma\n' > src/c.txt
}

USAGE='usage: corral-run-slice [-0bFhkMQUvW] [-A HISTORY] [-a ARG] [-B CODES] [-C SRC] [-D STAMP] [-d DEADLINE] [-E NAMES] [-e ESTIMATES] [-f PATTERN] [-G PID] [-g GRACE] [-H COUNT] [-I PATTERN] [-i INPUTS] [-J JUNIT] [-j WORK] [-K CODES] [-L LIMIT] [-m HOST] [-N CODES] [-O STORE] [-o MAX] [-p PART] [-P PARTSFILE] [-R RETRIES] [-r RUN] [-S STATEDIR] [-s SHELL] [-T SECS] [-t SECS] [-u STORE] [-V PERCENT] [-w WORKROOT] [-X SANDBOX] [-x EXCLUDE] [-Y SETTINGS] [-y NAMES] [-Z MEMO] [-z CMD] -c CMD -l LOGDIR AGENT SLICE
       corral-run-slice -q [options but -D, -e, -P] -c CMD -l LOGDIR AGENT SLICE [AGENT SLICE]...
       corral-run-slice -n -X SANDBOX [-a ARG]'
KEYS='["agent_id","unit","ok","note","at","status","exit","signal","duration_ms","attempt","run","output","inputs","host"]'

# units UNIT...: the slice file 'slice', one unit per line
units() {
	printf '%s\n' "$@" > slice
}

# failed CMD FILTER: the slice, run by agent K with CMD, exits 1; $output
# is then jq -cr FILTER over its records
failed() {
	run -1 corral-run-slice -c "$1" -l logs K slice
	run -0 jq -cr "$2" <(records logs/agent-K.jsonl)
}

# lines_at_least N FILE: FILE holds N complete lines or more
lines_at_least() {
	[ -f "$2" ] && [ "$(wc -l < "$2")" -ge "$1" ]
}

# A unit command that leaves a background process tagged with $TAG.
BG='sh -c "sleep 1000; : \"\$1\"" sh "$TAG" & '
# The same, deaf to SIGTERM.
BG_DEAF='sh -c "trap \"\" TERM; sleep 1000; : \"\$1\"" sh "$TAG" & '

# sleeper: $OUT/sleeper TAG says it runs ($OUT/ready-$CORRAL_UNIT), then
# sleeps as a perl process with TAG in its arguments.
sleeper() {
	cat > "$OUT/sleeper" <<-'EOF'
	#!/bin/sh
	: > "$OUT/ready-$CORRAL_UNIT"
	exec perl -e 'sleep 1000' "$1"
	EOF
	chmod +x "$OUT/sleeper"
}

# A unit waits until its sleeper runs.
READY='while [ ! -e "$OUT/ready-$CORRAL_UNIT" ]; do sleep 0.01; done'

# refute_process TAG: no live process has TAG in its arguments now; any
# that has is killed (by pid) before the test fails
refute_process() {
	local pids
	pids=$(pgrep -f -- "$1") || return 0
	kill -9 $pids
	flunk "still running with '$1' in its arguments: $pids"
}

# assert_out1 EXPECTED ARG...: corral-run-slice ARG... -l logs K slice
# passes, and its first unit printed EXPECTED
assert_out1() {
	local want=$1
	shift
	run -0 corral-run-slice "$@" -l logs K slice
	run -0 cat logs/agent-K/1.out
	assert_output "$want"
}

# ms_since START_NS: milliseconds since START_NS (from date +%s%N)
ms_since() {
	echo $(( ($(date +%s%N) - $1) / 1000000 ))
}

@test "run-slice: -h prints usage to stdout and exits 0" {
	assert_help "$USAGE" corral-run-slice -h
}

@test "run-slice: missing -c prints usage to stderr and exits 2" {
	units a
	assert_usage_error "$USAGE" corral-run-slice -l logs K slice
	assert_no_file logs
}

@test "run-slice: missing -l prints usage to stderr and exits 2" {
	units a
	assert_usage_error "$USAGE" corral-run-slice -c true K slice
}

@test "run-slice: a missing or an extra operand prints usage and exits 2" {
	units a
	assert_usage_error "$USAGE" corral-run-slice -c true -l logs K
	assert_usage_error "$USAGE" corral-run-slice -c true -l logs
	assert_usage_error "$USAGE" corral-run-slice -c true -l logs K slice x
	assert_no_file logs
}

@test "run-slice: -q takes AGENT SLICE pairs, and neither -D, -e nor -P (each slice's own files are beside it)" {
	units a
	assert_usage_error "$USAGE" corral-run-slice -q -O cache -c true -l logs K
	assert_usage_error "$USAGE" corral-run-slice -q -O cache -c true -l logs K slice L
	assert_usage_error "$USAGE" corral-run-slice -q -O cache -D stamp -c true -l logs K slice
	assert_usage_error "$USAGE" corral-run-slice -q -O cache -e est -c true -l logs K slice
	assert_usage_error "$USAGE" corral-run-slice -q -O cache -P parts -c true -l logs K slice
	assert_no_file logs
}

# answerable: s/0.units (a b) and s/1.units (a c); a and b are in the
# local store 'cache' (agent 0 ran them with $RUN_CMD), c is not.
RUN_CMD='echo "$CORRAL_UNIT" >> "$OUT/ran"'
answerable() {
	mkdir s
	printf '%s\n' a b > s/0.units
	printf '%s\n' a c > s/1.units
	run -0 corral-run-slice -O cache -C src -c "$RUN_CMD" -l logs 0 s/0.units
	rm -r logs ran
}

@test "run-slice: -q writes each slice whose every unit a store answers, log and stamp, as its agent would (no clone, no unit run), prints it, and leaves a slice with a miss without log, stamp or checkpoint" {
	answerable
	echo file > blocker
	run -0 --separate-stderr corral-run-slice -q -O cache -C src -w blocker \
		-r R2 -c "$RUN_CMD" -l logs 0 s/0.units 1 s/1.units
	assert_output "s/0.units"
	assert_stderr ""
	assert_no_file ran
	assert_file_exists s/0.pass
	assert_no_file s/1.pass
	assert_no_file logs/agent-1.jsonl
	assert_no_file logs/agent-1.jsonl.part
	# hits with no output need no outputs directory, and no checkpoint
	# was kept on the way
	assert_no_file logs/agent-0
	assert_no_file logs/agent-1
	assert_no_file logs/agent-0.jsonl.part
	run -0 tail -n 1 logs/agent-0.jsonl
	assert_contains "$output" '{"corral_seal":{"records":2,'
	run -0 jq -sc 'map([.agent_id, .unit, .run, (.cached != null)])' <(records logs/agent-0.jsonl)
	assert_output '[["0","a","R2",true],["0","b","R2",true]]'
	# its own agent runs the slice left, c alone (a is a hit)
	run -0 corral-run-slice -O cache -C src -c "$RUN_CMD" -l logs 1 s/1.units
	run -0 cat ran
	assert_output c
}

@test "run-slice: -q leaves a slice that has a checkpoint to its agent, which resumes it, and the checkpoint as it was" {
	answerable
	mkdir logs
	echo '{"partial":1}' > logs/agent-0.jsonl.part
	run -0 corral-run-slice -q -O cache -C src -c "$RUN_CMD" -l logs 0 s/0.units
	assert_output ""
	assert_no_file s/0.pass
	assert_no_file logs/agent-0.jsonl
	run -0 cat logs/agent-0.jsonl.part
	assert_output '{"partial":1}'
}

@test "run-slice: an unknown option prints usage and exits 2" {
	units a
	run -2 --separate-stderr corral-run-slice -Z -c true -l logs K slice
	assert_contains "$stderr" "$USAGE"
}

@test "run-slice: agent ids that would leave LOGDIR or hide are refused with exit 2" {
	local id
	units a
	for id in '' .hidden ../x 'a/b' 'a b' '..' 'é'; do
		run -2 --separate-stderr corral-run-slice -c true -l logs "$id" slice
		assert_stderr "corral-run-slice: agent id '$id' must be [A-Za-z0-9._-] and not start with '.'"
	done
	assert_no_file logs
	run -0 ls -A "$TMPDIR"
	assert_output ""
}

@test "run-slice: agent ids of letters, digits, '.', '_' and '-' are accepted" {
	units a
	run -0 --separate-stderr corral-run-slice -c true -l logs a.B_9-x slice
	assert_file_exists logs/agent-a.B_9-x.jsonl
}

@test "run-slice: a missing slice file is named and exits 2" {
	run -2 --separate-stderr corral-run-slice -c true -l logs K nope
	assert_stderr "corral-run-slice: cannot open 'nope': No such file or directory"
	assert_no_file logs
}

@test "run-slice: a passing unit is recorded as pass with exit 0, and nothing is printed" {
	units u1
	run -0 --separate-stderr corral-run-slice -r R1 -c 'echo hello' -l logs K slice
	assert_output ""
	assert_stderr ""
	run -0 jq -c 'del(.at, .duration_ms, .checkout)' <(records logs/agent-K.jsonl)
	assert_json_eq '{"agent_id":"K","unit":"u1","ok":true,"note":"PASS: exit 0","host":"'"$(hostname)"'",
		"status":"pass","exit":0,"signal":null,"attempt":1,"run":"R1",
		"output":"logs/agent-K/1.out","inputs":null}' "$output"
	run -0 cat logs/agent-K/1.out
	assert_output "hello"
}

@test "run-slice: inside a Slurm step a record names the node (SLURMD_NODENAME), not the host name; -m still wins, and an empty one is no node" {
	units u1
	SLURMD_NODENAME=n2 run -0 corral-run-slice -c true -l node K slice
	run -0 jq -r .host <(records node/agent-K.jsonl)
	assert_output n2
	SLURMD_NODENAME=n2 run -0 corral-run-slice -m H -c true -l given K slice
	run -0 jq -r .host <(records given/agent-K.jsonl)
	assert_output H
	SLURMD_NODENAME= run -0 corral-run-slice -c true -l empty K slice
	run -0 jq -r .host <(records empty/agent-K.jsonl)
	assert_output "$(hostname)"
}

@test "run-slice: records keep the five original fields first, then status, exit, signal, duration_ms, attempt, run, output, inputs, host" {
	units a b c
	run -1 corral-run-slice -c 'test "$CORRAL_UNIT" != b' -l logs K slice
	run -0 jq -cs '.[1:] | map(keys_unsorted) | unique' <(records logs/agent-K.jsonl)
	assert_output "[$KEYS]"
	# the agent's first record ends telling of its checkout
	run -0 jq -cs '.[0] | keys_unsorted' <(records logs/agent-K.jsonl)
	assert_output "${KEYS%]},\"checkout\"]"
	run -0 jq -cs . <(records logs/agent-K.jsonl)
	assert_json 'all(.at | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$"))'
	assert_json 'all(.duration_ms | type == "number" and . >= 0)'
	assert_json 'map(.ok) == [true, false, true]'
}

@test "run-slice: only the last record of a retried unit tells of the attempts before it, and only the first unit the agent finishes tells of its checkout" {
	units a b
	run -1 corral-run-slice -R 2 -c 'sleep 0.05; test "$CORRAL_UNIT" != b || exit 5' -l logs K slice
	run -0 jq -cs 'map(select(.unit == "b")) | map(.tries | length)' <(records logs/agent-K.jsonl)
	assert_output '[0,0,2]'
	run -0 jq -cs '.[-1].tries | map([.status, .exit, .duration_ms >= 50])' <(records logs/agent-K.jsonl)
	assert_output '[["fail",5,true],["fail",5,true]]'
	run -0 jq -cs '[.[-1].tries[].at, .[-1].at] | . == sort' <(records logs/agent-K.jsonl)
	assert_output true
	run -0 jq -cs 'map(.checkout | type)' <(records logs/agent-K.jsonl)
	assert_output '["object","null","null","null"]'
	# not on an attempt the merge drops: on the first unit's last record
	units b a
	rm -rf logs
	run -1 corral-run-slice -R 2 -c 'test "$CORRAL_UNIT" != b || exit 5' -l logs K slice
	run -0 jq -cs 'map(.checkout | type)' <(records logs/agent-K.jsonl)
	assert_output '["null","null","object","null"]'
	run -0 jq -cs '.[2].checkout | (.at | test("Z$")) and .duration_ms >= 0' <(records logs/agent-K.jsonl)
	assert_output true
}

@test "run-slice: a failing unit's note has its exit status and last output line; the agent exits 1" {
	units u1
	run -1 --separate-stderr corral-run-slice \
		-c 'echo first; echo "  the last words  " >&2; echo; echo "   "; exit 3' -l logs K slice
	assert_stderr ""
	run -0 jq -c '[.ok, .status, .exit, .signal, .note]' <(records logs/agent-K.jsonl)
	assert_output '[false,"fail",3,null,"FAIL: exit 3: the last words"]'
}

@test "run-slice: a failing unit without output has a bare FAIL note" {
	units u1
	failed 'exit 4' .note
	assert_output "FAIL: exit 4"
}

@test "run-slice: -D makes the stamp only when every unit passed, and removes an old one first" {
	units a b
	run -0 corral-run-slice -D stamp -c true -l logs K slice
	assert_file_exists stamp
	run -1 corral-run-slice -D stamp -c 'test "$CORRAL_UNIT" != b' -l logs K slice
	assert_no_file stamp
}

@test "run-slice: a long last line is cut to 200 bytes on a character boundary" {
	units u1
	failed 'printf x; i=0; while [ $i -lt 150 ]; do printf "\303\251"; i=$((i+1)); done; exit 1' .note
	local e99
	e99=$(printf 'é%.0s' $(seq 99))
	assert_output "FAIL: exit 1: x$e99..."
}

@test "run-slice: a failing unit's note quotes the last line of standard error, not a later line of standard output" {
	units u1
	failed 'echo "error: expected 3, got 4" >&2; echo "see https://example.org/wiki/SC1234"; exit 1' .note
	assert_output "FAIL: exit 1: error: expected 3, got 4"
	run -0 sort logs/agent-K/1.out
	assert_output "error: expected 3, got 4
see https://example.org/wiki/SC1234"
}

@test "run-slice: a failing unit's note names the failure as the tool printed it: pytest's FAILED line, a compiler's first error, a traceback's exception, go test's --- FAIL, make's ***, not the last line" {
	units pytest gcc py go mk
	failed 'case $CORRAL_UNIT in
	pytest) printf "tests/test_a.py F.\nFAILED tests/test_a.py::test_one - assert 1 == 2\n1 failed, 6 passed in 0.02s\n" ;;
	gcc) printf "x.c: In function f:\nx.c:3:5: error: expected ; before }\nx.c:9:1: error: later\n    3 | }\n      |     ^~~~\n" >&2 ;;
	py) printf "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n    raise KeyError(1)\nKeyError: 1\n\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call last):\n  File \"x.py\", line 3\nValueError: bad input\n" >&2 ;;
	go) printf "=== RUN   TestX\n--- FAIL: TestX (0.00s)\n    x_test.go:5: wrong\nFAIL\nFAIL\tpkg\t0.1s\n" ;;
	mk) printf "cc -c x.c\nmake: *** [Makefile:2: x.o] Error 1\n" >&2; printf "done\n" ;;
	esac; exit 1' .note
	assert_output "FAIL: exit 1: FAILED tests/test_a.py::test_one - assert 1 == 2
FAIL: exit 1: x.c:3:5: error: expected ; before }
FAIL: exit 1: ValueError: bad input
FAIL: exit 1: --- FAIL: TestX (0.00s)
FAIL: exit 1: make: *** [Makefile:2: x.o] Error 1"
}

@test "run-slice: -f PATTERN: the note quotes the first line that matches, before a TAP not ok line; a bad pattern is refused by name" {
	units u
	run -1 corral-run-slice -f '^BOOM [0-9]+' -c 'printf "1..1\nnot ok 1 - x\nBOOM 12 the cause\nBOOM 13 later\nlast\n"; exit 1' -l logs K slice
	run -0 jq -r .note <(records logs/agent-K.jsonl)
	assert_output "FAIL: exit 1: BOOM 12 the cause"
	run -2 --separate-stderr corral-run-slice -f 'a(' -c true -l logs2 K slice
	assert_contains "$stderr" "corral-run-slice: the note pattern 'a(' is no extended regular expression: "
}

@test "run-slice: a unit that prints TAP is noted with its first 'not ok' line, and its record counts the tests and names the failed ones; output without a plan is no TAP" {
	bats_file "$PWD/t.bats"
	units "$PWD/t.bats" plain
	run -1 corral-run-slice -c 'if [ "$CORRAL_UNIT" = plain ]; then echo "ok 1 looks like TAP"; echo "not ok 2 but is not"; echo done; exit 1; fi; '"'$PWD/bats-tap'"' "$CORRAL_UNIT"' -l logs K slice
	run -0 jq -sc '.[0] | [.note, .tests]' <(records logs/agent-K.jsonl)
	assert_json_eq '["FAIL: exit 1: not ok 2 second fails",
		{"total":4,"passed":1,"failed":2,"skipped":1,"planned":4,
		"failed_names":["second fails","fourth fails"]}]' "$output"
	run -0 jq -sc '.[1] | [.note, has("tests")]' <(records logs/agent-K.jsonl)
	assert_output '["FAIL: exit 1: done",false]'
}

# junit_note JUNIT CMD NOTE: the slice, run with -J JUNIT and CMD, fails,
# and its unit's note is NOTE
junit_note() {
	run -1 corral-run-slice -J "$1" -c "$2" -l logs K slice
	run -0 jq -r '.note' <(records logs/agent-K.jsonl)
	assert_output "$3"
}

@test "run-slice: -J: a unit's own JUnit (pytest --junitxml) gives its record's tests; a failed testcase fails a unit that exits 0, its note naming it, and the agent keeps a copy beside its output" {
	cp "$BATS_TEST_DIRNAME/fixtures/run-slice/pytest-junit.xml" src/fx.xml
	units 'tests/u 1'
	mkdir -p 'src/tests'
	run -1 corral-run-slice -C src -p fx.xml -p tests -J '$CORRAL_UNIT.xml' -c 'cp fx.xml "$CORRAL_UNIT.xml"' -l logs K slice
	run -0 jq -c '[.status, .note, .tests]' <(records logs/agent-K.jsonl)
	assert_json_eq '["fail", "FAIL: JUnit: tests.test_core.test_sub: assert -1 == 1",
		{"total":3,"passed":1,"failed":1,"skipped":1,"planned":3,
		"failed_names":["tests.test_core.test_sub"]}]' "$output"
	cmp src/fx.xml logs/agent-K/1.xml
	# ${CORRAL_UNIT} too; every test passing, the unit passes
	printf '%s' '<testsuites><testsuite name="pytest" tests="2">' \
		'<testcase classname="tests.test_core" name="test_add" time="0.001"/>' \
		'<testcase name="test_net"><skipped message="no network"/></testcase>' \
		'</testsuite></testsuites>' > src/pass.xml
	run -0 corral-run-slice -C src -p pass.xml -p tests -J '${CORRAL_UNIT}.xml' -c 'cp pass.xml "$CORRAL_UNIT.xml"' -l logs K slice
	run -0 jq -c '[.status, .tests.total, .tests.passed, .tests.skipped]' <(records logs/agent-K.jsonl)
	assert_output '["pass",2,1,1]'
}

@test "run-slice: -J: a JUnit file that is missing, not JUnit XML, or outside the clone makes a unit that exits 0 an error naming it; one the clone held before the unit ran is not read" {
	units u1
	cp "$BATS_TEST_DIRNAME/fixtures/run-slice/pytest-junit.xml" src/u1.xml
	run -1 corral-run-slice -C src -p u1.xml -J '$CORRAL_UNIT.xml' -c 'true' -l logs K slice
	run -0 jq -r '.status + " " + .note' <(records logs/agent-K.jsonl)
	assert_output "error ERROR: JUnit: cannot open 'u1.xml': No such file or directory"
	junit_note '$CORRAL_UNIT.xml' 'echo "<testsuite><testcase" > u1.xml' \
		"ERROR: JUnit: 'u1.xml': invalid XML at line 2"
	junit_note '$CORRAL_UNIT.xml' 'echo "<html/>" > u1.xml' \
		"ERROR: JUnit: 'u1.xml': no <testsuite> or <testsuites> root"
	junit_note '../$CORRAL_UNIT.xml' true \
		"ERROR: JUnit: CORRAL_UNIT_JUNIT '../u1.xml' leaves the tree"
	# a failed testcase without a name or a message is still named
	junit_note '$CORRAL_UNIT.xml' 'echo "<testsuite><testcase><error/></testcase></testsuite>" > u1.xml' \
		'FAIL: JUnit: testcase 1'
	# a unit that fails says so by its exit, whatever its JUnit
	junit_note '$CORRAL_UNIT.xml' 'exit 3' 'FAIL: exit 3'
}

@test "run-slice: -J: a link a unit plants as a directory of the JUnit path (out -> a directory outside the clone) is followed neither to read the file nor to remove the last one; the note names the path" {
	units u1 u2
	mkdir outside
	printf '%s' '<testsuite name="t" tests="1"><testcase name="fine"/></testsuite>' > outside/u1.xml
	cp outside/u1.xml outside/u2.xml
	run -1 corral-run-slice -J 'out/$CORRAL_UNIT.xml' -c "ln -sfn '$PWD/outside' out" -l logs K slice
	run -0 jq -r '.status + " " + .note' <(records logs/agent-K.jsonl)
	assert_output "error ERROR: JUnit: cannot open 'out/u1.xml': Not a directory
error ERROR: JUnit: cannot open 'out/u2.xml': Not a directory"
	[ -f outside/u1.xml ] && [ -f outside/u2.xml ] || flunk "a file outside the clone was removed: $(ls outside)"
	[ ! -e logs/agent-K/1.xml ] || flunk "the agent kept a copy of a file outside the clone"
}

@test "run-slice: -J: libxml2 prints nothing on the agent's stderr for a JUnit file whose bytes its encoding cannot convert" {
	units u1
	run -1 --separate-stderr corral-run-slice -J '$CORRAL_UNIT.xml' -c "cp '$BATS_TEST_DIRNAME/fixtures/run-slice/utf7-junit.xml' u1.xml" -l logs K slice
	assert_equal "$stderr" ''
	run -0 jq -r '.status' <(records logs/agent-K.jsonl)
	assert_output fail
}

@test "run-slice: -J: a testcase whose name holds line breaks (&#10;, &#13;) still gives a one-line note" {
	units u1
	junit_note '$CORRAL_UNIT.xml' 'echo "<testsuite><testcase classname=\"a&#10;b\" name=\"c&#13;d\"><failure message=\"x\"/></testcase></testsuite>" > u1.xml' \
		'FAIL: JUnit: a b.c d: x'
}

@test "run-slice: CORRAL_NOTE still wins over a TAP unit's first 'not ok' line" {
	bats_file "$PWD/t.bats"
	units "$PWD/t.bats"
	failed "'$PWD/bats-tap' \"\$CORRAL_UNIT\""'; st=$?; echo "MINE: said so" > "$CORRAL_NOTE"; exit $st' '[.note, .tests.failed]'
	assert_output '["MINE: said so",2]'
}

@test "run-slice: a TAP unit's tests are all counted even when -o cuts its output" {
	units u1
	run -1 corral-run-slice -o 1K -c 'echo 1..300; i=1; while [ $i -le 300 ]; do if [ $i = 250 ]; then echo "not ok $i number $i"; else echo "ok $i number $i"; fi; i=$((i+1)); done; exit 1' -l logs K slice
	run -0 jq -c '[.note, .tests.total, .tests.failed, .tests.failed_names]' <(records logs/agent-K.jsonl)
	assert_output '["FAIL: exit 1: not ok 250 number 250",300,1,["number 250"]]'
	grep -q 'bytes of output left out' logs/agent-K/1.out
}

@test "run-slice: a unit killed by a signal is recorded as a crash with the signal's name" {
	units u1
	failed 'echo going; kill -SEGV $$' '[.ok, .status, .exit, .signal, .note]'
	assert_output '[false,"crash",null,"SIGSEGV","CRASH: signal 11 (SIGSEGV)"]'
}

@test "run-slice: a unit that a shell reports killed by SIGSEGV or SIGABRT (exit 128 + N) is a crash naming the signal; exit 143 after SIGTERM stays a fail" {
	units SEGV ABRT TERM
	failed 'sh -c "kill -$CORRAL_UNIT \$\$"' '[.ok, .status, .exit, .signal, .note]'
	assert_equal '[false,"crash",139,"SIGSEGV","CRASH: signal 11 (SIGSEGV), reported by the shell as exit 139"]' "${lines[0]}"
	assert_equal '[false,"crash",134,"SIGABRT","CRASH: signal 6 (SIGABRT), reported by the shell as exit 134"]' "${lines[1]}"
	assert_contains "${lines[2]}" '[false,"fail",143,null,"FAIL: exit 143'
}

@test "run-slice: a crash behind the shell is retried like any failure, and -N names its exit code to stop that" {
	units SEGV ABRT
	run -1 corral-run-slice -R 1 -N 134 -c 'sh -c "kill -$CORRAL_UNIT \$\$"' -l logs K slice
	run -0 jq -c '[.unit, .attempt, .status]' <(records logs/agent-K.jsonl)
	assert_output "$(printf '%s\n' '["SEGV",1,"crash"]' '["SEGV",2,"crash"]' '["ABRT",1,"crash"]')"
}

@test "run-slice: a missing command is a fail with exit 127 and the shell's complaint" {
	units u1
	failed 'nosuchcmd' '[.ok, .status, .exit]'
	assert_output '[false,"fail",127]'
	run -0 jq -r .note <(records logs/agent-K.jsonl)
	assert_contains "$output" "FAIL: exit 127: "
	assert_contains "$output" "nosuchcmd: not found"
}

@test "run-slice: a unit printing 50 MB is recorded, its output kept whole" {
	units u1
	failed 'yes 0123456789abcdefghijklmnopqrstuvwxyz0123456789ab | head -c 50000000; echo; echo "the end"; exit 1' .note
	assert_output "FAIL: exit 1: the end"
	run -0 stat -c %s logs/agent-K/1.out
	assert_output "50000009"
}

@test "run-slice: pass, fail, crash, missing command and flood side by side each get their own record" {
	units pass fail crash missing flood pass2
	run -1 --separate-stderr corral-run-slice -c '
		case $CORRAL_UNIT in
		fail) echo broken; exit 3 ;;
		crash) kill -SEGV $$ ;;
		missing) nosuchcmd ;;
		flood) yes flood | head -c 20000000 ;;
		esac' -l logs K slice
	run -0 jq -c '[.unit, .status, .exit]' <(records logs/agent-K.jsonl)
	assert_output "$(printf '%s\n' '["pass","pass",0]' '["fail","fail",3]' \
		'["crash","crash",null]' '["missing","fail",127]' \
		'["flood","pass",0]' '["pass2","pass",0]')"
	run -0 jq -r .output <(records logs/agent-K.jsonl)
	assert_output "$(printf 'logs/agent-K/%s.out\n' 1 2 3 4 5 6)"
}

@test "run-slice: unit names with quotes, backslashes, tabs, control bytes, \$, % and UTF-8 round-trip exactly" {
	printf '%s\n' 'say "hi"' 'back\slash' "$(printf 'tab\there')" \
		"$(printf 'ctl\001\033[0m\177')" '$HOME' '100%' '%s%n' "it's" \
		'ünï/çødé ✓' ' lead and trail ' '`echo no`' > slice
	run -0 corral-run-slice -c 'printf "%s\n" "$CORRAL_UNIT"' -l logs K slice
	jq -r .unit <(records logs/agent-K.jsonl) > got
	run -0 cmp got slice
	# and the unit saw each name exactly in CORRAL_UNIT
	local n=0 unit
	while IFS= read -r unit; do
		n=$((n + 1))
		printf '%s\n' "$unit" > want
		cmp want "logs/agent-K/$n.out" || flunk "unit $n saw other bytes"
	done < slice
	assert_equal 11 "$n"
}

@test "run-slice: -0 reads NUL-separated units, so names may hold newlines" {
	printf 'one\ntwo\0three\0' > slice
	run -0 corral-run-slice -0 -c true -l logs K slice
	jq -j '.unit + "\u0000"' <(records logs/agent-K.jsonl) > got
	run -0 cmp got slice
}

@test "run-slice: a unit listed twice runs once, with a warning" {
	units a b a
	run -0 --separate-stderr corral-run-slice -c true -l logs K slice
	assert_stderr "corral-run-slice: unit 'a' is listed more than once; counted once"
	run -0 jq -r .unit <(records logs/agent-K.jsonl)
	assert_output "$(printf 'a\nb')"
}

@test "run-slice: the unit sees CORRAL_UNIT, _AGENT, _WORKDIR, _ATTEMPT, _RUN, _NOTE and the caller's environment" {
	units 'the unit'
	CORRAL_UNIT=stale KEEPME=kept run -0 corral-run-slice -r run-42 -c '
		printf "%s\n" "$CORRAL_UNIT" "$CORRAL_AGENT" "$CORRAL_WORKDIR" \
			"$(pwd -P)" "$CORRAL_ATTEMPT" "$CORRAL_RUN" "$CORRAL_NOTE" \
			"$KEEPME"' -l logs agent-7 slice
	run -0 cat logs/agent-agent-7/1.out
	local wd=${lines[2]}
	assert_equal "the unit" "${lines[0]}"
	assert_equal "agent-7" "${lines[1]}"
	assert_equal "$wd" "${lines[3]}"
	assert_contains "$wd" "$(cd "$TMPDIR" && pwd -P)/corral-agent-7."
	assert_equal "1" "${lines[4]}"
	assert_equal "run-42" "${lines[5]}"
	assert_equal "$(pwd -P)/logs/agent-agent-7/1.note" "${lines[6]}"
	assert_equal "kept" "${lines[7]}"
}

@test "run-slice: no __corral_* variable reaches a unit, and with -E no CORRAL_* one but the agent's and those -E names" {
	units a
	__corral_guard=1 __corral_lock=9 CORRAL_CMD=outer CORRAL_TIMEOUT=5 \
		CORRAL_MINE=mine MY_VAR=1 run -0 corral-run-slice -c 'env > "$OUT/e1"' -l logs K slice
	run -1 grep '^__corral_' e1
	run -0 grep -c '^CORRAL_CMD=outer$\|^CORRAL_TIMEOUT=5$\|^CORRAL_MINE=mine$\|^MY_VAR=1$' e1
	assert_output 4
	__corral_guard=1 CORRAL_CMD=outer CORRAL_TIMEOUT=5 CORRAL_MINE=mine \
		MY_VAR=1 run -0 corral-run-slice -E 'CORRAL_MINE CORRAL_ROOT CORRAL_TEST_BIN CORRAL_BIN' \
		-c 'env > "$OUT/e2"' -l logs2 K slice
	run -0 sh -c "sed -n 's/^\\(CORRAL_[A-Za-z0-9_]*\\)=.*/\\1/p' e2 | sort | tr '\n' ' '"
	assert_output "CORRAL_AGENT CORRAL_ATTEMPT CORRAL_BIN CORRAL_MINE CORRAL_NOTE CORRAL_ROOT CORRAL_RUN CORRAL_TEST_BIN CORRAL_UNIT CORRAL_WORKDIR "
	run -0 grep -c '^__corral_\|^MY_VAR=1$' e2
	assert_output 1
}

@test "run-slice: with -E, MAKEFLAGS loses every CORRAL_* and __corral_* assignment of make's command line, escaped spaces and backslashes kept apart" {
	units a
	MAKEFLAGS='w -j2 --jobserver-auth=3,4 -- CORRAL_UNITS=a\ b FOO=x\ CORRAL_Y=1 __corral_q=1 CORRAL_X=a\\ BAR=\\' \
		run -0 corral-run-slice -E '' -c 'printf "%s\n" "$MAKEFLAGS" > "$OUT/f1"' -l logs K slice
	run -0 cat f1
	assert_output 'w -j2 --jobserver-auth=3,4 -- FOO=x\ CORRAL_Y=1 BAR=\\'
	MAKEFLAGS=' -- CORRAL_UNITS=a CORRAL_CMD=b' run -0 corral-run-slice -E '' \
		-c 'printf "[%s]\n" "$MAKEFLAGS" > "$OUT/f2"' -l logs2 K slice
	run -0 cat f2
	assert_output '[]'
	MAKEFLAGS='-- CORRAL_UNITS=a' run -0 corral-run-slice \
		-c 'printf "[%s]\n" "$MAKEFLAGS" > "$OUT/f3"' -l logs3 K slice
	run -0 cat f3
	assert_output '[-- CORRAL_UNITS=a]'
}

@test "run-slice: the run id is -r, else \$CORRAL_RUN, else a fresh UTC time and pid" {
	units a
	CORRAL_RUN=from-env run -0 corral-run-slice -r from-flag -c true -l logs K slice
	run -0 jq -r .run <(records logs/agent-K.jsonl)
	assert_output "from-flag"
	CORRAL_RUN=from-env run -0 corral-run-slice -c true -l logs K slice
	run -0 jq -r .run <(records logs/agent-K.jsonl)
	assert_output "from-env"
	run -0 corral-run-slice -c 'echo "$CORRAL_RUN"' -l logs K slice
	run -0 jq -r .run <(records logs/agent-K.jsonl)
	[[ $output =~ ^[0-9]{8}T[0-9]{6}Z-[0-9]+$ ]] || flunk "run id '$output'"
	run -0 cat logs/agent-K/1.out
	[[ $output =~ ^[0-9]{8}T[0-9]{6}Z-[0-9]+$ ]] || flunk "unit saw '$output'"
}

@test "run-slice: a note the unit writes to CORRAL_NOTE replaces the generated one; ok still follows the exit" {
	units good bad quiet
	run -1 corral-run-slice -c '
		case $CORRAL_UNIT in
		good) printf "PASS: 12 checks\nsecond line\n" > "$CORRAL_NOTE" ;;
		bad) echo "GAP: no test for x" > "$CORRAL_NOTE"; exit 1 ;;
		quiet) : > "$CORRAL_NOTE"; exit 2 ;;
		esac' -l logs K slice
	run -0 jq -c '[.ok, .status, .note]' <(records logs/agent-K.jsonl)
	assert_output "$(printf '%s\n' '[true,"pass","PASS: 12 checks"]' \
		'[false,"fail","GAP: no test for x"]' '[false,"fail","FAIL: exit 2"]')"
}

@test "run-slice: the CORRAL_NOTE file lies outside the clone" {
	units a
	run -0 corral-run-slice -c 'case $CORRAL_NOTE in "$CORRAL_WORKDIR"/*) exit 1 ;; esac' -l logs K slice
	assert_json '.ok' <(records logs/agent-K.jsonl)
}

@test "run-slice: a FIFO at CORRAL_NOTE does not hang the agent" {
	units a
	run -1 timeout 20 corral-run-slice -c 'mkfifo "$CORRAL_NOTE"; exit 1' -l logs K slice
	run -0 jq -r .note <(records logs/agent-K.jsonl)
	assert_output "FAIL: exit 1"
}

@test "run-slice: stdin of a unit is /dev/null" {
	units a
	run -0 corral-run-slice -c 'readlink /proc/self/fd/0; cat' -l logs K slice < /dev/zero
	run -0 cat logs/agent-K/1.out
	assert_output "/dev/null"
}

@test "run-slice: stdout and stderr of a unit go to its own output file" {
	units a b
	run -0 --separate-stderr corral-run-slice -c 'echo "out $CORRAL_UNIT"; echo "err $CORRAL_UNIT" >&2' -l logs K slice
	assert_output ""
	assert_stderr ""
	run -0 cat logs/agent-K/2.out
	assert_output "$(printf 'out b\nerr b')"
}

@test "run-slice: the working directory is the clone and holds only the parts and the clone mark" {
	units a
	run -0 corral-run-slice -C src -p a.txt -p dir -c 'find . | LC_ALL=C sort' -l logs K slice
	run -0 cat logs/agent-K/1.out
	assert_output "$(printf '%s\n' . ./.corral-clone ./a.txt ./dir ./dir/b.txt)"
}

@test "run-slice: parts come from -p and from the lines of each -P file, less -x" {
	printf 'a.txt\n' > p1
	printf 'dir\nc.txt\n' > p2
	units a
	run -0 corral-run-slice -C src -P p1 -P p2 -x dir/b.txt -c 'find . -type f | LC_ALL=C sort' -l logs K slice
	run -0 cat logs/agent-K/1.out
	assert_output "$(printf '%s\n' ./.corral-clone ./a.txt ./c.txt)"
}

@test "run-slice: a missing part is a warning and the slice still runs" {
	units a
	run -0 --separate-stderr corral-run-slice -C src -p a.txt -p nope -c true -l logs K slice
	assert_stderr "corral-run-slice: part 'nope' not found in 'src'"
	assert_json '.ok' <(records logs/agent-K.jsonl)
}

@test "run-slice: a unit writing, truncating and chmod-ing its inputs leaves the source untouched" {
	local before
	chmod 640 src/a.txt
	before=$(tree_digest src)
	units a b
	run -0 corral-run-slice -C src -p a.txt -p dir -c '
		echo more >> a.txt; : > dir/b.txt; chmod 000 a.txt; chmod 777 dir
		echo new > dir/new; ln -sf /etc/passwd dir/link; chmod 000 dir' -l logs K slice
	assert_json '.ok' <(records logs/agent-K.jsonl)
	assert_equal "$before" "$(tree_digest src)"
	run -0 stat -c '%a %s' src/a.txt src/dir/b.txt src/dir
	assert_output "$(printf '%s\n' '640 6' '644 5' '755 4096')"
}

@test "run-slice: the clone is removed afterwards, also when units fail" {
	units a b
	run -1 corral-run-slice -C src -p a.txt -c 'echo "$CORRAL_WORKDIR"; chmod 000 .; exit 1' -l logs K slice
	run -0 cat logs/agent-K/1.out
	assert_no_file "$output"
	run -0 ls -A "$TMPDIR"
	assert_output ""
}

@test "run-slice: -w puts the clone under WORKROOT, made if needed, and leaves it empty" {
	units a
	run -0 corral-run-slice -w work/root -c pwd -l logs K slice
	run -0 cat logs/agent-K/1.out
	assert_contains "$output" "$(pwd -P)/work/root/corral-K."
	run -0 ls -A work/root
	assert_output ""
}

@test "run-slice: -j puts the clone under WORK/RUN, WORK's \$NAME and \${NAME} expanded from the agent's environment, a lone \$ kept" {
	units a
	NODE=n7 run -0 corral-run-slice -r R1 -j "$PWD/w\$-\$NODE/corral-\${NODE}x" -c pwd -l logs K slice
	run -0 cat logs/agent-K/1.out
	assert_contains "$output" "$(pwd -P)/w\$-n7/corral-n7x/R1/corral-K."
	run -0 ls -A "w\$-n7/corral-n7x"
	assert_output R1
}

@test "run-slice: -j with a variable unset or empty, or that is then relative or not named corral-*, stops the agent before any unit, naming it" {
	units a
	run -2 --separate-stderr corral-run-slice -j '/w/$NOPE' -c 'touch ran' -l logs K slice
	assert_stderr "corral-run-slice: work directory '/w/\$NOPE': NOPE is not set here"
	EMPTY= run -2 --separate-stderr corral-run-slice -j '/w/${EMPTY}' -c 'touch ran' -l logs K slice
	assert_stderr "corral-run-slice: work directory '/w/\${EMPTY}': EMPTY is not set here"
	NODE=n1 run -2 --separate-stderr corral-run-slice -j 'w-$NODE' -c 'touch ran' -l logs K slice
	assert_stderr "corral-run-slice: work directory 'w-\$NODE' is 'w-n1' here; it must be an absolute path"
	# a directory of the user's is never swept
	mkdir home
	: > home/mine
	run -2 --separate-stderr corral-run-slice -j "$PWD/home" -c 'touch ran' -l logs K slice
	assert_stderr "corral-run-slice: work directory '$PWD/home' is '$PWD/home' here; its name must start with 'corral-' (every other run's entry in it is removed)"
	assert_file_exists home/mine
	assert_no_file ran
	run -2 --separate-stderr corral-run-slice -j /w -w /x -c true -l logs K slice
	assert_stderr "$USAGE"
}

@test "run-slice: -j removes every other run's entry of WORK before the clone, and leaves another agent's of its own run" {
	units a
	mkdir -p corral-w/OLD/corral-0.abc/d corral-w/R1/corral-1.xyz corral-w/.gone.R0.9.0 corral-w/.gone.R1.9.0
	chmod 000 corral-w/OLD/corral-0.abc/d
	: > corral-w/file
	run -0 corral-run-slice -r R1 -j "$PWD/corral-w" -c true -l logs K slice
	run -0 ls -A corral-w
	assert_output "$(printf '%s\n' .gone.R1.9.0 R1)"
	run -0 ls -A corral-w/R1
	assert_output corral-1.xyz
}

# kept_clone FILE: the clone of the slice's one unit, which printed its
# path, was kept and named on stderr; it holds FILE, and corral-checkout
# -d removes it
kept_clone() {
	local wd
	wd=$(cat logs/agent-K/1.out)
	assert_stderr "corral-run-slice: keeping the clone '$wd'"
	assert_file_exists "$wd/$1"
	run -0 corral-checkout -d "$wd"
}

@test "run-slice: -k keeps the clone and names it on stderr" {
	units a
	run -0 --separate-stderr corral-run-slice -k -C src -p a.txt -c pwd -l logs K slice
	kept_clone a.txt
}

@test "run-slice: CORRAL_KEEP=1 keeps the clone like -k" {
	units a
	CORRAL_KEEP=1 run -0 --separate-stderr corral-run-slice -c pwd -l logs K slice
	kept_clone .corral-clone
}

@test "run-slice: a unit that removes its clone, replaces it with a file or moves it away does not fail the units after it: the clone is checked out again" {
	units a wipe b file c move d
	run -0 --separate-stderr corral-run-slice -C src -p a.txt -c 'case $CORRAL_UNIT in
		wipe) rm -rf "$CORRAL_WORKDIR" ;;
		file) rm -rf "$CORRAL_WORKDIR"; echo x > "$CORRAL_WORKDIR" ;;
		move) mv "$CORRAL_WORKDIR" "$OUT/moved" ;;
		*) grep -q alpha a.txt && test -f .corral-clone ;;
		esac' -l logs K slice
	assert_stderr ""
	local again='PASS: exit 0; it removed or replaced its clone, checked out again'
	run -0 jq -c '[.unit, .status, .note]' <(records logs/agent-K.jsonl)
	assert_output "$(printf '%s\n' '["a","pass","PASS: exit 0"]' \
		"[\"wipe\",\"pass\",\"$again\"]" '["b","pass","PASS: exit 0"]' \
		"[\"file\",\"pass\",\"$again\"]" '["c","pass","PASS: exit 0"]' \
		"[\"move\",\"pass\",\"$again\"]" '["d","pass","PASS: exit 0"]')"
	assert_file_exists moved/a.txt
	run -0 ls -A "$TMPDIR"
	assert_output ""
}

@test "run-slice: a unit whose own path is refused ('..', a symlink out of the tree) gets an error record naming the refusal, and the rest of its slice runs" {
	ln -s / src/out
	units a.txt .. out dir/b.txt
	cp slice parts
	run -1 --separate-stderr corral-run-slice -C src -P parts -c 'test -f "$CORRAL_UNIT"' -l logs K slice
	local real
	real=$(realpath src)
	run -0 jq -c '[.unit, .ok, .status, .exit, .attempt, .note]' <(records logs/agent-K.jsonl)
	assert_output "$(printf '%s\n' '["a.txt",true,"pass",0,1,"PASS: exit 0"]' \
		"[\"..\",false,\"error\",null,1,\"ERROR: not checked out: part '..' leaves the tree\"]" \
		"[\"out\",false,\"error\",null,1,\"ERROR: not checked out: part 'out': symlink 'out' leads outside '$real'\"]" \
		'["dir/b.txt",true,"pass",0,1,"PASS: exit 0"]')"
	assert_stderr "$(printf '%s\n' "corral-run-slice: unit '..' not run: part '..' leaves the tree" \
		"corral-run-slice: unit 'out' not run: part 'out': symlink 'out' leads outside '$real'")"
	run -0 ls -A "$TMPDIR"
	assert_output ""
}

@test "run-slice: an empty slice gives a log that holds just its seal, of no records" {
	: > slice
	run -0 --separate-stderr corral-run-slice -c false -l logs K slice
	run -0 cat logs/agent-K.jsonl
	assert_output '{"corral_seal":{"records":0,"sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}}'
	assert_no_file logs/agent-K.jsonl.part
}

@test "run-slice: the old log and old outputs go at start; other files in LOGDIR stay" {
	mkdir -p logs/agent-K
	echo stale > logs/agent-K.jsonl
	echo stale > logs/agent-K.jsonl.part
	echo stale > logs/agent-K/7.out
	echo stale > logs/agent-K/7.note
	echo mine > logs/agent-K/keep.txt
	echo mine > logs/other.txt
	units a
	run -0 corral-run-slice -c true -l logs/ K slice
	run -0 jq -r .output <(records logs/agent-K.jsonl)
	assert_output "logs/agent-K/1.out"
	run -0 ls -A logs logs/agent-K
	assert_output "$(printf '%s\n' 'logs:' agent-K agent-K.jsonl other.txt '' \
		'logs/agent-K:' 1.out keep.txt)"
}

@test "run-slice: a log directory through a regular file exits 2 and leaves no clone" {
	touch plain
	units a
	run -2 --separate-stderr corral-run-slice -c true -l plain/logs K slice
	assert_contains "$stderr" "corral-run-slice: cannot create 'plain"
	assert_contains "$stderr" "Not a directory"
	run -0 ls -A "$TMPDIR"
	assert_output ""
}

@test "run-slice: a failed checkout exits 2 and leaves no log, no .part and no clone" {
	mkdir -p logs
	echo stale > logs/agent-K.jsonl
	units a
	run -2 --separate-stderr corral-run-slice -C src -p ../outside -c true -l logs K slice
	assert_stderr "corral-run-slice: part '../outside' leaves the tree"
	assert_no_file logs/agent-K.jsonl
	assert_no_file logs/agent-K.jsonl.part
	run -0 ls -A "$TMPDIR"
	assert_output ""
}

@test "run-slice: a log that cannot be written (file size limit) exits 2, never 0" {
	units a b c d e
	run -2 --separate-stderr prlimit --fsize=600 corral-run-slice -c true -l logs K slice
	assert_contains "$stderr" "corral-run-slice: cannot write 'logs/agent-K.jsonl.part': File too large"
	assert_no_file logs/agent-K.jsonl
	run -0 ls -A "$TMPDIR"
	assert_output ""
}

@test "run-slice: a background process a unit leaves behind does not outlive the agent" {
	export TAG="corral-bg-$BATS_TEST_NUMBER-$$-$RANDOM"
	units a b
	run -0 corral-run-slice -c "$BG echo started" -l logs K slice
	run -0 jq -c '[.ok, .status]' <(records logs/agent-K.jsonl)
	assert_output "$(printf '%s\n' '[true,"pass"]' '[true,"pass"]')"
	no_process "$TAG"
}

@test "run-slice: processes a unit detaches (setsid, nohup under job control, a double fork out of its group, daemon(3)) are killed when it ends and counted in its record; the agent's own children live on" {
	# the double fork waits for its first child, as a daemon does: one left
	# running when the unit ends, whatever the load
	command -v cc > /dev/null || skip "no C compiler for the daemon(3) unit"
	export TAG="corral-detach-$BATS_TEST_NUMBER-$$-$RANDOM"
	sleeper
	printf '%s\n' '#include <unistd.h>' \
		'int main(int c, char **v) { if (c < 2 || daemon(1, 0) < 0) return 1; execv(v[1], v + 1); return 127; }' > daemon.c
	cc -o daemon daemon.c
	units setsid nohup double daemon
	run -0 --separate-stderr bash -c 'CORRAL_UNIT=inherited "$OUT/sleeper" "$TAG-inherited" > /dev/null 2>&1 3>&- & exec "$@"' sh \
		corral-run-slice -c 'case $CORRAL_UNIT in
		setsid) setsid "$OUT/sleeper" "$TAG" & ;;
		nohup) bash -c "set -m; nohup \"\$OUT/sleeper\" \"\$TAG\" > /dev/null 2>&1 &" ;;
		double) perl -e "use POSIX; if (my \$p = fork) { waitpid(\$p, 0); exit } POSIX::setpgid(0, 0); exit if fork; exec @ARGV" "$OUT/sleeper" "$TAG" ;;
		daemon) "$OUT/daemon" "$OUT/sleeper" "$TAG" ;;
		esac; '"$READY" -l logs K slice
	local inherited
	inherited=$(pgrep -f -- "$TAG-inherited") && kill "$inherited" ||
		flunk "the process the agent inherited is gone"
	refute_process "$TAG\$"
	run -0 jq -c '[.unit, .status, .stray, .note]' <(records logs/agent-K.jsonl)
	assert_output "$(for u in setsid nohup double daemon; do
		printf '["%s","pass",1,"PASS: exit 0; killed 1 process left running"]\n' "$u"; done)"
}

@test "run-slice: a process a unit detached before it timed out is killed after the group's SIGTERM, and counted" {
	export TAG="corral-detach-$BATS_TEST_NUMBER-$$-$RANDOM"
	sleeper
	units slow after
	run -1 corral-run-slice -t 0.5 -c 'case $CORRAL_UNIT in slow) setsid "$OUT/sleeper" "$TAG" & '"$READY"'; sleep 1000 ;; esac' -l logs K slice
	refute_process "$TAG"
	run -0 jq -c '[.unit, .status, .stray, .note]' <(records logs/agent-K.jsonl)
	assert_output "$(printf '%s\n' '["slow","timeout",1,"TIMEOUT: after 0.5s, ended by SIGTERM; killed 1 process left running"]' \
		'["after","pass",null,"PASS: exit 0"]')"
}

@test "run-slice: kill -9 mid-slice leaves no agent-K.jsonl, only a .part of valid lines; the watchdog ends the unit and removes the clone" {
	export TAG="corral-k9-$BATS_TEST_NUMBER-$$-$RANDOM"
	seq 1 2000 > slice
	corral-run-slice -c "echo \"\$CORRAL_WORKDIR\" > \"\$OUT/wd\"; $BG sleep 0.02" \
		-l logs K slice > bg.out 2> bg.err 3>&- &
	local pid=$! rc=0 line n=0
	wait_for lines_at_least 3 logs/agent-K.jsonl.part
	kill -9 "$pid"
	wait "$pid" || rc=$?
	assert_equal 137 "$rc"
	assert_no_file logs/agent-K.jsonl
	while IFS= read -r line; do
		jq -e . <<<"$line" > /dev/null || flunk "invalid line: $line"
		n=$((n + 1))
	done < logs/agent-K.jsonl.part
	[ "$n" -ge 3 ] || flunk "only $n lines"
	no_process "$TAG"
	wait_for test ! -e "$(cat wd)"
}

@test "run-slice: an agent killed after starting a unit and before its next step still has that unit stopped by the watchdog" {
	command -v gdb >/dev/null || { [ -z "${CI:-}" ] || flunk "gdb is missing"; skip "gdb is not installed"; }
	export TAG="corral-k9start-$BATS_TEST_NUMBER-$$-$RANDOM"
	units u1
	# Stopped where the unit runs and the agent has not said a word about
	# it, the agent is killed: only what the unit said itself can save it.
	run gdb -q -batch -ex 'set breakpoint pending on' \
		-ex 'break corral_run_wait_unit' -ex run -ex 'shell sleep 0.5' -ex kill \
		--args "$(command -v corral-run-slice)" -c "$BG sleep 1000" -l logs K slice < /dev/null
	assert_contains "$output" "Breakpoint 1, corral_run_wait_unit"
	no_process "$TAG"
}

# b_running: unit b of a b c wrote its clone's path to wd, and its
# processes (tagged $TAG) run
b_running() {
	wait_for test -s wd
	wait_for pgrep -f -- "$TAG"
}

# stopped_at_b STATUS: the agent stopped in b died of SIGTERM (STATUS
# 143); b's processes and clone are gone, and there is no log but the
# .part, which holds a alone
stopped_at_b() {
	assert_equal 143 "$1"
	no_process "$TAG"
	assert_no_file "$(cat wd)"
	assert_no_file logs/agent-K.jsonl
	run -0 jq -r .unit <(records logs/agent-K.jsonl.part)
	assert_output "a"
}

@test "run-slice: SIGTERM mid-unit stops the unit's process group, removes the clone, keeps the .part and dies of SIGTERM" {
	export TAG="corral-term-$BATS_TEST_NUMBER-$$-$RANDOM"
	units a b c
	corral-run-slice -c "case \$CORRAL_UNIT in b) echo \"\$CORRAL_WORKDIR\" > \"\$OUT/wd\"; $BG sleep 1000 ;; esac" \
		-l logs K slice > bg.out 2> bg.err 3>&- &
	local pid=$! rc=0
	b_running
	kill -TERM "$pid"
	wait "$pid" || rc=$?
	stopped_at_b "$rc"
	run -0 cat bg.err
	assert_output ""
}

@test "run-slice: when the -G process ends, the running unit's group is stopped, deaf units by SIGKILL after the grace period; the .part stays and the agent dies of SIGTERM" {
	export TAG="corral-guard-$BATS_TEST_NUMBER-$$-$RANDOM"
	units a b c
	sleep 1000 3>&- &
	local guard=$! pid rc=0
	corral-run-slice -G "$guard" -g 1 -c "case \$CORRAL_UNIT in b) echo \"\$CORRAL_WORKDIR\" > \"\$OUT/wd\"; trap '' TERM; $BG sleep 1000 ;; esac" \
		-l logs K slice > bg.out 2> bg.err 3>&- &
	pid=$!
	b_running
	kill -KILL "$guard"
	wait "$pid" || rc=$?
	stopped_at_b "$rc"
	# the last line: valgrind, which lacks pidfd_open, warns before it
	run -0 tail -n 1 bg.err
	assert_output "corral-run-slice: process $guard, which the run hangs on, is gone; stopped"
}

@test "run-slice: with a -G process already gone no unit runs" {
	units a b
	sleep 0 &
	local guard=$!
	wait "$guard"
	run -143 --separate-stderr corral-run-slice -G "$guard" -c 'echo ran >> "$OUT/ran"' -l logs K slice
	assert_no_file ran
	assert_no_file logs/agent-K.jsonl
	assert_equal "corral-run-slice: process $guard, which the run hangs on, is gone; stopped" "${stderr##*$'\n'}"
}

@test "run-slice: a -G process that lives on changes nothing" {
	units a b
	sleep 1000 3>&- &
	local guard=$!
	run -0 corral-run-slice -G "$guard" -c true -l logs K slice
	kill "$guard"
	run -0 jq -r .unit <(records logs/agent-K.jsonl)
	assert_output "$(printf 'a\nb')"
}

@test "run-slice: a unit that ignores SIGTERM is killed by a second signal" {
	units a
	corral-run-slice -c 'trap "" TERM; echo $$ > "$OUT/unit.pid"; sleep 1000' \
		-l logs K slice > bg.out 2> bg.err 3>&- &
	local pid=$! rc=0
	wait_for test -s unit.pid
	kill -TERM "$pid"
	sleep 0.3
	kill -0 "$pid" || flunk "the agent did not wait for its unit"
	kill -TERM "$pid"
	wait "$pid" || rc=$?
	assert_equal 143 "$rc"
	assert_no_file logs/agent-K.jsonl
}

@test "run-slice: -i records the inputs digest in every record" {
	units a b
	run -0 corral-run-slice -i abc123 -c true -l logs K slice
	run -0 jq -r .inputs <(records logs/agent-K.jsonl)
	assert_output "$(printf 'abc123\nabc123')"
}

@test "run-slice: the agent exits 0 when every unit passed and 1 when one failed" {
	units a b c
	run -0 corral-run-slice -c true -l logs K slice
	failed 'test "$CORRAL_UNIT" != b' '[.unit, .ok]'
	assert_output "$(printf '["a",true]\n["b",false]\n["c",true]')"
}

@test "run-slice: a unit past -t is ended with its whole process group, background jobs holding its output included, and recorded as timeout" {
	export TAG="corral-to-$BATS_TEST_NUMBER-$$-$RANDOM"
	units slow after
	local t0 ms
	t0=$(date +%s%N)
	run -1 --separate-stderr corral-run-slice -t 0.5 -g 3 \
		-c "case \$CORRAL_UNIT in slow) $BG echo started; sleep 1000 ;; esac" -l logs K slice
	ms=$(ms_since "$t0")
	assert_stderr ""
	[ "$ms" -lt 3000 ] || flunk "took $ms ms: SIGTERM should have ended it well within the 3 s grace"
	no_process "$TAG"
	run -0 jq -c '[.unit, .ok, .status, .exit, .signal, .note]' <(records logs/agent-K.jsonl)
	assert_output "$(printf '%s\n' '["slow",false,"timeout",null,"SIGTERM","TIMEOUT: after 0.5s, ended by SIGTERM: started"]' \
		'["after",true,"pass",0,null,"PASS: exit 0"]')"
	assert_json '.duration_ms >= 500 and .duration_ms < 3000' <(head -n 1 logs/agent-K.jsonl)
}

@test "run-slice: a unit deaf to SIGTERM is killed with SIGKILL, its whole group too, after the grace period" {
	export TAG="corral-deaf-$BATS_TEST_NUMBER-$$-$RANDOM"
	units deaf
	local t0 ms
	t0=$(date +%s%N)
	run -1 corral-run-slice -t 0.3 -g 0.5 -c "trap '' TERM; $BG_DEAF sleep 1000" -l logs K slice
	ms=$(ms_since "$t0")
	[ "$ms" -ge 800 ] && [ "$ms" -lt 5000 ] || flunk "took $ms ms"
	no_process "$TAG"
	run -0 jq -c '[.status, .exit, .signal, .note]' <(records logs/agent-K.jsonl)
	assert_output '["timeout",null,"SIGKILL","TIMEOUT: after 0.3s, ended by SIGKILL (SIGTERM did not end it within 0.5s)"]'
}

@test "run-slice: a timed-out unit is retried like any failure, and passing then makes it flaky" {
	units u
	run -0 corral-run-slice -t 0.5 -R 1 -c '[ "$CORRAL_ATTEMPT" = 2 ] || sleep 1000' -l logs K slice
	run -0 jq -c '[.attempt, .ok, .status]' <(records logs/agent-K.jsonl)
	assert_output "$(printf '%s\n' '[1,false,"timeout"]' '[2,true,"flaky"]')"
	run -0 jq -r .note <(records logs/agent-K.jsonl)
	assert_equal "FLAKY: passed on attempt 2; attempt 1: TIMEOUT: after 0.5s, ended by SIGTERM" "${lines[1]}"
}

@test "run-slice: -T ends the unit in flight when the slice's time runs out and records the units left as not-run" {
	units a b c d
	run -1 --separate-stderr corral-run-slice -T 1 -R 3 -c 'case $CORRAL_UNIT in b) sleep 1000 ;; esac' -l logs K slice
	run -0 jq -c '[.unit, .ok, .status, .attempt, .exit, .output]' <(records logs/agent-K.jsonl)
	assert_output "$(printf '%s\n' '["a",true,"pass",1,0,"logs/agent-K/1.out"]' \
		'["b",false,"timeout",1,null,"logs/agent-K/2.out"]' \
		'["c",false,"not-run",0,null,null]' '["d",false,"not-run",0,null,null]')"
	run -0 jq -r .note <(records logs/agent-K.jsonl)
	assert_contains "${lines[1]}" "TIMEOUT: the slice's time limit (1s) ran out after "
	assert_equal "NOT-RUN: the slice's time limit (1s) ran out" "${lines[2]}"
}

@test "run-slice: -d, the run's deadline, already past: every unit is a not-run record and the agent exits 1" {
	units a b
	run -1 --separate-stderr corral-run-slice -d "$(( $(date +%s) - 10 ))" -c true -l logs K slice
	assert_stderr ""
	run -0 jq -c '[.unit, .status, .note]' <(records logs/agent-K.jsonl)
	assert_output "$(printf '%s\n' '["a","not-run","NOT-RUN: the run'"'"'s deadline passed"]' \
		'["b","not-run","NOT-RUN: the run'"'"'s deadline passed"]')"
}

@test "run-slice: -R retries a failed unit in the same agent; each attempt is a record with its own output, a pass after a failure is flaky" {
	units steady shaky
	run -0 --separate-stderr corral-run-slice -R 2 -c '
		echo "attempt $CORRAL_ATTEMPT"
		[ "$CORRAL_UNIT" = steady ] || [ "$CORRAL_ATTEMPT" -ge 3 ] || { echo "broke"; exit 1; }' -l logs K slice
	assert_stderr ""
	run -0 jq -c '[.unit, .attempt, .ok, .status, .exit, .output]' <(records logs/agent-K.jsonl)
	assert_output "$(printf '%s\n' '["steady",1,true,"pass",0,"logs/agent-K/1.out"]' \
		'["shaky",1,false,"fail",1,"logs/agent-K/2.out"]' \
		'["shaky",2,false,"fail",1,"logs/agent-K/2.2.out"]' \
		'["shaky",3,true,"flaky",0,"logs/agent-K/2.3.out"]')"
	run -0 jq -r 'select(.status == "flaky") | .note' <(records logs/agent-K.jsonl)
	assert_output "FLAKY: passed on attempt 3; attempt 1: FAIL: exit 1: broke"
	run -0 cat logs/agent-K/2.2.out
	assert_output "$(printf 'attempt 2\nbroke')"
}

@test "run-slice: a unit failing every attempt is 1 + R records and one failure; the merge keeps the last" {
	units bad good
	run -1 corral-run-slice -R 2 -c 'test "$CORRAL_UNIT" = good' -l logs K slice
	run -0 jq -c '[.unit, .attempt, .status]' <(records logs/agent-K.jsonl)
	assert_output "$(printf '%s\n' '["bad",1,"fail"]' '["bad",2,"fail"]' '["bad",3,"fail"]' '["good",1,"pass"]')"
	run -1 --separate-stderr corral-merge -o . logs
	assert_output "merged 2 units from 1 agent: 1 passed, 1 failed; 4 attempts"
	run -0 jq -c '[.unit, .attempt]' failures.jsonl
	assert_output '["bad",3]'
}

@test "run-slice: exit codes listed with -N are never retried" {
	units asan other
	run -1 corral-run-slice -R 3 -N 23,66 -c 'case $CORRAL_UNIT in asan) exit 23 ;; *) exit 66 ;; esac' -l logs K slice
	run -0 jq -c '[.unit, .attempt, .exit]' <(records logs/agent-K.jsonl)
	assert_output "$(printf '%s\n' '["asan",1,23]' '["other",1,66]')"
}

@test "run-slice: -o caps a unit's output, keeping its head and tail with a marker saying how much was left out" {
	units loud
	run -1 corral-run-slice -o 1000 -c 'i=0; while [ $i -lt 10000 ]; do echo "line $i"; i=$((i+1)); done; exit 1' -l logs K slice
	local total
	total=$(i=0; while [ $i -lt 10000 ]; do echo "line $i"; i=$((i+1)); done | wc -c)
	run -0 head -n 1 logs/agent-K/1.out
	assert_output "line 0"
	run -0 tail -n 1 logs/agent-K/1.out
	assert_output "line 9999"
	run -0 grep -c '^\[corral: [0-9]* bytes of output left out\]$' logs/agent-K/1.out
	assert_output "1"
	run -0 grep -o '[0-9]* bytes of output left out' logs/agent-K/1.out
	assert_output "$((total - 1000)) bytes of output left out"
	run -0 stat -c %s logs/agent-K/1.out
	[ "$output" -le 1100 ] || flunk "the capped output has $output bytes"
	run -0 jq -r .note <(records logs/agent-K.jsonl)
	assert_output "FAIL: exit 1: line 9999"
}

@test "run-slice: -o keeps an output that fits whole, byte for byte" {
	units quiet
	head -c 999 /dev/urandom > want
	run -0 corral-run-slice -o 1000 -c "cat '$PWD/want'" -l logs K slice
	run -0 cmp want logs/agent-K/1.out
}

@test "run-slice: -L cpu stops a CPU spinner with SIGXCPU and the note says which limit" {
	units spin
	run -1 corral-run-slice -t 30 -L cpu=1 -c 'while :; do :; done' -l logs K slice
	run -0 jq -c '[.ok, .status, .signal, .note]' <(records logs/agent-K.jsonl)
	assert_output '[false,"crash","SIGXCPU","LIMIT: CPU time limit (1s) exceeded (SIGXCPU)"]'
}

@test "run-slice: -L mem makes a memory hog fail with an allocation error" {
	units hog
	run -1 corral-run-slice -L mem=64M -c 'awk "BEGIN { s = \"x\"; while (1) s = s s }"' -l logs K slice
	run -0 jq -c '[.ok, .status]' <(records logs/agent-K.jsonl)
	assert_output '[false,"fail"]'
	run -0 grep -ci 'memory' logs/agent-K/1.out
}

@test "run-slice: -L fsize stops a unit that writes too large a file, and the note says which limit" {
	units big
	run -1 corral-run-slice -L fsize=4K -c 'head -c 100000 /dev/zero > f' -l logs K slice
	run -0 jq -c '[.ok, .status, .exit, .note]' <(records logs/agent-K.jsonl)
	assert_contains "$output" '[false,"fail",153,"LIMIT: file size limit (4096 bytes) exceeded (SIGXFSZ)'
}

@test "run-slice: limits are set by the agent itself: no wrapper, at most two execs per unit, no fork in the loop" {
	command -v strace >/dev/null || skip "strace is not installed"
	case $CORRAL_TEST_BIN in */asan/*) skip "LeakSanitizer does not run under ptrace" ;; esac
	[ -z "${CORRAL_TEST_WRAPPER:-}" ] || skip "valgrind runs vfork and posix_spawn as fork"
	seq 1 20 > slice
	run -0 strace -f -qq -o trace -e trace=execve,clone,clone3,vfork,fork \
		corral-run-slice -t 10 -L cpu=10 -L mem=1G -c true -l logs K slice
	run -0 grep -c 'execve(' trace
	[ "$output" -le 41 ] || flunk "$output execs for 20 units"
	# the watchdog is the one process forked without CLONE_VM, once
	run -0 sh -c "grep -E 'clone3?\\(|fork\\(' trace | grep -v CLONE_VM | grep -vc vfork"
	[ "$output" -le 1 ] || flunk "$(grep -E 'clone|fork' trace)"
}

@test "run-slice: a command that needs no shell runs without one: sh \"\$CORRAL_UNIT\" is one exec per unit" {
	command -v strace >/dev/null || skip "strace is not installed"
	case $CORRAL_TEST_BIN in */asan/*) skip "LeakSanitizer does not run under ptrace" ;; esac
	[ -z "${CORRAL_TEST_WRAPPER:-}" ] || skip "valgrind runs the program itself"
	mkdir -p src/t
	for i in $(seq 1 10); do echo ': one line' > "src/t/u$i.sh"; echo "t/u$i.sh"; done > slice
	run -0 strace -f -qq -o trace -e trace=execve \
		corral-run-slice -C src -p t -c 'sh "$CORRAL_UNIT"' -l logs K slice
	# corral-run-slice itself, then one sh per unit and nothing else
	run -0 grep -c 'execve(' trace
	assert_output 11
	run -0 jq -r .status <(records logs/agent-K.jsonl)
	assert_output "$(printf 'pass\n%.0s' $(seq 1 10))"
}

@test "run-slice: a command without a shell gets its words as sh would, and PWD is its clone" {
	units 'u 1' "it's"
	run -0 corral-run-slice -c "printf '[%s]' 'a b' \"\$CORRAL_UNIT\" x\"\${CORRAL_AGENT}\"y '\$HOME' \"\"" -l logs K slice
	run -0 cat logs/agent-K/1.out logs/agent-K/2.out
	assert_output "[a b][u 1][xKy][\$HOME][][a b][it's][xKy][\$HOME][]"
	run -0 corral-run-slice -k -c 'printenv PWD CORRAL_WORKDIR' -l logs K slice
	run -0 sort -u logs/agent-K/1.out
	assert_equal 1 "$(printf '%s\n' "$output" | wc -l)"
	[[ $output == /* ]] || flunk "PWD: $output"
}

@test "run-slice: a command the shell must read still runs in one: globs, \$ unquoted, builtins, assignments" {
	units a
	mkdir -p src
	touch src/g1 src/g2
	assert_out1 "g1 g2" -C src -p g1 -p g2 -c 'echo g*'
	assert_out1 a -c 'echo $CORRAL_UNIT'
	assert_out1 1 -c 'X=1 printenv X'
	failed 'exit 3' .exit
	assert_output 3
}

@test "run-slice: plain words whose first is a builtin of the shell, as expanded, run in the shell: echo 'x\\ny', true --version, a unit named echo" {
	units a
	# dash's echo reads backslashes; the program echo does not
	assert_out1 "$(printf 'x\ny')" -c "echo 'x\\ny'"
	# the program true reads --version; the builtin does not
	assert_out1 "" -c 'true --version'
	# the expanded first word counts: a unit named echo is the builtin
	units echo
	assert_out1 "$(printf 'a\tb')" -c "\"\$CORRAL_UNIT\" 'a\\tb'"
}

@test "run-slice: \"\$NAME\" of a variable the agent does not set goes to the shell, which sets PPID and OPTIND itself" {
	units a
	run -0 env PPID=bogus OPTIND=9 corral-run-slice -c 'printf "[%s]" "$PPID" "$OPTIND" "$CORRAL_UNIT"' -l logs K slice
	run -0 cat logs/agent-K/1.out
	[[ $output =~ ^\[[0-9]+\]\[1\]\[a\]$ ]] || flunk "$output"
}

@test "run-slice: a program word is looked up as the shell would: a relative PATH entry is read in the clone, no PATH is the shell's default" {
	skip_if_wrapped
	units a
	mkdir -p src/bin abs
	printf '#!/bin/sh\necho clone\n' > src/bin/tool
	printf '#!/bin/sh\necho here\n' > abs/tool
	cp src/bin/tool src/tool
	cp src/bin/tool tool
	chmod +x src/bin/tool src/tool abs/tool tool
	run -0 env PATH="bin:$PWD/abs" "$(command -v corral-run-slice)" -C src -p bin/tool -c 'tool' -l logs K slice
	run -0 cat logs/agent-K/1.out
	assert_output "clone"
	# without PATH the shell's default finds no tool: neither ./tool
	# here nor the clone's
	run -1 env -u PATH "$(command -v corral-run-slice)" -C src -p tool -c 'tool' -l logs K slice
	run -0 jq -r .exit <(records logs/agent-K.jsonl)
	assert_output 127
}

@test "run-slice: units that print nothing share one empty output file, while one that prints gets its own, byte for byte" {
	units a b c d e
	run -0 corral-run-slice -c 'case "$CORRAL_UNIT" in b) printf "out\n" ;; d) printf x >&2 ;; esac' -l logs K slice
	run -0 jq -r .output <(records logs/agent-K.jsonl)
	assert_output "$(printf 'logs/agent-K/%s.out\n' 1 2 3 4 5)"
	run -0 cat logs/agent-K/2.out
	assert_output "out"
	run -0 cat logs/agent-K/4.out
	assert_output "x"
	run -0 stat -c '%i %s' logs/agent-K/1.out logs/agent-K/3.out logs/agent-K/5.out
	assert_equal 1 "$(printf '%s\n' "$output" | sort -u | wc -l)"
	assert_equal 0 "${lines[0]#* }"
	empty=${lines[0]% *}
	run -0 stat -c %i logs/agent-K/2.out logs/agent-K/4.out
	[ "${lines[0]}" != "$empty" ] && [ "${lines[1]}" != "$empty" ] &&
		[ "${lines[0]}" != "${lines[1]}" ] || flunk "outputs share a file: $empty $output"
}

@test "run-slice: an empty output written to after its unit ended is shared no further; the next unit that prints nothing gets an empty file" {
	units a b c
	run -0 corral-run-slice -c 'case "$CORRAL_UNIT" in b) echo spoiled >> "${CORRAL_NOTE%/*}/1.out" ;; esac' -l logs K slice
	run -0 cat logs/agent-K/1.out
	assert_output "spoiled"
	run -0 stat -c %s logs/agent-K/3.out
	assert_output 0
}

@test "run-slice: a slice of 20 units that print nothing creates one output file, not one per unit" {
	command -v strace >/dev/null || skip "strace is not installed"
	case $CORRAL_TEST_BIN in */asan/*) skip "LeakSanitizer does not run under ptrace" ;; esac
	[ -z "${CORRAL_TEST_WRAPPER:-}" ] || skip "valgrind runs the program itself"
	seq 1 20 > slice
	run -0 strace -f -qq -o trace -e trace=open,openat,creat,linkat \
		corral-run-slice -c true -l logs K slice
	run -0 grep -c 'agent-K/[0-9]*\.out".*O_CREAT' trace
	assert_output 1
	run -0 ls logs/agent-K
	assert_output "$(printf '%s.out\n' $(seq 1 20) | sort)"
}

@test "run-slice: a work root the agent makes is marked a top directory (ext4's T), so that its clones go to block groups of their own; one that was there stays as it was" {
	command -v lsattr >/dev/null || skip "lsattr is not installed"
	mkdir probe
	chattr +T probe 2>/dev/null || skip "this file system has no T attribute"
	units a
	run -0 corral-run-slice -w made/work -c true -l logs K slice
	run -0 lsattr -d made/work
	[[ ${output%% *} == *T* ]] || flunk "not marked: $output"
	run -0 lsattr -d made
	[[ ${output%% *} != *T* ]] || flunk "its parent marked: $output"
	mkdir there
	run -0 corral-run-slice -w there -c true -l logs K slice
	run -0 lsattr -d there
	[[ ${output%% *} != *T* ]] || flunk "marked: $output"
}

@test "run-slice: values -t, -T, -g, -d, -R, -N, -o and -L do not understand are refused with exit 2" {
	units a
	run -2 --separate-stderr corral-run-slice -t 1x -c true -l logs K slice
	assert_stderr "corral-run-slice: -t '1x' is not a number of seconds"
	run -2 --separate-stderr corral-run-slice -g -1 -c true -l logs K slice
	assert_stderr "corral-run-slice: -g '-1' is not a number of seconds"
	run -2 --separate-stderr corral-run-slice -R many -c true -l logs K slice
	assert_stderr "corral-run-slice: -R 'many' is not a number"
	run -2 --separate-stderr corral-run-slice -N 1,300 -c true -l logs K slice
	assert_stderr "corral-run-slice: -N '300' is out of range (0 to 255)"
	run -2 --separate-stderr corral-run-slice -o 1T -c true -l logs K slice
	assert_stderr "corral-run-slice: -o '1T' is not a size in bytes (a number, optionally with K, M or G)"
	run -2 --separate-stderr corral-run-slice -L nice=5 -c true -l logs K slice
	assert_stderr "corral-run-slice: -L 'nice=5' is not cpu=SECS, mem=SIZE or fsize=SIZE"
	assert_no_file logs
}

@test "run-slice: -v prints one line per finished unit on stderr when it is not a terminal, nothing on stdout" {
	units a b 'c d'
	run -1 --separate-stderr corral-run-slice -v -R 1 -c 'test "$CORRAL_UNIT" != b' -l logs K slice
	assert_output ""
	assert_equal 4 "${#stderr_lines[@]}"
	[[ ${stderr_lines[0]} =~ ^corral:\ \[1/3\]\ pass\ +[0-9.]+s\ \ a$ ]] || flunk "${stderr_lines[0]}"
	[[ ${stderr_lines[1]} =~ ^corral:\ \[1/3\]\ fail\ +[0-9.]+s\ \ b\ \(attempt\ 1,\ retrying\)$ ]] || flunk "${stderr_lines[1]}"
	[[ ${stderr_lines[2]} =~ ^corral:\ \[2/3\]\ fail\ +[0-9.]+s\ \ b\ \(attempt\ 2\)$ ]] || flunk "${stderr_lines[2]}"
	[[ ${stderr_lines[3]} =~ ^corral:\ \[3/3\]\ pass\ +[0-9.]+s\ \ c\ d$ ]] || flunk "${stderr_lines[3]}"
}

@test "run-slice: progress lines of agents running at once never mix, and count the whole run through -S" {
	local k long
	long=$(printf 'x%.0s' $(seq 300))
	for k in 0 1 2 3; do seq -f "$long-$k-%g" 1 40 > "s$k"; done
	for k in 0 1 2 3; do
		corral-run-slice -v -S live -c true -l logs "$k" "s$k" 2>> progress &
	done
	wait
	run -0 wc -l < progress
	assert_output "160"
	run -1 grep -cvE "^corral: \[ *[0-9]+/[0-9]+\] pass +[0-9.]+s  x{160}\.\.\.$" progress
	assert_output "0"
	# each line counts the ticks so far: two agents may see the same count
	run -0 grep -c "^corral: \[160/160\]" progress
	[ "$output" -ge 1 ] || flunk "no line counts the whole run"
	run -1 grep -E "^corral: \[ *(0|16[1-9]|1[7-9][0-9])/" progress
	run -0 sort live/ticks
	assert_contains "$output" "S 40 40 "
	# a tick: the status letter, the unit's weight, the ms it took; an E
	# line as each agent ends
	assert_equal 160 "$(grep -cE '^p 1 [0-9]+$' live/ticks)"
	assert_equal 4 "$(grep -cx 'E' live/ticks)"
}

@test "run-slice: on a terminal -v redraws one progress line in place, and ends it once the run is done" {
	units a b c
	run -0 script -qec "corral-run-slice -v -c true -l logs K slice" /dev/null < /dev/null
	assert_contains "$output" $'\r\033[Kcorral: 3/3 done (3 pass, 0 fail, 0 skip, 0 flaky, 0 timeout), '
	refute_contains "$output" "[1/3]"
}

@test "run-slice: -S keeps a status file whose last line is the unit in flight, with its expected time from -e" {
	units quick slow
	printf '5\n7000\n' > est
	corral-run-slice -S live -e est -c 'test "$CORRAL_UNIT" = quick || sleep 1000' -l logs K slice 3>&- &
	local pid=$!
	wait_for grep -q '"unit":"slow"' live/agent-K.status
	run -0 tail -n 1 live/agent-K.status
	assert_json '.unit == "slow" and .i == 2 and .attempt == 1 and .expect_ms == 7000 and (.at_ms | type == "number")'
	run -0 head -n 1 live/agent-K.status
	assert_json ".agent == \"K\" and .pid == $pid and .units == 2"
	kill -TERM "$pid"
	wait "$pid" || true
}

@test "run-slice: an estimates file that does not fit the slice is ignored with a warning" {
	units a b
	printf '5\n' > est
	run -0 --separate-stderr corral-run-slice -e est -c true -l logs K slice
	assert_stderr "corral-run-slice: 'est' does not give one estimate per unit; ignored"
}

@test "run-slice: valgrind finds no error in a slice with timeouts, retries, limits, a capped output and progress" {
	command -v valgrind >/dev/null || skip "valgrind is not installed"
	case $CORRAL_TEST_BIN in */asan/*) skip "a sanitizer build does not run under valgrind" ;; esac
	units a b c d
	run -1 --separate-stderr valgrind -q --error-exitcode=99 --leak-check=full \
		--errors-for-leak-kinds=definite corral-run-slice -v -S live -R 1 -t 1 -g 0.2 -o 500 -L cpu=5 \
		-c 'case $CORRAL_UNIT in a) seq 1000 ;; b) trap "" TERM; sleep 1000 ;; c) exit 3 ;; esac' -l logs K slice
	refute_contains "$stderr" "=="
	run -0 jq -r .status <(records logs/agent-K.jsonl)
	assert_output "$(printf '%s\n' pass timeout timeout fail fail pass)"
}
