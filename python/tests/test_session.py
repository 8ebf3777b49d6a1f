"""InferenceSession as onnxruntime's: construction, metadata, NodeArgs, run, providers."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import kiln
from conftest import F, make_model, mlp_model, save


def test_version_device_providers():
    assert isinstance(kiln.__version__, str) and kiln.__version__.count(".") == 2
    assert kiln.get_device() == "CPU"
    assert kiln.get_available_providers() == ["CPUExecutionProvider"]


def test_run_matches_numpy(mlp):
    path, ref = mlp
    sess = kiln.InferenceSession(path, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(1).standard_normal((3, 8)).astype(np.float32)
    out = sess.run(None, {"x": x})
    assert isinstance(out, list) and len(out) == 1
    assert out[0].dtype == np.float32 and out[0].shape == (3, 4)
    np.testing.assert_allclose(out[0], ref(x), rtol=1e-4, atol=1e-4)
    # Named outputs, an empty list (all outputs) and a batch of another size (a second plan).
    np.testing.assert_allclose(sess.run(["y"], {"x": x})[0], out[0])
    np.testing.assert_allclose(sess.run([], {"x": x})[0], out[0])
    x5 = np.ones((5, 8), np.float32)
    np.testing.assert_allclose(sess.run(None, {"x": x5})[0], ref(x5), rtol=1e-4, atol=1e-4)


def test_session_from_bytes_and_pathlike(tmp_path):
    m, ref = mlp_model()
    data = m.SerializeToString()
    x = np.full((2, 8), 0.5, np.float32)
    for src in (data, bytearray(data), save(m, tmp_path / "m.onnx"), tmp_path / "m.onnx"):
        sess = kiln.InferenceSession(src)
        np.testing.assert_allclose(sess.run(None, {"x": x})[0], ref(x), rtol=1e-4, atol=1e-4)


def test_inputs_outputs_nodeargs(mlp):
    sess = kiln.InferenceSession(mlp[0])
    (i,), (o,) = sess.get_inputs(), sess.get_outputs()
    assert (i.name, i.shape, i.type) == ("x", ["batch", 8], "tensor(float)")
    assert (o.name, o.shape, o.type) == ("y", ["batch", 4], "tensor(float)")
    assert "tensor(float)" in str(i) and "'x'" in repr(i)
    assert sess.get_overridable_initializers() == []


def test_unknown_dims_and_rank_and_many_types(tmp_path):
    nodes = [helper.make_node("Identity", ["a"], ["a_out"]), helper.make_node("Identity", ["b"], ["b_out"]),
             helper.make_node("Cast", ["c"], ["c_out"], to=TensorProto.INT64)]
    m = make_model(nodes, [("a", F, [None, 3]), ("b", TensorProto.INT64, [None, None]), ("c", TensorProto.BOOL, ["n"])],
                   [("a_out", F, [None, 3]), ("b_out", TensorProto.INT64, [None, None]), ("c_out", TensorProto.INT64, ["n"])])
    sess = kiln.InferenceSession(save(m, tmp_path / "m.onnx"))
    a, b, c = sess.get_inputs()
    assert a.shape == [None, 3] and b.shape == [None, None] and c.shape == ["n"]
    assert (a.type, b.type, c.type) == ("tensor(float)", "tensor(int64)", "tensor(bool)")
    out = sess.run(None, {"a": np.ones((2, 3), np.float32), "b": np.arange(6).reshape(2, 3),
                          "c": np.array([True, False])})
    assert out[1].dtype == np.int64 and out[1].tolist() == [[0, 1, 2], [3, 4, 5]]
    assert out[2].tolist() == [1, 0]


def test_overridable_initializers(tmp_path):
    w = helper.make_tensor("w", F, [2], [1.0, 2.0])
    m = make_model([helper.make_node("Add", ["x", "w"], ["y"])], [("x", F, [2]), ("w", F, [2])],
                   [("y", F, [2])], [w])
    sess = kiln.InferenceSession(save(m, tmp_path / "m.onnx"))
    assert [i.name for i in sess.get_inputs()] == ["x"]
    (o,) = sess.get_overridable_initializers()
    assert (o.name, o.shape, o.type) == ("w", [2], "tensor(float)")
    assert sess.run(None, {"x": np.zeros(2, np.float32)})[0].tolist() == [1.0, 2.0]
    # Fed, the initializer's value is the one given (onnxruntime's override), for this run only.
    w_new = np.array([10, 20], np.float32)
    assert sess.run(None, {"x": np.ones(2, np.float32), "w": w_new})[0].tolist() == [11.0, 21.0]
    assert sess.run(None, {"x": np.ones(2, np.float32)})[0].tolist() == [2.0, 3.0]
    with pytest.raises(RuntimeError, match=r"(?s)invalid dimensions for input: w.*Got: 3 Expected: 2"):
        sess.run(None, {"x": np.ones(2, np.float32), "w": np.ones(3, np.float32)})
    with pytest.raises(RuntimeError, match=r"tensor\(double\).*tensor\(float\)"):
        sess.run(None, {"x": np.ones(2, np.float32), "w": np.ones(2)})
    from_bytes = kiln.InferenceSession(bytearray(m.SerializeToString()))
    assert from_bytes.run(None, {"x": np.ones(2, np.float32), "w": w_new})[0].tolist() == [11.0, 21.0]


def test_modelmeta(mlp):
    meta = kiln.InferenceSession(mlp[0]).get_modelmeta()
    assert meta.producer_name == "kiln-tests"
    assert meta.graph_name == "mlp"
    assert meta.domain == "ai.kiln.test"
    assert meta.description == "an MLP"
    assert meta.graph_description == "two layers"
    assert meta.version == 7
    assert meta.custom_metadata_map == {"author": "tests", "purpose": "compat"}


def test_providers_api(mlp):
    sess = kiln.InferenceSession(mlp[0], providers=[("CPUExecutionProvider", {})])
    assert sess.get_providers() == ["CPUExecutionProvider"]
    assert sess.get_provider_options() == {"CPUExecutionProvider": {}}
    with pytest.warns(UserWarning, match="CUDAExecutionProvider"):
        kiln.InferenceSession(mlp[0], providers=["CUDAExecutionProvider", "CPUExecutionProvider"])


def test_python_lists_as_feeds(tmp_path):
    m = make_model([helper.make_node("Add", ["x", "x"], ["y"])], [("x", TensorProto.INT64, [3])],
                   [("y", TensorProto.INT64, [3])])
    sess = kiln.InferenceSession(save(m, tmp_path / "m.onnx"))
    assert sess.run(None, {"x": [1, 2, 3]})[0].tolist() == [2, 4, 6]


def test_ort_values_and_iobinding(mlp):
    path, ref = mlp
    sess = kiln.InferenceSession(path)
    x = np.random.default_rng(2).standard_normal((2, 8)).astype(np.float32)
    v = kiln.OrtValue.ortvalue_from_numpy(x)
    assert v.shape() == [2, 8] and v.data_type() == "tensor(float)" and v.is_tensor()
    assert np.shares_memory(v.numpy(), x)  # no copy, as onnxruntime's CPU OrtValue
    (out,) = sess.run_with_ort_values(["y"], {"x": v})
    assert isinstance(out, kiln.OrtValue)
    np.testing.assert_allclose(out.numpy(), ref(x), rtol=1e-4, atol=1e-4)
    io = sess.io_binding()
    io.bind_cpu_input("x", x)
    io.bind_output("y")
    sess.run_with_iobinding(io)
    np.testing.assert_allclose(io.copy_outputs_to_cpu()[0], ref(x), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(io.get_outputs()[0].numpy(), ref(x), rtol=1e-4, atol=1e-4)


def test_drop_in_import_path():
    from kiln.capi.onnxruntime_pybind11_state import Fail, InvalidArgument, InvalidProtobuf, NoSuchFile
    for cls in (Fail, InvalidArgument, InvalidProtobuf, NoSuchFile):
        assert issubclass(cls, RuntimeError)
    assert kiln.GraphOptimizationLevel.ORT_ENABLE_ALL == 99


def test_sequence_output(tmp_path):
    graph = helper.make_graph(
        [helper.make_node("SequenceConstruct", ["a", "b"], ["s"])], "g",
        [helper.make_tensor_value_info("a", F, [2]), helper.make_tensor_value_info("b", F, [2])],
        [helper.make_tensor_sequence_value_info("s", F, [2])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    sess = kiln.InferenceSession(m.SerializeToString())
    assert sess.get_outputs()[0].type == "seq(tensor(float))"
    (s,) = sess.run(None, {"a": np.array([1, 2], np.float32), "b": np.array([3, 4], np.float32)})
    assert isinstance(s, list) and [t.tolist() for t in s] == [[1, 2], [3, 4]]
