#!/bin/bash
# Database-like workload of the benchmark (issue 9); runs in the guest.
#
#   database.sh fill | free | hot SECS | cleanup | all [SECS]
#
# A large data file in the page cache with a hot subset read at random by
# fio, plus anonymous buffers.  Sized from BENCH_MEM_KB (bench/lib.sh):
#   fill  the data file (1/2 of memory) written in four quarters with dd,
#         interleaved with two temporary "sort spill" files of 6 % each, a
#         cold buffer pool of 12 % and a sort buffer of 8 % (stress-ng
#         --vm-keep, stopped once populated), then the data file read back
#         (cached, clean); about 88 % of memory in use;
#   free  the spill files deleted and the sort buffer freed (20 % of
#         memory, scattered);
#   hot   fio random 4 KiB reads (psync, buffered, invalidate=0) over the
#         hot subset, the 1/8 of the data file in its middle, for SECS; the
#         rest of the file stays cached and untouched.
# The hot phase's measure is fio's read bytes per second (hot_result).
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
dir=$BENCH_DIR/db
mkdir -p "$dir"
quarter_mib=$((mem_kib / 8 / 1024))
data_mib=$((4 * quarter_mib))
spill_mib=$(pct_mib 6)

quarter() { # n (0..3)
	dd if=/dev/zero of="$dir/data" bs=1M seek=$(($1 * quarter_mib)) count="$quarter_mib" \
		conv=notrunc,fsync status=none
}
spill() { # n
	dd if=/dev/zero of="$dir/spill.$1" bs=1M count="$spill_mib" conv=fsync status=none
}

wl_fill() {
	echo "database fill: MemTotal ${mem_kib} kB, data ${data_mib} MiB, spill 2 x ${spill_mib} MiB, anon 12 % + 8 %"
	quarter 0 || return 1
	spill 1
	holder pool 12
	wait_populated pool 12
	kill -STOP $(holder_pids pool) 2>/dev/null
	quarter 1
	holder sort 8
	wait_populated sort 8
	kill -STOP $(holder_pids sort) 2>/dev/null
	spill 2
	quarter 2
	quarter 3
	cat "$dir/data" > /dev/null
}

wl_free() {
	rm -f "$dir"/spill.*
	holder_kill sort
	sync
	sleep 1
	echo "database free: spill files deleted, sort buffer freed"
}

wl_hot() { # seconds
	local secs=$1 hot_mib=$((data_mib / 8)) out=$BENCH_STATE/fio.json
	fio --name=hot --filename="$dir/data" --rw=randread --bs=4k --ioengine=psync \
		--offset=$((data_mib / 2 - hot_mib / 2))m --size="${hot_mib}m" \
		--invalidate=0 --fadvise_hint=0 --randrepeat=1 --thread \
		--time_based --runtime="$secs" --output-format=json --output="$out" >/dev/null
	read -r bytes el < <(/usr/bin/python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]["read"]
print(j["io_bytes"], j["runtime"] / 1000.0)' "$out")
	echo "database hot: fio read ${bytes:-0} bytes in ${el:-0} s over a ${hot_mib} MiB hot set"
	hot_result "${bytes:-0}" bytes "${el:-0}" $((hot_mib * 1048576))
}

wl_cleanup() {
	holders_cleanup
	rm -rf "$dir"
}

workload_main "$@"
