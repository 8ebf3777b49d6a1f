"""kiln.inspect / optimize / profile return what the command line prints, as dicts."""
import numpy as np
import onnx

import kiln
from conftest import mlp_model, save


def test_inspect(mlp):
    info = kiln.inspect(mlp[0])
    assert info["inputs"][0]["name"] == "x" and info["inputs"][0]["shape"] == ["batch", 8]
    assert info["outputs"][0]["name"] == "y"
    assert info["ops"] == {"Gemm": 2, "Relu": 1}
    assert info["parameters"] == 8 * 16 + 16 + 16 * 4 + 4
    assert info["producer"].startswith("kiln-tests")


def test_optimize_with_verify(mlp, tmp_path):
    out = tmp_path / "o.onnx"
    r = kiln.optimize(mlp[0], out, level=2, verify=2)
    assert r["exit_code"] == 0
    assert out.exists() and onnx.load(str(out)).graph.node
    assert r["verify"]["ok"] is True or r["verify"].get("report", {}).get("ok") is True
    sess = kiln.InferenceSession(str(out))
    x = np.ones((2, 8), np.float32)
    np.testing.assert_allclose(sess.run(None, {"x": x})[0], mlp[1](x), rtol=1e-4, atol=1e-4)


def test_optimize_html_report(mlp, tmp_path):
    r = kiln.optimize(mlp[0], tmp_path / "o.onnx", report=tmp_path / "r.html")
    assert r["exit_code"] == 0 and (tmp_path / "r.html").read_text().lstrip().lower().startswith("<!doctype html")


def test_profile(mlp, tmp_path):
    r = kiln.profile(mlp[0], runs=2, warmup=0, threads=1, dims={"batch": 2}, trace=tmp_path / "t.json")
    assert isinstance(r, dict) and r
    assert (tmp_path / "t.json").exists()


def test_tool_errors_raise(tmp_path):
    import pytest
    with pytest.raises(RuntimeError, match="absent"):
        kiln.inspect(tmp_path / "absent.onnx")
