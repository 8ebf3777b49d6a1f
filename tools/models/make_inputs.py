#!/usr/bin/python3
"""Writes seeded random inputs for a model: OUTDIR/input_N.pb (serialized onnx.TensorProto).

Usage: /usr/bin/python3 tools/models/make_inputs.py MODEL OUTDIR [--dim name=value ...] [--seed N]

One file per graph input that is not an initializer, in graph order, named after the input.
Symbolic (or unknown) dims take their --dim value, else 1. Values by dtype: floats standard normal,
integers in [0, 1000) (token ids), bool random; inputs whose name contains "mask" are all ones and
those whose name contains "type" (token_type_ids) are all zeros, so BERT-style models see sane values.
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper


def np_dtype(elem_type):
    try:
        return onnx.helper.tensor_dtype_to_np_dtype(elem_type)  # onnx >= 1.13
    except AttributeError:
        return onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[elem_type]


def make_value(name, elem_type, shape, rng):
    if elem_type == TensorProto.STRING:
        return np.array([f"s{i}" for i in range(int(np.prod(shape)))], dtype=object).reshape(shape)
    dtype = np_dtype(elem_type)
    lname = name.lower()
    if "mask" in lname:
        return np.ones(shape, dtype)
    if "type" in lname:
        return np.zeros(shape, dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(0, 1000, size=shape).astype(dtype)
    if np.issubdtype(dtype, np.floating) or np.issubdtype(dtype, np.complexfloating):
        return rng.standard_normal(size=shape).astype(dtype)
    raise ValueError(f"input '{name}': cannot make values of type {TensorProto.DataType.Name(elem_type)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("outdir")
    ap.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE",
                    help="value of a symbolic dim (repeatable), e.g. --dim batch=4 --dim seq=128")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    dims = {}
    for d in args.dim:
        name, sep, value = d.partition("=")
        if not sep or not value.isdigit():
            ap.error(f"--dim needs NAME=VALUE with a non-negative integer, got '{d}'")
        dims[name] = int(value)

    model = onnx.load(args.model, load_external_data=False)
    initializers = {i.name for i in model.graph.initializer}
    rng = np.random.default_rng(args.seed)
    os.makedirs(args.outdir, exist_ok=True)
    used = set()
    n = 0
    for inp in model.graph.input:
        if inp.name in initializers:
            continue
        if not inp.type.HasField("tensor_type"):
            sys.exit(f"error: input '{inp.name}' is not a tensor")
        tt = inp.type.tensor_type
        shape = []
        for d in tt.shape.dim:
            if d.HasField("dim_value"):
                shape.append(d.dim_value)
            else:
                shape.append(dims.get(d.dim_param, 1))
                used.add(d.dim_param)
        value = make_value(inp.name, tt.elem_type, shape, rng)
        tensor = numpy_helper.from_array(value, inp.name)
        if tensor.data_type != tt.elem_type:  # e.g. bfloat16 has no numpy type of its own
            sys.exit(f"error: input '{inp.name}': cannot make {TensorProto.DataType.Name(tt.elem_type)}")
        path = os.path.join(args.outdir, f"input_{n}.pb")
        with open(path, "wb") as f:
            f.write(tensor.SerializeToString())
        print(f"{path}: {inp.name} {TensorProto.DataType.Name(tt.elem_type).lower()}{list(shape)}")
        n += 1
    unused = sorted(set(dims) - used)
    if unused:
        print(f"warning: --dim {', '.join(unused)} matched no input dim", file=sys.stderr)


if __name__ == "__main__":
    main()
