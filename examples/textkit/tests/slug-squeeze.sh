. lib/check.sh
. lib/text.sh
. lib/slug.sh
# The bug: punctuation runs are not squeezed.
check "a-b" "$(slug "a -- b")"
