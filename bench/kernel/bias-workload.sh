#!/bin/bash
# Runs in the guest: a page-cache-heavy workload that also makes slab
# (inodes, dentries) and page tables, then counts -- from /proc/kpageflags,
# not from regionpm -- how many regions hold slab, page-table or reserved
# pages.  Those regions can never be emptied, whatever evacuation does.
#
#   bias-workload.sh [--compact-loop]   (the latter: drop caches and compact
#                                        every 10 s while the workload runs)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
judge=$top/build/tools/kpageflags-regions
scratch=/mnt/scratch
loop=0
[ "${1:-}" = --compact-loop ] && loop=1

if [ "$loop" = 1 ]; then
	( while sleep 10; do echo 3 > /proc/sys/vm/drop_caches; echo 1 > /proc/sys/vm/compact_memory; done ) &
	looper=$!
fi
mem_kib=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
# Page cache: files totalling ~70 % of memory, written and read back.
nfiles=$((mem_kib * 7 / 10 / 16384))
for i in $(seq 1 "$nfiles"); do
	dd if=/dev/zero of=$scratch/big.$i bs=1M count=16 status=none
done
# Slab: many small files (inodes, dentries, ext4 metadata) in between.
mkdir -p $scratch/small
for d in $(seq 1 40); do
	mkdir -p $scratch/small/$d
	for f in $(seq 1 500); do echo "$d/$f" > $scratch/small/$d/$f; done
done
cat $scratch/big.* > /dev/null
# Page tables and anon memory: a few processes touching memory.
stress-ng --vm 2 --vm-bytes 10% --vm-keep --timeout 15s --quiet >/dev/null 2>&1
# Free half of the page cache in scattered order.
for i in $(seq 1 2 "$nfiles"); do rm -f $scratch/big.$i; done
sync
[ "$loop" = 1 ] && kill "$looper"
sleep 2
"$judge"
