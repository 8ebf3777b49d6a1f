// Numpy broadcasting for the elementwise kernels: the output's dims collapsed (axes of size 1
// dropped, neighbours that every input reads alike merged) and a walk over contiguous runs of the
// innermost axis, where each input is either contiguous (stride 1) or one repeated value (0).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace kiln::cpu {

// Limits of a plan, so walking one needs no allocation (ONNX models here have rank <= 64).
constexpr int kMaxBroadcastInputs = 8;
constexpr int kMaxBroadcastRank = 64;

struct BroadcastPlan {
  std::vector<int64_t> dims;                  // collapsed output dims; never empty
  std::vector<std::vector<int64_t>> strides;  // per input, per collapsed axis: 0 or its stride
  int64_t numel = 0;
  int64_t inner() const { return dims.back(); }
  // Input k covers the whole output (same dims, possibly after dropping 1s) / is one value.
  bool is_full(size_t k) const;
  bool is_scalar(size_t k) const;
  // Input k repeats one short row along the axis above it: strides (..., 0, 1), rank >= 2.
  bool repeats_row(size_t k) const;
  // Elements per index of the axes above the last two: dims[-2] * dims[-1] (rank >= 2).
  int64_t group() const { return dims[dims.size() - 2] * dims.back(); }
  // Input k's offset at the start of group r (an index over every axis but the last two).
  int64_t group_offset(size_t k, int64_t r) const;
};

// Inputs' dims must broadcast to y_dims (numpy rules; checked by the caller). Fails
// (kUnsupported) beyond kMaxBroadcastInputs inputs or kMaxBroadcastRank axes.
BroadcastPlan plan_broadcast(std::span<const int64_t> y_dims,
                             std::span<const std::span<const int64_t>> inputs);

// Walks the output from a position on, in runs that stay in one row of the innermost axis.
// Allocates nothing.
class RunWalker {
 public:
  RunWalker(const BroadcastPlan& p, int64_t begin);
  // Takes the next run, of at most max_len elements (it ends at a row's end at the latest), and
  // returns its length; offsets()[k] is then input k's element offset at the run's start.
  int64_t step(int64_t max_len);
  const int64_t* offsets() const { return run_.data(); }
  // Calls fn(y_offset, in_offsets, len) for the runs covering the next n output elements.
  template <class F>
  void walk(int64_t n, F&& fn);

 private:
  void next_row();
  const BroadcastPlan& p_;
  const int n_in_;
  std::array<int64_t, kMaxBroadcastRank> idx_{};  // the row's multi-index
  std::array<int64_t, kMaxBroadcastInputs> off_{}, run_{};  // inputs' row offsets, run offsets
  int64_t pos_, col_;
};

template <class F>
void RunWalker::walk(int64_t n, F&& fn) {
  for (int64_t done = 0; done < n;) {
    const int64_t start = pos_;
    const int64_t len = step(n - done);
    fn(start, static_cast<const int64_t*>(run_.data()), len);
    done += len;
  }
}

// fn(y_offset, in_offsets, len) for each run of the output range [begin, end).
template <class F>
void for_each_run(const BroadcastPlan& p, int64_t begin, int64_t end, F&& fn) {
  RunWalker(p, begin).walk(end - begin, fn);
}

}  // namespace kiln::cpu
