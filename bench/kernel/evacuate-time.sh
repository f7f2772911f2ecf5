#!/bin/bash
# Runs in the guest: how long does it take to evacuate a 128 MiB region full
# of clean page cache by migrating it, and by dropping it?  Fills memory with
# page cache, picks the two regions with the most clean file pages, compacts
# one with mode migrate and the other with mode drop, and prints the kernel's
# own elapsed time and page counts for each.
set -eu
ksrc=${REGIONPM_SRC:-$HOME/.cache/regionpm/src/linux-6.12}
top=$(cd "$(dirname "$0")/../.." && pwd)
cli() {
	PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 "$ksrc/tools/net/ynl/cli.py" \
		--spec "$ksrc/Documentation/netlink/specs/regionpm.yaml" --output-json "$@"
}
mem_kib=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
for i in $(seq 1 $((mem_kib * 3 / 4 / 65536))); do
	dd if=/dev/zero of=/mnt/scratch/f.$i bs=1M count=64 status=none
done
# Written pages are accessed once already: a read back would make them
# active (hot), which drop mode keeps.  Evict them, then read them once, so
# they are the cold clean cache the two modes are compared on.
sync
echo 1 > /proc/sys/vm/drop_caches
cat /mnt/scratch/f.* > /dev/null
cli --dump region-get --json '{"scan": true}' > /tmp/regions.json
read -r a b < <(python3 -c '
import json
rs = json.load(open("/tmp/regions.json"))
rs.sort(key=lambda r: -r["detail"]["file-clean"])
print(rs[0]["id"], rs[1]["id"])')
for pair in "migrate $a" "drop $b"; do
	set -- $pair
	before=$(python3 -c "import json; print([r['detail']['file-clean'] for r in json.load(open('/tmp/regions.json')) if r['id']==$2][0])")
	cli --do region-compact --json "{\"id\": $2, \"mode\": \"$1\"}" > /tmp/res.json
	python3 -c "
import json; r = json.load(open('/tmp/res.json'))
print('evacuate mode=$1 region=$2 file-clean-before=$before migrated=%d dropped=%d failed=%d skipped=%d free-after=%d elapsed-ms=%.1f' % (
	r['migrated'], r['dropped'], r['failed'], r['skipped'], r['free-pages'], r['elapsed-ns'] / 1e6))"
done
