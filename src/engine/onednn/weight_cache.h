// Constants (weights, biases) in the layouts oneDNN primitives asked for, reordered once and
// shared by every plan of a model.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <mutex>
#include <vector>

#include "ir/tensor.h"

namespace kiln::engine {

class WeightCache {
 public:
  // t's bytes read as layout `from`, in layout `to`.
  dnnl::memory get(const Tensor& t, const dnnl::memory::desc& from, const dnnl::memory::desc& to);
  size_t bytes() const { return bytes_; }

 private:
  struct Entry {
    Tensor source;  // kept, so that its address stays a valid key
    dnnl::memory::desc from, to;
    dnnl::memory mem;
  };
  std::mutex mu_;
  std::vector<Entry> entries_;
  size_t bytes_ = 0;
};

}  // namespace kiln::engine
