#!/usr/bin/python3
"""Cosine similarity of every output_N.pb of two folders; exits 1 when one is below --min-cosine.

    compare.py LABEL DIR_A DIR_B --min-cosine 0.99
"""
import argparse
import glob
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def load(path):
    return numpy_helper.to_array(onnx.load_tensor(path)).astype(np.float64)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("label")
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--min-cosine", type=float, default=0.99)
    args = ap.parse_args()
    files = sorted(glob.glob(os.path.join(args.a, "output_*.pb")))
    if not files:
        print(f"{args.label}: no outputs in {args.a}")
        return 1
    ok = True
    for fa in files:
        fb = os.path.join(args.b, os.path.basename(fa))
        x, y = load(fa), load(fb)
        if x.shape != y.shape:
            print(f"{args.label} {os.path.basename(fa)}: shapes {x.shape} and {y.shape}")
            ok = False
            continue
        nx, ny = np.sqrt((x * x).sum()), np.sqrt((y * y).sum())
        cos = 1.0 if nx == 0 and ny == 0 else float((x * y).sum() / (nx * ny)) if nx and ny else 0.0
        good = cos >= args.min_cosine
        ok &= good
        print(f"{args.label} {os.path.basename(fa)}: cosine {cos:.5f}, max abs {np.abs(x - y).max():.4g}"
              f"{'' if good else f'  BELOW {args.min_cosine}'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
