. lib/check.sh
. lib/text.sh
. lib/slug.sh
check "ababab" "$(repeat ab 3)"
