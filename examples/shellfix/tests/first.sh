# first.sh -- shellfix-first prints the first line of each file.
set -eu
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
printf 'one\ntwo\n' > "$t/a"
printf 'three\n' > "$t/b"
got=$(libexec/shellfix-first "$t/a" "$t/b" | tr '\n' ' ')
[ "$got" = "one three " ] || { echo "FAIL: first: $got"; exit 1; }
echo "ok: first lines"
