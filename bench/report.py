#!/usr/bin/python3
"""Prints bench/run.sh's table (markdown) from its results folder.

Usage: /usr/bin/python3 bench/report.py RESULTS --threads N [--baseline DIR] [--stream SPEC] NAME...

RESULTS/NAME/ holds kiln_<round>.json and ort_<round>.json (the JSON line of `kiln bench --json`
and of tools/ort/bench.js --json, stderr in the matching .err), kiln_run.err and ort_run.err, and
compare.json from bench/compare_outputs.py. Each side's figure is its round with the lowest p50.
A quantized row (NAME@int8, NAME@int8-dynamic, NAME@bf16, NAME@fp16) also gets its p50 over kiln's fp32 p50 of NAME
when NAME ran too. Peak RSS is each side's peak_rss_mb (getrusage) in its best round; with
--baseline DIR (kiln_0.json and ort_0.json of a one-Identity model), each side's is net of what its
process costs there (kiln's binary and thread pool; node with onnxruntime-node), named in the
header. With --stream MODEL:NAME=LO..HI, RESULTS/stream/ holds kiln_<chunk>.json and
ort_<chunk>.json (`kiln bench --vary --json`, `bench.js --vary --json`, one seed per chunk): the
stream's table, p50/p99/max over every chunk's runs (nearest rank), the median of the per-draw
ratios, and plans made and reused.
Exits 0 when both sides ran every model (and the stream, the same draws on both) and the outputs
agree, 1 otherwise.
"""
import argparse
import datetime
import glob
import json
import os
import platform
import sys

from percentiles import percentiles


def last_line(path):
    try:
        with open(path) as f:
            lines = [l.strip() for l in f if l.strip()]
        return lines[-1] if lines else ""
    except OSError:
        return ""


def side_records(folder, side, key):
    """Per SIDE_<n>.json of folder, in order: (its JSON record, None), or (None, the error its
    .err file ends with) when it has no record with `key`."""
    for path in sorted(glob.glob(os.path.join(folder, f"{side}_*.json"))):
        try:
            rec = json.loads(last_line(path))
        except ValueError:
            rec = None
        if not rec or key not in rec:
            yield None, last_line(path[:-5] + ".err") or "no result"
        else:
            yield rec, None


def best_round(folder, side):
    """(record with the lowest p50, None) or (None, the error of the last failed round)."""
    best, error = None, "did not run"
    for rec, err in side_records(folder, side, "p50_ms"):
        if err:
            error = err
            continue
        if best is None or rec["p50_ms"] < best["p50_ms"]:
            best = rec
    return (best, None) if best else (None, error)


def outputs_verdict(folder):
    """('yes' | 'NO', note)."""
    try:
        with open(os.path.join(folder, "compare.json")) as f:
            c = json.loads(f.read())
        if c.get("agree"):
            if c.get("min_cosine", 1.0) < 1.0:
                return "yes", f"cosine {c['min_cosine']:.4f}"
            return "yes", f"max abs error {c['max_abs_error']:.2g}"
        return "NO", c.get("reason", "")
    except (OSError, ValueError):
        why = (last_line(os.path.join(folder, "kiln_run.err")) or
               last_line(os.path.join(folder, "ort_run.err")) or
               last_line(os.path.join(folder, "compare.err")))
        return "NO", why or "not compared"


def float_cosines(folder):
    """For a quantized row: 'against the float model: kiln C, ORT C' (each side's lowest cosine
    over the outputs), or '' when not measured."""
    got = {}
    for side, label in (("kiln", "kiln"), ("ort", "ONNX Runtime")):
        try:
            with open(os.path.join(folder, f"float_vs_{side}.json")) as f:
                got[label] = json.loads(f.read())["min_cosine"]
        except (OSError, ValueError, KeyError):
            pass
    if not got:
        return ""
    return "against the float model's outputs (cosine): " + ", ".join(f"{k} {v:.5f}" for k, v in got.items())


def machine():
    """The CPU's name, the features that decide kiln's kernels (VMs often name the CPU vaguely),
    and the core count."""
    model, flags = platform.processor() or "unknown CPU", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and not flags:
                    model = line.split(":", 1)[1].strip()
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    named = [("avx512f", "AVX-512"), ("avx512_vnni", "VNNI"), ("avx512_bf16", "AVX-512 BF16"),
             ("amx_int8", "AMX")]
    have = [n for f, n in named if f in flags] or (["AVX2"] if "avx2" in flags else [])
    return f"{model} ({', '.join(have) or 'no AVX2'}), {os.cpu_count()} cores"


def fmt_ms(rec, key):
    if not rec or key not in rec:
        return "-"
    v = rec[key]
    return f"{v:.3f}" if v < 1 else f"{v:.2f}" if v < 100 else f"{v:.1f}"


def fmt_mb(v):
    return "-" if v is None else f"{v:.0f}"


def baseline_rss(folder):
    """{side: peak RSS MB of the trivial model} for the sides that ran it."""
    out = {}
    for side in ("kiln", "ort"):
        rec, _ = best_round(folder, side) if folder else (None, None)
        if rec and "peak_rss_mb" in rec:
            out[side] = rec["peak_rss_mb"]
    return out
def stream_section(folder, spec):
    """(lines of the stream's table, ok)."""
    runs = {}
    plans = {"made": 0, "reused": 0, "planning_ms": 0.0}
    errors = []
    for side in ("kiln", "ort"):
        runs[side] = []
        for rec, err in side_records(folder, side, "stream"):
            if err:
                errors.append(f"- stream: {side} failed: {err}")
                continue
            runs[side] += rec["stream"]
            if side == "kiln":
                for k in plans:
                    plans[k] += rec["plans"][k]
    lines = [f"Variable-length stream ({spec}): the dim drawn anew for every run, the same draws on "
             "both sides (splitmix64, a seed per chunk); p50/p99/max by nearest rank over all runs.", "",
             "| stream | runs | kiln p50 ms | ORT p50 ms | kiln / ORT p50 | kiln p99 ms | ORT p99 ms "
             "| kiln / ORT p99 | kiln max ms | ORT max ms | kiln / ORT per draw (median) "
             "| kiln plans made / reused (ms making them) |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    k = [r[1] for r in runs["kiln"]]
    o = [r[1] for r in runs["ort"]]
    same = [r[0] for r in runs["kiln"]] == [r[0] for r in runs["ort"]]
    if k and o:
        kp = percentiles(k, 0.5, 0.99, 1.0)
        op = percentiles(o, 0.5, 0.99, 1.0)
        f = lambda v: fmt_ms({"v": v}, "v")
        # The two sides' times of the same draw (same dims, the chunk's other side run just before
        # or after), as a ratio per draw: its median is steadier than the p50s' ratio where the
        # machine's other load changes from one chunk to the next.
        paired = percentiles([a / b for a, b in zip(k, o) if b > 0], 0.5)[0] if same else float("nan")
        lines.append(f"| {spec} | {len(k)} | {f(kp[0])} | {f(op[0])} | {kp[0] / op[0]:.2f} | {f(kp[1])} | "
                     f"{f(op[1])} | {kp[1] / op[1]:.2f} | {f(kp[2])} | {f(op[2])} | {paired:.2f} | "
                     f"{plans['made']} / {plans['reused']} ({plans['planning_ms']:.0f}) |")
    if not same:
        errors.append("- stream: the two sides did not run the same draws")
    lines += errors
    return lines, bool(k and o and same and not errors)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results")
    ap.add_argument("names", nargs="*")
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--baseline", help="results of the trivial model (peak RSS of the runtimes alone)")
    ap.add_argument("--stream", default="")
    args = ap.parse_intermixed_args()
    base_rss = baseline_rss(args.baseline)

    rows, notes, ok, ort_version, iterations = [], [], True, "", None
    kiln_p50 = {}
    for name in args.names:
        rec, _ = best_round(os.path.join(args.results, name), "kiln")
        if rec:
            kiln_p50[name] = rec["p50_ms"]
    for name in args.names:
        folder = os.path.join(args.results, name)
        kiln, kiln_err = best_round(folder, "kiln")
        ort, ort_err = best_round(folder, "ort")
        agree, why = outputs_verdict(folder)
        if ort:
            ort_version = ort.get("runtime", ort_version)
        if kiln:
            iterations = (kiln.get("iterations"), kiln.get("warmup"))
        ratio = f"{kiln['p50_ms'] / ort['p50_ms']:.2f}" if kiln and ort and ort["p50_ms"] > 0 else "-"
        base = name.split("@")[0]
        vs_fp32 = (f"{kiln['p50_ms'] / kiln_p50[base]:.2f}" if "@" in name and kiln and kiln_p50.get(base)
                   else "-")
        kiln_rss = kiln.get("peak_rss_mb") if kiln else None
        ort_rss = ort.get("peak_rss_mb") if ort else None
        if kiln_rss is not None:
            kiln_rss -= base_rss.get("kiln", 0.0)
        if ort_rss is not None:
            ort_rss -= base_rss.get("ort", 0.0)
        rss_ratio = f"{kiln_rss / ort_rss:.2f}" if kiln_rss and ort_rss and ort_rss > 0 else "-"
        rows.append(f"| {name} | {fmt_ms(kiln, 'p50_ms')} | {fmt_ms(ort, 'p50_ms')} | {ratio} | {vs_fp32} | "
                    f"{fmt_ms(kiln, 'load_ms')} | {fmt_ms(ort, 'load_ms')} | {fmt_mb(kiln_rss)} | "
                    f"{fmt_mb(ort_rss)} | {rss_ratio} | {agree} |")
        for side, err in (("kiln", kiln_err), ("ONNX Runtime", ort_err)):
            if err:
                notes.append(f"- {name}: {side} failed: {err}")
        if agree != "yes":
            notes.append(f"- {name}: outputs: {why}")
        if "@" in name and (cos := float_cosines(folder)):
            notes.append(f"- {name}: {cos}")
        ok = ok and kiln is not None and ort is not None and agree == "yes"

    runs = f", {iterations[0]} runs after {iterations[1]} warmup" if iterations else ""
    print(f"kiln vs {ort_version or 'ONNX Runtime'}: batch 1 (BERT: seq 128), {args.threads} threads"
          f"{runs}; {datetime.date.today().isoformat()}, {machine()}.")
    if base_rss:
        print(f"Peak RSS in MB (getrusage), each side less its process on a one-Identity model: "
              f"kiln {fmt_mb(base_rss.get('kiln'))} MB, node with onnxruntime-node "
              f"{fmt_mb(base_rss.get('ort'))} MB.")
    print()
    print("| model | kiln p50 ms | ORT p50 ms | kiln / ORT | quantized / kiln fp32 | kiln session ms | ORT session ms "
          "| kiln RSS MB | ORT RSS MB | kiln / ORT RSS | outputs agree |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for r in rows:
        print(r)
    if notes:
        print()
        for n in notes:
            print(n)
    if args.stream:
        lines, stream_ok = stream_section(os.path.join(args.results, "stream"), args.stream)
        print()
        for line in lines:
            print(line)
        ok = ok and stream_ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
