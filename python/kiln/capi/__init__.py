"""onnxruntime.capi's place in kiln: code that imports its exceptions from
onnxruntime.capi.onnxruntime_pybind11_state finds them under kiln.capi.onnxruntime_pybind11_state."""
