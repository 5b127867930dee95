#!/bin/sh
# corral-find-cppcheck -- cppcheck's findings as corral findings (JSONL).
#
# usage: corral-find-cppcheck [-i PATH] [DIR]
#
# Runs cppcheck (--enable=warning,style,performance,portability
# --inconclusive) over every *.c file under DIR (default .), or only
# under the -i PATHs (repeatable, relative to DIR), with each
# directory holding a *.h on the include path, and prints one finding
# per rule per scope (the enclosing C function, see scope.awk) per file:
#
#   identity        cc:RULE:PATH[:FUNCTION]   e.g. cc:memleak:src/wordfreq.c:count_words
#   location        PATH, relative to DIR;  line, lines, scope, message
#   kind            leak, oob-index, uninit, resource-leak for the rules
#                   that mean those, else RULE (cppcheck's id)
#   rule, severity, finder ("cppcheck")
#   corroboration 1, trust single-method: one tool.
#   max_confidence  error .9, warning .8, any other severity .6; a finding
#                   cppcheck calls inconclusive .4
#
# A file cppcheck cannot parse (syntaxError, internalAstError, ...) is
# not a clean file: the finder could not look, and exits 2, as it does
# when cppcheck is missing or fails.  Exit 0 when it looked.  CPPCHECK
# names the program (default: cppcheck on PATH).
prog=corral-find-cppcheck
synopsis='corral-find-cppcheck [-i PATH] [DIR]'
options='-i PATH	look only at PATH in DIR (repeatable)'
#include finder.sh
#include scope.sh
cc=${CPPCHECK:-cppcheck}

finder_open "$@"
finder_need "$cc"

finder_files > "$tmp/all" || exit 2
grep '\.c$' "$tmp/all" > "$tmp/files"
[ -s "$tmp/files" ] || exit 0
finder_headers > "$tmp/incs" || exit 2
set --
while IFS= read -r d; do set -- "$@" -I "$d"; done < "$tmp/incs"
while IFS= read -r f; do set -- "$@" "$f"; done < "$tmp/files"

"$cc" --enable=warning,style,performance,portability --inconclusive \
	--quiet --error-exitcode=0 --output-file="$tmp/out" \
	--template='{file}	{line}	{severity}	{id}	{inconclusive:yes}	{message}' \
	"$@" > "$tmp/err" 2>&1
st=$?
[ "$st" -eq 0 ] || die "could not look: $cc exited $st: $(tail -n 1 "$tmp/err")"
[ -f "$tmp/out" ] || die "could not look: $cc wrote no report"
bad=$(awk -F '\t' '
	$4 ~ /^(syntaxError|internalAstError|internalError|cppcheckError)$/ ||
	$4 ~ /^(preprocessorErrorDirective|unknownMacro)$/ { print $1 ": " $4; exit }' \
	"$tmp/out")
[ -z "$bad" ] || die "could not look: $cc could not analyse $bad"

sed 's|^\./||' "$tmp/out" > "$tmp/tsv" ||
	die "could not look: cannot read its report"
finder_scope "$tmp/tsv" > "$tmp/scoped" ||
	die "could not look: cannot place its findings"
jq -cnR '
	{"memleak": "leak", "memleakOnRealloc": "leak",
	 "arrayIndexOutOfBounds": "oob-index",
	 "arrayIndexOutOfBoundsCond": "oob-index",
	 "bufferAccessOutOfBounds": "oob-index", "negativeIndex": "oob-index",
	 "uninitvar": "uninit", "legacyUninitvar": "uninit",
	 "uninitdata": "uninit", "resourceLeak": "resource-leak"} as $kind
	| {"error": 0.9, "warning": 0.8} as $conf
	| [inputs | split("\t")
	   | {path: .[0], line: (.[1] | tonumber), scope: .[2], severity: .[3],
	      rule: .[4], message: .[6],
	      conf: (if .[5] == "yes" then 0.4 else ($conf[.[3]] // 0.6) end)}]
	| group_by([.path, .rule, .scope])
	| map({first: min_by(.line), lines: (map(.line) | unique),
	       conf: (map(.conf) | max)})
	| sort_by(.first.path, .first.line, .first.rule)
	| .[]
	| .first as $f
	| {identity: ("cc:\($f.rule):\($f.path)"
	      + (if $f.scope == "-" then "" else ":\($f.scope)" end)),
	   location: $f.path, line: $f.line, lines: .lines, scope: $f.scope,
	   kind: ($kind[$f.rule] // $f.rule), rule: $f.rule,
	   severity: $f.severity, message: $f.message, finder: "cppcheck",
	   corroboration: 1, max_confidence: .conf,
	   trust: "single-method"}' "$tmp/scoped" ||
	die "could not look: cannot read its findings"
