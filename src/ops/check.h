// Schema checks of a loaded model: every op exists in its opset, counts and attributes are right,
// and every opset it imports is one kiln knows.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace kiln {

struct CheckOptions {
  // An opset import newer than kiln's newest of that domain (spec/op_types.h) is refused: its ops
  // may mean something else than kiln runs. Allowed, it becomes a warning.
  bool allow_newer_opset = false;
};

// Fails (kBadModel / kUnsupported) with a one-line message naming the node, its op and the problem.
// Returns the warnings (one line each) of what it let pass because `opts` allowed it.
std::vector<std::string> check_model(const Model& m, const CheckOptions& opts = {});

}  // namespace kiln
