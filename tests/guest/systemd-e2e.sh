#!/bin/bash
# regionpmd as an operator meets it, in the test VM booted with systemd as
# PID 1 (run-vm --systemd): TAP.
#
#   * "make install" from the repo (into the guest's overlay root), daemon-reload;
#   * the system bus runs; "systemctl enable --now regionpmd" reaches active
#     (Type=notify: after READY=1), "systemctl status" says running, the
#     journal has the startup line, "man regionpmd.conf" finds the page;
#   * "regionpmctl status" and "regionpmctl regions" work (their output is
#     shown as TAP diagnostics);
#   * a drop-in /etc/regionpmd.conf.d/50-test.conf + "systemctl reload
#     regionpmd" shows up in the policy printed by "regionpmctl status";
#   * regions get parked (by the daemon on the idle guest, else by
#     "regionpmctl park ID" on an empty region); "systemctl stop regionpmd"
#     gives every one back: MemTotal back to its value before, and the
#     kernel's parked-pages (info-get, read with tools/net/ynl/cli.py) 0;
#   * stopped, it is off the bus ("regionpmctl check"), and the next
#     "regionpmctl status" starts it again through D-Bus activation;
#   * "systemctl restart" gives a new, working daemon;
#   * "systemd-analyze security regionpmd.service" (diagnostic);
#   * "make uninstall" removes what "make install" put there.
#
#   REGIONPM_E2E_PARK_WAIT  seconds allowed for the daemon to park (default 90)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/tap.sh"
. "$top/tests/lib/mem.sh"

PARK_WAIT=${REGIONPM_E2E_PARK_WAIT:-90}
UNIT=regionpmd.service
DROPIN_DIR=/etc/regionpmd.conf.d
DROPIN=$DROPIN_DIR/50-test.conf
CTL=regionpmctl		# the installed one, found in PATH (/usr/local/bin)
KSRC=${REGIONPM_SRC:-${REGIONPM_CACHE:-/root/.cache/regionpm}/src/linux-6.12}
SPEC=$top/kernel/Documentation/netlink/specs/regionpm.yaml
export SYSTEMD_PAGER='' SYSTEMD_COLORS=0 PAGER=cat MANPAGER=cat MANWIDTH=100
export PYTHONDONTWRITEBYTECODE=1

bail() { # description why: a failure that makes the rest meaningless
	tap_fail "$1" "$2"
	tap_done
	exit 1
}
diag() { sed 's/^/#   /'; }
section() { # title: a diagnostic with the guest's uptime and memory (TCG can be slow)
	echo "# ---- $1 (uptime $(cut -d' ' -f1 /proc/uptime) s; MemTotal $(meminfo MemTotal) kB, MemAvailable $(meminfo MemAvailable) kB)"
}
journal() { timeout 60 journalctl -b -u "$UNIT" --no-pager "$@" 2>&1; }

# The kernel's own count of parked pages, asked with the kernel's YNL client
# (independent of regionpmd and regionpmctl); empty if it cannot be asked.
kernel_parked_pages() {
	local schema=() out
	[ -r "$KSRC/Documentation/netlink/genetlink.yaml" ] &&
		schema=(--schema "$KSRC/Documentation/netlink/genetlink.yaml")
	[ ${#schema[@]} = 0 ] && schema=(--no-schema)
	out=$(python3 "$KSRC/tools/net/ynl/cli.py" --spec "$SPEC" "${schema[@]}" \
		--output-json --do info-get 2>/dev/null) || return 1
	python3 -c 'import json, sys; print(json.loads(sys.argv[1])["parked-pages"])' "$out"
}

if [ "$(cat /proc/1/comm 2>/dev/null)" != systemd ]; then
	bail "PID 1 is systemd" "PID 1 is '$(cat /proc/1/comm 2>/dev/null)': run in run-vm --systemd"
fi
if [ ! -d /sys/module/regionpm/parameters ]; then
	bail "the kernel has regionpm (/sys/module/regionpm/parameters)" "$(uname -r)"
fi
echo "# $(uname -r), $(systemctl --version | head -1), system state $(systemctl is-system-running 2>&1)"

# The kernel's proactive compaction would refill high regions behind the
# daemon's back; the idle guest then keeps its empty regions empty.
echo 0 > /proc/sys/vm/compaction_proactiveness 2>/dev/null

# ---- 1. make install ---------------------------------------------------------
section "make install"
# The repo is the host's, seen through the guest's overlay root: writes land
# in the guest's tmpfs and vanish.  The build is done on the host; "make -q"
# says whether install would have to rebuild anything (it would then compile
# in the guest: slower, still correct).
install_it() {
	if ! make -s -C "$top" -q build/regionpmd build/regionpmctl 2>/dev/null; then
		echo "build/ is not up to date: make install rebuilds it in the guest overlay"
	fi
	make -C "$top" install PREFIX=/usr/local
}
tap_check "make install (PREFIX=/usr/local)" install_it
installed_ok() {
	local f rc=0
	for f in /usr/local/sbin/regionpmd /usr/local/bin/regionpmctl; do
		[ -x "$f" ] || { echo "missing: $f"; rc=1; }
	done
	for f in /usr/local/lib/systemd/system/$UNIT /etc/dbus-1/system.d/org.regionpm1.conf \
		/usr/local/share/dbus-1/system-services/org.regionpm1.service /etc/regionpmd.conf; do
		[ -f "$f" ] || { echo "missing: $f"; rc=1; }
	done
	grep -q '^ExecStart=/usr/local/sbin/regionpmd$' "/usr/local/lib/systemd/system/$UNIT" ||
		{ echo "ExecStart not substituted"; rc=1; }
	[ "$(command -v "$CTL")" = /usr/local/bin/regionpmctl ] ||
		{ echo "regionpmctl in PATH is '$(command -v "$CTL")'"; rc=1; }
	return $rc
}
tap_check "installed: daemon, regionpmctl, unit (ExecStart substituted), bus policy and activation, config" installed_ok
man_ok() {
	local out path
	path=$(man -w regionpmd.conf 2>&1)
	out=$(man regionpmd.conf 2>&1)
	echo "man -w: $path; man: $(printf '%s\n' "$out" | wc -l) lines"
	printf '%s\n' "$out" | head -3
	# (Debian: /usr/local/man -> share/man)
	[ "$(realpath "$path")" = /usr/local/share/man/man5/regionpmd.conf.5 ] &&
		printf '%s\n' "$out" | grep -q 'HeadroomPercent'
}
tap_check "man regionpmd.conf finds the installed page" man_ok

tap_check "systemctl daemon-reload" systemctl daemon-reload
tap_check "systemd sees the unit in /usr/local/lib/systemd/system" \
	bash -c "systemctl show -P FragmentPath $UNIT | grep -qx /usr/local/lib/systemd/system/$UNIT"

# ---- 2. the system bus, enable --now ------------------------------------------
section "the system bus, enable --now"
bus_up() {
	systemctl cat dbus.service > /dev/null || return 1
	systemctl start dbus.service && systemctl is-active dbus.service
}
tap_check "the system bus runs (systemctl start dbus)" bus_up
# dbus-daemon reads the new policy file on a reload (it also watches the
# directory; this makes it certain before the name is taken).
systemctl reload dbus.service 2>/dev/null

mem_total0=$(meminfo MemTotal)
parked0=$(kernel_parked_pages)
echo "# before the daemon: MemTotal $mem_total0 kB, kernel parked-pages ${parked0:-?}"

t0=$(date +%s%N)
enable_now() { timeout 120 systemctl enable --now "$UNIT"; }
tap_check "systemctl enable --now regionpmd" enable_now
echo "# enable --now returned after $(( ($(date +%s%N) - t0) / 1000000 )) ms"
if [ "$(systemctl is-active "$UNIT")" != active ]; then
	bail "regionpmd is active after enable --now" "is-active: $(systemctl is-active "$UNIT")
$(systemctl status --no-pager -l "$UNIT" 2>&1)
$(journal | tail -30)"
fi
tap_ok "regionpmd is active (Type=notify: READY=1 was sent)"
tap_check "regionpmd is enabled (wanted by multi-user.target)" \
	bash -c "systemctl is-enabled $UNIT | grep -qx enabled"
status_running() {
	local out
	out=$(systemctl status --no-pager -l "$UNIT" 2>&1)
	echo "$out"
	echo "$out" | grep -qE 'Active: active \(running\)'
}
tap_check "systemctl status regionpmd shows active (running)" status_running
systemctl status --no-pager -l -n 5 "$UNIT" 2>&1 | diag
startup_line() {
	for _ in $(seq 1 10); do
		journal -o cat 2>/dev/null |
			grep -E '^regionpmd [0-9.]+: [0-9]+ regions of [0-9]+ MiB' && return 0
		sleep 1
	done
	journal | tail -20
	return 1
}
tap_check "journalctl -u regionpmd has the startup line" startup_line
journal -o short-monotonic 2>&1 | head -8 | diag

# ---- 3. regionpmctl status and regions -----------------------------------------
section "regionpmctl status and regions"
ctl_show() { # description args...: run the installed regionpmctl, output as diagnostics
	local desc=$1 out rc
	shift
	out=$(timeout 120 "$CTL" "$@" 2>&1)
	rc=$?
	if [ "$rc" = 0 ]; then
		tap_ok "$desc"
	else
		tap_fail "$desc" "regionpmctl $* -> exit $rc"
	fi
	echo "# \$ regionpmctl $*"
	printf '%s\n' "$out" | diag
	return $rc
}
ctl_show "regionpmctl status" status
ctl_show "regionpmctl regions" regions
ctl_show "regionpmctl check (kernel support, PSI, page_idle, privileges, daemon on the bus)" check

# ---- 4. a drop-in + systemctl reload shows in regionpmctl status -------------
section "a drop-in + systemctl reload shows in regionpmctl status"
policy_value() { # Key: its value in the Policy lines of "regionpmctl status"
	"$CTL" status 2>/dev/null | awk -v k="$1" '
		/^[A-Z][a-z -]*:/ { in_policy = ($0 ~ /^Policy:/) }
		in_policy { for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) { sub(k "=", "", $i); print $i } }'
}
head0=$(policy_value HeadroomPercent)
new_head=23
[ "$head0" = "$new_head" ] && new_head=24
reload_visible() {
	local v pid0 pid1
	pid0=$(systemctl show -P MainPID "$UNIT")
	mkdir -p "$DROPIN_DIR" &&
		printf '# systemd-e2e.sh\n[Policy]\nHeadroomPercent=%s\n' "$new_head" > "$DROPIN" || return 1
	timeout 60 systemctl reload "$UNIT" || return 1
	pid1=$(systemctl show -P MainPID "$UNIT")
	echo "HeadroomPercent before: ${head0:-?}; main PID $pid0 -> $pid1"
	[ "$pid0" = "$pid1" ] || { echo "reload restarted the daemon"; return 1; }
	# ExecReload calls the bus method Reload, which replies once the new
	# configuration is in effect: no waiting, the first look must see it
	v=$(policy_value HeadroomPercent)
	[ "$v" = "$new_head" ] && { echo "HeadroomPercent right after systemctl reload: $v"; return 0; }
	echo "HeadroomPercent right after systemctl reload: ${v:-?} (expected $new_head)"
	"$CTL" status 2>&1
	journal -o cat | tail -10
	return 1
}
tap_check "drop-in HeadroomPercent=$new_head + systemctl reload: in effect when systemctl returns" reload_visible
journal -o cat 2>&1 | grep -iE 'reload' | tail -3 | diag

# ---- 5. parked regions; systemctl stop gives every one back ----------------
section "parked regions; systemctl stop gives every one back"
# On an idle 2 GiB guest most regions are empty: the daemon parks them by
# itself within a few passes.  If it has not after PARK_WAIT seconds, park
# one empty region by hand.
parked_regions() { # ids of the regions regionpmctl lists as parked
	"$CTL" regions --raw --no-legend -o ID,STATE 2>/dev/null | awk '$2 == "parked" { print $1 }'
}
empty_region() { # an active region whose free pages fill it, from the JSON table
	"$CTL" regions --json -o ID,SIZE,STATE,FREE 2>/dev/null | python3 -c '
import json, sys
for r in json.load(sys.stdin)["regions"]:
    if r["state"] == "active" and r["free"] is not None and r["free"] >= r["size"]:
        print(r["id"])
        break'
}
get_parked() {
	local id
	for _ in $(seq 1 $((PARK_WAIT / 3))); do
		[ -n "$(parked_regions)" ] && [ "$(meminfo MemTotal)" -lt "$mem_total0" ] && break
		sleep 3
	done
	if [ -z "$(parked_regions)" ]; then
		id=$(empty_region)
		echo "the daemon parked nothing in ${PARK_WAIT}s; regionpmctl park ${id:-(no empty region)}"
		[ -n "$id" ] && "$CTL" park "$id"
	fi
	sleep 1
	echo "parked (regionpmctl regions): $(parked_regions | tr '\n' ' ')"
	echo "MemTotal $mem_total0 -> $(meminfo MemTotal) kB; kernel parked-pages $(kernel_parked_pages || echo '?')"
	[ -n "$(parked_regions)" ] && [ "$(meminfo MemTotal)" -lt "$mem_total0" ]
}
if out=$(get_parked 2>&1); then
	tap_ok "at least one region is parked (MemTotal below its value before the daemon)"
	printf '%s\n' "$out" | diag
else
	tap_fail "at least one region is parked (MemTotal below its value before the daemon)" "$out
$(journal -o cat | tail -20)"
fi
parked_kernel=$(kernel_parked_pages)
mem_parked=$(meminfo MemTotal)
if [ -n "$parked_kernel" ]; then
	# MemTotal counts managed pages: parking takes exactly the parked pages out.
	tap_check "kernel parked-pages ($parked_kernel) = MemTotal drop ($mem_total0 -> $mem_parked kB)" \
		test $(( parked_kernel * $(getconf PAGESIZE) / 1024 )) = $(( mem_total0 - mem_parked ))
else
	tap_fail "kernel parked-pages can be read with tools/net/ynl/cli.py" "no $KSRC/tools/net/ynl/cli.py?"
fi
ctl_show "regionpmctl status with parked regions" status
ctl_show "regionpmctl regions with parked regions" regions

stop_releases() {
	local pk
	timeout 60 systemctl stop "$UNIT" || return 1
	echo "is-active: $(systemctl is-active "$UNIT"); Result=$(systemctl show -P Result "$UNIT"), ExecMainStatus=$(systemctl show -P ExecMainStatus "$UNIT")"
	for _ in 1 2 3 4 5; do
		pk=$(kernel_parked_pages)
		[ "$(meminfo MemTotal)" = "$mem_total0" ] && [ "$pk" = 0 ] && break
		sleep 1
	done
	echo "MemTotal $mem_parked -> $(meminfo MemTotal) kB (before the daemon: $mem_total0); kernel parked-pages ${parked_kernel:-?} -> ${pk:-?}"
	journal -o cat | grep -iE 'unpark|releas|stopp|exit' | tail -4
	[ "$(systemctl is-active "$UNIT")" = inactive ] &&
		[ "$(systemctl show -P Result "$UNIT")" = success ] &&
		[ "$(meminfo MemTotal)" = "$mem_total0" ] && [ "$pk" = 0 ]
}
if out=$(stop_releases 2>&1); then
	tap_ok "systemctl stop: clean exit, MemTotal back to $mem_total0 kB, kernel parked-pages 0"
	printf '%s\n' "$out" | diag
else
	tap_fail "systemctl stop: clean exit, MemTotal back to $mem_total0 kB, kernel parked-pages 0" "$out"
fi
# Stopped, the daemon is off the bus ("check" asks without activating it);
# the next regionpmctl call starts it again through bus activation
# (org.regionpm1.service: SystemdService=regionpmd.service).
off_bus() {
	local out
	out=$("$CTL" check 2>&1)
	printf '%s\n' "$out" | grep -E 'on the bus|does not answer'
	printf '%s\n' "$out" | grep -q 'regionpmd does not answer on the bus' &&
		[ "$(systemctl is-active "$UNIT")" = inactive ]
}
tap_check "stopped: regionpmctl check says regionpmd does not answer, and does not start it" off_bus
# A stopped and disabled unit cannot be started by a bus call: activation
# goes through dbus-org.regionpm1.service, which only "enable" creates.
no_activation_disabled() {
	local out rc
	timeout 60 systemctl disable "$UNIT" 2>&1 || return 1
	echo "is-enabled: $(systemctl is-enabled "$UNIT" 2>&1); dbus-org.regionpm1.service: $(systemctl is-enabled dbus-org.regionpm1.service 2>&1)"
	out=$(timeout 60 setpriv --reuid=nobody --regid=nogroup --clear-groups \
		busctl call org.regionpm1 /org/regionpm1 org.freedesktop.DBus.Peer Ping 2>&1)
	rc=$?
	echo "busctl Ping as nobody -> exit $rc: $out"
	out=$(timeout 60 setpriv --reuid=nobody --regid=nogroup --clear-groups "$CTL" status 2>&1)
	echo "regionpmctl status as nobody -> exit $?: $(printf '%s\n' "$out" | head -2)"
	sleep 2
	echo "regionpmd: $(systemctl is-active "$UNIT")"
	[ "$rc" != 0 ] && [ "$(systemctl is-active "$UNIT")" = inactive ]
}
if out=$(no_activation_disabled 2>&1); then
	tap_ok "stopped and disabled: a bus call by nobody does not start regionpmd"
	printf '%s\n' "$out" | diag
else
	tap_fail "stopped and disabled: a bus call by nobody does not start regionpmd" "$out
$(timeout 60 journalctl -b -u dbus.service --no-pager -o cat | tail -5)"
fi
tap_check "systemctl enable regionpmd again (creates dbus-org.regionpm1.service)" \
	bash -c "timeout 60 systemctl enable $UNIT && systemctl is-enabled dbus-org.regionpm1.service"
activation() {
	local out rc
	out=$(timeout 120 setpriv --reuid=nobody --regid=nogroup --clear-groups "$CTL" status 2>&1)
	rc=$?
	echo "regionpmctl status as nobody -> exit $rc; regionpmd $(systemctl is-active "$UNIT"), main PID $(systemctl show -P MainPID "$UNIT")"
	[ "$rc" = 0 ] || printf '%s\n' "$out"
	[ "$rc" = 0 ] && [ "$(systemctl is-active "$UNIT")" = active ]
}
if out=$(activation 2>&1); then
	tap_ok "stopped but enabled: regionpmctl status (as nobody) starts it through D-Bus activation"
	printf '%s\n' "$out" | diag
else
	tap_fail "stopped but enabled: regionpmctl status (as nobody) starts it through D-Bus activation" "$out
$(timeout 60 journalctl -b -u dbus.service --no-pager -o cat | tail -5)"
fi

# ---- 6. restart -----------------------------------------------------------------
section "restart"
restart_ok() {
	local pid0 pid1
	timeout 120 systemctl start "$UNIT" || return 1	# (already running if activated)
	pid0=$(systemctl show -P MainPID "$UNIT")
	timeout 120 systemctl restart "$UNIT" || return 1
	pid1=$(systemctl show -P MainPID "$UNIT")
	echo "main PID $pid0 -> $pid1, $(systemctl is-active "$UNIT"), NRestarts=$(systemctl show -P NRestarts "$UNIT")"
	[ "$(systemctl is-active "$UNIT")" = active ] && [ "$pid1" != 0 ] && [ "$pid0" != "$pid1" ] &&
		"$CTL" status > /dev/null && [ "$(policy_value HeadroomPercent)" = "$new_head" ]
}
tap_check "systemctl restart: a new daemon answers, the drop-in still applies" restart_ok

# ---- 6b. no regionpm family: exit 6, no restart loop -----------------------------
# The family answers in the initial network namespace only: with
# PrivateNetwork=yes the daemon cannot use it, which takes the exit path of
# regionpm.enable=0 (a boot of its own to test that).  It must exit 6 and systemd must not restart it
# (RestartPreventExitStatus=6), although Restart=on-failure is set.
section "no regionpm family: exit 6, not restarted"
NOFAM=/run/systemd/system/$UNIT.d/50-no-family.conf
no_family() {
	local st
	timeout 60 systemctl stop "$UNIT"
	mkdir -p "${NOFAM%/*}" && printf '[Service]\nPrivateNetwork=yes\n' > "$NOFAM" || return 1
	# the netlink exit path: with Backend=auto it would take the stock backend
	mkdir -p /etc/regionpmd.conf.d &&
		printf '[Daemon]\nBackend=netlink\n' > /etc/regionpmd.conf.d/90-nofam-test.conf || return 1
	systemctl daemon-reload
	timeout 60 systemctl start "$UNIT"
	echo "systemctl start -> exit $?"
	sleep 12	# RestartSec=5s: two restarts would have happened by now
	st="$(systemctl show -P ActiveState "$UNIT") Result=$(systemctl show -P Result "$UNIT") ExecMainStatus=$(systemctl show -P ExecMainStatus "$UNIT") NRestarts=$(systemctl show -P NRestarts "$UNIT")"
	echo "$st"
	journal -o cat | grep -E 'initial network namespace only' | tail -1
	rm -f "$NOFAM" /etc/regionpmd.conf.d/90-nofam-test.conf
	systemctl daemon-reload
	systemctl reset-failed "$UNIT"
	[ "$st" = "failed Result=exit-code ExecMainStatus=6 NRestarts=0" ]
}
if out=$(no_family 2>&1); then
	tap_ok "without the regionpm family: exit status 6, failed, not restarted"
	printf '%s\n' "$out" | diag
else
	tap_fail "without the regionpm family: exit status 6, failed, not restarted" "$out"
fi
tap_check "and it starts again once the family is there" \
	bash -c "timeout 120 systemctl start $UNIT && systemctl is-active $UNIT"

# ---- 7. systemd-analyze security ----------------------------------------------
section "systemd-analyze security"
sec=$(systemd-analyze security --no-pager "$UNIT" 2>&1)
score=$(printf '%s\n' "$sec" | grep -E 'Overall exposure level' | tail -1)
if [ -n "$score" ]; then
	tap_ok "systemd-analyze security $UNIT: ${score#*: }"
else
	tap_fail "systemd-analyze security $UNIT prints a score" "$sec"
fi
echo "# \$ systemd-analyze security $UNIT"
printf '%s\n' "$sec" | diag

# ---- 8. stop, disable, uninstall -------------------------------------------------
section "stop, disable, uninstall"
uninstall_ok() {
	local f
	timeout 60 systemctl disable --now "$UNIT" || return 1
	rm -f "$DROPIN"
	make -C "$top" uninstall PREFIX=/usr/local || return 1
	for f in /usr/local/sbin/regionpmd /usr/local/bin/regionpmctl \
		/usr/local/lib/systemd/system/$UNIT /etc/dbus-1/system.d/org.regionpm1.conf \
		/usr/local/share/dbus-1/system-services/org.regionpm1.service /etc/regionpmd.conf; do
		[ -e "$f" ] && { echo "still there: $f"; return 1; }
	done
	systemctl daemon-reload
	[ "$(meminfo MemTotal)" = "$mem_total0" ]
}
tap_check "systemctl disable --now + make uninstall remove everything, memory all back" uninstall_ok

tap_done
