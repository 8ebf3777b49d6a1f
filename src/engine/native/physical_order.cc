#include "engine/native/physical_order.h"

#include <algorithm>
#include <numeric>

#include "engine/onednn/dnnl_context.h"

namespace kiln::engine {

std::optional<std::vector<int>> physical_order(const dnnl::memory::desc& md) {
  if (!is_dense(md) || md.data.format_desc.blocking.inner_nblks != 0) return std::nullopt;
  const int rank = md.data.ndims;
  const auto* dims = md.data.dims;
  const auto* strides = md.data.format_desc.blocking.strides;
  std::vector<int> order(rank);
  std::iota(order.begin(), order.end(), 0);
  // outermost first: larger strides first; axes of size 1 go where their stride puts them, ties
  // kept in logical order
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return strides[a] > strides[b]; });
  int64_t expect = 1;
  for (int i = rank - 1; i >= 0; --i) {
    const int a = order[i];
    if (dims[a] == 1) continue;
    if (strides[a] != expect) return std::nullopt;
    expect *= dims[a];
  }
  return order;
}

dnnl::memory::desc dense_md(const std::vector<int64_t>& dims, const std::vector<int>& order) {
  std::vector<int64_t> strides(dims.size());
  int64_t st = 1;
  for (int i = static_cast<int>(order.size()) - 1; i >= 0; --i) {
    strides[order[i]] = st;
    st *= dims[order[i]];
  }
  return strided_md(dims, strides, dnnl::memory::data_type::f32);
}

std::optional<std::vector<int64_t>> in_physical_order(std::vector<int64_t> dims,
                                                      const std::vector<int>& order) {
  if (dims.size() > order.size()) return std::nullopt;
  dims.insert(dims.begin(), order.size() - dims.size(), 1);
  std::vector<int64_t> out(order.size());
  int last = -1;
  for (size_t i = 0; i < order.size(); ++i) {
    out[i] = dims[order[i]];
    if (out[i] == 1) continue;
    if (order[i] < last) return std::nullopt;
    last = order[i];
  }
  return out;
}

dnnl::memory::desc channel_blocked_md(const std::vector<int64_t>& dims, int64_t block) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32,
                            block == 16 ? dnnl::memory::format_tag::nChw16c
                                        : dnnl::memory::format_tag::nChw8c);
}

int64_t channel_block(const dnnl::memory::desc& md, const std::vector<int64_t>& dims) {
  if (dims.size() != 4) return -1;
  if (physical_order(md) == std::vector<int>{0, 2, 3, 1}) return 0;
  for (const int64_t block : {16, 8})
    if (dims[1] % block == 0 && md == channel_blocked_md(dims, block)) return block;
  return -1;
}

std::optional<std::vector<int64_t>> in_channel_blocks(std::vector<int64_t> dims, int64_t channels,
                                                      int64_t block) {
  if (dims.size() > 4) return std::nullopt;
  dims.insert(dims.begin(), 4 - dims.size(), 1);
  if (dims[1] == 1) return std::vector<int64_t>{dims[0], 1, dims[2], dims[3], 1};
  if (dims[1] == channels && dims[2] == 1 && dims[3] == 1)
    return std::vector<int64_t>{dims[0], channels / block, 1, 1, block};
  return std::nullopt;
}

}  // namespace kiln::engine
