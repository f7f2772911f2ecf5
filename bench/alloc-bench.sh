#!/bin/bash
# The allocator's cost on the stock kernel (the same source without the
# series), and on the patched one with regionpm disabled at boot, as booted
# (counting not started: no request to the family yet), counting from boot,
# and with the bias on: issue 10's "no cost when off" in numbers.  tests/tools/allocbench runs in a fresh
# guest per configuration; the configurations take turns, BENCH_ALLOC_REPEAT
# times, so that a noisy spell of the shared host hits all of them alike.
# The guest's clock counts instructions by default (QEMU -icount shift=0:
# one virtual ns per guest instruction), so the figures are the guest
# instructions each page costs, whatever else the host runs (a
# configuration's runs agree within 1 %, boot to boot); wall-clock time
# under TCG on a shared host varied by 12-40 % and could not resolve the
# 1-2 % targets.  Instructions are not cycles: cache
# misses, memory latency and real lock contention are not modelled (QEMU
# runs the vCPUs round robin under icount), so this is the cost of the code
# the series adds, not a hardware measurement.
# Prints each configuration's median ns/page (order-0 and THP series) and
# parallel page rate, and the ratio against "stock" (else the first
# configuration) measured in the same run;
# the lines also go to bench/results/<stamp>-alloc.txt (+ latest-alloc.txt).
#
#   BENCH_ALLOC_CONFIGS="stock off idle tracking bias"  (stock: KERNEL_VARIANT=stock build)
#   BENCH_ALLOC_REPEAT=3   turns per configuration
#   BENCH_ALLOC_MIB=128 BENCH_ALLOC_ROUNDS=10   per guest run (about a minute under TCG)
#   BENCH_ALLOC_ICOUNT=0   icount shift; empty: wall-clock time (still TCG)
set -uo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
cd "$REGIONPM_TOP"

configs=${BENCH_ALLOC_CONFIGS:-stock off idle tracking bias}
repeat=${BENCH_ALLOC_REPEAT:-3}
mib=${BENCH_ALLOC_MIB:-128}
rounds=${BENCH_ALLOC_ROUNDS:-10}
icount=${BENCH_ALLOC_ICOUNT-0}
stamp=${BENCH_STAMP:-$(date -u +%Y%m%dT%H%M%SZ)}
out=$(mktemp -d "${TMPDIR:-/tmp}/regionpm-allocbench.XXXXXX")
kernel=$(scripts/kernel-build.sh default) || die "kernel build failed"
stock=
case " $configs " in
*" stock "*)
	if ! stock=$(scripts/kernel-build.sh stock 2>/dev/null); then
		echo "alloc bench: no stock kernel variant here; skipping 'stock'"
		configs=$(echo " $configs " | sed 's/ stock / /')
		stock=
	fi ;;
esac

for turn in $(seq "$repeat"); do
	for cfg in $configs; do
		k=$kernel append=
		case "$cfg" in
		off) append="regionpm.enable=0" ;;
		idle) ;;
		tracking) append="regionpm.track=1" ;;
		bias) append="regionpm.bias=1" ;;
		stock) k=$stock ;;
		*) die "unknown allocator bench configuration '$cfg'" ;;
		esac
		# the result travels through the share (--out); --quiet hides the console
		tests/vm/run-vm --kernel "$k" --quiet --mem 2G --scratch 0 --timeout 600 \
			${icount:+--icount "$icount"} ${append:+--append "$append"} --out "$out/$cfg.$turn.log" \
			--log "$out/$cfg.$turn.console" \
			-- sh -c "build/tools/allocbench $mib $rounds > \"\$REGIONPM_VM_OUT\" 2>&1" \
			> /dev/null 2>&1 ||
			{ echo "alloc bench: $cfg turn $turn failed:"; tail -5 "$out/$cfg.$turn.console"; }
		grep -h '^allocbench' "$out/$cfg.$turn.log" 2>/dev/null | sed "s/^/  $cfg: /"
	done
done

# median of the per-run medians, per configuration and series
python3 - "$out" "$configs" "$icount" <<'PY' | tee "bench/results/$stamp-alloc.txt"
import re, statistics, sys, glob, os
out, configs, icount = sys.argv[1], sys.argv[2].split(), sys.argv[3]
series = {}
for cfg in configs:
    for f in sorted(glob.glob(os.path.join(out, cfg + ".*.log"))):
        for line in open(f, errors="replace"):
            m = re.match(r"allocbench (\S+): median ([\d.]+) ns/page", line)
            if m:
                series.setdefault((cfg, m.group(1)), []).append(float(m.group(2)))
            m = re.match(r"allocbench parallel-4: ([\d.]+) pages/s", line)
            if m:
                series.setdefault((cfg, "parallel-4"), []).append(float(m.group(1)))
base = "stock" if "stock" in configs else configs[0]
clock = ("guest clock = instructions, icount shift %s: 1 instruction = %d ns" % (icount, 1 << int(icount))
         if icount else "wall-clock time")
print("allocator cost (tests/tools/allocbench in a 2 GiB TCG guest; %s; median of runs; ratio to '%s')" % (clock, base))
for name, unit in (("order-0", "ns/page"), ("thp", "ns/page"), ("parallel-4", "pages/s")):
    ref = series.get((base, name))
    for cfg in configs:
        v = series.get((cfg, name))
        if not v:
            print("  %-10s %-9s  no result" % (name, cfg))
            continue
        med = statistics.median(v)
        ratio = med / statistics.median(ref) if ref else float("nan")
        print("  %-10s %-9s %10.1f %-8s x%.3f  (%d runs: %s)" % (
            name, cfg, med, unit, ratio, len(v), " ".join("%.1f" % x for x in v)))
PY
cp "bench/results/$stamp-alloc.txt" bench/results/latest-alloc.txt
rm -rf "$out"
