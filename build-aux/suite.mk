################################################################################
#
# suite.mk -- corral runs its own suite: each bats file a unit
#
################################################################################
#
# build-aux/run-tests runs 'make -f build-aux/suite.mk -jN corral-run'
# with, in its environment:
#   SUITE_RUNNER      the corral programs that run the suite (those under
#                     test, without the VALGRIND=1 wrapper the tests get
#                     in CORRAL_TEST_BIN)
#   SUITE_OUT         where the run's results go (CORRAL_OUT)
#   SUITE_FILES       the bats files to run, relative to the tree
# Each file runs where it is, in the tree (its tests find the tree from
# their own path, and write only in their own temporary directories);
# its agent's clone holds just the file.  Every unit gets a TMPDIR of its
# own (CORRAL_TMP's default), so bats's temporary directories never meet.
# The TAP of each file is counted by corral itself (the records' "tests").
# suite-history.jsonl, the files' durations in one run, plans the first
# run of a fresh checkout (CI's), the longest files first, so that the two
# longest, whose size says nothing of their time, do not start last; a
# stale one costs only balance.  Refresh it from a run's results with
#   jq -c '{agent_id:"0",unit,ok:true,note:"PASS: exit 0",at,duration_ms}' \
#     build/release/suite/successes.jsonl | sort > build-aux/suite-history.jsonl

__suite_root := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))..)

CORRAL_SRC     := $(__suite_root)
CORRAL_OUT     := $(SUITE_OUT)
CORRAL_BIN     := $(SUITE_RUNNER)
CORRAL_UNITS   := $(SUITE_FILES)
CORRAL_CMD      = bats --formatter tap "$(__suite_root)/$$CORRAL_UNIT"
CORRAL_JUNIT   := $(SUITE_OUT)/junit.xml
CORRAL_HTML    := $(SUITE_OUT)/run.html
CORRAL_SLOWEST := 10
CORRAL_HISTORY := $(__suite_root)/build-aux/suite-history.jsonl

include $(__suite_root)/corral.mk
