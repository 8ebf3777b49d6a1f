// Which nodes a quantization mode rewrites, which it leaves in float and why; the checks of
// --include-ops, --exclude-ops and --exclude-nodes against the model.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "quant/options.h"

namespace kiln::quant {

// The precision a node ends up in, and why it stayed float when it did.
struct NodeDecision {
  std::string node;
  std::string op;
  std::string precision;  // "int8", "float", "fp16", "bf16"
  std::string reason;     // empty when quantized
};

struct Selection {
  std::vector<Node*> nodes;            // to quantize, in graph order
  std::vector<NodeDecision> skipped;   // candidates of a quantizable op left float
};

// The display name of a node: its name, else its first output's.
std::string node_label(const Node& n);

// Fails (kBadInput) on an --include-ops op kiln cannot quantize in this mode, an --exclude-ops op
// the model has no node of, an --exclude-nodes name no node has, naming the flag and the model.
void check_filters(const Graph& g, const QuantizeOptions& o, const std::string& model_name);

// The quantizable nodes of g and its subgraphs for o's mode and format.
Selection select_nodes(Graph& g, const QuantizeOptions& o);

// Index of the constant weight input of a selected node (1 for Conv, MatMul and Gemm).
inline constexpr int kWeightInput = 1;

}  // namespace kiln::quant
