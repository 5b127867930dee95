#!/usr/bin/env bats
# split.bats -- corral-split cuts a population into disjoint, balanced slices.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	_corral_setup
}

USAGE='usage: corral-split [-0hj] [-n N] [-o DIR] [FILE]'

@test "split: -h prints usage to stdout and exits 0" {
	run -0 --separate-stderr corral-split -h
	assert_output "$USAGE"
	assert_stderr ""
}

@test "split: missing -n prints usage to stderr and exits 2" {
	run -2 --separate-stderr corral-split
	assert_output ""
	assert_stderr "$USAGE"
}

@test "split: two operands print usage and exit 2" {
	run -2 --separate-stderr corral-split -n 2 a b
	assert_stderr "$USAGE"
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

@test "split: a NUL byte inside a newline-separated unit is refused" {
	printf 'a\0b\n' > units
	run -2 --separate-stderr corral-split -n 1 units
	assert_stderr "corral-split: 'units': unit 1 holds a NUL byte"
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
