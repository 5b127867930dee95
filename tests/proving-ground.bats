#!/usr/bin/env bats
# proving-ground.bats -- the proving ground grades its finders in both
# directions, through a real corral run, and never scores "could not
# look" as clean.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
	PG=$CORRAL_ROOT/proving-ground
	PATH=$PG/finders:$PATH
	export PG PATH
	unset CORRAL_FIX PG_TIMEOUT
	for v in $(env | sed -n 's/^\(CORRAL_FINDER_[A-Z0-9_]*\)=.*/\1/p'); do
		unset "$v"
	done
}

# ids FINDER DIR: the identities FINDER reports in DIR, one per line
ids() {
	run -0 --separate-stderr "corral-find-$1" "$2"
	run -0 jq -r .identity <<<"$output"
}

# full_run: the whole proving ground, once per file of tests (-j2, into
# $BATS_FILE_TMPDIR/full); its status in full.status, its output in
# full.out
full_run() {
	local d=$BATS_FILE_TMPDIR
	[ -f "$d/full.status" ] && return 0
	"$PG/run" -j2 -o "$d/full" > "$d/full.out" 2> "$d/full.err"
	echo "$?" > "$d/full.status"
}

# verdicts DIR: "ID VERDICT" for every row of the merged results in DIR
verdicts() {
	cat "$1/corral/successes.jsonl" "$1/corral/failures.jsonl" |
		jq -r '"\(.unit) \(.note | split(":")[0])"' | LC_ALL=C sort
}

# assert_jsonl FILTER: FILTER holds for the array of the lines of $output
assert_jsonl() {
	assert_json "$1" <(jq -s . <<<"$output")
}

# stub NAME BODY: an executable NAME in ./stubs running the sh text BODY
stub() {
	mkdir -p stubs
	printf '#!/bin/sh\n%s\n' "$2" > "stubs/$1"
	chmod +x "stubs/$1"
}

@test "proving-ground: the shellcheck finder names each planted shell defect once, by rule, file and scope" {
	ids shellcheck "$PG/planted"
	assert_output "sc:SC2086:bin/notes
sc:SC2002:lib/notes.sh:notes_count
sc:SC2164:scripts/backup.sh
sc:SC2086:scripts/backup.sh
sc:SC2086:scripts/prune.sh
sc:SC3014:scripts/prune.sh
sc:SC2050:tests/notes.bats:count is the number of notes"
}

@test "proving-ground: every finder is silent on the clean twin" {
	local f
	# (corral-find-bats too: the row bt-clean-twin of the full run)
	for f in shellcheck cppcheck gcc testrot deadcanary; do
		run -0 --separate-stderr "corral-find-$f" "$PG/clean-twin"
		[ -z "$output" ] || flunk "corral-find-$f fired on the clean twin:" "$output"
	done
}

@test "proving-ground: the C finders name the planted leak, off-by-one and uninitialised read" {
	ids cppcheck "$PG/planted"
	assert_output "cc:memleak:src/count.c:count_lines
cc:arrayIndexOutOfBounds:src/ring.c:ring_clear
cc:legacyUninitvar:src/stats.c:mean_length"
	ids gcc "$PG/planted"
	assert_output "gcc:leak:src/count.c:count_lines
gcc:oob-index:src/ring.c:ring_clear
gcc:uninit:src/stats.c:mean_length"
	run -0 corral-find-gcc "$PG/planted"
	assert_jsonl 'map(select(.kind == "uninit")) | length == 1 and (.[0] | .trust == "multi-method" and .corroboration == 2 and (.methods | length) == 2)'
	assert_jsonl 'map(select(.kind == "leak")) | length == 1 and (.[0] | .trust == "single-method" and .corroboration == 1)'
}

@test "proving-ground: the test-rot finder names the four shapes that cannot fail, and not their legitimate twins" {
	ids testrot "$PG/planted"
	assert_output "tr:asserts-nothing:tests/notes.bats:list shows the notes
tr:tautology:tests/notes.bats:count is the number of notes
tr:swallowed-failure:tests/notes.bats:prune all drops every note
tr:skip-permanent:tests/notes.bats:a backup holds the notes of the day"
}

@test "proving-ground: the test-rot finder reads shapes, not words" {
	mkdir t
	cp "$CORRAL_ROOT/tests/fixtures/proving-ground/testrot/shapes.bats" t/
	ids testrot t
	assert_output "tr:skip-permanent:shapes.bats:setup
tr:swallowed-failure:shapes.bats:a check in a pipeline of ors
tr:tautology:shapes.bats:same operands"
}

@test "proving-ground: the DEADCANARY finder gives corral-marker-find's identities, any file name" {
	ids deadcanary "$PG/planted"
	assert_output "dc:lib/notes.sh"
	mkdir -p d/sub
	echo 'x DEADCANARY' > 'd/sub/a b:c.txt'
	echo 'nothing here' > d/plain
	run -0 corral-find-deadcanary d
	assert_json '.identity == "dc:sub/a b:c.txt" and .location == "sub/a b:c.txt" and .line == 1'
}

@test "proving-ground: every finding of every finder keeps the finder protocol" {
	local f
	for f in shellcheck cppcheck gcc testrot deadcanary; do
		run -0 "corral-find-$f" "$PG/planted"
		assert_jsonl 'length > 0 and all(.[]; (.identity | type == "string" and length > 0)
			and (.location | type == "string")
			and (.corroboration | type == "number" and . >= 1 and floor == .)
			and (.max_confidence | . >= 0 and . <= 1)
			and (.trust | IN("corroborated", "multi-method", "single-method")))'
	done
}

@test "proving-ground: every planted finding is a row of MANIFEST.json, which says all that is planted" {
	local f
	for f in shellcheck cppcheck gcc testrot deadcanary; do
		run -0 "corral-find-$f" "$PG/planted"
		run -0 jq -rn --arg f "$f" --slurpfile m "$PG/MANIFEST.json" '
			inputs as $x
			| select([$m[0].rows[] | select(.finder == $f
				and (.tree // "planted") == "planted" and .expect == "catch"
				and .path == $x.location
				and (.kind == $x.kind or .kind == $x.rule)
				and (.scope == null or .scope == $x.scope))] | length == 0)
			| $x.identity' <<<"$output"
		assert_output ""
	done
}

@test "proving-ground: two finders that agree on a place and a kind make a corroborated finding" {
	run -0 corral-find-combine corral-find-cppcheck corral-find-gcc "$PG/planted"
	run -0 jq -c '[.identity, .corroboration, .trust, .finder]' <<<"$output"
	assert_output '["co:leak:src/count.c:count_lines",2,"corroborated","cppcheck+gcc"]
["co:oob-index:src/ring.c:ring_clear",2,"corroborated","cppcheck+gcc"]
["co:uninit:src/stats.c:mean_length",3,"corroborated","cppcheck+gcc"]'
	run -0 corral-find-combine corral-find-testrot corral-find-shellcheck "$PG/planted"
	assert_jsonl 'map(select(.kind == "tautology")) | length == 1 and (.[0] | .trust == "corroborated" and .sources == ["sc:SC2050:tests/notes.bats:count is the number of notes", "tr:tautology:tests/notes.bats:count is the number of notes"])'
	assert_jsonl 'map(select(.kind == "asserts-nothing")) | length == 1 and .[0].trust == "single-method"'
}

@test "proving-ground: a finder that could not look makes the finder and a combination exit 2, never an empty answer" {
	SHELLCHECK=/nonexistent run -2 --separate-stderr corral-find-shellcheck "$PG/planted"
	assert_output ""
	assert_stderr "corral-find-shellcheck: '/nonexistent' not found: could not look"
	stub crash 'kill -SEGV $$'
	SHELLCHECK=$PWD/stubs/crash run -2 --separate-stderr corral-find-shellcheck "$PG/planted"
	assert_output ""
	CPPCHECK=/nonexistent run -2 --separate-stderr corral-find-combine corral-find-cppcheck corral-find-gcc "$PG/planted"
	assert_output ""
	assert_contains "$stderr" "could not look: 'corral-find-cppcheck' exited 2"
	run -2 --separate-stderr corral-find-combine corral-find-testrot 'echo not-json; :' "$PG/planted"
	assert_stderr "corral-find-combine: could not look: 'echo not-json; :' printed a line that is not a finding"
	mkdir -p c/src
	printf 'int f( {\n' > c/src/bad.c
	run -2 --separate-stderr corral-find-cppcheck c
	assert_stderr "corral-find-cppcheck: could not look: cppcheck could not analyse src/bad.c: syntaxError"
	run -2 --separate-stderr corral-find-gcc c
	assert_contains "$stderr" "corral-find-gcc: could not look: gcc exited 1 on 'src/bad.c'"
}

@test "proving-ground: the bats finder reports a test that a repair broke" {
	# (and nothing on the planted system: the row bt-planted-tests-pass)
	mkdir sys
	cp -R "$PG/planted/bin" "$PG/planted/lib" "$PG/planted/tests" sys/
	rm sys/tests/backup.bats
	sed -i 's/grep \$NOTES_GREP_FLAGS/grep "$NOTES_GREP_FLAGS"/' sys/bin/notes
	ids bats sys
	assert_output "bats:tests/notes.bats:search finds a note whatever its case"
}

@test "proving-ground: the shellcheck patcher applies shellcheck's own repair, and shellcheck then finds nothing there" {
	cp -R "$PG/planted" sys
	run -0 corral-find-shellcheck sys
	local finding
	finding=$(jq -c 'select(.identity == "sc:SC2164:scripts/backup.sh")' <<<"$output")
	run -0 corral-patch-shellcheck sys <<<"$finding"
	run -0 grep -n 'cd "$src"' sys/scripts/backup.sh
	assert_output '11:cd "$src" || exit'
	ids shellcheck sys
	refute_contains "$output" "sc:SC2164:scripts/backup.sh"
	assert_contains "$output" "sc:SC2086:scripts/backup.sh"
	run -0 diff -r "$PG/planted/lib" sys/lib
}

@test "proving-ground: the shellcheck patcher exits 1 with no repair, 2 on a location outside the clone" {
	cp -R "$PG/planted" sys
	run -0 corral-find-shellcheck sys
	CORRAL_FINDING=$(jq -c 'select(.rule == "SC2002")' <<<"$output") \
		run -1 corral-patch-shellcheck sys
	run -0 diff -r "$PG/planted" sys
	run -2 --separate-stderr corral-patch-shellcheck sys <<<'{"rule":"SC2086","location":"../x.sh"}'
	assert_stderr "corral-patch-shellcheck: location '../x.sh' is not a relative path inside 'sys'"
	mkdir elsewhere
	cp sys/bin/notes elsewhere/
	ln -s "$PWD/elsewhere" sys/out
	run -2 --separate-stderr corral-patch-shellcheck sys <<<'{"rule":"SC2086","location":"out/notes"}'
	assert_stderr "corral-patch-shellcheck: location 'out/notes' leads out of 'sys'"
	run -0 cmp sys/bin/notes elsewhere/notes
	run -2 --separate-stderr corral-patch-shellcheck sys <<<'{"rule":"rm -rf","location":"bin/notes"}'
	assert_stderr "corral-patch-shellcheck: rule 'rm -rf' is not a shellcheck code"
}

@test "proving-ground: run scores every row exactly once through make -j2 corral-run, and exits 0" {
	full_run
	assert_equal 0 "$(cat "$BATS_FILE_TMPDIR/full.status")"
	local d=$BATS_FILE_TMPDIR/full
	assert_json '.units == 44 and .merged == 44 and .missing == 0 and .duplicates == 0 and .agents == 44' "$d/corral/summary.json"
	run -0 verdicts "$d"
	assert_equal "$(jq -r '.rows[].id' "$PG/MANIFEST.json" | LC_ALL=C sort)" "$(cut -d' ' -f1 <<<"$output")"
	# Every row as expected: caught, quiet, held.
	run -0 jq -r '.rows[] | "\(.id) \({catch: "CAUGHT", quiet: "QUIET-OK", hold: "HELD"}[.expect])"' "$PG/MANIFEST.json"
	assert_equal "$(LC_ALL=C sort <<<"$output")" "$(verdicts "$d")"
}

@test "proving-ground: REPORT.md holds the tally and one line per row, as the run merged them" {
	full_run
	local d=$BATS_FILE_TMPDIR/full v n
	run -0 cat "$d/REPORT.md"
	for v in CAUGHT QUIET-OK HELD GAP OVER-FIRE VIOLATED COULD-NOT-LOOK; do
		n=$(verdicts "$d" | awk -v v="$v" '$2 == v' | wc -l)
		assert_contains "$output" "| $v | $n |"
	done
	run -0 sed -n 's/^- \[\([A-Z-]*\)\] `\([^`]*\)`.*/\2 \1/p' "$d/REPORT.md"
	assert_equal "$(verdicts "$d")" "$(LC_ALL=C sort <<<"$output")"
	run -0 grep -c '^- \[' "$d/REPORT.md"
	assert_output 44
	run -0 grep -F 'No GAP' "$d/REPORT.md"
	run -0 tail -n 2 "$BATS_FILE_TMPDIR/full.out"
	assert_output "proving ground: CAUGHT 22, QUIET-OK 16, HELD 6, GAP 0, OVER-FIRE 0, VIOLATED 0, COULD-NOT-LOOK 0 -- $d/REPORT.md
GAPS (roadmap): 0"
}

@test "proving-ground: the README states the numbers the run gives" {
	full_run
	run -0 grep -F "44 rows: CAUGHT 22, QUIET-OK 16, HELD 6, GAP 0, OVER-FIRE 0, VIOLATED 0, COULD-NOT-LOOK 0" "$CORRAL_ROOT/README.md"
	run -0 grep -F "proving ground: CAUGHT 22, QUIET-OK 16, HELD 6, GAP 0, OVER-FIRE 0, VIOLATED 0, COULD-NOT-LOOK 0" "$BATS_FILE_TMPDIR/full.out"
}

@test "proving-ground: corral's own rows held, each with what it saw" {
	full_run
	run -0 jq -r 'select(.unit | startswith("corral-")) | .note' "$BATS_FILE_TMPDIR/full/corral/successes.jsonl"
	assert_contains "$output" "HELD: corral-exactly-once -- 40 units in 40 slices, 8 agents at a time: 40 units, 40 merged, 34 passed, 6 failed, 0 missing, 0 duplicates, 40 agents; each unit exactly once"
	assert_contains "$output" "HELD: corral-crash-logged -- 6 units killed by SIGSEGV, each logged as a crash failure; 34 passed"
	assert_contains "$output" "HELD: corral-one-unit-eight-agents -- 1 unit over 8 agents: 1 unit, 1 merged, 1 passed, 1 agent"
	assert_contains "$output" "HELD: corral-slices-disjoint -- 40 units in 8 slices of 5: every unit in exactly one"
	assert_contains "$output" "HELD: corral-kill-resume -- SIGKILL of an agent:"
	assert_contains "$output" "HELD: corral-merges-never-interleave -- 10 rounds of two merges at once"
}

@test "proving-ground: a missing, crashing, hanging or babbling finder is COULD-NOT-LOOK, and the run exits 2" {
	# PG_TIMEOUT cuts the hanging stub; it must leave the real gcc-leak
	# finder (gcc -fanalyzer) the seconds it takes on a loaded machine
	stub crash 'kill -SEGV $$'
	stub hang 'sleep 60'
	stub babble 'echo "found nothing, I think"'
	CORRAL_FINDER_SHELLCHECK=/nonexistent CORRAL_FINDER_TESTROT=$PWD/stubs/crash \
	CORRAL_FINDER_DEADCANARY=$PWD/stubs/hang CORRAL_FINDER_CPPCHECK=$PWD/stubs/babble \
	PG_TIMEOUT=10 run -2 "$PG/run" -j2 -o out sc-clean-twin t-tautology-corroborated \
		tr-clean-twin dc-marker cc-clean-twin gcc-leak
	run -0 verdicts out
	assert_output "cc-clean-twin COULD-NOT-LOOK
dc-marker COULD-NOT-LOOK
gcc-leak CAUGHT
sc-clean-twin COULD-NOT-LOOK
t-tautology-corroborated COULD-NOT-LOOK
tr-clean-twin COULD-NOT-LOOK"
	run -0 cat out/REPORT.md
	assert_contains "$output" "| COULD-NOT-LOOK | 5 |"
	assert_contains "$output" "- [COULD-NOT-LOOK] \`sc-clean-twin\` (shellcheck, quiet) -- finder 'shellcheck' not found: CORRAL_FINDER_SHELLCHECK is '/nonexistent'"
	assert_contains "$output" "- [COULD-NOT-LOOK] \`tr-clean-twin\` (testrot, quiet) -- finder 'testrot' crashed: signal 11"
	assert_contains "$output" "- [COULD-NOT-LOOK] \`dc-marker\` (deadcanary, catch) -- finder 'deadcanary' timed out after 10s"
	assert_contains "$output" "- [COULD-NOT-LOOK] \`cc-clean-twin\` (cppcheck, quiet) -- finder 'cppcheck' printed a line that is not a finding"
	assert_contains "$output" "- [COULD-NOT-LOOK] \`t-tautology-corroborated\` (testrot+shellcheck, catch) -- finder 'shellcheck' not found"
}

@test "proving-ground: a finder that fires on the clean twin is OVER-FIRE (exit 1); one that finds nothing is a GAP kept as roadmap (exit 0)" {
	stub always 'echo "{\"identity\":\"dc:lib/notes.sh\",\"location\":\"lib/notes.sh\",\"kind\":\"marker\"}"'
	CORRAL_FINDER_DEADCANARY=$PWD/stubs/always run -1 "$PG/run" -j2 -o out dc-marker dc-clean-twin
	run -0 verdicts out
	assert_output "dc-clean-twin OVER-FIRE
dc-marker CAUGHT"
	stub never ':'
	CORRAL_FINDER_DEADCANARY=$PWD/stubs/never run -0 "$PG/run" -j2 -o out dc-marker dc-clean-twin
	assert_contains "$output" "- \`dc-marker\` (deadcanary): no finding of marker at planted/lib/notes.sh"
	assert_contains "$output" "GAPS (roadmap): 1"
	run -0 verdicts out
	assert_output "dc-clean-twin QUIET-OK
dc-marker GAP"
}

@test "proving-ground: a corral that loses a unit is VIOLATED" {
	mkdir bin
	local p
	for p in "$CORRAL_TEST_BIN"/*; do ln -s "$p" "bin/${p##*/}"; done
	rm bin/corral-split
	# corral-split that drops the last unit of each slice file, for a
	# slice count of 8 only (the proving ground's own run uses 2).
	stub corral-split '"$CORRAL_TEST_BIN/corral-split" "$@" || exit
[ "$2" = 8 ] || exit 0
for f in "$4"/*.units; do sed -i "\$d" "$f"; done'
	mv stubs/corral-split bin/
	CORRAL_BIN=$PWD/bin run -1 "$PG/run" -j2 -o out corral-slices-disjoint
	run -0 jq -r .note out/corral/failures.jsonl
	assert_output "VIOLATED: corral-slices-disjoint -- slice sizes: 4"
}

@test "proving-ground: run refuses an unknown row and a manifest with a repeated id" {
	run -2 --separate-stderr "$PG/run" -o out no-such-row
	assert_stderr "run: no row 'no-such-row' in '$PG/MANIFEST.json'"
	echo '{"rows": [{"id": "a", "finder": "deadcanary"}, {"id": "a", "finder": "gcc"}]}' > m.json
	run -2 --separate-stderr "$PG/run" -m m.json -o out
	assert_stderr "run: '$PWD/m.json': .rows must be a list of rows with unique ids of a-z, 0-9, '.', '-'"
}

@test "proving-ground: the repair round without corral-fix is COULD-NOT-LOOK, never a pass" {
	CORRAL_FIX=/nonexistent run -2 --separate-stderr "$PG/repair" -o out
	assert_output "COULD-NOT-LOOK: repair round -- corral-fix not found (/nonexistent): the round cannot run"
	stub fix 'echo "corral-fix: could not look: the finder ended with exit 2" >&2; exit 2'
	CORRAL_FIX=$PWD/stubs/fix run -2 --separate-stderr "$PG/repair" -o out
	assert_output "COULD-NOT-LOOK: repair round -- corral-fix exited 2 in round 1: corral-fix: could not look: the finder ended with exit 2"
	assert_no_file out/REPAIR.md
}

@test "proving-ground: scale gives the same systems and scores for a seed, every control quiet" {
	run -0 "$PG/scale" -n 1 -s 7 -o one
	local first=$output
	assert_contains "$output" "scale: 1 system(s) from seed 7, 24 planted file(s)"
	assert_contains "$output" "every finder looked; no control drew a finding"
	run -0 "$PG/scale" -n 1 -s 7 -o two
	assert_equal "${first//one/two}" "$output"
	assert_equal "$(cd one/systems && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)" \
		"$(cd two/systems && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)"
	cmp one/scale.tsv two/scale.tsv
	cmp one/truth.tsv two/truth.tsv
	# Another seed plants otherwise.
	mkdir -p three/sys-01/sh three/sys-01/src three/sys-01/tests three/sys-01/notes
	awk -v seed=8 -v n=1 -v out=three -f "$PG/lib/scale-gen.awk" > three.tsv
	[ "$(cut -f2- three.tsv)" != "$(grep '^sys-01' one/truth.tsv | cut -f2-)" ]
}

@test "proving-ground: scale counts a finder that could not look as such, never as quiet" {
	CORRAL_FINDER_GCC=/nonexistent run -2 "$PG/scale" -n 1 -s 7 -o out
	assert_contains "$output" "COULD-NOT-LOOK:"
	assert_contains "$output" "sys-01	gcc	finder 'gcc' not found: CORRAL_FINDER_GCC is '/nonexistent'"
	run -0 awk -F '\t' '$1 == "gcc" { print $2, $3 + $4 + $5 + $6, ($7 > 0) }' out/scale.tsv
	assert_output "leak 0 1
oob-index 0 1
uninit 0 1"
}

@test "proving-ground: its own scripts pass shellcheck" {
	cd "$PG"
	run -0 shellcheck -x run repair scale lib/score-row lib/corral-row lib/finder.sh finders/corral-*
}
