#!/usr/bin/python3
"""Dynamic batching's throughput (not part of make test; never pass/fail): one model (ResNet-50 by
default, batch dim symbolic) served by two kiln serve processes in the same run, one batching
(--max-batch, --batch-delay-us) and one not, each driven by the same CLIENTS concurrent clients
(keep-alive connections, the binary tensor extension so that JSON does not dominate) for the same
time, after a warm-up of each, alternating ROUNDS times; prints requests/s of each with p50/p99
latency, their ratio, the batch sizes the batched server ran in the timed phases (from each
answer's X-Kiln-Batch-Size) and the engine's compute per image (X-Kiln-Compute-Us), the CPU, the
load and the OpenMP spin.

Both servers run with GOMP_SPINCOUNT=200000 (unless it is set): what kiln picks itself on a quiet
machine (src/engine/threads.cc). On a shared machine whose load average is high kiln picks a short
spin instead, and its two threads then fall asleep between the plan's steps: every run pays their
wake-ups, which flatters batching (a batch is one run for many requests). One run of this script
takes 2 * (WARMUP + ROUNDS * SECONDS) s plus the servers' start (uploads, compiles, and the plan
of each batch size, made at load): keep it under a minute to run it under a script that quiets a
shared machine, and repeat it for the spread.

    tests/serve/bench_batching.py KILN MODEL.onnx WORKDIR [--clients 16] [--seconds 8] [--rounds 2]
        [--warmup 3] [--max-batch 16] [--batch-delay-us 2000] [--preferred-batch N ...]
"""
import argparse
import collections
import contextlib
import http.client
import json
import os
import shutil
import statistics
import sys
import threading
import time

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [here, os.path.join(here, "..", "..", "bench")]
from percentiles import percentiles  # noqa: E402
from serve_client import ServeTest  # noqa: E402


def drive(port, token, body, header_len, clients, seconds):
    """Requests/s, latencies (s), (batch size, compute us) per answer and the errors of `clients`
    threads posting `body` for `seconds`."""
    latencies, runs, errors = [], [], []
    lock = threading.Lock()
    stop = time.time() + seconds

    def client():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        mine, sizes = [], []
        while time.time() < stop:
            t0 = time.perf_counter()
            try:
                conn.request("POST", "/v2/models/m/infer", body, {
                    "Content-Type": "application/octet-stream", "Inference-Header-Content-Length": str(header_len),
                    "Authorization": "Bearer " + token})
                r = conn.getresponse()
                r.read()
                if r.status != 200:
                    errors.append(r.status)
                    continue
            except (OSError, http.client.HTTPException) as e:
                errors.append(str(e))
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                continue
            mine.append(time.perf_counter() - t0)
            sizes.append((int(r.getheader("X-Kiln-Batch-Size", "1")), int(r.getheader("X-Kiln-Compute-Us", "0"))))
        with lock:
            latencies.extend(mine)
            runs.extend(sizes)

    t0 = time.time()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.time() - t0
    return len(latencies) / wall, latencies, runs, errors


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kiln")
    ap.add_argument("model")
    ap.add_argument("work")
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=8, help="each timed phase (default 8)")
    ap.add_argument("--rounds", type=int, default=2, help="timed phases of each server, alternating (default 2)")
    ap.add_argument("--warmup", type=float, default=3, help="untimed seconds of each server first (default 3)")
    ap.add_argument("--max-batch", type=int, default=16)
    ap.add_argument("--batch-delay-us", type=int, default=2000)
    ap.add_argument("--preferred-batch", type=int, action="append", default=[], help="repeatable; default none")
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    env = dict(os.environ)
    env.setdefault("GOMP_SPINCOUNT", "200000")
    ports, tokens, clients = {}, {}, {}
    with contextlib.ExitStack() as servers:  # both up at once, each a ServeTest of its own folder
        for mode in ("unbatched", "batched"):
            st = ServeTest(f"bench_batching {mode}", a.kiln, os.path.join(a.work, mode))
            write, tokens[mode] = st.token("write"), st.token("read")
            flags = ["--max-batch", str(a.max_batch), "--batch-delay-us", str(a.batch_delay_us)] if mode == "batched" else []
            for size in a.preferred_batch if mode == "batched" else []:
                flags += ["--preferred-batch", str(size)]
            clients[mode] = servers.enter_context(st.serve(["--workers", "0", *flags], env=env))
            status, body = clients[mode].call("POST", "/v1/models/m", open(a.model, "rb").read(), write)
            if status not in (200, 201):
                sys.exit(f"upload: {status} {body}")
            ports[mode] = st.port
        status, meta = clients["unbatched"].call("GET", "/v2/models/m", tok=tokens["unbatched"])
        if status != 200:
            sys.exit(f"metadata: {status} {meta}")
        inputs = []
        feeds = b""
        rng = np.random.default_rng(0)
        for i in meta["inputs"]:
            dims = [1 if d < 0 else d for d in i["shape"]]
            x = rng.standard_normal(dims).astype(np.float32)
            inputs.append({"name": i["name"], "shape": dims, "datatype": i["datatype"],
                           "parameters": {"binary_data_size": x.nbytes}})
            feeds += x.tobytes()
        header = json.dumps({"inputs": inputs, "parameters": {"binary_data_output": True}}).encode()
        body = header + feeds
        results = {"batched": [], "unbatched": []}
        for mode in ("unbatched", "batched"):  # the first requests load the model
            drive(ports[mode], tokens[mode], body, len(header), a.clients, a.warmup)
        for _ in range(a.rounds):
            for mode in ("unbatched", "batched"):
                rps, lat, runs, errors = drive(ports[mode], tokens[mode], body, len(header), a.clients, a.seconds)
                if errors:
                    print(f"{mode}: {len(errors)} errors, e.g. {errors[:3]}")
                results[mode].append((rps, lat, runs))
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    load = open("/proc/loadavg").read().split()[:3]
    print(f"CPU: {cpu}, {os.cpu_count()} CPUs; load average {' '.join(load)}; GOMP_SPINCOUNT {env['GOMP_SPINCOUNT']}")
    print(f"model {os.path.basename(a.model)}, {a.clients} clients, --max-batch {a.max_batch} "
          f"--batch-delay-us {a.batch_delay_us}{''.join(f' --preferred-batch {p}' for p in a.preferred_batch)}, "
          f"{a.rounds} x {a.seconds:g} s each")
    summary = {}
    for mode, phases in results.items():
        rps = sum(r for r, _, _ in phases) / len(phases)
        lat = [x for _, l, _ in phases for x in l]
        p50, p99 = (x * 1e3 for x in percentiles(lat, 0.5, 0.99))
        summary[mode] = rps
        each = ", ".join(f"{r:.2f}" for r, _, _ in phases)
        print(f"{mode:>9}: {rps:7.2f} requests/s ({each})  p50 {p50:7.1f} ms  p99 {p99:7.1f} ms  ({len(lat)} requests)")
    # Per batch size: runs (a run of n answers n one-image requests) and compute per image.
    for mode, phases in results.items():
        by_size = collections.defaultdict(list)
        for _, _, runs in phases:
            for size, us in runs:
                by_size[size].append(us / size / 1e3)
        answered = sum(len(v) for v in by_size.values())
        run_count = sum(len(v) / size for size, v in by_size.items())
        if run_count:
            print(f"{mode:>9}: {answered / run_count:.1f} requests per run; runs by size (compute ms per image, "
                  "median): " + ", ".join(f"{size}: {len(v) / size:.0f} ({statistics.median(v):.1f})"
                                         for size, v in sorted(by_size.items())))
    if summary.get("unbatched"):
        pairs = [b[0] / u[0] for u, b in zip(results["unbatched"], results["batched"]) if u[0]]
        print(f"batched / unbatched: {summary['batched'] / summary['unbatched']:.2f}x (each round: "
              + ", ".join(f"{p:.2f}x" for p in pairs) + ")")


if __name__ == "__main__":
    main()
