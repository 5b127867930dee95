# count.sh -- shellfix-count counts the lines of a file.
set -eu
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
printf 'a\nb\nc\n' > "$t/notes"
got=$(libexec/shellfix-count "$t/notes")
[ "$got" = 3 ] || { echo "FAIL: count: $got"; exit 1; }
echo "ok: 3 lines"
