#!/usr/bin/python3
"""What a batch buys the engine: `kiln bench` of one model at several batch sizes, time per image.

Usage: /usr/bin/python3 bench/batch_scaling.py MODEL [--kiln PATH] [--dim batch] [--batches 1,2,4,8,16]
           [--threads 2] [--images 32] [--rounds 3] [--prefix "CMD ARGS"]

For each round and each batch size B (the model's symbolic dim --dim set to B, seeded random
inputs), `kiln bench --json` with --threads and about --images images' worth of timed runs
(--images / B runs, at least 3); the rounds alternate the sizes so that the machine's drift falls
on all of them. Prints per size the median over the rounds of the p50 per image, the range, the
plan's first run (what a server pays the first time it meets a new batch size) and per-image time
relative to the first size (batch 1): the throughput a dynamic batcher can gain at most on this machine when its
batches reach that size. --prefix runs each `kiln bench` under a command (a script that quiets a
shared machine, `taskset -c 0,1` ...). kiln runs with GOMP_SPINCOUNT=200000 unless it is set.
Not a test: nothing here passes or fails on speed.
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys


def bench(a, batch):
    runs = max(3, a.images // batch)
    cmd = shlex.split(a.prefix) + [a.kiln, "bench", a.model, "--json", "--threads", str(a.threads),
                                   "--dim", f"{a.dim}={batch}", "--iterations", str(runs), "--warmup", "1"]
    env = dict(os.environ)
    env.setdefault("GOMP_SPINCOUNT", "200000")
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"batch_scaling: {' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()[-400:]}")
    return json.loads(p.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--kiln", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "kiln"))
    ap.add_argument("--dim", default="batch", help="the model's batch dim (default batch)")
    ap.add_argument("--batches", default="1,2,4,8,16")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--images", type=int, default=32, help="images timed per size and round (default 32)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--prefix", default="", help="a command to run each kiln bench under")
    a = ap.parse_args()
    try:
        batches = [int(b) for b in a.batches.split(",")]
    except ValueError:
        sys.exit(f"batch_scaling: --batches '{a.batches}': expected sizes like 1,2,4,8")
    if not batches or min(batches) < 1:
        sys.exit(f"batch_scaling: --batches '{a.batches}': sizes must be 1 or more")
    per_image = {b: [] for b in batches}
    first_run = {b: [] for b in batches}
    for r in range(a.rounds):
        for b in batches:
            j = bench(a, b)
            per_image[b].append(j["p50_ms"] / b)
            first_run[b].append(j["first_run_ms"])
            print(f"round {r + 1} batch {b:>3}: p50 {j['p50_ms']:8.2f} ms, {j['p50_ms'] / b:6.2f} ms per image"
                  f" (spin {j.get('gomp_spincount', '?')})", file=sys.stderr)
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print(f"{os.path.basename(a.model)}, {a.threads} threads, CPU {cpu} ({os.cpu_count()} CPUs), "
          f"median of {a.rounds} rounds")
    print(f"{'batch':>5} {'ms/image':>9} {'range':>15} {'first run ms':>13} {'vs batch ' + str(batches[0]):>10}")
    base = statistics.median(per_image[batches[0]])
    for b in batches:
        m = statistics.median(per_image[b])
        print(f"{b:>5} {m:9.2f} {min(per_image[b]):7.2f}-{max(per_image[b]):<7.2f} "
              f"{statistics.median(first_run[b]):13.0f} {base / m:9.2f}x")


if __name__ == "__main__":
    main()
