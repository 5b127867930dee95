# rounds.sh -- corral-run-slice timed per unit, plain against with some
# options, in interleaved rounds (so that a change in the machine's load
# falls on both sides alike).  Sourced by limits.sh, sandbox.sh and tmp.sh,
# which set units and rounds first; it gives:
#
#   work                 a new directory, removed at exit, holding 'slice'
#                        (units 1 to $units) and the logs; TMPDIR is it
#   per_unit ARGS...     microseconds per unit of one corral-run-slice run
#                        of 'true' over the slice, with ARGS
#   bench_rounds WHAT ARGS...
#                        $rounds rounds of a plain run then one with ARGS,
#                        each printed as "round R: P us/unit plain, Q us/unit
#                        WHAT, ratio Q/P"
#   bench_median FORMAT  printf FORMAT with N, the median over the N
#                        rounds of the ratio, and that of the cost of ARGS
#                        a unit (Q - P) in ms
# shellcheck shell=sh
: "${units:?}" "${rounds:?}"
work=$(mktemp -d "${TMPDIR:-/tmp}/corral-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
seq 1 "$units" > "$work/slice"
export TMPDIR="$work"
: > "$work/ratios"

per_unit() {
	t0=$(date +%s%N)
	corral-run-slice "$@" -c true -l "$work/logs" K "$work/slice"
	t1=$(date +%s%N)
	echo $(( (t1 - t0) / 1000 / units ))
}

bench_rounds() {
	what=$1
	shift
	r=1
	while [ "$r" -le "$rounds" ]; do
		plain=$(per_unit)
		with=$(per_unit "$@")
		echo "$plain $with" | awk -v r="$r" -v what="$what" '{
			printf "round %d: %d us/unit plain, %d us/unit %s, ratio %.3f\n",
			    r, $1, $2, what, $2 / $1
			print $2 / $1, $2 - $1 > "/dev/stderr" }' 2>> "$work/ratios"
		r=$((r + 1))
	done
}

bench_median() {
	sort -n "$work/ratios" | awk -v f="$1" '{ v[NR] = $1; d[NR] = $2 } END {
		a = int((NR + 1) / 2); b = int(NR / 2) + 1
		printf f, NR, (v[a] + v[b]) / 2, (d[a] + d[b]) / 2000 }'
}
