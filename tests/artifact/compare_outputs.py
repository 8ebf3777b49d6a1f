#!/usr/bin/python3
"""Compares two folders of output_N.pb (ONNX TensorProto) files, as kiln test does:
|a - b| <= atol + rtol * |b|, b the expected.

    compare_outputs.py ACTUAL_DIR EXPECTED_DIR [--rtol R] [--atol A] [--exact]

Exits 1 naming the first output that differs (--exact: bit for bit), 0 when all agree."""
import argparse
import pathlib
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def load(path):
    t = onnx.TensorProto()
    t.ParseFromString(path.read_bytes())
    return numpy_helper.to_array(t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("actual")
    ap.add_argument("expected")
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--exact", action="store_true")
    a = ap.parse_args()
    expected = sorted(pathlib.Path(a.expected).glob("output_*.pb"))
    if not expected:
        print(f"no output_N.pb in {a.expected}")
        return 1
    for e in expected:
        got_path = pathlib.Path(a.actual) / e.name
        if not got_path.exists():
            print(f"{e.name}: missing from {a.actual}")
            return 1
        got, want = load(got_path), load(e)
        if got.shape != want.shape or got.dtype != want.dtype:
            print(f"{e.name}: {got.dtype}{list(got.shape)}, expected {want.dtype}{list(want.shape)}")
            return 1
        if a.exact:
            if got.tobytes() != want.tobytes():
                print(f"{e.name}: not bit for bit the same")
                return 1
            continue
        g = got.astype(np.float64)
        w = want.astype(np.float64)
        bad = np.abs(g - w) > a.atol + a.rtol * np.abs(w)
        if bad.any():
            print(f"{e.name}: {int(bad.sum())} of {bad.size} elements differ, max abs error "
                  f"{float(np.max(np.abs(g - w))):.3g}")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
