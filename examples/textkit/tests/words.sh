. lib/check.sh
. lib/text.sh
. lib/slug.sh
check 3 "$(words "one two  three")"
