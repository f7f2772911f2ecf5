#!/bin/bash
# make demo: the main job.  Boots the regionpm test kernel (2 GiB, 128 MiB
# regions, allocation bias on), runs the fragmenting workload of the
# benchmark (bench/workload/fragment.sh), starts regionpmd with its
# defaults once the workload has freed memory in scattered order, and shows
# the region map before and after it, counted independently from
# /proc/kpageflags, with the headline numbers.  Power figures come from the
# DRAM power model of regionpm(7): a model, not a measurement.
#
#   DEMO_MEM=2G  DEMO_HOT_SECS=60
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$REGIONPM_TOP"
mem=${DEMO_MEM:-2G}
hot=${DEMO_HOT_SECS:-60}
out=$(mktemp -d "${TMPDIR:-/tmp}/regionpm-demo.XXXXXX")
trap 'rm -rf "$out"' EXIT
t0=$(date +%s)

cat <<TXT
regionpm demo
=============
Booting the regionpm test kernel under QEMU (TCG, $mem, 2 CPUs, regionpm.bias=1).
Workload: page cache (dd on the ext4 scratch disk) and anonymous memory
(stress-ng) over all regions, half of it freed in scattered order, then a
${hot} s hot phase with regionpmd running with its defaults.
TXT
if ! tests/vm/run-vm --quiet --mem "$mem" --append regionpm.bias=1 --timeout 900 \
	--out "$out/demo.json" --log "$out/console.log" \
	-- bench/guest-run.sh demo "$hot" > "$out/run.out" 2>&1; then
	echo "the demo VM failed; last lines:" >&2
	tail -n 30 "$out/run.out" >&2
	exit 1
fi
grep -E '^\[bench' "$out/console.log" | sed 's/^/  /'
echo
python3 - "$out/demo.json" <<'PY'
import json, sys
sys.path.insert(0, "bench")
from aggregate import model_power, all_in_use_power, down_fraction

r = json.load(open(sys.argv[1]))
rb = r["region_bytes"]

def rmap(regions):
    s = ""
    for g in regions:
        if g["free"] == g["present"]:
            s += "."
        elif g["unmovable"]:
            s += "#"
        else:
            s += str(min(9, (g["used"] * 10) // g["present"]))
    return s

b, e = r["before_hot"], r["end"]
print("Region map (one character per %d MiB region, from /proc/kpageflags):" % (rb >> 20))
print("  . empty   # holds slab/page-table/reserved pages   0-9 used, tenths")
print("  before regionpmd: [%s]" % rmap(r["before_regions"]))
print("  after  regionpmd: [%s]" % rmap(r["end_regions"]))
print()
parked = max(0, (r["mem_total_kb_boot"] - r["mem_total_kb_end"]) * 1024 // rb)
print("Empty regions: %d -> %d of %d; best possible (tight bound) %d -> %.0f %% of it"
      % (b["empty_regions"], e["empty_regions"], e["present_regions"], e["bound_tight"],
         100.0 * e["empty_regions"] / e["bound_tight"] if e["bound_tight"] else 0))
print("  simple bound total - ceil(used / region size): %d (%.0f %%); regions holding unmovable pages: %d"
      % (e["bound_simple"], 100.0 * e["empty_regions"] / e["bound_simple"] if e["bound_simple"] else 0,
         e["regions_with_unmovable"]))
print("regionpmd: migrated %s pages, dropped %s pages (log); pgmigrate_success +%d; %d region(s) parked at the end"
      % (r["daemon_migrated"], r["daemon_dropped"], r["pgmigrate_success"], parked))
print("  CPU %ss user + %ss system, max RSS %s kB; hot set: %d sectors read, %d major faults during the hot phase"
      % (r["daemon_cpu_user_s"], r["daemon_cpu_sys_s"], r["daemon_maxrss_kb"], r["hot_sectors_read"],
         r["hot_pgmajfault"]))
pb = model_power(r["before_regions"], rb, 0)
pe = model_power(r["end_regions"], rb, parked)
pall = all_in_use_power(r["end_regions"])
hot = [s for s in r["samples"] if s["phase"] in ("hot", "end")]
print("Modelled DRAM background power (model, regionpm(7)): before %.1f mW (model), after %.1f mW (model); all regions in use %.1f mW (model)"
      % (pb, pe, pall))
print("Power-down-able fraction: %.2f before (model), %.2f after (model), %.2f time-weighted over the hot phase (model)"
      % (b["empty_regions"] / b["present_regions"], e["empty_regions"] / e["present_regions"],
         down_fraction(hot) or 0))
if r.get("oom_kills"):
    print("WARNING: %d OOM kill(s) during the run" % r["oom_kills"])
PY
echo
echo "demo took $(( $(date +%s) - t0 )) s (VM run included); make bench compares regionpmd with the alternatives."
