"""onnxruntime.OrtValue and IOBinding, CPU only: an OrtValue holds a numpy array (no copy)."""
import numpy as np

from kiln.capi import onnxruntime_pybind11_state as _state

_TYPE_NAMES = {
    np.dtype(np.float32): "float", np.dtype(np.float64): "double", np.dtype(np.float16): "float16",
    np.dtype(np.int8): "int8", np.dtype(np.int16): "int16", np.dtype(np.int32): "int32",
    np.dtype(np.int64): "int64", np.dtype(np.uint8): "uint8", np.dtype(np.uint16): "uint16",
    np.dtype(np.uint32): "uint32", np.dtype(np.uint64): "uint64", np.dtype(np.bool_): "bool",
}


def _cpu_only(device_type):
    if str(device_type).lower() != "cpu":
        raise _state.InvalidArgument(
            f"[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : kiln runs on the CPU; device '{device_type}'")


class OrtValue:
    """A value fed to or returned by run_with_ort_values: a numpy array on the CPU, shared."""

    def __init__(self, array):
        self._array = array

    @staticmethod
    def ortvalue_from_numpy(numpy_obj, device_type="cpu", device_id=0):
        _cpu_only(device_type)
        return OrtValue(numpy_obj if isinstance(numpy_obj, np.ndarray) else np.asarray(numpy_obj))

    @staticmethod
    def ortvalue_from_shape_and_type(shape, element_type, device_type="cpu", device_id=0):
        _cpu_only(device_type)
        return OrtValue(np.empty(shape, dtype=element_type))

    def numpy(self):
        return self._array

    def shape(self):
        return list(self._array.shape)

    def data_type(self):
        a = self._array
        if isinstance(a, list):
            return "seq(tensor)"
        name = _TYPE_NAMES.get(a.dtype, "string" if a.dtype.kind in "OUS" else str(a.dtype))
        return f"tensor({name})"

    def element_type(self):
        return self._array.dtype.type

    def is_tensor(self):
        return isinstance(self._array, np.ndarray)

    def has_value(self):
        return self._array is not None

    def device_name(self):
        return "cpu"

    def data_ptr(self):
        return self._array.ctypes.data


class IOBinding:
    """onnxruntime's IOBinding, CPU basics: bind inputs and outputs by name, run, read outputs."""

    def __init__(self, session):
        self._session = session
        self._inputs = {}
        self._output_names = []
        self._outputs = []

    def bind_cpu_input(self, name, arr_on_cpu):
        self._inputs[name] = arr_on_cpu

    def bind_input(self, name, device_type, device_id, element_type, shape, buffer_ptr):
        raise _state.NotImplemented(
            "[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : kiln binds numpy arrays (bind_cpu_input, bind_ortvalue_input), not raw pointers")

    def bind_ortvalue_input(self, name, ortvalue):
        self._inputs[name] = ortvalue.numpy()

    def bind_output(self, name, device_type="cpu", device_id=0, element_type=None, shape=None, buffer_ptr=None):
        _cpu_only(device_type)
        if buffer_ptr is not None:
            raise _state.NotImplemented(
                "[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : kiln allocates outputs itself (no buffer_ptr)")
        self._output_names.append(name)

    def bind_ortvalue_output(self, name, ortvalue):
        self._output_names.append(name)

    def clear_binding_inputs(self):
        self._inputs = {}

    def clear_binding_outputs(self):
        self._output_names = []
        self._outputs = []

    def synchronize_inputs(self):
        pass

    def synchronize_outputs(self):
        pass

    def _run(self, run_options):
        names = self._output_names or None
        self._outputs = self._session.run(names, self._inputs, run_options)

    def get_outputs(self):
        return [OrtValue(a) for a in self._outputs]

    def copy_outputs_to_cpu(self):
        return list(self._outputs)
