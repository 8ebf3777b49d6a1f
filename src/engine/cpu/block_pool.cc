#include "engine/cpu/block_pool.h"

#include <algorithm>
#include <vector>

#include "engine/cpu/kernels.h"
#include "engine/cpu/parallel.h"

namespace kiln::cpu {

void block_pool(const BlockPoolShape& s, const float* x, float* y) {
  const int64_t rows = s.batch * s.blocks() * s.out_h;
  const int64_t row_work = s.out_w * s.block * s.kh * s.kw;
  const IsaKernels& k = kernels();
  // A mean's taps per output column (inside the input), the same for every row.
  std::vector<int64_t> cols(static_cast<size_t>(s.max ? 0 : s.out_w));
  for (int64_t o = 0; o < static_cast<int64_t>(cols.size()); ++o) {
    const int64_t left = o * s.stride_w - s.pad_left;
    cols[o] = std::min(s.w, left + s.kw) - std::max<int64_t>(0, left);
  }
  parallel_for(rows, std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(row_work, 1)),
               [&](int64_t first, int64_t last) {
                 std::vector<const float*> in(static_cast<size_t>(s.kh));
                 std::vector<float> scale(cols.size());
                 for (int64_t r = first; r < last; ++r) {
                   const int64_t plane = r / s.out_h, oh = r % s.out_h;  // plane: n * blocks + cb
                   const int64_t top = oh * s.stride_h - s.pad_top;
                   const int64_t i0 = std::max<int64_t>(0, top), i1 = std::min(s.h, top + s.kh);
                   for (int64_t i = i0; i < i1; ++i) in[i - i0] = x + ((plane * s.h + i) * s.w) * s.block;
                   for (size_t o = 0; o < scale.size(); ++o)
                     scale[o] = 1.0f / static_cast<float>(s.include_pad ? s.kh * s.kw : (i1 - i0) * cols[o]);
                   k.pool_row(in.data(), i1 - i0, s.w, s.kw, s.stride_w, s.pad_left, s.block, s.max,
                              scale.data(), y + ((plane * s.out_h + oh) * s.out_w) * s.block, s.out_w);
                 }
               },
               1);
}

}  // namespace kiln::cpu
