#!/bin/bash
# The org.regionpm1 D-Bus API of regionpmd on a private dbus-daemon, in the
# test VM (the daemon needs the kernel's regionpm family).  TAP.
#
# Every property, method and signal of org.regionpm1(5) through busctl (an
# independent client) with dbus-monitor watching the signals; AccessDenied
# for a non-root caller from the bus policy (systemd/org.regionpm1.conf,
# included as is) and, on a second bus whose policy lets everyone call
# everything, from regionpmd's own check; regionpmctl against the real
# daemon with its documented exit codes.
#
#   REGIONPMD=path / REGIONPMCTL=path   binaries (default build/...)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/tap.sh"

RPMD=${REGIONPMD:-$top/build/regionpmd}
CTL=${REGIONPMCTL:-$top/build/regionpmctl}
IFACE=org.regionpm1.Manager
work=$(mktemp -d "${TMPDIR:-/tmp}/bus-test.XXXXXX")
chmod 755 "$work"
bus_pids=() daemon_pid='' monitor_pid=''

cleanup() {
	[ -n "$monitor_pid" ] && kill "$monitor_pid" 2>/dev/null
	[ -n "$daemon_pid" ] && kill -TERM "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null
	for p in "${bus_pids[@]}"; do kill "$p" 2>/dev/null; done
	rm -rf "$work"
}
trap cleanup EXIT

for b in "$RPMD" "$CTL"; do
	if [ ! -x "$b" ]; then
		tap_fail "$b exists" "build it with make"
		tap_done
		exit 1
	fi
done
for t in dbus-daemon busctl dbus-monitor setpriv; do
	if ! command -v "$t" >/dev/null; then
		tap_fail "$t is installed" "make deps"
		tap_done
		exit 1
	fi
done

# ---- a private bus ----------------------------------------------------------
# $1 name, $2 "strict" (the shipped policy) or "open" (everyone may call
# everything, so only the daemon's own check is left).
start_bus() {
	local name=$1 kind=$2 conf=$work/$1.conf policy
	if [ "$kind" = strict ]; then
		policy="<include>$top/systemd/org.regionpm1.conf</include>"
	else
		policy='<policy context="default"><allow own="org.regionpm1"/><allow send_destination="org.regionpm1"/></policy>'
	fi
	cat > "$conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>custom</type>
  <listen>unix:path=$work/$name.socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
  </policy>
  <policy user="root">
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Monitoring"/>
  </policy>
  $policy
</busconfig>
CONF
	local out
	out=$(umask 000; dbus-daemon --config-file="$conf" --fork --print-address=1 --print-pid=1) || return 1
	ADDR=$(echo "$out" | sed -n 1p)
	export ADDR
	bus_pids+=("$(echo "$out" | sed -n 2p)")
}

start_daemon() { # extra args...
	# -v: the debug lines count the page scans done for GetRegion
	"$RPMD" -v --bus-address "$ADDR" -c "$work/regionpmd.conf" "$@" > "$work/daemon.log" 2>&1 &
	daemon_pid=$!
	for _ in $(seq 100); do
		busctl --address="$ADDR" get-property org.regionpm1 /org/regionpm1 $IFACE State >/dev/null 2>&1 && return 0
		kill -0 "$daemon_pid" 2>/dev/null || break
		sleep 0.2
	done
	return 1
}

stop_daemon() {
	kill -TERM "$daemon_pid" 2>/dev/null
	wait "$daemon_pid"
	local rc=$?
	daemon_pid=''
	return $rc
}

B() { busctl --address="$ADDR" "$@"; }
call() { B call org.regionpm1 /org/regionpm1 $IFACE "$@"; }
prop() { B get-property org.regionpm1 /org/regionpm1 $IFACE "$1"; }
nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
# dbus-send shows the error name: "Error org.regionpm1.Error.InvalidRegion: ..."
dsend() { # [as nobody: N] method args...
	dbus-send --bus="$ADDR" --print-reply --dest=org.regionpm1 /org/regionpm1 "$IFACE.$1" "${@:2}"
}
error_is() { # NAME method args...
	local name=$1 out
	shift
	out=$(dsend "$@" 2>&1) && { echo "succeeded: $out"; return 1; }
	echo "$out" | grep -q "^Error $name" || { echo "expected $name, got: $out"; return 1; }
}
error_is_nobody() {
	local name=$1 out
	shift
	out=$(nobody dbus-send --bus="$ADDR" --print-reply --dest=org.regionpm1 /org/regionpm1 "$IFACE.$1" "${@:2}" 2>&1) &&
		{ echo "succeeded: $out"; return 1; }
	echo "$out" | grep -q "^Error $name" || { echo "expected $name, got: $out"; return 1; }
	echo "$out"
}
saw_signal() { # member [args regex]
	local i
	for i in $(seq 50); do
		# not grep -q: its early exit is a SIGPIPE for the first grep (pipefail)
		grep -A8 "member=$1" "$work/monitor.log" | grep -E "${2:-.}" > /dev/null && return 0
		sleep 0.1
	done
	echo "no $1 ${2:-} signal in:"
	grep -E 'signal .*interface=org.regionpm1' -A3 "$work/monitor.log"
	return 1
}
export IFACE
export -f nobody dsend error_is error_is_nobody
ctl() { REGIONPM_BUS_ADDRESS=$ADDR "$CTL" "$@"; }
ctl_rc() { # expected-rc args...
	local want=$1 out rc
	shift
	out=$(ctl "$@" 2>&1)
	rc=$?
	[ "$rc" = "$want" ] || { echo "regionpmctl $*: exit $rc, expected $want: $out"; return 1; }
}

# The policy stays out of the way (no automatic parking, nothing worth
# emptying), so that the methods are what changes regions.
# MetricsFile=: node_exporter's textfile format, checked with the Python
# Prometheus client's parser (python3-prometheus-client).
METRICS=$work/textfile/regionpm.prom
mkdir -p "$work/textfile"
conf_head="[Daemon]\nMetricsFile=$METRICS\n"
printf "$conf_head"'[Policy]\nPark=no\nMaxPagesToVacate=0\n' > "$work/regionpmd.conf"

if ! start_bus strict strict; then
	tap_fail "private dbus-daemon starts"
	tap_done
	exit 1
fi
tap_ok "private dbus-daemon with the shipped bus policy at $ADDR"
dbus-monitor --address "$ADDR" "type='signal',sender='org.regionpm1'" > "$work/monitor.log" 2>&1 &
monitor_pid=$!

if start_daemon; then
	tap_ok "regionpmd takes org.regionpm1 on the private bus"
else
	tap_fail "regionpmd takes org.regionpm1 on the private bus" "$(cat "$work/daemon.log")"
	tap_done
	exit 1
fi

# ---- introspection and properties -------------------------------------------
tap_check "--bus-introspect equals what the daemon serves" \
	bash -c "diff <('$RPMD' --bus-introspect | grep -v '^ *\$') <(busctl --address='$ADDR' introspect --xml-interface org.regionpm1 /org/regionpm1 | grep -v '^ *\$')"

props_ok() {
	local p v bad=''
	for p in State:s Backend:s DryRun:b RegionCount:u RegionSize:t PagesMigrated:t \
		 PagesDropped:t RegionsVacated:u RegionsParked:u RegionsReleased:u Errors:u \
		 PowerDownFraction:d ModelledPowerMilliwatt:d 'Policy:a{ss}'; do
		v=$(prop "${p%%:*}") || { bad+="${p%%:*}: unreadable; "; continue; }
		[ "${v%% *}" = "${p#*:}" ] || bad+="${p%%:*}: type ${v%% *}; "
		echo "# ${p%%:*} = ${v:0:160}"
	done
	[ -z "$bad" ] || { echo "$bad"; return 1; }
}
tap_check "every property is readable with its documented type" props_ok

region_size=$(prop RegionSize | awk '{ print $2 }')
block=$((16#$(cat /sys/devices/system/memory/block_size_bytes)))
# regions with memory, independently: the online memory blocks' regions
sys_regions=$(for d in /sys/devices/system/memory/memory[0-9]*; do
		n=${d##*memory}; echo $(( n * block / region_size )); done | sort -un | wc -l)
count=$(prop RegionCount | awk '{ print $2 }')
listed=$(call ListRegions | awk '{ print $2 }')
tap_check "RegionCount $count = regions with memory in /sys ($sys_regions) = ListRegions ($listed)" \
	test "$count" = "$sys_regions" -a "$count" = "$listed"
tap_check "State is running, Backend regionpm-netlink, DryRun false" \
	test "$(prop State) $(prop Backend) $(prop DryRun)" = 's "running" s "regionpm-netlink" b false'
pdf=$(prop PowerDownFraction | awk '{ print $2 }')
mw=$(prop ModelledPowerMilliwatt | awk '{ print $2 }')
# 2 GiB: at most 62.8 mW/GiB x 2 GiB in use, at least 36 mW/GiB all parked
tap_check "PowerDownFraction $pdf in [0,1], ModelledPowerMilliwatt $mw plausible for $count regions" \
	awk -v f="$pdf" -v p="$mw" -v n="$count" -v s="$region_size" \
	'BEGIN { g = n * s / 2^30; exit !(f >= 0 && f <= 1 && p >= 35.9 * g && p <= 62.8 * g * 1.001) }'
tap_check "Policy has Policy.HeadroomPercent and the config override Policy.Park=no" \
	bash -c "busctl --address='$ADDR' get-property org.regionpm1 /org/regionpm1 $IFACE Policy | grep -q '\"Policy.HeadroomPercent\" \"10\"' &&
		 busctl --address='$ADDR' get-property org.regionpm1 /org/regionpm1 $IFACE Policy | grep -q '\"Policy.Park\" \"no\"'"

# ---- read-only methods --------------------------------------------------------
tap_check "GetRegion 0: a scanned region (breakdown not UINT64_MAX)" \
	bash -c "busctl --address='$ADDR' call org.regionpm1 /org/regionpm1 $IFACE GetRegion u 0 | grep -E '^\\(uttsstttttss\\) 0 0 [0-9]+ \"active\" \"[A-Za-z0-9,]+\"' | grep -qv 18446744073709551615"
# Scans for GetRegion, counted in the daemon's debug log.
scans() { grep -c 'page scan for D-Bus GetRegion()' "$work/daemon.log"; }
unpriv_no_scan() {
	local before after out
	before=$(scans)
	out=$(nobody busctl --address="$ADDR" call org.regionpm1 /org/regionpm1 $IFACE GetRegion u 0) || return 1
	echo "$out" | grep -qE '^\(uttsstttttss\) 0 0 ' || { echo "reply: $out"; return 1; }
	out=$(nobody busctl --address="$ADDR" call org.regionpm1 /org/regionpm1 $IFACE GetRegion u 0) || return 1
	after=$(scans)
	echo "scans before $before, after two GetRegion as nobody $after"
	[ "$before" = "$after" ]
}
tap_check "GetRegion as nobody answers from the cache: no kernel scan" unpriv_no_scan
root_scans() {
	local before after
	sleep 1.1	# a new rate limit window
	before=$(scans)
	call GetRegion u 0 > /dev/null || return 1
	after=$(scans)
	echo "scans before $before, after one GetRegion as root $after"
	[ "$after" = $((before + 1)) ]
}
tap_check "GetRegion as root scans the region (one scan)" root_scans
rate_limited() {
	local before after t0 t1 i
	sleep 1.1
	before=$(scans)
	t0=$(date +%s%N)
	for i in $(seq 30); do call GetRegion u 0 > /dev/null || return 1; done
	t1=$(date +%s%N)
	after=$(scans)
	echo "30 GetRegion as root in $(( (t1 - t0) / 1000000 )) ms: $((after - before)) scans"
	# at most 5 per started second
	[ $((after - before)) -le $(( 5 * ((t1 - t0) / 1000000000 + 1) )) ]
}
tap_check "privileged GetRegion scans are rate limited (5 per second)" rate_limited
tap_check "GetRegion 99999 fails with InvalidRegion" error_is org.regionpm1.Error.InvalidRegion GetRegion uint32:99999
tap_check "Vacate 99999 fails with InvalidRegion" error_is org.regionpm1.Error.InvalidRegion Vacate uint32:99999

# ---- Vacate, Park, Unpark -------------------------------------------------------
# the highest regions are the emptiest in a fresh guest: vacate from the top
ids=$(call ListRegions | grep -oE '[0-9]+ [0-9]+ [0-9]+ "active"' | awk '{ print $1 }' | sort -rn)
target=''
# Vacate moves at most BudgetPagesPerRegion pages per call: call it again
# while pages move.
vacate_all() { # id
	local i out
	for i in $(seq 16); do
		out=$(call Vacate u "$1" 2>&1) || { echo "$out"; return 1; }
		echo "# Vacate $1: $out"
		[ "$out" = "tt 0 0" ] && return 0
	done
}
for id in $ids; do
	vacate_all "$id" || continue
	reg=$(call GetRegion u "$id")
	echo "# $reg"
	# (id start pages state zones free anon file unmovable parked last)
	set -- $reg
	free=$7
	if [ "$8$9${10}" = "000" ]; then
		target=$id
		break
	fi
done
if [ -n "$target" ]; then
	tap_ok "Vacate emptied region $target (anon, file, unmovable 0; free $free)"
else
	tap_fail "Vacate emptied a region" "no region could be emptied: $(call ListRegions)"
fi
tap_check "RegionVacated($target, ...) signal" saw_signal RegionVacated "uint32 $target"
tap_check "RegionsVacated >= 1 after Vacate" bash -c "[ \$(busctl --address='$ADDR' get-property org.regionpm1 /org/regionpm1 $IFACE RegionsVacated | awk '{print \$2}') -ge 1 ]"
mt0=$(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo)
tap_check "Park $target" call Park u "$target"
mt1=$(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo)
tap_check "parked: MemTotal $mt0 -> $mt1 kB, GetRegion says parked, RegionsParked 1" \
	bash -c "[ $mt1 -lt $mt0 ] && busctl --address='$ADDR' call org.regionpm1 /org/regionpm1 $IFACE GetRegion u $target | grep -q '\"parked\"' &&
		 [ \"\$(busctl --address='$ADDR' get-property org.regionpm1 /org/regionpm1 $IFACE RegionsParked)\" = 'u 1' ]"
tap_check "RegionParked($target) signal" saw_signal RegionParked "uint32 $target"
tap_check "Vacate of a parked region fails with Busy" error_is org.regionpm1.Error.Busy Vacate uint32:"$target"
tap_check "Park of a non-empty region (0) fails with Busy" error_is org.regionpm1.Error.Busy Park uint32:0
tap_check "Unpark $target" call Unpark u "$target"
tap_check "RegionReleased($target, \"unpark\") signal" saw_signal RegionReleased "string \"unpark\""
tap_check "unparked: MemTotal back, RegionsReleased 1" \
	bash -c "[ \$(awk '\$1 == \"MemTotal:\" { print \$2 }' /proc/meminfo) = $mt0 ] &&
		 [ \"\$(busctl --address='$ADDR' get-property org.regionpm1 /org/regionpm1 $IFACE RegionsReleased)\" = 'u 1' ]"
tap_check "Unpark of a region that is not parked fails with InvalidRegion" \
	error_is org.regionpm1.Error.InvalidRegion Unpark uint32:"$target"

# ---- SetPolicy, Pause, Resume, Reload -------------------------------------------
tap_check "SetPolicy Policy.HeadroomPercent 20" call SetPolicy ss Policy.HeadroomPercent 20
tap_check "PolicyChanged(Policy.HeadroomPercent, 20) signal" saw_signal PolicyChanged 'string "20"'
tap_check "Policy shows the override" \
	bash -c "busctl --address='$ADDR' get-property org.regionpm1 /org/regionpm1 $IFACE Policy | grep -q '\"Policy.HeadroomPercent\" \"20\"'"
tap_check "SetPolicy Policy.HeadroomPercent auto (the sliding scale)" call SetPolicy ss Policy.HeadroomPercent auto
tap_check "PolicyChanged(Policy.HeadroomPercent, auto) signal" saw_signal PolicyChanged 'string "auto"'
tap_check "Policy shows HeadroomPercent auto" \
	bash -c "busctl --address='$ADDR' get-property org.regionpm1 /org/regionpm1 $IFACE Policy | grep -q '\"Policy.HeadroomPercent\" \"auto\"'"
# Keys that need something re-armed take effect at once, not at a reload.
psi_rearmed() {
	call SetPolicy ss Pressure.WindowUSec 2000000 && call SetPolicy ss StallUSec 150000 || return 1
	grep 'memory pressure trigger' "$work/daemon.log" | tail -2
	grep -q 'memory pressure trigger: 150000 us of stall in 2000000 us' "$work/daemon.log"
}
tap_check "SetPolicy Pressure.WindowUSec / StallUSec re-arm the PSI trigger at once" psi_rearmed
cgroup_resolved() {
	local before after
	before=$(grep -cE 'protecting the page cache|protected cgroups?' "$work/daemon.log")
	call SetPolicy ss Protect.Cgroup / || return 1
	after=$(grep -cE 'protecting the page cache|protected cgroups?' "$work/daemon.log")
	grep -E 'protecting the page cache|protected cgroups?' "$work/daemon.log" | tail -2
	[ "$after" -gt "$before" ] && call SetPolicy ss Protect.Cgroup ''
}
tap_check "SetPolicy Protect.Cgroup resolves the cgroup at once" cgroup_resolved
long_cgroups() {
	local i long value
	long=$(printf 'x%.0s' $(seq 200))
	for i in 1 2 3 4 5 6 7 8; do
		call SetPolicy ss Protect.Cgroup "/$long/$i" || return 1
	done
	value=$(busctl --address="$ADDR" --json=short get-property org.regionpm1 /org/regionpm1 $IFACE Policy |
		/usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["data"]["Protect.Cgroup"])')
	echo "Protect.Cgroup in Policy: ${#value} bytes"
	call SetPolicy ss Protect.Cgroup '' || return 1
	[ "${#value}" -gt 1600 ] && [ "$(echo "$value" | wc -w)" = 8 ]
}
tap_check "Policy shows Protect.Cgroup past 1 KiB (8 paths of 200+ bytes)" long_cgroups
tap_check "SetPolicy with a bare key name (BudgetPagesPerSec 1000)" call SetPolicy ss BudgetPagesPerSec 1000
tap_check "SetPolicy of an unknown key fails with InvalidPolicy" \
	error_is org.regionpm1.Error.InvalidPolicy SetPolicy string:Policy.NoSuchKey string:1
tap_check "SetPolicy of an out-of-range value fails with InvalidPolicy" \
	error_is org.regionpm1.Error.InvalidPolicy SetPolicy string:Policy.HeadroomPercent string:250
tap_check "SetPolicy of a malformed value fails with InvalidPolicy" \
	error_is org.regionpm1.Error.InvalidPolicy SetPolicy string:Policy.Park string:perhaps
tap_check "SetPolicy of HeadroomPercent neither auto nor a number fails with InvalidPolicy" \
	error_is org.regionpm1.Error.InvalidPolicy SetPolicy string:Policy.HeadroomPercent string:automatic
tap_check "Pause: State paused" bash -c "busctl --address='$ADDR' call org.regionpm1 /org/regionpm1 $IFACE Pause &&
	[ \"\$(busctl --address='$ADDR' get-property org.regionpm1 /org/regionpm1 $IFACE State)\" = 's \"paused\"' ]"
tap_check "PropertiesChanged for State" saw_signal PropertiesChanged '"State"'
tap_check "Vacate while paused fails with Paused" error_is org.regionpm1.Error.Paused Vacate uint32:0
tap_check "Resume: State running" bash -c "busctl --address='$ADDR' call org.regionpm1 /org/regionpm1 $IFACE Resume &&
	[ \"\$(busctl --address='$ADDR' get-property org.regionpm1 /org/regionpm1 $IFACE State)\" = 's \"running\"' ]"
tap_check "Reload forgets the override (PolicyChanged back to 10)" \
	bash -c "busctl --address='$ADDR' call org.regionpm1 /org/regionpm1 $IFACE Reload &&
		 busctl --address='$ADDR' get-property org.regionpm1 /org/regionpm1 $IFACE Policy | grep -q '\"Policy.HeadroomPercent\" \"10\"'"
tap_check "PolicyChanged(Policy.HeadroomPercent, 10) signal" saw_signal PolicyChanged 'string "10"'
printf "$conf_head"'[Policy]\nPark=no\nMaxPagesToVacate=0\nHeadroomPercent=15\n' > "$work/regionpmd.conf"
kill -HUP "$daemon_pid"
tap_check "SIGHUP: PolicyChanged(Policy.HeadroomPercent, 15)" saw_signal PolicyChanged 'string "15"'
reload_sync() {
	printf "$conf_head"'[Policy]\nPark=no\nMaxPagesToVacate=0\nHeadroomPercent=17\n' > "$work/regionpmd.conf"
	call Reload || return 1
	# no waiting: the reply came after the new value was in effect
	busctl --address="$ADDR" get-property org.regionpm1 /org/regionpm1 $IFACE Policy |
		grep -q '"Policy.HeadroomPercent" "17"'
}
tap_check "Reload returns after the new configuration is in effect" reload_sync
reload_fails() {
	local out
	mv "$work/regionpmd.conf" "$work/regionpmd.conf.saved" && mkdir "$work/regionpmd.conf"
	out=$(dsend Reload 2>&1)
	rmdir "$work/regionpmd.conf" && mv "$work/regionpmd.conf.saved" "$work/regionpmd.conf"
	echo "$out"
	echo "$out" | grep -q '^Error org.freedesktop.DBus.Error.Failed: reading the configuration' &&
		busctl --address="$ADDR" get-property org.regionpm1 /org/regionpm1 $IFACE Policy |
		grep -q '"Policy.HeadroomPercent" "17"'
}
tap_check "Reload of an unreadable configuration fails and keeps the one in effect" reload_fails

# ---- access control: the bus policy ------------------------------------------
tap_check "nobody may read properties" nobody busctl --address="$ADDR" get-property org.regionpm1 /org/regionpm1 $IFACE State
tap_check "nobody may call ListRegions" nobody busctl --address="$ADDR" call org.regionpm1 /org/regionpm1 $IFACE ListRegions
for m in Pause Resume Reload; do
	tap_check "nobody calling $m: AccessDenied (bus policy)" error_is_nobody org.freedesktop.DBus.Error.AccessDenied "$m"
done
tap_check "nobody calling Vacate: AccessDenied (bus policy)" error_is_nobody org.freedesktop.DBus.Error.AccessDenied Vacate uint32:0
tap_check "nobody calling SetPolicy: AccessDenied (bus policy)" \
	error_is_nobody org.freedesktop.DBus.Error.AccessDenied SetPolicy string:Policy.Park string:yes

# ---- regionpmctl against the real daemon -----------------------------------------
ctl status > "$work/status.txt" 2>&1
rc=$?
sed 's/^/# /' "$work/status.txt"
tap_check "regionpmctl status: exit 0 and shows running" bash -c "[ $rc = 0 ] && grep -q running '$work/status.txt'"
ctl regions > "$work/regions.txt" 2>&1
rc=$?
sed 's/^/# /' "$work/regions.txt"
tap_check "regionpmctl regions: exit 0, one row per region" \
	bash -c "[ $rc = 0 ] && [ \$(grep -cE '^ *[0-9]+ ' '$work/regions.txt') = $count ]"
tap_check "regionpmctl regions --json is JSON with $count regions" \
	bash -c "REGIONPM_BUS_ADDRESS='$ADDR' '$CTL' regions --json | python3 -c 'import json,sys; d=json.load(sys.stdin); v=[x for x in d.values()][0]; sys.exit(len(v) != $count)'"
# a freshly unparked region is used again at once (even by regionpmctl
# itself): park one that was not touched yet, trying from the top
ctl_park() {
	local id
	for id in $ids; do
		[ "$id" = "$target" ] && continue
		ctl_rc 0 vacate "$id" >/dev/null && ctl_rc 0 park "$id" && { echo "$id" > "$work/ctl-target"; return 0; }
	done
	return 1
}
tap_check "regionpmctl vacate $target: exit 0" ctl_rc 0 vacate "$target"
tap_check "regionpmctl vacate + park of an untouched region: exit 0" ctl_park
target2=$(cat "$work/ctl-target" 2>/dev/null || echo none)
tap_check "regionpmctl unpark $target2: exit 0" ctl_rc 0 unpark "$target2"
tap_check "regionpmctl unpark $target2 again: exit 5 (refused)" ctl_rc 5 unpark "$target2"
tap_check "regionpmctl vacate 99999: exit 5" ctl_rc 5 vacate 99999
tap_check "regionpmctl park 0 (not empty): exit 5" ctl_rc 5 park 0
tap_check "regionpmctl vacate x: exit 2" ctl_rc 2 vacate x
tap_check "regionpmctl set HeadroomPercent=12: exit 0" ctl_rc 0 set HeadroomPercent=12
tap_check "regionpmctl set HeadroomPercent=250: exit 5" ctl_rc 5 set HeadroomPercent=250
tap_check "regionpmctl set NoSuchKey=1: exit 5 (or 2 if refused locally)" \
	bash -c "REGIONPM_BUS_ADDRESS='$ADDR' '$CTL' set NoSuchKey=1; rc=\$?; [ \$rc = 5 ] || [ \$rc = 2 ]"
tap_check "regionpmctl park $target as nobody: exit 4" \
	bash -c "REGIONPM_BUS_ADDRESS='$ADDR' setpriv --reuid=nobody --regid=nogroup --clear-groups '$CTL' park $target; [ \$? = 4 ]"
# ---- regionpmctl status --json, pause/resume/reload; the metrics file --------------
status_json() {
	local out
	out=$(ctl status --json) || return 1
	printf '%s\n' "$out" | head -20
	printf '%s' "$out" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
count, errors, parked = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
assert d["region_count"] == count, d["region_count"]
assert len(d["regions"]) == count
assert d["regions_in_use"] + d["regions_empty"] + d["regions_parked"] <= count
assert d["errors"] == errors, (d["errors"], errors)
assert d["regions_parked"] == parked
assert d["page_size"] == int(sys.argv[4])
assert d["policy"]["Policy.Park"] == "no"
assert all(r["size"] > 0 and r["state"] in ("active", "parked", "busy") for r in d["regions"])
' "$count" "$(prop Errors | awk '{print $2}')" "$(prop RegionsParked | awk '{print $2}')" "$(getconf PAGESIZE)"
}
tap_check "regionpmctl status --json: valid JSON that agrees with the properties" status_json
tap_check "regionpmctl status -b prints region sizes in bytes" \
	bash -c "REGIONPM_BUS_ADDRESS='$ADDR' '$CTL' status -b | grep -qE '^Regions: +$count with memory, $region_size each'"
tap_check "regionpmctl pause: State paused" \
	bash -c "REGIONPM_BUS_ADDRESS='$ADDR' '$CTL' pause && [ \"\$(busctl --address='$ADDR' get-property org.regionpm1 /org/regionpm1 $IFACE State)\" = 's \"paused\"' ]"
tap_check "regionpmctl resume: State running" \
	bash -c "REGIONPM_BUS_ADDRESS='$ADDR' '$CTL' resume && [ \"\$(busctl --address='$ADDR' get-property org.regionpm1 /org/regionpm1 $IFACE State)\" = 's \"running\"' ]"
ctl_reload() {
	printf "$conf_head"'[Policy]\nPark=no\nMaxPagesToVacate=0\nHeadroomPercent=19\n' > "$work/regionpmd.conf"
	ctl reload || return 1
	busctl --address="$ADDR" get-property org.regionpm1 /org/regionpm1 $IFACE Policy |
		grep -q '"Policy.HeadroomPercent" "19"'
}
tap_check "regionpmctl reload: the new configuration in effect when it returns" ctl_reload
tap_check "regionpmctl pause as nobody: exit 4" \
	bash -c "REGIONPM_BUS_ADDRESS='$ADDR' setpriv --reuid=nobody --regid=nogroup --clear-groups '$CTL' pause; [ \$? = 4 ]"
metrics_ok() {
	local i mig
	for i in $(seq 30); do	# written after every pass (IntervalSec=5)
		mig=$(prop PagesMigrated | awk '{print $2}')
		[ -f "$METRICS" ] && grep -qx "regionpm_pages_migrated_total $mig" "$METRICS" && break
		sleep 0.5
	done
	ls -l "$work/textfile"
	cat "$METRICS"
	[ "$(ls -A "$work/textfile")" = regionpm.prom ] || { echo "other files in the textfile directory"; return 1; }
	[ "$(stat -c %a "$METRICS")" = 644 ] || return 1
	/usr/bin/python3 -c '
import sys
from prometheus_client.parser import text_string_to_metric_families
fam = {f.name: f for f in text_string_to_metric_families(open(sys.argv[1]).read())}
count, parked, mig, errors = (int(x) for x in sys.argv[2:6])
regions = {s.labels["state"]: s.value for s in fam["regionpm_regions"].samples}
assert fam["regionpm_regions"].type == "gauge"
assert sum(regions.values()) == count, regions
assert regions["parked"] == parked, regions
assert fam["regionpm_pages_migrated"].type == "counter"
assert fam["regionpm_pages_migrated"].samples[0].value == mig
assert fam["regionpm_errors"].samples[0].value == errors
assert 0 < fam["regionpm_modelled_power_watts"].samples[0].value < 1000
for name in ("regionpm_pages_dropped", "regionpm_parks", "regionpm_releases", "regionpm_paused",
             "regionpm_region_size_bytes", "regionpm_power_down_ratio"):
    assert name in fam, name
' "$METRICS" "$count" "$(prop RegionsParked | awk '{print $2}')" "$mig" "$(prop Errors | awk '{print $2}')"
}
tap_check "MetricsFile: Prometheus text (HELP, TYPE), mode 0644, agrees with the properties" metrics_ok
tap_check "regionpmctl status as nobody: exit 0" \
	bash -c "REGIONPM_BUS_ADDRESS='$ADDR' setpriv --reuid=nobody --regid=nogroup --clear-groups '$CTL' status >/dev/null"

stop_daemon
tap_check "regionpmd exits 0 on SIGTERM" test $? = 0
tap_check "regionpmctl status without a daemon: exit 3" ctl_rc 3 status

# ---- access control: sd-bus's own check ----------------------------------------------
# The mutating methods are not SD_BUS_VTABLE_UNPRIVILEGED: sd-bus refuses them
# to a caller that is not root, whatever the bus policy says.
if start_bus open open && start_daemon; then
	tap_ok "regionpmd on a bus whose policy lets everyone call everything"
	for m in Pause Reload; do
		tap_check "nobody calling $m: AccessDenied from regionpmd itself (sd-bus)" \
			bash -c "out=\$(error_is_nobody org.freedesktop.DBus.Error.AccessDenied $m) && echo \"\$out\" | grep -q 'not permitted'"
	done
	tap_check "nobody calling Vacate: AccessDenied from regionpmd itself" \
		error_is_nobody org.freedesktop.DBus.Error.AccessDenied Vacate uint32:0
	tap_check "nobody calling SetPolicy: AccessDenied from regionpmd itself" \
		error_is_nobody org.freedesktop.DBus.Error.AccessDenied SetPolicy string:Policy.Park string:yes
	tap_check "State still running (nobody's Pause had no effect)" test "$(prop State)" = 's "running"'
	tap_check "nobody's GetRegion on that bus scans nothing either" unpriv_no_scan
	tap_check "root may still Pause on that bus" call Pause
	stop_daemon
tap_check "regionpmd exits 0 on SIGTERM" test $? = 0
else
	tap_fail "regionpmd on a bus whose policy lets everyone call everything" "$(cat "$work/daemon.log")"
fi

# Outside the initial network namespace the family refuses every request:
# the exit path of a kernel without it (regionpm.enable=0), status 6.
# Backend=netlink: with auto the daemon would take the stock backend.
no_family() {
	local rc
	{ cat "$work/regionpmd.conf"; printf '\n[Daemon]\nBackend=netlink\n'; } > "$work/netlink.conf"
	unshare --net "$RPMD" --once -c "$work/netlink.conf" > "$work/nofam.log" 2>&1
	rc=$?
	cat "$work/nofam.log"
	[ "$rc" = 6 ]
}
tap_check "regionpmd without a usable regionpm family exits with status 6" no_family

echo "# daemon log tail:"
tail -5 "$work/daemon.log" | sed 's/^/#   /'
tap_done
