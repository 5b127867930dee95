#!/bin/sh
# prune.sh -- drop the empty notes; with 'all', drop every note.
#
# usage: prune.sh [all]
set -u
file=${NOTES_DIR:-$HOME/.notes}/notes.txt
mode=${1:-empty}

[ -f "$file" ] || exit 0
if [ "$mode" = all ]; then
	: > "$file"
else
	grep -v '^[[:space:]]*$' "$file" > "$file.tmp"
	mv "$file.tmp" "$file"
fi
