#!/bin/bash
# The layout of suite daemon-dimm-memmap, checked before its tests run on it
# (TAP): a cold-plugged DIMM (tests/vm/run-vm --dimm) that ACPI memory
# hotplug adds at boot, onlined into ZONE_MOVABLE (memhp_default_state=
# online_movable), with memory_hotplug.memmap_on_memory=1: each of its
# memory blocks holds its own memmap, as hotpluggable DIMMs and dax/kmem
# (CXL) place it with that setting.  Those regions can never be emptied:
# the judge must count the memmap as reserved, and regionpmctl check must
# say what the setting costs.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/tap.sh"

MEM=/sys/devices/system/memory
tap_check "memory_hotplug.memmap_on_memory is on" \
	grep -qx Y /sys/module/memory_hotplug/parameters/memmap_on_memory

# QEMU places DIMMs from 4 GiB up; the boot memory here is below.
block_bytes=$((16#$(cat "$MEM/block_size_bytes")))
block_pages=$((block_bytes / 4096))
first_hot=$(( (4 << 30) / block_bytes ))
hot=$(for d in "$MEM"/memory*; do
	id=${d##*memory}
	[ "$id" -ge "$first_hot" ] && echo "$id $(cat "$d/state") $(cat "$d/valid_zones")"
done)
n_hot=$(grep -c . <<< "$hot")
echo "# $n_hot hotplugged blocks of $((block_bytes >> 20)) MiB"
onlined_movable() {
	[ "$n_hot" -gt 0 ] || { echo "no memory block at or above 4 GiB"; return 1; }
	! grep -v ' online Movable$' <<< "$hot"
}
tap_check "the DIMM's memory blocks are online in ZONE_MOVABLE" onlined_movable

# x86-64: a 64-byte struct page per 4 KiB page, 1/64 of the block.
judge_counts_memmap() {
	local out want=$((block_pages / 64)) bad=0 id
	out=$("$top/build/tools/kpageflags-regions" -s "$block_bytes") || return 1
	for id in $(cut -d' ' -f1 <<< "$hot"); do
		awk -v id="$id" -v want="$want" '$1 == id { found = 1
			if ($7 < want) { print "region " id ": " $7 " reserved, want " want; exit 1 } }
			END { if (!found) { print "region " id " missing"; exit 1 } }' <<< "$out" || bad=1
	done
	[ "$bad" = 0 ] || echo "$out"
	[ "$bad" = 0 ]
}
tap_check "the judge counts each hotplugged block's own memmap as reserved" judge_counts_memmap
tap_check "regionpmctl check says the hotplugged memory is never parked" \
	bash -c "'$top/build/regionpmctl' check 2>&1 | tee /dev/stderr | grep -q 'memmap_on_memory is on'"
tap_done
