// Transpose: axes collapsed first, then a copy of contiguous rows, a batch of cache-blocked 2-D
// transposes, or a general strided gather.
#include <algorithm>
#include <cstring>
#include <vector>

#include "engine/cpu/kernels.h"
#include "engine/cpu/layout.h"
#include "engine/cpu/parallel.h"
#include "support/error.h"

namespace kiln::cpu {
namespace {

constexpr int64_t kTile = 64;            // 2-D transposes go through kTile x kTile blocks
constexpr int64_t kGrainBytes = 256 << 10;

// Element types by size, so copies of 1, 2, 4 and 8 bytes are single moves.
template <size_t N>
struct Bytes {
  unsigned char b[N];
};

// x's dims and the permutation with axes of size 1 dropped and axes that stay neighbours merged.
struct Collapsed {
  std::vector<int64_t> dims;  // in x's order
  std::vector<int64_t> perm;  // y's axis i is x's axis perm[i]
};

Collapsed collapse(std::span<const int64_t> dims, std::span<const int64_t> perm) {
  const int rank = static_cast<int>(dims.size());
  // New numbers for x's axes of size > 1.
  std::vector<int> renum(rank, -1);
  std::vector<int64_t> kept_dims;
  for (int d = 0; d < rank; ++d)
    if (dims[d] != 1) {
      renum[d] = static_cast<int>(kept_dims.size());
      kept_dims.push_back(dims[d]);
    }
  std::vector<int64_t> kept_perm;
  for (int i = 0; i < rank; ++i)
    if (renum[perm[i]] >= 0) kept_perm.push_back(renum[perm[i]]);
  // Runs of consecutive x axes in y's order become one axis.
  Collapsed c;
  std::vector<int> group_of(kept_dims.size());
  std::vector<int64_t> first_axis;  // per group, its first x axis
  for (size_t i = 0; i < kept_perm.size(); ++i) {
    if (i > 0 && kept_perm[i] == kept_perm[i - 1] + 1) {
      group_of[kept_perm[i]] = group_of[kept_perm[i - 1]];
      continue;
    }
    group_of[kept_perm[i]] = static_cast<int>(first_axis.size());
    first_axis.push_back(kept_perm[i]);
  }
  // Groups in x's order give the collapsed dims; y's order gives the permutation.
  std::vector<int> order(first_axis.size());
  for (size_t g = 0; g < order.size(); ++g) order[g] = static_cast<int>(g);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return first_axis[a] < first_axis[b]; });
  std::vector<int64_t> x_pos(first_axis.size());
  for (size_t j = 0; j < order.size(); ++j) x_pos[order[j]] = static_cast<int64_t>(j);
  c.dims.assign(order.size(), 1);
  for (size_t a = 0; a < kept_dims.size(); ++a) c.dims[x_pos[group_of[a]]] *= kept_dims[a];
  for (size_t g = 0; g < first_axis.size(); ++g) c.perm.push_back(x_pos[g]);
  return c;
}

// y[b][c][r] = x[b][r][c] in kTile blocks; `tile` transposes one block.
template <class TileFn>
void transpose_2d(int64_t batch, int64_t rows, int64_t cols, size_t elem_size, TileFn tile) {
  const int64_t rb = (rows + kTile - 1) / kTile, cb = (cols + kTile - 1) / kTile;
  const int64_t tile_bytes = std::min(rows, kTile) * std::min(cols, kTile) * elem_size;
  parallel_for(batch * rb * cb, std::max<int64_t>(1, kGrainBytes / tile_bytes),
               [&](int64_t b, int64_t e) {
                 for (int64_t t = b; t < e; ++t) {
                   const int64_t i = t / (rb * cb), r = t / cb % rb * kTile, c = t % cb * kTile;
                   tile(i, r, c, std::min(kTile, rows - r), std::min(kTile, cols - c));
                 }
               }, 1);
}

template <class T>
void transpose_2d_typed(const T* x, T* y, int64_t batch, int64_t rows, int64_t cols) {
  transpose_2d(batch, rows, cols, sizeof(T),
               [&](int64_t i, int64_t r0, int64_t c0, int64_t nr, int64_t nc) {
                 const T* src = x + i * rows * cols;
                 T* dst = y + i * rows * cols;
                 for (int64_t r = r0; r < r0 + nr; ++r)
                   for (int64_t c = c0; c < c0 + nc; ++c) dst[c * rows + r] = src[r * cols + c];
               });
}

// General case: for each row of y (all axes but the last), a strided walk through x.
template <class T>
void transpose_general(const T* x, T* y, const Collapsed& c) {
  const int rank = static_cast<int>(c.dims.size());
  std::vector<int64_t> x_stride(rank, 1), y_dims(rank), src_stride(rank);
  for (int d = rank - 2; d >= 0; --d) x_stride[d] = x_stride[d + 1] * c.dims[d + 1];
  for (int i = 0; i < rank; ++i) {
    y_dims[i] = c.dims[c.perm[i]];
    src_stride[i] = x_stride[c.perm[i]];
  }
  const int64_t inner = y_dims[rank - 1], step = src_stride[rank - 1];
  int64_t rows = 1;
  for (int i = 0; i < rank - 1; ++i) rows *= y_dims[i];
  parallel_for(rows, std::max<int64_t>(1, kGrainBytes / (inner * sizeof(T))), [&](int64_t b,
                                                                                   int64_t e) {
    std::vector<int64_t> idx(rank, 0);
    int64_t off = 0;
    for (int64_t r = b, i = rank - 2; i >= 0; --i) {
      idx[i] = r % y_dims[i];
      r /= y_dims[i];
      off += idx[i] * src_stride[i];
    }
    for (int64_t r = b; r < e; ++r) {
      T* dst = y + r * inner;
      for (int64_t j = 0; j < inner; ++j) dst[j] = x[off + j * step];
      for (int i = rank - 2; i >= 0; --i) {
        ++idx[i];
        off += src_stride[i];
        if (idx[i] < y_dims[i]) break;
        off -= src_stride[i] * y_dims[i];
        idx[i] = 0;
      }
    }
  });
}

template <class T>
void transpose_typed(const void* xv, void* yv, const Collapsed& c) {
  const T* x = static_cast<const T*>(xv);
  T* y = static_cast<T*>(yv);
  const int rank = static_cast<int>(c.dims.size());
  const bool batched_2d = (rank == 2 && c.perm[0] == 1) ||
                          (rank == 3 && c.perm[0] == 0 && c.perm[1] == 2 && c.perm[2] == 1);
  if (!batched_2d) return transpose_general(x, y, c);
  const int64_t batch = rank == 3 ? c.dims[0] : 1;
  const int64_t rows = c.dims[rank - 2], cols = c.dims[rank - 1];
  if constexpr (sizeof(T) == 4) {
    const IsaKernels& k = kernels();
    const float* xf = reinterpret_cast<const float*>(x);
    float* yf = reinterpret_cast<float*>(y);
    transpose_2d(batch, rows, cols, 4, [&](int64_t i, int64_t r, int64_t col, int64_t nr, int64_t nc) {
      const int64_t base = i * rows * cols;
      k.transpose_4b(xf + base + r * cols + col, cols, yf + base + col * rows + r, rows, nr, nc);
    });
  } else {
    transpose_2d_typed(x, y, batch, rows, cols);
  }
}

// Rows of `inner` contiguous elements stay whole: a transpose of rows, each one memcpy.
void transpose_rows(const unsigned char* x, unsigned char* y, const Collapsed& c, size_t row_bytes) {
  Collapsed outer{std::vector<int64_t>(c.dims.begin(), c.dims.end() - 1),
                  std::vector<int64_t>(c.perm.begin(), c.perm.end() - 1)};
  // Copy rows as opaque elements of row_bytes through the general walk, chunked by size.
  auto copy_as = [&]<size_t N>() {
    transpose_general(reinterpret_cast<const Bytes<N>*>(x), reinterpret_cast<Bytes<N>*>(y), outer);
  };
  switch (row_bytes) {
    case 1: return copy_as.template operator()<1>();
    case 2: return copy_as.template operator()<2>();
    case 4: return copy_as.template operator()<4>();
    case 8: return copy_as.template operator()<8>();
    case 16: return copy_as.template operator()<16>();
    default: break;
  }
  // Long rows: walk the outer axes, one memcpy per row.
  const int rank = static_cast<int>(outer.dims.size());
  std::vector<int64_t> x_stride(rank, 1), y_dims(rank), src_stride(rank);
  for (int d = rank - 2; d >= 0; --d) x_stride[d] = x_stride[d + 1] * outer.dims[d + 1];
  int64_t rows = 1;
  for (int i = 0; i < rank; ++i) {
    y_dims[i] = outer.dims[outer.perm[i]];
    src_stride[i] = x_stride[outer.perm[i]];
    rows *= y_dims[i];
  }
  parallel_for(rows, std::max<int64_t>(1, kGrainBytes / static_cast<int64_t>(row_bytes)),
               [&](int64_t b, int64_t e) {
                 for (int64_t r = b; r < e; ++r) {
                   int64_t off = 0;
                   for (int64_t q = r, i = rank - 1; i >= 0; --i) {
                     off += q % y_dims[i] * src_stride[i];
                     q /= y_dims[i];
                   }
                   std::memcpy(y + r * row_bytes, x + off * row_bytes, row_bytes);
                 }
               }, 1);
}

}  // namespace

void transpose(const void* x, std::span<const int64_t> x_dims, std::span<const int64_t> perm,
               void* y, size_t elem_size) {
  const int rank = static_cast<int>(x_dims.size());
  KILN_CHECK(static_cast<int>(perm.size()) == rank, ErrorKind::kRuntime,
             "transpose: {} axes in the permutation, rank {}", perm.size(), rank);
  std::vector<bool> seen(rank, false);
  int64_t numel = 1;
  for (int i = 0; i < rank; ++i) {
    KILN_CHECK(perm[i] >= 0 && perm[i] < rank && !seen[perm[i]], ErrorKind::kRuntime,
               "transpose: perm is not a permutation of 0..{}", rank - 1);
    seen[perm[i]] = true;
    numel *= x_dims[i];
  }
  if (numel == 0) return;
  const Collapsed c = collapse(x_dims, perm);
  const int r = static_cast<int>(c.dims.size());
  if (r <= 1) {
    std::memcpy(y, x, numel * elem_size);
    return;
  }
  if (c.perm[r - 1] == r - 1)
    return transpose_rows(static_cast<const unsigned char*>(x), static_cast<unsigned char*>(y), c,
                          c.dims[r - 1] * elem_size);
  switch (elem_size) {
    case 1: return transpose_typed<uint8_t>(x, y, c);
    case 2: return transpose_typed<uint16_t>(x, y, c);
    case 4: return transpose_typed<uint32_t>(x, y, c);
    case 8: return transpose_typed<uint64_t>(x, y, c);
    case 16: return transpose_typed<Bytes<16>>(x, y, c);
    default:
      fail(ErrorKind::kUnsupported, "transpose: elements of {} bytes", elem_size);
  }
}

}  // namespace kiln::cpu
