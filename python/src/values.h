// numpy arrays <-> kiln tensors: dtypes, onnxruntime's type names, zero-copy views both ways.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/rt_value.h"

namespace kiln::python {

// onnxruntime's type strings: "tensor(float)", "seq(tensor(int64))", "map(int64,tensor(float))".
std::string ort_type_name(const TypeInfo& t);
std::string ort_tensor_type(DataType t);  // "tensor(float)"

// The kiln dtype of a numpy array (kUndefined for one kiln has no counterpart for); strings for
// numpy's str, bytes and object arrays.
DataType dtype_of(const pybind11::array& a);
// The numpy dtype of a kiln tensor (object for strings); fails (InvalidArgument) for a type numpy
// has no counterpart for (bfloat16, float8 ...).
pybind11::dtype numpy_dtype(DataType t);

// A tensor reading the array: zero-copy when it is C-contiguous, aligned and native-endian (the
// tensor then keeps the array alive), else a packed copy. Strings are always copied.
Tensor tensor_from_array(const pybind11::array& a, DataType dt);

// The tensor as a numpy array that owns it: no copy (strings become an object array of str).
pybind11::object array_from_tensor(Tensor t);
// A value as Python: a tensor as numpy, a sequence as a list of numpy arrays, none as None.
pybind11::object py_from_value(RtValue v);

// Memory ranges [begin, end) of tensors: results overlapping a feed or a constant are copied.
using Range = std::pair<const char*, const char*>;
inline Range range_of(const Tensor& t) {
  const char* p = static_cast<const char*>(t.raw());
  return {p, p + (t.dtype() == DataType::kString ? t.numel() * sizeof(std::string) : t.nbytes())};
}
inline bool overlaps(const Range& a, const Range& b) {
  return a.first < b.second && b.first < a.second && a.first != a.second && b.first != b.second;
}

}  // namespace kiln::python
