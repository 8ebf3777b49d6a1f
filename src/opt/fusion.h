// What the fusion passes share: matching small subgraphs node by node and replacing a match by
// one fused ONNX op, when the model's opset has it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "opt/graph_edit.h"
#include "opt/pass.h"

namespace kiln::opt {

// The node making v when it is ai.onnx `op` in graph g.
Node* made_by(const Graph& g, const Value* v, std::string_view op);
// The only reader of v when it is ai.onnx `op` (null when v has other readers or is an output).
Node* read_by(const Graph& g, const Value* v, std::string_view op);

// The single value of a constant (all elements equal), if it is one.
std::optional<double> scalar(const Value* v, const InferFacts& f);
// A constant whose elements all equal `want` (to a relative 1e-4).
bool is_scalar(const Value* v, const InferFacts& f, double want);

// A matched subgraph: the nodes it replaces and the value it computes.
struct Match {
  std::vector<Node*> nodes;
  Value* out = nullptr;
};

// The fused node replaces the match: it takes over the match's output (and its name when that is
// a graph output); the matched nodes are removed.
void replace_match(Graph& g, const Match& match, Node* fused);
std::vector<std::string> labels(const Match& m);

// Base for the fusions into ONNX ops of a given opset.
class FusionPass : public GraphPass {
 protected:
  // True when the model's opset has the fused op; a near miss names the opset needed otherwise.
  static bool opset_allows(const Model& m, const Node& anchor, PassContext& ctx, int needed,
                           std::string_view op);
};

}  // namespace kiln::opt
