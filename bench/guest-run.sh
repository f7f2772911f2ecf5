#!/bin/bash
# One benchmark run in the guest: set up one configuration, run the
# fragmenting workload (bench/workload/fragment.sh) while sampling empty
# regions from /proc/kpageflags (build/tools/kpageflags-regions, the
# independent judge), and write one JSON object to $REGIONPM_VM_OUT.
#
#   guest-run.sh CONFIG [HOT_SECS]
#
# CONFIG: stock | proactive | naive | damon | bias | regionpmd | regionpmd-stock
#         | offline-peer
#   stock      the patch is there, nothing enabled
#   proactive  vm.compaction_proactiveness=100, compact_memory after the frees
#   naive      drop_caches=3 + compact_memory every 10 s, all the time
#   damon      DAMON_RECLAIM with its defaults (enabled=Y)
#   bias       the allocation bias alone (regionpm.bias=1 on the command line)
#   regionpmd  regionpmd with defaults (it enables the bias itself)
#   regionpmd-stock  regionpmd with defaults on the stock kernel (no series:
#              its stock backend offlines memory blocks)
#   offline-peer  on the stock kernel: bench/configs/offline-peer.sh offlines
#              every block free enough, onlines on pressure
#   demo       (make demo) bias on from boot, regionpmd with defaults started
#              after the frees, so the map before it is the fragmented one
# Every mechanism is switched on before the workload starts, as a user
# would deploy it.  BENCH_SAMPLE_SECS (default 3) is the sampling period.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cfg=${1:?config}
hot_secs=${2:-40}
period=${BENCH_SAMPLE_SECS:-3}
judge=$top/build/tools/kpageflags-regions
frag=$top/bench/workload/fragment.sh
work=/tmp/bench-run
mkdir -p "$work"
export FRAG_STATE=$work/frag
export FRAG_MEM_KB=$(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo)
out=${REGIONPM_VM_OUT:-/dev/stdout}

vm() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }
mi() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
sectors_read() { awk '{ print $3 }' /sys/block/vda/stat; }
psi_total() { awk -v k="$1" '$1 == k { sub("total=", "", $5); print $5 }' /proc/pressure/memory; }
now() { awk '{ print $1 }' /proc/uptime; }
log() { echo "[bench $cfg t=$(awk -v t0="$T0" '{ printf "%.0f", $1 - t0 }' /proc/uptime)s] $*"; }

T0=$(now)
region_bytes=$((0x$(cat /sys/devices/system/memory/block_size_bytes)))
mem_total0=$(mi MemTotal)
mig0=$(vm pgmigrate_success) majf0=$(vm pgmajfault)
steal0=$(( $(vm pgsteal_kswapd) + $(vm pgsteal_direct) ))
oom0=$(vm oom_kill)
psi_some0=$(psi_total some) psi_full0=$(psi_total full)
echo 0 > "$work/dropped"

# ---- configuration --------------------------------------------------------
loop_pid='' daemon_pid='' sampler_pid=''
case "$cfg" in
stock) ;;
proactive) echo 100 > /proc/sys/vm/compaction_proactiveness ;;
naive)
	(
		dropped=0
		while sleep 10; do
			c0=$(mi Cached)
			echo 3 > /proc/sys/vm/drop_caches
			c1=$(mi Cached)
			echo 1 > /proc/sys/vm/compact_memory
			[ "$c0" -gt "$c1" ] && dropped=$((dropped + (c0 - c1) / 4))
			echo "$dropped" > "$work/dropped"
		done
	) &
	loop_pid=$! ;;
damon)
	if [ -w /sys/module/damon_reclaim/parameters/enabled ]; then
		echo Y > /sys/module/damon_reclaim/parameters/enabled
	else
		log "no DAMON_RECLAIM in this kernel"
	fi ;;
bias|demo) ;;	# regionpm.bias=1 on the kernel command line
regionpmd|regionpmd-stock)	# regionpmd-stock: the same daemon on the stock kernel
	"$top/build/regionpmd" -v > "$work/regionpmd.log" 2>&1 &
	daemon_pid=$! ;;
offline-peer)
	"$top/bench/configs/offline-peer.sh" "$work/peer" &
	loop_pid=$! ;;
*) echo "guest-run: unknown configuration $cfg" >&2; exit 2 ;;
esac
log "configured: $(uname -r) bias=$(cat /sys/module/regionpm/parameters/bias 2>/dev/null || echo -) proactiveness=$(cat /proc/sys/vm/compaction_proactiveness) damon_reclaim=$(cat /sys/module/damon_reclaim/parameters/enabled 2>/dev/null || echo -)"

# ---- sampler: the judge every $period seconds -----------------------------
phase=fill
echo fill > "$work/phase"
(
	while :; do
		t=$(awk -v t0="$T0" '{ printf "%.1f", $1 - t0 }' /proc/uptime)
		"$judge" | tail -1 | awk -v t="$t" -v ph="$(cat "$work/phase")" -v mt="$(mi MemTotal)" \
			'{ for (i = 1; i < NF; i++) v[$i] = $(i + 1)
			   print t, ph, v["empty"], v["regions"], v["with-unmovable"], v["bound-simple"], v["bound-tight"], mt }'
		sleep "$period"
	done
) > "$work/samples" &
sampler_pid=$!

# ---- the workload ---------------------------------------------------------
"$frag" fill || log "fill failed"
echo free > "$work/phase"
"$frag" free
if [ "$cfg" = proactive ]; then
	echo 1 > /proc/sys/vm/compact_memory
fi
sleep 2
"$judge" -j > "$work/before.json"
if [ "$cfg" = demo ]; then
	"$top/build/regionpmd" -v > "$work/regionpmd.log" 2>&1 &
	daemon_pid=$!
fi
echo hot > "$work/phase"
sec0=$(sectors_read) majh0=$(vm pgmajfault)
"$frag" hot "$hot_secs"
sec1=$(sectors_read) majh1=$(vm pgmajfault)
echo end > "$work/phase"
sleep 1
kill "$sampler_pid" 2>/dev/null
wait "$sampler_pid" 2>/dev/null
"$judge" -j > "$work/end.json"
"$judge" | tail -1 | sed "s/^/[bench $cfg] end: /"

# ---- the cost of the configuration itself ---------------------------------
cpu_user=None cpu_sys=None rss=None migrated_log=None dropped_log=None parks=None
if [ -n "$daemon_pid" ]; then
	hz=$(getconf CLK_TCK)
	read -r cpu_user cpu_sys < <(awk -v hz="$hz" '{ printf "%.2f %.2f\n", $14 / hz, $15 / hz }' "/proc/$daemon_pid/stat" 2>/dev/null || echo "None None")
	rss=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$daemon_pid/status" 2>/dev/null)
	rss=${rss:-None}
	migrated_log=$(awk '/compacted/ { for (i = 1; i < NF; i++) if ($i == "migrated") s += $(i + 1) } END { print s + 0 }' "$work/regionpmd.log")
	dropped_log=$(awk '/compacted/ { for (i = 1; i < NF; i++) if ($i == "dropped") s += $(i + 1) } END { print s + 0 }' "$work/regionpmd.log")
	parks=$(grep -c ': parked' "$work/regionpmd.log")
	grep -E 'compacted|parked|released|refused|failed|warning' "$work/regionpmd.log" | tail -8 | sed "s/^/[bench $cfg] regionpmd: /"
fi
[ "$cfg" = offline-peer ] && parks=$(awk '{ print $2 }' "$work/peer/stats" 2>/dev/null)
[ -n "$loop_pid" ] && kill "$loop_pid" 2>/dev/null
damon_bytes=None
if [ "$cfg" = damon ] && [ -r /sys/module/damon_reclaim/parameters/bytes_reclaimed_regions ]; then
	damon_bytes=$(cat /sys/module/damon_reclaim/parameters/bytes_reclaimed_regions)
fi
dropped=$(cat "$work/dropped")
[ -n "$daemon_pid" ] && dropped=$dropped_log
[ "$cfg" = damon ] && [ "$damon_bytes" != None ] && dropped=$((damon_bytes / 4096))

# ---- JSON -----------------------------------------------------------------
. "$FRAG_STATE/hot.out" 2>/dev/null
/usr/bin/python3 - "$work" > "$work/result.json" <<PY
import json, sys
w = sys.argv[1]
samples = []
for line in open(w + "/samples"):
    f = line.split()
    if len(f) < 8:
        continue
    samples.append({"t": float(f[0]), "phase": f[1], "empty": int(f[2]), "regions": int(f[3]),
                    "with_unmovable": int(f[4]), "bound_simple": int(f[5]),
                    "bound_tight": int(f[6]), "mem_total_kb": int(f[7])})
end = json.load(open(w + "/end.json"))
before = json.load(open(w + "/before.json"))
def ratio(a, b):
    return round(a / b, 3) if b else None
res = {
    "config": "$cfg",
    "mem_total_kb_boot": $mem_total0,
    "mem_total_kb_end": $(mi MemTotal),
    "region_bytes": $region_bytes,
    "hot_secs": $hot_secs,
    "end": {k: v for k, v in end.items() if k != "regions"},
    "before_hot": {k: v for k, v in before.items() if k != "regions"},
    "end_regions": end["regions"],
    "before_regions": before["regions"],
    "ratio_simple": ratio(end["empty_regions"], end["bound_simple"]),
    "ratio_tight": ratio(end["empty_regions"], end["bound_tight"]),
    "pgmigrate_success": $(( $(vm pgmigrate_success) - mig0 )),
    "pgsteal": $(( $(vm pgsteal_kswapd) + $(vm pgsteal_direct) - steal0 )),
    "dropped_pages": ${dropped:-0},
    "daemon_migrated": $migrated_log,
    "daemon_dropped": $dropped_log,
    "daemon_parks": $parks,
    "damon_bytes_reclaimed": $damon_bytes,
    "hot_sectors_read": $(( sec1 - sec0 )),
    "hot_pgmajfault": $(( majh1 - majh0 )),
    "pgmajfault": $(( $(vm pgmajfault) - majf0 )),
    "hot_bytes": ${hot_bytes:-0},
    "hot_mbps": ${hot_mbps:-0},
    "daemon_cpu_user_s": $cpu_user,
    "daemon_cpu_sys_s": $cpu_sys,
    "daemon_maxrss_kb": $rss,
    "psi_some_us": $(( $(psi_total some) - psi_some0 )),
    "psi_full_us": $(( $(psi_total full) - psi_full0 )),
    "oom_kills": $(( $(vm oom_kill) - oom0 )),
    "run_secs": round($(now) - $T0, 1),
    "samples": samples,
}
json.dump(res, sys.stdout)
PY
[ -n "$daemon_pid" ] && kill -TERM "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null
cat "$work/result.json" > "$out"
log "done"
