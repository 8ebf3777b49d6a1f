// kiln's quantizer: a float model rewritten into int8 (dynamic or static, QDQ or QOperator) or
// fp16/bf16, with the record of what happened to each node.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "quant/calibrate.h"
#include "quant/options.h"
#include "quant/rewrite.h"
#include "quant/selection.h"

namespace kiln::quant {

struct QuantizeResult {
  std::vector<NodeDecision> decisions;  // quantized nodes, then candidates left float
  TensorRanges ranges;                  // static: the calibrated range of each tensor
  FloatConversion conversion;           // fp16/bf16
  int calibration_sets = 0;
  std::vector<std::string> notes;       // what else was done to the model (its opset raised ...)
};

// Rewrites m (loaded, checked and inferred) in place. Static mode runs the calibration over
// `sets` first (on a copy of m). Fails (kBadInput) on filters naming nothing in the model,
// (kBadModel) when nothing in it can be quantized, naming `model_name`.
QuantizeResult quantize(Model& m, const QuantizeOptions& o, const std::vector<FeedSet>& sets,
                        const std::vector<std::string>& set_names, const CalibrationOptions& copts,
                        const std::string& model_name);

// The same with the activation ranges given (static mode: from an earlier calibration holding
// every tensor the selected nodes need); no calibration runs.
QuantizeResult quantize_with_ranges(Model& m, const QuantizeOptions& o, const TensorRanges& ranges,
                                    const std::string& model_name);

// The checks quantize() starts with, for a caller that wants them before its own work: fails
// (kBadInput) on filters naming nothing in the model, (kBadModel) when nothing in it can be
// quantized in this mode. Takes Constant-node weights as initializers (as quantize() does).
void check_quantizable(Model& m, const QuantizeOptions& o, const std::string& model_name);

// A deep copy of m (through its serialized form), inferred.
Model clone_model(const Model& m);

}  // namespace kiln::quant
