#!/bin/sh
# corral-find-shellcheck -- shellcheck's findings as corral findings (JSONL).
#
# usage: corral-find-shellcheck [-i PATH] [DIR]
#
# Runs 'shellcheck -f json1' on every shell file under DIR (default .),
# or only under the -i PATHs (repeatable, relative to DIR): *.sh, *.bash,
# *.ksh, *.bats, and files whose first line is a sh, bash, dash, ksh or
# bats shebang.  It prints one finding per rule per scope (the enclosing
# function or @test, see scope.awk) per file:
#
#   identity        sc:RULE:PATH[:SCOPE]   e.g. sc:SC2164:scripts/backup.sh
#   location        PATH, relative to DIR (what the patcher edits)
#   line, lines     the first line, and every line, where the rule fired
#   kind            a class shared with other finders where one exists
#                   (SC2050, a constant test, is "tautology"), else RULE
#   rule, severity, message, scope, finder ("shellcheck")
#   corroboration 1, trust single-method: one tool, one method.
#   max_confidence  by shellcheck's level: error .9, warning .8, info .6,
#                   style .5
#
# The identity leaves out line numbers, so a finding keeps it while code
# above it moves, and names the scope, so that the same rule in two
# functions is two findings.  Exit 0 when shellcheck ran (found or not);
# 2 when it could not look: shellcheck missing, crashed, or refused a
# file, or a -i PATH that is not in DIR.  SHELLCHECK names the program
# (default: shellcheck on PATH).  .git, .corral and CORRAL_OUT are never
# looked at (see finder.sh).
prog=corral-find-shellcheck
synopsis='corral-find-shellcheck [-i PATH] [DIR]'
options='-i PATH	look only at PATH in DIR (repeatable)'
#include finder.sh
#include scope.sh
sc=${SHELLCHECK:-shellcheck}

finder_open "$@"
finder_need "$sc"

# The shell files, sorted; one per line (names holding a newline are
# not supported).
finder_files > "$tmp/all" || exit 2
while IFS= read -r f; do
	case $f in
	*.sh|*.bash|*.ksh|*.bats) printf '%s\n' "$f" ;;
	*.*) ;;
	*) head -n 1 -- "$f" 2>/dev/null |
		grep -Eq '^#!.*[/ ](sh|bash|dash|ksh|bats)([ ]|$)' &&
		printf '%s\n' "$f" ;;
	esac
done < "$tmp/all" > "$tmp/files"

[ -s "$tmp/files" ] || exit 0
set --
while IFS= read -r f; do set -- "$@" "$f"; done < "$tmp/files"

"$sc" -f json1 -- "$@" > "$tmp/out" 2> "$tmp/err"
st=$?
[ "$st" -le 1 ] || die "could not look: $sc exited $st: $(tail -n 1 "$tmp/err")"

jq -r '.comments[] | [.file, .line, .level, "SC\(.code)", .message] | @tsv' \
	"$tmp/out" > "$tmp/tsv" || die "could not look: unreadable $sc output"
finder_scope "$tmp/tsv" > "$tmp/scoped" ||
	die "could not look: cannot place its findings"
jq -cnR '
	{"error": 0.9, "warning": 0.8, "info": 0.6, "style": 0.5} as $conf
	| {"SC2050": "tautology"} as $kind
	| [inputs | split("\t")
	   | {path: .[0], line: (.[1] | tonumber), scope: .[2], level: .[3],
	      rule: .[4], message: .[5]}]
	| group_by([.path, .rule, .scope])
	| map({first: min_by(.line), lines: (map(.line) | unique),
	       level: (map($conf[.level]) | max)})
	| sort_by(.first.path, .first.line, .first.rule)
	| .[]
	| .first as $f
	| {identity: ("sc:\($f.rule):\($f.path)"
	      + (if $f.scope == "-" then "" else ":\($f.scope)" end)),
	   location: $f.path, line: $f.line, lines: .lines, scope: $f.scope,
	   kind: ($kind[$f.rule] // $f.rule), rule: $f.rule,
	   severity: $f.level, message: $f.message, finder: "shellcheck",
	   corroboration: 1, max_confidence: .level,
	   trust: "single-method"}' "$tmp/scoped" ||
	die "could not look: cannot read its findings"
