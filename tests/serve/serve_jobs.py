#!/usr/bin/python3
"""kiln serve's compile jobs, the embedded default (SQLite under --data, one in-process worker), on
a loopback port: upload a model, compile it for two targets, poll the job, download both
artifacts and run them with `kiln run` against the .onnx's outputs; the same request again hits
the compile cache; a target that does not run here falls back, saying why; aliases; the
refusals (tokens, bad requests, missing jobs and artifacts).

    tests/serve/serve_jobs.py KILN MODEL WORKDIR
"""
import hashlib
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import ServeTest  # noqa: E402


def main():
    kiln, model, work = sys.argv[1:4]
    st = ServeTest("serve_jobs", kiln, work)
    failures, expect = st.failures, st.expect
    write, read, admin = st.token("write"), st.token("read"), st.token("admin")
    with st.serve(["--workers", "1"]) as c:
        onnx_bytes = open(model, "rb").read()
        expect("upload", c.call("POST", "/v1/models/mlp", onnx_bytes, write)[0], 201)
        status, body = c.call("GET", "/v1/models/mlp/versions/1", tok=read)
        expect("metadata", (status, body.get("opsets", {}).get("ai.onnx") is not None, body.get("parameters", 0) > 0),
               (200, True, True))

        targets = ["x86-64", "x86-64-v3"]
        request = {"targets": targets, "runs": 3}
        expect("compile without a token", c.call("POST", "/v1/models/mlp/versions/1/compile", request)[0], 401)
        expect("compile with a read token", c.call("POST", "/v1/models/mlp/versions/1/compile", request, read)[0], 403)
        status, body = c.call("POST", "/v1/models/mlp/versions/1/compile", {"targets": ["z80"]}, write)
        expect("an unknown target", (status, "z80" in body.get("error", "")), (400, True))
        status, body = c.call("POST", "/v1/models/mlp/versions/1/compile", {"targets": ["x86-64"], "colour": 1}, write)
        expect("an unknown field", (status, "colour" in body.get("error", "")), (400, True))
        expect("not JSON", c.call("POST", "/v1/models/mlp/versions/1/compile", b"{", write)[0], 400)
        expect("a missing version", c.call("POST", "/v1/models/mlp/versions/9/compile", request, write)[0], 404)

        status, queued = c.call("POST", "/v1/models/mlp/versions/1/compile", request, write)
        expect("compile", (status, queued.get("state")), (202, "queued"))
        job = c.wait_job(queued["job"], read)
        per = {t["target"]: t for t in job["targets"]}
        expect("job targets", sorted(per), sorted(targets))
        for name, t in per.items():
            want = "succeeded" if t.get("runs_here") else "fell-back"
            expect(f"{name} state", t.get("state"), want)
            expect(f"{name} cache", t.get("cache_hit"), False)
            for key in ("compile_seconds", "size_bytes", "artifact", "placement", "backends"):
                if key not in t:
                    failures.append(f"{name}: no '{key}' in {t}")
            if t.get("runs_here"):
                m = t.get("measured", {})
                if not m.get("latency_p50_ms", 0) > 0:
                    failures.append(f"{name}: no measured latency: {t}")
                expect(f"{name} accuracy", t.get("accuracy", {}).get("outputs_match"), True)
        expect("job state", job["state"], "succeeded" if all(t.get("runs_here") for t in per.values()) else "fell-back")
        if "claimed by" not in job.get("log", ""):
            failures.append(f"job log: {job.get('log')!r}")

        # Download each artifact and run it with kiln run against the .onnx.
        x = np.random.default_rng(3).standard_normal((2, 768)).astype(np.float32)
        run = lambda path, label: st.kiln_run(path, x, label)

        want = run(model, "onnx")
        for name, t in per.items():
            if "artifact" not in t:
                failures.append(f"{name}: no artifact: {t}")
                continue
            status, blob, headers = c.call("GET", f"/v1/jobs/{queued['job']}/artifacts/{name}", tok=read, raw=True)
            expect(f"download {name}", (status, hashlib.sha256(blob).hexdigest()), (200, t["artifact"]["sha256"]))
            expect(f"download {name} size", len(blob), t["artifact"]["bytes"])
            path = os.path.join(work, f"mlp-{name}.kiln")
            open(path, "wb").write(blob)
            if t.get("runs_here"):
                got = run(path, name)
                if not np.allclose(got, want, rtol=1e-3, atol=1e-4):
                    failures.append(f"kiln run {name}: outputs differ from the .onnx's by {np.abs(got - want).max()}")
        expect("download without a token", c.call("GET", f"/v1/jobs/{queued['job']}/artifacts/x86-64", raw=True)[0], 401)
        expect("an artifact of no target", c.call("GET", f"/v1/jobs/{queued['job']}/artifacts/x86-64-v4", tok=read)[0], 404)
        expect("a missing job", c.call("GET", "/v1/jobs/999", tok=read)[0], 404)

        # The same request again: the compile cache, same bytes.
        status, again = c.call("POST", "/v1/models/mlp/versions/1/compile", request, write)
        job2 = c.wait_job(again["job"], read)
        for t in job2["targets"]:
            expect(f"again {t['target']} cache", t.get("cache_hit"), True)
            expect(f"again {t['target']} artifact", t.get("artifact"), per[t["target"]]["artifact"])

        # Again with measure_hits: the hit's artifact measured again now, the same bytes.
        status, again3 = c.call("POST", "/v1/models/mlp/versions/1/compile", dict(request, measure_hits=True), write)
        for t in c.wait_job(again3["job"], read)["targets"]:
            m = t.get("measured") or {}
            want_again = True if t.get("runs_here") else None
            expect(f"measured again {t['target']}", (t.get("cache_hit"), m.get("again"), t.get("artifact")),
                   (True, want_again, per[t["target"]]["artifact"]))
            if t.get("runs_here") and not (m.get("latency_p50_ms", 0) > 0 and t.get("accuracy", {}).get("outputs_match")):
                failures.append(f"measured again {t['target']}: {m}")

        # A target that does not run here: compiled, unmeasured, fell back with the reason.
        status, q3 = c.call("POST", "/v1/models/mlp/versions/1/compile", {"targets": ["aarch64-linux"], "runs": 1}, write)
        job3 = c.wait_job(q3["job"], read)
        t = job3["targets"][0]
        expect("aarch64 state", (job3["state"], t.get("state")), ("fell-back", "fell-back"))
        if "does not run here" not in (t.get("fallback") or {}).get("reason", ""):
            failures.append(f"aarch64 fallback reason: {t.get('fallback')}")

        # Aliases: moved through a gate (tests/serve/serve_ci.py) or, without one, by an admin token.
        expect("alias with a read token", c.call("PUT", "/v1/models/mlp/aliases/prod", {"version": 1}, read)[0], 403)
        status, body = c.call("PUT", "/v1/models/mlp/aliases/prod", {"version": 1}, write)
        expect("alias without a gate, write token", (status, "gate" in body.get("error", "")), (403, True))
        expect("alias", c.call("PUT", "/v1/models/mlp/aliases/prod", {"version": 1}, admin),
               (200, {"name": "mlp", "alias": "prod", "version": 1, "gate": "forced (admin token)"}))
        expect("alias of a missing version", c.call("PUT", "/v1/models/mlp/aliases/prod", {"version": 5}, admin)[0], 404)
        expect("alias that is a number", c.call("PUT", "/v1/models/mlp/aliases/12", {"version": 1}, admin)[0], 400)
        expect("alias without a version", c.call("PUT", "/v1/models/mlp/aliases/prod", {"v": 1}, admin)[0], 400)
        status, body = c.call("GET", "/v1/models/mlp/versions/prod", tok=read)
        expect("version by alias", (status, body.get("version")), (200, 1))
        status, body = c.call("GET", "/v1/models/mlp", tok=read)
        expect("model", (status, body.get("aliases"), len(body.get("versions", []))), (200, {"prod": 1}, 1))
        expect("compile by alias", c.call("POST", "/v1/models/mlp/versions/prod/compile", request, write)[0], 202)
    return st.verdict()


if __name__ == "__main__":
    sys.exit(main())
