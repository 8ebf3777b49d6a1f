#!/usr/bin/python3
"""The Open Inference Protocol's parts beyond JSON infer, on kiln serve over loopback:

- the binary tensor data extension: binary inputs, binary outputs (all, or one by its
  "binary_data" parameter), each combination bit for bit equal to the JSON form; malformed
  Inference-Header-Content-Length values and binary_data_size parameters are 400 and the
  server stays up;
- model metadata (GET /v2/models/{name}[/versions/{v}]: name, versions, platform, inputs and
  outputs with datatype and shape, -1 for a symbolic dim), server metadata (GET /v2), 404s;
- readiness and the repository extension: a version is not ready until its first request or a
  load; POST /v2/repository/models/{name}/load (version_policy latest, all, a list) and /unload,
  their token scopes, an unloaded model's infer refused until it is loaded again;
- FP16 and BYTES tensors (kiln's float16 and string tensors), as JSON data and as binary data
  (FP16's 2-byte halves; BYTES elements each a 4-byte little-endian length and its bytes), in and
  out, every form equal; BYTES elements that overrun their binary_data_size are 400;
- an alias in place of a version number (/v2/models/mlp/versions/prod/infer);
- --open-inference: metadata, ready and infer without a token, load/unload and /v1 still need one;
- --split mlp=prod:1,canary:1: 100 requests by id shared between the two aliases' versions, the
  same id always to the same one, a named version kept, a bad --split exit code 2.

    tests/serve/serve_protocol.py KILN MLP_ONNX WORKDIR
"""
import http.client
import json
import os
import subprocess
import sys

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import ServeTest  # noqa: E402


def post(port, path, body, headers):
    """(status, headers, body bytes) of a raw POST."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("POST", path, body, headers)
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return r.status, dict(r.getheaders()), data


def split_response(headers, data):
    """The JSON header and each output's array, binary or JSON."""
    n = headers.get("Inference-Header-Content-Length")
    head = json.loads(data[: int(n)] if n else data)
    at = int(n) if n else len(data)
    outs = {}
    for o in head["outputs"]:
        dtype = {"FP32": np.float32, "INT64": np.int64}[o["datatype"]]
        if "parameters" in o and "binary_data_size" in o["parameters"]:
            size = o["parameters"]["binary_data_size"]
            outs[o["name"]] = np.frombuffer(data[at: at + size], dtype=dtype).reshape(o["shape"])
            at += size
        else:
            outs[o["name"]] = np.array(o["data"], dtype=dtype).reshape(o["shape"])
    return head, outs, at == len(data)


def small_model(name, elem, shape, op):
    """A one-node model y = OP(x) of ELEM tensors of SHAPE ("batch" a symbolic dim), serialized."""
    from onnx import helper
    x = helper.make_tensor_value_info("x", elem, shape)
    y = helper.make_tensor_value_info("y", elem, shape)
    g = helper.make_graph([helper.make_node(op, ["x"], ["y"])], name, [x], [y])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()


def bytes_elements(items):
    """BYTES elements in the binary data extension: a 4-byte little-endian length, then the bytes."""
    return b"".join(len(b).to_bytes(4, "little") + b for b in items)


def check_fp16_and_bytes(c, port, auth, write, expect, failures):
    """FP16 through Relu and BYTES through Identity, JSON and binary data, in and out."""
    expect("upload fp16", c.call("POST", "/v1/models/half", small_model("half", onnx.TensorProto.FLOAT16, ["batch", 4], "Relu"), write)[0], 201)
    expect("upload bytes", c.call("POST", "/v1/models/text", small_model("text", onnx.TensorProto.STRING, ["batch"], "Identity"), write)[0], 201)
    status, body = c.call("GET", "/v2/models/text", tok=auth["Authorization"].split()[1])
    expect("BYTES metadata", (status, body.get("inputs")), (200, [{"name": "x", "datatype": "BYTES", "shape": [-1]}]))

    def infer(model, req, binary=b""):
        header = json.dumps(req).encode()
        hdrs = dict(auth, **({"Inference-Header-Content-Length": str(len(header))} if binary or "parameters" in req else {}))
        status, h, d = post(port, f"/v2/models/{model}/infer", header + binary, hdrs)
        if status != 200:
            return status, d, None
        n = h.get("Inference-Header-Content-Length")
        return status, json.loads(d[: int(n)] if n else d), d[int(n):] if n else b""

    # FP16: halves exactly representable, so every form is exact.
    x = np.array([[-1.5, 0.25, 2.0, -0.0], [65504.0, -3.0, 0.5, 1.0]], dtype=np.float16)
    want = np.maximum(x, 0)
    as_json = {"name": "x", "shape": [2, 4], "datatype": "FP16", "data": x.ravel().astype(float).tolist()}
    as_bin = {"name": "x", "shape": [2, 4], "datatype": "FP16", "parameters": {"binary_data_size": x.nbytes}}
    status, head, _ = infer("half", {"inputs": [as_json]})
    if status != 200:
        failures.append(f"FP16 JSON infer: {status} {head[:200]!r}")
    else:
        out = head["outputs"][0]
        expect("FP16 JSON out", (out["datatype"], out["shape"], np.array(out["data"], np.float16).tolist()),
               ("FP16", [2, 4], want.ravel().tolist()))
    status, head, rest = infer("half", {"inputs": [as_bin], "parameters": {"binary_data_output": True}}, x.tobytes())
    if status != 200:
        failures.append(f"FP16 binary infer: {status} {head[:200]!r}")
    else:
        out = head["outputs"][0]
        expect("FP16 binary out", (out["datatype"], out["parameters"], np.frombuffer(rest, np.float16).tolist()),
               ("FP16", {"binary_data_size": 16}, want.ravel().tolist()))

    # BYTES: text, an empty element and bytes that are not UTF-8 (binary only: JSON carries text).
    text = ["kiln", "", "ünïcode", "a longer element of text"]
    raw = [t.encode() for t in text] + [b"\x00\xff\xfe"]
    status, head, _ = infer("text", {"inputs": [{"name": "x", "shape": [4], "datatype": "BYTES", "data": text}]})
    if status != 200:
        failures.append(f"BYTES JSON infer: {status} {head[:200]!r}")
    else:
        out = head["outputs"][0]
        expect("BYTES JSON out", (out["datatype"], out["shape"], out["data"]), ("BYTES", [4], text))
    payload = bytes_elements(raw)
    as_bin = {"name": "x", "shape": [5], "datatype": "BYTES", "parameters": {"binary_data_size": len(payload)}}
    status, head, rest = infer("text", {"inputs": [as_bin], "parameters": {"binary_data_output": True}}, payload)
    if status != 200:
        failures.append(f"BYTES binary infer: {status} {head[:200]!r}")
    else:
        out = head["outputs"][0]
        expect("BYTES binary out", (out["datatype"], out["shape"], out["parameters"], rest),
               ("BYTES", [5], {"binary_data_size": len(payload)}, payload))
    status, head, _ = infer("text", {"inputs": [dict(as_bin, shape=[1], parameters={"binary_data_size": 7})]},
                            bytes_elements([b"kil"]))
    expect("BYTES binary in, JSON out", (status, head["outputs"][0]["data"] if status == 200 else head), (200, ["kil"]))

    # Malformed BYTES: 400 with a one-line error each.
    bad = {
        "a BYTES length past its data": (1, (100).to_bytes(4, "little") + b"abc"),
        "BYTES data cut inside a length": (2, bytes_elements([b"ab"]) + b"\x01\x00"),
        "BYTES data longer than its elements": (1, bytes_elements([b"ab"]) + b"zz"),
        "fewer bytes than 4 per element": (3, b"\0" * 8),
    }
    for what, (count, data) in bad.items():
        req = {"inputs": [{"name": "x", "shape": [count], "datatype": "BYTES", "parameters": {"binary_data_size": len(data)}}]}
        status, d, _ = infer("text", req, data)
        err = json.loads(d).get("error", "") if status != 200 and d.startswith(b"{") else ""
        if status != 400 or not err or "\n" in err:
            failures.append(f"{what}: {status} {d[:200]!r}, expected 400 with a one-line error")
    for what, value in {"a number as BYTES": 3, "FP16 data that is text": "x"}.items():
        model, dt = ("text", "BYTES") if "BYTES" in what else ("half", "FP16")
        shape = [1] if model == "text" else [1, 4]
        status, d, _ = infer(model, {"inputs": [{"name": "x", "shape": shape, "datatype": dt,
                                                 "data": [value] * (1 if model == "text" else 4)}]})
        expect(what, status, 400)


def main():
    kiln, mlp, work = sys.argv[1:4]
    st = ServeTest("serve_protocol", kiln, work)
    data, log, failures, expect = st.data, st.log, st.failures, st.expect
    write, read, admin = st.token("write"), st.token("read"), st.token("admin")
    auth = {"Authorization": "Bearer " + read, "Content-Type": "application/octet-stream"}
    with st.serve(["--workers", "0"]) as c:
        port = st.port
        v1 = open(mlp, "rb").read()
        m = onnx.load_from_string(v1)
        m.doc_string = "version 2"
        v2 = m.SerializeToString()
        expect("upload 1", c.call("POST", "/v1/models/mlp", v1, write)[0], 201)

        # Readiness before any request; then metadata.
        expect("not ready yet", c.call("GET", "/v2/models/mlp/ready", tok=read)[:1], (400,))
        status, body = c.call("GET", "/v2", tok=read)
        expect("server metadata", (status, body.get("name"), "binary_tensor_data" in body.get("extensions", [])),
               (200, "kiln", True))
        expect("upload 2", c.call("POST", "/v1/models/mlp", v2, write)[0], 201)
        status, body = c.call("GET", "/v2/models/mlp", tok=read)
        expect("metadata", (status, body), (200, {
            "name": "mlp", "versions": ["1", "2"], "platform": "kiln_onnx",
            "inputs": [{"name": "input", "datatype": "FP32", "shape": [-1, 768]}],
            "outputs": [{"name": "output", "datatype": "FP32", "shape": [-1, 10]}]}))
        status, body = c.call("GET", "/v2/models/mlp/versions/1", tok=read)
        expect("metadata of version 1", (status, body.get("versions")), (200, ["1"]))
        expect("metadata without a token", c.call("GET", "/v2/models/mlp")[0], 401)
        expect("metadata of a missing model", c.call("GET", "/v2/models/none", tok=read)[0], 404)
        expect("metadata of a missing version", c.call("GET", "/v2/models/mlp/versions/9", tok=read)[0], 404)

        # Binary data against JSON, bit for bit.
        x = np.random.default_rng(5).standard_normal((3, 768)).astype(np.float32)
        json_in = {"name": "input", "shape": [3, 768], "datatype": "FP32", "data": x.ravel().tolist()}
        bin_in = {"name": "input", "shape": [3, 768], "datatype": "FP32", "parameters": {"binary_data_size": x.nbytes}}
        status, h, d = post(port, "/v2/models/mlp/versions/1/infer", json.dumps({"inputs": [json_in]}).encode(), auth)
        expect("JSON infer", status, 200)
        _, want, _ = split_response(h, d)
        cases = {
            "binary in, JSON out": ({"inputs": [bin_in]}, True),
            "binary in, binary out (binary_data_output)": ({"inputs": [bin_in], "parameters": {"binary_data_output": True}}, True),
            "JSON in, binary out (binary_data_output)": ({"inputs": [json_in], "parameters": {"binary_data_output": True}}, False),
            "JSON in, binary out (the output's binary_data)": (
                {"inputs": [json_in], "outputs": [{"name": "output", "parameters": {"binary_data": True}}]}, False),
        }
        for what, (req, binary_input) in cases.items():
            header = json.dumps(req).encode()
            body = header + (x.tobytes() if binary_input else b"")
            hdrs = dict(auth, **{"Inference-Header-Content-Length": str(len(header))})
            status, h, d = post(port, "/v2/models/mlp/versions/1/infer", body, hdrs)
            if status != 200:
                failures.append(f"{what}: {status} {d[:200]!r}")
                continue
            head, got, whole = split_response(h, d)
            binary_out = "parameters" in head["outputs"][0]
            expect(f"{what}: binary output", binary_out, "binary" in what.split(",")[1])
            expect(f"{what}: the body is the header and the outputs' bytes", whole, True)
            if not np.array_equal(got["output"].view(np.uint32), want["output"].view(np.uint32)):
                failures.append(f"{what}: outputs differ from the JSON form's")

        # Malformed binary requests: 400 each.
        header = json.dumps({"inputs": [bin_in]}).encode()
        bad = {
            "a header length that is not a number": (header + x.tobytes(), "12a"),
            "a negative header length": (header + x.tobytes(), "-5"),
            "a header length past the body": (header + x.tobytes(), str(len(header) + x.nbytes + 1)),
            "a header length of 0": (header + x.tobytes(), "0"),
            "a header length cutting the JSON": (header + x.tobytes(), str(len(header) - 3)),
            "binary data too short": (header + x.tobytes()[:-4], str(len(header))),
            "binary data too long": (header + x.tobytes() + b"\0" * 4, str(len(header))),
            "no binary data": (header, str(len(header))),
        }
        wrong_size = json.dumps({"inputs": [dict(bin_in, parameters={"binary_data_size": x.nbytes - 4})]}).encode()
        bad["a binary_data_size not the shape's bytes"] = (wrong_size + x.tobytes()[:-4], str(len(wrong_size)))
        for size in (-4, "4", 1.5):
            h2 = json.dumps({"inputs": [dict(bin_in, parameters={"binary_data_size": size})]}).encode()
            bad[f"binary_data_size {size!r}"] = (h2 + x.tobytes(), str(len(h2)))
        both = json.dumps({"inputs": [dict(json_in, parameters={"binary_data_size": x.nbytes})]}).encode()
        bad["data and binary_data_size both"] = (both + x.tobytes(), str(len(both)))
        flag = json.dumps({"inputs": [json_in], "parameters": {"binary_data_output": "yes"}}).encode()
        bad["binary_data_output not a bool"] = (flag, str(len(flag)))
        for what, (body, n) in bad.items():
            status, h, d = post(port, "/v2/models/mlp/versions/1/infer", body,
                                dict(auth, **{"Inference-Header-Content-Length": n}))
            err = json.loads(d).get("error", "") if d.startswith(b"{") else ""
            if status != 400 or not err or "\n" in err:
                failures.append(f"{what}: {status} {d[:200]!r}, expected 400 with a one-line error")
        expect("still up", c.call("GET", "/v2/health/live")[0], 200)

        check_fp16_and_bytes(c, port, auth, write, expect, failures)
        expect("still up after FP16 and BYTES", c.call("GET", "/v2/health/live")[0], 200)

        # Readiness and the repository extension.
        expect("version 1 ready after its request", c.call("GET", "/v2/models/mlp/versions/1/ready", tok=read)[0], 200)
        expect("version 2 not ready", c.call("GET", "/v2/models/mlp/versions/2/ready", tok=read)[0], 400)
        expect("load without a token", c.call("POST", "/v2/repository/models/mlp/load")[0], 401)
        expect("load with a read token", c.call("POST", "/v2/repository/models/mlp/load", tok=read)[0], 403)
        expect("load a missing model", c.call("POST", "/v2/repository/models/none/load", tok=write)[0], 404)
        expect("unload a missing model", c.call("POST", "/v2/repository/models/none/unload", tok=write)[0], 404)
        status, body = c.call("POST", "/v2/repository/models/mlp/load", tok=write)
        expect("load (latest)", (status, body.get("loaded")), (200, ["2"]))
        expect("version 2 ready", c.call("GET", "/v2/models/mlp/versions/2/ready", tok=read)[0], 200)
        expect("the newest ready", c.call("GET", "/v2/models/mlp/ready", tok=read)[0], 200)
        status, body = c.call("POST", "/v2/repository/models/mlp/unload", tok=write)
        expect("unload", (status, body.get("unloaded")), (200, 2))
        for v in ("1", "2"):
            expect(f"version {v} not ready after unload",
                   c.call("GET", f"/v2/models/mlp/versions/{v}/ready", tok=read)[0], 400)
        status, body = c.call("POST", "/v2/models/mlp/infer", {"inputs": [json_in]}, read)
        expect("infer an unloaded model", (status, "load" in (body or {}).get("error", "")), (400, True))
        status, body = c.call("POST", "/v2/repository/models/mlp/load",
                              {"parameters": {"version_policy": "all"}}, write)
        expect("load all", (status, body.get("loaded")), (200, ["1", "2"]))
        expect("infer after load", c.call("POST", "/v2/models/mlp/versions/1/infer", {"inputs": [json_in]}, read)[0], 200)
        c.call("POST", "/v2/repository/models/mlp/unload", tok=write)
        status, body = c.call("POST", "/v2/repository/models/mlp/load", {"parameters": {"version_policy": [1]}}, write)
        expect("load [1]", (status, body.get("loaded")), (200, ["1"]))
        expect("version 2 not loaded by [1]", c.call("GET", "/v2/models/mlp/versions/2/ready", tok=read)[0], 400)
        for policy in ("newest", [7], ["1"], [], {"x": 1}):
            status, _ = c.call("POST", "/v2/repository/models/mlp/load", {"parameters": {"version_policy": policy}}, write)
            expect(f"load with version_policy {policy!r}", status, 404 if policy == [7] else 400)
        expect("load with a body that is not JSON", c.call("POST", "/v2/repository/models/mlp/load", b"{", write)[0], 400)
        # An alias names a version in /v2 routes.
        # (an admin moves an alias without a gate)
        expect("alias", c.call("PUT", "/v1/models/mlp/aliases/prod", {"version": 1}, admin)[0], 200)
        status, body = c.call("GET", "/v2/models/mlp/versions/prod", tok=read)
        expect("metadata by alias", (status, body.get("versions")), (200, ["1"]))
        status, body = c.call("POST", "/v2/models/mlp/versions/prod/infer", {"inputs": [json_in]}, read)
        expect("infer by alias", (status, body.get("model_version")), (200, "1"))
        expect("a missing alias", c.call("POST", "/v2/models/mlp/versions/nope/infer", {"inputs": [json_in]}, read)[0], 404)
        expect("alias canary", c.call("PUT", "/v1/models/mlp/aliases/canary", {"version": 2}, admin)[0], 200)
        expect("still up at the end", c.call("GET", "/v2/health/live")[0], 200)

    # --split: a bad one is exit code 2 with one line.
    bad = subprocess.run([kiln, "serve", "--data", data, "--split", "mlp=prod"], capture_output=True, text=True)
    expect("--split mlp=prod", (bad.returncode, len(bad.stderr.strip().splitlines())), (2, 1))

    # --open-inference: metadata, ready and infer need no token; load and unload still do. With
    # --split mlp=prod:1,canary:1: unversioned requests shared between versions 1 and 2 by id.
    with st.serve(["--workers", "0", "--open-inference", "--split", "mlp=prod:1,canary:1", "--split", "vad=none:1"],
                  log=log + ".open") as c:
        expect("open: metadata without a token", c.call("GET", "/v2/models/mlp")[0], 200)
        expect("open: infer without a token", c.call("POST", "/v2/models/mlp/infer", {"inputs": [json_in]})[0], 200)
        expect("open: load without a token", c.call("POST", "/v2/repository/models/mlp/load")[0], 401)
        expect("open: unload with a read token", c.call("POST", "/v2/repository/models/mlp/unload", tok=read)[0], 403)
        expect("open: the registry still needs one", c.call("GET", "/v1/models")[0], 401)
        got = {}
        for i in range(100):
            status, body = c.call("POST", "/v2/models/mlp/infer", {"id": f"r{i}", "inputs": [json_in]})
            got[f"r{i}"] = body.get("model_version") if status == 200 else status
        shares = {v: list(got.values()).count(v) for v in set(got.values())}
        if set(shares) != {"1", "2"} or min(shares.values()) < 30:
            failures.append(f"--split 1:1 over 100 ids: {shares}")
        again = [c.call("POST", "/v2/models/mlp/infer", {"id": k, "inputs": [json_in]})[1].get("model_version")
                 for k in list(got)[:10]]
        expect("--split: the same id, the same version", again, list(got.values())[:10])
        status, body = c.call("POST", "/v2/models/mlp/versions/1/infer", {"id": "r0", "inputs": [json_in]})
        expect("--split: a named version is kept", (status, body.get("model_version")), (200, "1"))
        status, body = c.call("POST", "/v2/models/vad/infer", {"inputs": [json_in]})
        expect("--split to a missing alias", (status, "none" in body.get("error", "")), (404, True))
        print(f"serve_protocol: --split mlp=prod:1,canary:1 over 100 ids: {shares}")
        expect("open: ready without a token", c.call("GET", "/v2/models/mlp/ready")[0], 200)
    return st.verdict()


if __name__ == "__main__":
    sys.exit(main())
