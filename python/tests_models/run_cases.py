#!/usr/bin/python3
"""The whole models of tests/models through kiln.InferenceSession, against ONNX Runtime's outputs.

    PYTHONPATH=build/python python/tests_models/run_cases.py CASES_DIR [names...]

CASES_DIR/<name>/model.onnx with test_data_set_*/input_N.pb and ONNX Runtime's output_N.pb
(tests/models/make_cases.sh writes them, for ctest's models_vs_onnxruntime). Compares at rtol 1e-3,
atol 1e-4 as `kiln test` does there; exits 1 if any output differs."""
import glob
import os
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper

import kiln as ort

RTOL, ATOL = 1e-3, 1e-4


def read(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def main():
    cases = sys.argv[1]
    names = sys.argv[2:] or sorted(os.listdir(cases))
    failed = 0
    for name in names:
        model = os.path.join(cases, name, "model.onnx")
        if not os.path.exists(model):
            print(f"{name}: no {model}")
            failed += 1
            continue
        t0, before = time.perf_counter(), failed
        sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        inputs = [i.name for i in sess.get_inputs()]
        outputs = [o.name for o in sess.get_outputs()]
        for d in sorted(glob.glob(os.path.join(cases, name, "test_data_set_*"))):
            feed = {n: read(os.path.join(d, f"input_{k}.pb")) for k, n in enumerate(inputs)}
            got = sess.run(None, feed)
            for k, n in enumerate(outputs):
                want_path = os.path.join(d, f"output_{k}.pb")
                if not os.path.exists(want_path):
                    continue
                want = read(want_path)
                ok = got[k].shape == want.shape and np.allclose(got[k], want, rtol=RTOL, atol=ATOL, equal_nan=True)
                if not ok:
                    err = np.abs(got[k].astype(np.float64) - want).max() if got[k].shape == want.shape else "shape"
                    print(f"{name}/{os.path.basename(d)}: output '{n}' differs (max abs error {err})")
                    failed += 1
        print(f"{name}: {'ok' if failed == before else 'DIFFERS'} ({time.perf_counter() - t0:.1f} s)")
    print(f"run_cases: {len(names)} models, {failed} differences")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
