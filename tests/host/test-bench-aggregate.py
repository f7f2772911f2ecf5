#!/usr/bin/env python3
"""bench/aggregate.py's numbers (TAP): the simple and strict bounds, the
pages resident in the regions a run emptied, the per-node limit of issue 10,
the daemon's wakeup and CPU rates -- by hand-made cases, against the judge
(build/tools/kpageflags-regions on a synthetic /proc/kpageflags), and the
whole aggregation on two made-up runs."""
import json
import os
import random
import struct
import subprocess
import sys
import tempfile

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "bench"))
import aggregate  # noqa: E402

n = 0
failed = 0
print("TAP version 13")


def check(desc, cond, why=""):
    global n, failed
    n += 1
    if cond:
        print("ok %d - %s" % (n, desc))
    else:
        failed += 1
        print("not ok %d - %s" % (n, desc))
        for line in str(why).splitlines():
            print("#   " + line)


def skip(desc, reason):
    global n
    n += 1
    print("ok %d - %s # SKIP %s" % (n, desc, reason))


def reg(i, present, free, unmovable=0, kernel=0):
    return {"id": i, "present": present, "free": free, "unmovable": unmovable, "kernel": kernel,
            "used": present - free - unmovable - kernel}


RB = 100 * 4096          # 100 pages per region
# 6 regions: one all free, one with slab, four partly used
regions = [reg(0, 100, 100), reg(1, 100, 90, unmovable=1), reg(2, 100, 50),
           reg(3, 100, 70, kernel=5), reg(4, 100, 100), reg(5, 100, 61)]
b = aggregate.bounds(regions, RB)
# used = 0 + 10 + 50 + 30 + 0 + 39 = 129 -> ceil(129/100) = 2 -> simple 6 - 2 = 4
check("simple bound = regions - ceil(used / region pages)", b["simple"] == 4, b)
# kept: region 1; movable used elsewhere 50 + 30 + 39 = 119 -> 2 regions; 6 - 1 - 2 = 3
check("strict bound keeps regions with slab/page tables/reserved, packs the rest",
      b["strict"] == 3, b)
check("empty regions and regions with unmovable pages counted", b["empty"] == 2 and b["with_unmovable"] == 1, b)
check("holes (present 0) are not regions",
      aggregate.bounds(regions + [reg(6, 0, 0)], RB)["regions"] == 6)
every = [reg(i, 100, 99, unmovable=1) for i in range(4)]
check("strict bound never negative; 0 when every region holds slab",
      aggregate.bounds(every, RB)["strict"] == 0)
# region 0 shorter than a region (a hole at the start): bounds use full region pages
short = [reg(0, 60, 0), reg(1, 100, 100), reg(2, 100, 100)]
check("a partial region's pages still need a whole region",
      aggregate.bounds(short, RB)["simple"] == 2 and aggregate.bounds(short, RB)["strict"] == 2)

after = [reg(0, 100, 100), reg(1, 100, 90, unmovable=1), reg(2, 100, 100),
         reg(3, 100, 40, kernel=5), reg(4, 100, 100), reg(5, 100, 100)]
check("resident in emptied regions = used pages before of regions empty after",
      aggregate.resident_in_emptied(regions, after) == 50 + 39,
      aggregate.resident_in_emptied(regions, after))

nodes = {"0": 0, "1": 0, "2": 0, "3": 1, "4": 1, "5": 1}
two = [reg(0, 100, 80, unmovable=20), reg(1, 100, 50, unmovable=101 - 100), reg(2, 100, 100),
       reg(3, 100, 0, unmovable=100), reg(4, 100, 99, unmovable=1), reg(5, 100, 100)]
per = aggregate.unmovable_per_node(two, RB, nodes)
check("issue 10: per node regions with unmovable pages vs ceil(pages / region) + 1",
      per == {0: {"regions": 2, "unmovable_pages": 21, "limit": 2},
              1: {"regions": 2, "unmovable_pages": 101, "limit": 3}}, per)

w, c = aggregate.daemon_rates({"t": 100.0, "daemon_ctxt": 10, "daemon_ticks": 50},
                              {"t": 160.0, "daemon_ctxt": 40, "daemon_ticks": 56}, 100)
check("wakeups per minute and CPU % of one core over a window", (w, c) == (30.0, 0.1), (w, c))
check("no daemon: no rates", aggregate.daemon_rates({"t": 1, "daemon_ctxt": None}, {"t": 2}, 100) == (None, None))

# The same bounds as the judge, on a synthetic kpageflags file.
judge = os.path.join(TOP, "build", "tools", "kpageflags-regions")
if os.access(judge, os.X_OK):
    rng = random.Random(4)
    BUDDY, SLAB, PGTABLE, RESERVED, LRU, ANON, NOPAGE = 10, 7, 26, 32, 5, 12, 20
    region_pages = 64
    ok_all, why = True, ""
    for trial in range(20):
        nreg = rng.randint(3, 12)
        flags = []
        for r in range(nreg):
            kind = rng.random()
            for p in range(region_pages):
                x = rng.random()
                if kind < 0.2 or x < 0.4:
                    f = 1 << BUDDY
                elif x < 0.42 and kind > 0.6:
                    f = 1 << rng.choice([SLAB, PGTABLE, RESERVED])
                elif x < 0.45:
                    f = 0          # a kernel page without user flags
                else:
                    f = (1 << LRU) | (1 << ANON)
                flags.append(f)
        # a hole at the start, like pfn 0 on x86
        flags[0] = 1 << NOPAGE
        with tempfile.NamedTemporaryFile(delete=False) as tf:
            tf.write(b"".join(struct.pack("<Q", f) for f in flags))
        out = subprocess.run([judge, "-j", "-s", str(region_pages * 4096), "-f", tf.name,
                              "-m", str(len(flags))], capture_output=True, text=True)
        os.unlink(tf.name)
        j = json.loads(out.stdout)
        mine = aggregate.bounds(j["regions"], region_pages * 4096)
        theirs = {"simple": j["bound_simple"], "strict": j["bound_tight"], "empty": j["empty_regions"],
                  "with_unmovable": j["regions_with_unmovable"], "regions": j["present_regions"]}
        if mine != theirs:
            ok_all, why = False, "trial %d: aggregate %s, judge %s" % (trial, mine, theirs)
            break
    check("bounds agree with the judge's bound-simple and bound-tight on 20 random layouts", ok_all, why)

    # A hotplugged block's own memmap (memory_hotplug.memmap_on_memory):
    # PG_vmemmap_self_hosted is PG_owner_priv_1 (KPF_OWNER_PRIVATE, 37) on
    # a page that is nothing else: reserved.  The same bit on a user page
    # (PG_checked, PG_swapcache) is not.
    OWNER_PRIVATE = 37
    flags = ([1 << OWNER_PRIVATE] * 4 + [1 << BUDDY] * 60 +
             [(1 << LRU) | (1 << ANON) | (1 << OWNER_PRIVATE)] * 4 + [1 << BUDDY] * 60)
    with tempfile.NamedTemporaryFile(delete=False) as tf:
        tf.write(b"".join(struct.pack("<Q", f) for f in flags))
    out = subprocess.run([judge, "-j", "-s", str(region_pages * 4096), "-f", tf.name,
                          "-m", str(len(flags))], capture_output=True, text=True)
    os.unlink(tf.name)
    rs = json.loads(out.stdout)["regions"]
    got = [(r["unmovable"], r["reserved"], r["kernel"], r["used"]) for r in rs]
    check("the judge counts a block's own memmap as reserved, not a user page with the same bit",
          got == [(4, 4, 0, 0), (0, 0, 0, 4)], "got %s" % got)

    # Hugetlb pages (KPF_HUGE, 17), free in the pool (no other flag) or
    # mapped, are used pages and counted in "huge" (daemon-swap's
    # allowance for regions of free pool pages reads it); a THP is not.
    HUGE, THP, COMPOUND_HEAD = 17, 22, 15
    flags = ([1 << HUGE] * 8 + [(1 << HUGE) | (1 << LRU)] * 8 + [1 << BUDDY] * 48 +
             [(1 << THP) | (1 << COMPOUND_HEAD) | (1 << ANON) | (1 << LRU)] * 8 +
             [(1 << LRU) | (1 << ANON)] * 8 + [1 << BUDDY] * 48)
    with tempfile.NamedTemporaryFile(delete=False) as tf:
        tf.write(b"".join(struct.pack("<Q", f) for f in flags))
    js = subprocess.run([judge, "-j", "-s", str(region_pages * 4096), "-f", tf.name,
                         "-m", str(len(flags))], capture_output=True, text=True)
    table = subprocess.run([judge, "-s", str(region_pages * 4096), "-f", tf.name,
                            "-m", str(len(flags))], capture_output=True, text=True)
    os.unlink(tf.name)
    got = [(r["used"], r["huge"], r["free"]) for r in json.loads(js.stdout)["regions"]]
    rows = [l.split() for l in table.stdout.splitlines()[1:-1]]
    check("the judge counts hugetlb pages (free pool pages too) in column 8 and in JSON, not THPs",
          got == [(16, 16, 48), (16, 0, 48)] and [r[7] for r in rows] == ["16", "0"] and
          table.stdout.split()[7] == "huge", "got %s, table %s" % (got, table.stdout))
else:
    skip("bounds agree with the judge", "build/tools/kpageflags-regions not built (make)")


# The whole aggregation on two made-up runs of one workload and size.
def run(cfg, empties, daemon):
    def snap(t, empty_ids, mig):
        rs = [reg(i, 100, 100 if i in empty_ids else 40, unmovable=1 if i == 0 else 0) for i in range(8)]
        s = {"t": t, "regions": rs, "judge": {"present_regions": 8, "bound_kept": 3},
             "pgmigrate_success": mig, "dropped": 0, "cached_kb": 500 << 10,
             "mem_available_kb": 900 << 10, "mem_total_kb": 2 << 20,
             "daemon_migrated": mig if daemon else None, "daemon_dropped": 0 if daemon else None,
             "daemon_ctxt": int(t) if daemon else None, "daemon_ticks": int(t) if daemon else None}
        return s
    snaps = {"free": snap(100.0, {7}, 0), "30": snap(130.0, empties[0], 60),
             "60": snap(160.0, empties[1], 120), "120": snap(220.0, empties[2], 180),
             "end": snap(221.0, empties[2], 180)}
    return {"config": cfg, "workload": "fileserver", "hot_secs": 125, "run_secs": 230.0,
            "region_bytes": RB, "mem_total_kb_boot": 2 << 20, "mem_total_kb_end": 2 << 20,
            "snap": snaps, "end": {"present_regions": 8}, "end_regions": snaps["end"]["regions"],
            "samples": [{"t": 100.0 + 3 * i, "phase": "hot", "empty": len(empties[2]), "regions": 8,
                         "with_unmovable": 1, "bound_simple": 4, "bound_tight": 4, "mem_total_kb": 2 << 20}
                        for i in range(40)],
            "phase": {"fill": {"secs": 60.0, "sectors": 10}, "free": {"secs": 5.0, "sectors": 0},
                      "hot": {"secs": 120.0, "sectors": 8}},
            "fill_end": {"cached_kb": 600 << 10, "mem_available_kb": 800 << 10},
            "hot_rate": 1000.0, "hot_unit": "bytes", "hot_set_bytes": 4096 * 1000,
            "hot_sectors_read": 8, "sectors_read_total": 18, "pgmigrate_success": 180,
            "psi_some_us": 0, "clk_tck": 100, "node_of_region": {str(i): 0 for i in range(8)},
            "daemon_cpu_user_s": 0.5 if daemon else None, "daemon_cpu_sys_s": 1.0 if daemon else None,
            "daemon_migrated": 180 if daemon else None, "daemon_dropped": 0 if daemon else None}


with tempfile.TemporaryDirectory() as d:
    rundir, outdir = os.path.join(d, "runs"), os.path.join(d, "out")
    os.makedirs(rundir)
    json.dump(run("stock", [{7}, {7}, {7}], False), open(os.path.join(rundir, "fileserver-2G-stock.json"), "w"))
    json.dump(run("regionpmd", [{5, 6, 7}, {4, 5, 6, 7}, {4, 5, 6, 7}], True),
              open(os.path.join(rundir, "fileserver-2G-regionpmd.json"), "w"))
    open(os.path.join(rundir, "fileserver-2G-naive.json"), "w").close()   # a failed run
    out = subprocess.run([sys.executable, os.path.join(TOP, "bench", "aggregate.py"), rundir, "T", outdir],
                         capture_output=True, text=True)
    check("aggregate.py runs on made-up runs (one failed)", out.returncode == 0, out.stderr[-2000:])
    res = json.load(open(os.path.join(outdir, "T.json"))) if out.returncode == 0 else {}
    dd = res.get("runs", {}).get("fileserver", {}).get("2G", {}).get("regionpmd", {}).get("derived", {})
    # 8 regions, region 0 holds slab; at +120: empty 4..7 -> used = 4 * 60 = 240 -> simple 8 - 3 = 5,
    # strict: kept 1, movable used 3 * 60 = 180 -> 2 -> 8 - 1 - 2 = 5
    check("strict bound and ratio at +120 s from the snapshot",
          dd.get("marks", {}).get("120", {}).get("strict") == 5
          and dd["marks"]["120"]["ratio_strict"] == 0.8, dd.get("marks"))
    # the kept bound is the judge's (it knows the kernel's reserve); 4 empty of 3
    check("kept bound and ratio from the judge's bound_kept",
          dd.get("marks", {}).get("120", {}).get("kept") == 3
          and dd["marks"]["120"]["ratio_kept"] == 1.333, dd.get("marks"))
    # moved 180 after the frees; emptied 4, 5, 6 were used 60 each at the frees (7 was empty)
    check("moved/resident from the daemon's counters", dd.get("moved_after_free") == 180
          and dd.get("resident_emptied") == 180 and dd.get("moved_ratio") == 1.0, dd)
    check("wakeups per minute from +60 s to the end",
          dd.get("wakeups_per_min") == round((221 - 160) * 60.0 / 61.0, 1), dd.get("wakeups_per_min"))
    check("hot-set disk reads in % of the hot set", dd.get("hot_read_pct") == round(8 * 512 * 100.0 / 4096000, 3),
          dd.get("hot_read_pct"))
    txt = out.stdout
    check("one table, configurations side by side, the failed run named",
          "fileserver, 2G guest" in txt and "(a) stock" in txt and "(f) regionpmd" in txt and "failed" in txt, txt)

print("1..%d" % n)
sys.exit(1 if failed else 0)
