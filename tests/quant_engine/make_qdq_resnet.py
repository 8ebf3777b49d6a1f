#!/usr/bin/python3
"""Makes a static int8 QDQ version of a float CNN (ResNet-50) in the form ONNX Runtime's
quantize_static writes, for timing kiln's int8 execution until `kiln quantize` exists:

  - weights int8, symmetric, per output channel (DequantizeLinear axis 0, zero points 0); a Conv's
    bias int32 with scale s_x * s_w[c];
  - activations uint8, asymmetric (min/max of one calibration run, 0 kept inside the range), a
    QuantizeLinear -> DequantizeLinear pair after each, the DequantizeLinear shared by all readers;
  - a Relu after a Conv or an Add is dropped and its output's range used (the uint8 saturation at
    the zero point is the Relu), as ONNX Runtime's QDQ quantizer does;
  - MaxPool between a DequantizeLinear and a QuantizeLinear of the same parameters; what follows
    the last residual block (GlobalAveragePool, Flatten, Gemm) stays float.

Calibration: one run of the float model by `kiln run` on seeded random inputs (N(0,1), the
range of ImageNet-normalized pixels), so accuracy figures of the result mean little; speed is
what it is for.

usage: make_qdq_resnet.py FLOAT.onnx OUT.onnx [--kiln build/kiln] [--inputs DIR]
  --inputs DIR gets the calibration input (input_0.pb) too, for `kiln bench --inputs DIR`.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def set_batch_1(model):
    for v in list(model.graph.input) + list(model.graph.output):
        d = v.type.tensor_type.shape.dim
        if d and not d[0].dim_value:
            d[0].ClearField("dim_param")
            d[0].dim_value = 1


def calibrate(model, names, kiln, inputs_dir):
    """The min and max of each named value over one kiln run on inputs_dir/input_0.pb."""
    m = onnx.shape_inference.infer_shapes(model)
    info = {v.name: v for v in m.graph.value_info}
    del m.graph.output[:]
    for n in names:
        m.graph.output.append(info[n])
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "calib.onnx")
        onnx.save(m, path)
        out = os.path.join(tmp, "out")
        subprocess.run([kiln, "run", path, "--inputs", inputs_dir, "--outputs", out, "-O", "0"],
                       check=True, stdout=subprocess.DEVNULL)
        ranges = {}
        for i, n in enumerate(names):
            t = onnx.TensorProto()
            with open(os.path.join(out, f"output_{i}.pb"), "rb") as f:
                t.ParseFromString(f.read())
            a = numpy_helper.to_array(t)
            ranges[n] = (float(a.min()), float(a.max()))
        return ranges


def uint8_params(lo, hi):
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = (hi - lo) / 255.0 if hi > lo else 1.0
    zp = int(np.clip(np.round(-lo / scale), 0, 255))
    return np.float32(scale), np.uint8(zp)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("out")
    ap.add_argument("--kiln", default="build/kiln")
    ap.add_argument("--inputs", default=None)
    a = ap.parse_args()

    model = onnx.load(a.model)
    set_batch_1(model)
    original = onnx.ModelProto()
    original.CopyFrom(model)  # calibrated with its Relus
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    consumers = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)

    # Relus after a Conv or an Add (their only reader) go; the Conv or Add writes the Relu's output.
    dropped = set()
    for n in g.node:
        if n.op_type in ("Conv", "Add") and len(consumers.get(n.output[0], [])) == 1:
            r = consumers[n.output[0]][0]
            if r.op_type == "Relu" and n.output[0] not in [o.name for o in g.output]:
                dropped.add(id(r))
                n.output[0] = r.output[0]
    nodes = [n for n in g.node if id(n) not in dropped]

    # Values quantized: the input, and the results of Conv, Add and MaxPool up to the last Add.
    last_add = max(i for i, n in enumerate(nodes) if n.op_type == "Add")
    quantized = [g.input[0].name]
    for i, n in enumerate(nodes):
        if n.op_type in ("Conv", "Add", "MaxPool") and i <= last_add:
            quantized.append(n.output[0])

    inputs_dir = a.inputs or tempfile.mkdtemp()
    os.makedirs(inputs_dir, exist_ok=True)
    dims = [d.dim_value for d in g.input[0].type.tensor_type.shape.dim]
    x = np.random.default_rng(0).standard_normal(dims).astype(np.float32)
    with open(os.path.join(inputs_dir, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, g.input[0].name).SerializeToString())
    ranges = calibrate(original, quantized[1:], a.kiln, inputs_dir)
    ranges[quantized[0]] = (float(x.min()), float(x.max()))

    params = {}
    for v in quantized:
        params[v] = uint8_params(*ranges[v])
    # MaxPool keeps its input's parameters (ONNX Runtime's QDQ form for it).
    for n in nodes:
        if n.op_type == "MaxPool" and n.input[0] in params:
            params[n.output[0]] = params[n.input[0]]

    new_inits = []
    out_nodes = []

    def qdq(v):
        s, z = params[v]
        sn, zn = v + "_scale", v + "_zero_point"
        new_inits.append(numpy_helper.from_array(np.array(s, np.float32), sn))
        new_inits.append(numpy_helper.from_array(np.array(z, np.uint8), zn))
        out_nodes.append(helper.make_node("QuantizeLinear", [v, sn, zn], [v + "_q"], name=v + "_Q"))
        out_nodes.append(helper.make_node("DequantizeLinear", [v + "_q", sn, zn], [v + "_dq"], name=v + "_DQ"))

    renamed = {v: v + "_dq" for v in params}
    qdq(g.input[0].name)
    for n in nodes:
        ins = list(n.input)
        if n.op_type in ("Conv", "Add", "MaxPool", "GlobalAveragePool"):
            ins = [renamed.get(i, i) for i in ins]
        if n.op_type == "Conv":
            w = numpy_helper.to_array(inits[ins[1]]).astype(np.float32)
            sw = np.maximum(np.abs(w).reshape(w.shape[0], -1).max(axis=1), 1e-8) / 127.0
            wq = np.clip(np.round(w / sw.reshape(-1, *([1] * (w.ndim - 1)))), -127, 127).astype(np.int8)
            base = n.name or n.output[0]
            new_inits += [numpy_helper.from_array(wq, base + "_wq"),
                          numpy_helper.from_array(sw.astype(np.float32), base + "_ws"),
                          numpy_helper.from_array(np.zeros(w.shape[0], np.int8), base + "_wz")]
            out_nodes.append(helper.make_node("DequantizeLinear", [base + "_wq", base + "_ws", base + "_wz"],
                                              [base + "_w"], axis=0))
            ins[1] = base + "_w"
            if len(ins) > 2 and ins[2]:
                b = numpy_helper.to_array(inits[ins[2]]).astype(np.float32)
                sb = (params[n.input[0]][0] * sw).astype(np.float32)
                bq = np.round(b / sb).astype(np.int32)
                new_inits += [numpy_helper.from_array(bq, base + "_bq"),
                              numpy_helper.from_array(sb, base + "_bs"),
                              numpy_helper.from_array(np.zeros(w.shape[0], np.int32), base + "_bz")]
                out_nodes.append(helper.make_node("DequantizeLinear", [base + "_bq", base + "_bs", base + "_bz"],
                                                  [base + "_b"], axis=0))
                ins[2] = base + "_b"
        del n.input[:]
        n.input.extend(ins)
        out_nodes.append(n)
        if n.output[0] in params:
            qdq(n.output[0])

    used = {i for n in out_nodes for i in n.input}
    keep = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(keep + new_inits)
    del g.node[:]
    g.node.extend(out_nodes)
    del g.value_info[:]
    onnx.checker.check_model(model)
    onnx.save(model, a.out)
    print(f"{a.out}: {sum(n.op_type == 'QuantizeLinear' for n in out_nodes)} QuantizeLinear, "
          f"{sum(n.op_type == 'DequantizeLinear' for n in out_nodes)} DequantizeLinear", file=sys.stderr)


if __name__ == "__main__":
    main()
