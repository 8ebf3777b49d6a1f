#!/usr/bin/python3
"""Writes seeded random inputs for a model: OUTDIR/input_N.pb (serialized onnx.TensorProto).

Usage: /usr/bin/python3 tools/models/make_inputs.py MODEL OUTDIR [--dim name=value ...]
           [--shape input=D1xD2... ...] [--fill input=VALUE ...] [--seed N]

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


# Inputs the models fetched from npm need (see tools/models/npm_models.tsv), as --shape/--fill would
# give them. Images are batch 1 at the sizes the PaddleOCR pipeline feeds; the VADs take 512
# samples (32 ms) at 16 kHz with a zero state.
PRESETS = {
    "ppocr_det": {"shape": {"x": [1, 3, 640, 640]}},
    "ppocr_rec": {"shape": {"x": [1, 3, 48, 320]}},
    "ppocr_cls": {"shape": {"x": [1, 3, 48, 192]}},
    "silero_vad": {"shape": {"input": [1, 512], "state": [2, 1, 128]},
                   "fill": {"state": 0, "sr": 16000}},
    "silero_vad_legacy": {"shape": {"input": [1, 512], "h": [2, 1, 64], "c": [2, 1, 64]},
                          "fill": {"h": 0, "c": 0, "sr": 16000}},
}


def parse_pairs(items, what, parse):
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            if not sep:
                raise ValueError
            out[name] = parse(value)
        except ValueError:
            sys.exit(f"error: {what} needs NAME=VALUE, got '{item}'")
    return out


def parse_shape(text):
    dims = [int(d) for d in text.split("x")] if text else []
    if any(d < 0 for d in dims):
        raise ValueError
    return dims


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
    ap.add_argument("--shape", action="append", default=[], metavar="INPUT=D1xD2...",
                    help="an input's whole shape (repeatable), e.g. --shape input=1x512")
    ap.add_argument("--fill", action="append", default=[], metavar="INPUT=VALUE",
                    help="one value for every element of an input (repeatable), e.g. --fill sr=16000")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    # NAME@int8, NAME@fp16 ... (bench/run.sh's quantized files) take NAME's inputs.
    preset = PRESETS.get(os.path.splitext(os.path.basename(args.model))[0].split("@")[0], {})
    shapes = dict(preset.get("shape", {}))
    shapes.update(parse_pairs(args.shape, "--shape", parse_shape))
    fills = dict(preset.get("fill", {}))
    fills.update(parse_pairs(args.fill, "--fill", float))

    dims = {}
    for d in args.dim:
        name, sep, value = d.partition("=")
        if not sep or not value.isdigit():
            ap.error(f"--dim needs NAME=VALUE with a non-negative integer, got '{d}'")
        dims[name] = int(value)

    model = onnx.load(args.model, load_external_data=False)
    initializers = {i.name for i in model.graph.initializer}
    fed = {i.name for i in model.graph.input if i.name not in initializers}
    # Names that match no input fail before any file is written.
    for what, given in (("--shape", shapes), ("--fill", fills)):
        unknown = sorted(set(given) - fed)
        if unknown:
            sys.exit(f"error: {what} {', '.join(unknown)}: no such input")
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
        if inp.name in shapes:
            given = shapes.pop(inp.name)
            if len(given) != len(tt.shape.dim) or any(
                    d.HasField("dim_value") and d.dim_value != g for d, g in zip(tt.shape.dim, given)):
                sys.exit(f"error: --shape {inp.name}={'x'.join(map(str, given))} does not fit the "
                         f"input's declared shape")
            shape = given
        value = make_value(inp.name, tt.elem_type, shape, rng)
        if inp.name in fills:
            value = np.full(shape, fills.pop(inp.name), dtype=value.dtype)
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
