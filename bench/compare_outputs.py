#!/usr/bin/python3
"""Compares two folders of outputs, GOT/output_N.pb against WANT/output_N.pb (onnx.TensorProto).

Usage: /usr/bin/python3 bench/compare_outputs.py GOT WANT [--rtol 1e-3] [--atol 1e-4] [--cosine C] [--exact]

The rule is kiln's for whole networks' outputs (src/runtime/compare.cc with atol_scales, what
`kiln bench --check` applies): same dtype and dims, and per element |got - want| <= atol * peak +
rtol * |want|, peak the largest finite |want| of that output where above 1 (elements near 0 of
larger logits come out of float32 sums of far larger terms: Inception v3's reach 8.8, and ONNX
Runtime, kiln's reference and fast engines differ by 2-4e-4 on them), NaN matching NaN and
infinities equal; integer outputs exactly. With --cosine C (quantized models, whose runtimes may round a requantization
differently), a float output agrees when the cosine similarity of the two is at least C instead.
With --exact, an output agrees only when its bytes are the same (a compiled artifact against its .onnx).
Prints one JSON line {"agree", "outputs", "max_abs_error", "min_cosine", "reason"}; exits 0 when
every output agrees, 1 when one does not, 2 when a folder is missing or unreadable.
"""
import argparse
import glob
import json
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def read(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def compare(got, want, rtol, atol):
    """(agree, max_abs_error, reason) for one output."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return False, float("inf"), f"got {got.dtype}{list(got.shape)}, want {want.dtype}{list(want.shape)}"
    if not np.issubdtype(want.dtype, np.floating):
        bad = np.flatnonzero(got.reshape(-1) != want.reshape(-1))
        return bad.size == 0, 0.0, f"element {bad[0]} differs" if bad.size else ""
    g = got.astype(np.float64).reshape(-1)
    w = want.astype(np.float64).reshape(-1)
    both_nan = np.isnan(g) & np.isnan(w)
    inf = np.isinf(g) | np.isinf(w)
    finite = ~both_nan & ~inf
    err = np.abs(g - w)
    peak = max(1.0, float(np.abs(w[finite]).max())) if finite.any() else 1.0
    bad = (finite & (err > atol * peak + rtol * np.abs(w))) | (inf & (g != w)) | (np.isnan(g) != np.isnan(w))
    max_abs = float(err[finite].max()) if finite.any() else 0.0
    if not bad.any():
        return True, max_abs, ""
    i = int(np.flatnonzero(bad)[0])
    return False, max_abs, f"element {i} is {g[i]:.6g}, want {w[i]:.6g}"


def cosine(got, want):
    g = got.astype(np.float64).reshape(-1)
    w = want.astype(np.float64).reshape(-1)
    norms = np.linalg.norm(g) * np.linalg.norm(w)
    if norms == 0:
        return 1.0 if np.array_equal(g, w) else 0.0
    return float(np.dot(g, w) / norms)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("got")
    ap.add_argument("want")
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--cosine", type=float, help="float outputs agree at this cosine similarity or more")
    ap.add_argument("--exact", action="store_true", help="outputs agree only when bit for bit the same")
    args = ap.parse_args()
    wants = sorted(glob.glob(os.path.join(args.want, "output_*.pb")))
    if not wants or not os.path.isdir(args.got):
        print(f"error: no outputs to compare in '{args.want}' / '{args.got}'", file=sys.stderr)
        return 2
    result = {"agree": True, "outputs": len(wants), "max_abs_error": 0.0, "min_cosine": 1.0, "reason": ""}
    for want_path in wants:
        name = os.path.basename(want_path)
        got_path = os.path.join(args.got, name)
        if not os.path.exists(got_path):
            result.update(agree=False, reason=f"{name} missing")
            break
        got, want = read(got_path), read(want_path)
        ok, max_abs, reason = compare(got, want, args.rtol, args.atol)
        if args.cosine is not None and got.shape == want.shape and np.issubdtype(want.dtype, np.floating):
            c = cosine(got, want)
            result["min_cosine"] = min(result["min_cosine"], c)
            ok, reason = c >= args.cosine, f"cosine {c:.5f} < {args.cosine}"
        if args.exact and ok and got.tobytes() != want.tobytes():
            ok, reason = False, "not bit for bit the same"
        result["max_abs_error"] = max(result["max_abs_error"], max_abs)
        if not ok:
            result.update(agree=False, reason=f"{name}: {reason}")
            break
    print(json.dumps(result))
    return 0 if result["agree"] else 1


if __name__ == "__main__":
    sys.exit(main())
