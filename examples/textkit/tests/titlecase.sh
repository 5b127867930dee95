. lib/check.sh
. lib/text.sh
. lib/slug.sh
# Nobody wrote title-case yet.
check "Hello World" "$(titlecase "hello world")"
