#!/bin/sh
# corral-patch-shellcheck -- apply shellcheck's own repair for a finding.
#
# usage: corral-patch-shellcheck [DIR]
#
# A corral patcher: the finding (a line of corral-find-shellcheck) comes
# in CORRAL_FINDING, else on standard input; DIR (default .) is the clone
# to change.  It asks 'shellcheck -f diff --include=RULE' for the repairs
# that the tool itself knows for the finding's rule in the file at its
# location, and applies them with patch(1): every occurrence of that rule
# in that file, since that is what the diff holds.  Whether the repair
# is right is for corral-fix to judge, by running the finders again.
#
# Exit 0 when it changed the file, 1 when shellcheck has no repair for
# it (many rules have none, e.g. SC2002) or the finding is another
# finder's (its "finder" does not name shellcheck), 2 on an error: a
# location that is not a plain relative path to a file inside DIR, a
# rule that is not a shellcheck code, shellcheck or patch failing.
prog=corral-patch-shellcheck
synopsis='corral-patch-shellcheck [DIR]'
options=
#include usage.sh
sc=${SHELLCHECK:-shellcheck}

parse_options h : "$@"
shift "$nopts"
[ "$#" -le 1 ] || usage 2
cd "${1:-.}" || die "cannot enter '${1:-.}'"
if [ -z "${CORRAL_FINDING:-}" ]; then
	CORRAL_FINDING=$(cat) || die "cannot read the finding"
fi
# Another finder's finding (the suite's, say, when finders are combined)
# is none of shellcheck's: no repair.  A combined one carries shellcheck's
# rule among the others'.
finder=$(printf '%s\n' "$CORRAL_FINDING" | jq -r '.finder // "shellcheck"') ||
	die "the finding is not JSON"
case +$finder+ in
*+shellcheck+*) ;;
*) exit 1 ;;
esac
rule=$(printf '%s\n' "$CORRAL_FINDING" | jq -r '.rule // empty
	| (split(" ") | map(select(test("^SC[0-9]{4}$"))) | first) // .') ||
	die "the finding is not JSON"
path=$(printf '%s\n' "$CORRAL_FINDING" | jq -r '.location // empty') ||
	die "the finding is not JSON"

case $rule in
SC[0-9][0-9][0-9][0-9]) ;;
*) die "rule '$rule' is not a shellcheck code" ;;
esac
case /$path/ in
//|/-*|//*|*/../*|*/./*) die "location '$path' is not a relative path inside '${1:-.}'" ;;
esac
if [ ! -f "$path" ] || [ -L "$path" ]; then
	die "cannot patch '$path': no such regular file"
fi
case $(realpath -- "$path") in
"$(pwd -P)"/*) ;;
*) die "location '$path' leads out of '${1:-.}'" ;;
esac

make_tmp
diff=$tmp/diff
"$sc" -f diff --include="$rule" -- "$path" > "$diff" 2>/dev/null
st=$?
[ "$st" -le 1 ] || die "$sc exited $st on '$path'"
[ -s "$diff" ] || exit 1
patch -s -p1 --no-backup-if-mismatch -r - < "$diff" >&2 ||
	die "patch could not apply shellcheck's diff to '$path'"
exit 0
