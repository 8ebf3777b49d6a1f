"""Against ONNX Runtime itself (onnxruntime-node, tools/ort): the optimized_model_filepath output
loads and runs there, and kiln's session gives ORT's outputs. Skipped where ORT cannot be had
(tools/ort/install.sh exits 77: no node/npm or no registry)."""
import os
import subprocess

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import kiln
from conftest import mlp_model, save

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def ort_run(model, feeds, tmp):
    """ONNX Runtime's outputs for feeds (a list of arrays in input order)."""
    r = subprocess.run([os.path.join(ROOT, "tools", "ort", "install.sh")], capture_output=True, text=True)
    if r.returncode == 77:
        pytest.skip("ONNX Runtime (onnxruntime-node) cannot be installed here")
    assert r.returncode == 0, r.stderr
    ins, outs = os.path.join(tmp, "in"), os.path.join(tmp, "out")
    os.makedirs(ins, exist_ok=True)
    for k, a in enumerate(feeds):
        with open(os.path.join(ins, f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a).SerializeToString())
    r = subprocess.run(["node", os.path.join(ROOT, "tools", "ort", "run.js"), model, "--inputs", ins,
                        "--outputs", outs, "--threads", "1"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    result = []
    for k in range(len(os.listdir(outs))):
        t = onnx.TensorProto()
        with open(os.path.join(outs, f"output_{k}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        result.append(numpy_helper.to_array(t))
    return result


def test_optimized_model_runs_in_onnxruntime(tmp_path):
    m, ref = mlp_model(in_dim=32, hidden=64, out_dim=8)
    src = save(m, tmp_path / "m.onnx")
    opt = str(tmp_path / "m.opt.onnx")
    so = kiln.SessionOptions()
    so.optimized_model_filepath = opt
    so.add_free_dimension_override_by_name("batch", 3)
    sess = kiln.InferenceSession(src, so)
    x = np.random.default_rng(4).standard_normal((3, 32)).astype(np.float32)
    (mine,) = sess.run(None, {"x": x})
    (theirs,) = ort_run(opt, [x], str(tmp_path))
    np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(theirs, ref(x), rtol=1e-4, atol=1e-4)
    # and the original through ORT: the same as kiln's session
    (orig,) = ort_run(src, [x], str(tmp_path / "orig"))
    np.testing.assert_allclose(mine, orig, rtol=1e-4, atol=1e-4)
