#!/bin/bash
# Anonymous-heavy, VM-host-like workload of the benchmark (issue 9); runs
# in the guest.
#
#   vmhost.sh fill | free | hot SECS | cleanup | all [SECS]
#
# Five "guest" processes whose resident sizes grow and shrink at different
# times, plus two disk image files in the page cache.  Each process
# (Python, private anonymous mmap in 8 MiB chunks, every page written) follows the
# size in MiB written to $BENCH_STATE/vm.N.target, reports its size in
# vm.N.size, and once a second writes one byte to every page of its hot
# quarter (the first quarter of its chunks).  Sized from BENCH_MEM_KB:
#   fill  the five grow together, 2 % of memory at a time, to 16, 12, 12,
#         10 and 10 % of memory (60 %); two image files of 8 % each are
#         written in between (dd, then read back); about 76 % in use;
#   free  vm2 shrinks to 3 % (a balloon), vm4 exits (a guest shut down),
#         vm5 shrinks to 5 %, image 2 is deleted: about 32 % freed;
#   hot   SECS of the hot quarters touched every second while, at a quarter,
#         half and three quarters of the time, vm1 grows by 4 %, vm3 shrinks
#         by 6 % and vm1 shrinks back, and at 60 % vm2 grows by 3 %.
# The hot phase's measure is hot pages touched per second, summed over the
# processes (hot_result).
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
dir=$BENCH_DIR/vmhost
mkdir -p "$dir"
PEAK=(0 16 12 12 10 10)	# percent of memory, vm1..vm5
img_mib=$(pct_mib 8)

GUEST_PY='
import mmap, os, sys, time
state, n = sys.argv[1], sys.argv[2]
CH = 8 << 20
PG = 4096
chunks, touched = [], 0
tfile, sfile = "%s/vm.%s.target" % (state, n), "%s/vm.%s.size" % (state, n)
def put(name, v):
    with open(name + ".tmp", "w") as f:
        f.write("%d\n" % v)
    os.rename(name + ".tmp", name)
last = 0.0
while True:
    try:
        target = int(open(tfile).read()) << 20
    except (OSError, ValueError):
        target = len(chunks) * CH
    if target < 0:
        break
    while len(chunks) * CH < target:
        m = mmap.mmap(-1, CH, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        m[::PG] = b"\x01" * (CH // PG)
        chunks.append(m)
    while len(chunks) * CH > target + CH - 1:
        chunks.pop().close()
    put(sfile, len(chunks) * CH >> 20)
    now = time.monotonic()
    if now - last >= 1.0:
        last = now
        for m in chunks[: (len(chunks) + 3) // 4]:
            m[::PG] = b"\x02" * (CH // PG)
            touched += CH // PG
        put(sfile + ".touched", touched)
    time.sleep(0.2)
'

set_target() { echo "$2" > "$BENCH_STATE/vm.$1.target"; }
get_size() { cat "$BENCH_STATE/vm.$1.size" 2>/dev/null || echo 0; }
wait_size() { # n mib: until the process holds what it was asked (8 MiB chunks)
	local i
	for i in $(seq 1 600); do
		[ $(( $(get_size "$1") + 8 )) -gt "$2" ] && return 0
		[ -e "$BENCH_STATE/vm.$1.pid" ] || return 0
		sleep 0.2
	done
	echo "vmhost: vm$1 did not reach $2 MiB" >&2
}

start_guest() { # n
	set_target "$1" 0
	/usr/bin/python3 -c "$GUEST_PY" "$BENCH_STATE" "$1" >/dev/null 2>&1 &
	echo $! > "$BENCH_STATE/vm.$1.pid"
}
stop_guest() { # n
	local p
	p=$(cat "$BENCH_STATE/vm.$1.pid" 2>/dev/null) || return 0
	kill -KILL "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	rm -f "$BENCH_STATE/vm.$1.pid"
}

wl_fill() {
	local step pct n mib
	echo "vmhost fill: MemTotal ${mem_kib} kB, 5 guests of ${PEAK[*]:1} % of memory, 2 images of ${img_mib} MiB"
	for n in 1 2 3 4 5; do start_guest "$n"; done
	for step in 1 2 3 4 5 6 7 8; do
		pct=$((step * 2))
		for n in 1 2 3 4 5; do
			[ "$pct" -le "${PEAK[$n]}" ] || pct=${PEAK[$n]}
			mib=$(pct_mib "$pct")
			set_target "$n" "$mib"
			wait_size "$n" "$mib"
			pct=$((step * 2))
		done
		case "$step" in
		3) dd if=/dev/zero of="$dir/img.1" bs=1M count="$img_mib" conv=fsync status=none ;;
		6) dd if=/dev/zero of="$dir/img.2" bs=1M count="$img_mib" conv=fsync status=none ;;
		esac
	done
	cat "$dir"/img.* > /dev/null
	for n in 1 2 3 4 5; do echo -n "vm$n $(get_size "$n") MiB; "; done
	echo
}

wl_free() {
	set_target 2 "$(pct_mib 3)"
	stop_guest 4
	set_target 5 "$(pct_mib 5)"
	rm -f "$dir/img.2"
	wait_size 2 "$(pct_mib 3)"
	sleep 1
	sync
	echo "vmhost free: vm2 to 3 %, vm4 stopped, vm5 to 5 %, image 2 deleted"
}

touched_total() {
	local n s=0
	for n in 1 2 3 5; do s=$((s + $(cat "$BENCH_STATE/vm.$n.size.touched" 2>/dev/null || echo 0))); done
	echo "$s"
}

wl_hot() { # seconds
	local secs=$1 w0 w1 t0 el sz1 sz2 sz3 hot_kib=0 n
	sz1=$(get_size 1) sz2=$(get_size 2) sz3=$(get_size 3)
	for n in 1 2 3 5; do hot_kib=$((hot_kib + $(get_size "$n") * 1024 / 4)); done
	w0=$(touched_total) t0=$(uptime_s)
	(
		sleep "$(awk -v s="$secs" 'BEGIN { print s / 4 }')"
		set_target 1 $((sz1 + $(pct_mib 4)))
		sleep "$(awk -v s="$secs" 'BEGIN { print s / 4 }')"
		set_target 3 $((sz3 - $(pct_mib 6)))
		sleep "$(awk -v s="$secs" 'BEGIN { print s / 10 }')"
		set_target 2 $((sz2 + $(pct_mib 3)))
		sleep "$(awk -v s="$secs" 'BEGIN { print s * 3 / 20 }')"
		set_target 1 "$sz1"
	) &
	sleep "$secs"
	wait
	w1=$(touched_total) el=$(since "$t0")
	echo "vmhost hot: sizes now vm1 $(get_size 1) vm2 $(get_size 2) vm3 $(get_size 3) vm5 $(get_size 5) MiB"
	hot_result $((w1 - w0)) pages "$el" $((hot_kib * 1024))
}

wl_cleanup() {
	local n
	for n in 1 2 3 4 5; do stop_guest "$n"; done
	rm -rf "$dir"
}

workload_main "$@"
