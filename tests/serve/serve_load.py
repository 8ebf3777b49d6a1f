#!/usr/bin/python3
"""kiln serve under load: CLIENTS concurrent clients (keep-alive connections, their own inputs)
infer the MLP for SECONDS with dynamic batching on; no request may fail and every answer must be
its own input's (checked against the lone run of each client's input); the p50/p99 latency and
requests/s are printed; the server's resident memory after a warm-up and at the end must stay
within SLACK MB (memory flat: no growth with the requests served).

    tests/serve/serve_load.py KILN MLP_ONNX WORKDIR [--clients 100] [--seconds 20] [--slack-mb 40]

make test runs it for 20 s; a soak is the same script for longer (--seconds 1800).
"""
import argparse
import http.client
import json
import os
import sys
import threading
import time

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [here, os.path.join(here, "..", "..", "bench")]
from percentiles import percentiles  # noqa: E402
from serve_client import ServeTest  # noqa: E402


def rss_mb(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kiln")
    ap.add_argument("model")
    ap.add_argument("work")
    ap.add_argument("--clients", type=int, default=100)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--slack-mb", type=float, default=40)
    a = ap.parse_args()
    st = ServeTest("serve_load", a.kiln, a.work)
    failures = st.failures
    write, read = st.token("write"), st.token("read")
    with st.serve(["--workers", "0", "--max-batch", "16", "--batch-delay-us", "1000"]) as c:
        port, server = st.port, st.server
        if c.call("POST", "/v1/models/mlp", open(a.model, "rb").read(), write)[0] != 201:
            sys.exit("FAIL: upload")
        rng = np.random.default_rng(11)
        inputs = [rng.standard_normal((1, 768)).astype(np.float32) for _ in range(a.clients)]
        bodies = [json.dumps({"inputs": [{"name": "input", "shape": [1, 768], "datatype": "FP32",
                                          "data": x.ravel().tolist()}]}).encode() for x in inputs]
        want = []
        for b in bodies:  # each client's answer, run alone
            status, reply = c.call("POST", "/v2/models/mlp/infer", b, read)
            if status != 200:
                sys.exit(f"FAIL: a lone request: {status} {reply}")
            want.append(np.array(reply["outputs"][0]["data"], np.float32))

        lock = threading.Lock()
        latencies, errors = [], []
        phase = {"stop": 0.0}

        def client(i):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            headers = {"Authorization": "Bearer " + read, "Content-Type": "application/octet-stream"}
            mine, bad = [], []
            while time.time() < phase["stop"]:
                t0 = time.perf_counter()
                try:
                    conn.request("POST", "/v2/models/mlp/infer", bodies[i], headers)
                    r = conn.getresponse()
                    body = r.read()
                except (OSError, http.client.HTTPException) as e:
                    bad.append(f"client {i}: {type(e).__name__} {e}")
                    conn.close()
                    continue
                dt = time.perf_counter() - t0
                if r.status != 200:
                    bad.append(f"client {i}: {r.status} {body[:200]!r}")
                    continue
                got = np.array(json.loads(body)["outputs"][0]["data"], np.float32)
                if not np.allclose(got, want[i], rtol=1e-4, atol=1e-5):
                    bad.append(f"client {i}: another request's answer, or a wrong one")
                mine.append(dt)
            conn.close()
            with lock:
                latencies.extend(mine)
                errors.extend(bad)

        def run(seconds):
            phase["stop"] = time.time() + seconds
            threads = [threading.Thread(target=client, args=(i,)) for i in range(a.clients)]
            t0 = time.time()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            return time.time() - t0

        run(min(5.0, a.seconds / 4))  # warm-up: every batch size's plan, the threads' arenas
        latencies.clear()
        before = rss_mb(server.pid)
        wall = run(a.seconds)
        after = rss_mb(server.pid)
        lat = latencies
        p50, p99, most = (x * 1e3 for x in percentiles(lat, 0.5, 0.99, 1.0))
        print(f"serve_load: {a.clients} clients, {a.seconds:.0f} s: {len(lat)} requests, {len(lat) / wall:.1f}/s, "
              f"p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {most:.1f} ms; "
              f"server RSS {before:.1f} MB after the warm-up, {after:.1f} MB at the end")
        if errors:
            failures.append(f"{len(errors)} failed requests, e.g. {errors[:3]}")
        if not lat:
            failures.append("no request was answered")
        if after - before > a.slack_mb:
            failures.append(f"server RSS grew {after - before:.1f} MB (> {a.slack_mb} MB)")
        status, text, _ = c.call("GET", "/metrics", raw=True)
        for line in text.decode().splitlines():
            if line.startswith("kiln_inference_batch_size_count") or line.startswith("kiln_inference_request_failure"):
                print("  " + line)
    return st.verdict()


if __name__ == "__main__":
    sys.exit(main())
