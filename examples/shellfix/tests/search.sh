# search.sh -- shellfix-search finds a word whatever its case, numbered.
set -eu
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
printf 'milk\nBread\neggs\n' > "$t/list"
got=$(libexec/shellfix-search bread "$t/list")
[ "$got" = "2:Bread" ] || { echo "FAIL: search: $got"; exit 1; }
echo "ok: found"
