. lib/check.sh
. lib/text.sh
. lib/slug.sh
check "hello" "$(lower HeLLo)"
