#!/bin/sh
# corral-find-gcc -- the compiler's own warnings as corral findings (JSONL).
#
# usage: corral-find-gcc [-i PATH] [DIR]
#
# Compiles every *.c file under DIR (default .), or only under the -i
# PATHs (repeatable, relative to DIR), with
# 'gcc -fanalyzer -Wall -Wextra -O2 -fdiagnostics-format=json', each
# directory holding a *.h on the include path, output thrown away, and
# prints one finding per kind per scope (the enclosing C function, see
# scope.awk) per file:
#
#   identity        gcc:KIND:PATH[:FUNCTION]   e.g. gcc:leak:src/wordfreq.c:count_words
#   location        PATH, relative to DIR;  line, lines, scope, message
#   kind            leak, oob-index, uninit, resource-leak, double-free for
#                   the warnings that mean those, else the option's name
#   rule            the warning options that fired, e.g. "-Wmaybe-uninitialized"
#   methods         "analyzer" (-fanalyzer's path exploration) and/or
#                   "compiler" (the optimiser's dataflow warnings)
#
# Trust: the analyzer and the optimiser's warnings are two different
# methods inside one tool.  When both report the same kind in the same
# function, the finding has corroboration 2 and trust multi-method
# (confidence .9); otherwise corroboration 1, single-method, confidence
# .8 for a compiler warning and .7 for the analyzer's.  It is never
# "corroborated": that needs another tool (see corral-find-combine).
#
# A file that does not compile is not a clean file: the finder could not
# look, and exits 2, as it does when gcc is missing or crashes.  Exit 0
# when it looked.  GCC names the compiler (default: gcc on PATH).
prog=corral-find-gcc
synopsis='corral-find-gcc [-i PATH] [DIR]'
options='-i PATH	look only at PATH in DIR (repeatable)'
#include finder.sh
#include scope.sh
gcc=${GCC:-gcc}

finder_open "$@"
finder_need "$gcc"

finder_headers > "$tmp/incs" || exit 2
set --
while IFS= read -r d; do set -- "$@" -I "$d"; done < "$tmp/incs"

: > "$tmp/tsv"
finder_files > "$tmp/all" || exit 2
grep '\.c$' "$tmp/all" > "$tmp/files"
while IFS= read -r f; do
	"$gcc" -fanalyzer -Wall -Wextra -O2 -fdiagnostics-format=json \
		"$@" -c -o /dev/null "./$f" 2> "$tmp/json" < /dev/null
	st=$?
	[ "$st" -eq 0 ] || die "could not look: $gcc exited $st on '$f':" \
		"$(jq -r '[.[] | select(.kind == "error")][0].message // empty' \
		"$tmp/json" 2>/dev/null || tail -n 1 "$tmp/json")"
	[ -s "$tmp/json" ] || continue
	jq -r '.[] | select(.kind == "warning")
		| [(.locations[0].caret.file | sub("^\\./"; "")),
		   .locations[0].caret.line, .option, .message] | @tsv' \
		"$tmp/json" >> "$tmp/tsv" ||
		die "could not look: unreadable $gcc output for '$f'"
done < "$tmp/files"

finder_scope "$tmp/tsv" > "$tmp/scoped" ||
	die "could not look: cannot place its findings"
jq -cnR '
	{"-Wanalyzer-malloc-leak": "leak", "-Wanalyzer-file-leak": "resource-leak",
	 "-Wanalyzer-double-free": "double-free", "-Warray-bounds": "oob-index",
	 "-Waggressive-loop-optimizations": "oob-index",
	 "-Wuninitialized": "uninit", "-Wmaybe-uninitialized": "uninit",
	 "-Wanalyzer-use-of-uninitialized-value": "uninit"} as $kind
	| [inputs | split("\t")
	   | {path: .[0], line: (.[1] | tonumber), scope: .[2], rule: .[3],
	      message: .[4],
	      method: (if .[3] | startswith("-Wanalyzer") then "analyzer"
	               else "compiler" end)}
	   | .kind = ($kind[.rule] // (.rule | ltrimstr("-W")))]
	| group_by([.path, .kind, .scope])
	| map({first: min_by(.line), lines: (map(.line) | unique),
	       rules: (map(.rule) | unique), methods: (map(.method) | unique)})
	| sort_by(.first.path, .first.line, .first.kind)
	| .[]
	| .first as $f
	| {identity: ("gcc:\($f.kind):\($f.path)"
	      + (if $f.scope == "-" then "" else ":\($f.scope)" end)),
	   location: $f.path, line: $f.line, lines: .lines, scope: $f.scope,
	   kind: $f.kind, rule: (.rules | join(" ")), methods: .methods,
	   message: $f.message, finder: "gcc",
	   corroboration: (.methods | length),
	   max_confidence: (if (.methods | length) > 1 then 0.9
	                    elif .methods == ["compiler"] then 0.8 else 0.7 end),
	   trust: (if (.methods | length) > 1 then "multi-method"
	           else "single-method" end)}' "$tmp/scoped" ||
	die "could not look: cannot read its findings"
