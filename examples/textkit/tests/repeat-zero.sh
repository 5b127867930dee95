. lib/check.sh
. lib/text.sh
. lib/slug.sh
check "" "$(repeat ab 0)"
