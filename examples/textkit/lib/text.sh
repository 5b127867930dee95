# text.sh -- small text helpers, sourced by the tests.

upper() { printf '%s\n' "$1" | tr '[:lower:]' '[:upper:]'; }
lower() { printf '%s\n' "$1" | tr '[:upper:]' '[:lower:]'; }
trim() { printf '%s\n' "$1" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//'; }
words() { printf '%s\n' "$1" | wc -w | tr -d ' '; }
repeat() { i=0; out=; while [ "$i" -lt "$2" ]; do out=$out$1; i=$((i + 1)); done; printf '%s\n' "$out"; }
reverse() { printf '%s\n' "$1" | rev; }
