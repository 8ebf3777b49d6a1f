#!/usr/bin/python3
"""kiln serve's quantized compile jobs: a compile request's "quantize" (what kiln quantize takes) on a
real server process on loopback. Dynamic int8: the artifact is smaller than the float one's, its
outputs are near the float model's but not the same, the target's result records the request and
the accuracy against the float original, and the cache key is not the float compile's; the same
request again is a cache hit (quantized model and artifact); static int8 with calibration sets
uploaded (POST /v1/tensors) and with random ones; a calibration set kiln quantize refuses fails
the job's targets with its message; bad values are 400s with one line.

    tests/serve/serve_quantize.py KILN MODEL WORKDIR
"""
import hashlib
import os
import sys

import numpy as np
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import ServeTest  # noqa: E402


def cpu_flags():
    with open("/proc/cpuinfo") as f:
        return next((set(line.split(":", 1)[1].split()) for line in f if line.startswith("flags")), set())


def main():
    kiln, model, work = sys.argv[1:4]
    st = ServeTest("serve_quantize", kiln, work)
    data, failures, expect = st.data, st.failures, st.expect
    write, read = st.token("write"), st.token("read")
    def compile_job(request):
        status, queued = c.call("POST", "/v1/models/mlp/versions/1/compile", request, write)
        if status != 202:
            failures.append(f"compile {request}: {status} {queued}")
            return None
        return c.wait_job(queued["job"], read)

    x = np.random.default_rng(5).standard_normal((2, 768)).astype(np.float32)
    run = lambda path, label: st.kiln_run(path, x, label)

    with st.serve(["--workers", "1"]) as c:
        expect("upload", c.call("POST", "/v1/models/mlp", open(model, "rb").read(), write)[0], 201)

        # Bad values: 400, one line, naming what is wrong; nothing queued.
        bad = [({"mode": "int4"}, "quantize.mode"),
               ("dynamic", "'quantize' must be an object"),
               ({"mode": "static"}, "calibration"),
               ({"mode": "dynamic", "colour": 1}, "quantize.colour"),
               ({"mode": "fp16", "max_loss": 0.1}, "max_loss"),
               ({"mode": "static", "calibrate_random": 0}, "calibrate_random"),
               ({"mode": "static", "calibrate_random": 2, "calibrate": [["0" * 64]]}, "exclude each other"),
               ({"mode": "static", "calibrate": [["0" * 64]]}, "no uploaded tensor"),
               ({"mode": "static", "calibrate": [["xyz"]]}, "sha256"),
               ({"mode": "dynamic", "include_ops": ["Conv"]}, "Conv"),
               ({"mode": "dynamic", "per_channel": "yes"}, "per_channel"),
               ({"mode": "dynamic", "dims": ["batch"]}, "NAME=VALUE")]
        for q, needle in bad:
            status, body = c.call("POST", "/v1/models/mlp/versions/1/compile", {"targets": ["x86-64"], "quantize": q}, write)
            err = (body or {}).get("error", "")
            expect(f"quantize {q}", (status, needle in err, "\n" in err), (400, True, False))

        # Calibration tensors: a TensorProto file each; junk is refused.
        status, body = c.call("POST", "/v1/tensors", b"\x08\x01junk", write)
        expect("junk tensor", (status, "not a TensorProto" in (body or {}).get("error", "")), (400, True))
        expect("tensor with a read token", c.call("POST", "/v1/tensors", b"x", read)[0], 403)
        sets = []
        for k in range(4):
            blob = numpy_helper.from_array(np.random.default_rng(10 + k).standard_normal((1, 768)).astype(np.float32),
                                           "input").SerializeToString()
            status, body = c.call("POST", "/v1/tensors", blob, write)
            expect(f"tensor {k}", (status, body.get("sha256"), body.get("shape"), body.get("datatype")),
                   (201, hashlib.sha256(blob).hexdigest(), [1, 768], "float"))
            sets.append([body.get("sha256")])
        status, body = c.call("POST", "/v1/models/mlp/versions/1/compile",
                              {"targets": ["x86-64"], "quantize": {"mode": "static", "calibrate": [sets[0] * 2]}}, write)
        expect("a set of two tensors for one input", (status, "1 inputs" in body.get("error", "")), (400, True))

        float_job = compile_job({"targets": ["x86-64"], "runs": 3})
        dyn_request = {"targets": ["x86-64"], "runs": 3, "quantize": {"mode": "dynamic"}}
        dyn_job = compile_job(dyn_request)
        if float_job and dyn_job:
            f, q = float_job["targets"][0], dyn_job["targets"][0]
            expect("dynamic state", (dyn_job["state"], q.get("state")), ("succeeded", "succeeded"))
            qz = q.get("quantize") or {}
            expect("dynamic request recorded", qz.get("request", {}).get("mode"), "dynamic")
            outs = qz.get("accuracy", {}).get("outputs", [])
            if not (outs and outs[0].get("cosine", 0) > 0.99 and outs[0].get("max_abs", 0) > 0):
                failures.append(f"dynamic accuracy against the float original: {qz}")
            if "quantize" in f:
                failures.append("the float compile's result says it was quantized")
            if f.get("cache_key") == q.get("cache_key"):
                failures.append("the quantized compile has the float compile's cache key")
            if not q.get("size_bytes", 1 << 40) < 0.6 * f.get("size_bytes", 0):
                failures.append(f"dynamic artifact {q.get('size_bytes')} bytes, float {f.get('size_bytes')}")
            expect("the artifact's outputs against the quantized model", q.get("accuracy", {}).get("outputs_match"), True)
            # The artifact runs and its outputs are the quantized model's: near the float ones, not equal.
            status, blob, _ = c.call("GET", f"/v1/jobs/{dyn_job['job']}/artifacts/x86-64", tok=read, raw=True)
            open(os.path.join(work, "dyn.kiln"), "wb").write(blob)
            got, want = run(os.path.join(work, "dyn.kiln"), "dyn"), run(model, "f")
            cos = float((got * want).sum() / np.linalg.norm(got) / np.linalg.norm(want))
            if not (cos > 0.99 and np.abs(got - want).max() > 0):
                failures.append(f"dynamic artifact vs float: cosine {cos}, max abs {np.abs(got - want).max()}")

            # The measured plan is recorded, and steps on the reference kernels are said in the notes
            # (x86-64 has no VNNI: the int8 MatMulIntegers run there, 25x the fast engine's latency).
            fplan, qplan = f.get("measured", {}).get("plan", {}), q.get("measured", {}).get("plan", {})
            expect("float plan: no reference steps", (fplan.get("steps", 0) > 0, "reference" in fplan.get("kernels", {})),
                   (True, False))
            slow = qplan.get("kernels", {}).get("reference", 0)
            noted = any("on the reference kernels" in n for n in q.get("notes", []))
            expect("dynamic plan recorded, reference steps noted", (qplan.get("steps", 0) > 0, noted), (True, slow > 0))
            # Where the CPU has VNNI, x86-64-v4 runs the int8 file on oneDNN's int8 matmul, as kiln
            # bench does: the serve path's measurement is the fast engine's, no step on the reference.
            if {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd", "avx512_vnni"} <= cpu_flags():
                v4 = compile_job({"targets": ["x86-64-v4"], "runs": 3, "quantize": {"mode": "dynamic"}})
                kernels = (v4 or {}).get("targets", [{}])[0].get("measured", {}).get("plan", {}).get("kernels", {})
                expect("dynamic int8 on x86-64-v4 (VNNI): kernels", ("reference" in kernels,
                                                                   kernels.get("onednn.quant_matmul")), (False, 2))

            again = compile_job(dyn_request)
            if again:
                a = again["targets"][0]
                expect("again: compile cache", (a.get("cache_hit"), a.get("artifact")), (True, q.get("artifact")))
                expect("again: quantized model cached", (a.get("quantize") or {}).get("cache_hit"), True)

        uploaded = compile_job({"targets": ["x86-64"], "runs": 3, "quantize": {"mode": "static", "calibrate": sets}})
        random_sets = compile_job({"targets": ["x86-64"], "runs": 3, "quantize": {"mode": "static", "calibrate_random": 4}})
        for what, job in (("static uploaded", uploaded), ("static random", random_sets)):
            if not job:
                continue
            t = job["targets"][0]
            qz = t.get("quantize") or {}
            expect(f"{what} state", t.get("state"), "succeeded")
            expect(f"{what} calibration sets", qz.get("calibration", {}).get("sets"), 4)
            outs = qz.get("accuracy", {}).get("outputs", [])
            if not (outs and outs[0].get("cosine", 0) > 0.95):
                failures.append(f"{what} accuracy: {qz}")
        # A calibration tensor of the wrong shape passes the server's checks (one per input) and
        # fails in kiln quantize: every target fails with its one-line message, the worker goes on.
        wrong = numpy_helper.from_array(np.zeros((1, 10), np.float32), "input").SerializeToString()
        status, body = c.call("POST", "/v1/tensors", wrong, write)
        bad_job = compile_job({"targets": ["x86-64", "x86-64-v3"], "runs": 1,
                               "quantize": {"mode": "static", "calibrate": [[body.get("sha256")]]}})
        if bad_job:
            expect("bad calibration: job", bad_job["state"], "failed")
            for t in bad_job["targets"]:
                err = t.get("error", "")
                expect(f"bad calibration: {t.get('target')}",
                       (t.get("state"), err.startswith("quantize: "), "\n" in err, "shape" in err, data in err),
                       ("failed", True, False, True, False))
        if uploaded and random_sets and uploaded["targets"][0].get("cache_key") == random_sets["targets"][0].get("cache_key"):
            failures.append("static with uploaded and with random calibration share a cache key")
    return st.verdict()


if __name__ == "__main__":
    sys.exit(main())
