#!/usr/bin/python3
"""kiln serve --max-loaded-models 2 on loopback, with urllib clients: three versions of the MLP
(each its first weight scaled, so that each answers differently) served in turn.

- Two versions loaded, a third's first request unloads the least recently used (ready: 400, not
  loaded), which answers again on its next request (loaded again, its own outputs: equal to
  kiln run's of that version's file); the others stay ready.
- /metrics: kiln_inference_models_loaded 2, kiln_inference_model_evictions_total per version.
- load with version_policy "all" (three versions, past the limit): 400 naming
  --max-loaded-models; a list of two: 200, both ready.
- 6 concurrent clients, each cycling over the three versions for 3 s (a load or an eviction at
  almost every request): every answer 200 and its own version's.

    tests/serve/serve_model_limit.py KILN MLP_ONNX WORKDIR
"""
import json
import os
import re
import sys
import threading
import time

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import ServeTest  # noqa: E402


def main():
    kiln, model, work = sys.argv[1:4]
    st = ServeTest("serve_model_limit", kiln, work)
    expect, failures = st.expect, st.failures
    write, read = st.token("write"), st.token("read")
    paths = []
    for v in (1, 2, 3):  # version v: the first weight times 1 + v / 10
        m = onnx.load(model)
        w = m.graph.initializer[0]
        w.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(w) * np.float32(1 + v / 10), w.name))
        paths.append(os.path.join(work, f"mlp-v{v}.onnx"))
        onnx.save(m, paths[-1])
    x = np.random.default_rng(2).standard_normal((1, 768)).astype(np.float32)
    want = {v: st.kiln_run(p, x, f"v{v}") for v, p in zip((1, 2, 3), paths)}
    if np.allclose(want[1], want[2]):
        failures.append("the versions' outputs do not differ: the test could not tell them apart")
    body = json.dumps({"inputs": [{"name": "input", "shape": [1, 768], "datatype": "FP32",
                                   "data": x.ravel().tolist()}]}).encode()

    with st.serve(["--workers", "0", "--max-loaded-models", "2"]) as c:
        for v, p in zip((1, 2, 3), paths):
            expect(f"upload v{v}", c.call("POST", "/v1/models/mlp", open(p, "rb").read(), write)[:1], (201,))

        def infer(v):
            status, reply = c.call("POST", f"/v2/models/mlp/versions/{v}/infer", body, read)
            if status != 200:
                return status, None
            return status, np.array(reply["outputs"][0]["data"], np.float32).reshape(1, -1)

        def ready(v):
            return c.call("GET", f"/v2/models/mlp/versions/{v}/ready", tok=read)[0]

        def own(v, got):
            return got is not None and np.allclose(got, want[v], rtol=1e-5, atol=1e-6)

        def metric(name, labels=""):
            text = c.call("GET", "/metrics", raw=True)[1].decode()
            m = re.search(rf"^{re.escape(name + labels)} (\S+)$", text, re.M)
            return float(m.group(1)) if m else None

        for v in (1, 2, 1):  # v1 is the more recent of the two
            status, got = infer(v)
            expect(f"infer v{v}", (status, own(v, got)), (200, True))
        expect("ready v1, v2", (ready(1), ready(2)), (200, 200))
        status, got = infer(3)
        expect("infer v3", (status, own(3, got)), (200, True))
        expect("after v3: ready v1, v2, v3", (ready(1), ready(2), ready(3)), (200, 400, 200))
        expect("models loaded", metric("kiln_inference_models_loaded"), 2.0)
        expect("v2 evicted once", metric("kiln_inference_model_evictions_total", '{model="mlp",version="2"}'), 1.0)
        status, got = infer(2)  # loaded again; v1 (used before v3) goes
        expect("infer v2 again", (status, own(2, got)), (200, True))
        expect("after v2: ready v1, v2, v3", (ready(1), ready(2), ready(3)), (400, 200, 200))
        expect("v1 evicted once", metric("kiln_inference_model_evictions_total", '{model="mlp",version="1"}'), 1.0)

        status, reply = c.call("POST", "/v2/repository/models/mlp/load",
                               {"parameters": {"version_policy": "all"}}, write)
        expect("load all (3 > 2)", (status, "--max-loaded-models" in (reply or {}).get("error", "")), (400, True))
        status, reply = c.call("POST", "/v2/repository/models/mlp/load",
                               {"parameters": {"version_policy": [1, 3]}}, write)
        expect("load [1, 3]", (status, reply), (200, {"name": "mlp", "loaded": ["1", "3"]}))
        expect("after the load: ready v1, v2, v3", (ready(1), ready(2), ready(3)), (200, 400, 200))

        # Concurrent clients over all three versions: loads and evictions at almost every request.
        bad = []
        stop = time.time() + 3

        answered = []

        def client(k):
            n = 0
            while time.time() < stop:
                v = 1 + (k + n) % 3
                status, got = infer(v)
                if status != 200 or not own(v, got):
                    bad.append(f"client {k}: v{v}: {status}")
                n += 1
            answered.append(n)
        threads = [threading.Thread(target=client, args=(k,)) for k in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if bad:
            failures.append(f"{len(bad)} bad answers under churn, e.g. {bad[:3]}")
        evictions = sum(metric("kiln_inference_model_evictions_total", f'{{model="mlp",version="{v}"}}') or 0
                        for v in (1, 2, 3))
        print(f"serve_model_limit: 6 clients over 3 versions for 3 s: {sum(answered)} requests, "
              f"{evictions:.0f} evictions in all")
        if not evictions > 3:
            failures.append(f"only {evictions} evictions in all: the churn did not churn")
        expect("models loaded after the churn", metric("kiln_inference_models_loaded"), 2.0)
    return st.verdict()


if __name__ == "__main__":
    sys.exit(main())
