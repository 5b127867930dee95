#!/bin/sh
# repair.sh -- a repair round on a real suite against one serial run of
# that suite, side by side (issue 26 item 6: at most 5x one serial run).
#
#   usage: bench/repair.sh [RBENV [ROUNDS]]     (or BENCH_RBENV=RBENV; 1 round)
#
# RBENV is a checkout of rbenv (github.com/rbenv/rbenv), copied once; it
# is not part of this repository, so without one the script says so and
# exits 0.  As examples/shellfix does, it plants in the copy's libexec/
# three real defects that shellcheck finds and repairs with its own diff
# and that rbenv's suite catches, and one decoy: code that splits a
# variable on purpose, whose shellcheck repair (quoting it) breaks the
# suite:
#
#   libexec/rbenv-commands           [ -n $path ]: a PATH entry with a space is skipped (commands.bats)
#   libexec/rbenv-global             [ -n $RBENV_VERSION ]: no version is taken as one (global.bats)
#   libexec/rbenv-version-file-read  [ -n $version ]: a blank file is a version (version-file-read.bats)
#   libexec/rbenv-help (decoy)       type -P $names, the two names split on purpose (help.bats)
#
# Then, each round,
#
#   serial  bats test/ in an unplanted copy
#   before  the repair round with no store: CORRAL_CACHE set and empty, so
#           every look of the finder runs the whole suite
#   serial  again
#   after   the same round with corral-fix's session store (CORRAL_CACHE
#           unset: WORK/cache), so a look runs only the units whose key
#           the candidate changed, and those that failed (never stored)
#
# where the round is a dry run of
#
#   corral-fix -T -f "corral-find-combine 'corral-find-shellcheck -i libexec' \
#       'corral-find-suite -f suite.mk'" -p corral-patch-shellcheck ROOT
#
# with suite.mk the README's recipe for a bats suite (CORRAL_PARTS =
# auto) and corral-find-suite's default -j (the CPUs).  Each round checks
# the outcome (the three verified, the decoy rolled back, the combined
# check passed) and counts the bats files each side ran (CORRAL_CMD
# notes each unit it starts).  It prints each side's ratio to the mean
# of the round's two serial runs, and their medians.  Needs corral's programs on PATH
# (make bench puts bin/ there), bats, shellcheck, jq.
set -eu

rbenv=${1:-${BENCH_RBENV:-}}
rounds=${2:-1}
if [ -z "$rbenv" ]; then
	echo "repair: skipped (give a checkout of rbenv: bench/repair.sh DIR, or BENCH_RBENV=DIR)"
	exit 0
fi
if [ ! -d "$rbenv/libexec" ] || [ ! -d "$rbenv/test" ]; then
	echo "repair: '$rbenv' is not a checkout of rbenv (no libexec/ and test/)" >&2
	exit 2
fi
for c in bats shellcheck jq corral-fix; do
	command -v "$c" > /dev/null 2>&1 || { echo "repair: '$c' is not on PATH" >&2; exit 2; }
done
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/corral-repair.XXXXXX")
trap 'rm -rf "$work"' EXIT
# corral-fix's clones and corral-find-suite's CORRAL_OUT go here too
export TMPDIR="$work/tmp"
mkdir "$TMPDIR"
unset CORRAL_CACHE

cp -R "$rbenv" "$work/serial"
rm -rf "$work/serial/.git" "$work/serial/.corral"
cp -R "$work/serial" "$work/planted"

# plant FILE FROM TO: replace the one line FROM (a fixed string) of
# libexec/FILE by TO, or stop: another rbenv than the one this was
# written against must not pass for a measurement
plant() {
	f=$work/planted/libexec/$1
	n=$(grep -cxF -- "$2" "$f") || n=0
	[ "$n" = 1 ] || { echo "repair: '$2' is in libexec/$1 $n times, not once: this rbenv differs from the one the bench plants in" >&2; exit 2; }
	awk -v from="$2" -v to="$3" '$0 == from { print to; next } { print }' "$f" > "$f.new"
	cat "$f.new" > "$f" && rm "$f.new"
}
# shellcheck disable=SC2016 # the lines are rbenv's code, not ours
{
	plant rbenv-commands '    if [ -n "$path" ]; then' '    if [ -n $path ]; then'
	plant rbenv-global 'if [ -n "$RBENV_VERSION" ]; then' 'if [ -n $RBENV_VERSION ]; then'
	plant rbenv-version-file-read '  elif [ -n "$version" ]; then' '  elif [ -n $version ]; then'
	plant rbenv-help '  type -P rbenv-"$command" rbenv-sh-"$command" | head -n1' \
		'  local names="rbenv-$command rbenv-sh-$command"; type -P $names | head -n1'
}
cat > "$work/planted/suite.mk" <<ZZMK
CORRAL_DISCOVER = find test -maxdepth 1 -type f -name '*.bats'
CORRAL_CMD      = echo "\$\$CORRAL_UNIT" >> '$work/ran'; bats "\$\$CORRAL_UNIT"
CORRAL_PARTS    = auto
include $root/corral.mk
ZZMK
n=$(find "$work/serial/test" -maxdepth 1 -type f -name '*.bats' | wc -l)

now_ns() { date +%s%N; }
serial() { (cd "$work/serial" && bats test/ > /dev/null 2>&1) || :; }
# round SIDE: one dry run of the repair round, checked; leaves its
# nanoseconds in t and the bats files it ran in ran
round() {
	: > "$work/ran"
	t0=$(now_ns)
	if [ "$1" = before ]; then
		CORRAL_CACHE='' corral-fix -T -J -f "corral-find-combine 'corral-find-shellcheck -i libexec' 'corral-find-suite -f suite.mk'" \
			-p corral-patch-shellcheck "$work/planted" > "$work/$1.json" 2> "$work/$1.err" || :
	else
		corral-fix -T -J -f "corral-find-combine 'corral-find-shellcheck -i libexec' 'corral-find-suite -f suite.mk'" \
			-p corral-patch-shellcheck "$work/planted" > "$work/$1.json" 2> "$work/$1.err" || :
	fi
	t1=$(now_ns)
	t=$((t1 - t0)) ran=$(wc -l < "$work/ran")
	jq -e '(.verified | sort) == ["sc:SC2086:libexec/rbenv-commands",
	    "sc:SC2086:libexec/rbenv-global", "sc:SC2086:libexec/rbenv-version-file-read"]
	    and .rolled_back == ["sc:SC2086:libexec/rbenv-help:command_path"]
	    and .combined.ok' "$work/$1.json" > /dev/null 2>&1 ||
		{ echo "repair: the round ($1) did not verify the three repairs and roll back the decoy:" >&2
		  tail -n 3 "$work/$1.err" >&2; jq -c '.results[]? | [.identity, .status]' "$work/$1.json" >&2 || :; exit 1; }
}
secs() { awk -v n="$1" 'BEGIN { printf "%.1f", n / 1e9 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f\n", a / b }'; }

echo "repair: $rbenv, $n bats files, 3 planted defects and a decoy, $rounds round(s), load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %9s %9s %9s %7s %6s %9s %7s %6s\n' round 'serial s' 'serial s' 'before s' ratio files 'after s' ratio files
: > "$work/rb" && : > "$work/ra"
i=1
while [ "$i" -le "$rounds" ]; do
	t0=$(now_ns); serial; t1=$(now_ns); s1=$((t1 - t0))
	round before; b=$t rb=$ran
	t0=$(now_ns); serial; t1=$(now_ns); s2=$((t1 - t0))
	round after; a=$t ra=$ran
	# both sides against the mean of the round's two serial runs: one
	# serial run can take twice another in the same minutes here
	s=$(((s1 + s2) / 2))
	ratio "$b" "$s" >> "$work/rb"
	ratio "$a" "$s" >> "$work/ra"
	printf '%-6d %9s %9s %9s %7s %6s %9s %7s %6s\n' "$i" "$(secs "$s1")" "$(secs "$s2")" \
		"$(secs "$b")" "$(ratio "$b" "$s")" "$rb" "$(secs "$a")" "$(ratio "$a" "$s")" "$ra"
	i=$((i + 1))
done
median() { sort -g | awk 'NF { v[++n] = $1 } END {
	print n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }'; }
echo "repair round / one serial bats test/, median of $rounds: before (no store) $(median < "$work/rb"), after (the session store) $(median < "$work/ra") (target <= 5)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
