#!/usr/bin/python3
"""Writes a model whose weights total a little over 2 GiB, saved with external data, and an input.

Usage: /usr/bin/python3 tests/large/make_large_model.py OUT_DIR

Gives OUT_DIR/model.onnx, OUT_DIR/model.onnx.data and OUT_DIR/inputs/input_0.pb. The graph:
Conv 3x3 -> BatchNormalization -> Relu -> Reshape to [1, 8192], then eight MatMul [8192, 8192]
(256 MiB each) + Add + Relu layers and a last MatMul [8192, 1024]: 2 GiB + 32 MiB of weights.
What -O2 changes: the BatchNormalization fuses into the Conv, each bias is Mul(raw bias, 0.5) of
two initializers (a constant subgraph to fold), MatMul + Add become Gemm.

Each big weight is random only in 8 bands of 64 rows (one band per 1024 rows, the last near the
tensor's end) and zero elsewhere; the zeros are holes of a sparse file, so the 2 GiB file costs
about 130 MB of disk writes (this machine's disk writes about 50 MB/s), yet every layer's result
depends on bytes spread over the whole file, past the 2 GiB offset included.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HIDDEN = 8192
LAYERS = 8
OUT = 1024
BANDS, BAND_ROWS = 8, 64
ALIGN = 4096  # each tensor starts on a page, as kiln's exporter aligns (64 bytes at least)


def write_banded(f, rng, rows, cols):
    """Writes a [rows, cols] float32 weight (random bands, zero holes) at the file's end."""
    start = -(-f.seek(0, os.SEEK_END) // ALIGN) * ALIGN
    active = BANDS * BAND_ROWS
    for k in range(BANDS):
        band = rng.standard_normal((BAND_ROWS, cols), dtype=np.float32) * np.float32(np.sqrt(2.0 / active))
        f.seek(start + k * (rows // BANDS) * cols * 4)
        f.write(band.tobytes())
    length = rows * cols * 4
    f.truncate(start + length)
    return start, length


def external(name, dims, location, offset, length):
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.FLOAT
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", str(offset)), ("length", str(length))):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


def main():
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "inputs"), exist_ok=True)
    rng = np.random.default_rng(7)
    location = "model.onnx.data"
    inits, nodes = [], []

    def const(name, array):
        inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    c = 8
    const("conv_w", rng.standard_normal((c, c, 3, 3), dtype=np.float32) * np.float32(0.2))
    const("conv_b", rng.standard_normal(c, dtype=np.float32) * np.float32(0.1))
    const("bn_scale", rng.uniform(0.5, 1.5, c).astype(np.float32))
    const("bn_bias", rng.standard_normal(c, dtype=np.float32) * np.float32(0.1))
    const("bn_mean", rng.standard_normal(c, dtype=np.float32) * np.float32(0.1))
    const("bn_var", rng.uniform(0.5, 1.5, c).astype(np.float32))
    const("flat", np.array([1, HIDDEN], dtype=np.int64))
    const("half", np.array(0.5, dtype=np.float32))
    nodes += [
        helper.make_node("Conv", ["image", "conv_w", "conv_b"], ["conv"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["conv", "bn_scale", "bn_bias", "bn_mean", "bn_var"], ["bn"]),
        helper.make_node("Relu", ["bn"], ["act"]),
        helper.make_node("Reshape", ["act", "flat"], ["h0"]),
    ]
    h = "h0"
    with open(os.path.join(out, location), "wb") as f:
        for i in range(LAYERS + 1):
            cols = HIDDEN if i < LAYERS else OUT
            offset, length = write_banded(f, rng, HIDDEN, cols)
            inits.append(external(f"w{i}", [HIDDEN, cols], location, offset, length))
            const(f"b{i}_raw", rng.standard_normal(cols, dtype=np.float32) * np.float32(0.1))
            nodes += [
                helper.make_node("Mul", [f"b{i}_raw", "half"], [f"b{i}"]),
                helper.make_node("MatMul", [h, f"w{i}"], [f"mm{i}"]),
                helper.make_node("Add", [f"mm{i}", f"b{i}"], [f"z{i}"]),
            ]
            if i < LAYERS:
                nodes.append(helper.make_node("Relu", [f"z{i}"], [f"h{i + 1}"]))
                h = f"h{i + 1}"
    nodes[-1].output[0] = "logits"
    graph = helper.make_graph(
        nodes, "large", [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, c, 32, 32])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, OUT])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    with open(os.path.join(out, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    image = rng.standard_normal((1, c, 32, 32), dtype=np.float32)
    with open(os.path.join(out, "inputs", "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(image, "image").SerializeToString())


if __name__ == "__main__":
    main()
