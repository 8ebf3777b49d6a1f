#!/usr/bin/python3
"""kiln ci against a real kiln serve on loopback, and locally: a passing gate that promotes the alias
(first with nothing to compare with, then against the version the alias points at), failing gates
(an impossible latency threshold, an impossible accuracy tolerance on a quantized compile) that exit
1 and leave the alias where it was, the server refusing to move an alias without a gate that passes,
and bad pipelines that exit 2 with one line.

    tests/serve/serve_ci.py KILN MODEL WORKDIR
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import ServeTest, free_port  # noqa: E402


def variant(model, path, scale):
    """The model with its first weight scaled: other bytes, a new version of the same name."""
    m = onnx.load(model)
    w = m.graph.initializer[0]
    w.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(w) * np.float32(scale), w.name))
    onnx.save(m, path)


def main():
    kiln, model, work = sys.argv[1:4]
    st = ServeTest("serve_ci", kiln, work)
    failures, expect = st.failures, st.expect
    write, read, admin = st.token("write"), st.token("read"), st.token("admin")
    url = None  # the server's, once it runs

    shutil.copy(model, os.path.join(work, "mlp.onnx"))
    variant(model, os.path.join(work, "mlp_b.onnx"), 1.01)
    variant(model, os.path.join(work, "mlp_c.onnx"), 1.02)

    def pipeline(name, **fields):
        p = {"model": "mlp.onnx", "name": "mlp", "targets": ["x86-64"], "compile": {"runs": 5},
             "tolerance": {"max_abs": 1e-3}, "latency_regression": 10.0, "alias": "production", "server": url}
        p.update(fields)
        p = {k: v for k, v in p.items() if v is not None}
        path = os.path.join(work, name)
        with open(path, "w") as f:
            f.write(json.dumps(p) if not name.endswith(".txt") else "{not json")
        return path

    def yaml_pipeline(name, text):
        path = os.path.join(work, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def ci(path, *flags, tok=write):
        report = path + ".report.json"
        env = dict(os.environ, KILN_TOKEN=tok)
        r = subprocess.run([kiln, "ci", path, "--report", report, *flags], capture_output=True, text=True, env=env,
                           timeout=300)
        rep = json.load(open(report)) if os.path.exists(report) else {}
        return r.returncode, r.stdout, r.stderr, rep

    def production():
        return c.call("GET", "/v1/models/mlp", tok=read)[1].get("aliases", {}).get("production")

    with st.serve(["--workers", "1"]) as c:
        url = f"http://127.0.0.1:{st.port}"
        # 1. Nothing to compare with yet: the gate checks accuracy, passes, promotes version 1.
        code, out, err, rep = ci(pipeline("a.json"), "--promote")
        expect("first gate", (code, rep.get("passed"), rep.get("promoted")), (0, True, True))
        if "target" not in out or "pass" not in out or "points at no version yet" not in out:
            failures.append(f"first gate's table: {out}{err}")
        expect("production after the first gate", production(), 1)

        # 2. A new version against production (version 1): compared, passes, promoted.
        code, out, err, rep = ci(pipeline("b.json", model="mlp_b.onnx"), "--promote")
        row = (rep.get("targets") or [{}])[0]
        expect("second gate", (code, rep.get("promoted"), "baseline_job" in rep, row.get("baseline_p50_ms", 0) > 0),
               (0, True, True, True))
        # The baseline (version 1, compiled in 1.) is a cache hit, measured again now (measure_hits).
        status, bjob = c.call("GET", f"/v1/jobs/{rep.get('baseline_job')}", tok=read)
        bt = (bjob.get("targets") or [{}])[0] if status == 200 else {}
        expect("baseline measured again", (bt.get("cache_hit"), bt.get("measured", {}).get("again")), (True, True))
        if "'production' (version 1)" not in out:
            failures.append(f"second gate does not say what it compared with: {out}{err}")
        expect("production after the second gate", production(), 2)

        # 3. An impossible latency threshold (99 % faster than production): exit 1, not promoted.
        code, out, err, rep_c = ci(pipeline("c.json", model="mlp_c.onnx", latency_regression=-0.99), "--promote")
        expect("latency gate", (code, rep_c.get("passed"), rep_c.get("promoted")), (1, False, False))
        if "FAIL" not in out or "latency" not in out:
            failures.append(f"latency gate's table: {out}{err}")
        expect("production after the latency gate", production(), 2)

        # 4. An impossible accuracy tolerance on a dynamic int8 compile: exit 1, not promoted.
        code, out, err, rep_d = ci(pipeline("d.json", model="mlp_c.onnx", tolerance={"max_abs": 0, "min_cosine": 1},
                                            compile={"runs": 5, "quantize": {"mode": "dynamic"}}), "--promote")
        expect("accuracy gate", (code, rep_d.get("passed")), (1, False))
        if "max abs error" not in out:
            failures.append(f"accuracy gate's table: {out}{err}")
        expect("production after the accuracy gate", production(), 2)

        # 4b. Static int8 calibrated on a folder of sets (uploaded by kiln ci as POST /v1/tensors).
        for k in range(2):
            d = os.path.join(work, "calib", f"test_data_set_{k}")
            os.makedirs(d)
            x = np.random.default_rng(k).standard_normal((1, 768)).astype(np.float32)
            open(os.path.join(d, "input_0.pb"), "wb").write(numpy_helper.from_array(x, "input").SerializeToString())
        code, out, err, rep_s = ci(pipeline("s.json", model="mlp_c.onnx", calibrate_dir="calib", alias=None,
                                            tolerance={"min_cosine": 0.99}, compile={"runs": 3, "quantize": {"mode": "static"}}))
        status, sjob = c.call("GET", f"/v1/jobs/{rep_s.get('job')}", tok=read)
        sq = (sjob.get("targets") or [{}])[0].get("quantize", {}) if status == 200 else {}
        expect("calibrate_dir", (code, sq.get("calibration", {}).get("sets"), len(sq.get("request", {}).get("calibrate", []))),
               (0, 2, 2))

        # 5. The server moves an alias only through a gate that passes on the jobs it ran.
        alias = "/v1/models/mlp/aliases/production"
        status, body = c.call("PUT", alias, {"version": 3}, write)
        expect("no gate, write token", status, 403)
        gate = {"job": rep_c.get("job"), "baseline_job": rep_c.get("baseline_job"), "latency_regression": -0.99}
        status, body = c.call("PUT", alias, {"version": 3, "gate": gate}, write)
        expect("a gate that fails on the server", (status, "latency" in body.get("error", "")), (409, True))
        status, body = c.call("PUT", alias, {"version": 3, "gate": {"job": rep_c.get("job")}}, write)
        expect("a gate without the baseline", (status, "baseline_job" in body.get("error", "")), (409, True))
        status, body = c.call("PUT", alias, {"version": 1, "gate": {"job": rep_c.get("job")}}, write)
        expect("a gate of another version's job", status, 409)
        status, body = c.call("PUT", alias, {"version": 3, "gate": {"job": 9999}}, write)
        expect("a gate of no job", status, 404)
        status, body = c.call("PUT", alias, {"version": 3, "gate": {"job": rep_c.get("job"), "latency_regression": "x"}}, write)
        expect("a malformed gate", status, 400)
        expect("production after the refusals", production(), 2)
        lax = dict(gate, latency_regression=10.0)
        # 5b. The alias's policy (admin): a gate laxer than it is evaluated under the policy's thresholds.
        pol = alias + "/policy"
        expect("a policy needs an admin token", c.call("PUT", pol, {"latency_regression": -0.99}, write)[0], 403)
        expect("a malformed policy", c.call("PUT", pol, {"latency_regression": "fast"}, admin)[0], 400)
        expect("a policy's unknown field", c.call("PUT", pol, {"colour": 1}, admin)[0], 400)
        expect("a policy of no model", c.call("PUT", "/v1/models/nomodel/aliases/production/policy", {}, admin)[0], 404)
        status, body = c.call("PUT", pol, {"latency_regression": -0.99, "tolerance": {"max_abs": 1}}, admin)
        expect("a policy set", (status, (body.get("policy") or {}).get("latency_regression")), (200, -0.99))
        status, body = c.call("GET", pol, tok=read)
        expect("a policy read", (status, (body.get("policy") or {}).get("tolerance")), (200, {"max_abs": 1}))
        expect("the model lists its policies",
               "production" in c.call("GET", "/v1/models/mlp", tok=read)[1].get("alias_policies", {}), True)
        status, body = c.call("PUT", alias, {"version": 3, "gate": lax}, write)
        expect("a lax gate under a strict policy",
               (status, "policy" in body.get("error", ""), body.get("gate", {}).get("thresholds")),
               (409, True, {"tolerance": {"max_abs": 1}, "latency_regression": -0.99}))
        code, out, err, rep = ci(pipeline("pol.json", model="mlp_c.onnx"), "--promote")
        expect("kiln ci under the policy", (code, rep.get("passed"), rep.get("promoted"), "policy" in out),
               (1, True, False, True))
        status, body = c.call("PUT", pol, {}, admin)
        expect("a policy removed", (status, body.get("policy", "?")), (200, None))
        status, body = c.call("PUT", alias, {"version": 3, "gate": lax}, write)
        expect("a gate that passes", (status, body.get("gate", {}).get("passed")), (200, True))
        expect("production moved by the gate", production(), 3)

        # 6. Bad pipelines and flags: exit 2, one line.
        open(os.path.join(work, "junk.onnx"), "wb").write(b"\x08\x07junk")
        bad = {"notjson.txt": pipeline("notjson.txt"),
               "a model the server refuses": pipeline("junk.json", model="junk.onnx"),
               "not YAML": yaml_pipeline("bad.yaml", "model: mlp.onnx\ntargets: [x86-64\n"),
               "a YAML key twice": yaml_pipeline("twice.yaml", "model: mlp.onnx\nmodel: mlp_b.onnx\ntargets: [x86-64]\n"),
               "a YAML alias bomb": yaml_pipeline("bomb.yml", "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
                   f"{c}: &{c} [{', '.join([f'*{chr(ord(c) - 1)}'] * 10)}]\n" for c in "bcdefghij")),
               "a YAML list": yaml_pipeline("list.yaml", "- model: mlp.onnx\n"),
               "an unknown YAML field": yaml_pipeline("uf.yaml", "model: mlp.onnx\ntargets: [x86-64]\ncolour: 1\n"),
               "no targets": pipeline("nt.json", targets=None),
               "unknown target": pipeline("ut.json", targets=["z80"]),
               "unknown field": pipeline("uf.json", colour=1),
               "bad tolerance": pipeline("bt.json", tolerance={"max_abs": "small"}),
               "missing model": pipeline("mm.json", model="nothere.onnx"),
               "bad quantize": pipeline("bq.json", compile={"quantize": {"mode": "int3"}}),
               "promote without alias": pipeline("pa.json", alias=None)}
        for what, path in bad.items():
            code, out, err, _ = ci(path, "--promote")
            expect(f"bad pipeline {what}", (code, err.count("\n"), err.startswith("kiln: error:")), (2, 1, True))
        code, out, err, _ = ci(pipeline("nt2.json"), tok="")
        expect("a server without a token", (code, "token" in err), (2, True))
        code, out, err, _ = ci(pipeline("https.json", server="https://127.0.0.1:1"))
        expect("an https server", (code, "http://HOST:PORT" in err), (2, True))
        code, out, err, _ = ci(pipeline("down.json", server=f"http://127.0.0.1:{free_port()}"))
        expect("a server that does not answer", (code, "no answer" in err, err.count("\n")), (2, True, 1))

        # 7. Locally (no server): the candidate against a baseline model file.
        code, out, err, rep = ci(pipeline("local.json", server=None, alias=None, model="mlp_b.onnx", baseline="mlp.onnx"))
        expect("local gate", (code, rep.get("passed"), (rep.get("targets") or [{}])[0].get("baseline_p50_ms", 0) > 0),
               (0, True, True))
        # The same pipeline in YAML (block style, comments, a flow list): the same gate.
        code, out, err, rep = ci(yaml_pipeline("local.yaml", """# kiln ci pipeline, YAML
model: mlp_b.onnx
name: mlp
targets: [x86-64]
compile:
  runs: 5
tolerance:
  max_abs: 1.0e-3
latency_regression: 10.0
baseline: 'mlp.onnx'
"""))
        expect("local gate, YAML", (code, rep.get("passed"), (rep.get("targets") or [{}])[0].get("target")),
               (0, True, "x86-64"))
        # JSON is YAML: a .yaml file holding JSON reads alike.
        code, out, err, rep = ci(pipeline("local_json.yaml", server=None, alias=None, model="mlp_b.onnx",
                                          baseline="mlp.onnx"))
        expect("local gate, JSON in a .yaml", (code, rep.get("passed")), (0, True))
        code, out, err, rep = ci(pipeline("local_fail.json", server=None, alias=None, model="mlp_b.onnx",
                                          baseline="mlp.onnx", latency_regression=-0.99))
        expect("local failing gate", (code, rep.get("passed")), (1, False))
        # Locally with a kept --data: the alias lives there and moves through the same gate.
        local = os.path.join(work, "local-data")
        code, out, err, rep = ci(pipeline("lp1.json", server=None, alias="prod"), "--promote", "--data", local)
        expect("local promote 1", (code, rep.get("promoted")), (0, True))
        code, out, err, rep = ci(pipeline("lp2.json", server=None, alias="prod", model="mlp_b.onnx",
                                          latency_regression=-0.99), "--promote", "--data", local)
        expect("local promote refused", (code, rep.get("promoted"), "'prod' (version 1)" in out), (1, False, True))
        code, out, err, rep = ci(pipeline("lp3.json", server=None, alias="prod", model="mlp_b.onnx"), "--promote",
                                 "--data", local)
        expect("local promote 2", (code, rep.get("promoted"), "baseline_job" in rep), (0, True, True))
    return st.verdict()


if __name__ == "__main__":
    sys.exit(main())
