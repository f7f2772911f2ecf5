# Minimal TAP producer for shell tests (sourced).
#
#   tap_check "description" command [args...]   ok if the command succeeds
#   tap_ok "description" / tap_fail "description" "why"
#   tap_skip "description" "reason"             only when the environment is truly missing
#   tap_done                                    prints the plan; exit 1 if anything failed
_tap_n=0
_tap_failed=0
echo "TAP version 13"

tap_ok() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n - $1"; }
tap_fail() {
	_tap_n=$((_tap_n + 1)); _tap_failed=$((_tap_failed + 1))
	echo "not ok $_tap_n - $1"
	[ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/#   /'
	return 0
}
tap_skip() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n - $1 # SKIP $2"; }
tap_check() {
	local desc=$1 out
	shift
	if out=$("$@" 2>&1); then
		tap_ok "$desc"
	else
		tap_fail "$desc" "command: $* -> exit $?${out:+
$out}"
	fi
}
tap_done() {
	echo "1..$_tap_n"
	[ "$_tap_failed" = 0 ]
}
