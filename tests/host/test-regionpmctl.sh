#!/bin/bash
# regionpmctl without a daemon: arguments -> exit status and message, as
# regionpmctl(8) documents them (0 ok, 2 usage, 3 daemon not reachable,
# 6 check found something missing).  "Not reachable" is tested against a
# private dbus-daemon on which nobody owns org.regionpm1, and against no bus
# at all.  Runs as any user; the bus test with the real daemon is elsewhere.
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib/tap.sh"
cd "$top" || exit 1
ctl=$top/build/regionpmctl
tmp=$(mktemp -d)
dbus_pid=
cleanup() {
	[ -n "$dbus_pid" ] && kill "$dbus_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

if [ ! -x "$ctl" ]; then
	tap_fail "build/regionpmctl exists" "run make first"
	tap_done
	exit 1
fi

# Never talk to the machine's real system bus or daemon.
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$tmp/no-such-bus
unset REGIONPM_BUS_ADDRESS

# expect RC SUBSTRING ARGS...: exit status RC; SUBSTRING in stdout (RC 0) or
# stderr (otherwise).  A failure prints exactly one line on stderr, prefixed
# "regionpmctl: ", and nothing on stdout; a usage error also points to --help.
expect() {
	local want=$1 sub=$2 rc out err desc
	shift 2
	desc="regionpmctl $* -> $want${sub:+, '$sub'}"
	timeout 20 "$ctl" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	out=$(cat "$tmp/out")
	err=$(cat "$tmp/err")
	local why="exit $rc, stdout: ${out:0:400}
stderr: $err"
	if [ "$rc" != "$want" ]; then
		tap_fail "$desc" "$why"
		return
	fi
	if [ "$want" = 0 ]; then
		case $out in *"$sub"*) ;; *) tap_fail "$desc" "$why"; return ;; esac
		[ -z "$err" ] || { tap_fail "$desc" "unexpected stderr; $why"; return; }
	else
		case $err in *"$sub"*) ;; *) tap_fail "$desc" "$why"; return ;; esac
		[ -z "$out" ] || { tap_fail "$desc" "unexpected stdout; $why"; return; }
		[ "$(printf '%s\n' "$err" | wc -l)" = 1 ] ||
			{ tap_fail "$desc" "not one line; $why"; return; }
		case $err in regionpmctl:\ *) ;; *) tap_fail "$desc" "no prefix; $why"; return ;; esac
		if [ "$want" = 2 ]; then
			case $err in *"regionpmctl --help"*) ;;
			*) tap_fail "$desc" "no hint to --help; $why"; return ;; esac
		fi
	fi
	tap_ok "$desc"
}

# -- help and version ------------------------------------------------------
expect 0 "Usage: regionpmctl" --help
expect 0 "Usage: regionpmctl" -h
expect 0 "Exit status: 0 ok" --help
expect 0 "regionpmctl 0." --version
expect 0 "regionpmctl 0." -V
expect 0 "Usage: regionpmctl" status --help
expect 0 "--no-pager" --help
expect 0 "reload               read the configuration again" --help

# regionpmctl is a D-Bus client: it must not carry the daemon's library
links_alone() {
	local syms
	syms=$(nm "$ctl" 2>/dev/null | grep -E ' [TtDdBbRr] (conf_|manager_|policy_|bus_open|power_model)') || true
	[ -z "$syms" ] || { echo "daemon code linked in: $syms"; return 1; }
}
tap_check "regionpmctl links none of the daemon's code but the netlink parser" links_alone

# -- usage errors (2) ------------------------------------------------------
expect 2 "missing command"
expect 2 "unknown command 'frobnicate'" frobnicate
expect 2 "unknown command 'STATUS'" STATUS
expect 2 "unknown option '--bogus'" --bogus status
expect 2 "unknown option '-x'" -x status
expect 2 "unknown option '--json=1'" regions --json=1
expect 2 "'status' takes no argument, got 'now'" status now
expect 2 "'regions' takes no argument" regions 3
expect 2 "'monitor' takes no argument" monitor x
expect 2 "'check' takes no argument" check x
expect 2 "--json is an option of 'regions' and 'status'" monitor --json
expect 2 "--bytes is an option of 'regions' and 'status'" vacate -b 1
expect 2 "options of 'regions'" status --raw
expect 2 "'pause' takes no argument, got 'now'" pause now
expect 2 "'reload' takes no argument" reload x
expect 2 "unknown option '--no-pager=1'" --no-pager=1 status
expect 2 "options of 'regions'" -r monitor
expect 2 "options of 'regions'" vacate -n 1
expect 2 "--json and --raw cannot be combined" regions --json --raw
expect 2 "option '-o' needs an argument" regions -o
expect 2 "option '--output' needs an argument" regions --output
expect 2 "unknown column 'BOGUS'" regions -o ID,BOGUS
expect 2 "unknown column ''" regions -o ID,,STATE
expect 2 "-o needs a list of columns" regions -o ""
for verb in vacate park unpark; do
	expect 2 "'$verb' needs a region ID" $verb
	expect 2 "'$verb' takes one argument, got also '2'" $verb 1 2
	expect 2 "invalid region id 'abc'" $verb abc
done
expect 2 "invalid region id ''" vacate ""
expect 2 "invalid region id '-1'" park -- -1
expect 2 "unknown option '-1'" park -1
expect 2 "invalid region id '+1'" vacate +1
expect 2 "invalid region id ' 1'" vacate " 1"
expect 2 "invalid region id '1x'" unpark 1x
expect 2 "invalid region id '0x10'" unpark 0x10
expect 2 "invalid region id '1.5'" park 1.5
expect 2 "invalid region id '4294967296'" vacate 4294967296
expect 2 "invalid region id '99999999999999999999999'" vacate 99999999999999999999999
expect 2 "'set' needs KEY=VALUE" set
expect 2 "expected KEY=VALUE, got 'HeadroomPercent'" set HeadroomPercent
expect 2 "missing key in '=20'" set =20
expect 2 "'set' takes one argument" set A=1 B=2

# -- no bus at all (3) -----------------------------------------------------
for args in status "status --json" "--no-pager regions -b" "vacate 1" "park 1" "unpark 1" \
	"set Policy.Park=no" pause resume reload monitor; do
	# shellcheck disable=SC2086
	expect 3 "cannot connect to the system bus" $args
done

# -- a private bus on which nobody owns org.regionpm1 (3) -------------------
cat >"$tmp/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <listen>unix:path=$tmp/bus.sock</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
CONF
dbus-daemon --config-file="$tmp/bus.conf" --nofork --print-address=1 \
	>"$tmp/bus.addr" 2>"$tmp/bus.err" &
dbus_pid=$!
for _ in $(seq 100); do
	[ -s "$tmp/bus.addr" ] && break
	kill -0 "$dbus_pid" 2>/dev/null || break
	sleep 0.1
done
if [ ! -s "$tmp/bus.addr" ]; then
	tap_fail "private dbus-daemon starts" "$(cat "$tmp/bus.err")"
	tap_done
	exit 1
fi
tap_ok "private dbus-daemon starts"
bus=unix:path=$tmp/bus.sock

export DBUS_SYSTEM_BUS_ADDRESS=$bus
for args in status regions "regions --json" "status --json" "vacate 1" "park 7" "unpark 7" \
	"set Policy.HeadroomPercent=20" pause resume reload monitor; do
	# shellcheck disable=SC2086
	expect 3 "regionpmd is not reachable on the system bus" $args
done
expect 3 "org.regionpm1" status
# usage errors win over the bus: no call is made
expect 2 "invalid region id 'x'" vacate x

# REGIONPM_BUS_ADDRESS overrides DBUS_SYSTEM_BUS_ADDRESS
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$tmp/no-such-bus
REGIONPM_BUS_ADDRESS=$bus expect 3 "not reachable on the system bus (reading the properties)" status
REGIONPM_BUS_ADDRESS=$bus expect 3 "not reachable on the system bus (vacate region 3)" vacate 3
export DBUS_SYSTEM_BUS_ADDRESS=$bus

# -- check: needs no daemon; reports the daemon as missing, but not required --
check_case() {
	local rc out
	out=$(timeout 20 "$ctl" check 2>&1)
	rc=$?
	local why="exit $rc:
$out"
	case $rc in 0|6) ;; *) echo "$why"; return 1 ;; esac
	for item in "kernel support" "PSI: /proc/pressure/memory" "idle page tracking" \
		"page flags: /proc/kpageflags" "privileges" "regionpmd on the bus"; do
		printf '%s\n' "$out" | grep -Eq "^(OK|MISSING) +$item" ||
			{ echo "no line for '$item'; $why"; return 1; }
	done
	printf '%s\n' "$out" | grep -q '^MISSING  regionpmd on the bus' ||
		{ echo "daemon not reported missing; $why"; return 1; }
	printf '%s\n' "$out" | grep -q 'without it: status, regions' ||
		{ echo "no consequence for the daemon; $why"; return 1; }
	# exit 6 exactly when a required item (kernel support, privileges) is missing
	if printf '%s\n' "$out" | grep -Eq '^MISSING +(kernel support|privileges)'; then
		[ "$rc" = 6 ] || { echo "required item missing but exit $rc; $why"; return 1; }
	else
		[ "$rc" = 0 ] || { echo "nothing required missing but exit $rc; $why"; return 1; }
	fi
}
tap_check "check runs without the daemon: every item, daemon MISSING, exit 0/6 by required items" check_case

tap_done
