#!/usr/bin/python3
"""kiln serve's time limit on a whole request (--request-time-limit 2, each read allowed 10 s by
--request-timeout so that only the whole-request limit can stop the slow clients below):

- a client sending its body a byte every 0.3 s, and one sending its headers so, each have their
  connection shut within the limit and a little (not after the minutes their bytes would take);
- a runaway inference (600 chained 1024x1024 MatMuls on 4096 rows: 5 TFLOP, seconds on any
  CPU) is answered 503 with a one-line error at about the limit, and the MLP beside it still answers;
- a keep-alive connection making quick requests for longer than the limit in all is not cut
  (each answer starts the next request's clock);
- the server stays up, and /metrics counts the connections cut.

    tests/serve/serve_time_limits.py KILN MLP_ONNX WORKDIR
"""
import http.client
import json
import os
import socket
import sys
import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import ServeTest  # noqa: E402

LIMIT = 2


def slow_model():
    w = numpy_helper.from_array((np.random.default_rng(0).standard_normal((1024, 1024)) * 0.03).astype(np.float32), "w")
    nodes, prev = [], "x"
    for i in range(600):
        nodes.append(helper.make_node("MatMul", [prev, "w"], [f"y{i}"]))
        prev = f"y{i}"
    nodes.append(helper.make_node("Identity", [prev], ["y"]))
    g = helper.make_graph(nodes, "slow", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 1024])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 1024])], [w])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def trickle(port, head, body, every):
    """Sends head, then body a byte every `every` s; seconds until the server closed the connection
    (None if it never did within 30 s)."""
    s = socket.create_connection(("127.0.0.1", port))
    t0 = time.time()
    try:
        s.sendall(head)
        for b in body:
            time.sleep(every)
            s.sendall(bytes([b]))
            if time.time() - t0 > 30:
                return None
        s.settimeout(30)
        while s.recv(4096):
            pass
    except (BrokenPipeError, ConnectionResetError, socket.timeout):
        pass
    finally:
        s.close()
    return time.time() - t0


def main():
    kiln, mlp, work = sys.argv[1:4]
    st = ServeTest("serve_time_limits", kiln, work)
    failures, expect = st.failures, st.expect
    write, read = st.token("write"), st.token("read")
    with st.serve(["--workers", "0", "--request-time-limit", str(LIMIT), "--request-timeout", "10"]) as c:
        port = st.port
        expect("upload mlp", c.call("POST", "/v1/models/mlp", open(mlp, "rb").read(), write)[0], 201)
        expect("upload slow", c.call("POST", "/v1/models/slow", slow_model(), write)[0], 201)
        x = np.zeros((1, 768), np.float32)
        good = {"inputs": [{"name": "input", "shape": [1, 768], "datatype": "FP32", "data": x.ravel().tolist()}]}
        expect("mlp", c.call("POST", "/v2/models/mlp/infer", good, read)[0], 200)

        # Slow clients: the body, then the headers, a byte at a time.
        body = json.dumps(good).encode()[:200]
        head = (f"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {read}\r\n"
                f"Content-Type: application/octet-stream\r\nContent-Length: {len(body)}\r\n\r\n").encode()
        took = trickle(port, head, body, 0.3)
        if took is None or took > LIMIT + 3:
            failures.append(f"a slow body: the connection lasted {took} s, past the limit of {LIMIT} s")
        took = trickle(port, b"GET /v2/health/live HTTP/1.1\r\n", b"X-Slow: " + b"a" * 100 + b"\r\n\r\n", 0.3)
        if took is None or took > LIMIT + 3:
            failures.append(f"slow headers: the connection lasted {took} s, past the limit of {LIMIT} s")
        print(f"serve_time_limits: slow clients cut after {took:.1f} s" if took else "")

        # A runaway inference: 503 at about the limit, one line; the MLP still answers.
        rows = np.ones((4096, 1024), np.float32)
        header = json.dumps({"inputs": [{"name": "x", "shape": [4096, 1024], "datatype": "FP32",
                                         "parameters": {"binary_data_size": rows.nbytes}}]}).encode()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        t0 = time.time()
        conn.request("POST", "/v2/models/slow/infer", header + rows.tobytes(),
                     {"Authorization": "Bearer " + read, "Inference-Header-Content-Length": str(len(header))})
        r = conn.getresponse()
        reply = json.loads(r.read() or b"{}")
        took = time.time() - t0
        conn.close()
        if r.status != 503 or "--request-time-limit" not in reply.get("error", "") or "\n" in reply.get("error", ""):
            failures.append(f"a runaway inference: {r.status} {reply} after {took:.1f} s, expected 503 at the limit")
        # (the model is loaded by this first request: its compile counts toward the limit too)
        if took > LIMIT + 2:
            failures.append(f"a runaway inference answered after {took:.1f} s, past the limit of {LIMIT} s")
        expect("the mlp during the runaway", c.call("POST", "/v2/models/mlp/infer", good, read)[0], 200)

        # Quick requests on one keep-alive connection for longer than the limit in all.
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        statuses = []
        t0 = time.time()
        for _ in range(5):
            conn.request("GET", "/v2/health/ready")
            r = conn.getresponse()
            r.read()
            statuses.append(r.status)
            time.sleep(0.8)
        conn.close()
        expect(f"keep-alive requests over {time.time() - t0:.1f} s", statuses, [200] * 5)

        expect("still up", c.call("GET", "/v2/health/live")[0], 200)
        status, text, _ = c.call("GET", "/metrics", raw=True)
        cut = [l for l in text.decode().splitlines() if l.startswith("kiln_http_requests_cut_total")]
        if not cut or float(cut[0].split()[-1]) < 2:
            failures.append(f"metrics: connections cut {cut}, expected at least the 2 slow clients")
    return st.verdict()


if __name__ == "__main__":
    sys.exit(main())
