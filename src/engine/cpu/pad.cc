#include "engine/cpu/pad.h"

#include <cstring>

#include "engine/cpu/parallel.h"

namespace kiln::cpu {

namespace {

// The last axis as runs: `len` output positions from `out`, reading input `from`, `from` + 1 ...
// (from -1: the constant).
struct Run {
  int64_t out, len, from;
};

std::vector<Run> runs_of(const std::vector<int64_t>& src) {
  std::vector<Run> runs;
  for (int64_t o = 0; o < static_cast<int64_t>(src.size()); ++o) {
    const int64_t s = src[o];
    if (!runs.empty()) {
      Run& r = runs.back();
      const bool fill = r.from < 0 && s < 0;
      const bool next = r.from >= 0 && s == r.from + r.len;
      if (fill || next) {
        ++r.len;
        continue;
      }
    }
    runs.push_back({o, 1, s < 0 ? -1 : s});
  }
  return runs;
}

void fill(char* dst, int64_t count, const char* value, size_t elem) {
  if (!value) {
    std::memset(dst, 0, static_cast<size_t>(count) * elem);
    return;
  }
  for (int64_t i = 0; i < count; ++i) std::memcpy(dst + i * elem, value, elem);
}

}  // namespace

void pad(const void* x, void* y, const PadTables& t, const void* value, size_t elem) {
  const int rank = static_cast<int>(t.y_dims.size());
  const char* in = static_cast<const char*>(x);
  char* out = static_cast<char*>(y);
  const char* v = static_cast<const char*>(value);
  if (rank == 0) {
    std::memcpy(out, in, elem);
    return;
  }
  int64_t rows = 1;
  for (int k = 0; k + 1 < rank; ++k) rows *= t.y_dims[k];
  const int64_t row_len = t.y_dims[rank - 1];
  if (rows == 0 || row_len == 0) return;
  std::vector<int64_t> x_strides(rank, 1);
  for (int k = rank - 2; k >= 0; --k) x_strides[k] = x_strides[k + 1] * t.x_dims[k + 1];
  const std::vector<Run> runs = runs_of(t.src[rank - 1]);
  const int64_t row_bytes = row_len * static_cast<int64_t>(elem);
  parallel_for(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(row_bytes, 1)), [&](int64_t begin, int64_t end) {
    std::vector<int64_t> idx(rank, 0);
    for (int64_t r = begin, k = rank - 2; k >= 0; --k) {  // the first row's index
      idx[k] = r % t.y_dims[k];
      r /= t.y_dims[k];
    }
    for (int64_t r = begin; r < end; ++r) {
      char* dst = out + r * row_bytes;
      int64_t off = 0;
      bool constant = false;
      for (int k = 0; k + 1 < rank && !constant; ++k) {
        const int64_t s = t.src[k][idx[k]];
        if (s < 0) constant = true;
        else off += s * x_strides[k];
      }
      if (constant) {
        fill(dst, row_len, v, elem);
      } else {
        for (const Run& run : runs) {
          char* d = dst + run.out * static_cast<int64_t>(elem);
          if (run.from < 0) {
            fill(d, run.len, v, elem);
          } else {
            std::memcpy(d, in + (off + run.from) * static_cast<int64_t>(elem),
                        static_cast<size_t>(run.len) * elem);
          }
        }
      }
      for (int k = rank - 2; k >= 0; --k) {
        if (++idx[k] < t.y_dims[k]) break;
        idx[k] = 0;
      }
    }
  }, 1);
}

}  // namespace kiln::cpu
