// What reduced precision should buy, said before any of it is done: from a float model's profile
// on this machine and the machine's measured peaks (fp32 FMA, int8 and bf16 dot products, memory
// bandwidth), each node's expected time in int8 or bf16 and the model's expected speedup.
//
// The model, per node of the profile (mean time t, FLOPs F, bytes B as it ran in fp32):
//   - a node the precision changes (Conv, MatMul, Gemm ...) keeps the share of its roofline it
//     reached in fp32: its time less a fixed step overhead scales by
//     max(F / P_reduced, B' / BW) / max(F / P_fp32, B / BW), with P_reduced the fp32 peak times
//     the speedup oneDNN's matmul showed in the reduced precision (at the node's own product
//     shape when a GemmGain measures it: a batch-1 layer reaches less of AMX's peak than a large
//     product does; else at the peak probe's 256 x 1024 x 1024), B' the bytes it moves in the
//     reduced form (int8: a quarter; bf16: half; dynamic int8: the weights a quarter, the float
//     activation read once more to quantize it);
//   - in static int8, the data-movement ops between quantized nodes (Relu, pools, Add, Concat,
//     reshapes, reorders) move a quarter of the bytes, and a residual Add that ran inside a
//     conv's step in fp32 (a sum post-op) is a step of its own: three int8 tensors' bytes at the
//     memory bandwidth, plus a step's overhead;
//   - every other node keeps its time.
// `kiln quantize --predict` prints it; the quantize report puts it beside the measured speedup.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profile/peak_probe.h"
#include "profile/profile_data.h"
#include "profile/summary.h"

namespace kiln {

enum class ReducedPrecision { kInt8Static, kInt8Dynamic, kBf16 };
const char* precision_name(ReducedPrecision p);  // "int8 static", "int8 dynamic", "bf16"
// From the CLI's spelling: "int8" (static), "int8-dynamic", "bf16"; kBadInput otherwise.
ReducedPrecision parse_reduced_precision(const std::string& s);

struct NodeForecast {
  std::string node, op_type, kernel;
  double fp32_ms = 0, predicted_ms = 0;
  bool reduced = false;  // computes in the reduced precision
  std::string basis;     // why: "compute-bound", "memory-bound", "moves int8", "stays fp32"
};

struct PrecisionForecast {
  ReducedPrecision precision = ReducedPrecision::kInt8Static;
  std::string units;      // what would run it: "amx_int8", "avx512_vnni", ... or "emulated"
  bool native = true;     // false: bf16 on a CPU without it (no speedup to expect)
  double fp32_ms = 0;     // the profile's mean run
  double predicted_ms = 0;
  std::vector<NodeForecast> nodes;  // the main graph's nodes, most fp32 time first
  std::string note;                 // one line on what the figure rests on
  int shapes_measured = 0;          // nodes whose gain was measured at their own product shape

  double speedup() const { return predicted_ms > 0 ? fp32_ms / predicted_ms : 0; }
};

// The speedup of the reduced precision over fp32 that oneDNN's matmul shows on an (m x k) by
// (k x n) product here; 0 or less when it cannot tell.
using GemmGain = std::function<double(int64_t m, int64_t k, int64_t n)>;
// Measures it (oneDNN's matmul in both precisions at that shape, `threads` threads), each shape
// once.
GemmGain measured_gemm_gain(ReducedPrecision precision, int threads);

PrecisionForecast forecast_precision(const ProfileData& data, const ProfileSummary& summary,
                                     const MachinePeak& peak, ReducedPrecision precision,
                                     const GemmGain& gain = {});

nlohmann::ordered_json forecast_json(const PrecisionForecast& f);
// A text block: the model's figure, then the nodes with the most time saved.
std::string forecast_text(const PrecisionForecast& f, int top_nodes = 10);

}  // namespace kiln
