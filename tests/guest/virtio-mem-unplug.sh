#!/bin/bash
# A host takes back the memory of a virtio-mem device while regionpmd has
# parked it, then plugs it again (TAP).  Boot: tests/vm/run-vm --virtio-mem
# with memhp_default_state=online memory_hotplug.online_policy=auto-movable;
# the test plays the host through tests/lib/virtio-mem.sh.
#
# virtio-mem unplugs online memory with alloc_contig_range(), which found
# parked pages busy: before the kernel gave parked regions back to it
# (reason range-claimed), a 1 GiB device stayed at 896 MiB plugged with
# regionpmd running, and for minutes after it stopped.  Here the whole
# device must go within UNPLUG_WAIT seconds while the daemon runs, with no
# OOM kill, the daemon told why; plugged again, the memory comes back
# online in ZONE_MOVABLE and the daemon goes on; SIGTERM gives every
# parked page back.
#
# On the stock kernel (regionpmd's stock backend: parking is offlining a
# block) virtio-mem unplugs the offline blocks first and needs no help;
# there the test checks that the daemon copes with its blocks vanishing
# and coming back: it offlines the new blocks again and onlines them at
# exit.  The checks of the kernel's release events (range-claimed) run
# only on the patched kernel, which has them.
#
#   REGIONPMD=path          daemon binary (default build/regionpmd)
#   REGIONPM_UNPLUG_WAIT    seconds allowed for each resize (default 180:
#                           virtio-mem retries a busy unplug after 50 s)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/tap.sh"
. "$top/tests/lib/mem.sh"
. "$top/tests/lib/hotplug.sh"
. "$top/tests/lib/virtio-mem.sh"

RPMD=${REGIONPMD:-$top/build/regionpmd}
patched=0
[ -d /sys/module/regionpm ] && patched=1
WAIT=${REGIONPM_UNPLUG_WAIT:-180}
work=$(mktemp -d "${TMPDIR:-/tmp}/vmem-unplug.XXXXXX")
log=$work/regionpmd.log
daemon_pid=''
cleanup() {
	# A daemon stuck in the kernel (D state) survives SIGKILL: do not wait
	# for it, or the test hangs until run-vm's timeout.
	[ -n "$daemon_pid" ] && kill -KILL "$daemon_pid" 2>/dev/null && sleep 1
	[ -n "$daemon_pid" ] && kill -0 "$daemon_pid" 2>/dev/null ||
		wait 2>/dev/null
	# run-vm --out FILE keeps it as FILE.regionpmd-log
	[ -n "${REGIONPM_VM_OUT:-}" ] && cp "$log" "$REGIONPM_VM_OUT.regionpmd-log" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT


# Regions of the device: those at or above 4 GiB (run-vm keeps the boot
# memory below).  regionpm.region_size 0 means the memory block size.
region_bytes=$(cat /sys/module/regionpm/parameters/region_size 2>/dev/null)
[ "${region_bytes:-0}" -gt 0 ] || region_bytes=$hotplug_block_bytes
first_dev_region=$(( (4 << 30) / region_bytes ))
# Device regions regionpmd has parked now, from its log ("region N: parked",
# "region N: released by the kernel"), one id per line.
parked_dev_regions() {
	awk -v first="$first_dev_region" '
		$1 == "region" { id = $2; sub(":", "", id); id += 0 }
		$1 == "region" && $3 == "parked" && id >= first { p[id] = 1 }
		$1 == "region" && $3 == "released" && id >= first { delete p[id] }
		END { for (id in p) print id }' "$log" | sort -n
}

size0=$(vmem_plugged)
tap_check "the host agent answers: the device has memory plugged (${size0:-?} bytes)" \
	test "${size0:-0}" -gt 0
tap_check "the device's memory blocks are online in ZONE_MOVABLE" onlined_movable
tap_check "the host agent refuses a bad request" \
	bash -c '. "$1"; vmem_call "set -5" | grep -q "^error unknown request"' _ "$top/tests/lib/virtio-mem.sh"
[ "${size0:-0}" -gt 0 ] || { tap_done; exit 1; }
oom0=$(oom_kills)
mt0=$(meminfo MemTotal)

# ---- 1. regionpmd parks the device's empty regions ---------------------------
echo 0 > /proc/sys/vm/compaction_proactiveness
"$RPMD" -v > "$log" 2>&1 &
daemon_pid=$!
wait_parked() {
	local i n
	for i in $(seq 1 90); do
		n=$(parked_dev_regions | grep -c .)
		[ "$n" -ge 4 ] && break
		sleep 1
	done
	echo "device regions parked after ${i}s: $(parked_dev_regions | tr '\n' ' ')"
	[ "$n" -ge 4 ]
}
tap_check "regionpmd parked at least 4 of the device's regions" wait_parked
mt_parked=$(meminfo MemTotal)

# ---- 2. the host takes the whole device back -------------------------------
tap_check "the host asks for 0 bytes" vmem_resize 0
# On a stall, the state of the guest goes into the test log.
unplugged() {
	vmem_wait_plugged 0 "$WAIT" | tee "$work/unplug.txt"
	[ "${PIPESTATUS[0]}" = 0 ] || { vmem_stall_report; return 1; }
}
tap_check "the guest unplugged the whole device within ${WAIT}s, regionpmd running" unplugged
sed 's/^/# /' "$work/unplug.txt"
claimed() {
	grep 'released by the kernel (range-claimed' "$log" | head -3
	grep -q 'released by the kernel (range-claimed' "$log"
}
# The stock kernel has no release events: virtio-mem unplugs the blocks
# regionpmd offlined by itself, and the daemon sees them gone in its dump.
if [ "$patched" = 1 ]; then
	tap_check "regionpmd was told its parked regions were claimed (range-claimed)" claimed
fi
none_parked() {
	local left
	left=$(parked_dev_regions)
	[ -z "$left" ] && return 0
	echo "parked by the daemon's log: $left"
	grep -nE "region ($(echo $left | tr ' ' '|')):|lost|dump" "$log" | tail -30
	return 1
}
if [ "$patched" = 1 ]; then
	tap_check "no device region is parked any more" none_parked
fi
gone() {
	local left
	left=$(hot_blocks)
	echo "memory blocks left at or above 4 GiB: ${left:-none}"
	[ -z "$left" ]
}
tap_check "the device's memory blocks are removed" gone
tap_check "regionpmd is still running" kill -0 "$daemon_pid"
tap_check "no OOM kill" test "$(oom_kills)" = "$oom0"
echo "# MemTotal $(meminfo MemTotal) kB (with parked regions before: $mt_parked kB)"

# ---- 3. plugged again -------------------------------------------------------
mark=$(( $(wc -l < "$log") + 1 ))
tap_check "the host asks for the device's memory again" vmem_resize "$size0"
plugged() {
	vmem_wait_plugged "$size0" "$WAIT" | tee "$work/plug.txt"
	[ "${PIPESTATUS[0]}" = 0 ] || { vmem_stall_report; return 1; }
}
tap_check "the guest plugged it all within ${WAIT}s" plugged
sed 's/^/# /' "$work/plug.txt"
# The stock backend parks by offlining: a block regionpmd offlined again
# (its log says so after the replug) is where it should be too.
back_again() {
	local i id state zones bad
	for i in $(seq 1 30); do
		bad=
		while read -r id state zones; do
			[ "$state $zones" = "online Movable" ] && continue
			[ "$patched" = 0 ] && [ "$state" = offline ] &&
				tail -n +"$mark" "$log" | grep -q "^region $id: parked" && continue
			bad+="$id $state $zones; "
		done < <(hot_blocks)
		[ -n "$(hot_blocks)" ] && [ -z "$bad" ] && return 0
		sleep 1
	done
	echo "not online in ZONE_MOVABLE (or offlined by regionpmd): ${bad:-no blocks}"
	return 1
}
tap_check "the device's memory blocks are online in ZONE_MOVABLE again (or parked by regionpmd)" back_again
tap_check "regionpmd is still running" kill -0 "$daemon_pid"

# ---- 4. SIGTERM gives every parked page back --------------------------------
# (not in a tap_check subshell: only this shell can wait for the daemon)
# Bounded: a daemon that does not exit in STOP_WAIT seconds is reported
# with the guest's state (a stalled offline holds the hotplug lock the
# daemon's unpark needs) instead of hanging the test.
STOP_WAIT=60
mt_before_stop=$(meminfo MemTotal)
kill -TERM "$daemon_pid"
for i in $(seq 1 "$STOP_WAIT"); do
	kill -0 "$daemon_pid" 2>/dev/null || break
	sleep 1
done
if kill -0 "$daemon_pid" 2>/dev/null; then
	tap_fail "SIGTERM: regionpmd exits within ${STOP_WAIT}s" \
		"$(cat /proc/"$daemon_pid"/stack 2>/dev/null; vmem_stall_report)"
	tap_done
	exit 1
fi
wait "$daemon_pid"
rc=$?
daemon_pid=''
mt=$(meminfo MemTotal)
# Within 4 MiB of boot: the replugged blocks' memmap is taken from memory.
# Whether anything is parked at this moment is the policy's business: when
# the host took the device, the daemon rightly gave back the boot memory it
# had parked (MemAvailable fell), and may still be backing off.
msg="exit status $rc; MemTotal at boot $mt0 kB, with regionpmd $mt_before_stop kB, after SIGTERM $mt kB"
if [ "$rc" = 0 ] && [ "$mt" -ge $(( mt0 - 4096 )) ]; then
	tap_ok "SIGTERM: regionpmd exits 0 and every parked page comes back"
	echo "# $msg"
else
	tap_fail "SIGTERM: regionpmd exits 0 and every parked page comes back" "$msg"
fi
# The stock backend forgets blocks virtio-mem removed or the kernel
# onlined (it once counted the replugged blocks as "still offline").  Only
# it offlines blocks: on the patched kernel the line cannot appear, and
# MemTotal above says all came back.
if [ "$patched" = 0 ]; then
	tap_check "regionpmd leaves no block offline at exit" \
		bash -c '! grep "still offline at exit" "$1"' _ "$log"
fi
grep -E 'released by the kernel|no longer ours|refused|warning|error' "$log" | head -20 | sed 's/^/#   /'
tap_done
