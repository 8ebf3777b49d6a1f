#!/usr/bin/env python3
"""Checks an optimized model against ONNX Runtime's: its outputs (as ORT computed them, in
OUT_DIR/output_N.pb) match the expected ones at rtol/atol, and it has no more nodes (subgraphs
counted) than ONNX Runtime's basic-level optimized graph.

  check_optimized.py OPTIMIZED.onnx ORT_BASIC.onnx EXPECTED_DIR OUT_DIR [--rtol R] [--atol A]
"""
import argparse
import glob
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def count_nodes(graph):
    n = 0
    for node in graph.node:
        n += 1
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                n += count_nodes(a.g)
            for g in a.graphs:
                n += count_nodes(g)
    return n


def main():
    p = argparse.ArgumentParser()
    p.add_argument("optimized")
    p.add_argument("ort_basic")
    p.add_argument("expected")
    p.add_argument("actual")
    p.add_argument("--rtol", type=float, default=1e-3)
    p.add_argument("--atol", type=float, default=1e-4)
    a = p.parse_args()

    ours = count_nodes(onnx.load(a.optimized, load_external_data=False).graph)
    ort = count_nodes(onnx.load(a.ort_basic, load_external_data=False).graph)
    problems = []
    if ours > ort:
        problems.append(f"{ours} nodes, ONNX Runtime's basic level has {ort}")
    expected = sorted(glob.glob(os.path.join(a.expected, "output_*.pb")))
    if not expected:
        problems.append("no expected outputs")
    for path in expected:
        name = os.path.basename(path)
        want = numpy_helper.to_array(onnx.load_tensor(path))
        got_path = os.path.join(a.actual, name)
        if not os.path.exists(got_path):
            problems.append(f"{name}: not written")
            continue
        got = numpy_helper.to_array(onnx.load_tensor(got_path))
        if got.shape != want.shape or got.dtype != want.dtype:
            problems.append(f"{name}: {got.dtype}{list(got.shape)}, expected {want.dtype}{list(want.shape)}")
            continue
        if not np.allclose(got, want, rtol=a.rtol, atol=a.atol, equal_nan=True):
            err = np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))
            problems.append(f"{name}: max abs error {err:.3g}")
    status = "FAILED: " + "; ".join(problems) if problems else "ok"
    print(f"{os.path.basename(os.path.dirname(a.optimized))}: {ours} nodes (ORT basic {ort}), {status}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
