#!/bin/bash
# make bench: the fragmenting workload (bench/workload/fragment.sh) in fresh
# VMs, one at a time, under six configurations side by side:
#   (a) stock  (b) proactive compaction  (c) naive drop_caches + compact
#   every 10 s  (d) DAMON_RECLAIM defaults  (e) allocation bias alone
#   (f) regionpmd with defaults
# and, on the stock kernel (KERNEL_VARIANT=stock, no series):
#   (g) regionpmd, stock backend  (h) the offline peer (bench/configs/)
# for each memory size in BENCH_SIZES.  Each guest (bench/guest-run.sh)
# writes one JSON; bench/aggregate.py prints the table, writes
# bench/results/<stamp>.json (+ latest.json, latest.txt) and the plot
# bench/results/<stamp>.png (+ latest.png).
#
#   BENCH_SIZES="2G 3G"   guest memory sizes (128 MiB regions: memory block);
#                         3G rather than 4G keeps the whole run under 30 min
#                         on a shared 2-core host (TCG)
#   BENCH_CONFIGS="stock proactive naive damon bias regionpmd regionpmd-stock offline-peer"
#   BENCH_HOT_SECS=30     length of the hot phase
#   BENCH_KEEP=DIR        keep the per-run JSON and console logs in DIR
#   BENCH_RELEASE_SIZES="2G 8G"  guests for the release latency (below)
#
# Then the kernel's release latency: in a fresh guest of each size,
# tests/tools/regionpm-releasebench parks every region it can and times the
# close() of its socket, which gives them all back; the line goes to
# bench/results/<stamp>-release.txt (+ latest-release.txt).
set -uo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
cd "$REGIONPM_TOP"

sizes=${BENCH_SIZES:-2G 3G}
configs=${BENCH_CONFIGS:-stock proactive naive damon bias regionpmd regionpmd-stock offline-peer}
hot=${BENCH_HOT_SECS:-30}
stamp=$(date -u +%Y%m%dT%H%M%SZ)
rundir=${BENCH_KEEP:-$(mktemp -d "${TMPDIR:-/tmp}/regionpm-bench.XXXXXX")}
mkdir -p "$rundir"
kernel=$(scripts/kernel-build.sh default) || die "kernel build failed"
stock_kernel=
t_start=$(date +%s)

echo "regionpm bench: sizes [$sizes], configurations [$configs], hot phase ${hot}s; runs in $rundir"
for size in $sizes; do
	# scratch disk: room for the files (56 % of memory) plus slack
	scratch=$(( $(numfmt --from=iec "$size") * 2 / 1048576 ))M
	for cfg in $configs; do
		append=
		[ "$cfg" = bias ] && append="regionpm.bias=1"
		t0=$(date +%s)
		printf '%-4s %-10s ... ' "$size" "$cfg"
		k=$kernel
		case "$cfg" in regionpmd-stock|offline-peer)	# the kernel without the series
			k=${stock_kernel:=$(scripts/kernel-build.sh stock)} || die "stock kernel build failed" ;;
		esac
		tests/vm/run-vm --kernel "$k" --quiet --mem "$size" --scratch "$scratch" \
			--timeout 600 ${append:+--append "$append"} \
			--out "$rundir/$size-$cfg.json" --log "$rundir/$size-$cfg.log" \
			-- bench/guest-run.sh "$cfg" "$hot" > "$rundir/$size-$cfg.out" 2>&1
		rc=$?
		printf 'exit %d, %ds; %s\n' "$rc" $(( $(date +%s) - t0 )) \
			"$(grep -m1 -o 'end: .*' "$rundir/$size-$cfg.log" 2>/dev/null)"
		[ "$rc" = 0 ] || tail -n 15 "$rundir/$size-$cfg.out" | sed 's/^/    /'
	done
done
echo "bench VM runs took $(( $(date +%s) - t_start )) s"
echo
python3 bench/aggregate.py "$rundir" "$stamp" bench/results

echo
echo "release latency (park everything parkable, time the close that gives it back):"
release_out=bench/results/$stamp-release.txt
: > "$release_out"
for size in ${BENCH_RELEASE_SIZES:-2G 8G}; do
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
