"""Test models made with onnx.helper, and the kiln package under test (PYTHONPATH=build/python)."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper


F = TensorProto.FLOAT


def make_model(nodes, inputs, outputs, initializers=(), opset=17, ir_version=8, **model_kw):
    """A ModelProto from nodes and (name, elem_type, shape) inputs/outputs."""
    graph = helper.make_graph(
        nodes, model_kw.pop("graph_name", "g"),
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
        list(initializers), doc_string=model_kw.pop("graph_doc", ""))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir_version,
                          **model_kw)
    return m


def save(model, path):
    onnx.save(model, str(path))
    return str(path)


def mlp_model(batch="batch", in_dim=8, hidden=16, out_dim=4, seed=0):
    """x[batch,in] -> Gemm -> Relu -> Gemm -> y[batch,out], with the numpy reference."""
    rng = np.random.default_rng(seed)
    w1 = rng.standard_normal((in_dim, hidden)).astype(np.float32)
    b1 = rng.standard_normal(hidden).astype(np.float32)
    w2 = rng.standard_normal((hidden, out_dim)).astype(np.float32)
    b2 = rng.standard_normal(out_dim).astype(np.float32)
    inits = [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"))]
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"]),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("Gemm", ["r", "w2", "b2"], ["y"])]
    m = make_model(nodes, [("x", F, [batch, in_dim])], [("y", F, [batch, out_dim])], inits,
                   producer_name="kiln-tests", producer_version="1.0", doc_string="an MLP",
                   model_version=7, domain="ai.kiln.test", graph_name="mlp", graph_doc="two layers")
    helper.set_model_props(m, {"author": "tests", "purpose": "compat"})

    def ref(x):
        return np.maximum(x @ w1 + b1, 0) @ w2 + b2
    return m, ref


@pytest.fixture
def mlp(tmp_path):
    m, ref = mlp_model()
    return save(m, tmp_path / "mlp.onnx"), ref
