#!/bin/bash
# make demo: the main job.  Until the daemon and the workload land (issues 4
# and 6), it boots the patched kernel and shows the memory-block layout the
# daemon will manage, and says what is still missing.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$REGIONPM_TOP"
cat <<'TXT'
regionpm demo
=============
Booting the regionpm test kernel under QEMU (TCG, 2 GiB, 2 CPUs) ...
TXT
tests/vm/run-vm --quiet --mem 2G -- sh -c '
	echo "guest kernel: $(uname -r)"
	bs=$((0x$(cat /sys/devices/system/memory/block_size_bytes)))
	echo "memory block (= default region) size: $((bs >> 20)) MiB"
	lsmem --summary=never -o RANGE,SIZE,STATE,BLOCK,ZONES
	grep -E "^(MemTotal|MemFree|MemAvailable|Cached):" /proc/meminfo
	echo "PSI memory: $(head -1 /proc/pressure/memory)"'
cat <<'TXT'

Not there yet: the region occupancy map, the regionpmd daemon and the
before/after workload run land with the kernel helper (issue 3), the daemon
(issue 4) and the demo/benchmark (issue 6).
TXT
