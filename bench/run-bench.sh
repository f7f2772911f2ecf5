#!/bin/bash
# make bench: the workload suite (bench/workload/*.sh) in fresh VMs, one at
# a time, under up to six configurations side by side:
#   (a) stock  (b) proactive compaction  (c) naive drop_caches + compact
#   every 10 s  (d) DAMON_RECLAIM defaults  (e) allocation bias alone
#   (f) regionpmd with defaults (started before the workload; the kernel
#   booted with regionpm.bias=1, as the README says)
# and, on the stock kernel (KERNEL_VARIANT=stock, no series):
#   (h) regionpmd, stock backend  (i) the offline peer (bench/configs/)
# for each workload and memory size.  Each guest (bench/guest-run.sh) writes
# one JSON; bench/aggregate.py prints one table per workload x size,
# writes bench/results/<stamp>.json (+ latest.json, latest.txt) and the plot
# bench/results/<stamp>.png (+ latest.png).
#
#   BENCH_WORKLOADS="fragment fileserver database vmhost"
#   BENCH_SIZES="2G 8G"   guest memory sizes (128 MiB regions: memory block;
#                         8G = 64 regions)
#   BENCH_CONFIGS="stock proactive naive damon bias regionpmd regionpmd-stock
#                 offline-peer"  (also: movable = regionpmd with movablecore=50% and regionpm.bottom_up=1,
#                         (g), not in the default set)
#   BENCH_HOT_SECS=125    the hot phase ends this long after the frees
#                         (snapshots at 30, 60 and 120 s need more than 120)
#   BENCH_KEEP=DIR        keep the per-run JSON and console logs in DIR
#   REGIONPM_BENCH_TRACE=1  record per sample each region's slab/page-table
#                         and free pages (trace_regions in each run's JSON)
#   BENCH_RELEASE_SIZES="2G 8G"  guests for the release latency (below);
#                         "" skips it
#
# Then the kernel's release latency: in a fresh guest of each size,
# tests/tools/regionpm-releasebench parks every region it can and times the
# close() of its socket, which gives them all back; the line goes to
# bench/results/<stamp>-release.txt (+ latest-release.txt).
set -uo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
cd "$REGIONPM_TOP"

workloads=${BENCH_WORKLOADS-fragment fileserver database vmhost}
sizes=${BENCH_SIZES-2G 8G}
configs=${BENCH_CONFIGS-stock proactive naive damon bias regionpmd regionpmd-stock offline-peer}
hot=${BENCH_HOT_SECS:-125}
stamp=$(date -u +%Y%m%dT%H%M%SZ)
rundir=${BENCH_KEEP:-$(mktemp -d "${TMPDIR:-/tmp}/regionpm-bench.XXXXXX")}
mkdir -p "$rundir"
# The guest runs our build output (the judge, the daemon, the workloads'
# helpers): build it when run directly rather than through make bench,
# or every snapshot in a fresh clone fails.
make -s --no-print-directory all >&2 || die "building the daemon and tools failed"
kernel=$(scripts/kernel-build.sh default) || die "kernel build failed"
stock_kernel=
t_start=$(date +%s)

# Kernel command line of a configuration (one arm per configuration that
# needs one; the rest of a configuration lives in bench/guest-run.sh).
cfg_append() {
	case "$1" in
	# regionpmd as the README sets it up: the bias from boot, so the
	# kernel's early allocations stay with the memmap (regionpm(7))
	bias|regionpmd|demo) echo regionpm.bias=1 ;;
	# half of memory in ZONE_MOVABLE, as virtio-mem/CXL/auto-movable set it up
	movable) echo regionpm.bias=1 regionpm.bottom_up=1 movablecore=50% ;;
	esac
}

echo "regionpm bench: workloads [$workloads], sizes [$sizes], configurations [$configs], hot phase until ${hot}s after the frees; runs in $rundir"
for size in $sizes; do
	bytes=$(numfmt --from=iec "$size")
	# scratch disk: room for the files (at most 56 % of memory) plus slack
	scratch=$(( bytes * 2 / 1048576 ))M
	# TCG: about 4 min per GiB at worst for fill, plus the hot phase
	timeout=$(( 600 + bytes / 1073741824 * 240 ))
	for w in $workloads; do
		for cfg in $configs; do
			append=$(cfg_append "$cfg")
			name=$w-$size-$cfg
			t0=$(date +%s)
			printf '%-10s %-4s %-10s ... ' "$w" "$size" "$cfg"
			k=$kernel
			case "$cfg" in regionpmd-stock|offline-peer)	# the kernel without the series
				k=${stock_kernel:=$(scripts/kernel-build.sh stock)} || die "stock kernel build failed" ;;
			esac
			tests/vm/run-vm --kernel "$k" --quiet --mem "$size" --scratch "$scratch" \
				--timeout "$timeout" ${append:+--append "$append"} \
				--out "$rundir/$name.json" --log "$rundir/$name.log" \
				-- bench/guest-run.sh "$cfg" "$hot" "$w" > "$rundir/$name.out" 2>&1
			rc=$?
			printf 'exit %d, %ds; %s\n' "$rc" $(( $(date +%s) - t0 )) \
				"$(tr -d '\r' < "$rundir/$name.log" 2>/dev/null | grep -m1 -o 'end: .*')"
			[ "$rc" = 0 ] || tail -n 15 "$rundir/$name.out" | sed 's/^/    /'
		done
	done
done
echo "bench VM runs took $(( $(date +%s) - t_start )) s"
echo
python3 bench/aggregate.py "$rundir" "$stamp" bench/results

release_sizes=${BENCH_RELEASE_SIZES-2G 8G}
[ -n "$release_sizes" ] || { echo "bench total $(( $(date +%s) - t_start )) s"; exit 0; }
echo
echo "release latency (park everything parkable, time the close that gives it back):"
release_out=bench/results/$stamp-release.txt
: > "$release_out"
for size in $release_sizes; do
	tests/vm/run-vm --kernel "$kernel" --quiet --mem "$size" --scratch 0 --timeout 600 \
		--log "$rundir/$size-release.log" -- build/tools/regionpm-releasebench \
		> "$rundir/$size-release.out" 2>&1
	rc=$?
	# the guest's output is in the console log (run-vm --quiet shows none)
	line=$(tr -d '\r' < "$rundir/$size-release.log" | grep -m1 '^regions_parked')
	printf '%-4s exit %d: %s\n' "$size" "$rc" "${line:-no result}" | tee -a "$release_out"
done
cp "$release_out" bench/results/latest-release.txt
echo "bench total $(( $(date +%s) - t_start )) s"
