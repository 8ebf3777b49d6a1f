#!/usr/bin/python3
"""Prints bench/run.sh's table (markdown) from its results folder.

Usage: /usr/bin/python3 bench/report.py RESULTS --threads N NAME...

RESULTS/NAME/ holds kiln_<round>.json and ort_<round>.json (the JSON line of `kiln bench --json`
and of tools/ort/bench.js --json, stderr in the matching .err), kiln_run.err and ort_run.err, and
compare.json from bench/compare_outputs.py. Each side's figure is its round with the lowest p50.
Exits 0 when both sides ran every model and the outputs agree, 1 otherwise.
"""
import argparse
import datetime
import glob
import json
import os
import platform
import sys


def last_line(path):
    try:
        with open(path) as f:
            lines = [l.strip() for l in f if l.strip()]
        return lines[-1] if lines else ""
    except OSError:
        return ""


def best_round(folder, side):
    """(record with the lowest p50, None) or (None, the error of the last failed round)."""
    best, error = None, "did not run"
    for path in sorted(glob.glob(os.path.join(folder, f"{side}_*.json"))):
        try:
            rec = json.loads(last_line(path))
        except ValueError:
            rec = None
        if not rec or "p50_ms" not in rec:
            error = last_line(path[:-5] + ".err") or "no result"
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
            return "yes", f"max abs error {c['max_abs_error']:.2g}"
        return "NO", c.get("reason", "")
    except (OSError, ValueError):
        why = (last_line(os.path.join(folder, "kiln_run.err")) or
               last_line(os.path.join(folder, "ort_run.err")) or
               last_line(os.path.join(folder, "compare.err")))
        return "NO", why or "not compared"


def machine():
    model = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores"


def fmt_ms(rec, key):
    if not rec or key not in rec:
        return "-"
    v = rec[key]
    return f"{v:.3f}" if v < 1 else f"{v:.2f}" if v < 100 else f"{v:.1f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results")
    ap.add_argument("names", nargs="+")
    ap.add_argument("--threads", type=int, required=True)
    args = ap.parse_args()

    rows, notes, ok, ort_version, iterations = [], [], True, "", None
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
        rows.append(f"| {name} | {fmt_ms(kiln, 'p50_ms')} | {fmt_ms(ort, 'p50_ms')} | {ratio} | "
                    f"{fmt_ms(kiln, 'load_ms')} | {fmt_ms(ort, 'load_ms')} | {agree} |")
        for side, err in (("kiln", kiln_err), ("ONNX Runtime", ort_err)):
            if err:
                notes.append(f"- {name}: {side} failed: {err}")
        if agree != "yes":
            notes.append(f"- {name}: outputs: {why}")
        ok = ok and kiln is not None and ort is not None and agree == "yes"

    runs = f", {iterations[0]} runs after {iterations[1]} warmup" if iterations else ""
    print(f"kiln vs {ort_version or 'ONNX Runtime'}: batch 1 (BERT: seq 128), {args.threads} threads"
          f"{runs}; {datetime.date.today().isoformat()}, {machine()}.")
    print()
    print("| model | kiln p50 ms | ORT p50 ms | kiln / ORT | kiln session ms | ORT session ms | outputs agree |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for r in rows:
        print(r)
    if notes:
        print()
        for n in notes:
            print(n)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
