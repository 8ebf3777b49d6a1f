// Collapsing broadcast shapes.
#include "engine/cpu/broadcast.h"

#include <algorithm>

#include "support/error.h"

namespace kiln::cpu {

bool BroadcastPlan::is_full(size_t k) const {
  for (size_t d = 0; d < dims.size(); ++d)
    if (dims[d] > 1 && strides[k][d] == 0) return false;
  return true;
}

bool BroadcastPlan::is_scalar(size_t k) const {
  return std::all_of(strides[k].begin(), strides[k].end(), [](int64_t s) { return s == 0; });
}

bool BroadcastPlan::repeats_row(size_t k) const {
  const size_t r = dims.size();
  return r >= 2 && strides[k][r - 2] == 0 && strides[k][r - 1] == 1;
}

int64_t BroadcastPlan::group_offset(size_t k, int64_t r) const {
  int64_t off = 0;
  for (int d = static_cast<int>(dims.size()) - 3; d >= 0; --d) {
    off += r % dims[d] * strides[k][d];
    r /= dims[d];
  }
  return off;
}

BroadcastPlan plan_broadcast(std::span<const int64_t> y_dims,
                             std::span<const std::span<const int64_t>> inputs) {
  const size_t rank = y_dims.size(), n_in = inputs.size();
  KILN_CHECK(n_in <= kMaxBroadcastInputs && rank <= kMaxBroadcastRank, ErrorKind::kUnsupported,
             "broadcast of {} inputs of rank {}: at most {} inputs, rank {}", n_in, rank,
             kMaxBroadcastInputs, kMaxBroadcastRank);
  BroadcastPlan p;
  p.numel = 1;
  for (int64_t d : y_dims) p.numel *= d;
  // full[k][d]: input k has the output's extent on axis d (inputs are right-aligned).
  std::vector<std::vector<bool>> full(n_in, std::vector<bool>(rank));
  for (size_t k = 0; k < n_in; ++k) {
    const size_t lead = rank - inputs[k].size();
    for (size_t d = 0; d < rank; ++d) full[k][d] = d >= lead && inputs[k][d - lead] == y_dims[d];
  }
  // Keep axes of size > 1; merge an axis into the previous kept one when every input agrees.
  std::vector<std::vector<bool>> kept_full(n_in);
  for (size_t d = 0; d < rank; ++d) {
    if (y_dims[d] == 1) continue;
    bool merge = !p.dims.empty();
    for (size_t k = 0; k < n_in && merge; ++k) merge = kept_full[k].back() == full[k][d];
    if (merge) {
      p.dims.back() *= y_dims[d];
      continue;
    }
    p.dims.push_back(y_dims[d]);
    for (size_t k = 0; k < n_in; ++k) kept_full[k].push_back(full[k][d]);
  }
  if (p.dims.empty()) {  // every axis 1 (a scalar output) or a zero-size output
    p.dims.push_back(p.numel);
    for (size_t k = 0; k < n_in; ++k) kept_full[k].push_back(false);
  }
  p.strides.assign(n_in, std::vector<int64_t>(p.dims.size(), 0));
  for (size_t k = 0; k < n_in; ++k) {
    int64_t s = 1;
    for (size_t d = p.dims.size(); d-- > 0;) {
      if (!kept_full[k][d]) continue;
      p.strides[k][d] = s;
      s *= p.dims[d];
    }
  }
  return p;
}

RunWalker::RunWalker(const BroadcastPlan& p, int64_t begin)
    : p_(p),
      n_in_(static_cast<int>(p.strides.size())),
      pos_(begin),
      col_(p.inner() > 0 ? begin % p.inner() : 0) {
  const int rank = static_cast<int>(p.dims.size());
  int64_t row = p.inner() > 0 ? begin / p.inner() : 0;
  for (int d = rank - 2; d >= 0; --d) {
    idx_[d] = row % p.dims[d];
    row /= p.dims[d];
  }
  for (int k = 0; k < n_in_; ++k)
    for (int d = 0; d < rank - 1; ++d) off_[k] += idx_[d] * p.strides[k][d];
}

int64_t RunWalker::step(int64_t max_len) {
  const int rank = static_cast<int>(p_.dims.size());
  const int64_t len = std::min(max_len, p_.inner() - col_);
  for (int k = 0; k < n_in_; ++k) run_[k] = off_[k] + col_ * p_.strides[k][rank - 1];
  pos_ += len;
  col_ += len;
  if (col_ == p_.inner()) next_row();
  return len;
}

void RunWalker::next_row() {
  col_ = 0;
  for (int d = static_cast<int>(p_.dims.size()) - 2; d >= 0; --d) {
    ++idx_[d];
    for (int k = 0; k < n_in_; ++k) off_[k] += p_.strides[k][d];
    if (idx_[d] < p_.dims[d]) return;
    for (int k = 0; k < n_in_; ++k) off_[k] -= p_.strides[k][d] * p_.dims[d];
    idx_[d] = 0;
  }
}

}  // namespace kiln::cpu
