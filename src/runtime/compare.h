// Comparing run-time values with tolerances, as ONNX's backend tests do: |a - b| <= atol + rtol*|b|.
#pragma once

#include <string>

#include "ir/rt_value.h"

namespace kiln {

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
  // atol times the expected tensor's largest finite magnitude, where that is above 1: for a whole
  // network's outputs, whose elements near 0 come out of float32 sums of far larger terms and
  // differ between correct implementations by more than a fixed atol (Inception v3's logits reach
  // 8.8; ONNX Runtime, kiln's reference and kiln's fast engine differ by 2-4e-4 on them).
  bool atol_scales = false;
};

struct Comparison {
  bool equal = true;
  std::string reason;        // why not, when not equal
  double max_abs_error = 0;
  double max_rel_error = 0;
};

// `expected` is the reference. NaN equals NaN; dtypes and shapes must match exactly.
// shape_only: compare dtype and shape, not values (random ops).
Comparison compare_values(const RtValue& actual, const RtValue& expected, const Tolerance& tol,
                          bool shape_only = false);

}  // namespace kiln
