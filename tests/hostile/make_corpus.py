#!/usr/bin/python3
"""Writes a corpus of malformed and hostile ONNX model files for kiln's loader.

Usage: /usr/bin/python3 tests/hostile/make_corpus.py OUTDIR

Each case is a folder OUTDIR/CASE holding model.onnx (and any files it refers to). Two lists:
  OUTDIR/manifest.tsv     CASE<TAB>substring expected in kiln's one-line error (exit code 2)
  OUTDIR/manifest_ok.tsv  CASE<TAB>what it checks: models that look odd but are valid and must load
A manifest line may carry a third column, an exit code other than 2. tests/hostile/run_corpus.sh runs them.
The expected substrings are loose on purpose; align them with the loader's messages there.
"""
import os
import random
import shutil
import struct
import sys

import onnx
from onnx import TensorProto, helper

OPSET = 17
IR_VERSION = 8


# ---- building blocks ------------------------------------------------------------------------


def make_model(nodes, inputs, outputs, initializers=(), opsets=None, ir_version=IR_VERSION):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    opsets = [helper.make_opsetid("", OPSET)] if opsets is None else opsets
    model = helper.make_model(graph, opset_imports=opsets, producer_name="kiln-hostile")
    model.ir_version = ir_version
    return model


def vi(name, dims, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, dims)


def add_model(w):
    """Y = X + W with X, W, Y float[4]; W is the given initializer."""
    return make_model([helper.make_node("Add", ["X", "W"], ["Y"])], [vi("X", [4])], [vi("Y", [4])], [w])


def raw_tensor(name, dims, data_type, raw):
    t = TensorProto()
    t.name = name
    t.dims.extend(dims)
    t.data_type = data_type
    t.raw_data = raw
    return t


def relu_model(**kw):
    return make_model([helper.make_node("Relu", ["X"], ["Y"])], [vi("X", [4])], [vi("Y", [4])], **kw)


def external_tensor(name, dims, location, offset=None, length=None):
    t = TensorProto()
    t.name = name
    t.dims.extend(dims)
    t.data_type = TensorProto.FLOAT
    t.data_location = TensorProto.EXTERNAL
    entries = [("location", location)]
    if offset is not None:
        entries.append(("offset", str(offset)))
    if length is not None:
        entries.append(("length", str(length)))
    for k, v in entries:
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


# ---- a little protobuf encoder, for what python's protobuf cannot build (deep nesting) -------


def varint(v):
    out = bytearray()
    v &= (1 << 64) - 1
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def field_varint(num, v):
    return varint(num << 3) + varint(v)


def field_bytes(num, b):
    if isinstance(b, str):
        b = b.encode()
    return varint((num << 3) | 2) + varint(len(b)) + b


def dead_branch_model():
    """If(true) { Identity(x) } else { MatMul(x, x) }, x 3x4: the branch that never runs cannot be
    inferred, as in torch exports that keep a branch traced for other shapes."""
    then_g = helper.make_graph([helper.make_node("Identity", ["x"], ["t"])], "then", [], [vi("t", None)])
    else_g = helper.make_graph([helper.make_node("MatMul", ["x", "x"], ["e"])], "else", [], [vi("e", None)])
    cond = helper.make_tensor("cond", TensorProto.BOOL, [], [True])
    node = helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g)
    return make_model([node], [vi("x", [3, 4])], [vi("y", [3, 4])], initializers=[cond])


def nested_if_model(depth):
    """A model whose graph is an If whose then_branch is an If ... `depth` levels deep.

    Built from the inside out as bytes: GraphProto(1 node, If(cond) then=<deeper> else=<leaf>).
    Each level's output is a float scalar y_K; `cond` is the top graph's bool input.
    """
    def leaf(k, tag):
        node = helper.make_node("Constant", [], [f"{tag}_{k}"],
                                value=helper.make_tensor(f"c_{tag}_{k}", TensorProto.FLOAT, [], [1.0]))
        g = helper.make_graph([node], f"leaf_{tag}_{k}", [], [vi(f"{tag}_{k}", [])])
        return g.SerializeToString()

    # Each level wraps the one inside it in a prefix and a suffix, so the file is
    # prefix_N .. prefix_1 + leaf + suffix_1 .. suffix_N: linear time, no recursion, no big copies.
    prefixes, suffixes = [], []
    inner_len = len(leaf_bytes := leaf(0, "y"))
    for k in range(1, depth + 1):
        then_head = field_bytes(1, "then_branch") + varint((6 << 3) | 2) + varint(inner_len)
        then_tail = field_varint(20, onnx.AttributeProto.GRAPH)
        then_len = len(then_head) + inner_len + len(then_tail)
        else_attr = (field_bytes(1, "else_branch") + field_bytes(6, leaf(k, "e"))
                     + field_varint(20, onnx.AttributeProto.GRAPH))
        node_head = (field_bytes(1, "cond") + field_bytes(2, f"y_{k}") + field_bytes(4, "If")
                     + varint((5 << 3) | 2) + varint(then_len) + then_head)
        node_tail = then_tail + field_bytes(5, else_attr)
        node_len = len(node_head) + inner_len + len(node_tail)
        graph_head = varint((1 << 3) | 2) + varint(node_len) + node_head
        graph_tail = (node_tail + field_bytes(2, f"g_{k}")
                      + field_bytes(12, vi(f"y_{k}", []).SerializeToString()))
        if k == depth:  # the outermost graph also takes the input `cond`
            graph_tail += field_bytes(11, vi("cond", [], TensorProto.BOOL).SerializeToString())
        prefixes.append(graph_head)
        suffixes.append(graph_tail)
        inner_len = len(graph_head) + inner_len + len(graph_tail)
    top = b"".join(reversed(prefixes)) + leaf_bytes + b"".join(suffixes)
    assert len(top) == inner_len
    opset = field_bytes(1, "") + field_varint(2, OPSET)
    return (field_varint(1, IR_VERSION) + field_bytes(2, "kiln-hostile") + field_bytes(7, top)
            + field_bytes(8, opset))


# ---- the cases ------------------------------------------------------------------------------


class Corpus:
    def __init__(self, out):
        self.out = out
        self.bad = []
        self.ok = []
        os.makedirs(out, exist_ok=True)

    def case_dir(self, name):
        d = os.path.join(self.out, name)
        if os.path.lexists(d):
            shutil.rmtree(d)
        os.makedirs(d)
        return d

    def write(self, name, model, expect, ok=False, files=None, code=None):
        """model: a ModelProto or bytes. files: {relative path: bytes | None (a folder)}."""
        d = self.case_dir(name)
        data = model if isinstance(model, bytes) else model.SerializeToString()
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(data)
        for rel, content in (files or {}).items():
            p = os.path.join(d, rel)
            if content is None:
                os.makedirs(p, exist_ok=True)
            else:
                with open(p, "wb") as f:
                    f.write(content)
        row = (name, expect) if code is None else (name, expect, str(code))
        (self.ok if ok else self.bad).append(row)
        return d

    def finish(self):
        for fname, rows in (("manifest.tsv", self.bad), ("manifest_ok.tsv", self.ok)):
            with open(os.path.join(self.out, fname), "w") as f:
                for row in rows:
                    f.write("\t".join(row) + "\n")
        print(f"{self.out}: {len(self.bad)} hostile cases, {len(self.ok)} valid ones")


def build(out):
    c = Corpus(out)
    floats16 = struct.pack("<4f", 1, 2, 3, 4)

    # -- bytes that are not a model
    big = add_model(helper.make_tensor("W", TensorProto.FLOAT, [4], [1, 2, 3, 4]))
    big.graph.initializer.append(raw_tensor("pad", [256], TensorProto.FLOAT, bytes(1024)))
    full = big.SerializeToString()
    truncated = full[: len(full) * 2 // 3]
    assert_unparsable(truncated)
    c.write("truncated", truncated, "parse")
    rng = random.Random(1234)
    noise = bytes(rng.randrange(256) for _ in range(4096))
    assert_unparsable(noise)
    c.write("random_bytes", noise, "parse")
    c.write("empty_file", b"", "ir_version")

    # -- graph structure
    c.write("cycle", make_model([helper.make_node("Relu", ["B"], ["A"]), helper.make_node("Neg", ["A"], ["B"]),
                                 helper.make_node("Add", ["X", "A"], ["Y"])],
                                [vi("X", [4])], [vi("Y", [4])]), "cycle")
    c.write("self_loop", make_model([helper.make_node("Add", ["X", "Y"], ["Y"])], [vi("X", [4])], [vi("Y", [4])]),
            "cycle")
    c.write("undefined_input", make_model([helper.make_node("Add", ["X", "nowhere"], ["Y"])],
                                          [vi("X", [4])], [vi("Y", [4])]), "undefined")
    c.write("duplicate_output", make_model([helper.make_node("Relu", ["X"], ["Y"]), helper.make_node("Neg", ["X"], ["Y"])],
                                           [vi("X", [4])], [vi("Y", [4])]), "duplicate")
    c.write("output_never_produced", make_model([helper.make_node("Relu", ["X"], ["Y"])],
                                                [vi("X", [4])], [vi("Y", [4]), vi("Z", [4])]), "output")
    c.write("opset_import_missing", relu_model(opsets=[]), "opset")

    # -- tensors
    c.write("raw_data_short", add_model(raw_tensor("W", [4], TensorProto.FLOAT, floats16[:12])), "raw_data")
    c.write("raw_data_not_multiple", add_model(raw_tensor("W", [4], TensorProto.FLOAT, floats16[:10])), "raw_data")
    c.write("negative_dims", add_model(raw_tensor("W", [-1, 4], TensorProto.FLOAT, floats16)), "negative")
    c.write("dims_overflow", add_model(raw_tensor("W", [1 << 40, 1 << 40, 1 << 40], TensorProto.FLOAT, b"")),
            "overflow")
    c.write("unknown_data_type", add_model(raw_tensor("W", [4], 99, floats16)), "99")
    both = raw_tensor("W", [4], TensorProto.FLOAT, floats16)
    both.float_data.extend([1, 2, 3, 4])
    c.write("two_data_fields", add_model(both), "data fields")
    strings = raw_tensor("W", [2], TensorProto.STRING, b"abcdefgh")
    c.write("string_raw_data", make_model([helper.make_node("Identity", ["W"], ["Y"])], [],
                                          [vi("Y", [2], TensorProto.STRING)], [strings]), "string")
    c.write("rank_1000", make_model([helper.make_node("Identity", ["W"], ["Y"])], [], [vi("Y", [1] * 1000)],
                                    [raw_tensor("W", [1] * 1000, TensorProto.FLOAT, floats16[:4])]), "rank")
    c.write("rank_1000_input", make_model([helper.make_node("Relu", ["X"], ["Y"])], [vi("X", [1] * 1000)],
                                          [vi("Y", [1] * 1000)]), "rank")

    # -- nesting. Each If level is 4 protobuf message levels (graph, node, attribute, graph), so
    # protobuf's default recursion limit of 100 stops parsing at about 24 Ifs; kiln allows
    # limits::kMaxGraphNesting (64) and must raise the parser's limit to match (see if_nested_32).
    c.write("if_nested_5000", nested_if_model(5000), "nest")
    c.write("if_nested_100", nested_if_model(100), "nest")

    # -- external data. The model refers to W (float[4], 16 bytes) stored beside it.
    def ext(name, location, offset=None, length=None, files=None, expect="external data"):
        c.write(name, add_model(external_tensor("W", [4], location, offset, length)), expect, files=files)

    ext("external_parent_dir", "../x.bin")
    ext("external_absolute_path", "/etc/hostname")
    ext("external_symlink_outside", "data.bin")
    with open(os.path.join(out, "symlink_target.bin"), "wb") as f:  # outside every case folder
        f.write(floats16)
    os.symlink("../symlink_target.bin", os.path.join(out, "external_symlink_outside", "data.bin"))
    ext("external_offset_past_end", "data.bin", offset=64, files={"data.bin": floats16})
    ext("external_negative_offset", "data.bin", offset=-4, files={"data.bin": floats16})
    ext("external_length_past_end", "data.bin", length=1024, files={"data.bin": floats16})
    ext("external_length_mismatch", "data.bin", length=8, files={"data.bin": floats16})
    ext("external_file_too_small", "data.bin", files={"data.bin": floats16[:8]})
    ext("external_missing_file", "nothere.bin")
    ext("external_location_is_dir", "subdir", files={"subdir": None})

    # -- nodes against their schemas
    c.write("unknown_op", make_model([helper.make_node("NoSuchOpAnywhere", ["X"], ["Y"])],
                                     [vi("X", [4])], [vi("Y", [4])]), "NoSuchOpAnywhere")
    c.write("unknown_domain", make_model([helper.make_node("Relu", ["X"], ["Y"], domain="com.example.nowhere")],
                                         [vi("X", [4])], [vi("Y", [4])],
                                         opsets=[helper.make_opsetid("", OPSET),
                                                 helper.make_opsetid("com.example.nowhere", 1)]),
            "com.example.nowhere")
    c.write("missing_required_attribute", make_model([helper.make_node("Cast", ["X"], ["Y"])],
                                                     [vi("X", [4])], [vi("Y", [4])]), "attribute")
    c.write("wrong_attribute_type", make_model([helper.make_node("Cast", ["X"], ["Y"], to="float")],
                                               [vi("X", [4])], [vi("Y", [4])]), "attribute")
    c.write("wrong_input_count", make_model([helper.make_node("Relu", ["X", "X"], ["Y"])],
                                            [vi("X", [4])], [vi("Y", [4])]), "input")
    # type constraints (ONNX's schemas): Relu takes integers only from opset 14 on
    c.write("relu_int32_input", make_model([helper.make_node("Relu", ["x"], ["y"], name="r")],
                                           [vi("x", [4], TensorProto.INT32)], [vi("y", [4], TensorProto.INT32)],
                                           opsets=[helper.make_opsetid("", 13)]),
            "node 'r' (Relu): input 0 'x' has type int32, allowed: float16, float, double, bfloat16")
    c.write("gather_float_indices", make_model([helper.make_node("Gather", ["d", "i"], ["y"], name="g")],
                                               [vi("d", [4, 3]), vi("i", [2])], [vi("y", [2, 3])]),
            "node 'g' (Gather): input 1 'i' has type float, allowed: int32, int64")
    # type constraints of op versions newer than libonnx 1.12 knows (kiln's table from the ONNX spec)
    c.write("bitwise_and_float_opset18", make_model([helper.make_node("BitwiseAnd", ["a", "b"], ["y"], name="b")],
                                                    [vi("a", [4]), vi("b", [4])], [vi("y", [4])],
                                                    opsets=[helper.make_opsetid("", 18)]),
            "node 'b' (BitwiseAnd): input 0 'a' has type float, allowed: uint8, uint16, uint32, uint64, int8")
    c.write("relu_uint8_opset21", make_model([helper.make_node("Relu", ["x"], ["y"], name="r")],
                                             [vi("x", [4], TensorProto.UINT8)], [vi("y", [4], TensorProto.UINT8)],
                                             opsets=[helper.make_opsetid("", 21)]),
            "node 'r' (Relu): input 0 'x' has type uint8, allowed: float, int32, int8, int16, int64")
    c.write("reshape_int32_shape_opset21", make_model([helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")],
                                                      [vi("x", [4]), vi("s", [1], TensorProto.INT32)], [vi("y", [4])],
                                                      opsets=[helper.make_opsetid("", 21)]),
            "node 'rs' (Reshape): input 1 's' has type int32, allowed: int64")

    # -- valid models that must load
    c.write("unsorted_nodes", make_model([helper.make_node("Relu", ["T"], ["Y"]), helper.make_node("Neg", ["X"], ["T"])],
                                         [vi("X", [4])], [vi("Y", [4])]),
            "nodes listed out of order (acyclic): kiln sorts them", ok=True)
    c.write("external_ok", add_model(external_tensor("W", [4], "data.bin", offset=16, length=16)),
            "external data inside the model's folder, with offset and length",
            ok=True, files={"data.bin": bytes(16) + floats16})
    c.write("relu_int32_opset14", make_model([helper.make_node("Relu", ["x"], ["y"], name="r")],
                                             [vi("x", [4], TensorProto.INT32)], [vi("y", [4], TensorProto.INT32)],
                                             opsets=[helper.make_opsetid("", 14)]),
            "Relu-14 takes int32: type constraints are those of the model's opset", ok=True)
    c.write("bitwise_and_int32_opset18", make_model([helper.make_node("BitwiseAnd", ["a", "b"], ["y"], name="b")],
                                                    [vi("a", [4], TensorProto.INT32), vi("b", [4], TensorProto.INT32)],
                                                    [vi("y", [4], TensorProto.INT32)],
                                                    opsets=[helper.make_opsetid("", 18)]),
            "BitwiseAnd-18 (an op libonnx 1.12 does not know) on int32", ok=True)
    c.write("if_dead_branch_fails_inference", dead_branch_model(),
            "an If branch a constant condition rules out may fail shape inference", ok=True)
    c.write("if_nested_3", nested_if_model(3), "the nested-If builder at a sane depth", ok=True)
    c.write("if_nested_32", nested_if_model(32), "32 nested Ifs: within kMaxGraphNesting, deeper than protobuf's "
            "default recursion limit allows", ok=True)
    c.finish()
    check_valid(out, c.ok)


def assert_unparsable(data):
    m = onnx.ModelProto()
    try:
        m.ParseFromString(data)
    except Exception:
        return
    raise AssertionError("expected bytes that do not parse as a ModelProto")


def check_valid(out, rows):
    """The valid cases must pass the ONNX checker, or the corpus is wrong."""
    for name, *_ in rows:
        if name == "unsorted_nodes":  # the ONNX checker wants sorted nodes; kiln does not
            continue
        if name == "if_nested_32":  # beyond the checker's protobuf recursion limit; if_nested_3 vouches for it
            continue
        if name == "bitwise_and_int32_opset18":  # this onnx (1.12) knows ai.onnx up to opset 17 only
            continue
        path = os.path.join(out, name, "model.onnx")
        onnx.checker.check_model(path)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    build(sys.argv[1])


if __name__ == "__main__":
    main()
