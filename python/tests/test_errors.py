"""The error paths, with onnxruntime's exception classes and messages naming what and where."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import kiln
from kiln.capi.onnxruntime_pybind11_state import (Fail, InvalidArgument, InvalidGraph, InvalidProtobuf,
                                                   NoSuchFile)
from conftest import F, make_model, save


@pytest.fixture
def sess(tmp_path):
    m = make_model([helper.make_node("Add", ["x", "z"], ["y"])], [("x", F, ["n", 4]), ("z", F, [1, 4])],
                   [("y", F, ["n", 4])])
    return kiln.InferenceSession(save(m, tmp_path / "add.onnx"))


def ok_feed():
    return {"x": np.ones((2, 4), np.float32), "z": np.ones((1, 4), np.float32)}


def test_wrong_dtype_raises_never_casts(sess):
    feed = ok_feed()
    feed["x"] = feed["x"].astype(np.float64)
    with pytest.raises(InvalidArgument) as e:
        sess.run(None, feed)
    msg = str(e.value)
    assert "INVALID_ARGUMENT" in msg and "'x'" in msg
    assert "tensor(double)" in msg and "tensor(float)" in msg
    feed["x"] = np.ones((2, 4), np.int32)
    with pytest.raises(InvalidArgument, match=r"tensor\(int32\).*tensor\(float\)"):
        sess.run(None, feed)


def test_wrong_rank(sess):
    feed = ok_feed()
    feed["x"] = np.ones((2, 4, 1), np.float32)
    with pytest.raises(InvalidArgument, match="Invalid rank for input: x Got: 3 Expected: 2"):
        sess.run(None, feed)


def test_wrong_fixed_dim(sess):
    feed = ok_feed()
    feed["z"] = np.ones((1, 5), np.float32)
    with pytest.raises(InvalidArgument, match=r"(?s)invalid dimensions for input: z.*index: 1 Got: 5 Expected: 4"):
        sess.run(None, feed)


def test_missing_input(sess):
    with pytest.raises(ValueError, match=r"Required inputs \(\['z'\]\) are missing from input feed \(\['x'\]\)"):
        sess.run(None, {"x": np.ones((2, 4), np.float32)})


def test_unknown_input_name(sess):
    feed = ok_feed()
    feed["nope"] = np.ones(1, np.float32)
    with pytest.raises(InvalidArgument, match="Invalid input name: nope"):
        sess.run(None, feed)


def test_unknown_output_name(sess):
    with pytest.raises(InvalidArgument, match="Invalid output name: nope"):
        sess.run(["y", "nope"], ok_feed())


def test_missing_file(tmp_path):
    path = tmp_path / "absent.onnx"
    with pytest.raises(NoSuchFile, match="absent.onnx.*doesn't exist"):
        kiln.InferenceSession(str(path))


def test_corrupt_file(tmp_path):
    path = tmp_path / "corrupt.onnx"
    path.write_bytes(b"\x08\x07this is not a protobuf\xff\xff\xff")
    with pytest.raises(InvalidProtobuf, match="corrupt.onnx"):
        kiln.InferenceSession(str(path))
    with pytest.raises(InvalidProtobuf, match="bytes"):
        kiln.InferenceSession(b"\xff\xff\xff\xff garbage")


def test_invalid_graph(tmp_path):
    # A node reading a value nothing defines: loads as protobuf, fails kiln's checks.
    m = make_model([helper.make_node("Relu", ["ghost"], ["y"])], [("x", F, [2])], [("y", F, [2])])
    with pytest.raises((InvalidGraph, InvalidProtobuf), match="ghost"):
        kiln.InferenceSession(m.SerializeToString())


def test_wrong_constructor_type():
    with pytest.raises(TypeError):
        kiln.InferenceSession(42)


def test_terminate_flag(sess):
    ro = kiln.RunOptions()
    ro.terminate = True
    with pytest.raises(Fail, match="terminate"):
        sess.run(None, ok_feed(), ro)
    ro.terminate = False
    assert sess.run(None, ok_feed(), ro)[0].shape == (2, 4)


def test_runtime_error_keeps_session_usable(tmp_path):
    # Gather with an index out of range fails at run time, not at load.
    m = make_model([helper.make_node("Gather", ["x", "i"], ["y"])], [("x", F, [3]), ("i", TensorProto.INT64, [1])],
                   [("y", F, [1])])
    sess = kiln.InferenceSession(save(m, tmp_path / "g.onnx"))
    x = np.arange(3, dtype=np.float32)
    with pytest.raises(RuntimeError, match="Gather|index|range"):
        sess.run(None, {"x": x, "i": np.array([7])})
    assert sess.run(None, {"x": x, "i": np.array([2])})[0].tolist() == [2.0]


def test_session_config_entry_missing():
    so = kiln.SessionOptions()
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    assert so.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    with pytest.raises(Fail, match="absent.key"):
        so.get_session_config_entry("absent.key")
