#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's own YNL client (tools/net/ynl/cli.py) against the regionpm
# family: an independent decoder that knows nothing but the YAML spec.  It
# must read everything the kernel sends and agree with the libmnl selftest
# and /proc/meminfo about the region table.  Output is TAP.
#
# Environment:
#   REGIONPM_SRC       kernel tree that has tools/net/ynl
#                      (default: ${REGIONPM_CACHE:-/root/.cache/regionpm}/src/linux-6.12)
#   REGIONPM_TEST_BIN  regionpm_test binary for the dump cross-check
#                      (default: build/tests/regionpm_test, where make puts it,
#                      else build/regionpm_test, else /tmp/regionpm_test)
#   REGIONPM_REQUIRE_FAMILY=1
#                      a missing family fails instead of skipping (implied
#                      when the running kernel is a -regionpm build)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/tap.sh"

KSRC=${REGIONPM_SRC:-${REGIONPM_CACHE:-/root/.cache/regionpm}/src/linux-6.12}
YNL_DIR=$KSRC/tools/net/ynl
SCHEMA=$KSRC/Documentation/netlink/genetlink.yaml
SPEC=$top/kernel/Documentation/netlink/specs/regionpm.yaml
PY=/usr/bin/python3
export PYTHONDONTWRITEBYTECODE=1

schema_args=(--no-schema)
[ -r "$SCHEMA" ] && schema_args=(--schema "$SCHEMA")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ynl-cli.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# ynl ARGS...: cli.py with JSON output
ynl() {
	"$PY" "$YNL_DIR/cli.py" --spec "$SPEC" "${schema_args[@]}" --output-json "$@"
}

# jq_py FILE EXPR: evaluate a Python expression over the last JSON line of
# FILE (bound to j) and print the result; fails if there is none.
jq_py() {
	"$PY" - "$1" "$2" <<'EOF'
import json, sys
j = None
for line in open(sys.argv[1]):
    line = line.strip()
    if line[:1] in ("[", "{"):
        try:
            j = json.loads(line)
        except ValueError:
            pass
if j is None:
    sys.exit("no JSON in the output")
print(eval(sys.argv[2], {"j": j}))
EOF
}

family_required() {
	[ -n "${REGIONPM_REQUIRE_FAMILY:-}" ] && return 0
	case "$(uname -r)" in *regionpm*) return 0 ;; esac
	return 1
}

# ---- preconditions: a missing environment is a skip, not a failure
if [ ! -r "$YNL_DIR/cli.py" ]; then
	tap_skip "YNL CLI against regionpm" "no $YNL_DIR/cli.py (set REGIONPM_SRC)"
	tap_done
	exit
fi
if [ "$(id -u)" != 0 ]; then
	tap_skip "YNL CLI against regionpm" "needs root (every op needs CAP_SYS_ADMIN)"
	tap_done
	exit
fi
ynl --do info-get > "$tmp/info" 2>&1
info_rc=$?
if grep -q "not supported by the kernel" "$tmp/info"; then
	if family_required; then
		tap_fail "cli.py finds the regionpm family" "$(tail -3 "$tmp/info")"
	else
		tap_skip "YNL CLI against regionpm" "the kernel has no regionpm family"
	fi
	tap_done
	exit
fi

# ---- 1. info-get
info_ok() {
	[ "$info_rc" = 0 ] || { cat "$tmp/info"; return 1; }
	count=$(jq_py "$tmp/info" 'j["region-count"]') || return 1
	size=$(jq_py "$tmp/info" 'j["region-size"]') || return 1
	echo "region-count $count, region-size $size"
	[ "$count" -gt 0 ] && [ "$size" -gt 0 ]
}
tap_check "cli.py --do info-get decodes the layout" info_ok
count=$(jq_py "$tmp/info" 'j["region-count"]' 2>/dev/null || echo 0)

# ---- 2. the dump
ynl --dump region-get > "$tmp/dump" 2>&1
dump_rc=$?
dump_ok() {
	[ "$dump_rc" = 0 ] || { cat "$tmp/dump"; return 1; }
	jq_py "$tmp/dump" '
(lambda ids: "%d regions, ids %s" % (len(ids), ids) if ids and ids == sorted(set(ids)) and
 all(k in r for r in j for k in ("id", "start-pfn", "spanned-pages", "managed-pages",
                                 "free-pages", "state", "zone"))
 else 1/0)([r["id"] for r in j])' || return 1
	n=$(jq_py "$tmp/dump" 'len(j)')
	[ "$n" -le "$count" ] || { echo "$n regions listed but region-count is $count"; return 1; }
}
tap_check "cli.py --dump region-get lists sorted regions with all attributes" dump_ok
nregions=$(jq_py "$tmp/dump" 'len(j)' 2>/dev/null || echo -1)

# ---- 3. the same number of regions as the libmnl client sees
bin=${REGIONPM_TEST_BIN:-}
if [ -z "$bin" ]; then
	for b in "$top/build/tests/regionpm_test" "$top/build/regionpm_test" /tmp/regionpm_test; do
		[ -x "$b" ] && { bin=$b; break; }
	done
fi
if [ -n "$bin" ] && [ -x "$bin" ]; then
	same_count() {
		local mnl
		mnl=$("$bin" --count-regions) || return 1
		echo "cli.py: $nregions regions, libmnl: $mnl"
		[ "$mnl" = "$nregions" ]
	}
	tap_check "cli.py and the libmnl dump list as many regions" same_count
else
	tap_skip "cli.py and the libmnl dump list as many regions" "no regionpm_test binary (set REGIONPM_TEST_BIN)"
fi

# ---- 4. managed pages add up to MemTotal
memtotal_ok() {
	local sum total
	sum=$(jq_py "$tmp/dump" 'sum(r["managed-pages"] for r in j)') || return 1
	total=$(( $(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo) * 1024 / $(getconf PAGESIZE) ))
	echo "sum of managed-pages $sum, MemTotal $total pages"
	[ "$sum" = "$total" ]
}
tap_check "managed-pages over all regions add up to MemTotal" memtotal_ok

# ---- 5./6. do region-get on region 0, with and without the detail nest
first=$(jq_py "$tmp/dump" 'j[0]["id"]' 2>/dev/null || echo 0)
id0=0
[ "$first" != 0 ] && id0=$first	# region 0 always has memory on x86
region_do_ok() {
	ynl --do region-get --json "{\"id\": $id0}" > "$tmp/do" 2>&1 || { cat "$tmp/do"; return 1; }
	jq_py "$tmp/do" '("region %d, start-pfn %d, %s" % (j["id"], j["start-pfn"], j["state"])
                          if j["id"] == '"$id0"' and "detail" not in j else 1/0)'
}
tap_check "cli.py --do region-get --json '{\"id\": $id0}'" region_do_ok
detail_ok() {
	ynl --do region-get --json "{\"id\": $id0, \"scan\": true}" > "$tmp/detail" 2>&1 ||
		{ cat "$tmp/detail"; return 1; }
	jq_py "$tmp/detail" 'j["detail"] if "free" in j["detail"] and "anon" in j["detail"] else 1/0'
}
tap_check "region-get with scan returns the detail nest" detail_ok

# ---- 7. a region past the table is an error, not a crash
missing_ok() {
	ynl --do region-get --json "{\"id\": $count}" > "$tmp/missing" 2>&1 &&
		{ echo "region $count (past region-count) was returned"; cat "$tmp/missing"; return 1; }
	cat "$tmp/missing"
	grep -Eq "No such file or directory|Numerical result out of range" "$tmp/missing"
}
tap_check "region-get of id $count (past region-count) fails with ENOENT or ERANGE" missing_ok

# ---- 8. unprivileged users get EPERM
# (the kernel tree usually sits under root's 0700 home: run a readable copy)
if ! command -v setpriv > /dev/null; then
	tap_skip "cli.py as nobody gets EPERM" "no setpriv"
else
	eperm_ok() {
		local pub=$tmp/pub s=(--no-schema)

		mkdir -p "$pub" && cp -r "$YNL_DIR/cli.py" "$YNL_DIR/lib" "$SPEC" "$pub/" || return 1
		[ -r "$SCHEMA" ] && cp "$SCHEMA" "$pub/" && s=(--schema "$pub/${SCHEMA##*/}")
		chmod 755 "$tmp" && chmod -R a+rX "$pub" || return 1
		(cd / && setpriv --reuid=65534 --regid=65534 --clear-groups \
			env PYTHONDONTWRITEBYTECODE=1 "$PY" "$pub/cli.py" \
			--spec "$pub/${SPEC##*/}" "${s[@]}" --do info-get) > "$tmp/eperm" 2>&1 &&
			{ echo "info-get succeeded as nobody"; cat "$tmp/eperm"; return 1; }
		grep -q "Operation not permitted" "$tmp/eperm" || { cat "$tmp/eperm"; return 1; }
		echo "refused: $(grep -m1 "Operation not permitted" "$tmp/eperm")"
	}
	tap_check "cli.py as nobody gets EPERM" eperm_ok
fi

# ---- 9. a YNL subscriber gets region-compact-ntf equal to the reply
pageblock=$(awk '/^Page block order:/ { print 2 ^ $4 }' /proc/pagetypeinfo 2>/dev/null)
compact_ntf_ok() {
	"$PY" - "$YNL_DIR" "$SPEC" "${SCHEMA}" "${pageblock:-512}" <<'EOF'
import os, sys, time
ynl_dir, spec, schema, pb = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
sys.path.insert(0, ynl_dir)
from lib import YnlFamily

# Two sockets: 6.12's ynl.py cannot take a notification that arrives on the
# socket it is waiting on for a reply.
schema = schema if os.access(schema, os.R_OK) else ""
ynl = YnlFamily(spec, schema)
listener = YnlFamily(spec, schema)
listener.ntf_subscribe("events")
regions = [r for r in ynl.dump("region-get", {})
           if r["state"] == "active" and r["spanned-pages"] >= 4 * pb]
if not regions:
    sys.exit("no active region of 4 pageblocks")
r = regions[-1]
req = {"id": r["id"], "start-pfn": r["start-pfn"], "nr-pages": pb,
       "mode": "migrate", "budget": pb}
reply = ynl.do("region-compact", req)
print("request", req)
print("reply  ", reply)
deadline = time.time() + 3
while True:
    listener.check_ntf()
    ntf = [m["msg"] for m in listener.async_msg_queue
           if m["name"] == "region-compact-ntf" and m["msg"].get("id") == r["id"]]
    if ntf or time.time() > deadline:
        break
    time.sleep(0.1)
print("ntf    ", ntf[0] if ntf else None)
print("all notifications:", [m["name"] for m in listener.async_msg_queue])
sys.exit(0 if ntf and ntf[0] == reply else 1)
EOF
}
tap_check "a YNL subscriber gets region-compact-ntf equal to the reply" compact_ntf_ok

tap_done
