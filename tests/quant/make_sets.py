#!/usr/bin/python3
"""Writes N seeded input sets for a model as DIR/test_data_set_K/input_I.pb (what `kiln quantize
--calibrate` and `kiln run` read). Float inputs are normal(0, 1), integer inputs small ids,
symbolic dims take --dim NAME=VALUE or 1.

    make_sets.py MODEL DIR N [--seed S] [--dim NAME=VALUE ...]
"""
import argparse
import os

import numpy as np
import onnx
from onnx import numpy_helper


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("dir")
    ap.add_argument("n", type=int)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dim", action="append", default=[])
    a = ap.parse_args()
    dims = dict(d.split("=") for d in a.dim)
    m = onnx.load(a.model, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    inputs = [i for i in m.graph.input if i.name not in inits]
    rng = np.random.default_rng(a.seed)
    for k in range(a.n):
        d = os.path.join(a.dir, f"test_data_set_{k}")
        os.makedirs(d, exist_ok=True)
        for i, v in enumerate(inputs):
            t = v.type.tensor_type
            shape = [x.dim_value if x.HasField("dim_value") else int(dims.get(x.dim_param, 1))
                     for x in t.shape.dim]
            dtype = onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[t.elem_type]
            if np.issubdtype(dtype, np.floating):
                x = rng.standard_normal(shape).astype(dtype)
            else:
                x = rng.integers(0, 2, shape).astype(dtype)
            with open(os.path.join(d, f"input_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(x, v.name).SerializeToString())


if __name__ == "__main__":
    main()
