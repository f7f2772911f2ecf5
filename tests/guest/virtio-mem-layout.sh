#!/bin/bash
# The layout of suite daemon-virtio-mem, checked before its tests run on it
# (TAP): memory hotplugged by a virtio-mem device (tests/vm/run-vm
# --virtio-mem), onlined by the kernel itself with memhp_default_state=online
# and memory_hotplug.online_policy=auto-movable, as cloud VMs (virtio-mem)
# and CXL expanders get memory.  The device's memory blocks must be online
# and in ZONE_MOVABLE, and regionpm must count their pages: a region table
# sized from the boot memory alone would not see them.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/tap.sh"
. "$top/tests/lib/mem.sh"
. "$top/tests/lib/hotplug.sh"


device() {
	ls -d /sys/bus/virtio/drivers/virtio_mem/virtio* 2>/dev/null | head -1
}
tap_check "a virtio-mem device is bound to its driver" test -n "$(device)"

block_bytes=$hotplug_block_bytes
hot=$(hot_blocks)
n_hot=$(grep -c . <<< "$hot")
echo "# $n_hot hotplugged blocks of $((block_bytes >> 20)) MiB; MemTotal $(meminfo MemTotal) kB"
tap_check "the device's memory blocks are online in ZONE_MOVABLE (auto-movable)" onlined_movable

# ZONE_MOVABLE's managed pages are the hotplugged blocks' (no movablecore=).
movable_managed() {
	local pages want
	pages=$(awk '/^Node/ { mov = ($4 == "Movable") } mov && $1 == "managed" { s += $2 }
		     END { print s + 0 }' /proc/zoneinfo)
	want=$(( n_hot * block_bytes / 4096 ))
	echo "ZONE_MOVABLE managed $pages pages, hotplugged blocks $want pages"
	[ "$pages" -gt 0 ] && [ "$pages" -le "$want" ] && [ "$pages" -ge $(( want * 9 / 10 )) ]
}
tap_check "ZONE_MOVABLE holds the hotplugged memory" movable_managed
tap_check "regionpmctl check reports the memory in ZONE_MOVABLE" \
	bash -c "'$top/build/regionpmctl' check 2>&1 | tee /dev/stderr | grep -qi movable"
tap_done
