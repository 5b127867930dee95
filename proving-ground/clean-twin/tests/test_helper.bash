# test_helper.bash -- run the notes commands from this checkout, on notes
# of the test's own.
NOTES_ROOT=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
PATH=$NOTES_ROOT/bin:$NOTES_ROOT/scripts:$PATH
NOTES_DIR=$BATS_TEST_TMPDIR/notes
export NOTES_ROOT PATH NOTES_DIR
