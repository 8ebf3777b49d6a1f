"""kiln.quantization with onnxruntime's names: dynamic and static int8, written as standard ONNX."""
import numpy as np
import onnx
import pytest

import kiln
from kiln.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                               quantize_dynamic, quantize_static)
from conftest import F, make_model, mlp_model, save
from onnx import helper, numpy_helper


def matmul_model(tmp_path):
    """x[2,64] -> MatMul -> Relu -> MatMul -> y[2,16] (QOperator has QLinearMatMul, no Gemm)."""
    rng = np.random.default_rng(5)
    w1 = rng.standard_normal((64, 128)).astype(np.float32)
    w2 = rng.standard_normal((128, 16)).astype(np.float32)
    m = make_model([helper.make_node("MatMul", ["x", "w1"], ["h"], name="mm1"), helper.make_node("Relu", ["h"], ["r"], name="relu"),
                    helper.make_node("MatMul", ["r", "w2"], ["y"], name="mm2")],
                   [("x", F, [2, 64])], [("y", F, [2, 16])],
                   [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")])
    return save(m, tmp_path / "mm.onnx"), lambda x: np.maximum(x @ w1, 0) @ w2


@pytest.fixture
def wide_mlp(tmp_path):
    m, ref = mlp_model(in_dim=64, hidden=128, out_dim=16, batch=2)
    return save(m, tmp_path / "mlp.onnx"), ref


def test_quantize_dynamic(wide_mlp, tmp_path):
    src, ref = wide_mlp
    out = tmp_path / "mlp.int8.onnx"
    report = quantize_dynamic(src, out, weight_type=QuantType.QInt8, per_channel=True,
                              extra_options={"KilnLatencyRuns": 0})
    assert report["exit_code"] == 0
    ops = {n.op_type for n in onnx.load(str(out)).graph.node}
    assert "MatMulInteger" in ops and "DynamicQuantizeLinear" in ops
    x = np.random.default_rng(0).standard_normal((2, 64)).astype(np.float32)
    y = kiln.InferenceSession(str(out)).run(None, {"x": x})[0]
    want = ref(x)
    assert y.shape == want.shape
    assert np.abs(y - want).max() < 0.05 * np.abs(want).max()
    assert not np.allclose(y, want, rtol=0, atol=0)  # really int8: not bit-identical to float


class Reader(CalibrationDataReader):
    def __init__(self, n):
        rng = np.random.default_rng(1)
        self.sets = [{"x": rng.standard_normal((2, 64)).astype(np.float32)} for _ in range(n)]
        self.calls = 0

    def get_next(self):
        self.calls += 1
        return self.sets.pop() if self.sets else None


@pytest.mark.parametrize("fmt,op", [(QuantFormat.QDQ, "QuantizeLinear"), (QuantFormat.QOperator, "QLinearMatMul")])
def test_quantize_static(wide_mlp, tmp_path, fmt, op):
    src, ref = wide_mlp if fmt == QuantFormat.QDQ else matmul_model(tmp_path)
    out = tmp_path / "mlp.static.onnx"
    reader = Reader(4)
    report = quantize_static(src, out, reader, quant_format=fmt, activation_type=QuantType.QUInt8,
                             weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax,
                             op_types_to_quantize=["Gemm", "MatMul"], extra_options={"KilnLatencyRuns": 0})
    assert reader.calls == 5 and report["exit_code"] == 0
    model = onnx.load(str(out))
    onnx.checker.check_model(model)
    ops = [n.op_type for n in model.graph.node]
    assert op in ops and "DequantizeLinear" in ops
    x = np.random.default_rng(1).standard_normal((2, 64)).astype(np.float32)
    y = kiln.InferenceSession(str(out)).run(None, {"x": x})[0]
    assert np.abs(y - ref(x)).max() < 0.1 * np.abs(ref(x)).max()


def test_quantize_errors(wide_mlp, tmp_path):
    with pytest.raises(ValueError, match="no input sets"):
        quantize_static(wide_mlp[0], tmp_path / "o.onnx", Reader(0))
    with pytest.raises(ValueError, match="QInt16"):
        quantize_dynamic(wide_mlp[0], tmp_path / "o.onnx", weight_type=QuantType.QInt16)


def test_user_workflow_torch(tmp_path):
    """A user's script: export a torch model, run it, quantize it, run that."""
    torch = pytest.importorskip("torch")
    import kiln as ort
    from kiln.quantization import quantize_dynamic, QuantType

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10)).eval()
    x = torch.randn(3, 32)
    path = str(tmp_path / "net.onnx")
    torch.onnx.export(net, x, path, input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    assert sess.get_inputs()[0].shape == ["batch", 32]
    (logits,) = sess.run(None, {"input": x.numpy()})
    with torch.no_grad():
        want = net(x).numpy()
    np.testing.assert_allclose(logits, want, rtol=1e-4, atol=1e-5)
    qpath = str(tmp_path / "net.int8.onnx")
    quantize_dynamic(path, qpath, weight_type=QuantType.QInt8)
    (qlogits,) = ort.InferenceSession(qpath).run(None, {"input": x.numpy()})
    assert qlogits.shape == (3, 10)
    assert np.abs(qlogits - want).max() < 0.05 * np.abs(want).max() + 1e-3
    assert (qlogits.argmax(1) == want.argmax(1)).mean() >= 2 / 3
