#!/usr/bin/python3
"""Makes a dynamic int8 version of a float transformer (BERT) in the form ONNX Runtime's
quantize_dynamic writes (its QOperator format, the default): each MatMul with a constant 2-D
weight becomes

  DynamicQuantizeLinear(x) -> MatMulInteger(x_q, W_q, x_zero_point) -> Cast(float)
                           -> Mul(Mul(x_scale, w_scale))

with W_q int8 symmetric per tensor (weight_type QInt8), one DynamicQuantizeLinear per quantized
input (shared by the Q, K and V projections), the bias Add after it left as it was. No
calibration: the activations are quantized at run time. For timing kiln's dynamic int8 path
until `kiln quantize --mode dynamic` exists.

usage: make_dynamic_bert.py FLOAT.onnx OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    src, out = sys.argv[1], sys.argv[2]
    model = onnx.load(src)
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    nodes, new_inits, quantized = [], [], {}
    replaced = set()
    for n in g.node:
        w = inits.get(n.input[1]) if n.op_type == "MatMul" and len(n.input) == 2 else None
        if w is None or len(w.dims) != 2:
            nodes.append(n)
            continue
        x = n.input[0]
        if x not in quantized:
            names = (x + "_quantized", x + "_scale", x + "_zero_point")
            nodes.append(helper.make_node("DynamicQuantizeLinear", [x], list(names), name=x + "_QuantizeLinear"))
            quantized[x] = names
        xq, xs, xz = quantized[x]
        wf = numpy_helper.to_array(w).astype(np.float32)
        ws = np.float32(max(np.abs(wf).max(), 1e-8) / 127.0)
        wq = np.clip(np.round(wf / ws), -127, 127).astype(np.int8)
        base = n.name or n.output[0]
        new_inits += [numpy_helper.from_array(wq, w.name + "_quantized"),
                      numpy_helper.from_array(np.array(ws, np.float32), w.name + "_scale"),
                      numpy_helper.from_array(np.array(0, np.int8), w.name + "_zero_point")]
        replaced.add(w.name)
        nodes += [
            helper.make_node("MatMulInteger", [xq, w.name + "_quantized", xz, w.name + "_zero_point"],
                             [base + "_int32"], name=base + "_MatMulInteger"),
            helper.make_node("Cast", [base + "_int32"], [base + "_float"], to=TensorProto.FLOAT,
                             name=base + "_Cast"),
            helper.make_node("Mul", [xs, w.name + "_scale"], [base + "_scales"], name=base + "_ScaleMul"),
            helper.make_node("Mul", [base + "_float", base + "_scales"], [n.output[0]], name=base + "_Mul"),
        ]
    used = {i for n in nodes for i in n.input}
    keep = [t for t in g.initializer if t.name in used and t.name not in replaced]
    del g.initializer[:]
    g.initializer.extend(keep + new_inits)
    del g.node[:]
    g.node.extend(nodes)
    if not any(o.domain in ("", "ai.onnx") and o.version >= 11 for o in model.opset_import):
        raise SystemExit("make_dynamic_bert.py: the model imports an opset before 11")
    onnx.save(model, out)
    print(f"{out}: {len(replaced)} MatMuls quantized, {len(quantized)} DynamicQuantizeLinear", file=sys.stderr)


if __name__ == "__main__":
    main()
