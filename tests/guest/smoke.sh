#!/bin/bash
# Smoke test of the test VM itself: our kernel, the features every later
# test relies on, and real page cache on the scratch disk.
. "$(dirname "$0")/../lib/tap.sh"

kernel_is_ours() { case "$(uname -r)" in *-regionpm*) return 0 ;; *) uname -r; return 1 ;; esac; }
tap_check "guest runs the regionpm kernel ($(uname -r))" kernel_is_ours
# Counting free pages per region costs the allocator a little: it starts
# with the first request to the family, not at boot (issue 10).  This runs
# first in the guest, before anything could have asked.
track_param=/sys/module/regionpm/parameters/track
counting_starts_on_first_request() {
	local before after
	before=$(cat "$track_param") || return 1
	"$(dirname "$0")"/../../build/tools/regionpm-dumpbench 1 > /dev/null || return 1
	after=$(cat "$track_param")
	echo "track before a request: $before, after a dump: $after"
	[ "$before" = N ] && [ "$after" = Y ] &&
		dmesg | grep -q 'regionpm: counting free pages per region (netlink)' &&
		! echo 0 > "$track_param" 2> /dev/null
}
tap_check "per-region counting starts with the first netlink request" \
	counting_starts_on_first_request
tap_check "PSI memory pressure file is readable" grep -q '^some avg10=' /proc/pressure/memory
tap_check "idle page tracking bitmap exists" test -e /sys/kernel/mm/page_idle/bitmap
tap_check "/proc/kpageflags and /proc/kpagecgroup exist" test -r /proc/kpageflags -a -r /proc/kpagecgroup

memory_blocks() {
	local size n
	size=$(cat /sys/devices/system/memory/block_size_bytes) || return 1
	n=$(ls -d /sys/devices/system/memory/memory[0-9]* | wc -l)
	echo "block size 0x$size, $n blocks"
	[ "$n" -ge 2 ] && [ -w /sys/devices/system/memory/memory1/online ] 
}
tap_check "memory blocks are present and can be offlined" memory_blocks
tap_check "cgroup v2 with the memory controller" \
	sh -c 'mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup; grep -qw memory /sys/fs/cgroup/cgroup.controllers'
tap_check "DAMON sysfs interface and DAMON_RECLAIM exist" \
	test -d /sys/kernel/mm/damon/admin -a -d /sys/module/damon_reclaim
tap_check "scratch disk is ext4 on virtio-blk" \
	sh -c 'findmnt -n -o SOURCE,FSTYPE /mnt/scratch | grep -qx "/dev/vda ext4"'

cached_kib() { awk '$1 == "Cached:" { print $2 }' /proc/meminfo; }
page_cache_is_counted() {
	local f=/mnt/scratch/smoke.dat before after
	dd if=/dev/urandom of="$f" bs=1M count=64 status=none || return 1
	sync
	echo 3 > /proc/sys/vm/drop_caches
	before=$(cached_kib)
	cat "$f" > /dev/null
	after=$(cached_kib)
	echo "Cached: $before kB before reading 64 MiB, $after kB after"
	rm -f "$f"
	[ $((after - before)) -ge $((60 * 1024)) ]
}
tap_check "a file read from the scratch disk is counted as page cache" page_cache_is_counted
tap_done
