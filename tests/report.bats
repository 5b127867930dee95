#!/usr/bin/env bats
# report.bats -- corral-report turns merged results into JUnit XML that
# xmllint accepts and TAP that prove reads, whatever the bytes.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
	_corral_tmpdir
}

USAGE='usage: corral-report [-ht] [-j FILE] DIR'

# results CMD UNIT...: run the units with CMD (one retry) and merge into out/
results() {
	local cmd=$1
	shift
	printf '%s\n' "$@" > slice
	corral-run-slice -R 1 -c "$cmd" -l out/logs 0 slice || true
	corral-merge -q -o out out/logs || true
}

@test "report: -h prints usage to stdout and exits 0" {
	run -0 --separate-stderr corral-report -h
	assert_synopsis "$USAGE"
	assert_stderr ""
}

@test "report: no DIR, or neither -j nor -t, prints usage to stderr and exits 2" {
	run -2 --separate-stderr corral-report -t
	assert_stderr "$USAGE"
	run -2 --separate-stderr corral-report out
	assert_stderr "$USAGE"
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
	run -0 xmllint --xpath 'name(/*)' junit.xml
	assert_output "testsuites"
	run -0 xmllint --xpath 'string(/testsuites/@tests)' junit.xml
	assert_output "3"
	run -0 xmllint --xpath 'string(/testsuites/@failures)' junit.xml
	assert_output "1"
	run -0 xmllint --xpath 'count(//testcase)' junit.xml
	assert_output "3"
	run -0 xmllint --xpath 'string(//testcase[@name="tests/unit/bad.sh"]/@classname)' junit.xml
	assert_output "tests.unit"
	run -0 xmllint --xpath 'string(//testcase[@name="top.sh"]/@file)' junit.xml
	assert_output "top.sh"
	run -0 xmllint --xpath 'string(//testcase[@name="tests/unit/bad.sh"]/failure/@message)' junit.xml
	assert_output "FAIL: exit 1: expected 3, got 4"
	run -0 xmllint --xpath 'string(//testcase[@name="tests/unit/bad.sh"]/failure)' junit.xml
	assert_output "expected 3, got 4"
	run -0 xmllint --xpath 'count(//testcase[@name="tests/unit/ok.sh"]/*)' junit.xml
	assert_output "0"
}

@test "report: a flaky unit gets a flakyFailure and no failure; a not-run unit is a failure with the reason" {
	results 'if [ "$CORRAL_UNIT" = shaky ] && [ "$CORRAL_ATTEMPT" = 1 ]; then exit 1; fi' shaky fine
	printf '%s\n' shaky fine ghost > units
	corral-merge -q -u units -o out out/logs || true
	run -0 corral-report -j junit.xml out
	run -0 xmllint --noout junit.xml
	run -0 xmllint --xpath 'count(//testcase[@name="shaky"]/flakyFailure) + 10 * count(//testcase[@name="shaky"]/failure)' junit.xml
	assert_output "1"
	run -0 xmllint --xpath 'string(//testcase[@name="shaky"]/flakyFailure/@message)' junit.xml
	assert_output "FLAKY: passed on attempt 2; attempt 1: FAIL: exit 1"
	run -0 xmllint --xpath 'string(//testcase[@name="ghost"]/failure/@type)' junit.xml
	assert_output "not-run"
	run -0 xmllint --xpath 'string(//testcase[@name="ghost"]/failure/@message)' junit.xml
	assert_output "NOT-RUN: no agent reported it"
}

@test "report: any unit name and any output bytes still give well-formed XML and TAP" {
	printf '%s\n' 'a&b<c>"d"'"'e'" "$(printf 'bad\377utf8 \001ctl')" ']]>#x\y' 'ünï ✓' > slice
	corral-run-slice -c 'printf "x\377\376 <&> ]]> \001\002 \033[0m \357\277\276\n"; exit 1' -l out/logs 0 slice || true
	corral-merge -q -o out out/logs || true
	run -0 corral-report -j junit.xml out
	run -0 --separate-stderr xmllint --noout junit.xml
	assert_stderr ""
	run -0 xmllint --xpath 'count(//testcase)' junit.xml
	assert_output "4"
	run -0 xmllint --xpath 'string(//testcase[2]/@name)' junit.xml
	assert_output "a&b<c>\"d\"'e'"
	run -0 xmllint --xpath 'string(//testcase[1]/@name)' junit.xml
	assert_output ']]>#x\y'
	run -0 xmllint --xpath 'string(//testcase[3]/@name)' junit.xml
	assert_output "$(printf 'bad\357\277\275utf8 \357\277\275ctl')"
	run -0 xmllint --xpath 'string(//testcase[4]/@name)' junit.xml
	assert_output "ünï ✓"
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

@test "report: a segfault behind the shell is a crash failure in JUnit and a crash in TAP, the signal named" {
	results 'sh -c "kill -SEGV \$\$"' seg.sh
	local note='CRASH: signal 11 (SIGSEGV), reported by the shell as exit 139'
	run -0 corral-report -j junit.xml out
	run -0 xmllint --xpath 'string(//testcase[@name="seg.sh"]/failure/@type)' junit.xml
	assert_output "crash"
	run -0 xmllint --xpath 'string(//testcase[@name="seg.sh"]/failure/@message)' junit.xml
	assert_output "$note"
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
