// What a value holds at run time: a tensor, a sequence of tensors, or nothing (an empty optional).
#pragma once

#include <string>
#include <vector>

#include "ir/shape.h"
#include "ir/tensor.h"

namespace kiln {

struct RtValue {
  enum class Kind { kNone, kTensor, kSequence };
  Kind kind = Kind::kNone;
  Tensor tensor;
  std::vector<Tensor> sequence;
  TypeInfo none_type;  // for kNone: the type an empty optional would have held, when known

  static RtValue of(Tensor t) {
    RtValue v;
    v.kind = Kind::kTensor;
    v.tensor = std::move(t);
    return v;
  }
  static RtValue of_sequence(std::vector<Tensor> s) {
    RtValue v;
    v.kind = Kind::kSequence;
    v.sequence = std::move(s);
    return v;
  }
  bool is_tensor() const { return kind == Kind::kTensor; }
  bool is_sequence() const { return kind == Kind::kSequence; }
  bool is_none() const { return kind == Kind::kNone; }
  std::string describe() const;  // "float[1,3]", "seq of 2", "none"
};

inline std::string RtValue::describe() const {
  switch (kind) {
    case Kind::kTensor: return std::string(dtype_name(tensor.dtype())) + dims_to_string(tensor.dims());
    case Kind::kSequence: return "sequence of " + std::to_string(sequence.size());
    default: return "none";
  }
}

}  // namespace kiln
