#include "ir/tensor.h"

#include <cmath>
#include <complex>
#include <cstdlib>
#include <limits>
#include <cstring>

#include "ir/scalar_types.h"
#include "support/checked_math.h"
#include "support/error.h"
#include "support/limits.h"

namespace kiln {

namespace {
thread_local int64_t t_allocation_cap = limits::kDefaultAllocationCap;

// A double as the integer type I, saturating: static_cast of a value outside I's range (or of NaN)
// is undefined, and the values come from files (attributes, initializers) as often as from kernels.
template <typename I>
I saturate(double v) {
  constexpr double lo = static_cast<double>(std::numeric_limits<I>::min());
  constexpr double hi = static_cast<double>(std::numeric_limits<I>::max());  // int64: 2^63, above max
  if (std::isnan(v)) return 0;
  if (v <= lo) return std::numeric_limits<I>::min();
  if (v >= hi) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

int64_t checked_numel(const std::vector<int64_t>& dims) {
  KILN_CHECK(dims.size() <= size_t(limits::kMaxRank), ErrorKind::kRuntime,
             "tensor rank {} above the cap {}", dims.size(), limits::kMaxRank);
  auto n = checked_product(dims);
  KILN_CHECK(n.has_value(), ErrorKind::kRuntime, "invalid tensor dims {}", dims_to_string(dims));
  return *n;
}

struct StringArray {
  std::unique_ptr<std::string[]> items;
};
}  // namespace

int64_t allocation_cap() { return t_allocation_cap; }

AllocationCapScope::AllocationCapScope(int64_t bytes) : previous_(t_allocation_cap) {
  if (bytes > 0) t_allocation_cap = bytes;
}
AllocationCapScope::~AllocationCapScope() { t_allocation_cap = previous_; }

Tensor::Tensor(DataType dtype, std::vector<int64_t> dims) : Tensor(dtype, std::move(dims), true) {}

Tensor Tensor::uninitialized(DataType dtype, std::vector<int64_t> dims) {
  return Tensor(dtype, std::move(dims), false);
}

Tensor::Tensor(DataType dtype, std::vector<int64_t> dims, bool clear)
    : dtype_(dtype), dims_(std::move(dims)), numel_(checked_numel(dims_)) {
  const size_t elem = dtype == DataType::kString ? sizeof(std::string) : dtype_size(dtype);
  auto bytes = checked_mul(numel_, static_cast<int64_t>(elem));
  KILN_CHECK(bytes && *bytes <= allocation_cap(), ErrorKind::kRuntime,
             "tensor of {} {} needs more than the allocation cap of {} bytes", dtype_name(dtype),
             dims_to_string(dims_), allocation_cap());
  if (dtype == DataType::kString) {
    auto arr = std::make_shared<StringArray>();
    arr->items = std::make_unique<std::string[]>(std::max<int64_t>(numel_, 1));
    data_ = arr->items.get();
    owner_ = arr;
    return;
  }
  const size_t alloc = (static_cast<size_t>(*bytes) + 63) / 64 * 64 + 64;
  void* p = std::aligned_alloc(64, alloc);
  KILN_CHECK(p != nullptr, ErrorKind::kRuntime, "out of memory allocating {} bytes", alloc);
  if (clear) std::memset(p, 0, alloc);
  owner_ = std::shared_ptr<void>(p, std::free);
  data_ = p;
}

Tensor Tensor::view(DataType dtype, std::vector<int64_t> dims, std::shared_ptr<void> owner,
                    void* data) {
  Tensor t;
  t.dtype_ = dtype;
  t.dims_ = std::move(dims);
  t.numel_ = checked_numel(t.dims_);
  t.owner_ = std::move(owner);
  t.data_ = data;
  return t;
}

Tensor Tensor::from_int64s(std::span<const int64_t> v) {
  Tensor t(DataType::kInt64, {static_cast<int64_t>(v.size())});
  if (!v.empty()) std::memcpy(t.data_, v.data(), v.size() * sizeof(int64_t));
  return t;
}

double Tensor::get_f64(int64_t i) const {
  double r = 0;
  bool ok = visit_dtype(dtype_, [&]<typename T>() {
    if constexpr (std::is_same_v<T, std::string>) {
      fail(ErrorKind::kRuntime, "string tensor read as a number");
    } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                         std::is_same_v<T, std::complex<double>>) {
      r = static_cast<double>(data<T>()[i].real());
    } else if constexpr (std::is_class_v<T>) {
      if constexpr (std::is_convertible_v<T, float>) r = static_cast<float>(data<T>()[i]);
      else r = static_cast<double>(static_cast<int64_t>(data<T>()[i]));
    } else {
      r = static_cast<double>(data<T>()[i]);
    }
  });
  KILN_CHECK(ok, ErrorKind::kRuntime, "tensor of undefined type read");
  return r;
}

int64_t Tensor::get_i64(int64_t i) const {
  switch (dtype_) {
    case DataType::kInt64: return data<int64_t>()[i];
    case DataType::kInt32: return data<int32_t>()[i];
    case DataType::kUInt64: return static_cast<int64_t>(data<uint64_t>()[i]);
    default: return saturate<int64_t>(get_f64(i));
  }
}

void Tensor::set_f64(int64_t i, double v) {
  bool ok = visit_dtype(dtype_, [&]<typename T>() {
    if constexpr (std::is_same_v<T, std::string>) {
      fail(ErrorKind::kRuntime, "string tensor written as a number");
    } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                         std::is_same_v<T, std::complex<double>>) {
      data<T>()[i] = T(v);
    } else if constexpr (std::is_class_v<T>) {
      // The 4- and 2-bit integers convert to float too (through int64_t), so they are told
      // apart first: a float made into one went through an unchecked float -> int64 conversion
      // (undefined for inf, which an attribute may hold: the fuzzer's find).
      if constexpr (std::is_same_v<T, Int4> || std::is_same_v<T, UInt4> || std::is_same_v<T, Int2> ||
                    std::is_same_v<T, UInt2>)
        data<T>()[i] = T(saturate<int64_t>(v));
      else if constexpr (std::is_convertible_v<T, float>) data<T>()[i] = T(static_cast<float>(v));
      else data<T>()[i] = T(saturate<int64_t>(v));
    } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      data<T>()[i] = saturate<T>(v);
    } else {
      data<T>()[i] = static_cast<T>(v);
    }
  });
  KILN_CHECK(ok, ErrorKind::kRuntime, "tensor of undefined type written");
}

std::vector<int64_t> Tensor::to_int64s() const {
  std::vector<int64_t> out(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) out[i] = get_i64(i);
  return out;
}

Tensor Tensor::reshaped(std::vector<int64_t> dims) const {
  Tensor t = *this;
  t.dims_ = std::move(dims);
  t.numel_ = checked_numel(t.dims_);
  KILN_ASSERT(t.numel_ == numel_, "reshape changes the element count");
  return t;
}

Tensor Tensor::view_as(DataType dtype, std::vector<int64_t> dims) const {
  KILN_ASSERT(dtype != DataType::kString && dtype_ != DataType::kString, "a string tensor's bytes viewed");
  Tensor t = *this;
  t.dtype_ = dtype;
  t.dims_ = std::move(dims);
  t.numel_ = checked_numel(t.dims_);
  KILN_ASSERT(static_cast<size_t>(t.numel_) * dtype_size(dtype) <= nbytes(), "a view beyond its buffer");
  return t;
}

Tensor Tensor::clone() const {
  if (!defined()) return {};
  Tensor t(dtype_, dims_, false);  // every byte is copied over
  if (dtype_ == DataType::kString) {
    for (int64_t i = 0; i < numel_; ++i) t.strings()[i] = strings()[i];
  } else if (numel_ > 0) {
    std::memcpy(t.data_, data_, nbytes());
  }
  return t;
}

std::string dims_to_string(std::span<const int64_t> dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

}  // namespace kiln
