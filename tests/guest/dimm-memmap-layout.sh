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
. "$top/tests/lib/hotplug.sh"

tap_check "memory_hotplug.memmap_on_memory is on" \
	grep -qx Y /sys/module/memory_hotplug/parameters/memmap_on_memory

block_bytes=$hotplug_block_bytes
block_pages=$((block_bytes / 4096))
hot=$(hot_blocks)
echo "# $(grep -c . <<< "$hot") hotplugged blocks of $((block_bytes >> 20)) MiB"
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
