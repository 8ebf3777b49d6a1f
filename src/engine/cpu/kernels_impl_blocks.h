// The kernels of kernels_impl.h over 2-D blocks rather than rows: depthwise conv rows, rows times
// a small matrix, transposes of 4-byte elements. Included by kernels_impl.h only, inside its ISA
// namespace (after the row loops it uses, before the table that names these): no include guard,
// no includes of its own.

// Depthwise conv rows: blocks of 16 channels, 16 / W registers across.

constexpr int kDwBlock = 16;

// Kernels of kh x kw taps and a stride known at compile time: kOuts output pixels at a time
// (independent chains of fused multiply-adds), each input pixel loaded once for all the outputs of
// the group it reaches. The taps of W channels stay in registers when they fit beside the
// accumulators (AVX-512's and NEON's 32 registers), else one row of taps is loaded per kernel row
// (AVX2's 16: 3x3 taps and 8 outputs, or a 5x5's 25 taps, spilled to the stack, 0.74 ms for
// EfficientNet-B0's 240-channel 5x5 on Zen 3). A row that does not end on a whole group ends with
// one overlapping the one before (its outputs written twice, the same values). Rows of fewer
// outputs take a smaller group.
template <int KH, int KW, int S, int kOuts>
void depthwise_row_fixed(const float* const* rows, int64_t ldr, const float* w, const float* bias,
                         float* y, int64_t ldy, int64_t out_w) {  // out_w >= kOuts
  constexpr int kCols = (kOuts - 1) * S + KW;  // input pixels a group of outputs reads
  constexpr bool kAllTaps = KH * KW + kOuts + 1 <= Vec::kRegisters;
  for (int j = 0; j < kDwBlock; j += W) {
    Vec taps[kAllTaps ? KH * KW : KW];
    if constexpr (kAllTaps) {
#pragma GCC unroll 49
      for (int t = 0; t < KH * KW; ++t) taps[t] = Vec::load(w + t * kDwBlock + j);
    }
    const Vec b = Vec::load(bias + j);
    for (int64_t o = 0;; o += kOuts) {
      o = std::min(o, out_w - kOuts);
      Vec acc[kOuts];
#pragma GCC unroll 8
      for (int u = 0; u < kOuts; ++u) acc[u] = b;
#pragma GCC unroll 7
      for (int r = 0; r < KH; ++r) {
        if constexpr (!kAllTaps) {
#pragma GCC unroll 7
          for (int c = 0; c < KW; ++c) taps[c] = Vec::load(w + (r * KW + c) * kDwBlock + j);
        }
        const int t0 = kAllTaps ? r * KW : 0;  // row r's first tap in `taps`
        const float* row = rows[r] + o * S * ldr + j;
#pragma GCC unroll 32
        for (int i = 0; i < kCols; ++i) {
          const Vec v = Vec::load(row + i * ldr);
#pragma GCC unroll 8
          for (int u = 0; u < kOuts; ++u) {
            const int c = i - u * S;
            if (c >= 0 && c < KW) acc[u] = fma(v, taps[t0 + c], acc[u]);
          }
        }
      }
#pragma GCC unroll 8
      for (int u = 0; u < kOuts; ++u) acc[u].store(y + (o + u) * ldy + j);
      if (o + kOuts == out_w) break;
    }
  }
}

void depthwise_row_kernel(const float* const* rows, int64_t ldr, int64_t kh, int64_t kw,
                          int64_t stride, const float* w, const float* bias, float* y, int64_t ldy,
                          int64_t out_w) {
  // Groups of 8 outputs (3x3), or of 4 for a 5x5 whose 25 taps stay in registers beside them (8
  // where they do not), halved for shorter rows.
  constexpr int k5 = 25 + 4 + 1 <= Vec::kRegisters ? 4 : 8;
  const auto fixed = [&](auto kernel) { kernel(rows, ldr, w, bias, y, ldy, out_w); };
  const bool s1 = stride == 1;
  if (kh == 3 && kw == 3 && (s1 || stride == 2) && out_w >= 4) {
    if (out_w >= 8) return s1 ? fixed(depthwise_row_fixed<3, 3, 1, 8>) : fixed(depthwise_row_fixed<3, 3, 2, 8>);
    return s1 ? fixed(depthwise_row_fixed<3, 3, 1, 4>) : fixed(depthwise_row_fixed<3, 3, 2, 4>);
  }
  if (kh == 5 && kw == 5 && (s1 || stride == 2) && out_w >= 2) {
    if (out_w >= k5) return s1 ? fixed(depthwise_row_fixed<5, 5, 1, k5>) : fixed(depthwise_row_fixed<5, 5, 2, k5>);
    if (out_w >= 4) return s1 ? fixed(depthwise_row_fixed<5, 5, 1, 4>) : fixed(depthwise_row_fixed<5, 5, 2, 4>);
    return s1 ? fixed(depthwise_row_fixed<5, 5, 1, 2>) : fixed(depthwise_row_fixed<5, 5, 2, 2>);
  }
  const int64_t step = stride * ldr;
  for (int j = 0; j < kDwBlock; j += W)
    for (int64_t o = 0; o < out_w; ++o) {
      Vec acc = Vec::load(bias + j);
      for (int64_t r = 0; r < kh; ++r)
        for (int64_t c = 0; c < kw; ++c)
          acc = fma(Vec::load(rows[r] + o * step + c * ldr + j),
                    Vec::load(w + (r * kw + c) * kDwBlock + j), acc);
      acc.store(y + o * ldy + j);
    }
}

template <bool kRelu>
void block_affine_lanes(const float* x, float* y, int64_t rows, int64_t block, const float* a,
                        const float* b) {
  for (int64_t j = 0; j < block; j += W) {
    const int lanes = static_cast<int>(std::min<int64_t>(W, block - j));  // W > block: a part
    const Vec va = Vec::load(a + j, lanes), vb = Vec::load(b + j, lanes), zero = Vec::zero();
    const auto f = [&](Vec v) { return kRelu ? max(zero, fma(v, va, vb)) : fma(v, va, vb); };
    if (lanes == W) {
      for (int64_t r = 0; r < rows; ++r) f(Vec::load(x + r * block + j)).store(y + r * block + j);
    } else {
      for (int64_t r = 0; r < rows; ++r)
        f(Vec::load(x + r * block + j, lanes)).store(y + r * block + j, lanes);
    }
  }
}

void block_affine_kernel(const float* x, float* y, int64_t rows, int64_t block, const float* a,
                         const float* b, bool relu) {
  (relu ? block_affine_lanes<true> : block_affine_lanes<false>)(x, y, rows, block, a, b);
}

void lerp_kernel(const float* a, const float* b, float w, float* y, int64_t n) {
  const Vec wa = Vec::all(1.0f - w), wb = Vec::all(w);
  map2(a, b, y, n, [&](Vec u, Vec v) { return fma(v, wb, u * wa); });
}

// ---------------------------------------------------------------------------------------------
// Rows times a small matrix: R rows by V registers of columns at a time (R * V accumulators);
// each weight register loaded serves R rows, each x value broadcast serves V registers. The last
// register of a block may be partial (`lanes`).

template <int R, int V, bool kPartial>
inline void rows_block(const float* x, int64_t depth, const float* w, int64_t cols,
                       const float* bias, float* y, int64_t ldy, int lanes) {
  // Everything indexed by r and v unrolled, the partial register known at compile time: the
  // accumulators stay in registers (with a run-time test in the loop GCC kept them on the stack,
  // a load and a store around every multiply-add: 4x slower).
  const auto load = [&](const float* p, int v) {
    return kPartial && v == V - 1 ? Vec::load(p, lanes) : Vec::load(p);
  };
  Vec acc[R][V];
#pragma GCC unroll 16
  for (int v = 0; v < V; ++v) {
    const Vec b = load(bias + v * W, v);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc[r][v] = b;
  }
  for (int64_t k = 0; k < depth; ++k) {
    Vec wk[V];
#pragma GCC unroll 16
    for (int v = 0; v < V; ++v) wk[v] = load(w + k * cols + v * W, v);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const Vec xr = Vec::all(x[r * depth + k]);
#pragma GCC unroll 16
      for (int v = 0; v < V; ++v) acc[r][v] = fma(xr, wk[v], acc[r][v]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
    for (int v = 0; v < V; ++v) {
      if (kPartial && v == V - 1) acc[r][v].store(y + r * ldy + v * W, lanes);
      else acc[r][v].store(y + r * ldy + v * W);
    }
}

template <int V, bool kPartial>
inline void rows_panel(const float* x, int64_t rows, int64_t depth, const float* w, int64_t cols,
                       const float* bias, float* y, int64_t ldy, int lanes) {
  int64_t r = 0;
  // Four rows where their accumulators, the V weight registers and a broadcast fit the register
  // file (not 4 x 4 on AVX2's 16: they spilled).
  if constexpr (4 * V + V + 1 <= Vec::kRegisters)
    for (; r + 4 <= rows; r += 4)
      rows_block<4, V, kPartial>(x + r * depth, depth, w, cols, bias, y + r * ldy, ldy, lanes);
  // (Two rows together: each weight register serves both, and twice the independent chains.)
  for (; r + 2 <= rows; r += 2)
    rows_block<2, V, kPartial>(x + r * depth, depth, w, cols, bias, y + r * ldy, ldy, lanes);
  for (; r < rows; ++r) rows_block<1, V, kPartial>(x + r * depth, depth, w, cols, bias, y + r * ldy, ldy, lanes);
}

template <int V>
inline void rows_panel(const float* x, int64_t rows, int64_t depth, const float* w, int64_t cols,
                       const float* bias, float* y, int64_t ldy, int lanes) {
  if (lanes < W) rows_panel<V, true>(x, rows, depth, w, cols, bias, y, ldy, lanes);
  else rows_panel<V, false>(x, rows, depth, w, cols, bias, y, ldy, lanes);
}

void rows_times_matrix_kernel(const float* x, int64_t rows, int64_t depth, const float* w,
                              int64_t cols, const float* bias, float* y, int64_t ldy) {
  int64_t c = 0;
  if (rows == 1) {
    // A vector times a matrix (a recurrent step's product, recurrent_gemm.h): panels of 16
    // registers (8 of AVX2's 16), enough chains to hide the multiply-add's latency; 4 ran at
    // half the speed.
    constexpr int64_t kRegs = W == 8 ? 8 : 16;
    for (int64_t regs; (regs = std::min(kRegs, (cols - c) / W) / 4 * 4) >= 8; c += regs * W) {
      if (regs == 16) rows_block<1, 16, false>(x, depth, w + c, cols, bias + c, y + c, ldy, W);
      else if (regs == 12) rows_block<1, 12, false>(x, depth, w + c, cols, bias + c, y + c, ldy, W);
      else rows_block<1, 8, false>(x, depth, w + c, cols, bias + c, y + c, ldy, W);
    }
  }
  // Panels of up to 4 registers of columns (4 x 4 accumulators), the last one partial.
  for (; c < cols; c += 4 * W) {
    const int64_t width = cols - c < 4 * W ? cols - c : 4 * W;
    const int regs = static_cast<int>((width + W - 1) / W);
    const int lanes = static_cast<int>(width - (regs - 1) * W);
    const float *wc = w + c, *bc = bias + c;
    float* yc = y + c;
    switch (regs) {
      case 1: rows_panel<1>(x, rows, depth, wc, cols, bc, yc, ldy, lanes); break;
      case 2: rows_panel<2>(x, rows, depth, wc, cols, bc, yc, ldy, lanes); break;
      case 3: rows_panel<3>(x, rows, depth, wc, cols, bc, yc, ldy, lanes); break;
      default: rows_panel<4>(x, rows, depth, wc, cols, bc, yc, ldy, lanes); break;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Rows times a matrix given by its rows (a Linear layer's [N, K] weight, Gemm's transB): R rows
// by C weight rows at a time, each accumulator a register of partial sums along k, summed across
// its lanes at the end. Every load is contiguous (the weight rows are streamed as they are
// stored, no packed copy) and each weight register serves R rows.

template <int R, int C>
inline void rows_dot_block(const float* x, int64_t depth, const float* w, const float* bias,
                           float* y, int64_t ldy) {
  Vec acc[R][C];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) acc[r][c] = Vec::zero();
  const auto step = [&](int64_t k, auto load) {
    Vec xr[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) xr[r] = load(x + r * depth + k);
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) {
      const Vec wc = load(w + c * depth + k);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) acc[r][c] = fma(xr[r], wc, acc[r][c]);
    }
  };
  int64_t k = 0;
  for (; k + W <= depth; k += W) step(k, [](const float* p) { return Vec::load(p); });
  if (k < depth) {
    const int lanes = static_cast<int>(depth - k);
    step(k, [lanes](const float* p) { return Vec::load(p, lanes); });  // zeros past the row
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) y[r * ldy + c] = (bias ? bias[c] : 0.0f) + sum(acc[r][c]);
}

template <int R>
inline void rows_dot_panel(const float* x, int64_t depth, const float* w, int64_t cols,
                           const float* bias, float* y, int64_t ldy) {
  // One row (a vector times the matrix: the weights streamed once) takes 8 weight rows at a time
  // for independent chains; more rows take 4 (R * 4 accumulators, R + 1 loads a step).
  constexpr int C = R == 1 ? 8 : 4;
  int64_t c = 0;
  for (; c + C <= cols; c += C)
    rows_dot_block<R, C>(x, depth, w + c * depth, bias ? bias + c : nullptr, y + c, ldy);
  for (; c < cols; ++c) rows_dot_block<R, 1>(x, depth, w + c * depth, bias ? bias + c : nullptr, y + c, ldy);
}

void rows_times_rows_kernel(const float* x, int64_t rows, int64_t depth, const float* w,
                            int64_t cols, const float* bias, float* y, int64_t ldy) {
  constexpr int R = Vec::kRegisters >= 32 ? 4 : 2;  // 16 or 8 accumulators, the loads beside them
  int64_t r = 0;
  for (; r + R <= rows; r += R) rows_dot_panel<R>(x + r * depth, depth, w, cols, bias, y + r * ldy, ldy);
  for (; r < rows; ++r) rows_dot_panel<1>(x + r * depth, depth, w, cols, bias, y + r * ldy, ldy);
}

// ---------------------------------------------------------------------------------------------
// Transpose of 4-byte elements: register tiles, scalar edges.

void transpose_4b_kernel(const float* x, int64_t ldx, float* y, int64_t ldy, int64_t rows,
                         int64_t cols) {
  const int64_t full_r = rows / W * W, full_c = cols / W * W;
  for (int64_t r = 0; r < full_r; r += W)
    for (int64_t c = 0; c < full_c; c += W) transpose_tile(x + r * ldx + c, ldx, y + c * ldy + r, ldy);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t c0 = r < full_r ? full_c : 0;
    for (int64_t c = c0; c < cols; ++c) y[c * ldy + r] = x[r * ldx + c];
  }
}

void pool_row_kernel(const float* const* rows, int64_t nrows, int64_t w, int64_t kw, int64_t stride,
                     int64_t pad_left, int64_t block, bool is_max, const float* scale, float* y,
                     int64_t out_w) {
  for (int64_t j = 0; j < block; j += W) {
    const int lanes = static_cast<int>(std::min<int64_t>(W, block - j));
    for (int64_t o = 0; o < out_w; ++o) {
      const int64_t c0 = o * stride - pad_left;
      const int64_t lo = std::max<int64_t>(0, -c0), hi = std::min<int64_t>(kw, w - c0);
      Vec a = is_max ? Vec::all(-kInf) : Vec::zero();
      for (int64_t r = 0; r < nrows; ++r) {
        const float* p = rows[r] + c0 * block + j;
        for (int64_t t = lo; t < hi; ++t) {
          const Vec v = Vec::load(p + t * block, lanes);
          a = is_max ? max(v, a) : a + v;
        }
      }
      if (!is_max) a = a * Vec::all(scale[o]);
      a.store(y + o * block + j, lanes);
    }
  }
}
