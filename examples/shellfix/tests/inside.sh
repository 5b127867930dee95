# inside.sh -- shellfix-inside runs a command in the directory given.
set -eu
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir "$t/box"
got=$(libexec/shellfix-inside "$t/box" pwd)
[ "$got" = "$(cd "$t/box" && pwd)" ] || { echo "FAIL: ran in $got"; exit 1; }
echo "ok: ran inside"
