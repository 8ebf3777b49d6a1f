#!/usr/bin/python3
"""kiln serve on a loopback port, driven over HTTP: health, tokens (401 without, 403 with too small
a scope), uploading a model (201, its sha256; the same bytes again: 200, the same version), a file
kiln's loader refuses and a bad name (400 with kiln's one-line message), listing, one version's
inputs and outputs, a missing version (404), and inference (Open Inference Protocol JSON) with
the outputs of `kiln run` on the same inputs, and its refusals.

    tests/serve/serve_http.py KILN MODEL WORKDIR
"""
import hashlib
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import ServeTest  # noqa: E402


def main():
    kiln, model, work = sys.argv[1:4]
    st = ServeTest("serve_http", kiln, work)
    data, failures, expect = st.data, st.failures, st.expect
    write, read = st.token("write"), st.token("read")
    with st.serve() as c:
        call = c.call
        expect("ready", call("GET", "/v2/health/ready"), (200, {"ready": True}))
        onnx = open(model, "rb").read()
        sha = hashlib.sha256(onnx).hexdigest()
        expect("upload without a token", call("POST", "/v1/models/mlp", onnx)[0], 401)
        expect("upload with a wrong token", call("POST", "/v1/models/mlp", onnx, "kiln_" + "0" * 64)[0], 401)
        expect("upload with a read token", call("POST", "/v1/models/mlp", onnx, read)[0], 403)
        status, body = call("POST", "/v1/models/mlp", onnx, write)
        expect("upload", (status, body.get("version"), body.get("sha256"), body.get("bytes")), (201, 1, sha, len(onnx)))
        status, body = call("POST", "/v1/models/mlp", onnx, write)
        expect("the same bytes again", (status, body.get("version"), body.get("created_now")), (200, 1, False))
        status, body = call("POST", "/v1/models/broken", onnx[: len(onnx) // 2], write)
        expect("a truncated model", status, 400)
        if "not a valid ONNX model" not in body.get("error", "") or "\n" in body.get("error", ""):
            failures.append(f"a truncated model: error {body!r}")
        status, body = call("POST", "/v1/models/..hidden", onnx, write)
        expect("a bad name", status, 400)
        status, body = call("GET", "/v1/models", tok=read)
        expect("list", (status, [(m["name"], len(m["versions"])) for m in body["models"]]), (200, [("mlp", 1)]))
        expect("list without a token", call("GET", "/v1/models")[0], 401)
        status, body = call("GET", "/v1/models/mlp/versions/1", tok=read)
        expect("version 1", (status, body.get("sha256"), body.get("inputs"), body.get("outputs")),
               (200, sha, [{"name": "input", "type": "float[batch,768]"}],
                [{"name": "output", "type": "float[batch,10]"}]))
        expect("version 2", call("GET", "/v1/models/mlp/versions/2", tok=read)[0], 404)
        blobs = os.listdir(os.path.join(data, "blobs"))
        expect("blobs", blobs, [sha])
        # Inference against kiln run on the same input.
        x = np.random.default_rng(7).standard_normal((2, 768)).astype(np.float32)
        t = st.kiln_run(model, x, "onnx")
        req = lambda inputs: json.dumps({"id": "r1", "inputs": inputs}).encode()
        good = [{"name": "input", "shape": [2, 768], "datatype": "FP32", "data": x.ravel().tolist()}]
        status, body = call("POST", "/v2/models/mlp/infer", req(good), read)
        expect("infer", (status, body.get("model_name"), body.get("model_version"), body.get("id")), (200, "mlp", "1", "r1"))
        out = (body.get("outputs") or [{}])[0]
        expect("infer output", (out.get("name"), out.get("datatype"), out.get("shape")), ("output", "FP32", [2, 10]))
        got = np.array(out.get("data", []), dtype=np.float32).reshape(t.shape) if out.get("data") else None
        if got is None or not np.array_equal(got, t):
            failures.append(f"infer: outputs differ from kiln run's: {out.get('data', [])[:3]} vs {t.ravel()[:3]}")
        expect("infer version 1", call("POST", "/v2/models/mlp/versions/1/infer", req(good), read)[0], 200)
        expect("infer without a token", call("POST", "/v2/models/mlp/infer", req(good))[0], 401)
        expect("infer a missing model", call("POST", "/v2/models/none/infer", req(good), read)[0], 404)
        bad_type = [dict(good[0], datatype="INT64")]
        status, body = call("POST", "/v2/models/mlp/infer", req(bad_type), read)
        expect("infer INT64", (status, body.get("error")), (400, "input 'input': datatype INT64, the model takes float[batch,768]"))
        bad_dims = [dict(good[0], shape=[2, 700], data=x.ravel()[:1400].tolist())]
        expect("infer wrong dims", call("POST", "/v2/models/mlp/infer", req(bad_dims), read)[0], 400)
        expect("infer no inputs", call("POST", "/v2/models/mlp/infer", req([]), read)[0], 400)
        expect("infer not JSON", call("POST", "/v2/models/mlp/infer", b"{", read)[0], 400)
    return st.verdict()


if __name__ == "__main__":
    sys.exit(main())
