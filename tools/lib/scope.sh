# scope.sh -- finder_scope, scope.awk run on the finder's findings.
#
# build-aux/mkscript puts this file in place of a '#include scope.sh'
# line, and scope.awk inside it, so that the installed finder carries
# the program it runs.  finder_scope FILE... prints the lines of FILE
# (PATH<TAB>LINE<TAB>REST) with the scope inserted after LINE.
finder_scope() {
	cat > "$tmp/scope.awk" <<'EOF_SCOPE_AWK' || return 1
#include scope.awk
EOF_SCOPE_AWK
	awk -f "$tmp/scope.awk" "$@"
}
