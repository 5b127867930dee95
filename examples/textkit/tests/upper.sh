. lib/check.sh
. lib/text.sh
. lib/slug.sh
check "HELLO" "$(upper hello)"
