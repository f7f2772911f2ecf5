# Hotplugged memory as the guest sees it, for the layout checks of the
# suites that boot with tests/vm/run-vm --dimm or --virtio-mem.  Source it
# after tap.sh.  QEMU places DIMM and virtio-mem device memory from 4 GiB
# up; run-vm keeps the boot memory below, so every memory block at or above
# 4 GiB is hotplugged.

HOTPLUG_MEM=${HOTPLUG_MEM:-/sys/devices/system/memory}
hotplug_block_bytes=$((16#$(cat "$HOTPLUG_MEM/block_size_bytes")))
hotplug_first_block=$(( (4 << 30) / hotplug_block_bytes ))

# "id state zones" for each hotplugged memory block, one per line.
hot_blocks() {
	local d id
	for d in "$HOTPLUG_MEM"/memory*; do
		id=${d##*memory}
		[ "$id" -ge "$hotplug_first_block" ] &&
			echo "$id $(cat "$d/state") $(cat "$d/valid_zones")"
	done
}

# True when there is hotplugged memory and all of it is online in
# ZONE_MOVABLE; prints the blocks that are not.
onlined_movable() {
	local hot
	hot=$(hot_blocks)
	[ -n "$hot" ] || { echo "no memory block at or above 4 GiB"; return 1; }
	! grep -v ' online Movable$' <<< "$hot"
}
