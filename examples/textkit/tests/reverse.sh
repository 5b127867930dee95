. lib/check.sh
. lib/text.sh
. lib/slug.sh
check "olleh" "$(reverse hello)"
