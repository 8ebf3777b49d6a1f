"""onnxruntime.quantization's API over kiln's quantizer (src/quant, `kiln quantize`, docs/quantization.md).

    from kiln.quantization import quantize_dynamic, QuantType
    quantize_dynamic("model.onnx", "model.int8.onnx", weight_type=QuantType.QInt8)

The models written are standard ONNX in onnxruntime's forms (MatMulInteger for dynamic, QDQ or
QOperator for static). Each call returns kiln's quantization report (the JSON `kiln quantize
--report` writes: per node the precision and why, the error against the float model, sizes and
latencies); onnxruntime's return None."""
from kiln.quantization.calibrate import CalibrationDataReader, CalibrationMethod
from kiln.quantization.quant_utils import QuantFormat, QuantType
from kiln.quantization.quantize import quantize, quantize_dynamic, quantize_static

__all__ = ["CalibrationDataReader", "CalibrationMethod", "QuantFormat", "QuantType", "quantize",
           "quantize_dynamic", "quantize_static"]
