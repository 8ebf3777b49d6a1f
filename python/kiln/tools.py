"""kiln.inspect, kiln.optimize, kiln.profile: the command line's commands (src/cli), run in process,
returning the JSON the command line prints or writes (`kiln inspect --json`, `kiln optimize
--report x.json`, `kiln profile --json`) as Python dicts."""
import json
import os
import tempfile

from kiln import _kiln


def _run(args):
    rc, out, err = _kiln.run_cli([str(a) for a in args])
    return rc, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def inspect(model, values=False, allow_newer_opset=False):
    """What `kiln inspect MODEL --json` prints: inputs, outputs, opsets, ops, parameters, FLOPs,
    problems; with values=True every intermediate value's type and shape."""
    args = ["inspect", os.fspath(model), "--json"]
    if values:
        args.append("--values")
    if allow_newer_opset:
        args.append("--allow-newer-opset")
    _, out, _ = _run(args)
    return json.loads(out)


def optimize(model, output, level=2, verify=0, report=None, passes=None, bisect=False, dims=None,
             rtol=None, atol=None, external_data=False):
    """`kiln optimize MODEL -o OUTPUT -O LEVEL [--verify N] [--report REPORT]`: writes the optimized
    model and returns the rewrite record (the JSON --report writes) with 'exit_code' (1 when
    verification found different outputs) and 'text' (what the command printed). A report path
    ending in .html gets the HTML page; the returned dict then has only 'exit_code', 'text', 'report'."""
    args = ["optimize", os.fspath(model), "-o", os.fspath(output), "-O", level]
    if passes:
        args += ["--passes", passes if isinstance(passes, str) else ",".join(passes)]
    if verify:
        args += ["--verify", int(verify)]
    if bisect:
        args.append("--bisect")
    for name, value in (dims or {}).items():
        args += ["--dim", f"{name}={value}"]
    if rtol is not None:
        args += ["--rtol", rtol]
    if atol is not None:
        args += ["--atol", atol]
    if external_data:
        args.append("--external-data")
    html = report is not None and os.fspath(report).endswith((".html", ".htm"))
    with tempfile.TemporaryDirectory(prefix="kiln-optimize-") as tmp:
        path = os.fspath(report) if report is not None else os.path.join(tmp, "report.json")
        rc, out, _ = _run(args + ["--report", path])
        if html:
            return {"exit_code": rc, "text": out, "report": path}
        with open(path) as f:
            result = json.load(f)
    result["exit_code"] = rc
    result["text"] = out
    return result


def profile(model, runs=10, warmup=1, threads=0, level=0, dims=None, seed=None, trace=None,
            html=None, predict=None, engine="fast"):
    """What `kiln profile MODEL --json` prints: per-node and per-op times, roofline, plan; random
    inputs (seeded), `dims` a dict of symbolic dim values. trace/html also write those files."""
    args = ["profile", os.fspath(model), "--json", "--runs", runs, "--warmup", warmup,
            "--engine", engine, "-O", level]
    if threads:
        args += ["--threads", threads]
    for name, value in (dims or {}).items():
        args += ["--dim", f"{name}={value}"]
    if seed is not None:
        args += ["--seed", seed]
    if trace is not None:
        args += ["--trace", os.fspath(trace)]
    if html is not None:
        args += ["--html", os.fspath(html)]
    if predict is not None:
        args += ["--predict", predict]
    _, out, _ = _run(args)
    return json.loads(out)
