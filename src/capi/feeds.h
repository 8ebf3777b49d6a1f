// The C API's inputs: caller tensors checked against the session's inputs and viewed (not copied)
// as engine feeds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "capi/handles.h"
#include "ir/rt_value.h"

namespace kiln::capi {

struct Feeds {
  std::vector<RtValue> values;              // in the session's input order (empty with dims_only)
  std::vector<std::vector<int64_t>> dims;   // the plan's signature
};

// Checks `count` tensors at `inputs` against the session's inputs: count, element type, rank, the
// model's known dims, symbolic dims that several inputs share, byte sizes and, for bool and the
// sub-byte types, the values. With `dims_only` the data is not looked at (kiln_session_output_dims).
Feeds make_feeds(const kiln_session& session, const kiln_tensor* inputs, size_t count, bool dims_only);

// "[batch,768]": the model's dims of a value, symbols by name.
std::string model_dims_text(const kiln_tensor_info& info);

}  // namespace kiln::capi
