#!/usr/bin/python3
"""kiln serve's GET /metrics after known traffic: every line parsed as Prometheus' text exposition
format (version 0.0.4) by the small parser below (HELP and TYPE before a family's samples, metric
and label names, escaped label values, counters named *_total, histogram buckets cumulative up to
le="+Inf" equal to _count), then the values checked against what the test did: HTTP requests by
route, method and status; one compile job (x86-64) by state and its target's duration; the
inference requests, successes, failures, queue and compute durations and batch sizes of a model.

    tests/serve/serve_metrics.py KILN MLP_ONNX WORKDIR
"""
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_client import ServeTest  # noqa: E402

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"')


def parse(text):
    """{family: {"type", "help", "samples": {(name, labels tuple): value}}}; raises on a bad line."""
    families, current = {}, None
    for n, line in enumerate(text.splitlines(), 1):
        where = f"line {n} {line!r}"
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            kind, name, rest = line[2:6], *line[7:].split(" ", 1)
            if not NAME.fullmatch(name):
                raise ValueError(f"{where}: bad metric name")
            f = families.setdefault(name, {"type": None, "help": None, "samples": {}})
            if kind == "TYPE":
                if rest not in ("counter", "gauge", "histogram", "summary", "untyped") or f["samples"]:
                    raise ValueError(f"{where}: bad TYPE, or TYPE after samples")
                f["type"] = rest
            else:
                f["help"] = rest
            current = name
            continue
        if line.startswith("#") or not line.strip():
            continue
        m = re.fullmatch(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)", line)
        if not m:
            raise ValueError(f"{where}: not a sample")
        name, body, value = m.group(1), m.group(3), m.group(4)
        labels = []
        if body:
            pos = 0
            while pos < len(body):
                lm = LABEL.match(body, pos)
                if not lm:
                    raise ValueError(f"{where}: bad labels at {body[pos:]!r}")
                labels.append((lm.group(1), lm.group(2)))
                pos = lm.end()
                if pos < len(body):
                    if body[pos] != ",":
                        raise ValueError(f"{where}: labels not separated by ','")
                    pos += 1
        family = current
        base = re.sub(r"_(bucket|sum|count)$", "", name)
        if family not in (name, base):
            raise ValueError(f"{where}: a sample outside its family's HELP/TYPE ({family})")
        f = families[family]
        if f["type"] is None or f["help"] is None:
            raise ValueError(f"{where}: no TYPE or HELP before it")
        if f["type"] == "counter" and not name.endswith("_total"):
            raise ValueError(f"{where}: a counter not named *_total")
        if f["type"] == "histogram" and name == family:
            raise ValueError(f"{where}: a histogram sample without _bucket/_sum/_count")
        v = float(value)  # +Inf, NaN included
        key = (name, tuple(labels))
        if key in f["samples"]:
            raise ValueError(f"{where}: a sample twice")
        f["samples"][key] = v
    for name, f in families.items():
        if f["type"] != "histogram":
            continue
        series = {}
        for (sample, labels), v in f["samples"].items():
            rest = tuple(l for l in labels if l[0] != "le")
            series.setdefault(rest, {"buckets": [], "count": None, "sum": None})
            if sample.endswith("_bucket"):
                le = dict(labels)["le"]
                series[rest]["buckets"].append((float(le), v))
            elif sample.endswith("_count"):
                series[rest]["count"] = v
            else:
                series[rest]["sum"] = v
        for rest, s in series.items():
            counts = [v for _, v in sorted(s["buckets"])]
            if counts != sorted(counts) or not s["buckets"] or sorted(s["buckets"])[-1][0] != float("inf") \
                    or counts[-1] != s["count"] or s["sum"] is None:
                raise ValueError(f"{name}{rest}: buckets not cumulative up to +Inf = _count, or no _sum")
    return families


def value(families, family, sample=None, **labels):
    f = families.get(family)
    if not f:
        return None
    for (name, ls), v in f["samples"].items():
        if name == (sample or family) and all(dict(ls).get(k) == w for k, w in labels.items()):
            return v
    return None


def main():
    kiln, mlp, work = sys.argv[1:4]
    st = ServeTest("serve_metrics", kiln, work)
    failures, expect = st.failures, st.expect
    write, read = st.token("write"), st.token("read")
    with st.serve(["--workers", "1"]) as c:
        expect("upload", c.call("POST", "/v1/models/mlp", open(mlp, "rb").read(), write)[0], 201)
        status, job = c.call("POST", "/v1/models/mlp/versions/1/compile", {"targets": ["x86-64"], "runs": 1}, write)
        expect("compile", status, 202)
        expect("job", c.wait_job(job["job"], read)["state"], "succeeded")
        x = np.random.default_rng(1).standard_normal((2, 768)).astype(np.float32)
        good = {"inputs": [{"name": "input", "shape": [2, 768], "datatype": "FP32", "data": x.ravel().tolist()}]}
        bad = {"inputs": [{"name": "input", "shape": [2, 700], "datatype": "FP32", "data": [0.0] * 1400}]}
        for _ in range(5):
            expect("infer", c.call("POST", "/v2/models/mlp/infer", good, read)[0], 200)
        expect("a bad infer", c.call("POST", "/v2/models/mlp/infer", bad, read)[0], 400)
        expect("infer without a token", c.call("POST", "/v2/models/mlp/infer", good)[0], 401)
        expect("an unknown path", c.call("GET", "/no/such/thing")[0], 404)

        status, text, headers = c.call("GET", "/metrics", raw=True)
        expect("metrics", (status, headers.get("Content-Type", "").startswith("text/plain; version=0.0.4")), (200, True))
        try:
            fams = parse(text.decode())
        except ValueError as e:
            failures.append(f"metrics do not parse: {e}")
            fams = {}
        infer = "/v2/models/{name}/infer"
        http = "kiln_http_requests_total"
        expect("http: infers 200", value(fams, http, route=infer, method="POST", status="200"), 5)
        expect("http: infers 400", value(fams, http, route=infer, method="POST", status="400"), 1)
        expect("http: infers 401", value(fams, http, route=infer, method="POST", status="401"), 1)
        expect("http: uploads", value(fams, http, route="/v1/models/{name}", method="POST", status="201"), 1)
        expect("http: compile", value(fams, http, route="/v1/models/{name}/versions/{version}/compile",
                                      method="POST", status="202"), 1)
        expect("http: 404", value(fams, http, route="/no/such/thing", method="GET", status="404"), 1)
        expect("compile jobs succeeded", value(fams, "kiln_compile_jobs", state="succeeded"), 1)
        expect("compile jobs queued", value(fams, "kiln_compile_jobs", state="queued"), 0)
        expect("compile queue depth", value(fams, "kiln_compile_queue_depth"), 0)
        expect("compile targets", value(fams, "kiln_compile_targets_total", target="x86-64", state="succeeded",
                                        cache_hit="false"), 1)
        expect("compile duration count", value(fams, "kiln_compile_duration_seconds",
                                               "kiln_compile_duration_seconds_count", target="x86-64"), 1)
        secs = value(fams, "kiln_compile_duration_seconds", "kiln_compile_duration_seconds_sum", target="x86-64")
        if not secs or secs <= 0:
            failures.append(f"compile duration sum {secs}")
        m = {"model": "mlp", "version": "1"}
        expect("inference requests", value(fams, "kiln_inference_requests_total", **m), 5)
        expect("inference successes", value(fams, "kiln_inference_request_success_total", **m), 5)
        expect("inference failures", value(fams, "kiln_inference_request_failure_total", **m), None)
        expect("runs", value(fams, "kiln_inference_exec_total", **m), 5)
        for h in ("kiln_inference_queue_duration_us", "kiln_inference_compute_infer_duration_us"):
            expect(h + " count", value(fams, h, h + "_count", **m), 5)
            s = value(fams, h, h + "_sum", **m)
            if s is None or s < (1 if "compute" in h else 0):
                failures.append(f"{h}_sum {s}")
        expect("batch sizes", (value(fams, "kiln_inference_batch_size", "kiln_inference_batch_size_count", **m),
                               value(fams, "kiln_inference_batch_size", "kiln_inference_batch_size_sum", **m)), (5, 10))
        expect("queue depth", value(fams, "kiln_inference_queue_depth", **m), 0)
        print(f"serve_metrics: {sum(len(f['samples']) for f in fams.values())} samples in {len(fams)} families parsed")
    return st.verdict()


if __name__ == "__main__":
    sys.exit(main())
