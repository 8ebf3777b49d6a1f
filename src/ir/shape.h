// Symbolic shapes: a dim is a known size, a named symbol or expression ("batch", "seq*2"), or unknown.
// Dims also carry the values of small integer tensors during inference, so a known value may be
// negative (the -1 of a Reshape target).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace kiln {

class Dim {
 public:
  Dim() = default;                      // unknown
  Dim(int64_t v) : known_(true), value_(v) {}  // NOLINT: a known size converts implicitly
  static Dim symbol(std::string s);     // "batch"; an empty name means unknown

  bool is_known() const { return known_; }
  bool is_symbolic() const { return !sym_.empty(); }
  bool is_unknown() const { return !is_known() && !is_symbolic(); }
  int64_t value() const { return value_; }
  const std::string& sym() const { return sym_; }
  std::string to_string() const;  // "3", "batch" or "?"

  // The same size for sure (equal values or equal symbols). Unknown dims equal nothing.
  bool same_as(const Dim& o) const;
  bool operator==(const Dim& o) const {
    return known_ == o.known_ && value_ == o.value_ && sym_ == o.sym_;
  }

  // Arithmetic on dims; symbols give expressions, unknowns give unknown.
  friend Dim operator+(const Dim& a, const Dim& b);
  friend Dim operator-(const Dim& a, const Dim& b);
  friend Dim operator*(const Dim& a, const Dim& b);
  static Dim floor_div(const Dim& a, const Dim& b);
  static Dim ceil_div(const Dim& a, const Dim& b);

 private:
  bool known_ = false;
  int64_t value_ = 0;
  std::string sym_;
};

using Shape = std::vector<Dim>;

std::string shape_to_string(const Shape& s);  // "[batch,3,224,224]"
std::optional<std::vector<int64_t>> known_dims(const Shape& s);
Shape shape_of(const std::vector<int64_t>& dims);
// Numpy-style broadcast of two shapes; nullopt when they cannot broadcast for sure.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);

// The type of a value: a tensor (dtype + optional shape), a sequence or optional of one, or a map.
struct TypeInfo {
  enum class Kind { kUnknown, kTensor, kSparseTensor, kSequence, kOptional, kMap };
  Kind kind = Kind::kUnknown;
  DataType elem = DataType::kUndefined;   // tensor element type, or map value... see map_key
  std::optional<Shape> shape;             // nullopt: rank unknown
  std::shared_ptr<TypeInfo> inner;        // element type of a sequence / optional, value of a map
  DataType map_key = DataType::kUndefined;

  static TypeInfo tensor(DataType t, std::optional<Shape> s = std::nullopt);
  static TypeInfo sequence(TypeInfo elem);
  static TypeInfo optional(TypeInfo elem);
  bool is_tensor() const { return kind == Kind::kTensor; }
  std::string to_string() const;  // "float[batch,3]", "seq(float[?])"
};

}  // namespace kiln
