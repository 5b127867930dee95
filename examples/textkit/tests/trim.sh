. lib/check.sh
. lib/text.sh
. lib/slug.sh
check "a b" "$(trim "   a b  ")"
