#!/usr/bin/env bats
# backup.bats -- a backup, then a restore, gives the notes back.
bats_require_minimum_version 1.5.0

setup() {
	load test_helper
	command -v tar >/dev/null || skip "tar is not installed"
}

teardown() {
	chmod -R u+w "$BATS_TEST_TMPDIR" 2>/dev/null || true
}

@test "backup then restore gives the notes back" {
	run -0 notes add one
	run -0 backup.sh "$BATS_TEST_TMPDIR/backups"
	archive=$output
	rm -f "$NOTES_DIR/notes.txt"
	run -0 restore.sh "$archive"
	run -0 notes list
	[ "$output" = one ]
}

@test "restore of a missing archive fails" {
	run restore.sh "$BATS_TEST_TMPDIR/none.tar"
	[ "$status" -ne 0 ]
}
