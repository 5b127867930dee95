#!/bin/sh
# corral-find-combine -- several finders as one; agreement is corroboration.
#
# usage: corral-find-combine [-i PATH] FINDER... DIR
#
# Runs each FINDER (a command; DIR is appended as its last argument) on
# DIR and prints their findings as one finder would.  Two findings agree
# when they name the same file, the same kind and the same scope (the
# function or test around them): the line is not compared, because tools
# place one defect on different lines (cppcheck puts a leak on the
# 'return', gcc on the test before it).  When findings of two or more
# different finders agree, they become one finding:
#
#   identity        co:KIND:PATH[:SCOPE]
#   trust           corroborated
#   corroboration   the sum, over the finders that agree, of each one's own
#                   corroboration (gcc's multi-method counts 2)
#   max_confidence  the highest of theirs;  finder "cppcheck+gcc"
#   sources         the identities they gave it
#
# Every other finding passes through unchanged, with its own trust.
# With -i PATH (repeatable, relative to DIR) only the findings whose
# location is PATH or lies under it are printed; the finders themselves
# look where they were told to.  If
# any finder could not look (exit status other than 0, or a line that is
# not a finding), this one could not look either: half an answer would
# read as "the others found nothing".  Exit 0 when every finder looked, 2
# otherwise.
prog=corral-find-combine
synopsis='corral-find-combine [-i PATH] FINDER... DIR'
options='-i PATH	print only findings located in PATH (repeatable)'
#include finder.sh

finder_parse "$@"
shift "$nopts"
[ "$#" -ge 2 ] || usage 2
for dir do :; done
[ -d "$dir" ] || die "'$dir' is not a directory"
# The finders run from here, as given: the -i paths are checked apart.
(finder_enter "$dir") || exit 2
make_tmp

n=0
while [ "$#" -gt 1 ]; do
	n=$((n + 1))
	sh -c "$1"' "$@"' "$1" "$dir" > "$tmp/$n" 2> "$tmp/err"
	st=$?
	[ "$st" -eq 0 ] || die "could not look: '$1' exited $st: $(tail -n 1 "$tmp/err")"
	jq -en 'all(inputs; type == "object" and (.identity | type) == "string")' \
		"$tmp/$n" > /dev/null 2>&1 ||
		die "could not look: '$1' printed a line that is not a finding"
	shift
done

i=0
while [ "$i" -lt "$n" ]; do i=$((i + 1)); cat "$tmp/$i"; done |
jq -cs '
	group_by([.location, .kind, (.scope // "-")])
	| map(if (map(.finder) | unique | length) < 2 then .[]
	      else {identity: ("co:\(.[0].kind):\(.[0].location)"
	                + (if (.[0].scope // "-") == "-" then ""
	                   else ":\(.[0].scope)" end)),
	            location: .[0].location, line: (map(.line) | min),
	            lines: (map(.lines // [.line]) | add | unique),
	            scope: (.[0].scope // "-"), kind: .[0].kind,
	            rule: (map(.rule) | unique | join(" ")),
	            message: (map(.message) | unique | join("; ")),
	            finder: (map(.finder) | unique | join("+")),
	            sources: (map(.identity) | unique),
	            corroboration: (group_by(.finder)
	                | map(map(.corroboration // 1) | max) | add),
	            max_confidence: (map(.max_confidence // 0) | max),
	            trust: "corroborated"} end)
	| sort_by(.location, .line, .identity) | .[]
	| select((.location // "") as $l | $scopes | split("\n")
	         | any(. as $s | $s == "." or $s == $l or ($l | startswith($s + "/"))))' \
	--arg scopes "${scopes:-.}" ||
	die "could not look: cannot merge the findings"
