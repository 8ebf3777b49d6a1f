"""quantize_dynamic / quantize_static / quantize: onnxruntime's signatures, mapped onto the options
of `kiln quantize` (run in process, src/cli/quantize_command.cc over src/quant)."""
import json
import os
import tempfile

import numpy as np

from kiln import _kiln
from kiln.quantization.calibrate import CalibrationMethod
from kiln.quantization.quant_utils import QuantFormat, QuantType

_TYPES = {QuantType.QInt8: "int8", QuantType.QUInt8: "uint8"}
_METHODS = {CalibrationMethod.MinMax: "minmax", CalibrationMethod.Entropy: "entropy",
            CalibrationMethod.Percentile: "percentile"}


def _type_name(t, what):
    t = QuantType(t)
    if t not in _TYPES:
        raise ValueError(f"{what} {t.name}: kiln quantizes to QInt8 and QUInt8")
    return _TYPES[t]


def _node_names(model_input):
    import onnx
    m = onnx.load(os.fspath(model_input), load_external_data=False)
    return [n.name for n in m.graph.node if n.name]


def _common_args(model_input, op_types_to_quantize, nodes_to_quantize, nodes_to_exclude, extra_options):
    args = []
    if op_types_to_quantize:
        args += ["--include-ops", ",".join(op_types_to_quantize)]
    exclude = list(nodes_to_exclude or [])
    if nodes_to_quantize:  # onnxruntime's allow-list, as kiln's deny-list
        keep = set(nodes_to_quantize)
        exclude += [n for n in _node_names(model_input) if n not in keep]
    if exclude:
        args += ["--exclude-nodes", ",".join(exclude)]
    extra = dict(extra_options or {})
    if "CalibPercentile" in extra:
        args += ["--percentile", str(extra["CalibPercentile"])]
    if "KilnThreads" in extra:
        args += ["--threads", str(int(extra["KilnThreads"]))]
    if "KilnLatencyRuns" in extra:
        args += ["--latency-runs", str(int(extra["KilnLatencyRuns"]))]
    return args


def _run(args):
    """Runs kiln quantize with a JSON report; returns the report with 'exit_code' and 'text'."""
    with tempfile.TemporaryDirectory(prefix="kiln-quantize-") as tmp:
        report = os.path.join(tmp, "report.json")
        rc, out, _ = _kiln.run_cli([str(a) for a in args] + ["--report", report, "--no-progress"])
        with open(report) as f:
            result = json.load(f)
    result["exit_code"] = rc
    result["text"] = out.decode("utf-8", "replace")
    return result


def quantize_dynamic(model_input, model_output, op_types_to_quantize=None, per_channel=False,
                     reduce_range=False, weight_type=QuantType.QInt8, nodes_to_quantize=None,
                     nodes_to_exclude=None, use_external_data_format=False, extra_options=None):
    """Int8 weights for MatMul and Gemm (per output column with per_channel), activations
    quantized at run time: onnxruntime's MatMulInteger form."""
    args = ["quantize", os.fspath(model_input), "-o", os.fspath(model_output), "--mode", "dynamic",
            "--weight-type", _type_name(weight_type, "weight_type"),
            "--per-channel" if per_channel else "--per-tensor"]
    args += _common_args(model_input, op_types_to_quantize, nodes_to_quantize, nodes_to_exclude, extra_options)
    return _run(args)


def _write_calibration_sets(reader, model_input, folder):
    import onnx
    from onnx import numpy_helper
    m = onnx.load(os.fspath(model_input), load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    names = [i.name for i in m.graph.input if i.name not in inits]
    count = 0
    while True:
        feed = reader.get_next()
        if feed is None:
            break
        d = os.path.join(folder, f"test_data_set_{count:05d}")
        os.makedirs(d)
        for k, name in enumerate(names):
            if name not in feed:
                raise ValueError(f"calibration set {count}: no value for input '{name}'")
            t = numpy_helper.from_array(np.asarray(feed[name]), name)
            with open(os.path.join(d, f"input_{k}.pb"), "wb") as f:
                f.write(t.SerializeToString())
        count += 1
    if count == 0:
        raise ValueError("calibration_data_reader gave no input sets (get_next returned None at once)")
    return count


def quantize_static(model_input, model_output, calibration_data_reader, quant_format=QuantFormat.QDQ,
                    op_types_to_quantize=None, per_channel=False, reduce_range=False,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8, nodes_to_quantize=None,
                    nodes_to_exclude=None, use_external_data_format=False,
                    calibrate_method=CalibrationMethod.MinMax, extra_options=None):
    """Activation ranges calibrated on the reader's input sets, then QDQ (or QOperator) int8."""
    method = CalibrationMethod(calibrate_method)
    if method not in _METHODS:
        raise ValueError(f"calibrate_method {method.name}: kiln calibrates with MinMax, Entropy or Percentile")
    with tempfile.TemporaryDirectory(prefix="kiln-calibrate-") as sets:
        _write_calibration_sets(calibration_data_reader, model_input, sets)
        args = ["quantize", os.fspath(model_input), "-o", os.fspath(model_output), "--mode", "static",
                "--format", "qdq" if QuantFormat(quant_format) == QuantFormat.QDQ else "qoperator",
                "--calibrate", sets, "--method", _METHODS[method],
                "--activation-type", _type_name(activation_type, "activation_type"),
                "--weight-type", _type_name(weight_type, "weight_type"),
                "--per-channel" if per_channel else "--per-tensor"]
        args += _common_args(model_input, op_types_to_quantize, nodes_to_quantize, nodes_to_exclude, extra_options)
        return _run(args)


def quantize(model_input, model_output, quant_config):
    """onnxruntime's quantize(model_input, model_output, quant_config) for its StaticQuantConfig /
    DynamicQuantConfig-like objects: the attributes are read by onnxruntime's names."""
    c = quant_config
    common = dict(op_types_to_quantize=getattr(c, "op_types_to_quantize", None),
                  per_channel=getattr(c, "per_channel", False),
                  weight_type=getattr(c, "weight_type", QuantType.QInt8),
                  nodes_to_quantize=getattr(c, "nodes_to_quantize", None),
                  nodes_to_exclude=getattr(c, "nodes_to_exclude", None),
                  extra_options=getattr(c, "extra_options", None))
    if hasattr(c, "calibration_data_reader"):
        return quantize_static(model_input, model_output, c.calibration_data_reader,
                               quant_format=getattr(c, "quant_format", QuantFormat.QDQ),
                               activation_type=getattr(c, "activation_type", QuantType.QInt8),
                               calibrate_method=getattr(c, "calibrate_method", CalibrationMethod.MinMax),
                               **common)
    return quantize_dynamic(model_input, model_output, **common)
