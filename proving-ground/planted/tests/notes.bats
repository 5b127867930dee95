#!/usr/bin/env bats
# notes.bats -- the notes command and the scripts around it.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
}

@test "add stores one note per line" {
	run -0 notes add buy milk
	run -0 notes add call bob
	run -0 notes list
	[ "$output" = "buy milk
call bob" ]
}

@test "list shows the notes" {
	run notes add water the plants
	run notes list
}

@test "count is the number of notes" {
	run -0 notes add one
	run -0 notes add two
	run -0 notes count
	[ 2 -eq 2 ]
}

@test "prune all drops every note" {
	run -0 notes add one
	run prune.sh all
	[ "$(notes count)" -eq 0 ] || true
}

@test "search finds a note whatever its case" {
	run -0 notes add "Buy MILK"
	run -0 notes add "call bob"
	run -0 notes search milk
	[ "$output" = "Buy MILK" ]
}

@test "check accepts a file of non-empty notes" {
	run -0 notes add one
	run -0 notes check
}

@test "a backup holds the notes of the day" {
	skip "backups are being rewritten"
	run -0 notes add one
	run -0 backup.sh "$BATS_TEST_TMPDIR/backups"
	run -0 tar -xOf "$output" notes.txt
	[ "$output" = one ]
}
