"""Every dtype onnxruntime's Python API takes, in and out; zero-copy feeds and outputs that are
the caller's own."""
import threading

import numpy as np
import pytest
from onnx import TensorProto, helper

import kiln
from conftest import F, make_model, save

NUMERIC = [
    (np.float32, TensorProto.FLOAT, "float"), (np.float64, TensorProto.DOUBLE, "double"),
    (np.float16, TensorProto.FLOAT16, "float16"), (np.int8, TensorProto.INT8, "int8"),
    (np.int16, TensorProto.INT16, "int16"), (np.int32, TensorProto.INT32, "int32"),
    (np.int64, TensorProto.INT64, "int64"), (np.uint8, TensorProto.UINT8, "uint8"),
    (np.uint16, TensorProto.UINT16, "uint16"), (np.uint32, TensorProto.UINT32, "uint32"),
    (np.uint64, TensorProto.UINT64, "uint64"), (np.bool_, TensorProto.BOOL, "bool"),
]


@pytest.mark.parametrize("np_type,onnx_type,name", NUMERIC)
def test_identity_round_trip(tmp_path, np_type, onnx_type, name):
    m = make_model([helper.make_node("Identity", ["x"], ["y"])], [("x", onnx_type, [2, 3])],
                   [("y", onnx_type, [2, 3])])
    sess = kiln.InferenceSession(save(m, tmp_path / "m.onnx"))
    assert sess.get_inputs()[0].type == f"tensor({name})"
    x = (np.arange(6).reshape(2, 3) % 2 == 0) if np_type is np.bool_ else np.arange(6, dtype=np_type).reshape(2, 3) + 1
    x = x.astype(np_type)
    (y,) = sess.run(None, {"x": x})
    assert y.dtype == x.dtype and y.shape == x.shape
    np.testing.assert_array_equal(y, x)
    assert not np.shares_memory(x, y)  # Identity's output is never the caller's input


@pytest.mark.parametrize("np_type,onnx_type", [(np.float16, TensorProto.FLOAT16), (np.int64, TensorProto.INT64),
                                               (np.int32, TensorProto.INT32), (np.float64, TensorProto.DOUBLE)])
def test_arithmetic(tmp_path, np_type, onnx_type):
    m = make_model([helper.make_node("Mul", ["a", "b"], ["c"])], [("a", onnx_type, [4]), ("b", onnx_type, [4])],
                   [("c", onnx_type, [4])])
    sess = kiln.InferenceSession(save(m, tmp_path / "m.onnx"))
    a = np.array([1, 2, 3, 4], np_type)
    b = np.array([3, 5, 7, -2], np_type) if np_type is not np.uint8 else np.array([3, 5, 7, 2], np_type)
    np.testing.assert_array_equal(sess.run(None, {"a": a, "b": b})[0], a * b)


def test_int64_large_values(tmp_path):
    m = make_model([helper.make_node("Add", ["a", "a"], ["c"])], [("a", TensorProto.INT64, [2])],
                   [("c", TensorProto.INT64, [2])])
    sess = kiln.InferenceSession(save(m, tmp_path / "m.onnx"))
    a = np.array([2**40 + 1, -(2**50)], np.int64)
    assert sess.run(None, {"a": a})[0].tolist() == [2**41 + 2, -(2**51)]


def test_bool_logic(tmp_path):
    m = make_model([helper.make_node("And", ["a", "b"], ["c"]), helper.make_node("Not", ["c"], ["d"])],
                   [("a", TensorProto.BOOL, [3]), ("b", TensorProto.BOOL, [3])], [("d", TensorProto.BOOL, [3])])
    sess = kiln.InferenceSession(save(m, tmp_path / "m.onnx"))
    d = sess.run(None, {"a": np.array([True, True, False]), "b": np.array([True, False, False])})[0]
    assert d.dtype == np.bool_ and d.tolist() == [False, True, True]


def test_strings(tmp_path):
    m = make_model([helper.make_node("Identity", ["s"], ["t"]),
                    helper.make_node("Concat", ["s", "s"], ["u"], axis=0)],
                   [("s", TensorProto.STRING, ["n"])], [("t", TensorProto.STRING, ["n"]), ("u", TensorProto.STRING, [None])])
    sess = kiln.InferenceSession(save(m, tmp_path / "m.onnx"))
    assert sess.get_inputs()[0].type == "tensor(string)"
    words = ["kiln", "été", ""]
    for feed in (np.array(words, dtype=object), np.array(words), words):
        t, u = sess.run(None, {"s": feed})
        assert t.dtype == object and t.tolist() == words
        assert u.tolist() == words + words
    # bytes elements convert too (onnxruntime accepts numpy bytes arrays)
    assert sess.run(["t"], {"s": np.array([b"ab", b"c"])})[0].tolist() == ["ab", "c"]
    with pytest.raises(RuntimeError, match="string"):
        sess.run(None, {"s": np.array([1.5, "x"], dtype=object)})


def test_float16_matmul(tmp_path):
    m = make_model([helper.make_node("MatMul", ["a", "b"], ["c"])],
                   [("a", TensorProto.FLOAT16, [2, 3]), ("b", TensorProto.FLOAT16, [3, 2])],
                   [("c", TensorProto.FLOAT16, [2, 2])])
    sess = kiln.InferenceSession(save(m, tmp_path / "m.onnx"))
    a = np.arange(6, dtype=np.float16).reshape(2, 3) / 4
    b = np.arange(6, dtype=np.float16).reshape(3, 2) / 2
    c = sess.run(None, {"a": a, "b": b})[0]
    assert c.dtype == np.float16
    np.testing.assert_allclose(c.astype(np.float32), (a.astype(np.float32) @ b.astype(np.float32)), rtol=1e-2)


def test_non_contiguous_and_big_endian_feeds(tmp_path):
    m = make_model([helper.make_node("Neg", ["x"], ["y"])], [("x", F, [3, 2])], [("y", F, [3, 2])])
    sess = kiln.InferenceSession(save(m, tmp_path / "m.onnx"))
    base = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(sess.run(None, {"x": base.T})[0], -base.T)  # Fortran order: copied
    strided = np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2]
    np.testing.assert_array_equal(sess.run(None, {"x": strided})[0], -strided)
    big = base.T.astype(">f4")
    np.testing.assert_array_equal(sess.run(None, {"x": big})[0], -base.T)


def test_inputs_untouched_and_outputs_owned(tmp_path):
    # Relu then Add: an engine writing in place must not write into the caller's array.
    m = make_model([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Add", ["r", "x"], ["y"]),
                    helper.make_node("Identity", ["x"], ["xi"]), helper.make_node("Reshape", ["x", "shape"], ["flat"])],
                   [("x", F, [2, 3])], [("y", F, [2, 3]), ("xi", F, [2, 3]), ("flat", F, [6])],
                   [helper.make_tensor("shape", TensorProto.INT64, [1], [6])])
    sess = kiln.InferenceSession(save(m, tmp_path / "m.onnx"))
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    keep = x.copy()
    y, xi, flat = sess.run(None, {"x": x})
    np.testing.assert_array_equal(x, keep)
    for out in (y, xi, flat):
        assert not np.shares_memory(out, x)
        assert out.flags.writeable
    xi[0, 0] = 100
    flat[1] = 100
    np.testing.assert_array_equal(x, keep)


def test_outputs_not_aliasing_constants(tmp_path):
    # An output that is a constant of the model: writing into it must not change the next run.
    m = make_model([helper.make_node("Identity", ["c"], ["y"]), helper.make_node("Identity", ["x"], ["z"])],
                   [("x", F, [1])], [("y", F, [2]), ("z", F, [1])], [helper.make_tensor("c", F, [2], [1.0, 2.0])])
    sess = kiln.InferenceSession(save(m, tmp_path / "m.onnx"))
    y = sess.run(None, {"x": np.zeros(1, np.float32)})[0]
    y[:] = -7
    assert sess.run(None, {"x": np.zeros(1, np.float32)})[0].tolist() == [1.0, 2.0]


def test_outputs_zero_copy_and_alive_after_session(tmp_path):
    m = make_model([helper.make_node("Neg", ["x"], ["y"])], [("x", F, [1000])], [("y", F, [1000])])
    sess = kiln.InferenceSession(save(m, tmp_path / "m.onnx"))
    y = sess.run(None, {"x": np.ones(1000, np.float32)})[0]
    del sess
    assert y.sum() == -1000  # the array owns the engine's tensor, not a view of freed memory
    assert y.base is not None  # handed over without a copy: numpy holds kiln's buffer


def test_feed_released_from_another_thread(tmp_path):
    # Feeds are held while the engine runs without the GIL; dropping them must not need the caller.
    m = make_model([helper.make_node("Neg", ["x"], ["y"])], [("x", F, [8])], [("y", F, [8])])
    sess = kiln.InferenceSession(save(m, tmp_path / "m.onnx"))
    result = []
    t = threading.Thread(target=lambda: result.append(sess.run(None, {"x": np.arange(8, dtype=np.float32)})[0]))
    t.start()
    t.join()
    assert result[0].tolist() == [-float(i) for i in range(8)]


def test_empty_tensors(tmp_path):
    m = make_model([helper.make_node("Neg", ["x"], ["y"])], [("x", F, ["n", 3])], [("y", F, ["n", 3])])
    sess = kiln.InferenceSession(save(m, tmp_path / "m.onnx"))
    y = sess.run(None, {"x": np.zeros((0, 3), np.float32)})[0]
    assert y.shape == (0, 3) and y.dtype == np.float32
    assert sess.run(None, {"x": -np.ones((2, 3), np.float32)})[0].tolist() == [[1.0] * 3] * 2
