#!/usr/bin/python3
"""Dynamic batching's throughput (not part of make test; never pass/fail): one model (ResNet-50 by
default, batch dim symbolic) served by two kiln serve processes in the same run, one batching
(--max-batch, --batch-delay-us) and one not, each driven by the same CLIENTS concurrent clients
(keep-alive connections, the binary tensor extension so that JSON does not dominate) for the same
time, alternating twice; prints requests/s of each, their ratio, p50/p99 latency, the CPU and the
load.

    tests/serve/bench_batching.py KILN MODEL.onnx WORKDIR [--clients 16] [--seconds 20]
        [--max-batch 16] [--batch-delay-us 2000] [--threads N]
"""
import argparse
import contextlib
import http.client
import json
import os
import shutil
import sys
import threading
import time

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [here, os.path.join(here, "..", "..", "bench")]
from percentiles import percentiles  # noqa: E402
from serve_client import ServeTest  # noqa: E402


def drive(port, token, body, header_len, clients, seconds):
    """Requests/s and latencies (s) of `clients` threads posting `body` for `seconds`."""
    latencies, errors = [], []
    lock = threading.Lock()
    stop = time.time() + seconds

    def client():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        mine = []
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
            except (OSError, http.client.HTTPException) as e:
                errors.append(str(e))
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                continue
            mine.append(time.perf_counter() - t0)
        with lock:
            latencies.extend(mine)

    t0 = time.time()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.time() - t0
    return len(latencies) / wall, latencies, errors


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kiln")
    ap.add_argument("model")
    ap.add_argument("work")
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--max-batch", type=int, default=16)
    ap.add_argument("--batch-delay-us", type=int, default=2000)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    ports, tokens, clients = {}, {}, {}
    with contextlib.ExitStack() as servers:  # both up at once, each a ServeTest of its own folder
        for mode in ("unbatched", "batched"):
            st = ServeTest(f"bench_batching {mode}", a.kiln, os.path.join(a.work, mode))
            write, tokens[mode] = st.token("write"), st.token("read")
            flags = ["--max-batch", str(a.max_batch), "--batch-delay-us", str(a.batch_delay_us)] if mode == "batched" else []
            clients[mode] = servers.enter_context(st.serve(["--workers", "0", *flags]))
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
        # Warm up (plans per batch size are made on first use), then alternate twice.
        for mode in ("unbatched", "batched"):
            drive(ports[mode], tokens[mode], body, len(header), a.clients, a.seconds)
        for _ in range(2):
            for mode in ("unbatched", "batched"):
                rps, lat, errors = drive(ports[mode], tokens[mode], body, len(header), a.clients, a.seconds / 2)
                if errors:
                    print(f"{mode}: {len(errors)} errors, e.g. {errors[:3]}")
                results[mode].append((rps, lat))
        # The batch sizes the batched server ran (its /metrics).
        status, text, _ = clients["batched"].call("GET", "/metrics", raw=True)
        sums = {l.split("{")[0]: float(l.split()[-1]) for l in text.decode().splitlines()
                if l.startswith("kiln_inference_batch_size_sum") or l.startswith("kiln_inference_batch_size_count")}
        mean_batch = sums.get("kiln_inference_batch_size_sum", 0) / max(1, sums.get("kiln_inference_batch_size_count", 0))
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    load = open("/proc/loadavg").read().split()[:3]
    print(f"CPU: {cpu}, {os.cpu_count()} CPUs; load average {' '.join(load)}")
    print(f"model {os.path.basename(a.model)}, {a.clients} clients, --max-batch {a.max_batch} --batch-delay-us {a.batch_delay_us}")
    summary = {}
    for mode, runs in results.items():
        rps = sum(r for r, _ in runs) / len(runs)
        lat = [x for _, l in runs for x in l]
        p50, p99 = (x * 1e3 for x in percentiles(lat, 0.5, 0.99))
        summary[mode] = rps
        print(f"{mode:>9}: {rps:7.2f} requests/s  p50 {p50:7.1f} ms  p99 {p99:7.1f} ms  ({len(lat)} requests)")
    print(f"batched server: {mean_batch:.1f} requests per run on average (warm-up included)")
    if summary.get("unbatched"):
        print(f"batched / unbatched: {summary['batched'] / summary['unbatched']:.2f}x")


if __name__ == "__main__":
    main()
