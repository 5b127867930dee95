#!/usr/bin/env bats
# report.bats -- corral-report turns merged results into JUnit XML that
# xmllint accepts and TAP that prove reads, whatever the bytes.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
	_corral_tmpdir
}

USAGE='usage: corral-report [-ht] [-H FILE] [-j FILE] [-n NAME] [-o MAX] [-T FILE] DIR'

# x XPATH [FILE]: the string value of XPATH in FILE (junit.xml)
x() {
	xmllint --xpath "string($1)" "${2:-junit.xml}"
}

# junit [OPTION...]: corral-report OPTION... -j junit.xml out succeeds,
# and xmllint accepts junit.xml
junit() {
	run -0 corral-report "$@" -j junit.xml out
	run -0 xmllint --noout junit.xml
}

# assert_x XPATH TEXT: the string value of XPATH in junit.xml is TEXT
assert_x() {
	run -0 x "$1"
	assert_output "$2"
}

# record UNIT OK STATUS [AT DURATION_MS [HOST]]: a record line
record() {
	jq -cn --arg u "$1" --argjson ok "$2" --arg s "$3" --arg at "${4:-2026-01-01T00:00:01.000Z}" \
		--argjson d "${5:-1000}" --arg h "${6:-}" \
		'{unit: $u, ok: $ok, note: (($s | ascii_upcase) + ": why"), at: $at, status: $s, duration_ms: $d}
		+ (if $h == "" then {} else {host: $h} end)'
}

# need_junitparser, need_npm_consumer: skip without the consumer, but
# fail under CI, which must have it (build-aux/deps, make npm-consumers)
need_junitparser() {
	/usr/bin/python3 -c 'import junitparser' 2>/dev/null && return 0
	[ -z "${CI:-}" ] || flunk "python3-junitparser is missing (build-aux/deps installs it)" || return
	skip "python3-junitparser is missing (build-aux/deps installs it)"
}
need_npm_consumer() {
	[ -d "${CORRAL_TEST_NODE_PATH:-/none}/test-results-parser" ] && command -v node >/dev/null && return 0
	[ -z "${CI:-}" ] || flunk "test-results-parser is missing (make npm-consumers installs it)" || return
	skip "test-results-parser is missing (make npm-consumers installs it)"
}

# junitparser FILE: per suite, "NAME TESTS FAILURES ERRORS SKIPPED" as
# python3-junitparser counts the cases, then "ok" when the suite's own
# attributes say the same
junitparser() {
	/usr/bin/python3 - "$1" <<'EOF'
import sys
from junitparser import JUnitXml
for s in JUnitXml.fromfile(sys.argv[1]):
    cases = list(s)
    kinds = [type(r).__name__ for c in cases for r in c.result]
    n = (len(cases), kinds.count("Failure"), kinds.count("Error"), kinds.count("Skipped"))
    same = (s.tests, s.failures, s.errors, s.skipped) == n
    print(s.name, *n, "ok" if same else "differs: %r" % ((s.tests, s.failures, s.errors, s.skipped),))
EOF
}

# npm_consumer FILE: per suite, "NAME CASES FAILED SKIPPED" as
# test-results-parser reads the cases (an error fails a case), then
# "total TOTAL PASSED FAILED ERRORS SKIPPED" from the attributes
npm_consumer() {
	NODE_PATH=$CORRAL_TEST_NODE_PATH node -e '
const { parse } = require("test-results-parser");
const r = parse({ type: "junit", files: [process.argv[1]] });
for (const s of r.suites)
  console.log([s.name, s.cases.length, s.cases.filter(c => c.status === "FAIL").length,
    s.cases.filter(c => c.status === "SKIP").length].join(" "));
console.log(["total", r.total, r.passed, r.failed, r.errors, r.skipped].join(" "));
' "$1"
}

# results CMD UNIT...: run the units with CMD (one retry) and merge into out/
results() {
	local cmd=$1
	shift
	printf '%s\n' "$@" > slice
	corral-run-slice -R 1 -c "$cmd" -l out/logs 0 slice || true
	corral-merge -q -o out out/logs || true
}

@test "report: -h prints usage to stdout and exits 0" {
	assert_help "$USAGE" corral-report -h
}

@test "report: no DIR, or neither -j nor -t, prints usage to stderr and exits 2" {
	assert_usage_error "$USAGE" corral-report -t
	assert_usage_error "$USAGE" corral-report out
}

@test "report: -j - and -t may not both write to standard output" {
	run -2 --separate-stderr corral-report -t -j - out
	assert_stderr "corral-report: -j - and -t may not both write to standard output"
}

@test "report: a directory without results exits 2 and says it could not tell" {
	run -2 --separate-stderr corral-report -t nothere
	assert_output ""
	assert_contains "$stderr" "corral-report: COULD NOT TELL: nothere does not exist."
}

@test "report: JUnit XML that xmllint accepts, a testsuites root, one testcase per unit with file and classname, failures with note and output tail" {
	results 'case $CORRAL_UNIT in tests/unit/bad.sh) echo "expected 3, got 4"; exit 1 ;; esac' \
		tests/unit/ok.sh tests/unit/bad.sh top.sh
	run -0 --separate-stderr corral-report --junit junit.xml out
	assert_output ""
	assert_stderr ""
	run -0 xmllint --noout junit.xml
	assert_x 'name(/*)' "testsuites"
	assert_x '/testsuites/@tests' "3"
	assert_x '/testsuites/@failures' "1"
	assert_x 'count(//testcase)' "3"
	assert_x '//testcase[@name="tests/unit/bad.sh"]/@classname' "tests.unit"
	assert_x '//testcase[@name="top.sh"]/@file' "top.sh"
	assert_x '//testcase[@name="tests/unit/bad.sh"]/failure/@message' "FAIL: exit 1: expected 3, got 4"
	assert_x '//testcase[@name="tests/unit/bad.sh"]/failure' "expected 3, got 4"
	assert_x 'count(//testcase[@name="tests/unit/ok.sh"]/*[not(self::system-out)])' "0"
}

@test "report: a flaky unit gets a flakyFailure and no failure; a not-run unit is an error with the reason" {
	results 'if [ "$CORRAL_UNIT" = shaky ] && [ "$CORRAL_ATTEMPT" = 1 ]; then exit 1; fi' shaky fine
	printf '%s\n' shaky fine ghost > units
	corral-merge -q -u units -o out out/logs || true
	junit
	assert_x 'count(//testcase[@name="shaky"]/flakyFailure) + 10 * count(//testcase[@name="shaky"]/failure)' "1"
	assert_x '//testcase[@name="shaky"]/flakyFailure/@message' "FLAKY: passed on attempt 2; attempt 1: FAIL: exit 1"
	assert_x '//testcase[@name="ghost"]/error/@type' "not-run"
	assert_x '//testcase[@name="ghost"]/error/@message' "NOT-RUN: no agent reported it"
}

@test "report: any unit name and any output bytes still give well-formed XML and TAP" {
	printf '%s\n' 'a&b<c>"d"'"'e'" "$(printf 'bad\377utf8 \001ctl')" ']]>#x\y' 'ünï ✓' > slice
	corral-run-slice -c 'printf "x\377\376 <&> ]]> \001\002 \033[0m \357\277\276\n"; exit 1' -l out/logs 0 slice || true
	corral-merge -q -o out out/logs || true
	run -0 corral-report -j junit.xml out
	run -0 --separate-stderr xmllint --noout junit.xml
	assert_stderr ""
	assert_x 'count(//testcase)' "4"
	assert_x '//testcase[2]/@name' "a&b<c>\"d\"'e'"
	assert_x '//testcase[1]/@name' ']]>#x\y'
	assert_x '//testcase[3]/@name' "$(printf 'bad\357\277\275utf8 \357\277\275ctl')"
	assert_x '//testcase[4]/@name' "ünï ✓"
	run -0 iconv -f UTF-8 -t UTF-8 junit.xml
	run -0 corral-report -t out
	printf '%s\n' "$output" > out.tap
	run -1 prove --exec cat out.tap
	assert_contains "$output" "Failed 4/4 subtests"
	refute_contains "$output" "Parse errors"
}

@test "report: TAP version 13 that prove reads: a plan, ok and not ok, YAML diagnostics with status, note and output tail" {
	results 'case $CORRAL_UNIT in b) echo "out of cheese"; exit 2 ;; esac' a b 'c#1'
	run -0 --separate-stderr corral-report -t out
	assert_stderr ""
	assert_equal "TAP version 13" "${lines[0]}"
	assert_equal "1..3" "${lines[1]}"
	assert_equal "ok 1 - a" "${lines[2]}"
	assert_equal "not ok 2 - b" "${lines[3]}"
	assert_contains "$output" '  status: "fail"'
	assert_contains "$output" '  message: "FAIL: exit 2: out of cheese"'
	assert_contains "$output" '  output: "out/logs/agent-0/2.2.out"'
	assert_contains "$output" '  tail: "out of cheese\x0a"'
	assert_contains "$output" 'ok 3 - c\#1'
	printf '%s\n' "$output" > out.tap
	run -1 prove -v --exec cat out.tap
	assert_contains "$output" "Failed 1/3 subtests"
	refute_contains "$output" "Parse errors"
	results true a c
	corral-report -t out > pass.tap
	run -0 prove --exec cat pass.tap
	assert_contains "$output" "All tests successful."
}

@test "report: a YAML diagnostic with a double quote and a backslash reads back, through TAP::Parser, as the very note and output" {
	results 'printf "%s\\n" "say \"hi\" back\\slash"; exit 1' 'q"u\b'
	run -0 --separate-stderr corral-report -t out
	assert_contains "$output" '  message: "FAIL: exit 1: say \"hi\" back\\slash"'
	printf '%s\n' "$output" > out.tap
	run -0 --separate-stderr perl -MTAP::Parser -e '
		my $p = TAP::Parser->new({ source => $ARGV[0] });
		while (my $r = $p->next) {
			print $r->description, "\n" if $r->is_test;
			print $r->data->{message}, "|", $r->data->{tail} if $r->is_yaml;
		}' out.tap
	# a TAP description keeps its escapes; TAP::Parser leaves them
	assert_equal '- q"u\\b' "${lines[0]}"
	assert_equal 'FAIL: exit 1: say "hi" back\slash|say "hi" back\slash' "${lines[1]}"
}

@test "report: a segfault behind the shell is a crash error in JUnit and a crash in TAP, the signal named" {
	results 'sh -c "kill -SEGV \$\$"' seg.sh
	local note='CRASH: signal 11 (SIGSEGV), reported by the shell as exit 139'
	run -0 corral-report -j junit.xml out
	assert_x '//testcase[@name="seg.sh"]/error/@type' "crash"
	assert_x '//testcase[@name="seg.sh"]/error/@message' "$note"
	run -0 corral-report -t out
	assert_equal "not ok 1 - seg.sh" "${lines[2]}"
	assert_contains "$output" '  status: "crash"'
	assert_contains "$output" "  message: \"$note\""
}

@test "report: -j replaces the file atomically and leaves an unchanged one alone" {
	results true a
	corral-report -j junit.xml out
	touch -d 2001-01-01 junit.xml
	run -0 corral-report -j junit.xml out
	run -0 stat -c %Y junit.xml
	assert_output "$(date -d 2001-01-01 +%s)"
	run -0 find . -maxdepth 1 -name '.junit.xml.tmp*'
	assert_output ""
}

@test "report: a line that is not a record is named and exits 2" {
	results true a
	echo '{"unit":' >> out/successes.jsonl
	run -2 --separate-stderr corral-report -t out
	assert_contains "$stderr" "corral-report: successes.jsonl line 2: invalid JSON at byte"
}

@test "report: a write error on standard output exits 2" {
	results true a
	run -2 --separate-stderr sh -c 'corral-report -t out > /dev/full'
	assert_stderr "corral-report: cannot write standard output: No space left on device"
}

@test "report: every testcase has system-out with its unit's output, passing ones too, at most -o bytes from a line start" {
	results 'echo "hello from $CORRAL_UNIT"; if [ "$CORRAL_UNIT" = long ]; then seq 1000; fi' short long
	run -0 corral-report -j junit.xml out
	assert_x '//testcase[@name="short"]/system-out' "hello from short"
	run -0 corral-report -o 12 -j junit.xml out
	assert_x '//testcase[@name="long"]/system-out' "$(printf '999\n1000')"
	run -0 corral-report -o 0 -j junit.xml out
	assert_x '//testcase[@name="long"]/system-out' "$(echo "hello from long"; seq 1000)"
	assert_x 'count(//testcase[not(system-out)])' "0"
}

@test "report: a testsuite's time is the wall time of its units, not the sum, with a timestamp and a hostname; a record's host names its own suite" {
	mkdir out
	{ record a true pass 2026-01-01T00:00:10.000Z 10000
	  record b true pass 2026-01-01T00:00:12.000Z 10000
	  record c true pass 2026-01-01T00:00:30.500Z 500 node7; } > out/successes.jsonl
	junit
	assert_x '//testsuite[1]/@time' "12.000"
	assert_x '//testsuite[1]/@timestamp' "2026-01-01T00:00:00"
	assert_x '//testsuite[1]/@hostname' "$(hostname)"
	assert_x '//testsuite[@hostname="node7"]/testcase/@name' "c"
	assert_x '//testsuite[@hostname="node7"]/@timestamp' "2026-01-01T00:00:30"
	assert_x '/testsuites/@time' "12.500"
}

@test "report: -n names the suite and the root, which are 'corral' without it" {
	results true a
	run -0 corral-report -j junit.xml out
	assert_x '/testsuites/@name' "corral"
	run -0 corral-report -n 'my "project"' -j junit.xml out
	assert_x '/testsuites/@name' 'my "project"'
	assert_x '//testsuite/@name' 'my "project"'
}

@test "report: a crash, a timeout, an error or a not-run unit is an error, a failure a failure, a skip skipped, and the counts say so" {
	mkdir out
	{ record p true pass; record s true skip; } > out/successes.jsonl
	{ record f false fail; record c false crash; record t false timeout
	  record e false error; record n false not-run; } > out/failures.jsonl
	junit
	assert_x 'concat(count(//testcase/failure), " ", count(//testcase/error), " ", count(//testcase/skipped))' "1 4 1"
	assert_x '//testcase[@name="t"]/error/@type' "timeout"
	assert_x '//testcase[@name="s"]/skipped/@message' "SKIP: why"
	assert_x 'concat(/testsuites/@tests, " ", /testsuites/@failures, " ", /testsuites/@errors, " ", /testsuites/@skipped)' "7 1 4 1"
	assert_x 'concat(//testsuite/@tests, " ", //testsuite/@failures, " ", //testsuite/@errors, " ", //testsuite/@skipped)' "7 1 4 1"
	run -0 corral-report -t out
	assert_contains "$output" "ok 6 - s # SKIP SKIP: why"
}

@test "report: a unit that printed TAP gets a testsuite of its own with a testcase per test; without its output it is one testcase" {
	bats_file "$PWD/t.bats"
	results "if [ \"\$CORRAL_UNIT\" = plain ]; then exit 0; fi; '$PWD/bats-tap' \"\$CORRAL_UNIT\"" "$PWD/t.bats" plain
	junit -n proj
	local suite="//testsuite[@name='$PWD/t.bats']"
	assert_x "concat($suite/@tests, ' ', $suite/@failures, ' ', $suite/@errors, ' ', $suite/@skipped)" "4 2 0 1"
	assert_x "$suite/testcase[2]/@name" "second fails"
	run -0 x "$suite/testcase[4]/failure"
	assert_contains "$output" "expected 3, got 4"
	assert_x "$suite/testcase[3]/skipped/@message" "no db"
	assert_x "$suite/testcase[1]/@classname" "$PWD/t.bats"
	assert_x "//testsuite[@name='proj']/testcase/@name" "plain"
	assert_x '/testsuites/@tests' "5"
	rm -r out/logs
	run -0 corral-report -n proj -j junit.xml out
	run -0 xmllint --xpath 'concat(count(//testsuite), " ", count(//testcase), " ", //testcase[@name="'"$PWD"'/t.bats"]/failure/@message)' junit.xml
	assert_output "1 2 FAIL: exit 1: not ok 2 second fails"
}

@test "report: python3-junitparser and test-results-parser (npm) read the report, their counts of its cases match its own" {
	need_junitparser
	need_npm_consumer
	bats_file "$PWD/t.bats"
	results "case \$CORRAL_UNIT in ok.sh) exit 0 ;; bad.sh) echo nope; exit 1 ;; seg.sh) sh -c 'kill -SEGV \$\$'; exit ;; esac; '$PWD/bats-tap' \"\$CORRAL_UNIT\"" \
		ok.sh bad.sh seg.sh "$PWD/t.bats"
	record skip.sh true skip >> out/successes.jsonl
	run -0 corral-report -n proj -j junit.xml out
	run -0 junitparser junit.xml
	assert_output "proj 4 1 1 1 ok
$PWD/t.bats 4 2 0 1 ok"
	run -0 npm_consumer junit.xml
	assert_output "proj 4 2 1
$PWD/t.bats 4 2 1
total 6 2 3 1 2"
}

@test "report: a unit that exits with a skip code is a skipped testcase, counted in skipped, and marked as a skip directive in TAP" {
	printf '%s\n' gone here > slice
	corral-run-slice -K 77 -c 'if [ "$CORRAL_UNIT" = gone ]; then echo "no database here" >&2; exit 77; fi' -l out/logs 0 slice || true
	corral-merge -q -o out out/logs || true
	run -0 corral-report -j junit.xml out
	assert_x '//testcase[@name="gone"]/skipped/@message' "SKIP: exit 77: no database here"
	assert_x 'concat(/testsuites/@tests, " ", /testsuites/@failures, " ", /testsuites/@errors, " ", /testsuites/@skipped)' "2 0 0 1"
	run -0 corral-report -t out
	assert_equal "ok 1 - gone # SKIP SKIP: exit 77: no database here" "${lines[2]}"
}

@test "report: bats --timing's 'in Nms' is a test's time, not part of its name" {
	results 'printf "1..2\nok 1 quick one in 1234ms\nok 2 plain\n"' t
	run -0 corral-report -j junit.xml out
	assert_x 'concat(//testcase[1]/@name, "|", //testcase[1]/@time, "|", //testcase[2]/@name, "|", //testcase[2]/@time)' "quick one|1.234|plain|0.000"
}

@test "report: a record whose output names a file outside the run's own output directory, by path, by .. or through a planted link, never has it read" {
	results 'echo own tail; exit 1' bad
	echo MARKER-OUTSIDE > "$PWD/secret"
	own=$(jq -r .output out/failures.jsonl)
	junit
	assert_x '//testcase[@name="bad"]/system-out' "own tail"
	for o in "$PWD/secret" "out/logs/agent-0/../../../secret" "logs/agent-0/../../secret" "out/logs/agent-1/../../../secret"; do
		jq -c --arg o "$o" '.output = $o' out/failures.jsonl > f.new && mv f.new out/failures.jsonl
		junit
		run ! grep -q MARKER-OUTSIDE junit.xml
		run -0 corral-report -t out
		refute_contains "$output" MARKER-OUTSIDE
	done
	# a link planted where the agent's own output was
	jq -c --arg o "$own" '.output = $o' out/failures.jsonl > f.new && mv f.new out/failures.jsonl
	rm "$own"
	ln -s "$PWD/secret" "$own"
	junit
	run ! grep -q MARKER-OUTSIDE junit.xml
}
