#!/bin/sh
# corral-find-suite -- a project's corral.mk suite as a finder.
#
# usage: corral-find-suite [-f MAKEFILE] [-j N] [DIR]
#
# Runs 'make -C DIR -f MAKEFILE -jN corral-run' (MAKEFILE relative to
# DIR, default Makefile; N default the number of processors) with a
# CORRAL_OUT of its own, in a new directory under TMPDIR that is never
# inside DIR and never the user's, removed at the end; the corral.mk
# settings of the environment (CORRAL_*, but CORRAL_BIN and CORRAL_CACHE)
# and make's own (MAKEFLAGS...) are not passed on: CORRAL_CACHE, the
# store corral-fix gives a repair session, spares the units whose key a
# candidate left alone.  It prints one finding per unit that did not pass:
#
#   identity        suite:UNIT
#   location        UNIT (a unit is often a path in DIR)
#   kind, rule      "test-fails";  status the unit's (fail, timeout, ...)
#   message         the unit's note, else its status
#   corroboration 1, trust single-method, max_confidence .9: a failing
#   test is observed, not inferred, but it may fail for its own reasons.
#
# With it, corral-fix keeps a repair only if the suite passes what it
# passed before: a unit the repair breaks is a new finding.  Exit 0 when
# the suite ran and every unit was merged exactly once, passing or not;
# 2 when it could not look: no MAKEFILE, make stopped before a summary,
# or a unit missing, merged twice or unexpected.
prog=corral-find-suite
synopsis='corral-find-suite [-f MAKEFILE] [-j N] [DIR]'
options='-f MAKEFILE	the Makefile in DIR that includes corral.mk
-j N	jobs of the run'
#include usage.sh

makefile=Makefile
jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null) || jobs=1
suite_option() {
	case $1 in
	f) makefile=$2 ;;
	j) jobs=$2 ;;
	esac
}
parse_options f:hj: suite_option "$@"
shift "$nopts"
[ "$#" -le 1 ] || usage 2
case $jobs in ''|*[!0-9]*|0*) die "jobs '$jobs' is not a number from 1" ;; esac
dir=${1:-.}
root=$(cd -- "$dir" 2>/dev/null && pwd -P) || die "cannot enter '$dir'"
case $makefile in
/*) mk=$makefile ;;
*) mk=$root/$makefile ;;
esac
[ -f "$mk" ] || die "could not look: no '$makefile' in '$dir'"

# What the caller's make or corral.mk run set must not steer this one;
# CORRAL_CACHE, a store of results keyed by what each unit read, only
# spares what cannot have changed (corral-fix's session store).
for v in $(env | sed -n 's/^\(CORRAL_[A-Za-z0-9_]*\)=.*/\1/p'); do
	case $v in CORRAL_BIN|CORRAL_CACHE) ;; *) unset "$v" ;; esac
done
unset MAKEFLAGS MFLAGS GNUMAKEFLAGS MAKELEVEL MAKEOVERRIDES MAKEFILES

make_tmp
case $(cd "$tmp" && pwd -P) in
"$root"|"$root"/*) die "could not look: the temporary directory '$tmp' is inside '$dir'" ;;
esac
out=$tmp/out

make -C "$root" -f "$mk" -j"$jobs" corral-run CORRAL_OUT="$out" \
	> "$tmp/make.log" 2>&1 < /dev/null
st=$?
[ -f "$out/summary.json" ] ||
	die "could not look: make corral-run exited $st before a summary: $(tail -n 1 "$tmp/make.log")"
jq -e '.units == .merged and .missing == 0 and .duplicates == 0 and
	(.unexpected // 0) == 0' "$out/summary.json" > /dev/null ||
	die "could not look: not every unit was merged exactly once: $(jq -c \
	'{units, merged, missing, duplicates, unexpected}' "$out/summary.json")"
[ -f "$out/failures.jsonl" ] || exit 0
jq -cs 'map(select(.ok != true)) | sort_by(.unit) | .[]
	| {identity: "suite:\(.unit)", location: .unit, scope: "-",
	   kind: "test-fails", rule: "test-fails", status: .status,
	   message: (if (.note // "") != "" then .note else "status \(.status)" end),
	   finder: "suite", corroboration: 1, max_confidence: 0.9,
	   trust: "single-method"}' "$out/failures.jsonl" ||
	die "could not look: cannot read '$out/failures.jsonl'"
