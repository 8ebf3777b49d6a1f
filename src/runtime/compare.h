// Comparing run-time values with tolerances, as ONNX's backend tests do: |a - b| <= atol + rtol*|b|.
#pragma once

#include <string>

#include "ir/rt_value.h"

namespace kiln {

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
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
