#!/usr/bin/env python3
"""Aggregate the per-run JSON of the benchmark (bench/guest-run.sh), print the
table, write bench/results/<stamp>.json and latest.json, and draw the plot of
empty regions over time (gnuplot).

    aggregate.py RUNDIR STAMP OUTDIR

RUNDIR holds <size>-<config>.json files.  The modelled power is the DRAM
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

CONFIGS = ["stock", "proactive", "naive", "damon", "bias", "regionpmd", "regionpmd-stock", "offline-peer"]
LABEL = {"stock": "(a) stock", "proactive": "(b) proactive compaction", "naive": "(c) naive drop+compact",
         "damon": "(d) DAMON_RECLAIM", "bias": "(e) bias alone", "regionpmd": "(f) regionpmd",
         "regionpmd-stock": "(g) regionpmd, stock bknd", "offline-peer": "(h) offline peer"}


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


def main():
    rundir, stamp, outdir = sys.argv[1:4]
    runs = {}
    for path in sorted(glob.glob(os.path.join(rundir, "*.json"))):
        name = os.path.basename(path)[:-5]
        size, cfg = name.split("-", 1)
        try:
            with open(path) as f:
                runs.setdefault(size, {})[cfg] = json.load(f)
        except (OSError, ValueError) as e:
            runs.setdefault(size, {})[cfg] = {"config": cfg, "error": str(e)}

    for size, by_cfg in runs.items():
        base = by_cfg.get("stock", {}).get("hot_mbps")
        for cfg, r in by_cfg.items():
            if "error" in r:
                continue
            rb = r["region_bytes"]
            parked = max(0, (r["mem_total_kb_boot"] - r["mem_total_kb_end"]) * 1024 // rb)
            r["parked_regions_end"] = parked
            r["model_mw_end"] = round(model_power(r["end_regions"], rb, parked), 1)
            r["model_mw_all_in_use"] = round(all_in_use_power(r["end_regions"]), 1)
            r["model_down_fraction"] = down_fraction(r["samples"])
            r["hot_rel"] = round(r["hot_mbps"] / base, 3) if base else None

    lines = []
    hdr = ("config", "empty", "b.simple", "ratio", "b.tight", "ratio", "unmov", "migrated",
           "dropped", "hot sect", "majflt", "hot rel", "PSI some ms", "model mW", "down frac")
    fmt = "%-26s %5s %8s %5s %7s %5s %5s %9s %8s %9s %6s %7s %11s %9s %9s"
    for size in sorted(runs, key=lambda s: int(s.rstrip("G"))):
        by_cfg = runs[size]
        any_r = next((r for r in by_cfg.values() if "error" not in r), None)
        if any_r:
            lines.append("%s guest, %d MiB regions, hot phase %d s (model = regionpm(7) DRAM power model, not a measurement)"
                         % (size, any_r["region_bytes"] >> 20, any_r["hot_secs"]))
        lines.append(fmt % hdr)
        for cfg in CONFIGS:
            r = by_cfg.get(cfg)
            if r is None:
                lines.append("%-26s (not run)" % LABEL[cfg])
                continue
            if "error" in r:
                lines.append("%-26s (failed: %s)" % (LABEL[cfg], r["error"][:60]))
                continue
            e = r["end"]
            f = lambda v: "-" if v is None else ("%.2f" % v if isinstance(v, float) else str(v))
            mig = r["pgmigrate_success"]
            lines.append(fmt % (LABEL[cfg], e["empty_regions"], e["bound_simple"], f(r["ratio_simple"]),
                                e["bound_tight"], f(r["ratio_tight"]), e["regions_with_unmovable"], mig,
                                r["dropped_pages"], r["hot_sectors_read"], r["hot_pgmajfault"],
                                f(r["hot_rel"]), r["psi_some_us"] // 1000,
                                "%.0f" % r["model_mw_end"], f(r["model_down_fraction"])))
            if cfg == "offline-peer":
                lines.append("%-26s peer: %s offline writes that succeeded; offline at end %d regions"
                             % ("", r["daemon_parks"], r["parked_regions_end"]))
            if cfg in ("regionpmd", "regionpmd-stock"):
                lines.append("%-26s daemon: CPU %ss user + %ss sys, max RSS %s kB; log: migrated %s dropped %s, %s parks; parked at end %d regions"
                             % ("", r["daemon_cpu_user_s"], r["daemon_cpu_sys_s"], r["daemon_maxrss_kb"],
                                r["daemon_migrated"], r["daemon_dropped"], r["daemon_parks"], r["parked_regions_end"]))
            if r.get("oom_kills"):
                lines.append("%-26s %d OOM kill(s)!" % ("", r["oom_kills"]))
        if any_r:
            lines.append("model: all regions in use would draw %.0f mW (model)" % any_r["model_mw_all_in_use"])
        lines.append("")
    table = "\n".join(lines)
    print(table)

    os.makedirs(outdir, exist_ok=True)
    result = {"stamp": stamp, "model": {"source": "regionpm(7) The DRAM power model (Micron MT40A1G8 DDR4-2400)",
                                        "mw_per_gib": MW_PER_GIB, "note": "modelled, not measured"},
              "runs": runs, "table": table}
    out = os.path.join(outdir, stamp + ".json")
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
    shutil.copyfile(out, os.path.join(outdir, "latest.json"))
    with open(os.path.join(outdir, "latest.txt"), "w") as f:
        f.write(table + "\n")

    # plot: one panel per size, one line per configuration
    if shutil.which("gnuplot"):
        datdir = os.path.join(rundir, "plot")
        os.makedirs(datdir, exist_ok=True)
        sizes = sorted(runs, key=lambda s: int(s.rstrip("G")))
        script = ['set terminal pngcairo size 1100,%d font ",10"' % (420 * len(sizes)) if has_cairo()
                  else 'set terminal png size 1100,%d' % (420 * len(sizes)),
                  'set output "%s"' % os.path.join(outdir, stamp + ".png"),
                  "set termoption noenhanced",
                  "set multiplot layout %d,1" % len(sizes), "set key outside right",
                  "set xlabel 'seconds since the run started (fill, then free, then hot phase)'", "set ylabel 'empty regions (kpageflags)'",
                  "set grid"]
        for size in sizes:
            plots = []
            for cfg in CONFIGS:
                r = runs[size].get(cfg)
                if not r or "error" in r:
                    continue
                dat = os.path.join(datdir, "%s-%s.dat" % (size, cfg))
                with open(dat, "w") as f:
                    for s in r["samples"]:
                        f.write("%s %d %d\n" % (s["t"], s["empty"], s["bound_tight"]))
                plots.append("'%s' using 1:2 with linespoints title '%s'" % (dat, LABEL[cfg]))
            if plots:
                rb = next(r for r in runs[size].values() if "error" not in r)["region_bytes"] >> 20
                script.append("set title '%s guest, %d MiB regions: empty regions over time (fill, free, hot phase)'"
                              % (size, rb))
                script.append("plot " + ", ".join(plots))
        script.append("unset multiplot")
        subprocess.run(["gnuplot"], input="\n".join(script), text=True, check=False)
        png = os.path.join(outdir, stamp + ".png")
        if os.path.exists(png):
            shutil.copyfile(png, os.path.join(outdir, "latest.png"))
            print("plot: %s" % png)
    else:
        print("gnuplot not installed: no plot (make deps installs gnuplot-nox)")
    print("results: %s" % out)


def has_cairo():
    try:
        out = subprocess.run(["gnuplot", "-e", "set terminal"], capture_output=True, text=True).stderr
        return "pngcairo" in out
    except OSError:
        return False


if __name__ == "__main__":
    main()
