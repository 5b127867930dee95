# suite.mk -- shellfix's test suite, through corral.mk.
#
# Each tests/*.sh is one unit; each agent clones libexec/ and its own
# tests.  corral-find-suite runs it as a finder: 'make -f suite.mk
# corral-run' with a CORRAL_OUT of its own.
#
#   make -f suite.mk -j4 corral-run

CORRAL_DISCOVER = find tests -name '*.sh' | LC_ALL=C sort
CORRAL_CMD      = sh "$$CORRAL_UNIT"
CORRAL_PARTS    = libexec

include $(shell corral-mk-path)
