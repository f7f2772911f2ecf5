#!/bin/bash
# regionpmd against a real fragmenting workload, in the test VM (TAP).
#
# Page cache from files written on the scratch disk spread over every
# region, anonymous memory held by stress-ng, then files deleted in a
# scattered order.  Then:
#   * --dry-run changes nothing (MemTotal, bias knob, no page migrated);
#   * regionpmd (defaults, bias on) vacates and parks regions: empty regions
#     are counted independently from /proc/kpageflags (kpageflags-regions)
#     and compared with the best possible bound within 60 s: regions minus
#     those holding unmovable pages (slab, page tables, reserved, and other
#     kernel pages, e.g. vmalloc: bound-strict) minus those the remaining
#     movable pages need;
#   * once it has reached its plan, memory freed (the anonymous holder
#     exits) wakes it through the reclaim watch's MemFree mark, not its
#     idle timer;
#   * memory pressure (stress-ng --vm taking most memory) gets the parked
#     regions back with no OOM kill;
#   * SIGKILL of the daemon gives every parked page back (MemTotal restored);
#   * SIGTERM releases too, and exits 0;
#   * a bad configuration line gives a file:line warning.
# Diagnostics: empty regions vs bound, pages migrated vs dropped, the
# daemon's CPU time and max RSS.
#
#   REGIONPMD=path        daemon binary (default build/regionpmd)
#   REGIONPM_DAEMON_WAIT  seconds allowed to reach the bound (default 60)
#   REGIONPM_DAEMON_KEEP=1  keep the daemon logs (in $TMPDIR, the host's /tmp)
#   REGIONPM_DAEMON_BOUND   bound judged against: strict (default: regions
#                         with unmovable or other kernel pages are kept),
#                         tight (regions with unmovable pages are kept),
#                         simple (total - ceil(used / region)) or kept
#                         (simple, with the free pages the kernel keeps
#                         counted as used, for ZONE_MOVABLE layouts)
#   REGIONPM_DAEMON_RATIO   percent of that bound to reach (default 90)
#   REGIONPM_DAEMON_REFUSED_ONCE  a refusal (extended regular expression) the
#                         daemon may get at most once per region: a reason
#                         that cannot change, which it must not ask again
# With ZONE_MOVABLE (movablecore=), regionpmctl check must report it and
# every Movable region but those the used pages need must end up empty.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/tap.sh"
. "$top/tests/lib/mem.sh"

RPMD=${REGIONPMD:-$top/build/regionpmd}
JUDGE=$top/build/tools/kpageflags-regions
WAIT=${REGIONPM_DAEMON_WAIT:-60}
BOUND=bound-${REGIONPM_DAEMON_BOUND:-strict}
RATIO=${REGIONPM_DAEMON_RATIO:-90}
scratch=/mnt/scratch
work=$(mktemp -d "${TMPDIR:-/tmp}/daemon-test.XXXXXX")
holder_pid='' daemon_pid=''

cleanup() {
	[ -n "$daemon_pid" ] && kill -KILL "$daemon_pid" 2>/dev/null
	[ -z "$holder_pid" ] && holder_pid=$(cat "$work/holder.pid" 2>/dev/null)
	[ -n "$holder_pid" ] && kill -KILL "$holder_pid" 2>/dev/null
	wait 2>/dev/null
	[ "${REGIONPM_DAEMON_KEEP:-0}" = 1 ] && echo "# logs kept in $work" || rm -rf "$work"
	rm -f "$scratch"/daemon-fill.* 2>/dev/null
}
trap cleanup EXIT

bias() { cat /sys/module/regionpm/parameters/bias 2>/dev/null; }
# The free pages the kernel keeps for allocations that regions outside
# ZONE_DMA serve: per zone the high watermark plus its largest lowmem
# reserve, at most the zone (its totalreserve_pages).  ZONE_DMA is left
# out: its region is never parked and its own free pages are its reserve.
kernel_reserve() {
	awk '/^Node/ { dma = ($4 == "DMA") } $1 == "high" { h = $2 }
	     $1 == "managed" { m = $2 }
	     $1 == "protection:" { gsub(/[(),]/, " "); p = 0
		for (i = 2; i <= NF; i++) if ($i + 0 > p) p = $i + 0
		r = h + p; if (r > m) r = m; if (!dma) s += r }
	     END { print s + 0 }' /proc/zoneinfo
}
# "regions N empty N with-unmovable N bound-simple N bound-tight N ... bound-kept N"
judge() { "$JUDGE" -k "$(kernel_reserve)" | tail -1; }

if [ ! -x "$RPMD" ]; then
	tap_fail "regionpmd binary exists at $RPMD" "build it with make"
	tap_done
	exit 1
fi
if [ ! -d /sys/module/regionpm ]; then
	tap_fail "the kernel has regionpm (/sys/module/regionpm)" "$(uname -r)"
	tap_done
	exit 1
fi

# The kernel's proactive compaction moves pages to high regions: off.
echo 0 > /proc/sys/vm/compaction_proactiveness 2>/dev/null
mem_total0=$(meminfo MemTotal)
oom0=$(oom_kills)

# ---- 1. the fragmenting workload ------------------------------------------
psi_some10() { awk '/^some/ { sub("avg10=", "", $2); print int($2 * 100) }' /proc/pressure/memory; }
# "After the workload quiesces": memory pressure (PSI some avg10) back under
# 1 %, as regionpmd rightly does nothing while memory is contended.
quiesce() {
	local i
	for i in $(seq 1 60); do
		[ "$(psi_some10)" -lt 100 ] && break
		sleep 1
	done
	echo "quiesced after ${i}s: $(head -1 /proc/pressure/memory)"
}

fragment() {
	local i mb=$(( $(meminfo MemTotal) / 1024 / 10 ))
	# anonymous memory that stays: about 15 % of memory, held
	stress-ng --vm 1 --vm-bytes $(( $(meminfo MemTotal) * 15 / 100 ))k --vm-keep \
		--vm-populate --timeout 3600 --quiet >/dev/null 2>&1 &
	holder_pid=$!
	echo "$holder_pid" > "$work/holder.pid"	# tap_check runs this in a subshell
	# page cache over all regions: 6 files of ~10 % of memory each,
	# interleaved with short-lived anon churn
	for i in 1 2 3 4 5 6; do
		dd if=/dev/zero of="$scratch/daemon-fill.$i" bs=1M count="$mb" conv=fsync status=none || return 1
		stress-ng --vm 1 --vm-bytes 64m --timeout 2 --quiet >/dev/null 2>&1
	done
	cat "$scratch"/daemon-fill.* > /dev/null
	# free in a scattered order
	rm -f "$scratch/daemon-fill.2" "$scratch/daemon-fill.5" "$scratch/daemon-fill.3"
	sync
	quiesce
	echo "after the workload: $(judge); MemFree $(meminfo MemFree) kB, Cached $(meminfo Cached) kB"
}
tap_check "fragmenting workload (dd page cache, stress-ng anon, scattered deletes)" fragment
before=$(judge)
echo "# before regionpmd: $before"

# ---- 2. --dry-run changes nothing ------------------------------------------
dry_run() {
	local mig0 mig1 total1 bias0 bias1 out=$work/dry.log
	bias0=$(bias) mig0=$(vmstat pgmigrate_success)
	timeout 20 "$RPMD" --dry-run -v > "$out" 2>&1
	mig1=$(vmstat pgmigrate_success) total1=$(meminfo MemTotal) bias1=$(bias)
	echo "dry run: $(grep -c 'would' "$out") 'would' lines, pgmigrate_success $mig0 -> $mig1, MemTotal $mem_total0 -> $total1 kB, bias $bias0 -> $bias1"
	grep -m5 'would' "$out"
	[ "$total1" = "$mem_total0" ] && [ "$bias1" = "$bias0" ] && [ "$mig1" = "$mig0" ] &&
		! grep -qE 'compacted|: parked|bias enabled' "$out" && grep -q 'would' "$out"
}
tap_check "--dry-run decides but changes nothing (MemTotal, bias, pgmigrate_success)" dry_run

# ---- 3. regionpmd vacates and parks ----------------------------------------
start_daemon() { # log
	"$RPMD" -v > "$1" 2>&1 &
	daemon_pid=$!
}
cpu_rss() { # pid -> "user_s sys_s rss_kb"
	local hz
	hz=$(getconf CLK_TCK)
	[ -r "/proc/$1/stat" ] || return 1
	awk -v hz="$hz" '{ printf "%.2f %.2f ", $14 / hz, $15 / hz }' "/proc/$1/stat"
	awk '$1 == "VmHWM:" { print $2 }' "/proc/$1/status"
}
log=$work/run.log
mig_before=$(vmstat pgmigrate_success)
t0=$(date +%s)
start_daemon "$log"
best_empty=0 bound=0 reached=''
# Sample every 5 s for the whole window (the bound moves: dropped page
# cache makes it larger), judge at the end of the window.
while [ $(( $(date +%s) - t0 + 6 )) -le "$WAIT" ]; do
	sleep 5
	kill -0 "$daemon_pid" 2>/dev/null || break
	j=$(judge)
	empty=$(field empty <<< "$j") bound=$(field "$BOUND" <<< "$j")
	echo "# t=$(( $(date +%s) - t0 ))s: $j; MemTotal $(meminfo MemTotal) kB"
	[ "$empty" -gt "$best_empty" ] && best_empty=$empty
	if [ -z "$reached" ] && [ $(( empty * 100 )) -ge $(( bound * RATIO )) ]; then
		reached=$(( $(date +%s) - t0 ))
	fi
done
elapsed=$(( $(date +%s) - t0 ))
j=$(judge)
final_empty=$(field empty <<< "$j") final_bound=$(field "$BOUND" <<< "$j")
[ "$final_empty" -gt "$best_empty" ] && best_empty=$final_empty
read -r cpu_user cpu_sys rss < <(cpu_rss "$daemon_pid" || echo "? ? ?")
migrated=$(awk '/compacted/ { for (i = 1; i < NF; i++) if ($i == "migrated") s += $(i + 1) } END { print s + 0 }' "$log")
dropped=$(awk '/compacted/ { for (i = 1; i < NF; i++) if ($i == "dropped") s += $(i + 1) } END { print s + 0 }' "$log")
parks=$(grep -c ': parked' "$log")
mem_parked=$(meminfo MemTotal)
echo "# regionpmd after ${elapsed}s: empty regions $final_empty (best seen $best_empty) vs $BOUND $final_bound, bound-tight $(field bound-tight <<< "$j") ($RATIO % first reached after ${reached:-never} s)"
echo "# before: $before"
echo "# pages migrated $migrated, dropped $dropped (pgmigrate_success +$(( $(vmstat pgmigrate_success) - mig_before ))); $parks park(s); MemTotal $mem_total0 -> $mem_parked kB"
echo "# daemon CPU time ${cpu_user}s user + ${cpu_sys}s system (the kernel's migration work is charged to the caller), max RSS ${rss} kB"
grep -E 'compacted|parked|refused|failed|warning' "$log" | head -20 | sed 's/^/#   /'
tap_check "regionpmd is running" kill -0 "$daemon_pid"
tap_check "regionpmd parked regions (MemTotal $mem_total0 -> $mem_parked kB)" test "$mem_parked" -lt "$mem_total0"
tap_check "the allocation bias is on" test "$(bias)" = Y -o "$(bias)" = 1
# The default HeadroomPercent=10: 10 % of all memory, as the log line's
# own memory size gives it (auto's sliding scale is a unit test: these
# guests are too small for it to differ).
headroom_logged() {
	local line
	line=$(grep -m1 'headroom: MemAvailable kept at' "$log") || return 1
	echo "$line"
	awk '{ for (i = 1; i <= NF; i++) { if ($i == "at") h = $(i + 1); if ($i == "of") m = $(i + 1) } }
	     END { printf "# headroom %s MiB of %s MiB, expected %.0f\n", h, m, m / 10
		   exit !(m > 0 && h - m / 10 <= 1 && m / 10 - h <= 1) }' <<< "$line"
}
tap_check "regionpmd logs its headroom (10 % of all memory)" headroom_logged
refused_once() { # regex
	local again
	again=$(grep -E "refused: .*$1" "$log" | awk '{ sub(/^<[0-7]>/, "") } { n[$2]++ }
		END { for (r in n) if (n[r] > 1) print "region " r " " n[r] " times" }')
	echo "$(grep -cE "refused: .*$1" "$log") refusal(s) for \"$1\"${again:+; again: $again}"
	[ -z "$again" ]
}
[ -n "${REGIONPM_DAEMON_REFUSED_ONCE:-}" ] &&
	tap_check "a refusal for \"$REGIONPM_DAEMON_REFUSED_ONCE\" comes at most once per region" \
		refused_once "$REGIONPM_DAEMON_REFUSED_ONCE"
# An idle sample of a region counts its LRU pages at the end: in a parked
# region there are none, so parking drops the region's running sample and
# a pass skips a sample of a region it parked before.  From the log: no
# sample is counted while its region is parked.
no_sample_while_parked() {
	awk '{ sub(/^<[0-7]>/, "") }
	     $1 == "region" && $3 == "parked" { sub(":", "", $2); parked[$2] = 1 }
	     $1 == "region" && ($3 == "unparked:" || $3 == "released") { sub(":", "", $2); parked[$2] = 0 }
	     $1 == "region" && $3 == "idle:" { n++; if (parked[$2]) { print "counted while parked: " $0; bad = 1 } }
	     /its idle sample is dropped/ { d++ }
	     END { printf "# %d idle sample(s) counted, %d dropped at a park\n", n, d; exit bad }' "$log"
}
tap_check "no idle sample is counted in a parked region" no_sample_while_parked
# Regions the kernel would not let go for a few pages it still uses
# (EBUSY "still in use" or "not empty") and that still hold no more than
# that at the end: no policy can empty them, but the bounds pack those
# pages like any other.  One CI run of daemon-movable ended 6 of a kept
# bound of 7 for region 1, free but for one page the kernel kept in use.
stuck_regions() {
	local r used n=0 table
	table=$("$JUDGE")	# one walk of /proc/kpageflags for all of them
	for r in $(sed -n 's/^region \([0-9]*\): park.* refused: Device or resource busy: \(cannot take the region.s pages (still in use)\|region is not empty\).*/\1/p' "$log" | sort -un); do
		used=$(awk -v r="$r" '$1 == r { print $2 - $3 }' <<< "$table")
		[ -n "$used" ] && [ "$used" -gt 0 ] && [ "$used" -le 64 ] && { n=$((n + 1)); echo "# region $r: $used page(s) the kernel kept in use" >&2; }
	done
	echo "$n"
}
stuck=$(stuck_regions)
[ "$stuck" -gt 0 ] && final_bound=$((final_bound - stuck)) &&
	echo "# $BOUND less $stuck region(s) the kernel refused for pages still in use: $final_bound"
if [ $(( final_empty * 100 )) -ge $(( final_bound * RATIO )) ] && [ "$elapsed" -le $(( WAIT + 3 )) ]; then
	tap_ok "empty regions $final_empty >= $RATIO % of the $BOUND $final_bound after ${elapsed}s (first reached after ${reached:-?}s)"
else
	tap_fail "empty regions >= $RATIO % of the $BOUND within ${WAIT}s" \
		"after ${elapsed}s: $final_empty empty, bound $final_bound
$(grep -E 'pass [0-9]+ at|^<7>  [a-z]|PSI|released' "$log" | head -80)
judge (kpageflags) per region:
$("$JUDGE")
last kernel breakdown per region (regionpmd's scans):
$(grep -E 'detail: ' "$log" | awk '{ last[$2] = $0 } END { for (r in last) print last[r] }' | sort -k2n)"
fi

# ZONE_MOVABLE: reported, and emptied but for what the used pages need
if grep -qE '^Node [0-9]+, zone +Movable' /proc/zoneinfo &&
   [ "$(awk '/zone +Movable/ { m = 1; next } /^Node/ { m = 0 } m && $1 == "managed" { s += $2 } END { print s + 0 }' /proc/zoneinfo)" -gt 0 ]; then
	movable_check() {
		local out
		out=$("$top/build/regionpmctl" check 2>&1)
		echo "$out" | grep 'movable memory\|boot memory'
		echo "$out" | grep -qE 'movable memory: [0-9]+ MiB of [0-9]+ MiB .* in ZONE_MOVABLE' || return 1
		# The memory map's place: a hint where ZONE_MOVABLE is boot memory
		# (movablecore=, kernelcore=), unless booted with regionpm.bottom_up=1
		if grep -qw 'regionpm.bottom_up=1' /proc/cmdline ||
		   ! grep -qE '(^| )(movablecore|kernelcore)=' /proc/cmdline; then
			! echo "$out" | grep -q 'booted without regionpm.bottom_up=1'
		else
			echo "$out" | grep -q 'booted without regionpm.bottom_up=1'
		fi
	}
	tap_check "regionpmctl check reports the ZONE_MOVABLE memory" movable_check
	movable_regions() {
		# every region (memory block) in ZONE_MOVABLE: no slab or page
		# table in it (the judge's unmovable pages that are not reserved),
		# so it can be emptied; reserved pages (the memmap, which memblock
		# allocates top-down at boot, before zones exist) are reported
		local b id n=0 empty=0 bad=0 res=0 line all
		all=$("$JUDGE")
		for b in /sys/devices/system/memory/memory[0-9]*; do
			[ "$(cat "$b/valid_zones" 2>/dev/null)" = Movable ] || continue
			id=${b##*memory}
			line=$(awk -v id="$id" '$1 == id' <<< "$all")
			[ -n "$line" ] || continue
			n=$((n + 1))
			read -r _ present free unmovable _ _ reserved _ <<< "$line"
			[ "$free" = "$present" ] && empty=$((empty + 1))
			[ "$reserved" -gt 0 ] && { res=$((res + 1)); echo "region $id (reserved pages): $line"; }
			[ "$unmovable" -gt "$reserved" ] && { bad=$((bad + 1)); echo "region $id: $line"; }
		done
		echo "$n regions in ZONE_MOVABLE, $empty empty, $bad with slab or page tables, $res with reserved pages"
		[ "$n" -gt 0 ] && [ "$bad" = 0 ]
	}
	tap_check "no slab or page table in any ZONE_MOVABLE region" movable_regions
fi

# SIGHUP reloads the configuration and the daemon carries on
hup() {
	kill -HUP "$daemon_pid" && sleep 3 && kill -0 "$daemon_pid" &&
		grep -q 'configuration reloaded' "$log"
}
tap_check "SIGHUP reloads the configuration" hup

# Memory freed after the plan is reached wakes the daemon: converged, it
# sleeps up to IdleIntervalSec= (60 s), but the reclaim watch reads MemFree
# every 2 s against the mark the last pass left.  The holder (15 % of
# memory) exits; the daemon must decide again well before its idle timer.
# The holder exits right after a converged pass, so the next idle pass is
# at least IntervalSec= away and cannot be the one that notices.
passes() { grep -c 'pass [0-9]* at' "$log"; }
after_converged_pass() { # wait for the next pass; true if it found the plan reached
	local n0 i
	n0=$(passes)
	for i in $(seq 1 800); do
		[ "$(passes)" -gt "$n0" ] && break
		sleep 0.1
	done
	sleep 0.2
	grep 'pass [0-9]* at' "$log" | tail -1 | grep -q ', converged'
}
freed_memory_wakes() {
	local i lines
	for i in 1 2 3 4 5 6 7 8; do
		after_converged_pass && break
	done
	grep 'pass [0-9]* at' "$log" | tail -1 | grep -q ', converged' ||
		{ echo "regionpmd did not reach its plan: $(grep 'pass [0-9]* at' "$log" | tail -3)"; return 1; }
	lines=$(wc -l < "$log")
	echo "before: MemFree $(meminfo MemFree) kB; $(grep 'plan reached' "$log" | tail -1)"
	holder_pid=$(cat "$work/holder.pid")
	kill "$holder_pid" || return 1
	for i in $(seq 1 50); do
		kill -0 "$holder_pid" 2>/dev/null || break
		sleep 0.2
	done
	# grep reads all of tail's output: grep -q would exit at the match while
	# tail still writes, and under pipefail tail's SIGPIPE (141) failed
	# the check although the line was there (CI, daemon-movable).
	for i in $(seq 1 30); do
		tail -n +"$((lines + 1))" "$log" | grep "reached the plan's mark" > /dev/null && break
		echo "t=${i}s MemFree $(meminfo MemFree) kB"
		sleep 1
	done
	{
		echo "holder exited; after ${i}s, MemFree $(meminfo MemFree) kB:"
		tail -n +"$((lines - 5))" "$log" | head -40
	} > "$work/freed.txt"
	cat "$work/freed.txt"
	tail -n +"$((lines + 1))" "$log" | grep "reached the plan's mark" > /dev/null
}
tap_check "memory freed after the plan is reached wakes regionpmd before IdleIntervalSec=" freed_memory_wakes
grep -m6 -E "holder exited|plan's mark|: parked|plan reached" "$work/freed.txt" 2>/dev/null | sed 's/^/# /'

# ---- 4. memory pressure takes the parked regions back, no OOM kill ---------
pressure() {
	local avail kb rc max=0 t lines
	avail=$(meminfo MemAvailable)
	lines=$(wc -l < "$log")
	# more than is available: all of it plus most of what is parked, split
	# over four workers by stress-ng (parking lowers MemTotal, and the
	# overcommit heuristic refuses one mapping larger than that)
	kb=$(( avail + (mem_total0 - $(meminfo MemTotal)) * 85 / 100 ))
	stress-ng --vm 4 --vm-bytes "${kb}k" --vm-keep --vm-populate --timeout 20 --quiet &
	local spid=$!
	while kill -0 "$spid" 2>/dev/null; do
		t=$(meminfo MemTotal)
		[ "$t" -gt "$max" ] && max=$t
		sleep 0.5
	done
	wait "$spid"
	rc=$?
	{
		echo "stress-ng --vm 4 --vm-bytes ${kb}k (MemAvailable was $avail kB) exit $rc; MemTotal $mem_parked -> max $max kB during the run, $(meminfo MemTotal) after; oom_kill $oom0 -> $(oom_kills)"
		tail -n +"$((lines + 1))" "$log" | grep -E 'released|unparked|parked' | head -8
	} | tee "$work/pressure.txt"
	[ "$rc" = 0 ] && [ "$max" -gt "$mem_parked" ] && [ "$(oom_kills)" = "$oom0" ]
}
tap_check "memory pressure gets parked regions back with no OOM kill" pressure
sed 's/^/# /' "$work/pressure.txt" 2>/dev/null

# ---- 5. SIGTERM releases every parked region --------------------------------
# (not in a tap_check subshell: only this shell can wait for the daemon)
if [ "$(meminfo MemTotal)" -ge "$mem_total0" ]; then
	# pressure took everything back; let the daemon park again first
	for i in $(seq 1 30); do
		sleep 2
		[ "$(meminfo MemTotal)" -lt "$mem_total0" ] && break
	done
fi
parked_before=$(meminfo MemTotal)
kill -TERM "$daemon_pid"
wait "$daemon_pid"
rc=$?
daemon_pid=''
msg="exit status $rc; MemTotal $parked_before -> $(meminfo MemTotal) kB (boot $mem_total0)"
if [ "$rc" = 0 ] && [ "$(meminfo MemTotal)" = "$mem_total0" ] && [ "$parked_before" -lt "$mem_total0" ]; then
	tap_ok "SIGTERM: regionpmd gives every parked page back and exits 0"
	echo "# $msg"
else
	tap_fail "SIGTERM: regionpmd gives every parked page back and exits 0" "$msg
$(tail -15 "$log")"
fi

# ---- 6. SIGKILL: the kernel gives every parked page back --------------------
sigkill() {
	local i pid
	"$RPMD" -v > "$work/kill.log" 2>&1 &
	pid=$!
	for i in $(seq 1 30); do
		sleep 2
		[ "$(meminfo MemTotal)" -lt "$mem_total0" ] && break
	done
	echo "parked before the kill: MemTotal $(meminfo MemTotal) kB (boot $mem_total0)"
	if [ "$(meminfo MemTotal)" -ge "$mem_total0" ]; then
		tail -20 "$work/kill.log"
		kill -KILL "$pid"
		return 1
	fi
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	sleep 1
	echo "after SIGKILL: MemTotal $(meminfo MemTotal) kB"
	[ "$(meminfo MemTotal)" = "$mem_total0" ]
}
tap_check "SIGKILL: every parked page comes back (MemTotal restored)" sigkill

# ---- 7. a bad configuration line gives file:line ----------------------------
bad_config() {
	local cfg=$work/regionpmd.conf out
	printf '[Policy]\nthis line is not a key\nHeadroomPercent=banana\n[Daemon]\nIntervalSec=1\n' > "$cfg"
	out=$(timeout 60 "$RPMD" --config "$cfg" --dry-run --once 2>&1)
	echo "$out" | grep -E "$cfg" | head -5
	echo "$out" | grep -qE "$cfg:[23]"
}
tap_check "a bad configuration line is reported with file:line" bad_config

# ---- 8. protected cgroups are resolved with libcgroup ----------------------
protected_cgroup() {
	local cg=/sys/fs/cgroup/regionpmd-test cfg=$work/protect.conf out
	mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup || return 1
	mkdir -p "$cg/child" || return 1
	printf '[Protect]\nCgroup=/regionpmd-test\n' > "$cfg"
	out=$(timeout 120 "$RPMD" --config "$cfg" --dry-run --once -v 2>&1)
	echo "$out" | grep -iE 'protect' | head -5
	rmdir "$cg/child" "$cg"
	echo "$out" | grep -qE 'protected cgroup /regionpmd-test .*: 2 cgroup inode'
}
tap_check "protected cgroups are resolved with libcgroup (cgroup and its child)" protected_cgroup

tap_check "no OOM kill during the whole test" test "$(oom_kills)" = "$oom0"
tap_done
