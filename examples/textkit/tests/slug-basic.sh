. lib/check.sh
. lib/text.sh
. lib/slug.sh
check "hello-world" "$(slug "Hello World")"
