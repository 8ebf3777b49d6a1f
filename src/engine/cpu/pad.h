// Pad for tensors of any element type (given by its size in bytes), through the per-axis source
// tables of ops/pad_geometry.h: every mode and negative pads (crops) alike. Rows of the last axis
// are copied in runs (memcpy) and filled with the constant where they read outside the input;
// large outputs run on the OpenMP threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln::cpu {

struct PadTables {
  std::vector<int64_t> x_dims, y_dims;
  std::vector<std::vector<int64_t>> src;  // per axis, per output position: input index or -1
};

// y (y_dims, row-major) from x (x_dims, row-major); `value` points at one element of the constant
// (zero bytes when null).
void pad(const void* x, void* y, const PadTables& t, const void* value, size_t elem_size);

}  // namespace kiln::cpu
