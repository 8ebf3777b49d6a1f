#include "ir/shape.h"

#include <algorithm>

namespace kiln {

Dim Dim::symbol(std::string s) {
  Dim d;
  d.sym_ = std::move(s);
  return d;
}

std::string Dim::to_string() const {
  if (is_known()) return std::to_string(value_);
  if (is_symbolic()) return sym_;
  return "?";
}

bool Dim::same_as(const Dim& o) const {
  if (is_known()) return o.is_known() && value_ == o.value_;
  return is_symbolic() && o.is_symbolic() && sym_ == o.sym_;
}

namespace {
// Wraps a compound expression in parentheses before combining it with another operator.
std::string term(const Dim& d) {
  const std::string s = d.to_string();
  return s.find_first_of("+-*/") == std::string::npos ? s : "(" + s + ")";
}
Dim combine(const Dim& a, const Dim& b, const char* op) {
  if (a.is_unknown() || b.is_unknown()) return {};
  return Dim::symbol(term(a) + op + term(b));
}
}  // namespace

Dim operator+(const Dim& a, const Dim& b) {
  if (a.is_known() && b.is_known()) return a.value() + b.value();
  if (a.is_known() && a.value() == 0) return b;
  if (b.is_known() && b.value() == 0) return a;
  return combine(a, b, "+");
}

Dim operator-(const Dim& a, const Dim& b) {
  if (a.is_known() && b.is_known()) return a.value() - b.value();
  if (b.is_known() && b.value() == 0) return a;
  if (a.is_symbolic() && a.same_as(b)) return int64_t{0};
  return combine(a, b, "-");
}

Dim operator*(const Dim& a, const Dim& b) {
  if (a.is_known() && b.is_known()) return a.value() * b.value();
  if ((a.is_known() && a.value() == 0) || (b.is_known() && b.value() == 0)) return int64_t{0};
  if (a.is_known() && a.value() == 1) return b;
  if (b.is_known() && b.value() == 1) return a;
  // keep the constant first so that equal products print equally: "2*batch"
  if (b.is_known()) return combine(b, a, "*");
  return combine(a, b, "*");
}

Dim Dim::floor_div(const Dim& a, const Dim& b) {
  if (a.is_known() && b.is_known() && b.value() != 0) {
    int64_t q = a.value() / b.value();
    if ((a.value() % b.value() != 0) && ((a.value() < 0) != (b.value() < 0))) --q;
    return q;
  }
  if (b.is_known() && b.value() == 1) return a;
  if (a.is_symbolic() && a.same_as(b)) return int64_t{1};
  return combine(a, b, "/");
}

Dim Dim::ceil_div(const Dim& a, const Dim& b) {
  if (a.is_known() && b.is_known() && b.value() > 0) return (a.value() + b.value() - 1) / b.value();
  if (b.is_known() && b.value() == 1) return a;
  if (a.is_unknown() || b.is_unknown()) return {};
  return Dim::symbol("ceil(" + a.to_string() + "/" + b.to_string() + ")");
}

std::string shape_to_string(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + s[i].to_string();
  return r + "]";
}

std::optional<std::vector<int64_t>> known_dims(const Shape& s) {
  std::vector<int64_t> out;
  out.reserve(s.size());
  for (const Dim& d : s) {
    if (!d.is_known()) return std::nullopt;
    out.push_back(d.value());
  }
  return out;
}

Shape shape_of(const std::vector<int64_t>& dims) { return Shape(dims.begin(), dims.end()); }

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const Dim da = i < rank - a.size() ? Dim(1) : a[i - (rank - a.size())];
    const Dim db = i < rank - b.size() ? Dim(1) : b[i - (rank - b.size())];
    if (da.is_known() && da.value() == 1) out[i] = db;
    else if (db.is_known() && db.value() == 1) out[i] = da;
    else if (da.same_as(db)) out[i] = da;
    else if (da.is_known() && db.is_known()) return std::nullopt;
    else if (da.is_known()) out[i] = da;  // a symbol broadcast against n > 1 must be n
    else if (db.is_known()) out[i] = db;
    else out[i] = Dim();                  // two different symbols: one of them, unknown which
  }
  return out;
}

TypeInfo TypeInfo::tensor(DataType t, std::optional<Shape> s) {
  TypeInfo ti;
  ti.kind = Kind::kTensor;
  ti.elem = t;
  ti.shape = std::move(s);
  return ti;
}

TypeInfo TypeInfo::sequence(TypeInfo elem) {
  TypeInfo ti;
  ti.kind = Kind::kSequence;
  ti.inner = std::make_shared<TypeInfo>(std::move(elem));
  return ti;
}

TypeInfo TypeInfo::optional(TypeInfo elem) {
  TypeInfo ti;
  ti.kind = Kind::kOptional;
  ti.inner = std::make_shared<TypeInfo>(std::move(elem));
  return ti;
}

std::string TypeInfo::to_string() const {
  switch (kind) {
    case Kind::kTensor:
    case Kind::kSparseTensor: {
      std::string s = (kind == Kind::kSparseTensor ? "sparse " : "") + std::string(dtype_name(elem));
      return s + (shape ? shape_to_string(*shape) : "[...]");
    }
    case Kind::kSequence: return "seq(" + (inner ? inner->to_string() : "?") + ")";
    case Kind::kOptional: return "optional(" + (inner ? inner->to_string() : "?") + ")";
    case Kind::kMap:
      return "map(" + std::string(dtype_name(map_key)) + "," + (inner ? inner->to_string() : "?") + ")";
    default: return "?";
  }
}

}  // namespace kiln
