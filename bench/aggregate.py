#!/usr/bin/env python3
"""Aggregate the per-run JSON of the benchmark (bench/guest-run.sh), print
one table per workload x size with every configuration side by side, write
bench/results/<stamp>.json and latest.json (+ latest.txt) and draw the plot
of empty regions over time (gnuplot).

    aggregate.py RUNDIR STAMP OUTDIR

RUNDIR holds <workload>-<size>-<config>.json files.  The bounds and ratios
are computed here from the judge's per-region snapshots (kpageflags-regions
-j), taken at the end of the frees and 30, 60 and 120 s after them:

  simple bound  regions - ceil(used pages / region pages)
  kept bound    the simple bound with the free pages the kernel keeps (per
                zone its high watermark plus largest lowmem reserve, from
                /proc/zoneinfo at the snapshot) counted as used: no packing
                fills them without kswapd evicting cache to restore them
  strict bound  regions holding slab, page-table or reserved pages are kept
                as they are, the used pages of all other regions are packed:
                regions - kept - ceil(their used pages / region pages)
                (issue 9's "strict" bound; the judge calls it bound-tight)

and the daemon's work against what it achieved: pages it moved (migrated +
dropped, its own counters) from the end of the frees to the end, against the
pages resident at the end of the frees in the regions that were empty at the
end.

The modelled power is the DRAM
background power model of regionpm(7) ("The DRAM power model"), replicated
here (daemon/power-model.[ch] is the daemon's copy): a region of S bytes
counts as S / 1 GiB Micron MT40A1G8 DDR4-2400 devices at VDD 1.2 V and draws
  in use  IDD3N + I_ref   (43 mA + 9.3 mA per device)
  empty   IDD2P + I_ref   (25 mA + 9.3 mA)
  parked  IDD6N           (30 mA)
with I_ref = (IDD5B - IDD3N) * tRFC1 / tREFI.  It is a model, not a
measurement, and every output says so.
"""
import glob
import json
import math
import os
import shutil
import subprocess
import sys

# regionpm(7), "The DRAM power model"
IDD3N, IDD2P, IDD6N = 43.0, 25.0, 30.0
IDD5B = (2475.0 - 9 * 25.0) / 9
TRFC1, TREFI, VDD = 350.0, 7800.0, 1.2
I_REF = (IDD5B - IDD3N) * TRFC1 / TREFI
GIB = 1 << 30
MW_PER_GIB = {"in_use": (IDD3N + I_REF) * VDD, "empty": (IDD2P + I_REF) * VDD, "parked": IDD6N * VDD}

CONFIGS = ["stock", "proactive", "naive", "damon", "bias", "regionpmd", "movable",
           "regionpmd-stock", "offline-peer"]
LABEL = {"stock": "(a) stock", "proactive": "(b) proactive compaction", "naive": "(c) naive drop+compact",
         "damon": "(d) DAMON_RECLAIM", "bias": "(e) bias alone", "regionpmd": "(f) regionpmd",
         "movable": "(g) regionpmd, movablecore=50%",
         "regionpmd-stock": "(h) regionpmd, stock backend", "offline-peer": "(i) offline peer"}
SHORT = {"stock": "(a) stock", "proactive": "(b) proactive", "naive": "(c) naive",
         "damon": "(d) DAMON", "bias": "(e) bias", "regionpmd": "(f) regionpmd",
         "movable": "(g) movable", "regionpmd-stock": "(h) stock bknd",
         "offline-peer": "(i) offl. peer"}
WORKLOADS = ["fragment", "fileserver", "database", "vmhost"]


def model_power(regions, region_bytes, parked_regions):
    """Modelled background power (mW) of a region list from the judge: empty
    regions draw the 'empty' state; the highest `parked_regions` empty ones
    (MemTotal lowered by parking) draw the 'parked' state."""
    total = 0.0
    empty_ids = [r["id"] for r in regions if r["free"] == r["present"]]
    parked = set(sorted(empty_ids)[len(empty_ids) - parked_regions:]) if parked_regions else set()
    for r in regions:
        gib = r["present"] * 4096 / GIB
        if r["free"] == r["present"]:
            state = "parked" if r["id"] in parked else "empty"
        else:
            state = "in_use"
        total += gib * MW_PER_GIB[state]
    return total


def all_in_use_power(regions):
    return sum(r["present"] * 4096 / GIB * MW_PER_GIB["in_use"] for r in regions)


def down_fraction(samples):
    """Time-weighted share of regions empty (could be powered down)."""
    if len(samples) < 2:
        return None
    area = 0.0
    for a, b in zip(samples, samples[1:]):
        area += (b["t"] - a["t"]) * a["empty"] / a["regions"]
    span = samples[-1]["t"] - samples[0]["t"]
    return area / span if span > 0 else None



def region_pages(region_bytes):
    return region_bytes // 4096


def ceil_div(a, b):
    return -(-a // b)


def bounds(regions, region_bytes):
    """Bounds on the empty regions of one judge snapshot (list of
    {id, present, free, unmovable, kernel, used})."""
    rp = region_pages(region_bytes)
    present = [r for r in regions if r["present"]]
    used = sum(r["present"] - r["free"] for r in present)
    kept = [r for r in present if r["unmovable"]]
    movable_used = sum(r["present"] - r["free"] for r in present if not r["unmovable"])
    return {
        "regions": len(present),
        "empty": sum(1 for r in present if r["free"] == r["present"]),
        "simple": len(present) - ceil_div(used, rp),
        "strict": max(0, len(present) - len(kept) - ceil_div(movable_used, rp)),
        "with_unmovable": len(kept),
    }


def resident_in_emptied(before, after):
    """Pages in use at `before` in the regions that are empty at `after`
    (and were not empty before)."""
    empty_after = {r["id"] for r in after if r["present"] and r["free"] == r["present"]}
    return sum(r["present"] - r["free"] for r in before if r["id"] in empty_after)


def unmovable_per_node(regions, region_bytes, node_of_region):
    """Issue 10: per node, regions holding slab/page-table/reserved pages and
    the limit ceil(unmovable pages / region pages) + 1."""
    rp = region_pages(region_bytes)
    per = {}
    for r in regions:
        if not r["present"]:
            continue
        n = node_of_region.get(str(r["id"]), 0)
        d = per.setdefault(n, {"regions": 0, "pages": 0})
        d["regions"] += 1 if r["unmovable"] else 0
        d["pages"] += r["unmovable"]
    return {n: {"regions": d["regions"], "unmovable_pages": d["pages"],
                "limit": ceil_div(d["pages"], rp) + 1} for n, d in sorted(per.items())}


def daemon_rates(a, b, clk_tck):
    """Wakeups (context switches) per minute and CPU % of one core between
    two snapshots' daemon counters."""
    if not a or not b or a.get("daemon_ctxt") is None or b.get("daemon_ctxt") is None:
        return None, None
    dt = b["t"] - a["t"]
    if dt <= 0:
        return None, None
    wake = (b["daemon_ctxt"] - a["daemon_ctxt"]) * 60.0 / dt
    cpu = (b["daemon_ticks"] - a["daemon_ticks"]) / float(clk_tck) / dt * 100.0
    return round(wake, 1), round(cpu, 2)


MARKS = ("30", "60", "120")


def derive(r, stock):
    """Everything the table shows, from one run (and the stock run of the
    same workload and size)."""
    rb = r["region_bytes"]
    snaps = r.get("snap", {})
    d = {"marks": {}}
    for m in MARKS + ("end",):
        s = snaps.get(m)
        if not s:
            continue
        b = bounds(s["regions"], rb)
        b["ratio_strict"] = round(b["empty"] / b["strict"], 3) if b["strict"] else None
        b["ratio_simple"] = round(b["empty"] / b["simple"], 3) if b["simple"] else None
        # The judge's bound-kept: the simple bound with the free pages the
        # kernel keeps (its watermarks and lowmem reserves) counted as used;
        # in runs from before the bench passed them it equals bound-simple.
        k = (s.get("judge") or {}).get("bound_kept")
        b["kept"] = k
        b["ratio_kept"] = round(b["empty"] / k, 3) if k else None
        d["marks"][m] = b
    # held: the lowest empty/strict from +60 s to the end (summary samples
    # and snapshots)
    tf = snaps.get("free", {}).get("t")
    held = [v["ratio_strict"] for m, v in d["marks"].items() if m in ("60", "120", "end")
            and v["ratio_strict"] is not None]
    if tf is not None:
        held += [s["empty"] / s["bound_tight"] for s in r.get("samples", [])
                 if s["t"] >= tf + 60 and s["bound_tight"]]
    d["held_min_ratio"] = round(min(held), 3) if held else None
    # work done after the frees against the regions it emptied
    f, e = snaps.get("free"), snaps.get("end")
    if f and e:
        if f.get("daemon_migrated") is not None and e.get("daemon_migrated") is not None:
            moved = (e["daemon_migrated"] - f["daemon_migrated"]) + (e["daemon_dropped"] - f["daemon_dropped"])
            d["moved_source"] = "daemon"
        else:
            moved = (e["pgmigrate_success"] - f["pgmigrate_success"]) + ((e.get("dropped") or 0) - (f.get("dropped") or 0))
            d["moved_source"] = "vmstat"
        d["moved_after_free"] = moved
        d["resident_emptied"] = resident_in_emptied(f["regions"], e["regions"])
        d["moved_ratio"] = round(moved / d["resident_emptied"], 3) if d["resident_emptied"] else None
        d["unmovable_per_node"] = unmovable_per_node(e["regions"], rb, r.get("node_of_region", {}))
    d["wakeups_per_min"], d["cpu_pct"] = daemon_rates(snaps.get("60"), snaps.get("end"), r.get("clk_tck", 100))
    hs = r.get("hot_set_bytes") or 0
    d["hot_read_pct"] = round(r["hot_sectors_read"] * 512 * 100.0 / hs, 3) if hs else None
    ph = r.get("phase", {})

    def rel(a, b):
        return round(a / b, 3) if a is not None and b else None
    sph = (stock or {}).get("phase", {})
    d["fill_rel"] = rel(ph.get("fill", {}).get("secs"), sph.get("fill", {}).get("secs"))
    d["free_rel"] = rel(ph.get("free", {}).get("secs"), sph.get("free", {}).get("secs"))
    d["hot_rel"] = rel(r.get("hot_rate"), (stock or {}).get("hot_rate"))
    d["sectors_rel"] = rel(r.get("sectors_read_total"), (stock or {}).get("sectors_read_total"))
    parked = max(0, (r["mem_total_kb_boot"] - r["mem_total_kb_end"]) * 1024 // rb)
    d["parked_regions_end"] = parked
    d["model_mw_end"] = round(model_power(r["end_regions"], rb, parked), 1)
    d["model_mw_all_in_use"] = round(all_in_use_power(r["end_regions"]), 1)
    d["model_down_fraction"] = down_fraction(r.get("samples", []))
    return d


def load_runs(rundir):
    """{workload: {size: {config: run}}} from <workload>-<size>-<config>.json."""
    runs = {}
    for path in sorted(glob.glob(os.path.join(rundir, "*.json"))):
        parts = os.path.basename(path)[:-5].split("-", 2)
        if len(parts) != 3:
            continue
        w, size, cfg = parts
        slot = runs.setdefault(w, {}).setdefault(size, {})
        try:
            with open(path) as f:
                slot[cfg] = json.load(f)
        except (OSError, ValueError) as e:
            slot[cfg] = {"config": cfg, "error": str(e) or "empty output"}
    return runs


def workload_key(w):
    return (WORKLOADS.index(w) if w in WORKLOADS else len(WORKLOADS), w)


def size_key(s):
    return float(s.rstrip("GMgm"))


def fmt_num(v, nd=2):
    if v is None:
        return "-"
    if isinstance(v, float):
        return ("%%.%df" % nd) % v
    return str(v)


def table(w, size, by_cfg):
    cfgs = [c for c in CONFIGS if c in by_cfg] + sorted(c for c in by_cfg if c not in CONFIGS)
    ok = {c: by_cfg[c] for c in cfgs if "error" not in by_cfg[c]}
    lines = []
    any_r = next(iter(ok.values()), None)
    if any_r:
        lines.append("%s, %s guest, %d x %d MiB regions; hot phase %.0f s, snapshots 30/60/120 s after the frees"
                     % (w, size, any_r["end"]["present_regions"], any_r["region_bytes"] >> 20,
                        any_r.get("phase", {}).get("hot", {}).get("secs", 0)))
    else:
        lines.append("%s, %s guest" % (w, size))
    rows = []   # (label, cells); laid out at the end, columns as wide as their widest cell

    def row(label, fn):
        cells = []
        for c in cfgs:
            r = by_cfg[c]
            if "error" in r:
                cells.append("failed")
                continue
            try:
                v = fn(r, r["_d"])
            except (KeyError, TypeError, ZeroDivisionError):
                v = None
            cells.append("-" if v is None else str(v))
        rows.append((label, cells))

    def at3(key, nd=2):
        return lambda r, d: "/".join(fmt_num(d["marks"][m][key], nd) if m in d["marks"] else "-" for m in MARKS)

    def with_rel(v, relv, nd=0):
        if v is None:
            return None
        s = fmt_num(v, nd) if not isinstance(v, float) or nd else "%.0f" % v
        return s + ("" if relv is None else " %.2fx" % relv)

    row("empty regions +30/+60/+120 s", at3("empty"))
    row("strict bound +30/+60/+120", at3("strict"))
    row("simple bound +30/+60/+120", at3("simple"))
    row("empty/strict +30/+60/+120", at3("ratio_strict"))
    row("empty/simple +30/+60/+120", at3("ratio_simple"))
    row("kept bound (reserve free) +30/+60/+120", at3("kept"))
    row("empty/kept +30/+60/+120", at3("ratio_kept"))
    row("empty/strict lowest from +60 (>=0.95)", lambda r, d: fmt_num(d["held_min_ratio"]))
    row("pages moved after frees (a)", lambda r, d: "%d%s" % (d["moved_after_free"],
                                                              "" if d["moved_source"] == "daemon" else "v"))
    row("resident in regions emptied (b)", lambda r, d: d["resident_emptied"])
    row("moved/resident a/b (<=1.25)", lambda r, d: fmt_num(d["moved_ratio"]))
    row("hot-set read from disk % (<=1)", lambda r, d: fmt_num(d["hot_read_pct"]))
    row("sectors read, whole run (x stock)", lambda r, d: with_rel(r["sectors_read_total"], d["sectors_rel"]))
    row("fill s (x stock, <=1.05)", lambda r, d: with_rel(r["phase"]["fill"]["secs"], d["fill_rel"], 0))
    row("free s (x stock, <=1.05)", lambda r, d: with_rel(r["phase"]["free"]["secs"], d["free_rel"], 0))
    unit = (any_r or {}).get("hot_unit") or "work"
    row("hot phase %s/s (x stock)" % ("MiB" if unit == "bytes" else unit),
        lambda r, d: with_rel(r["hot_rate"] / (1 << 20) if r.get("hot_unit") == "bytes" else r["hot_rate"],
                              d["hot_rel"], 0))
    row("sectors read fill/free/hot", lambda r, d: "%d/%d/%d" % (r["phase"]["fill"]["sectors"],
                                                                r["phase"]["free"]["sectors"],
                                                                r["phase"]["hot"]["sectors"]))
    # Where a slower fill lost its time (runs before these counters: "-").
    row("fill: migrated/keeper/stolen pages", lambda r, d: "%d/%d/%d" % (
        r["phase"]["fill"]["pgmigrate"], r["phase"]["fill"]["front_moved"],
        r["phase"]["fill"]["pgsteal"]))
    row("fill: reclaim/compact stalls, PSI ms", lambda r, d: "%d/%d/%d" % (
        r["phase"]["fill"]["allocstall"], r["phase"]["fill"]["compact_stall"],
        r["phase"]["fill"]["psi_some_us"] // 1000))
    row("fill: daemon CPU s", lambda r, d: None if r.get("clk_tck") is None else
        "%.2f" % (r["phase"]["fill"]["daemon_ticks"] / r["clk_tck"]))
    row("Cached MiB fill end/end", lambda r, d: "%d/%d" % (r["fill_end"]["cached_kb"] >> 10,
                                                          r["snap"]["end"]["cached_kb"] >> 10))
    row("MemAvailable MiB fill end/end", lambda r, d: "%d/%d" % (r["fill_end"]["mem_available_kb"] >> 10,
                                                                r["snap"]["end"]["mem_available_kb"] >> 10))
    row("unmovable regions/limit per node", lambda r, d: " ".join(
        "%d/%d" % (v["regions"], v["limit"]) for v in d["unmovable_per_node"].values()))
    row("daemon wakeups/min +60..end", lambda r, d: fmt_num(d["wakeups_per_min"], 1))
    row("daemon CPU % of a core +60..end", lambda r, d: fmt_num(d["cpu_pct"], 2))
    row("daemon CPU s user+sys, whole run", lambda r, d: None if r.get("daemon_cpu_user_s") is None else
        "%.2f" % (r["daemon_cpu_user_s"] + r["daemon_cpu_sys_s"]))
    row("daemon migrated/dropped, whole run", lambda r, d: None if r.get("daemon_migrated") is None else
        "%d/%d" % (r["daemon_migrated"], r["daemon_dropped"]))
    row("pgmigrate_success, whole run", lambda r, d: r["pgmigrate_success"])
    row("parked regions at end", lambda r, d: d["parked_regions_end"])
    row("PSI some ms, whole run", lambda r, d: r["psi_some_us"] // 1000)
    row("model mW at end (model)", lambda r, d: "%.0f" % d["model_mw_end"])
    row("run s (guest)", lambda r, d: "%.0f" % r["run_secs"])
    widths = [max([len(SHORT.get(c, c))] + [len(cells[i]) for _, cells in rows]) + 2
              for i, c in enumerate(cfgs)]
    lines.append("%-40s" % "" + "".join("%*s" % (wd, SHORT.get(c, c)) for wd, c in zip(widths, cfgs)))
    for label, cells in rows:
        lines.append("%-40s" % label + "".join("%*s" % (wd, x) for wd, x in zip(widths, cells)))
    for c in cfgs:
        if "error" in by_cfg[c]:
            lines.append("  %s failed: %s" % (c, by_cfg[c]["error"][:100]))
        elif by_cfg[c].get("oom_kills"):
            lines.append("  %s: %d OOM kill(s)!" % (c, by_cfg[c]["oom_kills"]))
    lines.append("(v = pgmigrate_success + pages dropped, no daemon counters; hot-set reads = sectors "
                 "read during the hot phase / hot set size; model = regionpm(7) DRAM power model, not a "
                 "measurement)")
    return "\n".join(lines)


def main():
    rundir, stamp, outdir = sys.argv[1:4]
    runs = load_runs(rundir)
    blocks = []
    for w in sorted(runs, key=workload_key):
        for size in sorted(runs[w], key=size_key):
            by_cfg = runs[w][size]
            stock = by_cfg.get("stock")
            if stock is not None and "error" in stock:
                stock = None
            for cfg, r in by_cfg.items():
                if "error" in r:
                    continue
                try:
                    r["_d"] = derive(r, stock)
                except (KeyError, TypeError, ValueError) as e:
                    r["error"] = "cannot derive: %r" % e
            blocks.append(table(w, size, by_cfg))
            for r in by_cfg.values():
                if "_d" in r:
                    r["derived"] = r.pop("_d")
    text = "\n\n".join(blocks)
    print(text)

    os.makedirs(outdir, exist_ok=True)
    result = {"stamp": stamp, "model": {"source": "regionpm(7) The DRAM power model (Micron MT40A1G8 DDR4-2400)",
                                        "mw_per_gib": MW_PER_GIB, "note": "modelled, not measured"},
              "runs": runs, "table": text}
    out = os.path.join(outdir, stamp + ".json")
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
    shutil.copyfile(out, os.path.join(outdir, "latest.json"))
    with open(os.path.join(outdir, "latest.txt"), "w") as f:
        f.write(text + "\n")
    plot(runs, rundir, outdir, stamp)
    print("results: %s" % out)


def plot(runs, rundir, outdir, stamp):
    """One panel per workload x size, one line per configuration: empty
    regions over the seconds since the end of the frees."""
    if not shutil.which("gnuplot"):
        print("gnuplot not installed: no plot (make deps installs gnuplot-nox)")
        return
    datdir = os.path.join(rundir, "plot")
    os.makedirs(datdir, exist_ok=True)
    panels = [(w, s) for w in sorted(runs, key=workload_key) for s in sorted(runs[w], key=size_key)]
    cols = 2 if len(panels) > 1 else 1
    nrows = ceil_div(len(panels), cols)
    script = ['set terminal pngcairo size %d,%d font ",9"' % (700 * cols, 360 * nrows) if has_cairo()
              else 'set terminal png size %d,%d' % (700 * cols, 360 * nrows),
              'set output "%s"' % os.path.join(outdir, stamp + ".png"),
              "set termoption noenhanced",
              "set multiplot layout %d,%d" % (nrows, cols), "set key top left",
              "set xlabel 's since the end of the frees (negative: fill, free)'",
              "set ylabel 'empty regions (kpageflags)'", "set grid",
              "set yrange [0:*]", "set offsets 0, 0, 1, 0"]
    for w, size in panels:
        plots = []
        for cfg in CONFIGS + sorted(c for c in runs[w][size] if c not in CONFIGS):
            r = runs[w][size].get(cfg)
            if not r or "error" in r:
                continue
            tf = r.get("snap", {}).get("free", {}).get("t", 0)
            dat = os.path.join(datdir, "%s-%s-%s.dat" % (w, size, cfg))
            with open(dat, "w") as f:
                for s in r["samples"]:
                    f.write("%s %d %d\n" % (s["t"] - tf, s["empty"], s["bound_tight"]))
            plots.append("'%s' using 1:2 with lines title '%s'" % (dat, SHORT.get(cfg, cfg)))
        if plots:
            script.append("set title '%s, %s'" % (w, size))
            script.append("plot " + ", ".join(plots))
    script.append("unset multiplot")
    subprocess.run(["gnuplot"], input="\n".join(script), text=True, check=False)
    png = os.path.join(outdir, stamp + ".png")
    if os.path.exists(png):
        shutil.copyfile(png, os.path.join(outdir, "latest.png"))
        print("plot: %s" % png)


def has_cairo():
    try:
        out = subprocess.run(["gnuplot", "-e", "set terminal"], capture_output=True, text=True).stderr
        return "pngcairo" in out
    except OSError:
        return False


if __name__ == "__main__":
    main()
