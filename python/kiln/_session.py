"""kiln.InferenceSession and its options, with onnxruntime's names, signatures and behaviour."""
import enum
import os
import warnings

from kiln import _kiln
from kiln.capi import onnxruntime_pybind11_state as _state


class GraphOptimizationLevel(enum.IntEnum):
    """onnxruntime's levels, mapped to kiln's -O levels: DISABLE_ALL -O0, BASIC -O1,
    EXTENDED and ALL -O2 (kiln's default; the session config entry "kiln.optimize_level" picks 3)."""
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    """Accepted; kiln runs the nodes of a model in order, parallel inside each node."""
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class ExecutionOrder(enum.IntEnum):
    DEFAULT = 0
    PRIORITY_BASED = 1
    MEMORY_EFFICIENT = 2


_KILN_LEVEL = {0: 0, 1: 1, 2: 2, 99: 2}


class SessionOptions:
    """onnxruntime.SessionOptions: what kiln uses, and the rest accepted so scripts run unchanged."""

    def __init__(self):
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self.execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self.execution_order = ExecutionOrder.DEFAULT
        self.enable_profiling = False
        self.profile_file_prefix = "onnxruntime_profile_"
        self.optimized_model_filepath = ""
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.enable_cpu_mem_arena = True
        self.enable_mem_pattern = True
        self.enable_mem_reuse = True
        self.use_deterministic_compute = False
        self._config = {}
        self._dim_overrides = {}

    def add_session_config_entry(self, key, value):
        self._config[str(key)] = str(value)

    def get_session_config_entry(self, key):
        if key not in self._config:
            raise _state.Fail(
                f"[ONNXRuntimeError] : 1 : FAIL : SessionOptions does not have configuration with key: {key}")
        return self._config[key]

    def add_free_dimension_override_by_name(self, dim_name, dim_value):
        if int(dim_value) < 0:
            raise _state.InvalidArgument(
                f"[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : dim override '{dim_name}': {dim_value} < 0")
        self._dim_overrides[str(dim_name)] = int(dim_value)

    def add_free_dimension_override_by_denotation(self, dim_denotation, dim_value):
        raise _state.NotImplemented(
            "[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : kiln overrides free dims by name only "
            "(add_free_dimension_override_by_name)")

    def register_custom_ops_library(self, library_path):
        raise _state.NotImplemented(
            "[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : kiln does not load custom op libraries")

    def _config_for_kiln(self):
        cfg = _kiln.SessionConfig()
        level = int(self.graph_optimization_level)
        if level not in _KILN_LEVEL:
            raise _state.InvalidArgument(
                f"[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : graph_optimization_level {level}")
        cfg.level = _KILN_LEVEL[level]
        if "kiln.optimize_level" in self._config:
            cfg.level = int(self._config["kiln.optimize_level"])
        if int(self.intra_op_num_threads) < 0:
            raise _state.InvalidArgument(
                "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : intra_op_num_threads must be >= 0")
        cfg.threads = int(self.intra_op_num_threads)
        cfg.profiling = bool(self.enable_profiling)
        cfg.profile_prefix = str(self.profile_file_prefix)
        cfg.optimized_path = os.fspath(self.optimized_model_filepath or "")
        cfg.dim_overrides = list(self._dim_overrides.items())
        cfg.allow_newer_opset = self._config.get("kiln.allow_newer_opset", "0") == "1"
        return cfg


class RunOptions:
    """onnxruntime.RunOptions: terminate stops a run before it starts; tags and levels accepted."""

    def __init__(self):
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.run_tag = ""
        self.terminate = False
        self.only_execute_path_to_fetches = False
        self._config = {}

    def add_run_config_entry(self, key, value):
        self._config[str(key)] = str(value)

    def get_run_config_entry(self, key):
        if key not in self._config:
            raise _state.Fail(f"[ONNXRuntimeError] : 1 : FAIL : RunOptions does not have configuration with key: {key}")
        return self._config[key]


class NodeArg:
    """A graph input or output: name, shape (ints; strings for symbolic dims; None for unknown ones)
    and type ('tensor(float)')."""
    __slots__ = ("name", "shape", "type")

    def __init__(self, name, shape, type):  # noqa: A002 (onnxruntime's name)
        self.name, self.shape, self.type = name, shape, type

    def __repr__(self):
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"

    __str__ = __repr__


class ModelMetadata:
    def __init__(self, d):
        self.producer_name = d["producer_name"]
        self.graph_name = d["graph_name"]
        self.domain = d["domain"]
        self.description = d["description"]
        self.graph_description = d["graph_description"]
        self.version = d["version"]
        self.custom_metadata_map = d["custom_metadata_map"]


def _check_providers(providers):
    if providers is None:
        return
    for p in providers:
        name = p[0] if isinstance(p, (tuple, list)) else p
        if name not in ("CPUExecutionProvider", "KilnExecutionProvider"):
            warnings.warn(f"Specified provider '{name}' is not in available provider names."
                          "Available providers: 'CPUExecutionProvider'")


class InferenceSession:
    """onnxruntime.InferenceSession over kiln's fast engine (what `kiln run` uses).

    run() may be called from several threads at once; kiln's engine runs one model call at a time
    per session (its kernels use every core), so concurrent calls queue (the GIL is released)."""

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, **kwargs):
        if not isinstance(path_or_bytes, (str, bytes, bytearray, os.PathLike)):
            raise TypeError(f"Unable to load from type '{type(path_or_bytes)}'")
        _check_providers(providers)
        self._model_path = None if isinstance(path_or_bytes, (bytes, bytearray)) else os.fspath(path_or_bytes)
        self._sess_options = sess_options if sess_options is not None else SessionOptions()
        self._sess = _kiln.Session(path_or_bytes, self._sess_options._config_for_kiln())
        self._inputs = [NodeArg(*a) for a in self._sess.inputs()]
        self._outputs = [NodeArg(*a) for a in self._sess.outputs()]
        self._initializers = [NodeArg(*a) for a in self._sess.overridable_initializers()]
        self._run = self._sess.run

    # What the model is.
    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_overridable_initializers(self):
        return list(self._initializers)

    def get_modelmeta(self):
        return ModelMetadata(self._sess.metadata())

    def get_providers(self):
        return ["CPUExecutionProvider"]

    def get_provider_options(self):
        return {"CPUExecutionProvider": {}}

    def get_session_options(self):
        return self._sess_options

    def set_providers(self, providers=None, provider_options=None):
        _check_providers(providers)

    def disable_fallback(self):
        pass

    def enable_fallback(self):
        pass

    # Running it.
    def run(self, output_names, input_feed, run_options=None):
        """Outputs named in output_names (None or []: all), as numpy arrays, for input_feed
        (a dict of input name -> numpy array or anything numpy.asarray takes)."""
        if run_options is not None and run_options.terminate:
            raise _state.Fail("[ONNXRuntimeError] : 1 : FAIL : Exiting due to terminate flag being set to true.")
        return self._run(output_names or None, input_feed)

    def run_with_ort_values(self, output_names, input_dict_ort_values, run_options=None):
        from kiln._values import OrtValue
        feed = {k: (v._array if isinstance(v, OrtValue) else v) for k, v in input_dict_ort_values.items()}
        return [OrtValue(a) for a in self.run(output_names, feed, run_options)]

    def io_binding(self):
        from kiln._values import IOBinding
        return IOBinding(self)

    def run_with_iobinding(self, iobinding, run_options=None):
        iobinding._run(run_options)

    # Profiling.
    def end_profiling(self):
        """The path of the Chrome trace (onnxruntime's format) of the runs so far; profiling stops."""
        return self._sess.end_profiling()

    def get_profiling_start_time_ns(self):
        return self._sess.profiling_start_ns()
