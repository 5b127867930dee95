#!/usr/bin/env bats
# scoreboard.bats -- corral-scoreboard tallies merged results by verdict and
# never mistakes "could not look" for "found nothing".
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
	mkdir run
}

USAGE='usage: corral-scoreboard [-fhju] [-s N] [-t N] [-U FILE] DIR'

# row FILE UNIT NOTE: append one record to run/FILE
row() {
	jq -nc --arg u "$2" --arg n "$3" '{agent_id: "0", unit: $u, ok: true, note: $n}' >> "run/$1"
}

@test "scoreboard: -h prints usage to stdout and exits 0" {
	assert_help "$USAGE" corral-scoreboard -h
}

@test "scoreboard: no DIR prints usage to stderr and exits 2" {
	assert_usage_error "$USAGE" corral-scoreboard
}

@test "scoreboard: -j and -u together are refused" {
	run -2 --separate-stderr corral-scoreboard -j -u run
	assert_stderr "corral-scoreboard: -j and -u may not be given together"
}

@test "scoreboard: counts by verdict, most first, ties in first-seen order" {
	row successes.jsonl a "CAUGHT: one"
	row successes.jsonl b "caught: two"
	row successes.jsonl c "MANY: x"
	row successes.jsonl d "MANY: y"
	row successes.jsonl e "MANY: z"
	row failures.jsonl f "GAP: missed"
	row failures.jsonl g "FEW: x"
	run -0 --separate-stderr corral-scoreboard run
	assert_output "corral scoreboard  run
========================================================
  7 units  ->  5 successes, 2 failures
  by verdict:
    MANY             3
    CAUGHT           2
    GAP              1
    FEW              1"
}

@test "scoreboard: a note without a verdict counts as OK or FAIL by its file" {
	row successes.jsonl a "just words"
	row failures.jsonl b "two words: here"
	row failures.jsonl c ": empty head"
	run -0 corral-scoreboard -j run
	assert_json '.by_verdict == {"FAIL": 2, "OK": 1}'
}

@test "scoreboard: a verdict is at most 24 characters, counted as characters not bytes" {
	row successes.jsonl a "$(printf 'x%.0s' $(seq 24)): ok"
	row successes.jsonl b "$(printf 'y%.0s' $(seq 25)): too long"
	row successes.jsonl c "$(printf 'é%.0s' $(seq 24)): ok in UTF-8"
	run -0 corral-scoreboard -j run
	assert_json '.by_verdict | keys == ["OK", "XXXXXXXXXXXXXXXXXXXXXXXX", "éééééééééééééééééééééééé"]'
}

@test "scoreboard: a tab in the head is white space, so no verdict" {
	row successes.jsonl a "$(printf 'two\twords: x')"
	run -0 corral-scoreboard -j run
	assert_json '.by_verdict == {"OK": 1}'
}

@test "scoreboard: membership of the file decides success, not the row's ok" {
	jq -nc '{unit: "a", ok: false, note: "X: y"}' > run/successes.jsonl
	run -0 corral-scoreboard -j run
	assert_json '.successes == 1 and .failures == 0'
}

@test "scoreboard: a note that is a number, list or object does not crash it" {
	jq -nc '{unit: "a", ok: true, note: 42}' > run/successes.jsonl
	jq -nc '{unit: "b", ok: false, note: [1, 2]}' >> run/failures.jsonl
	jq -nc '{unit: "c", ok: false, note: {"k": "v"}}' >> run/failures.jsonl
	run -0 corral-scoreboard -j run
	assert_json '.units == 3 and .by_verdict == {"OK": 1, "FAIL": 2}'
}

@test "scoreboard: invalid UTF-8 in a note is scored, not a crash" {
	printf '{"unit":"a","ok":true,"note":"\377\376: bad bytes"}\n' > run/successes.jsonl
	run -0 --separate-stderr corral-scoreboard run
	assert_contains "$output" "1 unit  ->  1 success, 0 failures"
}

@test "scoreboard: a missing directory could not be told, exit 2" {
	run -2 --separate-stderr corral-scoreboard nothere
	assert_contains "$output" "COULD NOT TELL: nothere does not exist."
}

@test "scoreboard: a file instead of a directory could not be told, exit 2" {
	touch plain
	run -2 corral-scoreboard plain
	assert_contains "$output" "COULD NOT TELL: plain is a file, not a directory."
}

@test "scoreboard: a directory with neither result file is not a fan-out output, exit 2" {
	run -2 corral-scoreboard run
	assert_contains "$output" "COULD NOT TELL: run holds neither successes.jsonl nor failures.jsonl, so it is not a fan-out output directory."
}

@test "scoreboard: result files without a row are a run that recorded nothing, exit 2" {
	: > run/successes.jsonl
	printf '\n  \n' > run/failures.jsonl
	run -2 corral-scoreboard run
	assert_contains "$output" "COULD NOT TELL: run holds successes.jsonl and failures.jsonl but no scoreable rows"
}

@test "scoreboard: an unreadable line is reported with file and line, and exits 2" {
	row successes.jsonl a "PASS: fine"
	printf '{"unit":"b","ok":tr\n' >> run/successes.jsonl
	run -2 corral-scoreboard run
	assert_contains "$output" "1 line(s) could not be read:"
	assert_contains "$output" "successes.jsonl line 2: invalid JSON at byte"
	assert_contains "$output" "1 unit  ->  1 success, 0 failures"
}

@test "scoreboard: failures alone still score, exit 0" {
	row failures.jsonl a "GAP: x"
	run -0 corral-scoreboard -j run
	assert_json '.found == ["failures.jsonl"] and .failures == 1'
}

@test "scoreboard: -f lists each failed unit with its note and output" {
	row successes.jsonl a "PASS: x"
	jq -nc '{unit: "t/b.sh", ok: false, note: "FAIL: exit 1: boom", output: "logs/agent-0/2.out"}' > run/failures.jsonl
	run -0 corral-scoreboard -f run
	assert_contains "$output" "  failed units:
    t/b.sh  FAIL: exit 1: boom
      output: logs/agent-0/2.out"
}

@test "scoreboard: -t N shows the last N lines of each failed unit's output under it, each cut at 200 bytes, escaped, and names an output it cannot read" {
	row successes.jsonl a "PASS: x"
	{
		seq -f 'early %g' 1 5000
		printf 'second to last\n'
		printf 'x%.0s' $(seq 300); printf '\n'
		printf 'ends \033[31mred\n'
	} > out.txt
	jq -nc --arg o "$PWD/out.txt" '{unit: "b", ok: false, note: "FAIL: exit 1", output: $o}' > run/failures.jsonl
	jq -nc '{unit: "c", ok: false, note: "FAIL: exit 2", output: "/nonexistent/3.out"}' >> run/failures.jsonl
	run -0 --separate-stderr corral-scoreboard -f -t 3 run
	assert_contains "$output" "    b  FAIL: exit 1
      output: $PWD/out.txt
      | second to last
      | $(printf 'x%.0s' $(seq 200))
      | ends ?[31mred
    c  FAIL: exit 2
      output: /nonexistent/3.out
      (cannot open '/nonexistent/3.out': No such file or directory)"
	run -0 --separate-stderr corral-scoreboard -f -t 0 run
	refute_contains "$output" "|"
	run -0 --separate-stderr corral-scoreboard -f run
	refute_contains "$output" "second to last"
	run -2 --separate-stderr corral-scoreboard -f -t 1001 run
	assert_contains "$stderr" "-t"
}

@test "scoreboard: -f groups failed units that share a note, naming a few, and lists at most 20 notes, then how many more and where all of them are" {
	local i
	for i in $(seq 1 34); do row failures.jsonl "tests/test_$i.py" "FAIL: exit 1: No module named pytest"; done
	row failures.jsonl lone "FAIL: exit 2: its own"
	for i in $(seq 1 25); do row failures.jsonl "odd-$i" "FAIL: exit 1: reason $i"; done
	run -0 corral-scoreboard -f run
	assert_contains "$output" "  failed units:
    34 units  FAIL: exit 1: No module named pytest
      tests/test_1.py, tests/test_2.py, tests/test_3.py and 31 more
    lone  FAIL: exit 2: its own
    odd-1  FAIL: exit 1: reason 1"
	assert_contains "$output" "    odd-18  FAIL: exit 1: reason 18
    ... and 7 more failures with 7 other notes: corral-scoreboard -u run lists every failed unit"
	refute_contains "$output" "odd-19 "
	[ "$(wc -l <<<"$output")" -lt 40 ] || flunk "$(wc -l <<<"$output") lines"
}

@test "scoreboard: -u prints the failed units, one per line, and nothing else" {
	row successes.jsonl a "PASS: x"
	row failures.jsonl 'b c' "FAIL: x"
	row failures.jsonl d "NOT-RUN: x"
	run -0 --separate-stderr corral-scoreboard -u run
	assert_output "$(printf 'b c\nd')"
	assert_stderr ""
}

@test "scoreboard: -U FILE writes what -u prints to FILE beside the board, empty when the run cannot be told, and a FILE that cannot be written exits 2" {
	row successes.jsonl a "PASS: x"
	row failures.jsonl 'b c' "FAIL: x"
	row failures.jsonl d "NOT-RUN: x"
	run -0 corral-scoreboard -u run
	local units=$output
	run -0 corral-scoreboard -f -U failed run
	assert_contains "$output" "failed units:"
	assert_equal "$units" "$(cat failed)"
	run -2 --separate-stderr corral-scoreboard -U failed nowhere
	assert_equal 0 "$(wc -c < failed)"
	# a path through a regular file: refused for root too
	echo file > plain
	run -2 --separate-stderr corral-scoreboard -U plain/failed run
	assert_contains "$output" "by verdict:"
	assert_contains "$stderr" "corral-scoreboard: cannot create 'plain/"
	assert_contains "$stderr" "Not a directory"
}

@test "scoreboard: a write error on standard output exits 2" {
	row successes.jsonl a "PASS: x"
	run -2 --separate-stderr sh -c 'corral-scoreboard run > /dev/full'
	assert_stderr "corral-scoreboard: cannot write standard output: No space left on device"
}

@test "scoreboard: it scores what corral.mk's merge wrote" {
	mkdir -p proj
	printf 'CORRAL_UNITS = a b c\nCORRAL_CMD = echo "CAUGHT: $$CORRAL_UNIT" > "$$CORRAL_NOTE"; test "$$CORRAL_UNIT" != c\ninclude %s/corral.mk\n' "$CORRAL_ROOT" > proj/Makefile
	run -2 make -C proj -j3 corral-run
	run -0 corral-scoreboard -j proj/.corral
	assert_json '.units == 3 and .successes == 2 and .by_verdict.CAUGHT == 3'
}

@test "scoreboard: units whose records count TAP tests add a line of tests, and -j a tests object" {
	row successes.jsonl plain "PASS: exit 0"
	jq -nc '{unit: "a.bats", ok: true, note: "PASS: exit 0", tests: {total: 170, passed: 169, failed: 0, skipped: 1}}' >> run/successes.jsonl
	jq -nc '{unit: "b.bats", ok: false, note: "FAIL: exit 1: not ok 3 x", tests: {total: 9, passed: 8, failed: 1, skipped: 0}}' >> run/failures.jsonl
	run -0 corral-scoreboard run
	assert_equal "  179 tests in 2 units  ->  177 passed, 1 failed, 1 skipped" "${lines[3]}"
	run -0 corral-scoreboard -j run
	assert_json '.tests == {"units": 2, "total": 179, "failed": 1, "skipped": 1}'
	rm run/*.jsonl
	row successes.jsonl plain "PASS: exit 0"
	run -0 corral-scoreboard -j run
	assert_json '.tests == null'
}

# hostile_row FILE UNIT NOTE: a record as JSON carries it: C0 and DEL as
# \u escapes, every other byte raw (invalid UTF-8 included)
hostile_row() {
	local u n
	u=$(printf '%s' "$2" | perl -pe 's/([\x00-\x1f\x7f])/sprintf("\\u%04x", ord $1)/ge')
	n=$(printf '%s' "$3" | perl -pe 's/([\x00-\x1f\x7f])/sprintf("\\u%04x", ord $1)/ge')
	printf '{"agent_id":"0","unit":"%s","ok":false,"note":"%s","duration_ms":5}\n' "$u" "$n" >> "run/$1"
}

@test "scoreboard: a unit's name and note holding OSC, clear screen, CR, C0, DEL, C1 and invalid UTF-8 reach no terminal: -f, -s and the plain board print none of those bytes, the rest of the name shows; -u lists the name as it is" {
	hostile_row failures.jsonl "u$HOSTILE" "FAIL$HOSTILE: n$HOSTILE"
	hostile_row successes.jsonl "v$HOSTILE" "OK: $HOSTILE"
	run corral-scoreboard -f -s 5 run
	printf '%s\n' "$output" > board
	assert_shown board
	assert_contains "$output" "u?]0;pwned??[2J?X?Y????[31m????"
	run corral-scoreboard run
	printf '%s\n' "$output" > plain
	assert_shown plain
	corral-scoreboard -u run > units || true
	assert_equal "u$HOSTILE" "$(cat units)"
}
