#!/usr/bin/python3
"""The op-level benchmark: each kind of node of real models, alone, run by kiln and by ONNX Runtime.

Usage: /usr/bin/python3 bench/ops.py [--kiln PATH] [--models "resnet50 bert_base ..."]
           [--models-dir DIR] [--work DIR] [--threads N] [--iterations N] [--per-op K] [--ops A,B]
           [--check]

For each model (a name scripts/get-models.sh knows, or a path to an .onnx file): its symbolic input
dims fixed (batch 1, seq 128, the presets of tools/models/make_inputs.py for the npm models), then
`kiln optimize` (-O2: constants folded, BatchNormalizations in their convs, the fusions kiln writes
into portable ONNX), then every node of the top graph at the shapes kiln infers. Nodes with the same
op, attributes and input shapes (weights being constant or not) are one case; per op the K cases
that occur most (ties: the largest output first) are kept. Each case becomes a one-node model (its
constant inputs the model's real weights, the others graph inputs of random values), timed by `kiln
bench` and by ONNX Runtime's tools/ort/bench.js on the same inputs and threads.

ONNX Runtime through node.js pays tens of microseconds per call that are not the op's (the
binding, outputs copied into JavaScript), so its side is the sum of its profiler's kernel times
for the nodes it ran (`bench.js --profile`: the median per node over the timed runs; with its
layout transforms a Conv can be several nodes); kiln's, the same way, is the median over the runs
of its steps' summed time (`kiln profile --json`'s node_sum_ms: a reorder of the one-node model's
NCHW input included). The p50 of kiln's whole one-node run (`kiln bench`, its per-call cost
included) is beside it. The one-node model's result is a graph output, made fresh each run, and
the page faults of writing it fall inside the step: for a large output that is much of a
memory-bound op's time (PP-OCR det's 2x nearest Resize to 96x160x160: 0.77-0.91 ms as a one-node
model, 0.62 inside the model). kiln runs with GOMP_SPINCOUNT=200000, what it picks itself on a quiet machine
(src/engine/threads.cc; on a loaded one it spins less, its threads fall asleep between runs and
each run pays their wake-up, tens of microseconds that would swamp a small op); ONNX Runtime's
threads spin by default. The call's p50 through node.js is in the JSON lines too. The table (also written to WORK/ops.md, with
one JSON line per case in WORK/ops.jsonl) names the kernels kiln ran and the nodes ORT ran.
Not a test: nothing here passes or fails on speed.
"""
import argparse
import collections
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools", "models"))
from make_inputs import PRESETS, np_dtype  # noqa: E402  (the npm models' input shapes)

DEFAULT_MODELS = ("resnet50 mobilenet_v2 efficientnet_b0 squeezenet1_1 inception_v3 bert_base "
                  "speech_lstm_gru unet_small ppocr_det silero_vad")
DIMS = {"batch": 1, "seq": 128}
# Nodes that are not ops to time alone: subgraph holders (their bodies are other nodes) and
# nodes that only name a value.
SKIP_OPS = {"If", "Loop", "Scan", "Constant", "Identity", "SequenceConstruct"}


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def fix_dims(model, name):
    """Sets the model's symbolic input dims as make_inputs.py would feed them."""
    preset = PRESETS.get(name, {}).get("shape", {})
    inits = {i.name for i in model.graph.initializer}
    for inp in model.graph.input:
        if inp.name in inits or not inp.type.HasField("tensor_type"):
            continue
        dims = inp.type.tensor_type.shape.dim
        for k, d in enumerate(dims):
            if inp.name in preset and k < len(preset[inp.name]):
                d.dim_value = preset[inp.name][k]
            elif not d.HasField("dim_value"):
                d.dim_value = DIMS.get(d.dim_param, 1)


def value_types(kiln, path, model):
    """name -> (elem_type, dims) for every value of the top graph kiln can infer concretely."""
    out = {}
    for v in list(model.graph.input) + list(model.graph.output):
        t = v.type.tensor_type
        if v.type.HasField("tensor_type") and all(d.HasField("dim_value") for d in t.shape.dim):
            out[v.name] = (t.elem_type, [d.dim_value for d in t.shape.dim])
    r = run([kiln, "inspect", "--values", "--json", path])
    if r.returncode != 0:
        raise RuntimeError(f"kiln inspect {path}: {r.stderr.strip()}")
    for v in json.loads(r.stdout)["values"]:
        shape = v.get("shape")
        if shape is None or not all(isinstance(d, int) for d in shape):
            continue
        dt = v["dtype"].upper()  # kiln's names are ONNX's in lower case (float, int64, bfloat16 ...)
        if dt in TensorProto.DataType.keys():
            out[v["name"]] = (TensorProto.DataType.Value(dt), shape)
    return out


def collect(kiln, models_dir, work, names, ops_filter):
    """Cases keyed by signature: {op, domain, node, inputs, consts, count, models, size}."""
    cases = collections.OrderedDict()
    os.makedirs(os.path.join(work, "models"), exist_ok=True)
    for name in names:
        src = name if name.endswith(".onnx") else os.path.join(models_dir, name + ".onnx")
        base = os.path.splitext(os.path.basename(src))[0]
        model = onnx.load(src)
        fix_dims(model, base)
        fixed = os.path.join(work, "models", base + ".fixed.onnx")
        onnx.save(model, fixed)
        opt = os.path.join(work, "models", base + ".opt.onnx")
        r = run([kiln, "optimize", fixed, "-o", opt])
        if r.returncode != 0:
            print(f"ops.py: kiln optimize {base}: {r.stderr.strip()} (using the model as exported)",
                  file=sys.stderr)
            opt = fixed
        model = onnx.load(opt)
        types = value_types(kiln, opt, model)
        inits = {i.name: i for i in model.graph.initializer}
        for node in model.graph.node:
            if node.op_type in SKIP_OPS or (ops_filter and node.op_type not in ops_filter):
                continue
            ins, ok = [], True
            for i in node.input:
                if not i:
                    ins.append(None)
                elif i in inits:
                    ins.append(("const", inits[i].data_type, list(inits[i].dims)))
                elif i in types:
                    ins.append(("fed", *types[i]))
                else:
                    ok = False
            outs = [types.get(o) if o else None for o in node.output]
            if not ok or any(o is None for o, n in zip(outs, node.output) if n):
                continue
            attrs = b"".join(a.SerializeToString() for a in sorted(node.attribute, key=lambda a: a.name))
            key = (node.domain, node.op_type, repr(ins), attrs)
            size = max((int(np.prod(o[1])) for o in outs if o), default=0)
            if key not in cases:
                consts = {i: inits[i] for i in node.input if i in inits}
                opset = {o.domain: o.version for o in model.opset_import}
                cases[key] = dict(op=node.op_type, domain=node.domain, node=node, inputs=ins,
                                  outputs=outs, consts=consts, opset=opset,
                                  ir=model.ir_version, count=0, models=collections.Counter(),
                                  size=size)
            cases[key]["count"] += 1
            cases[key]["models"][base] += 1
    return list(cases.values())


def pick(cases, per_op):
    by_op = collections.defaultdict(list)
    for c in cases:
        by_op[c["op"]].append(c)
    kept = []
    for op in sorted(by_op):
        kept += sorted(by_op[op], key=lambda c: (-c["count"], -c["size"]))[:per_op]
    return kept


def random_value(elem_type, dims, rng):
    dtype = np_dtype(elem_type)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=dims).astype(np.bool_)
    if np.issubdtype(dtype, np.integer):  # indices and ids: in range for any axis of 2 or more
        return rng.integers(0, 2, size=dims).astype(dtype)
    return rng.standard_normal(size=dims).astype(dtype)


def write_case(c, folder, rng):
    """The one-node model and its inputs: folder/model.onnx, folder/inputs/input_N.pb."""
    node = onnx.NodeProto()
    node.CopyFrom(c["node"])
    node.name = c["op"]
    inputs, inits, feeds = [], [], []
    for k, (name, spec) in enumerate(zip(node.input, c["inputs"])):
        if spec is None:
            continue
        kind, elem, dims = spec
        if kind == "const":
            if all(name != i.name for i in inits):  # one initializer may feed two inputs
                inits.append(c["consts"][name])
            continue
        if any(name == f.name for f in feeds):
            continue
        inputs.append(helper.make_tensor_value_info(name, elem, dims))
        feeds.append(numpy_helper.from_array(random_value(elem, dims, rng), name))
    outputs = [helper.make_tensor_value_info(n, t[0], t[1]) for n, t in zip(node.output, c["outputs"]) if n]
    graph = helper.make_graph([node], c["op"], inputs, outputs, initializer=inits)
    opsets = [helper.make_opsetid(d, v) for d, v in c["opset"].items()]
    model = helper.make_model(graph, opset_imports=opsets, ir_version=c["ir"])
    os.makedirs(os.path.join(folder, "inputs"), exist_ok=True)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    for k, f in enumerate(feeds):
        with open(os.path.join(folder, "inputs", f"input_{k}.pb"), "wb") as out:
            out.write(f.SerializeToString())


def time_both(kiln, folder, threads, iterations, warmup):
    model, inputs = os.path.join(folder, "model.onnx"), os.path.join(folder, "inputs")
    common = ["--inputs", inputs, "--threads", str(threads), "--iterations", str(iterations),
              "--warmup", str(warmup), "--json"]
    env = dict(os.environ, GOMP_SPINCOUNT="200000")
    k = run([kiln, "bench", model] + common, env=env)
    # the kernels' time: per run, the steps' summed time (kiln profile), its median over the runs
    prof = run([kiln, "profile", model, "--inputs", inputs, "--threads", str(threads), "--runs", str(iterations),
                "--warmup", str(warmup), "--json"], env=env)
    profile = os.path.join(folder, "ort_profile")
    os.makedirs(profile, exist_ok=True)
    o = run(["node", os.path.join(ROOT, "tools", "ort", "bench.js"), model, "--profile", profile] + common)
    res = {}
    for side, r in (("kiln", k), ("ort", o)):
        try:
            res[side] = json.loads(r.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            res[side] = {"error": (r.stderr.strip().splitlines() or ["no output"])[-1]}
    try:
        res["kiln"]["kernel_ms"] = float(np.median(json.loads(prof.stdout)["node_sum_ms"]))
    except (ValueError, KeyError, TypeError):
        res["kiln"].setdefault("error", (prof.stderr.strip().splitlines() or ["kiln profile: no output"])[-1])
    return res


def describe(c):
    shapes = []
    for spec in c["inputs"]:
        if spec is None:
            continue
        kind, elem, dims = spec
        shapes.append(("w" if kind == "const" else "") + "x".join(map(str, dims)) if dims else
                      ("w" if kind == "const" else "") + "scalar")
    attrs = []
    for a in c["node"].attribute:
        v = helper.get_attribute_value(a)
        if isinstance(v, bytes):
            v = v.decode(errors="replace")
        if isinstance(v, (list, tuple)) and len(v) > 8:
            continue
        if isinstance(v, (int, float, str, list, tuple)):
            attrs.append(f"{a.name}={v}".replace(" ", ""))
    return " ".join(shapes) + (" (" + ", ".join(attrs) + ")" if attrs else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", default=os.path.join(ROOT, "build", "kiln"))
    ap.add_argument("--models", default=DEFAULT_MODELS)
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "build", "models"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "bench-ops"))
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--per-op", type=int, default=3, help="cases kept per op (default 3)")
    ap.add_argument("--ops", default="", help="only these ops, comma-separated")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 when a case failed on either side (the ctest bench_ops_cases_run)")
    args = ap.parse_args()
    kiln = os.path.abspath(args.kiln)
    if not os.access(kiln, os.X_OK):
        sys.exit(f"bench/ops.py: no kiln binary at {kiln} (make build, or --kiln PATH)")
    if run([os.path.join(ROOT, "tools", "ort", "install.sh")]).returncode != 0:
        sys.exit("bench/ops.py: ONNX Runtime (onnxruntime-node from npm) is not available")
    names = args.models.split()
    wanted = [n for n in names if not n.endswith(".onnx")]
    if wanted:
        r = subprocess.run([os.path.join(ROOT, "scripts", "get-models.sh"), args.models_dir] + wanted,
                           stdout=subprocess.DEVNULL)
        if r.returncode != 0:
            sys.exit("bench/ops.py: scripts/get-models.sh failed")
    ops_filter = set(filter(None, args.ops.split(",")))
    cases = pick(collect(kiln, args.models_dir, args.work, names, ops_filter), args.per_op)
    rng = np.random.default_rng(0)

    print(f"== {len(cases)} cases", file=sys.stderr)

    rows = []
    with open(os.path.join(args.work, "ops.jsonl"), "w") as jl:
        for n, c in enumerate(cases):
            folder = os.path.join(args.work, "cases", f"{n:03d}_{c['op']}")
            write_case(c, folder, rng)
            res = time_both(kiln, folder, args.threads, args.iterations, args.warmup)
            k, o = res["kiln"], res["ort"]
            ort_nodes = o.get("nodes") or {}
            row = dict(op=c["op"], case=describe(c), count=c["count"], models=dict(c["models"]),
                       kiln_ms=k.get("kernel_ms"), kiln_run_ms=k.get("p50_ms"), ort_call_ms=o.get("p50_ms"),
                       ort_ms=sum(v["ms"] for v in ort_nodes.values()) if ort_nodes else None,
                       kernels=sorted(k.get("kernels", {})),
                       ort_ops=sorted({v["op"] for v in ort_nodes.values() if v.get("op")}),
                       error=k.get("error") or o.get("error"))
            if row["kiln_ms"] and row["ort_ms"]:
                row["ratio"] = row["kiln_ms"] / row["ort_ms"]
            jl.write(json.dumps(row) + "\n")
            rows.append(row)
            print(f"[{n + 1}/{len(cases)}] {c['op']}: {row.get('ratio', row['error'])}", file=sys.stderr)

    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    lines = [f"kiln vs onnxruntime-node per op: {args.threads} threads, {args.iterations} runs; {cpu}; "
             "kernel times on both sides: kiln's steps summed per run (kiln profile), ORT's profiler's per node "
             "(median per node, summed); kiln run: p50 of the whole one-node run (kiln bench)",
             "", "| op | case (w: constant) | nodes (models) | kiln us | ORT us | kiln / ORT | kiln run us | kiln kernels | ORT ran |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    for r in rows:
        models = ", ".join(f"{m} {n}" for m, n in r["models"].items())
        ratio = f"{r['ratio']:.2f}" if "ratio" in r else f"error: {r['error']}"
        us = lambda v: f"{v * 1e3:.1f}" if v is not None else "-"
        kern = ", ".join(sorted(r["kernels"])) if r["kernels"] else "-"
        lines.append(f"| {r['op']} | {r['case']} | {r['count']} ({models}) | {us(r['kiln_ms'])} | "
                     f"{us(r['ort_ms'])} | {ratio} | {us(r['kiln_run_ms'])} | {kern} | {', '.join(r['ort_ops']) or '-'} |")
    slow = [r for r in rows if r.get("ratio", 0) > 1.0]
    lines += ["", f"{len(slow)} of {len(rows)} cases slower than ONNX Runtime: " +
              ", ".join(sorted({r['op'] for r in slow}))]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.work, "ops.md"), "w") as f:
        f.write(text)
    print(text, end="")
    failed = [r for r in rows if r["error"] or "ratio" not in r]
    if args.check and (failed or not rows):
        for r in failed:
            print(f"bench/ops.py: {r['op']} {r['case']}: {r['error'] or 'no time'}", file=sys.stderr)
        sys.exit(1 if failed or not rows else 0)


if __name__ == "__main__":
    main()
