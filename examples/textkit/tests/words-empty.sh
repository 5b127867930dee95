. lib/check.sh
. lib/text.sh
. lib/slug.sh
check 0 "$(words "")"
