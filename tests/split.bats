#!/usr/bin/env bats
# split.bats -- corral-split cuts a population into disjoint, balanced slices.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
}

USAGE='usage: corral-split [-0Fhjq] [-C DIR] [-H HISTORY] [-l LOGDIR] [-o DIR] [-s STRATEGY] -n N|auto [FILE]
       corral-split -L'

# hist UNIT MS...: history records of UNIT, one per duration, oldest first
# (a duration of "null" is a record without one), each run closed by the
# commit line the merge writes
hist() {
	local unit=$1 ms
	shift
	for ms in "$@"; do
		printf '{"agent_id":"0","unit":"%s","ok":true,"note":"PASS: exit 0","at":"2026-01-01T00:00:00.000Z","status":"pass","exit":0,"signal":null,"duration_ms":%s,"attempt":1,"run":"r"}\n' "$unit" "$ms"
		printf '{"corral":"history","run":"r","records":1}\n'
	done
}

@test "split: -h prints usage to stdout and exits 0" {
	assert_help "$USAGE" corral-split -h
}

@test "split: missing -n prints usage to stderr and exits 2" {
	assert_usage_error "$USAGE" corral-split
}

@test "split: two operands print usage and exit 2" {
	assert_usage_error "$USAGE" corral-split -n 2 a b
}

@test "split: a non-numeric -n is named and exits 2" {
	run -2 --separate-stderr corral-split -n two /dev/null
	assert_stderr "corral-split: -n 'two' is not a number"
}

@test "split: 0..9 over 3 is the original's round-robin layout" {
	run -0 --separate-stderr corral-split -n 3 < <(seq 0 9)
	assert_json_eq '{"0":["0","3","6","9"],"1":["1","4","7"],"2":["2","5","8"]}' "$output"
}

@test "split: a..e over 2 keeps input order inside each slice" {
	run -0 corral-split -n 2 < <(printf '%s\n' a b c d e)
	assert_json_eq '{"0":["a","c","e"],"1":["b","d"]}' "$output"
}

@test "split: 37 units over 7 slices are complete" {
	run -0 corral-split -n 7 < <(seq 1 37)
	assert_json '[.[][]] | sort == ([range(1;38)] | map(tostring) | sort)'
	assert_json 'length == 7'
}

@test "split: -n auto gives one slice per unit up to 64 units, then slices of about 32, never fewer than 64" {
	run -0 --separate-stderr corral-split -n auto < <(seq 1 40)
	assert_json 'length == 40'
	run -0 --separate-stderr corral-split -n auto < <(seq 1 1000)
	assert_json 'length == 64'
	run -0 --separate-stderr corral-split -n auto < <(seq 1 10000)
	assert_json 'length == 313 and ([.[][]] | length) == 10000'
}

@test "split: 50 units over 9 slices are disjoint" {
	run -0 corral-split -n 9 < <(seq 1 50)
	assert_json '[.[][]] | length == (unique | length)'
	assert_json '[.[][]] | length == 50'
}

@test "split: 50 units are balanced over 2, 3, 4, 5, 8 and 13 slices" {
	local n
	for n in 2 3 4 5 8 13; do
		run -0 corral-split -n "$n" < <(seq 1 50)
		assert_json "length == $n and ([.[] | length] | max - min <= 1)"
	done
}

@test "split: fewer units than slices gives one slice per unit, none empty" {
	run -0 corral-split -n 10 < <(printf '%s\n' a b)
	assert_json_eq '{"0":["a"],"1":["b"]}' "$output"
}

@test "split: -n 0 and a negative -n give one slice" {
	run -0 corral-split -n 0 < <(printf '%s\n' 1 2 3)
	assert_json_eq '{"0":["1","2","3"]}' "$output"
	run -0 corral-split -n -4 < <(printf '%s\n' 1 2 3)
	assert_json_eq '{"0":["1","2","3"]}' "$output"
}

@test "split: an empty population gives no slices and no slice files" {
	run -0 corral-split -n 4 -j -o plan < /dev/null
	assert_output "{}"
	run -0 find plan -name '*.units'
	assert_output ""
}

@test "split: a unit listed twice is one unit and the warning names it" {
	run -0 --separate-stderr corral-split -n 1 < <(printf '%s\n' x y x)
	assert_json_eq '{"0":["x","y"]}' "$output"
	assert_stderr "corral-split: unit 'x' is listed more than once; counted once"
}

@test "split: blank lines are not units" {
	run -0 corral-split -n 5 < <(printf 'a\n\n\nb\n')
	assert_json_eq '{"0":["a"],"1":["b"]}' "$output"
}

@test "split: a missing final newline still ends a unit" {
	run -0 corral-split -n 1 < <(printf 'a\nb')
	assert_json_eq '{"0":["a","b"]}' "$output"
}

@test "split: units with spaces, quotes, \$, %, :, #, tabs and UTF-8 survive exactly" {
	printf '%s\n' 'a b' "it's" 'say "hi"' '$HOME' '100%' 'c:d' '#x' \
		"$(printf 'tab\there')" 'ünï/çødé ✓' 'back\slash' > units
	run -0 corral-split -n 3 -j -o plan units
	assert_json '[.[][]] | length == 10'
	local plan=$output
	cat plan/0.units plan/1.units plan/2.units | sort > got
	sort units > want
	run -0 cmp got want
	# JSON decodes to the very same bytes
	jq -r '.[][]' <<<"$plan" | sort > got.json
	run -0 cmp got.json want
}

@test "split: -0 reads and writes NUL-separated units, newlines included" {
	printf 'one\0two\nlines\0three\0' > units
	run -0 corral-split -0 -n 2 -o plan units
	run -0 od -c plan/0.units
	assert_contains "$output" "o   n   e  \\0   t   h   r   e   e  \\0"
	printf 'two\nlines\0' > want
	run -0 cmp plan/1.units want
}

@test "split: a NUL byte inside a newline-separated unit is refused, naming the unit and its line" {
	printf 'x\n\na\0b\0\n' > units
	run -2 --separate-stderr corral-split -n 1 units
	assert_stderr "corral-split: 'units' line 3: unit 'a\\0b\\0' holds a NUL byte"
}

@test "split: CR LF ends a line as LF does, also at the end of the file; any other CR is part of a unit" {
	printf 'a\nb\nc\rd\ne\r\r\nf\n' > lf
	printf 'a\r\nb\nc\rd\r\ne\r\r\nf\r' > crlf
	run -0 corral-split -n 2 -o plan1 lf
	run -0 corral-split -n 2 -o plan2 crlf
	run -0 diff -r plan1 plan2
	printf 'a\nc\rd\nf\n' > want
	run -0 cmp plan2/0.units want
	printf 'b\ne\r\n' > want
	run -0 cmp plan2/1.units want
}

@test "split: -o writes K.units files that together are the population" {
	run -0 corral-split -n 3 -o plan < <(seq 1 10)
	assert_output ""
	run -0 cat plan/0.units
	assert_output "$(printf '1\n4\n7\n10')"
	run -0 ls plan
	assert_output "$(printf '0.units\n1.units\n2.units')"
}

@test "split: -o removes slice files of a larger earlier plan and nothing else" {
	corral-split -n 4 -o plan < <(seq 1 10)
	touch plan/notes.txt plan/4.unitsx
	corral-split -n 2 -o plan < <(seq 1 10)
	run -0 ls plan
	assert_output "$(printf '0.units\n1.units\n4.unitsx\nnotes.txt')"
}

@test "split: -o also removes the parts, manifests and stamps of a larger earlier plan's slices, -l their agents' logs and output directories, and nothing else" {
	mkdir logs
	corral-split -n 4 -o plan < <(seq 1 10)
	touch plan/1.pass plan/3.parts plan/3.manifest plan/3.pass plan/3.partsx
	touch logs/agent-1.jsonl logs/agent-3.jsonl logs/agent-3.jsonl.part logs/agent-x.jsonl logs/notes
	# the captured output of slices, also of a shard's agents (agent-K.sS)
	mkdir -p logs/agent-1 logs/agent-3/x logs/agent-2.s1 logs/agent-x
	touch logs/agent-1/1.out logs/agent-3/1.out logs/agent-3/x/2.out logs/agent-2.s1/1.out
	corral-split -n 2 -o plan -l logs < <(seq 1 10)
	run -0 ls plan
	assert_output "$(printf '0.units\n1.pass\n1.units\n3.partsx')"
	run -0 ls logs
	assert_output "$(printf 'agent-1\nagent-1.jsonl\nagent-x\nagent-x.jsonl\nnotes')"
	assert_file_exists logs/agent-1/1.out
	run -0 corral-split -n 1 -o plan -l no-such-dir < <(seq 1 3)
	assert_usage_error "$USAGE" corral-split -n 1 -l logs < <(seq 1 3)
}

@test "split: an unchanged slice file keeps its mtime, a changed one is replaced" {
	corral-split -n 2 -o plan < <(seq 1 4)
	touch -d '2001-01-01' plan/0.units plan/1.units
	corral-split -n 2 -o plan < <(printf '%s\n' 1 2 3 5)
	run -0 stat -c %Y plan/0.units
	assert_output "$(date -d 2001-01-01 +%s)"
	run -0 stat -c %Y plan/1.units
	[ "$output" -gt "$(date -d 2001-01-01 +%s)" ]
}

@test "split: writing leaves no temporary files behind" {
	corral-split -n 3 -o plan < <(seq 1 9)
	run -0 find plan -name '.*'
	assert_output ""
}

@test "split: an unreadable input names the file and exits 2" {
	run -2 --separate-stderr corral-split -n 2 nothere
	assert_stderr "corral-split: cannot open 'nothere': No such file or directory"
}

@test "split: an input path through a regular file is refused with exit 2" {
	touch plain
	run -2 --separate-stderr corral-split -n 2 plain/units
	assert_stderr "corral-split: cannot open 'plain/units': Not a directory"
}

@test "split: -o through a regular file fails with exit 2 and writes nothing" {
	touch plain
	run -2 --separate-stderr corral-split -n 2 -o plain/plan < <(seq 3)
	assert_stderr "corral-split: cannot create 'plain': Not a directory"
	run -0 ls
	assert_output "plain"
}

@test "split: a write error on standard output exits 2" {
	run -2 --separate-stderr corral-split -n 2 -o /dev/full < <(seq 3)
	run -2 --separate-stderr sh -c 'seq 3 | corral-split -n 2 > /dev/full'
	assert_stderr "corral-split: cannot write standard output: No space left on device"
}

@test "split: -s weighted puts the longest units first on the lightest slice, and numbers slices longest first" {
	{ hist a 1000; hist b 900; hist c 100; hist d 100; hist e 100; hist f 100; } > history.jsonl
	printf '%s\n' f e d c b a > units
	run -0 --separate-stderr corral-split -s weighted -H history.jsonl -n 2 units
	assert_json_eq '{"0":["a","d","f"],"1":["b","c","e"]}' "$output"
	assert_stderr "corral-split: weighted plan from history: 6 units over 2 slices, every unit's duration known"
}

@test "split: -s weighted deals units of weight 0 round-robin, never leaving a slice empty" {
	printf '%s\n' a b c d e > units
	run -0 --separate-stderr corral-split -s weighted -n 3 units
	assert_json_eq '{"0":["a","d"],"1":["b","e"],"2":["c"]}' "$output"
}

@test "split: the weighted plan does not depend on the order of the units, so every host computes the same" {
	local u
	for u in $(seq -f 'u%02g' 1 30); do hist "$u" $(( (10#${u#u} * 37) % 11 * 100 )); done > history.jsonl
	seq -f 'u%02g' 1 30 > units
	corral-split -s weighted -H history.jsonl -n 4 -j units > plan1 2>/dev/null
	seq -f 'u%02g' 1 30 | sort -r > units
	corral-split -s weighted -H history.jsonl -n 4 -j units > plan2 2>/dev/null
	seq -f 'u%02g' 1 30 | shuf --random-source=<(yes) > units
	corral-split -s weighted -H history.jsonl -n 4 -j units > plan3 2>/dev/null
	run -0 cmp plan1 plan2
	run -0 cmp plan1 plan3
}

@test "split: durations are learned as an exponentially weighted average, newest counting most" {
	{ hist a 100 1000; hist b 1000 100; } > history.jsonl
	printf '%s\n' a b > units
	run -0 --separate-stderr corral-split -s weighted -H history.jsonl -n 1 -o plan units
	# 0.3 * 1000 + 0.7 * 100 = 370; 0.3 * 100 + 0.7 * 1000 = 730
	run -0 paste plan/0.units plan/0.est
	assert_output "$(printf 'b\t730\na\t370')"
}

@test "split: units without history get the median of the known ones, and the plan says how many were estimated" {
	{ hist a 100; hist b 300; hist c 900; } > history.jsonl
	printf '%s\n' a b c new1 new2 > units
	run -0 --separate-stderr corral-split -s weighted -H history.jsonl -n 2 -o plan units
	assert_stderr "corral-split: weighted plan from history: 5 units over 2 slices, 2 estimated as 300 ms (the median of 3 known)"
	assert_json '.strategy == "weighted" and .weights == "ms" and .known == 3 and .estimated == 2 and .estimate == 300' plan/plan.json
	assert_json '.total == 1900 and .longest == 900 and .makespan == 1000 and .lower_bound == 950 and .loads == [1000, 900]' plan/plan.json
}

@test "split: -s weighted without any history weighs units by file size and says every unit was estimated" {
	mkdir src
	head -c 5000 /dev/zero > src/big
	head -c 10 /dev/zero > src/small1
	head -c 20 /dev/zero > src/small2
	head -c 4000 /dev/zero > src/mid
	printf '%s\n' small1 big small2 mid > units
	run -0 --separate-stderr corral-split -s weighted -C src -n 2 -o plan units
	assert_stderr "corral-split: weighted plan by file size (no history): 4 units over 2 slices, all 4 estimated"
	run -0 cat plan/0.units
	assert_output "big"
	assert_json '.weights == "bytes" and .estimated == 4' plan/plan.json
	assert_no_file plan/0.est
}

@test "split: -s auto without history is round-robin, byte for byte the default plan" {
	seq 1 10 > units
	corral-split -n 3 -o plain units
	run -0 --separate-stderr corral-split -s auto -H nothere.jsonl -n 3 -o auto units
	assert_stderr "corral-split: round-robin plan: 10 units over 3 slices; no history of these units"
	for k in 0 1 2; do cmp "plain/$k.units" "auto/$k.units" || flunk "slice $k differs"; done
	# -F: so many run at once; slices of 2 units or fewer stay
	run -0 --separate-stderr corral-split -F -s auto -n 5 units
	assert_json 'keys | length == 5'
	assert_stderr "corral-split: round-robin plan: 10 units over 5 slices; no history of these units"
	assert_json '.strategy == "roundrobin" and .weights == "none"' auto/plan.json
}

@test "split: -s auto without history numbers round-robin slices by the bytes of their files, largest first, equal ones in round-robin order" {
	mkdir src
	printf 'x\n' > src/a
	head -c 500 /dev/zero > src/b
	head -c 50 /dev/zero > src/c
	printf '%s\n' a b c not-a-file > units
	run -0 corral-split -q -s auto -C src -n 2 -o plan units
	# round-robin: {a, c} (52 bytes) and {b, not-a-file} (500)
	run -0 cat plan/0.units
	assert_output "$(printf '%s\n' b not-a-file)"
	run -0 cat plan/1.units
	assert_output "$(printf '%s\n' a c)"
	run -0 corral-split -q -s auto -C src -n auto -o one units
	assert_equal "b c a not-a-file" "$(cat one/0.units one/1.units one/2.units one/3.units | tr '\n' ' ' | sed 's/ $//')"
	assert_json '.strategy == "roundrobin" and .weights == "none"' one/plan.json
}

@test "split: -F -s auto without history cuts finer than -n when a slice would hold more than two units, as -n auto does" {
	seq -f 'u%02g' 0 39 > units
	run -0 --separate-stderr corral-split -F -s auto -H nothere.jsonl -n 4 -j -o plan units
	assert_stderr "corral-split: round-robin plan: 40 units over 40 slices, not 4: no history of these units"
	assert_json '.slices == 40' plan/plan.json
	# round-robin over 4 would put u00, u04, u08 and u12 in one slice
	assert_equal 4 "$(grep -lxE 'u(00|04|08|12)' plan/*.units | wc -l)"
	corral-split -q -s auto -n auto -o whole units
	for k in $(seq 0 39); do cmp "whole/$k.units" "plan/$k.units" || flunk "slice $k differs"; done
	# 200 units over 4: auto's 64 slices; 8 over 4 stay 4; with history, 4
	seq 1 200 > many
	run -0 corral-split -q -F -s auto -n 4 many
	assert_json 'keys | length == 64'
	seq 1 8 > few
	run -0 corral-split -q -F -s auto -n 4 few
	assert_json 'keys | length == 4'
	hist u00 2000 > history.jsonl
	run -0 corral-split -q -F -s auto -H history.jsonl -n 4 units
	assert_json 'keys | length == 4'
	# without -F, -n 4 is 4 slices; roundrobin and weighted keep N too
	run -0 corral-split -q -s auto -n 4 units
	assert_json 'keys | length == 4'
	run -0 corral-split -q -F -s roundrobin -n 4 units
	assert_json 'keys | length == 4'
	run -0 corral-split -q -F -s weighted -n 4 units
	assert_json 'keys | length == 4'
}

@test "split: -s auto with history of a unit is weighted" {
	{ hist 3 5000; hist 1 10; hist 2 10; } > history.jsonl
	seq 1 6 > units
	run -0 --separate-stderr corral-split -s auto -H history.jsonl -n 2 units
	assert_json_eq '{"0":["3"],"1":["1","2","4","5","6"]}' "$output"
	assert_stderr "corral-split: weighted plan from history: 6 units over 2 slices, 3 estimated as 10 ms (the median of 3 known)"
}

@test "split: -s roundrobin with history keeps the original layout and still writes the estimates" {
	{ hist a 10; hist b 20; hist c 30; } > history.jsonl
	printf '%s\n' a b c > units
	run -0 --separate-stderr corral-split -s roundrobin -H history.jsonl -n 2 -o plan units
	assert_stderr ""
	run -0 cat plan/0.units plan/0.est
	assert_output "$(printf 'a\nc\n10\n30')"
}

@test "split: an unknown strategy is refused with exit 2" {
	run -2 --separate-stderr corral-split -s fastest -n 2 /dev/null
	assert_stderr "corral-split: -s 'fastest' is not a strategy (roundrobin, weighted or auto)"
}

@test "split: -L lists the strategies one per line, each one -s takes and -h describes" {
	local name n=0
	run -0 --separate-stderr corral-split -L
	assert_stderr ""
	local names=$output
	assert_output "$(printf 'roundrobin\nweighted\nauto')"
	run -0 corral-split -h
	: > units
	for name in $names; do
		corral-split -s "$name" -n 2 units 2>/dev/null || flunk "-s $name is refused"
		grep -qE "^  $name +[a-z]" <<<"$output" || flunk "-h does not describe $name"
		n=$((n + 1))
	done
	assert_equal 3 "$n"
}

@test "split: history lines that are not records are counted and skipped; commit lines, torn tails and not-run records teach nothing" {
	{ hist a 100; echo 'not json'; echo '{"unit":"x"}'; hist b null;
	  printf '{"agent_id":"0","unit":"b","ok":false,"duration_ms":9999'; } > history.jsonl
	printf '%s\n' a b > units
	run -0 --separate-stderr corral-split -s weighted -H history.jsonl -n 2 -o plan units
	assert_contains "$stderr" "corral-split: 'history.jsonl': 2 line(s) are not records; skipped"
	assert_contains "$stderr" "2 units over 2 slices, 1 estimated as 100 ms (the median of 1 known)"
}

@test "split: an unreadable history is named and exits 2" {
	mkdir history.jsonl
	: > units
	run -2 --separate-stderr corral-split -s weighted -H history.jsonl -n 2 units
	assert_stderr "corral-split: 'history.jsonl' is a directory, not a regular file"
}

@test "split: a plan without known durations removes the estimates of an earlier one" {
	{ hist a 10; hist b 20; } > history.jsonl
	printf '%s\n' a b > units
	corral-split -s weighted -H history.jsonl -n 2 -o plan units 2>/dev/null
	assert_file_exists plan/1.est
	corral-split -s auto -n 2 -o plan units 2>/dev/null
	run -0 ls plan
	assert_output "$(printf '0.units\n1.units\nplan.json')"
}
