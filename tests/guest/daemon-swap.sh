#!/bin/bash
# regionpmd on a machine that swaps, keeps data in tmpfs and has a hugetlb
# pool, in the test VM (TAP).  The other daemon tests fill memory with page
# cache on ext4 and anonymous memory that fits; this one covers what they
# do not:
#   * anonymous memory beyond RAM, so part of it is swapped out and part of
#     what stays is in the swap cache (a swap file on the scratch disk);
#   * shmem: files in a tmpfs, which no drop may touch (they have no
#     backing file: dropped, they are lost);
#   * a hugetlb pool, half of it mapped by the holder, half free: free pool
#     pages are neither free pages nor movable ones, and parking a region
#     that holds them must move them, not shrink the pool;
#   * memory pressure (the swapping) right before the daemon starts.
# Then, as an operator would see it: regionpmd empties and parks regions up
# to RATIO % of the bound that keeps regions holding slab, page tables or
# reserved pages (bound-tight), or of the one its headroom allows if that
# is lower (see kept_free), within WAIT seconds; the pool keeps its size
# and free count; no OOM kill; every anonymous page (swapped or not), tmpfs
# page and hugetlb page reads back its pattern; SIGTERM gives every parked
# page back.
#
#   REGIONPMD=path        daemon binary (default build/regionpmd)
#   REGIONPM_DAEMON_WAIT  seconds allowed to reach the bound (default 120:
#                         the daemon waits out the swapping's pressure first)
#   REGIONPM_DAEMON_RATIO percent of the target to reach (default 90)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/tap.sh"
. "$top/tests/lib/mem.sh"

RPMD=${REGIONPMD:-$top/build/regionpmd}
JUDGE=$top/build/tools/kpageflags-regions
WAIT=${REGIONPM_DAEMON_WAIT:-120}
RATIO=${REGIONPM_DAEMON_RATIO:-90}
scratch=/mnt/scratch
work=$(mktemp -d "${TMPDIR:-/tmp}/daemon-swap.XXXXXX")
log=$work/regionpmd.log
shm=/dev/shm/regionpm-swap-test
holder_pid='' daemon_pid='' swapfile=$scratch/regionpm-swap hugepages0=''

cleanup() {
	[ -n "$daemon_pid" ] && kill -KILL "$daemon_pid" 2>/dev/null
	[ -n "$holder_pid" ] && kill -KILL "$holder_pid" 2>/dev/null
	wait 2>/dev/null
	swapoff "$swapfile" 2>/dev/null
	rm -f "$swapfile"
	rm -rf "$shm" "$work"
	[ -n "$hugepages0" ] && echo "$hugepages0" > /proc/sys/vm/nr_hugepages
}
trap cleanup EXIT

# The free pages the daemon must leave: MemAvailable stays above its park
# limit ("parking only above N MiB" in its log: HeadroomPercent= plus
# HysteresisPercent=).  MemAvailable is MemFree less the kernel's reserve
# plus what reclaim can free, so MemFree must be the limit less
# (MemAvailable - MemFree).  Anonymous memory and tmpfs are not
# reclaimable (swapping is not what the headroom is for): in this workload
# the limit is mostly free memory, two regions of 16 at 2 GiB.
kept_free() {
	local limit_mib need
	limit_mib=$(sed -n 's/.*parking only above \([0-9]*\) MiB.*/\1/p' "$log" 2>/dev/null | tail -1)
	need=$(( ${limit_mib:-0} * 1024 - ($(meminfo MemAvailable) - $(meminfo MemFree)) ))
	[ "$need" -lt 0 ] && need=0
	echo $(( need * 1024 / $(getconf PAGESIZE) ))
}
# "... bound-tight N ... bound-kept N": bound-kept is the simple bound
# with the free pages the daemon must leave counted as used.
judge_table() { "$JUDGE" -k "$(kept_free)"; }
judge() { judge_table | tail -1; }
# Free hugetlb pool pages leave a region only into a whole free pageblock
# elsewhere (the kernel replaces each with a fresh huge page while it
# takes the region).  After the swap storm, slab and page tables sit in
# most pageblocks of the regions that stay, and there may be none: one
# run in four, the 16 free pool pages (8,192 pages) ended in two regions
# whose parks were refused ("still in use"), one short of bound-tight,
# which counts them as pages any free memory can take.  A region the
# daemon tried to park (its log says refused) that holds nothing but huge
# pages counts as kept, beyond the regions its huge pages would fill.
hugetlb_kept() { # judge table
	local refused region_pages
	region_pages=$(( 0x$(cat /sys/devices/system/memory/block_size_bytes) / $(getconf PAGESIZE) ))
	refused=$(sed -nE 's/.*region ([0-9]+): park[^:]* refused.*/\1/p' "$log" 2>/dev/null | sort -un)
	# columns: region present free unmovable kernel used reserved huge
	awk -v refused=" $(echo $refused) " -v rp="$region_pages" '
		$1 ~ /^[0-9]+$/ && index(refused, " " $1 " ") && $8 > 0 && $3 + $8 == $2 {
			only++; huge += $8 }
		END { k = only - int((huge + rp - 1) / rp); print (k > 0 ? k : 0) }' <<< "$1"
}
# The target: the bound that keeps regions holding slab, page tables or
# reserved pages, or the one the headroom allows, whichever is lower; less
# hugetlb_kept.
target() { # judge table
	local tight kept t j
	j=$(tail -1 <<< "$1")
	tight=$(field bound-tight <<< "$j") kept=$(field bound-kept <<< "$j")
	t=$(( tight < kept ? tight : kept ))
	echo $(( t - $(hugetlb_kept "$1") ))
}

if [ ! -x "$RPMD" ] || [ ! -d /sys/module/regionpm ]; then
	tap_fail "regionpmd at $RPMD and a kernel with regionpm" "$(uname -r)"
	tap_done
	exit 1
fi
if ! mountpoint -q "$scratch" || ! grep -q '^Hugepagesize:' /proc/meminfo; then
	tap_skip "regionpmd with swap, tmpfs and a hugetlb pool" \
		"needs the scratch disk at $scratch and hugetlb pages"
	tap_done
	exit 0
fi
echo 0 > /proc/sys/vm/compaction_proactiveness 2>/dev/null
mem_total0=$(meminfo MemTotal)
oom0=$(vmstat oom_kill)
hugepages0=$(cat /proc/sys/vm/nr_hugepages)

swap_on() {
	dd if=/dev/zero of="$swapfile" bs=1M count=$(( mem_total0 / 1024 / 2 )) status=none &&
		chmod 600 "$swapfile" && mkswap -q "$swapfile" && swapon "$swapfile" &&
		grep -E '^(SwapTotal|SwapFree)' /proc/meminfo | tr -s ' ' | tr '\n' ' '
}
tap_check "a swap file of half of memory on the scratch disk" swap_on

# The holder: anonymous memory in 8 MiB chunks, 110 % of MemTotal (so
# that it swaps), tmpfs files of 8 MiB written between the chunks (10 %),
# every page with its own pattern, and the hugetlb pages it is given.
# Then three chunks of four and every other tmpfs file freed.  It waits
# for "check", then reads every page back (swapped ones come in).
cat > "$work/holder.py" <<'EOF'
import mmap, os, sys, time
CH, PG, HP = 8 << 20, 4096, 2 << 20
work, shm, mem_kb, huge_n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
os.makedirs(shm, exist_ok=True)
n_anon, n_shm = mem_kb * 11 // 10 // 8192, mem_kb // 10 // 8192
def tag(kind, i, p):
    return (kind << 56 | i << 24 | p // PG).to_bytes(8, "little")
def fill(buf, kind, i):
    for p in range(0, CH, PG):
        buf[p:p + 8] = tag(kind, i, p)
def bad(buf, kind, i):
    return sum(buf[p:p + 8] != tag(kind, i, p) for p in range(0, CH, PG))
anon, files = {}, []
for i in range(n_anon):
    m = mmap.mmap(-1, CH, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    fill(m, 1, i)
    anon[i] = m
    if i % (n_anon // n_shm + 1) == 0 and len(files) < n_shm:
        b = bytearray(CH)
        fill(b, 2, len(files))
        path = "%s/f%d" % (shm, len(files))
        with open(path, "wb") as f:
            f.write(b)
        files.append(path)
MAP_HUGETLB = 0x40000
huge = None
if huge_n:
    huge = mmap.mmap(-1, huge_n * HP, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_HUGETLB)
    for j in range(huge_n):
        huge[j * HP:(j + 1) * HP] = bytes([0x40 + j % 64]) * HP
for i in list(anon):
    if i % 4:
        anon.pop(i).close()
for k, path in enumerate(files):
    if k % 2:
        os.unlink(path)
print("holder: %d MiB anon written, %d MiB kept; %d MiB tmpfs written, %d MiB kept; "
      "%d hugetlb pages mapped" % (n_anon * 8, len(anon) * 8, len(files) * 8,
                                   (len(files) + 1) // 2 * 8, huge_n), flush=True)
open(work + "/ready", "w").close()
while not os.path.exists(work + "/check"):
    time.sleep(0.5)
nbad = sum(bad(m, 1, i) for i, m in anon.items())
fbad = 0
for k, path in enumerate(files):
    if k % 2 == 0:
        with open(path, "rb") as f:
            fbad += bad(f.read(), 2, k)
hbad = sum(huge[j * HP:(j + 1) * HP] != bytes([0x40 + j % 64]) * HP
           for j in range(huge_n)) if huge else 0
print("check: %d bad anon pages, %d bad tmpfs pages, %d bad huge pages" % (nbad, fbad, hbad),
      flush=True)
sys.exit(1 if nbad or fbad or hbad else 0)
EOF

# In this shell, not in tap_check's subshell: the holder is waited for below.
workload() {
	local pool want
	# a pool of 1/32 of memory, grown before the holder, so that it lies
	# where the allocator put it; half of it mapped
	want=$(( mem_total0 / 32 / $(meminfo Hugepagesize) ))
	echo $(( hugepages0 + want )) > /proc/sys/vm/nr_hugepages
	pool=$(( $(meminfo HugePages_Total) - hugepages0 ))
	echo "hugetlb pool: $pool of $want pages"
	python3 "$work/holder.py" "$work" "$shm" "$mem_total0" $(( pool / 2 )) > "$work/holder.out" 2>&1 &
	holder_pid=$!
	for _ in $(seq 1 900); do
		[ -e "$work/ready" ] && break
		kill -0 "$holder_pid" 2>/dev/null || break
		sleep 1
	done
	cat "$work/holder.out"
	grep -E '^(MemFree|SwapFree|SwapCached|Shmem|HugePages_Total|HugePages_Free):' /proc/meminfo |
		tr -s ' ' | tr '\n' ' '
	echo
	[ -e "$work/ready" ]
}
desc="workload: anon beyond RAM (swapping), tmpfs files, a hugetlb pool half mapped; then frees"
if workload > "$work/workload.out" 2>&1; then
	tap_ok "$desc"
	sed 's/^/# /' "$work/workload.out"
else
	tap_fail "$desc" "$(cat "$work/workload.out")"
fi
huge_total=$(meminfo HugePages_Total) huge_free=$(meminfo HugePages_Free)
echo "# before regionpmd: $(judge); swap used $(( $(meminfo SwapTotal) - $(meminfo SwapFree) )) kB"

"$RPMD" -v > "$log" 2>&1 &
daemon_pid=$!
t0=$(date +%s) reached='' empty=0 bound=0
while [ $(( $(date +%s) - t0 + 5 )) -le "$WAIT" ]; do
	sleep 5
	kill -0 "$daemon_pid" 2>/dev/null || break
	table=$(judge_table)	# one walk of /proc/kpageflags per sample
	j=$(tail -1 <<< "$table")
	empty=$(field empty <<< "$j") bound=$(target "$table")
	echo "# t=$(( $(date +%s) - t0 ))s: $j; target $bound; MemTotal $(meminfo MemTotal) kB; $(head -1 /proc/pressure/memory)"
	if [ -z "$reached" ] && [ "$bound" -gt 0 ] && [ $(( empty * 100 )) -ge $(( bound * RATIO )) ]; then
		reached=$(( $(date +%s) - t0 ))
	fi
done
mem_parked=$(meminfo MemTotal)
echo "# refused regions of free pool pages alone, beyond the regions those fill: $(hugetlb_kept "$(judge_table)")"
grep -E 'refused|failed|warning|stuck|obstacle' "$log" | head -20 | sed 's/^/#   /'
tap_check "regionpmd is running" kill -0 "$daemon_pid"
tap_check "regionpmd parked regions (MemTotal $mem_total0 -> $mem_parked kB)" \
	test "$mem_parked" -lt "$mem_total0"
if [ -n "$reached" ] && [ $(( empty * 100 )) -ge $(( bound * RATIO )) ]; then
	tap_ok "empty regions $empty >= $RATIO % of the target $bound (first reached after ${reached}s of $WAIT)"
else
	tap_fail "empty regions >= $RATIO % of the target within ${WAIT}s" \
		"at the end: $empty empty, bound $bound
$(grep -E 'pass [0-9]+ at|PSI|released|pause' "$log" | head -60)
judge (kpageflags) per region:
$("$JUDGE")"
fi
pool_kept() {
	echo "HugePages_Total $huge_total -> $(meminfo HugePages_Total)," \
	     "HugePages_Free $huge_free -> $(meminfo HugePages_Free)"
	[ "$(meminfo HugePages_Total)" = "$huge_total" ] && [ "$(meminfo HugePages_Free)" = "$huge_free" ]
}
tap_check "the hugetlb pool keeps its size and its free pages" pool_kept
tap_check "no OOM kill" test "$(vmstat oom_kill)" = "$oom0"

# The holder and the daemon are this shell's children: waited for here.
touch "$work/check"
wait "$holder_pid"
rc=$? holder_pid=''
desc="every anonymous (swapped or not), tmpfs and hugetlb page reads back its pattern"
if [ "$rc" = 0 ]; then
	tap_ok "$desc"
	echo "# $(tail -1 "$work/holder.out")"
else
	tap_fail "$desc" "holder exit $rc: $(tail -3 "$work/holder.out")"
fi
kill -TERM "$daemon_pid"
wait "$daemon_pid"
rc=$? daemon_pid=''
tap_check "SIGTERM: exit 0 and every parked page back (exit $rc, MemTotal $(meminfo MemTotal) of $mem_total0 kB)" \
	test "$rc" = 0 -a "$(meminfo MemTotal)" = "$mem_total0"
tap_done
