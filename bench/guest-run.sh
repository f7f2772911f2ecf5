#!/bin/bash
# One benchmark run in the guest: set up one configuration, run one workload
# (bench/workload/WORKLOAD.sh: fill, free, hot) while sampling empty regions
# from /proc/kpageflags (build/tools/kpageflags-regions, the independent
# judge), and write one JSON object to $REGIONPM_VM_OUT.
#
#   guest-run.sh CONFIG [HOT_SECS] [WORKLOAD]
#
# WORKLOAD: fragment (default) | fileserver | database | vmhost
# CONFIG: one cfg_NAME_start function below (stock, proactive, naive, damon,
# bias, regionpmd, movable, demo; on the stock kernel: regionpmd-stock, the
# daemon's stock backend, and offline-peer, bench/configs/offline-peer.sh).  Every mechanism is switched on before the
# workload starts, as an operator would deploy it (demo excepted: it starts
# regionpmd after the frees, so its "before" map is the fragmented one).
#
# Timeline: fill, free, then the hot phase, which lasts until HOT_SECS
# (default 125) after the end of the frees.  At the end of the frees and
# 30, 60 and 120 s after it (those that fall inside the hot phase) the judge
# takes a full per-region snapshot, and the daemon's counters, context
# switches and CPU time are read; bench/aggregate.py computes the bounds and
# ratios from the snapshots.  Per phase: wall time and sectors read from the
# scratch disk.  BENCH_SAMPLE_SECS (default 3) is the period of the summary
# samples for the plot.  REGIONPM_BENCH_TRACE=1 (run-vm passes REGIONPM_* into
# the guest) also records with every sample each region's unmovable pages
# that are not reserved and its free pages (id:unmovable:free): where slab
# lands over time (issue 10); the JSON's trace_regions.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cfg=${1:?config}
hot_secs=${2:-125}
workload=${3:-fragment}
period=${BENCH_SAMPLE_SECS:-3}
judge=$top/build/tools/kpageflags-regions
wl=$top/bench/workload/$workload.sh
[ -x "$wl" ] || { echo "guest-run: no workload $wl" >&2; exit 2; }
work=/tmp/bench-run
mkdir -p "$work"
export BENCH_STATE=$work/state
export BENCH_MEM_KB=$(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo)
. "$top/bench/lib.sh"
out=${REGIONPM_VM_OUT:-/dev/stdout}
kv=$work/kv	# KEY VALUE lines that become the JSON
: > "$kv"

log() { echo "[bench $workload/$cfg t=$(since "$T0")s] $*"; }
put() { echo "$1 $2" >> "$kv"; }

T0=$(uptime_s)
put region_bytes $((0x$(cat /sys/devices/system/memory/block_size_bytes)))
put mem_total_kb_boot "$(mi MemTotal)"
mig0=$(vm pgmigrate_success) majf0=$(vm pgmajfault) sec0=$(sectors_read)
steal0=$(( $(vm pgsteal_kswapd) + $(vm pgsteal_direct) ))
oom0=$(vm oom_kill)
psi_total() { awk -v k="$1" '$1 == k { sub("total=", "", $5); print $5 }' /proc/pressure/memory; }
psi_some0=$(psi_total some) psi_full0=$(psi_total full)
echo 0 > "$work/dropped"

# ---- configurations -------------------------------------------------------
# One function per configuration: cfg_NAME_start (before the workload,
# required), cfg_NAME_after_free (optional), cfg_NAME_stop (optional, at the
# end).  A configuration that runs a daemon sets daemon_pid; its counters
# come from daemon_counters below.  Pages it dropped go to $work/dropped.
# Kernel command line additions live in bench/run-bench.sh (cfg_append).
loop_pid='' daemon_pid=''

cfg_stock_start() { :; }

cfg_proactive_start() { echo 100 > /proc/sys/vm/compaction_proactiveness; }
cfg_proactive_after_free() { echo 1 > /proc/sys/vm/compact_memory; }

cfg_naive_start() {
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
	loop_pid=$!
}
cfg_naive_stop() { kill "$loop_pid" 2>/dev/null; }

damon_param=/sys/module/damon_reclaim/parameters
cfg_damon_start() {
	if [ -w $damon_param/enabled ]; then
		echo Y > $damon_param/enabled
	else
		log "no DAMON_RECLAIM in this kernel"
	fi
}
cfg_damon_stop() {
	[ -r $damon_param/bytes_reclaimed_regions ] &&
		echo $(( $(cat $damon_param/bytes_reclaimed_regions) / 4096 )) > "$work/dropped"
}

cfg_bias_start() { :; }	# regionpm.bias=1 on the kernel command line

# The daemon's metrics file, rewritten after every pass, goes to tmpfs as
# it would on a real system (/run): under $work, on the guest's overlay of
# the host's 9p root, every rewrite (create, rename) went to the host, and
# the daemon's CPU time converged was about twice what it was with /run
# (fragment at 2 GiB, two guests side by side: 35 against 15 ticks in 93 s).
prom=/run/regionpmd-bench.prom
# regionpmd with its defaults; the configuration file only adds the metrics
# file (its counters of migrated and dropped pages), and for experiments
# REGIONPM_BENCH_DAEMON_CONF, more lines of it ("\n" for a line break:
# '[Policy]\nHeadroomPercent=5'), which the JSON records as daemon_conf.
start_regionpmd() {
	printf '[Daemon]\nMetricsFile=%s\n' "$prom" > "$work/regionpmd.conf"
	if [ -n "${REGIONPM_BENCH_DAEMON_CONF:-}" ]; then
		printf '%b\n' "$REGIONPM_BENCH_DAEMON_CONF" >> "$work/regionpmd.conf"
		put daemon_conf "$(printf '%b' "$REGIONPM_BENCH_DAEMON_CONF" | tr '\n' ' ')"
	fi
	"$top/build/regionpmd" -v -c "$work/regionpmd.conf" > "$work/regionpmd.log" 2>&1 &
	daemon_pid=$!
}
cfg_regionpmd_start() { start_regionpmd; }
cfg_movable_start() { start_regionpmd; }	# movablecore=50% regionpm.bottom_up=1 on the command line
# The same daemon on the stock kernel (no series): its stock backend
# offlines memory blocks.
cfg_regionpmd-stock_start() { start_regionpmd; }
# The research systems' way: offline every block free enough, online on pressure.
cfg_offline-peer_start() {
	"$top/bench/configs/offline-peer.sh" "$work/peer" &
	loop_pid=$!
}
cfg_offline-peer_stop() { kill "$loop_pid" 2>/dev/null; wait "$loop_pid" 2>/dev/null; }
cfg_demo_start() { :; }	# bias from boot; the daemon starts after the frees
cfg_demo_after_free() { start_regionpmd; }

declare -F "cfg_${cfg}_start" >/dev/null ||
	{ echo "guest-run: unknown configuration $cfg" >&2; exit 2; }
hook() { declare -F "cfg_${cfg}_$1" >/dev/null && "cfg_${cfg}_$1"; return 0; }
hook start
log "configured: $(uname -r) bias=$(cat /sys/module/regionpm/parameters/bias 2>/dev/null || echo -) proactiveness=$(cat /proc/sys/vm/compaction_proactiveness) damon_reclaim=$(cat $damon_param/enabled 2>/dev/null || echo -)"

# "MIGRATED DROPPED" of the daemon: its metrics file, else the sums of its
# log's "compacted" lines; "None None" without a daemon.
daemon_counters() {
	if [ -z "$daemon_pid" ]; then
		echo "None None"
	elif [ -s "$prom" ]; then
		awk '$1 == "regionpm_pages_migrated_total" { m = $2 }
		     $1 == "regionpm_pages_dropped_total" { d = $2 }
		     END { print m + 0, d + 0 }' "$prom"
	else
		awk '/compacted/ { for (i = 1; i < NF; i++) { if ($i == "migrated") m += $(i + 1)
							     if ($i == "dropped") d += $(i + 1) } }
		     END { print m + 0, d + 0 }' "$work/regionpmd.log"
	fi
}
# "CTXT TICKS": voluntary + involuntary context switches and utime + stime
# (clock ticks) of the daemon; "None None" without one.
daemon_cpu() {
	if [ -n "$daemon_pid" ] && [ -r "/proc/$daemon_pid/stat" ]; then
		echo "$(awk '/^(non)?voluntary_ctxt_switches:/ { s += $2 } END { print s }' "/proc/$daemon_pid/status")" \
			"$(awk '{ print $14 + $15 }' "/proc/$daemon_pid/stat")"
	else
		echo "None None"
	fi
}

# The free pages the kernel keeps (calculate_totalreserve_pages(): per
# zone the high watermark without its boost plus the largest lowmem
# reserve, at most the zone).  No packing fills them without kswapd
# evicting cache to restore them, and with ZONE_MOVABLE they are per zone:
# the judge's bound-kept counts them as in use, bound-simple does not.
kernel_reserve() {
	awk 'function end_zone() { k = high - boost + prot; s += k < managed ? k : managed }
	     /^Node/ { if (z) end_zone(); z = 1; high = boost = prot = managed = 0 }
	     $1 == "high" { high = $2 } $1 == "boost" { boost = $2 }
	     $1 == "managed" { managed = $2 }
	     $1 == "protection:" { gsub(/[(),]/, " "); for (i = 2; i <= NF; i++) if ($i + 0 > prot) prot = $i + 0 }
	     END { if (z) end_zone(); print s + 0 }' /proc/zoneinfo
}

# Stop the daemon between two passes, while the judge walks the regions:
# its counters are written after every pass, so in the middle of one (a
# pass that empties several regions takes seconds at 8 GiB) the regions it
# had emptied read as empty while their moves were not yet counted, and
# moved/resident counted them as moves for nothing (fragment at 8 GiB,
# 20261206T034410Z: regions 75 and 76, emptied during the end-of-frees
# snapshot: 1.98).  Stopped in its event loop's wait (epoll_wait,
# epoll_pwait, epoll_pwait2 in /proc/PID/syscall, which a stopped task
# still shows), it is between passes; else it runs on for 50 ms and is
# tried again, for at most 30 s.
daemon_pause() {
	local i j
	[ -n "$daemon_pid" ] || return 0
	for i in $(seq 1 600); do
		kill -STOP "$daemon_pid" 2>/dev/null || return 0
		for j in $(seq 1 100); do
			[ "$(awk '{ print $3 }' "/proc/$daemon_pid/stat" 2>/dev/null)" = T ] && break
			sleep 0.01
		done
		case "$(cut -d' ' -f1 "/proc/$daemon_pid/syscall" 2>/dev/null)" in
		232|281|441) return 0 ;;
		esac
		kill -CONT "$daemon_pid"
		sleep 0.05
	done
	log "the daemon did not stop between two passes within 30 s; snapshot taken while it runs"
	kill -STOP "$daemon_pid" 2>/dev/null
	return 0
}
daemon_resume() { [ -z "$daemon_pid" ] || kill -CONT "$daemon_pid" 2>/dev/null; return 0; }

# A full snapshot: per-region judge JSON plus the counters, under name N.
snapshot() { # name
	daemon_pause
	"$judge" -j -k "$(kernel_reserve)" > "$work/snap.$1.json"
	put "snap.$1.t" "$(since "$T0")"
	read -r a b < <(daemon_counters); put "snap.$1.daemon_migrated" "$a"; put "snap.$1.daemon_dropped" "$b"
	daemon_resume
	read -r a b < <(daemon_cpu); put "snap.$1.daemon_ctxt" "$a"; put "snap.$1.daemon_ticks" "$b"
	put "snap.$1.pgmigrate_success" "$(vm pgmigrate_success)"
	put "snap.$1.dropped" "$(cat "$work/dropped")"
	put "snap.$1.cached_kb" "$(mi Cached)"
	put "snap.$1.mem_available_kb" "$(mi MemAvailable)"
	put "snap.$1.mem_total_kb" "$(mi MemTotal)"
}

# ---- sampler: the judge's summary every $period seconds --------------------
echo fill > "$work/phase"
(
	while :; do
		t=$(since "$T0")
		"$judge" > "$work/judge.now"
		tail -1 "$work/judge.now" | awk -v t="$t" -v ph="$(cat "$work/phase")" -v mt="$(mi MemTotal)" \
			'{ for (i = 1; i < NF; i++) v[$i] = $(i + 1)
			   print t, ph, v["empty"], v["regions"], v["with-unmovable"], v["bound-simple"], v["bound-tight"], mt }'
		# region present free unmovable kernel used reserved
		[ "${REGIONPM_BENCH_TRACE:-0}" = 1 ] &&
			awk -v t="$t" 'NR > 1 && $1 ~ /^[0-9]+$/ { u = u " " $1 ":" $4 - $7 ":" $3 }
				       END { print t u }' "$work/judge.now" >> "$work/trace"
		sleep "$period"
	done
) > "$work/samples" &
sampler_pid=$!

# ---- the workload: fill, free, hot ----------------------------------------
# What a phase cost besides its own work, to tell where a slower phase lost
# its time: "NAME VALUE" lines of the kernel's migrations (all, and the
# bias's front keeper), reclaim (pages stolen, direct-reclaim stalls),
# compaction stalls, PSI some (us) and the daemon's CPU ticks.
phase_counters() {
	local keeper=/sys/module/regionpm/parameters/front_moved
	echo "pgmigrate $(vm pgmigrate_success)"
	echo "front_moved $(cat "$keeper" 2>/dev/null || echo 0)"
	echo "pgsteal $(( $(vm pgsteal_kswapd) + $(vm pgsteal_direct) ))"
	echo "allocstall $(awk '$1 ~ /^allocstall_/ { s += $2 } END { print s + 0 }' /proc/vmstat)"
	echo "compact_stall $(vm compact_stall)"
	echo "psi_some_us $(psi_total some)"
	read -r _ b < <(daemon_cpu)
	echo "daemon_ticks $([ "$b" = None ] && echo 0 || echo "$b")"
}

phase() { # name command...: wall time, sectors read and counters of one phase
	local name=$1 t s
	shift
	echo "$name" > "$work/phase"
	phase_counters > "$work/counters.$name"
	t=$(uptime_s) s=$(sectors_read)
	"$@" || log "$name failed"
	put "phase.$name.secs" "$(since "$t")"
	put "phase.$name.sectors" $(( $(sectors_read) - s ))
	phase_counters | awk -v p="phase.$name." 'NR == FNR { v[$1] = $2; next }
		{ print p $1, $2 - v[$1] }' "$work/counters.$name" - >> "$kv"
}

phase fill "$wl" fill
put fill_end.cached_kb "$(mi Cached)"
put fill_end.mem_available_kb "$(mi MemAvailable)"
phase free "$wl" free
hook after_free
TF=$(uptime_s)
snapshot free
cp "$work/snap.free.json" "$work/before.json"
# Snapshots 30, 60 and 120 s after the frees, while the hot phase runs.
marks=$(for m in 30 60 120; do [ "$m" -lt "$hot_secs" ] && echo "$m"; done)
(
	for m in $marks; do
		sleep "$(awk -v t0="$TF" -v m="$m" '{ d = t0 + m - $1; print (d > 0 ? d : 0) }' /proc/uptime)"
		snapshot "$m"
		log "snapshot +${m}s: $(tail -c +1 "$work/snap.$m.json" | /usr/bin/python3 -c '
import json, sys; j = json.load(sys.stdin)
print("empty %d, bound simple %d tight %d" % (j["empty_regions"], j["bound_simple"], j["bound_tight"]))')"
	done
) &
snap_pid=$!
sec_h0=$(sectors_read) majh0=$(vm pgmajfault)
phase hot "$wl" hot "$(awk -v t0="$TF" -v h="$hot_secs" '{ d = t0 + h - $1; printf "%d", (d > 1 ? d : 1) }' /proc/uptime)"
put hot_sectors_read $(( $(sectors_read) - sec_h0 ))
put hot_pgmajfault $(( $(vm pgmajfault) - majh0 ))
wait "$snap_pid"
echo end > "$work/phase"
snapshot end
kill "$sampler_pid" 2>/dev/null
wait "$sampler_pid" 2>/dev/null
cp "$work/snap.end.json" "$work/end.json"
"$judge" | tail -1 | sed "s/^/[bench $workload\/$cfg] end: /"

# ---- the cost of the configuration itself ---------------------------------
if [ -n "$daemon_pid" ]; then
	hz=$(getconf CLK_TCK)
	put clk_tck "$hz"
	read -r u s < <(awk -v hz="$hz" '{ printf "%.2f %.2f\n", $14 / hz, $15 / hz }' "/proc/$daemon_pid/stat" 2>/dev/null || echo "None None")
	put daemon_cpu_user_s "$u"; put daemon_cpu_sys_s "$s"
	rss=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$daemon_pid/status" 2>/dev/null)
	put daemon_maxrss_kb "${rss:-None}"
	read -r a b < <(daemon_counters); put daemon_migrated "$a"; put daemon_dropped "$b"
	put daemon_parks "$(grep -c ': parked' "$work/regionpmd.log")"
	grep -E 'compacted|parked|released|refused|failed|warning' "$work/regionpmd.log" | tail -8 |
		sed "s/^/[bench $workload\/$cfg] regionpmd: /"
	echo "$b" > "$work/dropped"
fi
hook stop
put dropped_pages "$(cat "$work/dropped")"
put pgmigrate_success $(( $(vm pgmigrate_success) - mig0 ))
put pgsteal $(( $(vm pgsteal_kswapd) + $(vm pgsteal_direct) - steal0 ))
put pgmajfault $(( $(vm pgmajfault) - majf0 ))
put sectors_read_total $(( $(sectors_read) - sec0 ))
put psi_some_us $(( $(psi_total some) - psi_some0 ))
put psi_full_us $(( $(psi_total full) - psi_full0 ))
put oom_kills $(( $(vm oom_kill) - oom0 ))
put mem_total_kb_end "$(mi MemTotal)"
while IFS== read -r k v; do put "$k" "$v"; done < "$BENCH_STATE/hot.out"
# region -> node (memory block N is region N: the judge's default region
# size is the memory block size)
for n in /sys/devices/system/node/node[0-9]*; do
	for b in "$n"/memory[0-9]*; do
		[ -e "$b" ] && echo "${b##*/memory} ${n##*/node}"
	done
done > "$work/nodes"
"$wl" cleanup >/dev/null 2>&1

# ---- JSON -----------------------------------------------------------------
/usr/bin/python3 - "$work" "$cfg" "$workload" "$hot_secs" "$(since "$T0")" > "$work/result.json" <<'PY'
import json, os, sys
w, cfg, workload, hot_secs, run_secs = sys.argv[1:6]

def val(v):
    if v == "None" or v == "":
        return None
    for t in (int, float):
        try:
            return t(v)
        except ValueError:
            pass
    return v

res = {"config": cfg, "workload": workload, "hot_secs": int(hot_secs), "run_secs": float(run_secs)}
for line in open(w + "/kv"):
    k, _, v = line.rstrip("\n").partition(" ")
    d = res
    parts = k.split(".")
    for p in parts[:-1]:
        d = d.setdefault(p, {})
    d[parts[-1]] = val(v)
for name, snap in res.get("snap", {}).items():
    j = json.load(open("%s/snap.%s.json" % (w, name)))
    snap["regions"] = j["regions"]
    snap["judge"] = {k: v for k, v in j.items() if k != "regions"}
res["node_of_region"] = {}
for line in open(w + "/nodes"):
    b, n = line.split()
    res["node_of_region"][b] = int(n)
samples = []
for line in open(w + "/samples"):
    f = line.split()
    if len(f) < 8:
        continue
    samples.append({"t": float(f[0]), "phase": f[1], "empty": int(f[2]), "regions": int(f[3]),
                    "with_unmovable": int(f[4]), "bound_simple": int(f[5]),
                    "bound_tight": int(f[6]), "mem_total_kb": int(f[7])})
res["samples"] = samples
if os.path.exists(w + "/trace"):
    res["trace_regions"] = [line.split() for line in open(w + "/trace")]
# the names make demo (scripts/demo.sh) reads
res["end"], res["end_regions"] = res["snap"]["end"]["judge"], res["snap"]["end"]["regions"]
res["before_hot"], res["before_regions"] = res["snap"]["free"]["judge"], res["snap"]["free"]["regions"]
json.dump(res, sys.stdout)
PY
[ -n "$daemon_pid" ] && kill -TERM "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null
cat "$work/result.json" > "$out"
# The daemon's own account of the run, for when a number needs explaining
# (run-vm copies it next to the JSON as NAME.json.regionpmd.log.gz).
[ "$out" != /dev/stdout ] && [ -s "$work/regionpmd.log" ] &&
	gzip -c "$work/regionpmd.log" > "$out.regionpmd.log.gz"
log "done"
