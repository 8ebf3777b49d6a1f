#!/usr/bin/env python3
"""Writes tests/fuzz/onnx.dict, the libFuzzer dictionary of the fuzz targets (docs/fuzzing.md).

    tests/fuzz/make_dict.py > tests/fuzz/onnx.dict

Entries: the ONNX protobuf field keys (tag and wire type) of the messages a model is made of, some
with a typical value (data_type 1, an opset version); each op type of the ONNX backend test models
as a whole NodeProto.op_type field (key, length, name); common attribute names as a whole
AttributeProto.name field. The op types are read from the models with a small protobuf wire
decoder, so no protobuf package is needed.
"""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(field, wire):
    return varint(field << 3 | wire)


def fields(buf):
    """(field number, wire type, value) of one message; value is bytes for length-delimited."""
    i = 0
    while i < len(buf):
        k = 0
        shift = 0
        while True:
            b = buf[i]
            i += 1
            k |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        field, wire = k >> 3, k & 7
        if wire == 0:
            while buf[i] & 0x80:
                i += 1
            i += 1
            yield field, wire, None
        elif wire == 1:
            i += 8
            yield field, wire, None
        elif wire == 5:
            i += 4
            yield field, wire, None
        elif wire == 2:
            n = 0
            shift = 0
            while True:
                b = buf[i]
                i += 1
                n |= (b & 0x7F) << shift
                shift += 7
                if not b & 0x80:
                    break
            yield field, wire, buf[i:i + n]
            i += n
        else:
            raise ValueError("wire type %d" % wire)


def op_types(graph, out):
    for f, w, v in fields(graph):
        if f == 1 and w == 2:  # GraphProto.node
            for nf, nw, nv in fields(v):
                if nf == 4 and nw == 2:  # NodeProto.op_type
                    out.add(nv.decode())
                elif nf == 5 and nw == 2:  # NodeProto.attribute: subgraphs
                    for af, aw, av in fields(nv):
                        if af in (6, 11) and aw == 2:
                            op_types(av, out)


def escape(b):
    return "".join(chr(c) if 0x20 <= c < 0x7F and chr(c) not in '"\\' else "\\x%02x" % c for c in b)


# (message.field, field number, wire type, value bytes that often follow or None)
KEYS = [
    ("model.ir_version", 1, 0, varint(8)), ("model.opset_import", 8, 2, None),
    ("model.producer_name", 2, 2, None), ("model.graph", 7, 2, None),
    ("model.metadata_props", 14, 2, None), ("model.functions", 25, 2, None),
    ("opset.domain", 1, 2, None), ("opset.version", 2, 0, varint(17)),
    ("graph.node", 1, 2, None), ("graph.name", 2, 2, None), ("graph.initializer", 5, 2, None),
    ("graph.sparse_initializer", 15, 2, None), ("graph.input", 11, 2, None),
    ("graph.output", 12, 2, None), ("graph.value_info", 13, 2, None),
    ("node.input", 1, 2, None), ("node.output", 2, 2, None), ("node.name", 3, 2, None),
    ("node.op_type", 4, 2, None), ("node.attribute", 5, 2, None), ("node.domain", 7, 2, None),
    ("attr.name", 1, 2, None), ("attr.f", 2, 5, None), ("attr.i", 3, 0, None), ("attr.s", 4, 2, None),
    ("attr.t", 5, 2, None), ("attr.g", 6, 2, None), ("attr.floats", 7, 2, None),
    ("attr.ints", 8, 2, None), ("attr.strings", 9, 2, None), ("attr.tensors", 10, 2, None),
    ("attr.graphs", 11, 2, None), ("attr.tp", 14, 2, None), ("attr.type", 20, 0, None),
    ("attr.ref_attr_name", 21, 2, None), ("attr.sparse_tensor", 22, 2, None),
    ("tensor.dims", 1, 0, None), ("tensor.dims_packed", 1, 2, None), ("tensor.data_type", 2, 0, varint(1)),
    ("tensor.data_type_int64", 2, 0, varint(7)), ("tensor.float_data", 4, 2, None),
    ("tensor.int32_data", 5, 2, None), ("tensor.string_data", 6, 2, None),
    ("tensor.int64_data", 7, 2, None), ("tensor.name", 8, 2, None), ("tensor.raw_data", 9, 2, None),
    ("tensor.double_data", 10, 2, None), ("tensor.uint64_data", 11, 2, None),
    ("tensor.external_data", 13, 2, None), ("tensor.data_location", 14, 0, varint(1)),
    ("sparse.values", 1, 2, None), ("sparse.indices", 2, 2, None), ("sparse.dims", 3, 0, None),
    ("value_info.name", 1, 2, None), ("value_info.type", 2, 2, None),
    ("type.tensor_type", 1, 2, None), ("type.sequence_type", 4, 2, None), ("type.map_type", 5, 2, None),
    ("type.sparse_tensor_type", 8, 2, None), ("type.optional_type", 9, 2, None),
    ("tensor_type.elem_type", 1, 0, varint(1)), ("tensor_type.shape", 2, 2, None),
    ("shape.dim", 1, 2, None), ("dim.dim_value", 1, 0, None), ("dim.dim_param", 2, 2, None),
    ("function.name", 1, 2, None), ("function.input", 4, 2, None), ("function.output", 5, 2, None),
    ("function.attribute", 6, 2, None), ("function.node", 7, 2, None),
    ("function.opset_import", 9, 2, None), ("function.domain", 10, 2, None),
    ("function.attribute_proto", 11, 2, None), ("string_entry.key", 1, 2, None),
    ("string_entry.value", 2, 2, None),
]

ATTRS = [
    "axis", "axes", "keepdims", "perm", "shape", "value", "to", "kernel_shape", "strides", "pads",
    "dilations", "group", "auto_pad", "mode", "alpha", "beta", "epsilon", "transA", "transB",
    "then_branch", "else_branch", "body", "num_scan_inputs", "direction", "hidden_size", "split",
    "starts", "ends", "ceil_mode", "count_include_pad", "storage_order", "noop_with_empty_axes",
    "equation", "coordinate_transformation_mode", "nearest_mode", "seed", "dtype", "sparse_value",
    "value_float", "value_ints", "value_string",
]


def main():
    ops = set()
    for p in sorted(ROOT.glob("tests/onnx-backend/*/*/model.onnx")):
        for f, w, v in fields(p.read_bytes()):
            if f == 7 and w == 2:
                op_types(v, ops)
    lines = ["# libFuzzer dictionary of ONNX models; written by tests/fuzz/make_dict.py, do not edit."]
    for name, field, wire, value in KEYS:
        lines.append('%s="%s"' % (name.replace(".", "_"), escape(key(field, wire))))
        if value is not None:
            lines.append('%s_v="%s"' % (name.replace(".", "_"), escape(key(field, wire) + value)))
    for a in ATTRS:
        lines.append('attr_%s="%s"' % (a, escape(key(1, 2) + varint(len(a)) + a.encode())))
    for op in sorted(ops):
        lines.append('op_%s="%s"' % (op, escape(key(4, 2) + varint(len(op)) + op.encode())))
    for d in ["ai.onnx.ml", "com.microsoft", "ai.onnx.preview.training"]:
        lines.append('domain_%s="%s"' % (d.replace(".", "_"), escape(key(7, 2) + varint(len(d)) + d.encode())))
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
