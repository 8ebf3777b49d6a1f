// --predict: the speedup int8 kernels should give, before any calibration: the float model's
// profile on the fast engine, node by node, scaled by the roofline of this CPU in fp32 (kiln's
// cached peak probe) and in int8 (a VNNI dot-product probe measured here).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/rt_value.h"
#include "quant/selection.h"

namespace kiln::quant {

// int8 multiply-adds of this CPU, counted as 2 ops each (as FLOPs count an FMA), all threads;
// nullopt without AVX-512 VNNI (int8 then has no faster path than fp32 here).
std::optional<double> measure_int8_gops(int threads);

struct NodePrediction {
  std::string node, op;
  double fp32_ms = 0, int8_ms = 0;
  bool compute_bound = false;
};

struct Prediction {
  std::string cpu;
  double fp32_gflops = 0, gbps = 0;
  std::optional<double> int8_gops;
  double fp32_ms = 0;       // the profiled float model, mean run
  double predicted_ms = 0;  // the same with the quantized nodes at int8 speed
  double speedup() const { return predicted_ms > 0 ? fp32_ms / predicted_ms : 0; }
  std::vector<NodePrediction> nodes;  // the quantized nodes, most time saved first
};

// Profiles `float_model` (5 runs on `feeds`) and predicts the run with `int8_nodes` in int8: a
// node's measured time scaled by its roofline time in int8 (FLOPs at the int8 peak, bytes a
// quarter) over that in fp32; other nodes keep their time.
Prediction predict_speedup(const Model& float_model, const std::vector<RtValue>& feeds,
                           const std::vector<NodeDecision>& int8_nodes, int threads);

}  // namespace kiln::quant
