"""kiln: an ONNX optimizing compiler and CPU runtime, as a drop-in for onnxruntime.

    import kiln as ort
    sess = ort.InferenceSession("model.onnx")
    outputs = sess.run(None, {"x": x})

See docs/python.md: what is the same as onnxruntime, what kiln adds, what it does not have."""
from kiln import _kiln
from kiln._session import (
    ExecutionMode,
    ExecutionOrder,
    GraphOptimizationLevel,
    InferenceSession,
    ModelMetadata,
    NodeArg,
    RunOptions,
    SessionOptions,
)
from kiln._values import IOBinding, OrtValue
from kiln.tools import inspect, optimize, profile
from kiln import quantization

__version__ = _kiln.__version__

# kiln's engine answers to onnxruntime's CPU provider name and to its own.
_PROVIDERS = ["CPUExecutionProvider"]
_ALIASES = {"CPUExecutionProvider", "KilnExecutionProvider"}


def get_available_providers():
    """['CPUExecutionProvider']: kiln's engine, under the name onnxruntime gives its CPU provider."""
    return list(_PROVIDERS)


def get_all_providers():
    return list(_PROVIDERS)


def get_device():
    return "CPU"


def get_version_string():
    return __version__


__all__ = [
    "ExecutionMode", "ExecutionOrder", "GraphOptimizationLevel", "InferenceSession", "IOBinding",
    "ModelMetadata", "NodeArg", "OrtValue", "RunOptions", "SessionOptions", "get_all_providers",
    "get_available_providers", "get_device", "get_version_string", "inspect", "optimize", "profile",
    "__version__",
]
