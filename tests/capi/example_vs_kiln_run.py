#!/usr/bin/python3
"""The C example program (examples/c/run_model, on libkiln.so) against `kiln run` on one model:
the same seeded inputs (tools/models/make_inputs.py writes input_N.pb; this script writes their raw
bytes for run_model), both ways of running through the C API (into the caller's buffers, and
kiln_session_run_alloc), every output equal to kiln run's output_N.pb.

    tests/capi/example_vs_kiln_run.py KILN RUN_MODEL MODEL WORKDIR [--artifact] [make_inputs.py flags...]

With --artifact, MODEL is compiled first (kiln compile --target native, the inputs' dims declared
as --shapes) and run_model runs the artifact; kiln run's outputs on the .onnx are the reference.

Exits 1 on a difference, printing each output's largest difference either way.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()[:500]}")
    return p.stdout


def read_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def numbered(folder, prefix):
    names = [n for n in os.listdir(folder) if n.startswith(prefix + "_") and n.endswith(".pb")]
    return [os.path.join(folder, n) for n in sorted(names, key=lambda n: int(n[len(prefix) + 1:-3]))]


def main():
    kiln, run_model, model, work = sys.argv[1:5]
    make_flags = sys.argv[5:]
    as_artifact = "--artifact" in make_flags
    make_flags = [f for f in make_flags if f != "--artifact"]
    name = os.path.splitext(os.path.basename(model))[0]
    inputs, ref = os.path.join(work, "inputs"), os.path.join(work, "kiln_run")
    os.makedirs(ref, exist_ok=True)
    run(["/usr/bin/python3", os.path.join(ROOT, "tools/models/make_inputs.py"), model, inputs] + make_flags)
    run([kiln, "run", model, "--inputs", inputs, "--outputs", ref])
    runs = model
    if as_artifact:
        runs = os.path.join(work, name + ".kiln")
        shapes = []  # each --dim NAME=V the inputs were made with, declared
        for flag, value in zip(make_flags, make_flags[1:]):
            if flag == "--dim":
                shapes += ["--shapes", value]
        run([kiln, "compile", model, "--target", "native", "-o", runs, "--runs", "0"] + shapes)
        name += ".kiln"
    args = [run_model, runs]
    for i, pb in enumerate(numbered(inputs, "input")):
        a = read_pb(pb)
        raw = os.path.join(work, f"input_{i}.raw")
        np.ascontiguousarray(a).tofile(raw)
        args += ["--input", raw, "--shape", "x".join(str(d) for d in a.shape)]
    expected = [read_pb(p) for p in numbered(ref, "output")]
    status = 0
    for mode in ("buffers", "alloc"):
        out = os.path.join(work, "c_" + mode)
        os.makedirs(out, exist_ok=True)
        stdout = run(args + ["--outputs", out] + (["--alloc"] if mode == "alloc" else []))
        printed = [line for line in stdout.splitlines() if line.startswith("result ")]
        if len(printed) != len(expected):
            print(f"FAIL {name} ({mode}): run_model printed stats of {len(printed)} outputs, kiln run wrote {len(expected)}")
            status = 1
        for i, e in enumerate(expected):
            raw = os.path.join(out, f"output_{i}.raw")
            got = np.fromfile(raw, dtype=e.dtype)
            if got.size != e.size:
                print(f"FAIL {name} ({mode}) output {i}: {got.size} elements, kiln run's has {e.size} {list(e.shape)}")
                status = 1
                continue
            got = got.reshape(e.shape)
            diff = float(np.max(np.abs(got.astype(np.float64) - e.astype(np.float64)))) if e.size else 0.0
            same = np.array_equal(got, e, equal_nan=True) if e.dtype.kind == "f" else np.array_equal(got, e)
            print(f"{name} ({mode}) output {i} {e.dtype}{list(e.shape)}: "
                  f"{'bit-identical' if same else f'max |diff| {diff:.3g}'} to kiln run's")
            if not same:
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
