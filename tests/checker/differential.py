#!/usr/bin/python3
"""kiln's load-time checks against ONNX's checker, by mutation.

Usage: /usr/bin/python3 tests/checker/differential.py KILN [--workdir DIR] [--seed N] [--verbose]

Takes small valid models (built here with onnx.helper, and some of the vendored backend cases),
applies seeded, deterministic mutations (element types, opsets, attributes, shapes, names, graph
structure, subgraph scoping, initializers, functions), and runs
onnx.checker.check_model(m, full_check=True) on each mutant. Every mutant ONNX rejects must be
rejected by `KILN inspect` too: exit code 2 and exactly one line on stderr ("kiln: error: ...").
Every mutant, accepted or not, must give exit 0 or that one clean line (never a crash, an
internal error or a multi-line message). Mutants ONNX accepts and kiln rejects are kiln's stricter
checks: counted by category and printed, not failures.

A few differences are deliberate (docs/checker.md says why): mutations in DELIBERATE (and single
mutants in DELIBERATE_MUTANTS) are allowed to be accepted by kiln although ONNX rejects them, and
are counted separately. KNOWN_GAPS lists
the mutants kiln still wrongly accepts (to be fixed; a listed one kiln refuses fails the test).

Prints the counts (mutants, rejected by ONNX, rejected by kiln), every mismatch, and exits 1 on
any. The kiln side runs in one process per mutant, two at a time.
"""
import argparse
import collections
import concurrent.futures
import copy
import os
import random
import subprocess
import sys
import tempfile
import time

import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
BACKEND = os.path.join(HERE, "..", "onnx-backend")

# What kiln accepts although ONNX 1.12's checker rejects it, and why (docs/checker.md).
DELIBERATE = {
    "nodes_unsorted": "kiln sorts a graph whose nodes are out of order (cycles are still refused); "
                      "exporters write such files and ONNX Runtime loads them",
    "subgraph_scope": "a subgraph may read a value its graph defines after the node: kiln sorts the "
                      "node after it (the same as nodes_unsorted)",
}

# Single mutants kiln accepts on purpose although ONNX refuses them, where the rest of their
# category is refused by both (docs/checker.md, "Deliberate differences").
DELIBERATE_MUTANTS = {
    "cnn.opset_older.2": "a valid model at opset 2: ONNX 1.12's Relu-1 has no type inference, so "
                         "its MaxPool-1 inference finds an untyped input and fails; kiln types "
                         "Relu at every opset",
}

# Mutants ONNX refuses that kiln still accepts: op-specific shape inference kiln's schemas do not
# check yet (src/ops), to be fixed, not accepted on purpose. Like the backend suite's expected
# failures, a listed mutant that kiln now refuses fails the test until it leaves this list.
KNOWN_GAPS = {}

# The vendored backend cases taken as bases (ONNX 1.12 knows their IR and opsets).
BACKEND_BASES = [
    "node/test_convinteger_with_padding",
    "node/test_gemm_all_attributes",
    "node/test_batchnorm_epsilon",
    "node/test_dropout_default_old",
    "node/test_einsum_batch_diagonal",
    "node/test_nonmaxsuppression_center_point_box_format",
    "node/test_onehot_negative_indices",
    "node/test_where_example",
    "node/test_clip",
    "node/test_argmax_default_axis_example",
    "node/test_if",
    "node/test_if_seq",
    "node/test_loop11",
    "node/test_loop16_seq_none",
    "node/test_scan9_sum",
    "node/test_sequence_insert_at_back",
    "node/test_sequence_map_add_2_sequences_expanded",
    "node/test_split_equal_parts_1d_opset13",
    "node/test_slice",
    "node/test_reduce_sum_keepdims_example",
    "node/test_gather_0",
    "node/test_concat_2d_axis_0",
    "node/test_softmax_axis_0",
    "pytorch-converted/test_Conv2d",
    "pytorch-operator/test_operator_add_broadcast",
    "simple/test_sequence_model1",
]


# ---- bases built here -----------------------------------------------------------------------


def vi(name, elem, dims):
    return helper.make_tensor_value_info(name, elem, dims)


def model(nodes, inputs, outputs, inits=(), opset=13, ir=8, functions=(), extra_opsets=(),
          value_info=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits),
                          value_info=list(value_info))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)] + list(extra_opsets),
                          producer_name="kiln-differential", functions=list(functions))
    m.ir_version = ir
    return m


def const(name, elem, dims, vals):
    return helper.make_tensor(name, elem, dims, vals)


def built_bases():
    F = TensorProto.FLOAT
    I64 = TensorProto.INT64
    out = {}
    out["cnn"] = model(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", kernel_shape=[3, 3],
                          pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["r"], name="relu"),
         helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
         helper.make_node("Flatten", ["p"], ["f"], name="flat"),
         helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], name="fc", transB=1)],
        [vi("x", F, [1, 3, 8, 8])], [vi("y", F, [1, 5])],
        [const("w", F, [4, 3, 3, 3], [0.1] * 108), const("b", F, [4], [0.0] * 4),
         const("fw", F, [5, 64], [0.01] * 320), const("fb", F, [5], [0.0] * 5)],
        value_info=[vi("c", F, [1, 4, 8, 8])])
    out["shape_chain"] = model(
        [helper.make_node("Shape", ["x"], ["s"], name="shape"),
         helper.make_node("Gather", ["s", "i0"], ["d0"], name="gather", axis=0),
         helper.make_node("Unsqueeze", ["d0", "ax"], ["d0u"], name="unsq"),
         helper.make_node("Concat", ["d0u", "m1"], ["target"], name="concat", axis=0),
         helper.make_node("Reshape", ["x", "target"], ["y"], name="reshape")],
        [vi("x", F, ["batch", 3, 4])], [vi("y", F, ["batch", 12])],
        [const("i0", I64, [], [0]), const("ax", I64, [1], [0]), const("m1", I64, [1], [-1])])
    then_g = helper.make_graph([helper.make_node("Add", ["x", "one"], ["t"], name="then_add")],
                               "then", [], [vi("t", F, [2])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"], name="else_neg")],
                               "else", [], [vi("e", F, [2])])
    out["if"] = model(
        [helper.make_node("If", ["cond"], ["y"], name="if", then_branch=then_g, else_branch=else_g)],
        [vi("cond", TensorProto.BOOL, []), vi("x", F, [2])], [vi("y", F, [2])],
        [const("one", F, [2], [1.0, 1.0])])
    body = helper.make_graph(
        [helper.make_node("Add", ["acc_in", "x"], ["acc_out"], name="body_add"),
         helper.make_node("Identity", ["cond_in"], ["cond_out"], name="body_cond")],
        "body", [vi("iter", I64, []), vi("cond_in", TensorProto.BOOL, []), vi("acc_in", F, [2])],
        [vi("cond_out", TensorProto.BOOL, []), vi("acc_out", F, [2])])
    out["loop"] = model(
        [helper.make_node("Loop", ["trip", "", "init"], ["y"], name="loop", body=body)],
        [vi("x", F, [2]), vi("init", F, [2])], [vi("y", F, [2])],
        [const("trip", I64, [], [3])])
    fn = helper.make_function(
        "local", "AddRelu", ["a", "b"], ["o"],
        [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Relu", ["s"], ["o"])],
        [helper.make_opsetid("", 15)])
    out["function"] = model(
        [helper.make_node("AddRelu", ["x", "w"], ["h"], name="call", domain="local"),
         helper.make_node("Relu", ["h"], ["y"], name="relu")],
        [vi("x", F, [2, 3])], [vi("y", F, [2, 3])], [const("w", F, [2, 3], [1.0] * 6)],
        opset=15, functions=[fn], extra_opsets=[helper.make_opsetid("local", 1)])
    out["sequence"] = model(
        [helper.make_node("SequenceConstruct", ["x", "z"], ["seq"], name="construct"),
         helper.make_node("SequenceAt", ["seq", "pos"], ["y"], name="at")],
        [vi("x", F, [2, 3]), vi("z", F, [2, 3])], [vi("y", F, [2, 3])],
        [const("pos", I64, [], [1])], opset=15)
    out["old_opset"] = model(
        [helper.make_node("Squeeze", ["x"], ["s"], name="squeeze", axes=[0]),
         helper.make_node("Slice", ["s"], ["y"], name="slice", starts=[0], ends=[2], axes=[0])],
        [vi("x", F, [1, 4, 3])], [vi("y", F, [2, 3])], opset=9, ir=4)
    out["attrs"] = model(
        [helper.make_node("Transpose", ["x"], ["t"], name="transpose", perm=[1, 0]),
         helper.make_node("ReduceMean", ["t"], ["m"], name="mean", axes=[1], keepdims=0),
         helper.make_node("Cast", ["m"], ["y"], name="cast", to=TensorProto.DOUBLE)],
        [vi("x", F, [2, 3])], [vi("y", TensorProto.DOUBLE, [3])], opset=13)
    return out


def backend_bases():
    out = {}
    for rel in BACKEND_BASES:
        path = os.path.join(BACKEND, rel, "model.onnx")
        if os.path.exists(path):
            out[rel.split("/")[-1]] = onnx.load(path)
    return out


# ---- helpers for mutators ---------------------------------------------------------------------


def all_graphs(m):
    """(graph, depth) for the main graph and every subgraph, outer first."""
    out = []

    def walk(g, depth):
        out.append((g, depth))
        for n in g.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g, depth + 1)
                for sg in a.graphs:
                    walk(sg, depth + 1)

    walk(m.graph, 0)
    return out


def all_nodes(m, with_functions=False):
    nodes = [(g, n) for g, _ in all_graphs(m) for n in g.node]
    if with_functions:
        nodes += [(f, n) for f in m.functions for n in f.node]
    return nodes


def tensor_vis(m, main_only=True):
    """Tensor ValueInfoProtos of graph inputs and outputs."""
    graphs = [m.graph] if main_only else [g for g, _ in all_graphs(m)]
    out = []
    for g in graphs:
        for v in list(g.input) + list(g.output):
            if v.type.WhichOneof("value") == "tensor_type":
                out.append(v)
    return out


def pick(rng, xs):
    return rng.choice(xs) if xs else None


ALL_TYPES = [t for t in range(1, 17)]


# ---- mutators: each takes (model, rng), changes the model, returns a description or None --------
# (None: the mutation does not apply to this model).


def m_elem_undefined(m, rng):
    v = pick(rng, tensor_vis(m))
    if not v:
        return None
    v.type.tensor_type.elem_type = 0
    return f"{v.name}: elem_type UNDEFINED"


def m_elem_undefined_sub(m, rng):
    vs = [v for g, d in all_graphs(m) if d > 0 for v in list(g.input) + list(g.output)
          if v.type.WhichOneof("value") == "tensor_type"]
    v = pick(rng, vs)
    if not v:
        return None
    v.type.tensor_type.elem_type = 0
    return f"subgraph value {v.name}: elem_type UNDEFINED"


def m_elem_undefined_value_info(m, rng):
    vs = [v for g, _ in all_graphs(m) for v in g.value_info if v.type.WhichOneof("value") == "tensor_type"]
    v = pick(rng, vs)
    if not v:
        return None
    v.type.tensor_type.elem_type = 0
    return f"value_info {v.name}: elem_type UNDEFINED"


def m_elem_invalid(m, rng):
    v = pick(rng, tensor_vis(m))
    if not v:
        return None
    v.type.tensor_type.elem_type = rng.choice([27, 40, 99, -3])
    return f"{v.name}: elem_type {v.type.tensor_type.elem_type}"


def m_elem_changed(m, rng):
    v = pick(rng, tensor_vis(m))
    if not v:
        return None
    old = v.type.tensor_type.elem_type
    v.type.tensor_type.elem_type = rng.choice([t for t in ALL_TYPES if t != old and t != 8])
    return f"{v.name}: elem_type {old} -> {v.type.tensor_type.elem_type}"


def m_type_missing(m, rng):
    vs = list(m.graph.input) + list(m.graph.output)
    v = pick(rng, vs)
    if not v:
        return None
    v.ClearField("type")
    return f"{v.name}: no type"


def m_shape_rank(m, rng):
    vs = [v for v in tensor_vis(m) if v.type.tensor_type.HasField("shape")]
    v = pick(rng, vs)
    if not v:
        return None
    shape = v.type.tensor_type.shape
    if shape.dim and rng.random() < 0.5:
        del shape.dim[-1]
        return f"{v.name}: rank - 1"
    shape.dim.add().dim_value = rng.choice([1, 2, 7])
    return f"{v.name}: rank + 1"


def m_shape_dim(m, rng):
    vs = [v for v in tensor_vis(m) if any(d.HasField("dim_value") for d in v.type.tensor_type.shape.dim)]
    v = pick(rng, vs)
    if not v:
        return None
    dims = [d for d in v.type.tensor_type.shape.dim if d.HasField("dim_value")]
    d = rng.choice(dims)
    d.dim_value = d.dim_value + rng.choice([1, 2, 5])
    return f"{v.name}: a dim changed"


def m_shape_negative(m, rng):
    vs = [v for v in tensor_vis(m) if v.type.tensor_type.shape.dim]
    v = pick(rng, vs)
    if not v:
        return None
    rng.choice(v.type.tensor_type.shape.dim).dim_value = -2
    return f"{v.name}: dim -2"


def main_opset(m):
    for o in m.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o
    return None


def m_opset_too_new(m, rng):
    o = main_opset(m)
    if not o:
        return None
    o.version = rng.choice([29, 30, 40])
    return f"ai.onnx opset {o.version}"


def m_opset_zero(m, rng):
    o = main_opset(m)
    if not o:
        return None
    o.version = rng.choice([0, -1])
    return f"ai.onnx opset {o.version}"


def m_opset_older(m, rng):
    o = main_opset(m)
    if not o or o.version <= 1:
        return None
    o.version = rng.randint(1, o.version - 1)
    return f"ai.onnx opset lowered to {o.version}"


def m_opset_removed(m, rng):
    o = main_opset(m)
    if not o:
        return None
    m.opset_import.remove(o)
    return "ai.onnx opset_import removed"


def m_opset_duplicated(m, rng):
    o = main_opset(m)
    if not o:
        return None
    m.opset_import.add().CopyFrom(o)
    m.opset_import[-1].version = o.version + rng.choice([0, -1])
    return "ai.onnx imported twice"


def m_node_domain_unknown(m, rng):
    g, n = pick(rng, all_nodes(m)) or (None, None)
    if not n:
        return None
    n.domain = rng.choice(["com.example", "ai.onnx.ml"])
    return f"node {n.name or n.output[0]}: domain {n.domain}"


def m_node_op_unknown(m, rng):
    g, n = pick(rng, all_nodes(m)) or (None, None)
    if not n:
        return None
    n.op_type = rng.choice(["NoSuchOp", "relu", n.op_type + "X", ""])
    return f"op_type '{n.op_type}'"


def schema_of(n, m):
    o = main_opset(m)
    if n.domain not in ("", "ai.onnx") or not o:
        return None
    try:
        return onnx.defs.get_schema(n.op_type, o.version, "")
    except Exception:
        return None


def m_attr_unknown(m, rng):
    g, n = pick(rng, all_nodes(m)) or (None, None)
    if not n:
        return None
    n.attribute.append(helper.make_attribute(rng.choice(["bogus", "alpha2", "axis_"]), 1))
    return f"node {n.name or n.output[0]}: unknown attribute"


def m_attr_missing_required(m, rng):
    cands = []
    for g, n in all_nodes(m):
        s = schema_of(n, m)
        if not s:
            continue
        req = [a.name for a in n.attribute if a.name in s.attributes and s.attributes[a.name].required]
        if req:
            cands.append((n, req))
    c = pick(rng, cands)
    if not c:
        return None
    n, req = c
    name = rng.choice(req)
    for a in list(n.attribute):
        if a.name == name:
            n.attribute.remove(a)
    return f"node {n.name or n.output[0]}: required attribute {name} removed"


def m_attr_kind(m, rng):
    cands = [(n, a) for g, n in all_nodes(m) for a in n.attribute]
    c = pick(rng, cands)
    if not c:
        return None
    n, a = c
    new = {onnx.AttributeProto.INT: [helper.make_attribute(a.name, [1, 2]), helper.make_attribute(a.name, 1.5)],
           onnx.AttributeProto.INTS: [helper.make_attribute(a.name, 1), helper.make_attribute(a.name, "s")],
           onnx.AttributeProto.FLOAT: [helper.make_attribute(a.name, 2), helper.make_attribute(a.name, [1.0])],
           onnx.AttributeProto.STRING: [helper.make_attribute(a.name, 3)],
           onnx.AttributeProto.GRAPH: [helper.make_attribute(a.name, 3)],
           onnx.AttributeProto.TENSOR: [helper.make_attribute(a.name, 3.0)]}.get(a.type)
    if not new:
        return None
    a.CopyFrom(rng.choice(new))
    return f"node {n.name or n.output[0]}: attribute {a.name} of another kind"


def m_attr_value(m, rng):
    """Attribute values out of what the op allows (ONNX's shape inference catches most)."""
    cands = [(n, a) for g, n in all_nodes(m) for a in n.attribute
             if a.type in (onnx.AttributeProto.INT, onnx.AttributeProto.INTS)]
    c = pick(rng, cands)
    if not c:
        return None
    n, a = c
    if a.type == onnx.AttributeProto.INT:
        a.i = rng.choice([-100, 100, 7])
    elif a.ints:
        a.ints[rng.randrange(len(a.ints))] = rng.choice([-100, 100, 0])
    else:
        a.ints.extend([99])
    return f"node {n.name or n.output[0]}: attribute {a.name} out of range"


def m_attr_empty_name(m, rng):
    g, n = pick(rng, all_nodes(m)) or (None, None)
    if not n:
        return None
    n.attribute.append(helper.make_attribute("x", 1))
    n.attribute[-1].name = ""
    return "attribute without a name"


def m_attr_duplicate(m, rng):
    cands = [(n, a) for g, n in all_nodes(m) for a in n.attribute]
    c = pick(rng, cands)
    if not c:
        return None
    n, a = c
    n.attribute.append(copy.deepcopy(a))
    return f"attribute {a.name} twice"


def m_attr_type_field_mismatch(m, rng):
    """An attribute whose declared type names a field it does not set."""
    cands = [(n, a) for g, n in all_nodes(m) for a in n.attribute
             if a.type in (onnx.AttributeProto.INT, onnx.AttributeProto.FLOAT, onnx.AttributeProto.INTS)]
    c = pick(rng, cands)
    if not c:
        return None
    n, a = c
    a.type = onnx.AttributeProto.STRING if rng.random() < 0.5 else onnx.AttributeProto.TENSOR
    return f"attribute {a.name}: type field changed, value not"


def m_inputs_extra(m, rng):
    g, n = pick(rng, all_nodes(m)) or (None, None)
    if not n or not n.input or not n.input[0]:
        return None
    for _ in range(rng.choice([1, 3, 8])):
        n.input.append(n.input[0])
    return f"node {n.name or n.output[0]}: extra inputs"


def m_inputs_fewer(m, rng):
    g, n = pick(rng, [(g, n) for g, n in all_nodes(m) if n.input]) or (None, None)
    if not n:
        return None
    del n.input[-1]
    return f"node {n.name or n.output[0]}: last input dropped"


def m_outputs_extra(m, rng):
    g, n = pick(rng, all_nodes(m)) or (None, None)
    if not n:
        return None
    for k in range(rng.choice([1, 4])):
        n.output.append(f"extra_out_{k}")
    return f"node {n.name or n.output[0]}: extra outputs"


def m_input_undefined(m, rng):
    g, n = pick(rng, [(g, n) for g, n in all_nodes(m) if n.input]) or (None, None)
    if not n:
        return None
    k = rng.randrange(len(n.input))
    n.input[k] = "nowhere_" + str(k)
    return f"node {n.name or n.output[0]}: input {k} undefined"


def m_nodes_unsorted(m, rng):
    g, _ = pick(rng, [(g, d) for g, d in all_graphs(m) if len(g.node) >= 2]) or (None, None)
    if not g:
        return None
    nodes = list(g.node)
    while True:
        rng.shuffle(nodes)
        if [n.SerializeToString() for n in nodes] != [n.SerializeToString() for n in g.node]:
            break
    del g.node[:]
    g.node.extend(nodes)
    return "nodes out of order"


def m_cycle(m, rng):
    gs = [g for g, _ in all_graphs(m) if len(g.node) >= 2]
    g = pick(rng, gs)
    if not g:
        return None
    first = [n for n in g.node if n.input]
    if not first:
        return None
    a = first[0]
    b = g.node[-1]
    if not b.output or a is b:
        return None
    a.input[0] = b.output[0]
    return "a cycle through the first and last nodes"


def m_self_loop(m, rng):
    g, n = pick(rng, [(g, n) for g, n in all_nodes(m) if n.input and n.output]) or (None, None)
    if not n:
        return None
    n.input[0] = n.output[0]
    return f"node {n.name or n.output[0]} reads its own output"


def m_output_dangling(m, rng):
    g = m.graph
    if not g.output:
        return None
    g.output[rng.randrange(len(g.output))].name = "never_made"
    return "graph output not produced"


def m_output_duplicate_assign(m, rng):
    nodes = [(g, n) for g, n in all_nodes(m) if n.output]
    if len(nodes) < 2:
        return None
    (g1, a), (g2, b) = rng.sample(nodes, 2)
    b.output[0] = a.output[0]
    return f"two nodes write {a.output[0]}"


def m_output_shadows_input(m, rng):
    g, n = pick(rng, [(g, n) for g, n in all_nodes(m) if n.output]) or (None, None)
    ins = [v.name for v in m.graph.input]
    if not n or not ins:
        return None
    n.output[0] = rng.choice(ins)
    return f"node writes graph input {n.output[0]}"


def m_input_duplicate(m, rng):
    g = m.graph
    if not g.input:
        return None
    g.input.add().CopyFrom(g.input[rng.randrange(len(g.input))])
    return "a graph input listed twice"


def m_empty_names(m, rng):
    choices = []
    if m.graph.input:
        choices.append("input")
    if m.graph.output:
        choices.append("output")
    if m.graph.initializer:
        choices.append("initializer")
    choices.append("graph")
    what = rng.choice(choices)
    if what == "input":
        m.graph.input[rng.randrange(len(m.graph.input))].name = ""
    elif what == "output":
        m.graph.output[rng.randrange(len(m.graph.output))].name = ""
    elif what == "initializer":
        m.graph.initializer[rng.randrange(len(m.graph.initializer))].name = ""
    else:
        m.graph.name = ""
    return f"empty {what} name"


def m_subgraph_scope(m, rng):
    """A subgraph reads a value that the enclosing graph defines only after the node, or a value
    of a sibling subgraph."""
    cands = []
    for g, _ in all_graphs(m):
        for i, n in enumerate(g.node):
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH and a.g.node:
                    later = [o for later_n in g.node[i + 1:] for o in later_n.output if o]
                    own = [o for o in n.output if o]
                    cands.append((a.g, later + own))
    c = pick(rng, cands)
    if not c or not c[1]:
        return None
    sg, names = c
    sub = rng.choice([n for n in sg.node if n.input] or [None])
    if sub is None:
        return None
    sub.input[0] = rng.choice(names)
    return "subgraph reads a value defined after its node"


def m_subgraph_sibling(m, rng):
    cands = []
    for g, _ in all_graphs(m):
        for n in g.node:
            gs = [a.g for a in n.attribute if a.type == onnx.AttributeProto.GRAPH]
            if len(gs) == 2 and gs[0].node and gs[1].node:
                cands.append(gs)
    c = pick(rng, cands)
    if not c:
        return None
    a, b = c
    names = [o for n in a.node for o in n.output if o]
    readers = [n for n in b.node if n.input]
    if not names or not readers:
        return None
    rng.choice(readers).input[0] = rng.choice(names)
    return "a branch reads a value of the other branch"


def m_subgraph_redefines_outer(m, rng):
    cands = []
    for g, _ in all_graphs(m):
        outer = [v.name for v in g.input] + [o for n in g.node for o in n.output if o]
        for n in g.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH and a.g.node:
                    cands.append((a.g, outer))
    c = pick(rng, cands)
    if not c or not c[1]:
        return None
    sg, outer = c
    n = rng.choice(sg.node)
    old = n.output[0]
    new = rng.choice(outer)
    n.output[0] = new
    for other in sg.node:
        for k, i in enumerate(other.input):
            if i == old:
                other.input[k] = new
    for o in sg.output:
        if o.name == old:
            o.name = new
    return f"subgraph node redefines outer value {new}"


def m_subgraph_io_count(m, rng):
    """A Loop/Scan body or If branch with one input or output too many or too few."""
    cands = [(n, a.g) for g, _ in all_graphs(m) for n in g.node for a in n.attribute
             if a.type == onnx.AttributeProto.GRAPH]
    c = pick(rng, cands)
    if not c:
        return None
    n, sg = c
    r = rng.random()
    if r < 0.35 and sg.output:
        del sg.output[-1]
        return f"{n.op_type} subgraph: an output fewer"
    if r < 0.7:
        sg.input.add().CopyFrom(sg.input[0] if sg.input else vi("extra_in", TensorProto.FLOAT, [1]))
        sg.input[-1].name = "extra_in"
        return f"{n.op_type} subgraph: an input more"
    if sg.input:
        del sg.input[-1]
        return f"{n.op_type} subgraph: an input fewer"
    return None


def m_initializer_dtype(m, rng):
    """An initializer that is also a graph input of another element type."""
    inits = list(m.graph.initializer)
    t = pick(rng, inits)
    if not t or m.ir_version < 4:
        return None
    names = {v.name for v in m.graph.input}
    if t.name not in names:
        m.graph.input.append(vi(t.name, rng.choice([TensorProto.INT64, TensorProto.DOUBLE]),
                                list(t.dims)))
    else:
        for v in m.graph.input:
            if v.name == t.name:
                v.type.tensor_type.elem_type = TensorProto.INT32
    return f"initializer {t.name} declared with another type"


def m_initializer_shape(m, rng):
    inits = list(m.graph.initializer)
    t = pick(rng, inits)
    if not t or m.ir_version < 4:
        return None
    dims = list(t.dims) + [3] if rng.random() < 0.5 else [d + 1 for d in t.dims] or [2]
    m.graph.input.append(vi(t.name, t.data_type, dims))
    return f"initializer {t.name} declared with another shape"


def m_initializer_data(m, rng):
    t = pick(rng, list(m.graph.initializer))
    if not t:
        return None
    r = rng.random()
    if r < 0.3:
        t.data_type = 0
        return f"initializer {t.name}: data_type UNDEFINED"
    if r < 0.6:
        t.dims.append(5)
        return f"initializer {t.name}: dims do not match its data"
    t.data_type = 99
    return f"initializer {t.name}: data_type 99"


def m_initializer_duplicate(m, rng):
    t = pick(rng, list(m.graph.initializer))
    if not t:
        return None
    m.graph.initializer.append(copy.deepcopy(t))
    return f"initializer {t.name} twice"


def m_function_opset(m, rng):
    if not m.functions:
        return None
    f = m.functions[0]
    r = rng.random()
    if r < 0.5:
        for o in f.opset_import:
            if o.domain == "":
                o.version = rng.choice([1, 2, 30])
        return "function imports another ai.onnx opset"
    del f.opset_import[:]
    f.opset_import.append(helper.make_opsetid("com.other", 1))
    return "function without its ai.onnx import"


def m_function_body(m, rng):
    if not m.functions:
        return None
    f = m.functions[0]
    r = rng.random()
    if r < 0.33:
        f.node[0].input[0] = "not_a_param"
        return "function body reads an undefined value"
    if r < 0.66:
        f.output[0] = "not_made"
        return "function output not produced"
    f.node[1].output[0] = f.node[0].output[0]
    return "function body assigns a value twice"


def m_function_call(m, rng):
    if not m.functions:
        return None
    for n in m.graph.node:
        if n.domain == m.functions[0].domain:
            r = rng.random()
            if r < 0.5:
                n.input.append(n.input[0])
                return "function called with an input too many"
            n.domain = "local2"
            return "function called in a domain not imported"
    return None


def m_ir_version(m, rng):
    m.ir_version = rng.choice([0, -1])
    return f"ir_version {m.ir_version}"


def m_ir_old_no_init_input(m, rng):
    """Before IR 4 every initializer must be a graph input too."""
    if not m.graph.initializer:
        return None
    m.ir_version = 3
    names = {t.name for t in m.graph.initializer}
    kept = [v for v in m.graph.input if v.name not in names]
    del m.graph.input[:]
    m.graph.input.extend(kept)
    return "ir_version 3, initializers not listed as inputs"


def m_sequence_type(m, rng):
    vs = [v for g, _ in all_graphs(m) for v in list(g.input) + list(g.output) + list(g.value_info)
          if v.type.WhichOneof("value") == "sequence_type"]
    v = pick(rng, vs)
    if not v:
        return None
    if rng.random() < 0.5:
        v.type.sequence_type.ClearField("elem_type")
        return f"{v.name}: sequence without element type"
    v.type.sequence_type.elem_type.tensor_type.elem_type = 0
    return f"{v.name}: sequence of UNDEFINED"


MUTATORS = {name[2:]: fn for name, fn in sorted(globals().items()) if name.startswith("m_")}


# ---- running ------------------------------------------------------------------------------------


def onnx_verdict(m):
    try:
        onnx.checker.check_model(m, full_check=True)
        return None
    except Exception as e:  # ValidationError, InferenceError, and a few others on odd input
        return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


def onnx_verdicts(paths):
    """{path: None (accepted) or ONNX's first line of complaint}. The checks run in a child
    process: ONNX's shape inference dies of SIGFPE on some inputs (a zero stride), and such a
    mutant counts as rejected; the child is started again after it."""
    out = {}
    todo = list(paths)
    while todo:
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--onnx-verdicts"],
                           input="\n".join(todo).encode(), stdout=subprocess.PIPE)
        for line in p.stdout.decode("utf-8", "replace").splitlines():
            path, _, why = line.partition("\t")
            out[path] = why or None
        todo = [t for t in todo if t not in out]
        if todo:
            out[todo[0]] = f"ONNX's checker crashed (exit {p.returncode})"
            todo = todo[1:]
    return out


def onnx_verdicts_child():
    for path in sys.stdin.read().splitlines():
        why = onnx_verdict(onnx.load(path))
        sys.stdout.write(f"{path}\t{(why or '').replace(chr(9), ' ')}\n")
        sys.stdout.flush()
    return 0


def run_kiln(kiln, path):
    p = subprocess.run([kiln, "inspect", path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       stdin=subprocess.DEVNULL, timeout=30)
    return p.returncode, p.stderr.decode("utf-8", "replace")


def main():
    if sys.argv[1:] == ["--onnx-verdicts"]:
        return onnx_verdicts_child()
    ap = argparse.ArgumentParser()
    ap.add_argument("kiln")
    ap.add_argument("--workdir")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--per-mutator", type=int, default=3, help="variants of each mutation per base")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    t0 = time.time()
    work = args.workdir or tempfile.mkdtemp(prefix="kiln-checker-")
    os.makedirs(work, exist_ok=True)

    bases = {**built_bases(), **backend_bases()}
    problems = []
    for name, m in bases.items():
        why = onnx_verdict(m)
        if why:
            problems.append(f"base {name}: ONNX rejects it: {why}")
    mutants = []  # (id, category, base, description, path, onnx_error)
    for bname, base in bases.items():
        path = os.path.join(work, f"base_{bname}.onnx")
        onnx.save(base, path)
        mutants.append((f"base_{bname}", "base", bname, "unchanged", path, None))
        for cat, fn in MUTATORS.items():
            for k in range(args.per_mutator):
                rng = random.Random(f"{args.seed}/{bname}/{cat}/{k}")
                m = copy.deepcopy(base)
                try:
                    desc = fn(m, rng)
                except (IndexError, ValueError):
                    desc = None
                if desc is None:
                    continue
                data = m.SerializeToString()
                mid = f"{bname}.{cat}.{k}"
                path = os.path.join(work, mid + ".onnx")
                with open(path, "wb") as f:
                    f.write(data)
                mutants.append((mid, cat, bname, desc, path, None))
    # Identical mutants (a mutation that happened to do the same twice) count once.
    seen = set()
    unique = []
    for mu in mutants:
        with open(mu[4], "rb") as f:
            key = f.read()
        if key in seen:
            continue
        seen.add(key)
        unique.append(mu)
    verdicts = onnx_verdicts([mu[4] for mu in unique])
    mutants = [mu[:5] + (verdicts[mu[4]],) for mu in unique]
    t_onnx = time.time() - t0

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
        results = list(ex.map(lambda mu: run_kiln(args.kiln, mu[4]), mutants))
    t_kiln = time.time() - t0 - t_onnx

    n_onnx = n_kiln = n_both = 0
    stricter = collections.Counter()
    deliberate = collections.Counter()
    gaps = []
    for mu, (rc, err) in zip(mutants, results):
        mid, cat, bname, desc, path, onnx_err = mu
        lines = err.splitlines()
        clean = rc == 2 and len(lines) == 1 and lines[0].startswith("kiln: error: ")
        if rc not in (0, 2) or (rc == 2 and not clean):
            problems.append(f"{mid} ({desc}): kiln exit {rc}, stderr {err.strip()[:300]!r}")
            continue
        kiln_rejects = rc == 2
        n_onnx += onnx_err is not None
        n_kiln += kiln_rejects
        if cat == "base" and kiln_rejects:
            problems.append(f"{mid}: kiln rejects a valid base model: {lines[0]}")
        elif onnx_err and kiln_rejects:
            n_both += 1
            if mid in KNOWN_GAPS or mid in DELIBERATE_MUTANTS:
                problems.append(f"{mid}: listed in KNOWN_GAPS or DELIBERATE_MUTANTS, but kiln "
                                f"refuses it now: remove it")
            if args.verbose:
                print(f"  both  {mid} ({desc})\n        onnx: {onnx_err[:200]}\n        kiln: {lines[0][:200]}")
        elif onnx_err and not kiln_rejects:
            if cat in DELIBERATE:
                deliberate[cat] += 1
            elif mid in DELIBERATE_MUTANTS:
                deliberate[mid] += 1
            elif mid in KNOWN_GAPS:
                gaps.append(mid)
            else:
                problems.append(f"{mid} ({desc}): ONNX rejects ({onnx_err[:200]}), kiln accepts")
        elif kiln_rejects:
            stricter[cat] += 1
            if args.verbose:
                print(f"  kiln only  {mid} ({desc}): {lines[0][:200]}")

    print(f"{len(bases)} base models, {len(mutants)} mutants: {n_onnx} rejected by ONNX's checker, "
          f"{n_kiln} by kiln ({n_both} by both)")
    print(f"time: {t_onnx:.1f} s writing and checking with ONNX, {t_kiln:.1f} s kiln")
    if stricter:
        print(f"rejected by kiln only (kiln's stricter checks), {sum(stricter.values())}:")
        for cat, c in sorted(stricter.items()):
            print(f"  {cat}: {c}")
    if deliberate:
        print(f"accepted by kiln although ONNX rejects them (deliberate, docs/checker.md), "
              f"{sum(deliberate.values())}:")
        for cat, c in sorted(deliberate.items()):
            print(f"  {cat}: {c} ({DELIBERATE.get(cat) or DELIBERATE_MUTANTS[cat]})")
    if gaps:
        print(f"known gaps (ONNX refuses, kiln accepts, to be fixed: KNOWN_GAPS), {len(gaps)}:")
        for mid in gaps:
            print(f"  {mid}: {KNOWN_GAPS[mid]}")
    for p in problems:
        print("MISMATCH " + p)
    print(f"{len(problems)} mismatches")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
