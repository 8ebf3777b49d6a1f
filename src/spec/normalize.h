// Opset normalization: older forms of ops rewritten at import into their newest form (attributes
// that later became inputs), and back at export, so the rest of kiln sees one form of each op.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace kiln {

// An attribute of ops before opset `before` that is input `input` from that opset on.
struct AttrToInput {
  std::string attr;
  int input;
  DataType dtype;  // kUndefined: the dtype of input 0
  bool scalar;     // a 0-D tensor (Pad value, Clip min/max, Dropout ratio) instead of 1-D
};
struct NormalizeRule {
  std::string op;
  int before;
  std::vector<AttrToInput> moves;
};
const std::vector<NormalizeRule>& normalize_rules();

// In place, in every graph, subgraph and function body of the model.
void normalize_opsets(Model& m);
// The reverse, for writing a node in its model's opset: constant inputs back into attributes.
struct Denormalized {
  std::vector<const Value*> inputs;   // null: omitted
  std::vector<Attribute> extra_attrs;
  std::string replaced_attr;  // an attribute of the node written as one of extra_attrs instead
};
Denormalized denormalize(const Node& n);

}  // namespace kiln
