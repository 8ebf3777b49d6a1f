"""The exception classes of onnxruntime's Python binding, under the same names and module path.

Like onnxruntime's, each derives from RuntimeError, and the message starts with
"[ONNXRuntimeError] : <code> : <NAME> : " (2 : INVALID_ARGUMENT, 3 : NO_SUCHFILE ...)."""


class Fail(RuntimeError):
    """1: FAIL (kiln: an internal error, a failure without a more precise class)."""


class InvalidArgument(RuntimeError):
    """2: INVALID_ARGUMENT: a feed of the wrong type, rank or dims; an unknown input or output name."""


class NoSuchFile(RuntimeError):
    """3: NO_SUCHFILE: the model file does not exist or cannot be read."""


class NoModel(RuntimeError):
    """4: NO_MODEL."""


class EngineError(RuntimeError):
    """5: ENGINE_ERROR."""


class RuntimeException(RuntimeError):
    """6: RUNTIME_EXCEPTION: a failure while the model runs (index out of range, allocation cap)."""


class InvalidProtobuf(RuntimeError):
    """7: INVALID_PROTOBUF: the bytes are not a well-formed ONNX model."""


class ModelLoaded(RuntimeError):
    """8: MODEL_LOADED."""


class NotImplemented(RuntimeError):  # noqa: A001 (onnxruntime's name)
    """9: NOT_IMPLEMENTED: valid ONNX that kiln does not run (yet)."""


class InvalidGraph(RuntimeError):
    """10: INVALID_GRAPH: the model fails a check (types, schemas, opsets)."""


class EPFail(RuntimeError):
    """11: EP_FAIL."""
