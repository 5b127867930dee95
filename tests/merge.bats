#!/usr/bin/env bats
# merge.bats -- corral-merge, the single writer of the shared result files:
# every unit exactly once, byte for byte, atomically, or nothing at all.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
	mkdir logs
}

teardown() {
	if [ -n "${VICTIM:-}" ]; then
		kill -KILL "$VICTIM" 2>/dev/null || true
	fi
	if [ -n "${MNT:-}" ] && mountpoint -q "$MNT"; then
		umount "$MNT"
	fi
}

USAGE='usage: corral-merge [-fqs] [-k SHARD] [-o OUTDIR] [-r RUN] [-u UNITS] LOGDIR...
       corral-merge -S [-fq] [-H HISTORY] [-r RUN] -o OUTDIR -u UNITS SHARDDIR...'

# rec UNIT OK [MORE]: one record line (UNIT must need no JSON escaping)
rec() {
	printf '{"agent_id":"0","unit":"%s","ok":%s%s}\n' "$1" "$2" "${3:+,$3}"
}

# state [DIR]: digest and mtime of the three result files in DIR (.)
state() {
	local f
	for f in successes.jsonl failures.jsonl summary.json; do
		printf '%s %s\n' "$(sha256sum < "${1:-.}/$f")" \
			"$(stat -c %y "${1:-.}/$f")"
	done
}

# a first good merge, so that "unchanged" has something to compare with
good_merge() {
	rec a true > logs/agent-0.jsonl
	rec b false >> logs/agent-0.jsonl
	corral-merge -q logs || [ "$?" -eq 1 ]
	touch -d '2001-01-01' successes.jsonl failures.jsonl summary.json
}

# no_temps DIR: no temporary file of a merge is left in DIR
no_temps() {
	local left
	left=$(find "${1:-.}" -maxdepth 1 -name '.*.tmp.*')
	[ -z "$left" ] || flunk "temporaries left: $left"
}

# --- usage --------------------------------------------------------------

@test "merge: -h prints usage to stdout and exits 0" {
	assert_help "$USAGE" corral-merge -h
}

@test "merge: missing LOGDIR prints usage to stderr and exits 2" {
	assert_usage_error "$USAGE" corral-merge
}

@test "merge: an unknown flag or an empty LOGDIR prints usage and exits 2" {
	assert_usage_error "$USAGE" corral-merge logs ''
	run -2 --separate-stderr corral-merge -x logs
	assert_contains "$stderr" "$USAGE"
}

@test "merge: an empty option value is refused with exit 2" {
	run -2 --separate-stderr corral-merge -r '' logs
	assert_stderr "corral-merge: -r: the value is empty"
	assert_no_file summary.json
}

# --- unreadable input ---------------------------------------------------

@test "merge: an unreadable LOGDIR is named with cannot open and exits 2" {
	run -2 --separate-stderr corral-merge nothere
	assert_output ""
	assert_stderr "corral-merge: cannot open 'nothere': No such file or directory"
	touch plain
	run -2 --separate-stderr corral-merge plain
	assert_stderr "corral-merge: cannot open 'plain': Not a directory"
	assert_no_file summary.json
}

@test "merge: an agent log that cannot be read exits 2 and changes nothing" {
	good_merge
	local before=$(state)
	mkdir logs/agent-1.jsonl
	run -2 --separate-stderr corral-merge logs
	assert_stderr "corral-merge: 'logs/agent-1.jsonl' is a directory, not a regular file"
	assert_equal "$before" "$(state)"
	no_temps
}

@test "merge: an unreadable UNITS file is named and exits 2" {
	rec a true > logs/agent-0.jsonl
	run -2 --separate-stderr corral-merge -u nounits logs
	assert_stderr "corral-merge: cannot open 'nounits': No such file or directory"
	assert_no_file successes.jsonl
}

@test "merge: an OUTDIR through a regular file fails with exit 2 and writes nothing" {
	rec a true > logs/agent-0.jsonl
	touch plain
	run -2 --separate-stderr corral-merge -o plain/x logs
	assert_output ""
	assert_stderr "corral-merge: cannot create 'plain': Not a directory"
	run -0 ls -A
	assert_output "$(printf 'logs\nplain')"
}

# --- routing and counts -------------------------------------------------

@test "merge: ok true goes to successes, ok false to failures, with exact counts" {
	{ rec a true; rec b false; rec c true '"status":"flaky"'; } > logs/agent-0.jsonl
	{ rec d false '"status":"timeout"'; rec e true; } > logs/agent-1.jsonl
	run -1 --separate-stderr corral-merge logs
	assert_output "merged 5 units from 2 agents: 3 passed (1 flaky), 2 failed"
	assert_stderr ""
	run -0 jq -r .unit successes.jsonl
	assert_output "$(printf 'a\nc\ne')"
	run -0 jq -r .unit failures.jsonl
	assert_output "$(printf 'b\nd')"
	assert_json_eq '{"units":5,"merged":5,"attempts":5,"successes":3,"failures":2,
		"cached":0,"missing":0,"duplicates":0,"unexpected":0,"agents":2,
		"unfinished":[],"run":"none",
		"by_status":{"fail":1,"flaky":1,"pass":2,"timeout":1}}' \
		"$(cat summary.json)"
}

@test "merge: summary.json keeps a stable key order and ends in a newline" {
	rec a true > logs/agent-0.jsonl
	run -0 corral-merge -q logs
	assert_output ""
	run -0 jq -c keys_unsorted summary.json
	assert_output '["units","merged","attempts","successes","failures","cached","missing","duplicates","unexpected","agents","unfinished","run","by_status"]'
	run -0 tail -c 2 summary.json
	assert_output "}"
}

@test "merge: summary.json and the line count the units whose record holds a cached object, however the line is read, and nothing else" {
	# b's note holds a \u escape, which the merge's scanner leaves to cJSON;
	# c's last attempt is not cached; d's "cached" is no object
	{ rec a true '"cached":{"run":"r0","host":"h","at":"2026-01-01T00:00:00.000Z","key":"k"}'
	  rec b true '"note":"PASS: \u00e9","cached":{"run":"r0"}'
	  rec c true '"cached":{"run":"r0"}'
	  rec c true
	  rec d true '"cached":"yes"'
	  rec e false; } > logs/agent-0.jsonl
	run -1 --separate-stderr corral-merge logs
	assert_output "merged 5 units from 1 agent: 4 passed, 1 failed; 2 cached; 6 attempts"
	assert_json '.cached == 2' summary.json
}

@test "merge: exit 0 when complete and every unit passed" {
	{ rec a true; rec b true; } > logs/agent-0.jsonl
	run -0 --separate-stderr corral-merge logs
	assert_output "merged 2 units from 1 agent: 2 passed, 0 failed"
	assert_stderr ""
}

@test "merge: exit 1 when complete with failures" {
	{ rec a true; rec b false; } > logs/agent-0.jsonl
	run -1 --separate-stderr corral-merge -q logs
	assert_output ""
	assert_stderr ""
	assert_json '.failures == 1 and .successes == 1' summary.json
}

@test "merge: an empty log dir gives zero counts, empty files and exit 0" {
	run -0 --separate-stderr corral-merge logs
	assert_output "merged 0 units from 0 agents: 0 passed, 0 failed"
	assert_json '.units == 0 and .merged == 0 and .successes == 0 and
		.failures == 0 and .agents == 0 and .by_status == {}' summary.json
	[ ! -s successes.jsonl ] && [ ! -s failures.jsonl ] ||
		flunk "result files are not empty"
}

@test "merge: an empty log dir with -u writes every unit as not-run and exits 2" {
	printf 'a\nb\n' > units
	run -2 --separate-stderr corral-merge -u units logs
	assert_output "merged 0 units from 0 agents: 0 passed, 0 failed, 2 not run"
	assert_equal "${stderr_lines[0]}" "corral-merge: unit 'a' is missing: no agent reported it"
	assert_equal "${stderr_lines[1]}" "corral-merge: unit 'b' is missing: no agent reported it"
	assert_json '.units == 2 and .merged == 0 and .missing == 2 and .failures == 2' summary.json
}

@test "merge: OUTDIR defaults to the parent of LOGDIR, and -o is created" {
	mkdir -p .corral/logs
	rec a true > .corral/logs/agent-0.jsonl
	run -0 corral-merge -q .corral/logs/
	assert_file_exists .corral/successes.jsonl
	assert_no_file successes.jsonl
	run -0 corral-merge -q -o out/deep .corral/logs
	cmp out/deep/successes.jsonl .corral/successes.jsonl
	cmp out/deep/summary.json .corral/summary.json
}

# --- passthrough --------------------------------------------------------

@test "merge: lines pass through byte-identical: spacing, \\u00e9 escapes, invalid UTF-8" {
	printf '%s\n' '{ "unit" :"sp",   "ok" : true ,"note":"a  b" }' \
		'{"unit":"caf\u00e9","ok":true,"note":"\u00e9\t\"q\""}' > want
	printf '{"unit":"bin","ok":true,"note":"\xff\xfe\xc3("}\n' >> want
	cp want logs/agent-0.jsonl
	run -0 corral-merge -q logs
	cmp successes.jsonl want
	run -0 jq -r '.unit' successes.jsonl
	assert_equal "${lines[1]}" "café"
}

@test "merge: a 1 MB note passes through byte-identical" {
	{
		printf '{"unit":"big","ok":false,"note":"FAIL: '
		head -c 1048576 /dev/zero | tr '\0' x
		printf '"}\n'
	} > logs/agent-0.jsonl
	rec small true >> logs/agent-0.jsonl
	run -1 corral-merge -q logs
	head -n 1 logs/agent-0.jsonl | cmp - failures.jsonl
	assert_json '.note | length == 1048582' failures.jsonl
}

@test "merge: CRLF lines are accepted without their CR, blank lines skipped" {
	printf '{"unit":"a","ok":true}\r\n\n   \n\t\r\n{"unit":"b","ok":false}\r\n' \
		> logs/agent-0.jsonl
	run -1 --separate-stderr corral-merge logs
	assert_stderr ""
	run -0 cat successes.jsonl
	assert_output '{"unit":"a","ok":true}'
	run -0 od -c failures.jsonl
	refute_contains "$output" '\r'
	assert_json '.merged == 2' summary.json
}

# --- order --------------------------------------------------------------

@test "merge: agents come in numeric order (agent-10 after agent-2), then others bytewise" {
	local id
	for id in 10 2 b 1 a 0 x9; do
		rec "u$id" true > "logs/agent-$id.jsonl"
	done
	run -0 corral-merge -q logs
	run -0 jq -r .unit successes.jsonl
	assert_output "$(printf 'u%s\n' 0 1 2 10 a b x9)"
}

@test "merge: files that are not agent-ID.jsonl are ignored" {
	rec a true > logs/agent-0.jsonl
	rec b false > logs/notes.txt
	rec c false > logs/summary.jsonl
	rec d false > logs/agent-1.txt
	rec e false > logs/.agent-2.jsonl.tmp
	run -0 corral-merge logs
	assert_output "merged 1 unit from 1 agent: 1 passed, 0 failed"
	assert_json '.agents == 1' summary.json
}

@test "merge: the order logs were created in does not change a byte" {
	mkdir one two
	local k
	for k in 0 1 2 3 10 11; do
		{ rec "a$k" true; rec "b$k" false; } > "one/agent-$k.jsonl"
	done
	for k in 11 3 0 10 2 1; do
		cp "one/agent-$k.jsonl" "two/agent-$k.jsonl"
	done
	run -1 corral-merge -q -o o1 one
	run -1 corral-merge -q -o o2 two
	cmp o1/successes.jsonl o2/successes.jsonl
	cmp o1/failures.jsonl o2/failures.jsonl
	cmp o1/summary.json o2/summary.json
}

# --- identity: each unit once --------------------------------------------

@test "merge: the same unit twice in one log keeps the last attempt" {
	{ rec a false '"attempt":1'; rec b true; rec a true '"attempt":2'; } \
		> logs/agent-0.jsonl
	run -0 --separate-stderr corral-merge logs
	assert_stderr ""
	run -0 cat successes.jsonl
	assert_output "$(rec b true; rec a true '"attempt":2')"
	[ ! -s failures.jsonl ] || flunk "the first attempt was written"
	assert_json '.merged == 2 and .successes == 2 and .failures == 0' summary.json
}

@test "merge: the same unit in two logs exits 2, names it and both files, changes nothing" {
	good_merge
	local before=$(state)
	{ rec x true; rec y true; } > logs/agent-1.jsonl
	{ rec y false; rec a true; } > logs/agent-3.jsonl
	run -2 --separate-stderr corral-merge logs
	assert_output ""
	assert_stderr "$(printf '%s\n' \
		"corral-merge: unit 'y' is in both 'logs/agent-1.jsonl' and 'logs/agent-3.jsonl'" \
		"corral-merge: unit 'a' is in both 'logs/agent-0.jsonl' and 'logs/agent-3.jsonl'")"
	assert_equal "$before" "$(state)"
	no_temps
}

# fp1 PROG ARGS...: PROG as the tests' build makes it, every fingerprint
# cut to 1 bit so that all names collide (make test builds it and names
# its directory in CORRAL_TEST_FP1)
fp1() {
	[ -x "${CORRAL_TEST_FP1:-}/$1" ] ||
		{ echo "no $1 in CORRAL_TEST_FP1 ('${CORRAL_TEST_FP1:-}')" >&2; return 99; }
	PATH="$CORRAL_TEST_FP1:$PATH" "$@"
}

# collide LOGS...: 120 units over three logs (u-7 retried in its log, then
# passing), the units file naming them and u-missing, and one unit the
# units file lacks
collide_logs() {
	local i
	for i in $(seq 0 119); do
		rec "u-$i" "$([ $((i % 5)) = 0 ] && echo false || echo true)" \
			>> "logs/agent-$((i % 3)).jsonl"
	done
	rec u-7 false '"attempt":2' >> logs/agent-1.jsonl
	rec u-7 true '"attempt":3' >> logs/agent-1.jsonl
	rec u-extra true >> logs/agent-2.jsonl
	{ seq 0 119 | sed 's/^/u-/'; echo u-missing; } > units
}

@test "merge: units whose fingerprints collide (cut to 1 bit) are still told apart by name, with and without -u: none merged into another, no false duplicate, a retry still replaces" {
	collide_logs
	run -1 --separate-stderr corral-merge -o full logs
	assert_json '.merged == 121 and .duplicates == 0' full/summary.json
	run -1 --separate-stderr fp1 corral-merge -o cut logs
	assert_stderr ""
	local f
	for f in successes.jsonl failures.jsonl summary.json; do
		cmp full/$f cut/$f
	done
	assert_json '.unit == "u-7" and .attempt == 3' <(grep '"u-7"' cut/successes.jsonl)
	run -2 --separate-stderr corral-merge -o full-u -u units logs
	local want=$stderr
	assert_json '.merged == 121 and .missing == 1 and .unexpected == 1 and .duplicates == 0' full-u/summary.json
	run -2 --separate-stderr fp1 corral-merge -o cut-u -u units logs
	assert_equal "$stderr" "$want"
	for f in successes.jsonl failures.jsonl summary.json; do
		cmp full-u/$f cut-u/$f
	done
}

@test "merge: a unit in two logs is still named once as a duplicate when every fingerprint collides" {
	collide_logs
	rec u-4 true >> logs/agent-0.jsonl
	rec u-4 true '"attempt":2' >> logs/agent-0.jsonl
	run -2 --separate-stderr fp1 corral-merge logs
	assert_stderr "corral-merge: unit 'u-4' is in both 'logs/agent-0.jsonl' and 'logs/agent-1.jsonl'"
	[ ! -e summary.json ] || flunk "a merge with a duplicate wrote its results"
}

@test "merge: with every fingerprint cut to 1 bit the population is audited as with 64: a unit listed twice, one an unfinished agent held, missing and unknown units, the same messages and not-run records" {
	collide_logs
	echo u-3 >> units
	echo u-held >> units
	rec u-held true > logs/agent-9.jsonl.part
	run -2 --separate-stderr corral-merge -o full -u units logs
	local want=$stderr
	assert_contains "$want" "corral-merge: unit 'u-3' is listed more than once in 'units'; counted once"
	assert_contains "$want" "corral-merge: 'logs/agent-9.jsonl.part': agent '9' did not finish"
	assert_contains "$want" "corral-merge: unit 'u-missing' is missing: no agent reported it"
	assert_contains "$want" "corral-merge: unit 'u-extra' in 'logs/agent-2.jsonl' is not in 'units'"
	assert_json '.units == 122 and .missing == 2 and .unexpected == 1 and .duplicates == 0' full/summary.json
	assert_json '.note == "NOT-RUN: agent '"'9'"' did not finish"' <(grep '"u-held"' full/failures.jsonl)
	run -2 --separate-stderr fp1 corral-merge -o cut -u units logs
	assert_equal "$stderr" "$want"
	local f
	for f in successes.jsonl failures.jsonl summary.json; do
		cmp full/$f cut/$f
	done
}

@test "merge: -u read from a pipe (/dev/fd) audits as the same file does: the same not-run records and counts" {
	collide_logs
	rec u-last true '"at":"2024-05-01T10:00:00Z"' >> logs/agent-0.jsonl
	echo u-last >> units
	run -2 --separate-stderr corral-merge -o file -u units logs
	run -2 --separate-stderr bash -c 'corral-merge -o pipe -u <(cat units) logs'
	assert_contains "$stderr" "corral-merge: unit 'u-missing' is missing: no agent reported it"
	local f
	for f in successes.jsonl failures.jsonl summary.json; do
		cmp file/$f pipe/$f
	done
	[ -z "$(ls -A pipe | grep '^\.units')" ] ||
		flunk "the copy of the pipe was left: $(ls -A pipe)"
}

@test "merge: units of 10,000 bytes, longer than the merge reads of the units file at once, are matched by name and a missing one is written whole" {
	local long=$(printf 'u%.0s' $(seq 10000)) other=$(printf 'v%.0s' $(seq 10000))
	rec "$long" true > logs/agent-0.jsonl
	rec short true >> logs/agent-0.jsonl
	printf '%s\n' short "$long" "${long}x" "$other" > units
	run -2 --separate-stderr fp1 corral-merge -q -u units logs
	assert_json '.merged == 2 and .missing == 2 and .unexpected == 0' summary.json
	run -0 jq -r 'select(.status == "not-run") | .unit' failures.jsonl
	assert_output "$(printf '%s\n' "${long}x" "$other")"
}

@test "merge: -u over 200,000 units fits in 20 MB of data (the names stay in the units file, not in memory)" {
	skip_if_wrapped
	case "$CORRAL_TEST_BIN" in
	*/asan/*) skip "the sanitizer reserves its own memory" ;;
	esac
	awk -v dir=logs 'BEGIN {
		for (i = 0; i < 200000; i++) {
			printf "{\"agent_id\":\"%d\",\"unit\":\"tests/unit-%07d.bats\",\"ok\":true,\"note\":\"PASS: exit 0\",\"at\":\"2026-11-29T10:00:00.000Z\",\"run\":\"R1\"}\n", i % 16, i > (dir "/agent-" i % 16 ".jsonl")
			printf "tests/unit-%07d.bats\n", i > "units"
		} }'
	echo tests/never-ran.bats >> units
	run -2 --separate-stderr bash -c 'ulimit -d 20480 && corral-merge -q -u units logs'
	assert_stderr "corral-merge: unit 'tests/never-ran.bats' is missing: no agent reported it"
	assert_json '.units == 200001 and .merged == 200000 and .missing == 1' summary.json
}

@test "merge: missing expected units become not-run records, are named, and exit 2" {
	{ rec a true '"at":"2024-05-01T10:00:00Z","run":"r7"'
	  rec b false '"at":"2024-05-01T10:00:09Z","run":"r7"'; } > logs/agent-0.jsonl
	printf '%s\n' a b c d > units
	run -2 --separate-stderr corral-merge -u units logs
	assert_output "merged 2 units from 1 agent: 1 passed, 1 failed, 2 not run"
	assert_stderr "$(printf '%s\n' \
		"corral-merge: unit 'c' is missing: no agent reported it" \
		"corral-merge: unit 'd' is missing: no agent reported it")"
	run -0 jq -c 'select(.unit == "c")' failures.jsonl
	assert_json_eq '{"agent_id":null,"unit":"c","ok":false,
		"note":"NOT-RUN: no agent reported it","at":"2024-05-01T10:00:09Z",
		"status":"not-run","exit":null,"signal":null,"duration_ms":0,
		"attempt":0,"run":"r7","output":null,"inputs":null}' "$output"
	assert_json '.units == 4 and .merged == 2 and .missing == 2 and
		.failures == 3 and .by_status["not-run"] == 2 and .run == "r7"' summary.json
}

@test "merge: not-run records take -r RUN and, with no record time, the UNITS mtime" {
	printf 'a\n' > units
	touch -d '2001-02-03T04:05:06Z' units
	run -2 --separate-stderr corral-merge -r nightly-5 -u units logs
	assert_json '.run == "nightly-5" and .at == "2001-02-03T04:05:06Z"' failures.jsonl
	assert_json '.run == "nightly-5"' summary.json
}

@test "merge: an unexpected unit is named, still routed, and exits 2" {
	{ rec a true; rec zz false; } > logs/agent-0.jsonl
	printf 'a\n' > units
	run -2 --separate-stderr corral-merge -u units logs
	assert_stderr "corral-merge: unit 'zz' in 'logs/agent-0.jsonl' is not in 'units'"
	run -0 jq -r .unit failures.jsonl
	assert_output zz
	assert_json '.unexpected == 1 and .units == 1 and .merged == 2' summary.json
}

@test "merge: a unit holding an escaped NUL is refused by name, never taken for the unit before the NUL" {
	printf 'c\n' > units
	{ rec c false; printf '%s\n' '{"agent_id":"0","unit":"c\u0000zz","ok":true}'; } > logs/agent-0.jsonl
	run -2 --separate-stderr corral-merge -u units logs
	assert_stderr "corral-merge: 'logs/agent-0.jsonl' line 2: \"unit\" holds a NUL byte: \"c\\u0000zz\""
	[ ! -e successes.jsonl ] || flunk "results were written"
}

@test "merge: a NUL in a record's key, or in a run spelt with escapes, is refused; in free text it is kept" {
	printf '%s\n' '{"unit\u0000x":"a","ok":true}' > logs/agent-0.jsonl
	run -2 --separate-stderr corral-merge logs
	assert_stderr "corral-merge: 'logs/agent-0.jsonl' line 1: the key \"unit\\u0000x\" holds a NUL byte"
	printf '%s\n' '{"unit":"a","ok":true,"r\u0075n":"r1\u0000r2"}' > logs/agent-0.jsonl
	run -2 --separate-stderr corral-merge logs
	assert_stderr "corral-merge: 'logs/agent-0.jsonl' line 1: \"run\" holds a NUL byte: \"r1\\u0000r2\""
	printf '%s\n' '{"unit":"a","ok":true,"note":"PASS: a\u0000b","x":"\\u0000"}' > logs/agent-0.jsonl
	run -0 corral-merge -q logs
	cmp successes.jsonl logs/agent-0.jsonl
}

@test "merge: a unit line holding a NUL byte in UNITS is refused by name" {
	printf 'a\nc\0zz\n' > units
	rec a true > logs/agent-0.jsonl
	run -2 --separate-stderr corral-merge -u units logs
	assert_stderr "corral-merge: 'units' line 2: unit 'c\\0zz' holds a NUL byte"
}

@test "merge: a CRLF units file names the units the records name; a CR inside a name is part of it" {
	printf 'a\r\nb\r\nx\ry\r\n' > units
	{ rec a true; rec b false; printf '{"unit":"x\\ry","ok":true}\r\n'; } > logs/agent-0.jsonl
	run -1 --separate-stderr corral-merge -q -u units logs
	assert_stderr ""
	assert_json '.units == 3 and .merged == 3 and .missing == 0 and .unexpected == 0' summary.json
	printf 'a\nb\r\r\n' > units
	run -2 --separate-stderr corral-merge -q -u units logs
	assert_contains "$stderr" "corral-merge: unit 'x"
	assert_json '.missing == 1 and .unexpected == 2' summary.json
	run -0 jq -r 'select(.status == "not-run") | .unit' failures.jsonl
	assert_output "$(printf 'b\r')"
}

@test "merge: a unit listed twice in UNITS is counted once, with a warning" {
	rec a true > logs/agent-0.jsonl
	printf 'a\na\n' > units
	run -0 --separate-stderr corral-merge -q -u units logs
	assert_stderr "corral-merge: unit 'a' is listed more than once in 'units'; counted once"
	assert_json '.units == 1' summary.json
}

@test "merge: an agent-ID.jsonl.part marks the agent unfinished and exits 2" {
	rec a true > logs/agent-0.jsonl
	rec b true > logs/agent-7.jsonl.part
	printf '%s\n' a b c > units
	run -2 --separate-stderr corral-merge -u units logs
	assert_equal "${stderr_lines[0]}" "corral-merge: 'logs/agent-7.jsonl.part': agent '7' did not finish"
	assert_equal "${stderr_lines[1]}" "corral-merge: unit 'b' is missing: agent '7' did not finish"
	assert_equal "${stderr_lines[2]}" "corral-merge: unit 'c' is missing: no agent reported it"
	assert_json '.unfinished == ["7"] and .missing == 2 and .agents == 1' summary.json
	run -0 jq -r 'select(.unit == "b") | .note' failures.jsonl
	assert_output "NOT-RUN: agent '7' did not finish"
}

@test "merge: an agent-ID.launch names why its units were not run, before its .part; beside its finished log, or not a regular file, it counts for nothing" {
	rec a true > logs/agent-0.jsonl
	rec b true > logs/agent-7.jsonl.part
	printf '%s\n' "launcher: srun: error: Node failure on n2$(printf '\033')" b c > logs/agent-7.launch
	printf '%s\n' 'launcher: planted' a > logs/agent-0.launch
	printf '%s\n' 'launcher: planted' d > elsewhere
	ln -s ../elsewhere logs/agent-8.launch
	printf '%s\n' a b c d > units
	run -2 --separate-stderr corral-merge -u units logs
	assert_equal "${stderr_lines[0]}" "corral-merge: 'logs/agent-8.launch' is a symbolic link, not a regular file; the launcher's note is ignored"
	assert_contains "$stderr" "corral-merge: unit 'b' is missing: launcher: srun: error: Node failure on n2?"
	assert_contains "$stderr" "corral-merge: unit 'c' is missing: launcher: srun: error: Node failure on n2?"
	assert_contains "$stderr" "corral-merge: unit 'd' is missing: no agent reported it"
	assert_json '.unfinished == ["7"] and .missing == 3 and .successes == 1' summary.json
	run -0 jq -r 'select(.unit == "b") | .note' failures.jsonl
	assert_output "NOT-RUN: launcher: srun: error: Node failure on n2?"
}

@test "merge: a lone .part, without -u, still makes the result incomplete" {
	: > logs/agent-1.jsonl.part
	run -2 --separate-stderr corral-merge -q logs
	assert_stderr "corral-merge: 'logs/agent-1.jsonl.part': agent '1' did not finish"
	assert_json '.unfinished == ["1"] and .agents == 0' summary.json
}

@test "merge: a .part beside a finished log of the same agent is only a warning" {
	rec a true > logs/agent-1.jsonl
	rec a false > logs/agent-1.jsonl.part
	run -0 --separate-stderr corral-merge -q logs
	assert_stderr "corral-merge: 'logs/agent-1.jsonl.part': ignored, agent '1' has a finished log"
	assert_json '.unfinished == [] and .successes == 1' summary.json
}

# --- bad input: reported with file and line, nothing written ---------------

# bad_line_case LINE MESSAGE: the line as line 2 of agent-3's log is reported
# as MESSAGE (after "'logs/agent-3.jsonl' line 2: "), exit 2, nothing changes
bad_line_case() {
	good_merge
	local before=$(state)
	rec c true > logs/agent-3.jsonl
	printf '%s\n' "$1" >> logs/agent-3.jsonl
	run -2 --separate-stderr corral-merge logs
	assert_output ""
	assert_stderr "corral-merge: 'logs/agent-3.jsonl' line 2: $2"
	assert_equal "$before" "$(state)"
	no_temps
}

@test "merge: a torn last line exits 2, names file and line, changes nothing" {
	good_merge
	local before=$(state)
	rec c true > logs/agent-3.jsonl
	printf '{"unit":"d","ok":tr' >> logs/agent-3.jsonl
	run -2 --separate-stderr corral-merge logs
	assert_stderr "corral-merge: 'logs/agent-3.jsonl' line 2: no trailing newline (torn write)"
	assert_equal "$before" "$(state)"
	no_temps
}

@test "merge: a complete record without its final newline is a torn write too" {
	printf '{"unit":"c","ok":true}' > logs/agent-0.jsonl
	run -2 --separate-stderr corral-merge logs
	assert_stderr "corral-merge: 'logs/agent-0.jsonl' line 1: no trailing newline (torn write)"
	assert_no_file successes.jsonl
}

@test "merge: glued records {..}{..} exit 2 with the byte offset" {
	bad_line_case '{"unit":"x","ok":true}{"unit":"y","ok":true}' \
		"invalid JSON at byte 23"
}

@test "merge: a torn prefix glued to a record exits 2" {
	bad_line_case '{"unit":"x","ok":tr{"unit":"y","ok":true}' \
		"invalid JSON at byte 18"
}

@test "merge: a record followed by garbage exits 2" {
	bad_line_case '{"unit":"x","ok":true} garbage' "invalid JSON at byte 24"
}

@test "merge: a line that is not an object exits 2" {
	bad_line_case '["unit","ok"]' "not a JSON object"
}

@test "merge: a record without a unit exits 2" {
	bad_line_case '{"ok":true}' '"unit" is missing'
}

@test "merge: a unit that is not a string exits 2" {
	bad_line_case '{"unit":7,"ok":true}' '"unit" is not a string'
}

@test "merge: an ok that is not a boolean exits 2" {
	bad_line_case '{"unit":"x","ok":"false"}' '"ok" is not a boolean'
}

@test "merge: a record with two ok keys exits 2" {
	bad_line_case '{"unit":"x","ok":false,"ok":true}' '"ok" appears more than once'
}

@test "merge: nesting deeper than 1000 exits 2 without a crash" {
	local deep
	deep=$(printf '%*s' 1001 '' | tr ' ' '[')$(printf '%*s' 1001 '' | tr ' ' ']')
	bad_line_case "{\"unit\":\"x\",\"ok\":true,\"n\":$deep}" "invalid JSON at byte 1026"
}

@test "merge: a lone surrogate \\ud800 exits 2" {
	bad_line_case '{"unit":"x","ok":true,"note":"\ud800"}' "invalid JSON at byte 31"
}

@test "merge: a NUL byte inside a line exits 2" {
	good_merge
	printf '{"unit":"x","ok":true}\0garbage\n' > logs/agent-3.jsonl
	run -2 --separate-stderr corral-merge logs
	assert_stderr "corral-merge: 'logs/agent-3.jsonl' line 1: NUL byte at byte 23"
}

@test "merge: every bad line of every log is reported, not just the first" {
	good_merge
	local before=$(state)
	printf '%s\n' '{"unit":"x"' '{"unit":"y","ok":true}' '7' > logs/agent-1.jsonl
	printf '%s\n' '{"unit":"z","ok":null}' > logs/agent-2.jsonl
	run -2 --separate-stderr corral-merge logs
	assert_stderr "$(printf '%s\n' \
		"corral-merge: 'logs/agent-1.jsonl' line 1: invalid JSON at byte 12" \
		"corral-merge: 'logs/agent-1.jsonl' line 3: not a JSON object" \
		"corral-merge: 'logs/agent-2.jsonl' line 1: \"ok\" is not a boolean")"
	assert_equal "$before" "$(state)"
}

# --- determinism ------------------------------------------------------------

@test "merge: merging twice gives byte-identical files and keeps their mtimes" {
	{ rec a true '"at":"2024-01-01T00:00:00Z"'; rec b false; } > logs/agent-0.jsonl
	rec c true > logs/agent-1.jsonl
	printf 'a\nb\nc\nd\n' > units
	run -2 corral-merge -q -u units logs
	touch -d '2001-01-01' successes.jsonl failures.jsonl summary.json
	local before=$(state)
	sleep 0.01
	run -2 corral-merge -q -u units logs
	assert_equal "$before" "$(state)"
	run -0 stat -c %Y successes.jsonl
	assert_output "$(date -d 2001-01-01 +%s)"
}

@test "merge: memory follows the units, not the log bytes (over 20 MB of logs vs 1 MB)" {
	[ -x /usr/bin/time ] || skip "GNU time is not installed"
	local d pad
	for d in small:400 big:10000; do
		mkdir -p "${d%%:*}"
		awk -v pad="${d##*:}" -v dir="${d%%:*}" 'BEGIN {
			s = "x"; while (length(s) < pad) s = s s
			for (i = 0; i < 2000; i++)
				printf "{\"unit\":\"u%d\",\"ok\":true,\"note\":\"PASS: %s\"}\n", i, s \
					> (dir "/agent-" (i % 8) ".jsonl")
		}'
	done
	# (without ASan's quarantine, which keeps freed memory on purpose)
	export ASAN_OPTIONS=quarantine_size_mb=0:thread_local_quarantine_size_kb=0
	/usr/bin/time -o rss.small -f %M corral-merge -q -o o1 small
	/usr/bin/time -o rss.big -f %M corral-merge -q -o o2 big
	[ "$(stat -c %s o2/successes.jsonl)" -gt 20000000 ] || flunk "big is not big"
	[ $(( $(cat rss.big) * 2 )) -le $(( $(cat rss.small) * 3 )) ] ||
		flunk "max RSS $(cat rss.big) KB for 20 MB vs $(cat rss.small) KB for 1 MB"
}

# --- history ----------------------------------------------------------------

@test "merge: history gets each run's records once, then a commit line" {
	{ rec a true '"run":"r1"'; rec b false '"run":"r1"'; } > logs/agent-0.jsonl
	run -1 corral-merge -q logs
	run -0 cat history.jsonl
	assert_output "$(rec a true '"run":"r1"'; rec b false '"run":"r1"')
{\"corral\":\"history\",\"run\":\"r1\",\"records\":2}"
	local first
	first=$(cat history.jsonl)
	run -1 corral-merge -q logs
	assert_equal "$first" "$(cat history.jsonl)"
	# a new run is appended after the old one
	{ rec a true '"run":"r2"'; rec b true '"run":"r2"'; } > logs/agent-0.jsonl
	run -0 corral-merge -q logs
	run -0 jq -c 'select(.corral) | [.run, .records]' history.jsonl
	assert_output "$(printf '%s\n' '["r1",2]' '["r2",2]')"
	run -0 jq -sc '[.[] | select(.corral | not) | .run]' history.jsonl
	assert_output '["r1","r1","r2","r2"]'
}

@test "merge: records without a run go to history as run none" {
	rec a true > logs/agent-0.jsonl
	run -0 corral-merge -q logs
	run -0 tail -n 1 history.jsonl
	assert_output '{"corral":"history","run":"none","records":1}'
}

@test "merge: a killed append keeps its complete records and loses only its torn last line" {
	rec a true '"run":"r1"' > logs/agent-0.jsonl
	run -0 corral-merge -q logs
	cp history.jsonl committed
	# a merge killed mid-append left records of r2 but no commit line
	{ rec a true '"run":"r2"'; printf '{"unit":"b","ok":tr'; } >> history.jsonl
	{ rec a true '"run":"r2"'; rec b true '"run":"r2"'; } > logs/agent-0.jsonl
	run -0 --separate-stderr corral-merge -q logs
	assert_stderr "corral-merge: 'history.jsonl': dropped a torn last line of 19 bytes"
	{ cat committed; rec a true '"run":"r2"'; rec b true '"run":"r2"'
	  echo '{"corral":"history","run":"r2","records":2}'; } > want
	cmp history.jsonl want
}

@test "merge: an append killed at any byte is completed, each record of its run in history once" {
	local u
	for u in a b c; do rec "$u" true '"run":"r1"'; done > logs/agent-0.jsonl
	for u in d e f; do rec "$u" false '"run":"r2","note":"FAIL: one of r2"'; done > logs/agent-1.jsonl
	mkdir first && mv logs/agent-1.jsonl first/
	run -0 corral-merge -q logs
	local base=$(stat -c %s history.jsonl)
	mv first/agent-1.jsonl logs/
	run -1 corral-merge -q logs
	cp history.jsonl full
	local size=$(stat -c %s full) k st
	for k in $(seq "$base" 3 "$size") "$size"; do
		head -c "$k" full > history.jsonl
		st=0; corral-merge -q logs 2>/dev/null || st=$?
		[ "$st" -eq 1 ] || flunk "cut at byte $k: the merge exited $st"
		cmp -s history.jsonl full || flunk "cut at byte $k: $(diff full history.jsonl)"
	done
}

@test "merge: a history without commit lines (filtered through jq) is kept whole, its runs not appended again" {
	{ rec a true '"run":"r1"'; rec b false '"run":"r1"'; } > logs/agent-0.jsonl
	run -1 corral-merge -q logs
	jq -c 'select(.corral | not)' history.jsonl > filtered
	cp filtered history.jsonl
	run -1 --separate-stderr corral-merge -q logs
	assert_stderr ""
	{ cat filtered; echo '{"corral":"history","run":"r1","records":2}'; } > want
	cmp history.jsonl want
	# a new run is appended after all of it
	{ rec a true '"run":"r2"'; rec b true '"run":"r2"'; } > logs/agent-0.jsonl
	run -0 corral-merge -q logs
	run -0 jq -sc '[.[] | select(.corral | not) | .run]' history.jsonl
	assert_output '["r1","r1","r2","r2"]'
	run -0 jq -sc '[.[] | select(.corral) | .run]' history.jsonl
	assert_output '["r1","r2"]'
}

@test "merge: unreadable history lines are moved aside to a file it names, never deleted" {
	printf '%s\n' '{"unit":"old","ok":true,"run":"r0","duration_ms":5}' \
		'not json' '{"unit":"x","ok":true' '["an array"]' \
		'{"unit":"old2","ok":false,"run":"r0"}' > history.jsonl
	printf '%s\n' 'not json' '{"unit":"x","ok":true' '["an array"]' > bad
	rec a true '"run":"r1"' > logs/agent-0.jsonl
	run -0 --separate-stderr corral-merge -q logs
	local aside
	aside=$(ls history.jsonl.unreadable-*)
	assert_stderr "corral-merge: 'history.jsonl': moved 3 unreadable lines to '$aside'"
	cmp "$aside" bad
	{ echo '{"unit":"old","ok":true,"run":"r0","duration_ms":5}'
	  echo '{"unit":"old2","ok":false,"run":"r0"}'
	  rec a true '"run":"r1"'; echo '{"corral":"history","run":"r1","records":1}'; } > want
	cmp history.jsonl want
	# and the next merge finds nothing more to move
	run -0 --separate-stderr corral-merge -q logs
	assert_stderr ""
	cmp history.jsonl want
	no_temps .
}

@test "merge: a torn last history line that is a record is kept, its newline added" {
	printf '%s' '{"unit":"old","ok":true,"run":"r0"}' > history.jsonl
	rec a true '"run":"r1"' > logs/agent-0.jsonl
	run -0 --separate-stderr corral-merge -q logs
	assert_stderr ""
	{ echo '{"unit":"old","ok":true,"run":"r0"}'; rec a true '"run":"r1"'
	  echo '{"corral":"history","run":"r1","records":1}'; } > want
	cmp history.jsonl want
}

# --- write errors -------------------------------------------------------------

@test "merge: a write error on standard output exits 2" {
	rec a true > logs/agent-0.jsonl
	run -2 --separate-stderr sh -c 'corral-merge logs > /dev/full'
	assert_stderr "corral-merge: cannot write standard output: No space left on device"
}

@test "merge: a file size limit (EFBIG) exits 2 and leaves the old results intact" {
	good_merge
	local before=$(state)
	local i
	for i in $(seq 1 400); do rec "unit-$i" true '"note":"PASS: padding padding padding"'; done \
		> logs/agent-1.jsonl
	run -2 --separate-stderr prlimit --fsize=8192 corral-merge logs
	assert_output ""
	assert_contains "$stderr" "corral-merge: cannot write '.successes.jsonl.tmp."
	assert_contains "$stderr" "': File too large"
	assert_equal "$before" "$(state)"
	no_temps
}

@test "merge: a full filesystem exits 2 and leaves the old results intact" {
	MNT=$PWD/small
	mkdir "$MNT"
	mount -t tmpfs -o size=1m tmpfs "$MNT" 2>/dev/null ||
		skip "cannot mount a tmpfs here"
	{ rec a true; rec b false; } > logs/agent-0.jsonl
	run -1 corral-merge -q -o "$MNT" logs
	local before=$(state "$MNT")
	local i
	for i in $(seq 1 3000); do rec "unit-$i" true '"note":"PASS: padding padding padding"'; done \
		> logs/agent-1.jsonl
	# fill it up (dd stops with ENOSPC)
	dd if=/dev/zero of="$MNT/filler" bs=4k 2>/dev/null || true
	run -2 --separate-stderr corral-merge -o "$MNT" logs
	assert_contains "$stderr" "No space left on device"
	assert_equal "$before" "$(state "$MNT")"
	no_temps "$MNT"
	rm "$MNT/filler"
	run -1 corral-merge -q -o "$MNT" logs
	assert_json '.successes == 3001' "$MNT/summary.json"
}

# --- concurrency and crashes ----------------------------------------------------

@test "merge: 16 concurrent agents over 200 units give every unit exactly once" {
	seq -f 'unit-%g' 1 200 > units
	local k
	for k in $(seq 0 15); do
		(
			awk -v k="$k" 'NR % 16 == k' units | while read -r u; do
				n=${u#unit-}
				if [ $((n % 7)) -eq 0 ]; then ok=false; else ok=true; fi
				printf '{"agent_id":"%s","unit":"%s","ok":%s}\n' "$k" "$u" "$ok"
			done > "logs/.agent-$k.tmp" &&
			mv "logs/.agent-$k.tmp" "logs/agent-$k.jsonl"
		) &
	done
	assert_no_file successes.jsonl
	wait
	assert_no_file successes.jsonl
	run -1 --separate-stderr corral-merge -u units logs
	assert_output "merged 200 units from 16 agents: 172 passed, 28 failed"
	cat successes.jsonl failures.jsonl | jq -r .unit | sort > got
	sort units > want
	cmp got want
	assert_json '.units == 200 and .merged == 200 and .successes == 172 and
		.failures == 28 and .agents == 16' summary.json
}

# make_set DIR TAG N: a log set of N units over 4 agents, run TAG
make_set() {
	mkdir -p "$1"
	local k
	for k in 0 1 2 3; do
		awk -v k="$k" -v tag="$2" -v n="$3" 'BEGIN {
			for (i = k; i < n; i += 4)
				printf "{\"agent_id\":\"%d\",\"unit\":\"u%d\",\"ok\":%s,\"run\":\"%s\",\"note\":\"%s %d\"}\n",
					k, i, (i % 5 ? "true" : "false"), tag, tag, i
		}' > "$1/agent-$k.jsonl"
	done
}

# ref_sets NA NB: sets A and B of NA and NB units, refA/ and refB/ their
# merges; BAD, 10 units whose last line is torn, which a merge refuses
ref_sets() {
	make_set A A "$1"
	make_set B B "$2"
	make_set BAD BAD 10
	printf '{"unit":"x","ok":tr' >> BAD/agent-0.jsonl
	run -1 corral-merge -q -o refA A
	run -1 corral-merge -q -o refB B
}

# which_set DIR: "A" or "B" when the three files of DIR are exactly one
# of the reference sets in refA/ and refB/, else a description of the mix
which_set() {
	local s f
	for s in A B; do
		for f in successes.jsonl failures.jsonl summary.json; do
			cmp -s "$1/$f" "ref$s/$f" || continue 2
		done
		echo "$s"
		return
	done
	echo "mixed: $(for f in successes.jsonl failures.jsonl summary.json; do
		cmp -s "$1/$f" refA/$f && echo "$f=A" || { cmp -s "$1/$f" refB/$f && echo "$f=B" || echo "$f=?"; }; done)"
}

# history_ok FILE: every record in FILE comes before the commit line of its
# own run, and no run is committed twice
history_ok() {
	jq -e -s '
		reduce .[] as $l ({ok: true, cur: null, runs: {}};
			(.cur == null or .cur == $l.run) as $same
			| if $l.corral then
				.ok = (.ok and $same and .runs[$l.run] == null)
				| .runs[$l.run] = true | .cur = null
			else .ok = (.ok and $same) | .cur = $l.run end)
		| .ok and .cur == null' "$1" >/dev/null
}

@test "merge: two merges started at once never interleave (40 rounds)" {
	make_set A A 10000
	make_set B B 8000
	run -1 corral-merge -q -o refA A
	run -1 corral-merge -q -o refB B
	local round got pa pb sa sb
	for round in $(seq 1 40); do
		corral-merge -q -o out A & pa=$!
		sleep "0.00$((round % 10))"
		corral-merge -q -o out B & pb=$!
		sa=0; wait "$pa" || sa=$?
		sb=0; wait "$pb" || sb=$?
		[ "$sa" -eq 1 ] && [ "$sb" -eq 1 ] ||
			flunk "round $round: the merges exited $sa and $sb"
		got=$(which_set out)
		case $got in A|B) ;; *) flunk "round $round: $got" ;; esac
		history_ok out/history.jsonl ||
			flunk "round $round: history.jsonl mixes runs or repeats one"
	done
	no_temps out
	run -0 jq -sc '[.[] | select(.corral) | .run] | sort' out/history.jsonl
	assert_output '["A","B"]'
}

# consistent DIR: the result files of DIR are set A or B, or a commit record
# says the new set is decided (the next merge finishes it)
consistent() {
	local got
	got=$(which_set "$1")
	case $got in
	A|B) ;;
	*) [ -e "$1/.merge.commit" ] || { echo "$got"; return 1; } ;;
	esac
}

@test "merge: a commit record left by a killed merge is finished by the next merge, even a refused one" {
	ref_sets 50 40
	run -1 corral-merge -q -o out A
	# killed after renaming successes.jsonl, before the other two
	cp refB/successes.jsonl out/successes.jsonl
	cp refB/failures.jsonl out/.failures.jsonl.tmp.KILLED
	cp refB/summary.json out/.summary.json.tmp.KILLED
	printf '%s\n' .successes.jsonl.tmp.GONE .failures.jsonl.tmp.KILLED \
		.summary.json.tmp.KILLED > out/.merge.commit
	: > out/.successes.jsonl.tmp.STRAY
	run -2 --separate-stderr corral-merge -q -o out BAD
	assert_equal "${stderr_lines[0]}" "corral-merge: 'out/.merge.commit': finishing the commit of an interrupted merge"
	assert_equal "${stderr_lines[1]}" "corral-merge: 'BAD/agent-0.jsonl' line 4: no trailing newline (torn write)"
	assert_equal "$(which_set out)" B
	assert_no_file out/.merge.commit
	no_temps out
}

@test "merge: SIGSTOP then SIGKILL at 24 points leaves the old or the new set, and the next merge finishes or cleans up" {
	ref_sets 2000 24000
	local t0 t1 dur=0 point got caught=0
	# the shortest of three: a first read can take twice as long
	for point in 1 2 3; do
		t0=$(date +%s%N)
		corral-merge -q -o "timing$point" B || true
		t1=$(date +%s%N)
		[ "$dur" -gt 0 ] && [ "$dur" -le $(( (t1 - t0) / 1000 )) ] ||
			dur=$(( (t1 - t0) / 1000 ))	# microseconds
	done
	# not "i": bats' own helpers, run among them, assign a global i
	for point in $(seq 1 24); do
		run -1 corral-merge -q -o out A
		corral-merge -q -o out B & VICTIM=$!
		sleep "$(awk -v d="$dur" -v i="$point" 'BEGIN { printf "%.6f", d * i / 20 / 1e6 }')"
		kill -STOP "$VICTIM" 2>/dev/null || true
		got=$(consistent out) || flunk "point $point (stopped): $got"
		[ -n "$(find out -maxdepth 1 -name '.*.tmp.*' -o -name .merge.commit)" ] &&
			caught=$((caught + 1))
		kill -KILL "$VICTIM" 2>/dev/null || true
		wait "$VICTIM" 2>/dev/null || true
		VICTIM=
		got=$(consistent out) || flunk "point $point (killed): $got"
		# the next merge, even one that refuses its bad input, first
		# finishes a decided commit and removes the temporaries
		run -2 --separate-stderr corral-merge -q -o out BAD
		got=$(which_set out)
		case $got in A|B) ;; *) flunk "point $point (next merge): $got" ;; esac
		no_temps out
		assert_no_file out/.merge.commit
	done
	[ "$caught" -ge 2 ] || flunk "only $caught of 24 stops caught a merge mid-way"
	run -1 --separate-stderr corral-merge -q -o out B
	assert_equal "$(which_set out)" B
	jq -e . out/history.jsonl >/dev/null
}

# --- layers: re-runs merged over the main result ------------------------

# layers STATUS MAIN RERUN: logs/agent-0.jsonl holds the lines MAIN and
# rerun/agent-0.jsonl, a re-run layer, the lines RERUN (records of rec);
# corral-merge -o . logs rerun exits STATUS
layers() {
	mkdir -p rerun
	printf '%s\n' "$2" > logs/agent-0.jsonl
	printf '%s\n' "$3" > rerun/agent-0.jsonl
	run "-$1" --separate-stderr corral-merge -o . logs rerun
}

@test "merge: a later layer's attempt wins over the main layer's, every unit still once" {
	layers 0 "$(rec a true '"at":"2026-01-01T10:00:00.000Z","status":"pass"'
		rec b false '"at":"2026-01-01T10:00:00.000Z","status":"fail"')" \
		"$(rec b true '"at":"2026-01-01T10:05:00.000Z","status":"pass"')"
	run -0 jq -r .unit successes.jsonl
	assert_output "$(printf 'a\nb')"
	run -0 cat failures.jsonl
	assert_output ""
	assert_json '.merged == 2 and .successes == 2 and .failures == 0 and .duplicates == 0' summary.json
}

@test "merge: the lines a later layer replaced go to replaced.jsonl byte for byte, for the page; one layer leaves it empty" {
	layers 0 "$(rec a true '"at":"2026-01-01T10:00:00.000Z","status":"pass"'
		rec b false '"at":"2026-01-01T10:00:00.000Z","status":"fail","attempt":1'
		rec b false '"at":"2026-01-01T10:00:01.000Z","status":"fail","attempt":2')" \
		"$(rec b true '"at":"2026-01-01T10:05:00.000Z","status":"pass"')"
	run -0 grep -c '"unit":"b"' logs/agent-0.jsonl
	assert_output 2
	run -0 cmp replaced.jsonl <(grep '"unit":"b"' logs/agent-0.jsonl)
	assert_json '.attempts == 4 and .merged == 2' summary.json
	run -1 corral-merge -q -o . logs
	assert_equal 0 "$(wc -c < replaced.jsonl)"
}

@test "merge: a main-layer attempt newer than the re-run layer's wins" {
	layers 1 "$(rec b false '"at":"2026-01-01T11:00:00.000Z"')" \
		"$(rec b true '"at":"2026-01-01T10:05:00.000Z"')"
	run -0 jq -r .unit failures.jsonl
	assert_output "b"
}

@test "merge: equal times go to the later layer, and an old-style 'at' without milliseconds compares by time" {
	layers 0 "$(rec b false '"at":"2026-01-01T10:05:00Z"')" \
		"$(rec b true '"at":"2026-01-01T10:05:00.000Z"')"
	layers 1 "$(rec b false '"at":"2026-01-01T10:05:01Z"')" \
		"$(rec b true '"at":"2026-01-01T10:05:00.000Z"')"
}

@test "merge: a pass after a failure on the same inputs is written as flaky" {
	layers 0 "$(rec u false '"note":"FAIL: exit 1","at":"2026-01-01T10:00:00.000Z","status":"fail","inputs":"d1"')" \
		"$(rec u true '"note":"PASS: exit 0","at":"2026-01-01T10:01:00.000Z","status":"pass","inputs":"d1"')"
	run -0 jq -c '[.unit, .ok, .status, .note]' successes.jsonl
	assert_output '["u",true,"flaky","FLAKY: passed after failing on the same inputs (PASS: exit 0)"]'
	assert_json '.by_status == {"flaky": 1}' summary.json
}

@test "merge: a pass after a failure on changed inputs is a plain pass, byte for byte" {
	layers 0 "$(rec u false '"at":"2026-01-01T10:00:00.000Z","status":"fail","inputs":"d1"')" \
		"$(rec u true '"at":"2026-01-01T10:01:00.000Z","status":"pass","inputs":"d2"')"
	run -0 cmp successes.jsonl rerun/agent-0.jsonl
}

@test "merge: an older failure read after a newer pass on the same inputs still makes it flaky" {
	layers 0 "$(rec u true '"at":"2026-01-01T10:09:00.000Z","status":"pass","inputs":"d1"')" \
		"$(rec u false '"at":"2026-01-01T10:00:00.000Z","status":"fail","inputs":"d1"')"
	run -0 jq -r .status successes.jsonl
	assert_output "flaky"
}

@test "merge: a unit in two agents of one layer is still a duplicate when there are layers" {
	mkdir -p rerun
	rec a true '"at":"2026-01-01T10:00:00.000Z"' > logs/agent-0.jsonl
	rec x true '"at":"2026-01-01T10:00:00.000Z"' > rerun/agent-0.jsonl
	rec x true '"at":"2026-01-01T10:00:00.000Z"' > rerun/agent-1.jsonl
	run -2 --separate-stderr corral-merge -o . logs rerun
	assert_contains "$stderr" "unit 'x' is in both 'rerun/agent-0.jsonl' and 'rerun/agent-1.jsonl'"
	assert_no_file successes.jsonl
}

@test "merge: layers merged twice, or listed by other agents, give the same bytes" {
	mkdir -p rerun
	for i in 1 2 3 4 5 6; do
		rec "u$i" false "\"at\":\"2026-01-01T10:00:0$i.000Z\",\"inputs\":\"d\"" >> "logs/agent-$((i % 2)).jsonl"
	done
	rec u2 true '"at":"2026-01-01T10:10:00.000Z","inputs":"d"' > rerun/agent-0.jsonl
	rec u5 true '"at":"2026-01-01T10:10:00.000Z","inputs":"x"' > rerun/agent-1.jsonl
	run -1 corral-merge -q -o . logs rerun
	cp successes.jsonl s1; cp failures.jsonl f1
	run -1 corral-merge -q -o . logs rerun
	run -0 cmp s1 successes.jsonl
	run -0 cmp f1 failures.jsonl
	run -0 jq -r '.unit + " " + (.status // "none")' successes.jsonl
	assert_output "$(printf 'u2 flaky\nu5 none')"
}

@test "merge: an unfinished agent in a re-run layer makes the result incomplete" {
	mkdir -p rerun
	rec a false '"at":"2026-01-01T10:00:00.000Z"' > logs/agent-0.jsonl
	rec a true '"at":"2026-01-01T10:01:00.000Z"' > rerun/agent-0.jsonl.part
	run -2 --separate-stderr corral-merge -o . logs rerun
	assert_contains "$stderr" "'rerun/agent-0.jsonl.part': agent '0' did not finish"
}

@test "merge: a retry that passed, recorded as flaky by its agent, passes through byte for byte, also over layers" {
	mkdir -p rerun
	{ rec u false '"at":"2026-01-01T10:00:00.000Z","status":"fail","attempt":1,"inputs":"d1"'
	  rec u true '"note":"FLAKY: passed on attempt 2","at":"2026-01-01T10:00:01.000Z","status":"flaky","attempt":2,"inputs":"d1"'
	  rec v true '"at":"2026-01-01T10:00:02.000Z","status":"pass","inputs":"d1"'; } > logs/agent-0.jsonl
	run -0 --separate-stderr corral-merge -o . logs
	assert_output "merged 2 units from 1 agent: 2 passed (1 flaky), 0 failed; 3 attempts"
	sed -n 2,3p logs/agent-0.jsonl > want
	run -0 cmp want successes.jsonl
	assert_json '.attempts == 3 and .merged == 2 and .by_status == {"flaky": 1, "pass": 1}' summary.json
	rec w false '"at":"2026-01-01T10:00:03.000Z","inputs":"d1"' > rerun/agent-0.jsonl
	run -1 --separate-stderr corral-merge -o . logs rerun
	sed -n 2,3p logs/agent-0.jsonl > want
	run -0 cmp want successes.jsonl
}

@test "merge: a later plain pass over a flaky one on the same inputs stays flaky" {
	layers 0 "$(rec u true '"note":"FLAKY: x","at":"2026-01-01T10:00:01.000Z","status":"flaky","inputs":"d1"')" \
		"$(rec u true '"note":"PASS: exit 0","at":"2026-01-01T10:05:00.000Z","status":"pass","inputs":"d1"')"
	run -0 jq -r .status successes.jsonl
	assert_output "flaky"
}

@test "merge: -f makes a flaky unit fail the run with exit 1, the result files written all the same" {
	{ rec a true '"status":"flaky"'; rec b true; } > logs/agent-0.jsonl
	run -0 --separate-stderr corral-merge logs
	run -1 --separate-stderr corral-merge -f logs
	assert_output "merged 2 units from 1 agent: 2 passed (1 flaky), 0 failed"
	assert_json '.successes == 2 and .failures == 0' summary.json
}

@test "merge: a message naming a log directory or a shard whose name holds OSC, clear screen, CR, C0, DEL, C1 and invalid UTF-8 prints none of those bytes" {
	local d="logs$HOSTILE"
	printf 'a\n' > units
	run -2 --separate-stderr corral-merge -u units -o out "$d"
	printf '%s\n' "$stderr" > err
	assert_shown err
	assert_contains "$stderr" "logs?]0;pwned"
	run --separate-stderr corral-merge -S -u units -o out2 "shard$HOSTILE"
	printf '%s\n%s\n' "$output" "$stderr" > err2
	assert_shown err2
	assert_contains "$stderr" "shard?]0;pwned"
}
