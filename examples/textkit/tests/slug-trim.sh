. lib/check.sh
. lib/text.sh
. lib/slug.sh
check "x" "$(slug "  x  ")"
