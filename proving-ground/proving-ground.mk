################################################################################
#
# proving-ground.mk -- the proving ground as a corral project
#
################################################################################
#
# Every row of the manifest is a unit; lib/score-row gives it its verdict
# inside an agent's private clone of this directory.  proving-ground/run
# drives it and writes REPORT.md; by hand:
#
#   make -f proving-ground/proving-ground.mk -j4 corral-run \
#           PG_OUT=/tmp/pg PG_UNITS=/tmp/pg/units
#
# Inputs:
#   PG_OUT        where the results go (CORRAL_OUT is PG_OUT/corral)
#   PG_UNITS      a file of row ids, one per line
#   and, in the environment, PG_MANIFEST (the rows), PG_CORRAL_MK (the
#   corral.mk corral's own rows use), CORRAL_BIN, CORRAL_FINDER_<NAME>,
#   PG_TIMEOUT: see lib/score-row.

CORRAL_SRC        := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
CORRAL_UNITS_FILE  = $(PG_UNITS)
CORRAL_OUT         = $(PG_OUT)/corral
CORRAL_PARTS       = planted clean-twin finders lib
CORRAL_CMD         = lib/score-row "$$CORRAL_UNIT"

include $(CORRAL_SRC)/../corral.mk
