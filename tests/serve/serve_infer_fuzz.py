#!/usr/bin/python3
"""Bad input over kiln serve's /v2 endpoints, fuzz-like (as Triton's qa does for its HTTP API): from
valid requests to the MLP (FP32) and Silero VAD (FP32 and an INT64 scalar), 600 seeded mutations
(keys dropped, values of the wrong type or range, shapes of every wrong kind and too large to
allocate, datatypes kiln does not serve, data too short or long or nested, binary headers and
sizes at random, bytes at random) and paths with traversal, huge versions and odd characters;
plus GET/POST on the metadata, ready and repository routes. Every answer must be 200 or 4xx, an
error must be JSON with one line, and the server must stay up and keep answering a valid request
correctly; it never allocates what a shape claims before the data is there (a request claiming
2^40 elements is a quick 400); with --max-infer-mb 1 a larger body is a 413, refused from its
Content-Length before it is sent, or once read when chunked.

    tests/serve/serve_infer_fuzz.py KILN MLP_ONNX SILERO_ONNX WORKDIR
"""
import copy
import http.client
import json
import os
import random
import socket
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import ServeTest  # noqa: E402

ODD = [None, True, False, 0, -1, 1.5, 2 ** 63, -2 ** 63 - 1, 1e308, "x", "", "\u0000", "FP32", [], {}, [[1]],
       [None], {"a": 1}, "9" * 40, -0.0]
SHAPES = [[], [1], [1, 768, 1], [-1, 768], [1, -768], [0, 768], [2 ** 40, 768], [2 ** 62, 2 ** 62], [1.5, 768],
          ["1", 768], None, "1,768", [[1], 768], [True, 768]]
DATATYPES = ["FP16", "BF16", "BYTES", "INT64", "fp32", "", "FP32 ", "UINT8", "BOOL", None, 7]


def mutate(req, rng):
    r = copy.deepcopy(req)
    kind = rng.randrange(9)
    inp = r["inputs"][rng.randrange(len(r["inputs"]))]
    if kind == 0:
        inp.pop(rng.choice(list(inp.keys())))
    elif kind == 1:
        inp[rng.choice(["name", "shape", "datatype", "data", "parameters"])] = rng.choice(ODD)
    elif kind == 2:
        inp["shape"] = rng.choice(SHAPES)
    elif kind == 3:
        inp["datatype"] = rng.choice(DATATYPES)
    elif kind == 4:
        d = inp.get("data", [])
        inp["data"] = rng.choice([d[:-1], d + [0.0], [d], [str(x) for x in d[:4]], d[:1] * 3, [1e308] * len(d),
                                  [2 ** 64] * len(d), [True] * len(d), [-1] * len(d)])
    elif kind == 5:
        r[rng.choice(["inputs", "outputs", "parameters", "id"])] = rng.choice(ODD)
    elif kind == 6:
        r["outputs"] = rng.choice([[{"name": "nope"}], [{}], [{"name": 1}], [{"name": "output", "parameters": 3}],
                                   [{"name": "output", "parameters": {"binary_data": "yes"}}], {"name": "output"}])
    elif kind == 7:
        r["inputs"].append(copy.deepcopy(inp))  # the same input twice
    else:
        inp["name"] = rng.choice(["", "nope", "input ", "INPUT", "\u00e9", "x" * 300])
    return r


def main():
    kiln, mlp, silero, work = sys.argv[1:5]
    st = ServeTest("serve_infer_fuzz", kiln, work)
    failures = st.failures
    write, read = st.token("write"), st.token("read")
    port = None  # the server's, once it runs
    counts = {}

    def send(method, path, body=b"", headers=None):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        h = {"Authorization": "Bearer " + read, "Content-Type": "application/octet-stream"}
        h.update(headers or {})
        t0 = time.time()
        conn.request(method, path, body, h)
        r = conn.getresponse()
        d = r.read()
        conn.close()
        counts[r.status] = counts.get(r.status, 0) + 1
        what = f"{method} {path[:80]} {body[:120]!r}"
        if r.status != 200 and not (400 <= r.status < 500):
            failures.append(f"{what}: {r.status} {d[:200]!r}")
        elif r.status >= 400 and r.headers.get("Content-Type", "").startswith("application/json"):
            err = json.loads(d).get("error", "")
            if not err or "\n" in err:
                failures.append(f"{what}: {r.status} without a one-line error: {d[:200]!r}")
        return r.status, d, time.time() - t0

    with st.serve(["--workers", "0", "--max-batch", "4", "--max-infer-mb", "1"]) as c:
        port = st.port
        expect_up = lambda: c.call("GET", "/v2/health/live")[0] == 200
        c.call("POST", "/v1/models/mlp", open(mlp, "rb").read(), write)
        c.call("POST", "/v1/models/vad", open(silero, "rb").read(), write)
        x = np.random.default_rng(0).standard_normal((1, 768)).astype(np.float32)
        valid = {
            "mlp": {"inputs": [{"name": "input", "shape": [1, 768], "datatype": "FP32", "data": x.ravel().tolist()}]},
            "vad": {"inputs": [{"name": "input", "shape": [1, 512], "datatype": "FP32", "data": [0.0] * 512},
                               {"name": "state", "shape": [2, 1, 128], "datatype": "FP32", "data": [0.0] * 256},
                               {"name": "sr", "shape": [], "datatype": "INT64", "data": [16000]}]},
        }
        status, want, _ = send("POST", "/v2/models/mlp/infer", json.dumps(valid["mlp"]).encode())
        if status != 200:
            sys.exit(f"FAIL: the valid request: {status} {want}")
        rng = random.Random(18)
        for i in range(600):
            model = rng.choice(["mlp", "vad"])
            req = mutate(valid[model], rng)
            body = json.dumps(req).encode()
            headers = {}
            if i % 5 == 0:  # as a binary request: a header length at random, bytes after it at random
                tail = bytes(rng.randrange(256) for _ in range(rng.choice([0, 1, 4, 100, 3072])))
                n = rng.choice([len(body), len(body) + 1, len(body) - 1, 0, 2 ** 70, -1, "x", " 12"])
                headers = {"Inference-Header-Content-Length": str(n)}
                body += tail
            send("POST", f"/v2/models/{model}/infer", body, headers)
        for _ in range(50):  # bytes at random
            send("POST", "/v2/models/mlp/infer", bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))))
        # A shape claiming 2^40 elements with one value: refused before anything is allocated.
        huge = copy.deepcopy(valid["mlp"])
        huge["inputs"][0]["shape"] = [2 ** 32, 256]
        status, _, took = send("POST", "/v2/models/mlp/infer", json.dumps(huge).encode())
        if status != 400 or took > 5:
            failures.append(f"a shape of 2^40 elements: {status} after {took:.1f} s, expected a quick 400")
        # --max-infer-mb 1: a Content-Length past it is a 413 before any of the body is sent; a
        # chunked body past it, a 413 once read.
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall((f"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {read}\r\n"
                   f"Content-Type: application/octet-stream\r\nContent-Length: {3 << 20}\r\n\r\n").encode())
        s.settimeout(10)
        head = s.recv(4096).decode(errors="replace")
        s.close()
        if not head.startswith("HTTP/1.1 413"):
            failures.append(f"a Content-Length of 3 MiB past --max-infer-mb 1: {head[:80]!r}")
        counts[413] = counts.get(413, 0) + 1
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        conn.request("POST", "/v2/models/mlp/infer", iter([b"{" + b" " * (1 << 20), b" " * (1 << 20) + b"}"]),
                     {"Authorization": "Bearer " + read, "Content-Type": "application/octet-stream",
                      "Transfer-Encoding": "chunked"}, encode_chunked=True)
        r = conn.getresponse()
        r.read()
        conn.close()
        counts[r.status] = counts.get(r.status, 0) + 1
        if r.status != 413:
            failures.append(f"a chunked body of 2 MiB past --max-infer-mb 1: {r.status}")
        for path in ["/v2/models/..%2f..%2fetc/infer", "/v2/models/../v1/models/infer", "/v2/models/mlp/versions/0/infer",
                     "/v2/models/mlp/versions/99999999999999999999/infer", "/v2/models/mlp/versions/-1/infer",
                     "/v2/models/%00/infer", "/v2/models/" + "m" * 3000 + "/infer", "/v2/models//infer",
                     "/v2/models/mlp/versions/1/infer/extra", "/v2/models/mlp/ready/x"]:
            send("POST", path, json.dumps(valid["mlp"]).encode())
            send("GET", path.replace("/infer", ""))
            send("GET", path.replace("/infer", "/ready"))
        for path in ["/v2/repository/models/mlp/load", "/v2/repository/models/..%2f/load", "/v2/repository/models/mlp/unload"]:
            for body in [b"", b"{", b"[]", b'{"parameters": 5}', b'{"parameters": {"version_policy": [1e300]}}']:
                send("POST", path, body)  # a read token: 403 before anything else
        for body in [b"{", b"[]", b'{"parameters": {"version_policy": [1e300]}}', b'{"parameters": {"version_policy": null}}',
                     b'{"parameters": {"version_policy": [-1, 99999999999999999999]}}']:
            send("POST", "/v2/repository/models/mlp/load", body, {"Authorization": "Bearer " + write})
        send("POST", "/v2/repository/models/mlp/load", b"", {"Authorization": "Bearer " + write})
        if not expect_up():
            failures.append("the server is down after the fuzzing")
        status, again, _ = send("POST", "/v2/models/mlp/infer", json.dumps(valid["mlp"]).encode())
        if status != 200 or json.loads(again)["outputs"] != json.loads(want)["outputs"]:
            failures.append(f"the valid request after the fuzzing: {status}, or other outputs")
        print(f"serve_infer_fuzz: {sum(counts.values())} requests, by status {dict(sorted(counts.items()))}")
    if st.server.returncode not in (0, -15):
        failures.append(f"the server exited with {st.server.returncode}")
    return st.verdict(most=20)


if __name__ == "__main__":
    sys.exit(main())
