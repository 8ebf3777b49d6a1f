// Tensor: dtype, dims and a shared buffer, owned or viewed in place (e.g. from a mapped file).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace kiln {

// Largest single tensor kiln will allocate; requests above it are errors, not out-of-memory kills.
// The cap belongs to whoever runs the model (a Session, the fast engine): it holds an
// AllocationCapScope while it prepares or runs the model, and every allocation on that thread
// checks against the innermost scope's cap (limits::kDefaultAllocationCap outside any scope).
// Thread-local because allocations happen deep inside kernels that know nothing of sessions; a
// scope restores the previous cap when it ends, so nothing outlives the session that set it.
int64_t allocation_cap();

class AllocationCapScope {
 public:
  explicit AllocationCapScope(int64_t bytes);  // bytes <= 0: keep the cap in force
  ~AllocationCapScope();
  AllocationCapScope(const AllocationCapScope&) = delete;
  AllocationCapScope& operator=(const AllocationCapScope&) = delete;

 private:
  int64_t previous_;
};

class Tensor {
 public:
  Tensor() = default;
  // Allocates a zero-filled tensor; fails (kRuntime) on a negative dim, overflow or above the cap.
  Tensor(DataType dtype, std::vector<int64_t> dims);
  // The same without clearing the bytes (strings are still constructed empty): for a writer that
  // sets every element, such as the fast engine's step writing a graph output (a fresh output
  // of a few MB cost as much to clear as its kernel took to compute).
  static Tensor uninitialized(DataType dtype, std::vector<int64_t> dims);
  // Views memory owned by `owner` (no copy). The bytes must hold numel * dtype_size elements.
  static Tensor view(DataType dtype, std::vector<int64_t> dims, std::shared_ptr<void> owner,
                     void* data);
  template <typename T>
  static Tensor scalar(DataType dtype, T v);
  static Tensor from_int64s(std::span<const int64_t> v);  // a 1-D int64 tensor

  bool defined() const { return dtype_ != DataType::kUndefined; }
  DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int rank() const { return static_cast<int>(dims_.size()); }
  int64_t dim(int i) const { return dims_[i]; }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * dtype_size(dtype_); }

  template <typename T> T* data() { return static_cast<T*>(data_); }
  template <typename T> const T* data() const { return static_cast<const T*>(data_); }
  void* raw() { return data_; }
  const void* raw() const { return data_; }
  std::string* strings() { return static_cast<std::string*>(data_); }
  const std::string* strings() const { return static_cast<const std::string*>(data_); }

  // Element i converted to double / int64 (numeric types only; strings fail).
  double get_f64(int64_t i) const;
  int64_t get_i64(int64_t i) const;
  void set_f64(int64_t i, double v);
  std::vector<int64_t> to_int64s() const;  // all elements of an integer tensor

  Tensor reshaped(std::vector<int64_t> dims) const;  // same buffer, numel must match
  // The first bytes of its buffer as a tensor of `dtype` and `dims` (no copy; they must fit in
  // nbytes(); not strings): a buffer kept for reuse taking on another tensor's form.
  Tensor view_as(DataType dtype, std::vector<int64_t> dims) const;
  Tensor clone() const;                              // deep copy
  bool same_buffer(const Tensor& o) const { return data_ == o.data_; }
  // How many tensors (and views) hold its bytes; 0 for none.
  long holders() const { return owner_.use_count(); }

 private:
  Tensor(DataType dtype, std::vector<int64_t> dims, bool clear);

  DataType dtype_ = DataType::kUndefined;
  std::vector<int64_t> dims_;
  int64_t numel_ = 0;
  std::shared_ptr<void> owner_;
  void* data_ = nullptr;
};

template <typename T>
Tensor Tensor::scalar(DataType dtype, T v) {
  Tensor t(dtype, {});
  t.set_f64(0, static_cast<double>(v));
  return t;
}

std::string dims_to_string(std::span<const int64_t> dims);  // "[1,3,224,224]"

}  // namespace kiln
