#include "values.h"

#include <cstring>

#include "errors.h"

namespace kiln::python {

namespace py = pybind11;

std::string ort_tensor_type(DataType t) { return "tensor(" + std::string(dtype_name(t)) + ")"; }

std::string ort_type_name(const TypeInfo& t) {
  switch (t.kind) {
    case TypeInfo::Kind::kTensor: return ort_tensor_type(t.elem);
    case TypeInfo::Kind::kSparseTensor: return "sparse_tensor(" + std::string(dtype_name(t.elem)) + ")";
    case TypeInfo::Kind::kSequence: return "seq(" + (t.inner ? ort_type_name(*t.inner) : "unknown") + ")";
    case TypeInfo::Kind::kOptional: return "optional(" + (t.inner ? ort_type_name(*t.inner) : "unknown") + ")";
    case TypeInfo::Kind::kMap:
      return "map(" + std::string(dtype_name(t.map_key)) + "," + (t.inner ? ort_type_name(*t.inner) : "unknown") + ")";
    case TypeInfo::Kind::kUnknown: break;
  }
  return "unknown";
}

DataType dtype_of(const py::array& a) {
  const py::dtype d = a.dtype();
  const size_t size = static_cast<size_t>(d.itemsize());
  switch (d.kind()) {
    case 'f':
      return size == 4 ? DataType::kFloat : size == 8 ? DataType::kDouble : size == 2 ? DataType::kFloat16 : DataType::kUndefined;
    case 'i':
      return size == 1 ? DataType::kInt8 : size == 2 ? DataType::kInt16 : size == 4 ? DataType::kInt32
             : size == 8 ? DataType::kInt64 : DataType::kUndefined;
    case 'u':
      return size == 1 ? DataType::kUInt8 : size == 2 ? DataType::kUInt16 : size == 4 ? DataType::kUInt32
             : size == 8 ? DataType::kUInt64 : DataType::kUndefined;
    case 'b': return DataType::kBool;
    case 'c': return size == 8 ? DataType::kComplex64 : size == 16 ? DataType::kComplex128 : DataType::kUndefined;
    case 'U': case 'S': case 'O': return DataType::kString;
    default: return DataType::kUndefined;
  }
}

py::dtype numpy_dtype(DataType t) {
  const char* code = nullptr;
  switch (t) {
    case DataType::kFloat: code = "float32"; break;
    case DataType::kDouble: code = "float64"; break;
    case DataType::kFloat16: code = "float16"; break;
    case DataType::kInt8: code = "int8"; break;
    case DataType::kInt16: code = "int16"; break;
    case DataType::kInt32: code = "int32"; break;
    case DataType::kInt64: code = "int64"; break;
    case DataType::kUInt8: code = "uint8"; break;
    case DataType::kUInt16: code = "uint16"; break;
    case DataType::kUInt32: code = "uint32"; break;
    case DataType::kUInt64: code = "uint64"; break;
    case DataType::kBool: code = "bool"; break;
    case DataType::kComplex64: code = "complex64"; break;
    case DataType::kComplex128: code = "complex128"; break;
    case DataType::kString: code = "object"; break;
    default:
      throw OrtError(OrtCode::kNotImplemented,
                     "numpy has no dtype for " + ort_tensor_type(t) + " (kiln cannot hand it to Python)");
  }
  return py::dtype(code);
}

namespace {

std::vector<int64_t> dims_of(const py::array& a) {
  std::vector<int64_t> dims(static_cast<size_t>(a.ndim()));
  for (size_t i = 0; i < dims.size(); ++i) dims[i] = static_cast<int64_t>(a.shape(i));
  return dims;
}

// Keeps a Python object alive from C++; drops the reference under the GIL, from whichever thread.
std::shared_ptr<void> hold(const py::object& o) {
  PyObject* p = o.ptr();
  Py_INCREF(p);
  return std::shared_ptr<void>(p, [](void* q) {
    py::gil_scoped_acquire gil;
    Py_DECREF(static_cast<PyObject*>(q));
  });
}

Tensor strings_from_array(const py::array& a) {
  Tensor t(DataType::kString, dims_of(a));
  // Iterate in C order whatever the layout: ravel gives a C-ordered view or copy.
  py::list items = a.attr("ravel")().attr("tolist")();
  std::string* out = t.strings();
  size_t i = 0;
  for (py::handle h : items) {
    if (PyUnicode_Check(h.ptr())) {
      out[i++] = h.cast<std::string>();
    } else if (PyBytes_Check(h.ptr())) {
      out[i++] = std::string(PyBytes_AS_STRING(h.ptr()), static_cast<size_t>(PyBytes_GET_SIZE(h.ptr())));
    } else {
      throw OrtError(OrtCode::kInvalidArgument, "a string tensor holds a " +
                     std::string(Py_TYPE(h.ptr())->tp_name) + " (element " + std::to_string(i) +
                     "): only str and bytes convert to tensor(string)");
    }
  }
  return t;
}

}  // namespace

Tensor tensor_from_array(const py::array& a, DataType dt) {
  if (dt == DataType::kString) return strings_from_array(a);
  constexpr int kZeroCopy = py::array::c_style;
  const bool native = a.dtype().attr("isnative").cast<bool>();
  if ((a.flags() & kZeroCopy) == kZeroCopy && native &&
      reinterpret_cast<uintptr_t>(a.data()) % static_cast<uintptr_t>(a.dtype().itemsize()) == 0) {
    return Tensor::view(dt, dims_of(a), hold(a), const_cast<void*>(a.data()));
  }
  // Another layout, a byte order or an unaligned buffer: one packed, native copy.
  py::array packed = py::module_::import("numpy").attr("ascontiguousarray")(
      a, a.dtype().attr("newbyteorder")("="));
  return Tensor::view(dt, dims_of(packed), hold(packed), const_cast<void*>(packed.data()));
}

py::object array_from_tensor(Tensor t) {
  const py::dtype dt = numpy_dtype(t.dtype());
  std::vector<py::ssize_t> shape(t.dims().begin(), t.dims().end());
  if (t.dtype() == DataType::kString) {
    py::array out(dt, shape);
    PyObject** cells = static_cast<PyObject**>(out.mutable_data());
    const std::string* s = t.strings();
    for (int64_t i = 0; i < t.numel(); ++i) {
      PyObject* str = PyUnicode_DecodeUTF8(s[i].data(), static_cast<py::ssize_t>(s[i].size()), "replace");
      if (!str) throw py::error_already_set();
      Py_XDECREF(cells[i]);
      cells[i] = str;
    }
    return out;
  }
  auto* owned = new Tensor(std::move(t));
  py::capsule owner(owned, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(dt, shape, {}, owned->raw(), owner);
}

py::object py_from_value(RtValue v) {
  switch (v.kind) {
    case RtValue::Kind::kTensor: return array_from_tensor(std::move(v.tensor));
    case RtValue::Kind::kSequence: {
      py::list out;
      for (Tensor& t : v.sequence) out.append(array_from_tensor(std::move(t)));
      return out;
    }
    case RtValue::Kind::kNone: break;
  }
  return py::none();
}

}  // namespace kiln::python
