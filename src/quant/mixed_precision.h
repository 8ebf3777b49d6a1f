// --max-loss: mixed precision that keeps accuracy. Each quantized node's damage is the loss it
// causes at the model's outputs when it alone is quantized; the worst nodes are kept float, one
// at a time, until the whole model's loss is within the budget.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engine/runner.h"
#include "quant/evaluate.h"
#include "quant/quantize.h"

namespace kiln::quant {

// The loss of a model against the float one: 1 - the lowest cosine similarity of any output
// over the sets.
double output_loss(const std::vector<OutputError>& errors);

struct MixedPrecision {
  double loss_all = 0;    // every selected node quantized
  double loss_final = 0;  // with `kept_float` left float
  std::vector<std::pair<std::string, double>> damage;  // node, its loss alone; worst first
  std::vector<std::string> kept_float;                 // in the order they were taken out
  bool reached = false;
  int models_measured = 0;
};

// `float_model` is the model before quantization; `quantized` the decisions of quantizing all of
// it with `o` and `ranges`. Measures on `sets` on the fast engine against `reference`.
MixedPrecision search_mixed_precision(const Model& float_model, const QuantizeOptions& o,
                                      const TensorRanges& ranges,
                                      const std::vector<NodeDecision>& quantized,
                                      engine::ModelRunner& reference,
                                      const std::vector<FeedSet>& sets, double max_loss,
                                      bool progress);

}  // namespace kiln::quant
