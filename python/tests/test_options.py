"""SessionOptions: optimization levels, threads, profiling in onnxruntime's trace form,
optimized_model_filepath, free dimension overrides."""
import json
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import kiln
from conftest import F, make_model, mlp_model, save


def x_in():
    return np.random.default_rng(3).standard_normal((2, 8)).astype(np.float32)


@pytest.mark.parametrize("level", list(kiln.GraphOptimizationLevel))
def test_levels_give_same_results(mlp, level):
    path, ref = mlp
    so = kiln.SessionOptions()
    so.graph_optimization_level = level
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = kiln.ExecutionMode.ORT_PARALLEL
    so.log_severity_level = 3
    sess = kiln.InferenceSession(path, sess_options=so)
    np.testing.assert_allclose(sess.run(None, {"x": x_in()})[0], ref(x_in()), rtol=1e-4, atol=1e-4)
    assert sess.get_session_options() is so


def test_bad_level_and_threads(mlp):
    so = kiln.SessionOptions()
    so.graph_optimization_level = 5
    with pytest.raises(RuntimeError, match="graph_optimization_level"):
        kiln.InferenceSession(mlp[0], so)
    so = kiln.SessionOptions()
    so.intra_op_num_threads = -1
    with pytest.raises(RuntimeError, match="intra_op_num_threads"):
        kiln.InferenceSession(mlp[0], so)


def test_optimized_model_filepath(tmp_path):
    # Mul by 1 and Add of 0 are no-ops the optimizer removes; Identity chains merge.
    one = helper.make_tensor("one", F, [1], [1.0])
    zero = helper.make_tensor("zero", F, [1], [0.0])
    nodes = [helper.make_node("Mul", ["x", "one"], ["a"]), helper.make_node("Add", ["a", "zero"], ["b"]),
             helper.make_node("Identity", ["b"], ["c"]), helper.make_node("Relu", ["c"], ["y"])]
    m = make_model(nodes, [("x", F, ["n", 3])], [("y", F, ["n", 3])], [one, zero])
    src = save(m, tmp_path / "m.onnx")
    out = tmp_path / "opt.onnx"
    so = kiln.SessionOptions()
    so.optimized_model_filepath = str(out)
    sess = kiln.InferenceSession(src, so)
    x = np.array([[-1, 0, 2]], np.float32)
    assert sess.run(None, {"x": x})[0].tolist() == [[0, 0, 2]]
    assert out.exists()
    opt = onnx.load(str(out))
    onnx.checker.check_model(opt)
    assert len(opt.graph.node) < len(m.graph.node)
    # It loads back (a valid ONNX file, checked above) and gives the same results.
    assert kiln.InferenceSession(str(out)).run(None, {"x": x})[0].tolist() == [[0, 0, 2]]


def test_free_dimension_override(mlp):
    path, ref = mlp
    so = kiln.SessionOptions()
    so.add_free_dimension_override_by_name("batch", 2)
    sess = kiln.InferenceSession(path, so)
    assert sess.get_inputs()[0].shape == [2, 8]
    assert sess.get_outputs()[0].shape == [2, 4]
    np.testing.assert_allclose(sess.run(None, {"x": x_in()})[0], ref(x_in()), rtol=1e-4, atol=1e-4)
    with pytest.raises(kiln.capi.onnxruntime_pybind11_state.InvalidArgument, match="index: 0 Got: 3 Expected: 2"):
        sess.run(None, {"x": np.ones((3, 8), np.float32)})


def test_profiling_trace(mlp, tmp_path):
    path, _ = mlp
    so = kiln.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / "prof")
    sess = kiln.InferenceSession(path, so)
    start = sess.get_profiling_start_time_ns()
    assert start > 1.5e18  # nanoseconds since the epoch (after 2017)
    for _ in range(3):
        sess.run(None, {"x": x_in()})
    trace_path = sess.end_profiling()
    assert os.path.basename(trace_path).startswith("prof_") and trace_path.endswith(".json")
    with open(trace_path) as f:
        events = json.load(f)
    assert isinstance(events, list)
    for e in events:
        assert {"cat", "pid", "tid", "dur", "ts", "ph", "name", "args"} <= e.keys()
        assert e["ph"] == "X"
    sessions = [e for e in events if e["cat"] == "Session"]
    nodes = [e for e in events if e["cat"] == "Node"]
    names = {e["name"] for e in sessions}
    assert "model_loading_uri" in names and "session_initialization" in names
    assert sum(e["name"] == "model_run" for e in sessions) == 3
    assert nodes, "one Node event per node run"
    args = nodes[0]["args"]
    assert {"op_name", "provider", "input_type_shape", "output_type_shape"} <= args.keys()
    assert {a["op_name"] for a in (n["args"] for n in nodes)} & {"Gemm", "Relu", "MatMul", "FusedGemm"}


def test_profiling_off_by_default(mlp):
    sess = kiln.InferenceSession(mlp[0])
    sess.run(None, {"x": x_in()})
    assert sess.end_profiling() == ""


def test_symbolic_dims_many_shapes(tmp_path):
    m = make_model([helper.make_node("Transpose", ["x"], ["y"], perm=[1, 0])], [("x", F, ["a", "b"])],
                   [("y", F, ["b", "a"])])
    sess = kiln.InferenceSession(save(m, tmp_path / "t.onnx"))
    assert sess.get_inputs()[0].shape == ["a", "b"] and sess.get_outputs()[0].shape == ["b", "a"]
    for shape in [(1, 1), (2, 5), (7, 3), (2, 5)]:
        x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        np.testing.assert_array_equal(sess.run(None, {"x": x})[0], x.T)
