// The predicted latency of a graph on a target: kiln's cost model (src/ops/cost.h: FLOPs and bytes
// per node at one plan's dims) under the target's roofline, node by node, summed. Every node's
// bytes are counted at DRAM bandwidth, so activations that stay in cache make it pessimistic and
// kernels below their roof make it optimistic: an estimate, not a bound. `kiln analyze` and
// `kiln compile` print it, and the measured latency beside it where the target runs here.
//
// The peaks: this machine's, measured by the peak probe (profile/peak_probe.h, cached per CPU) for
// the target it is; another x86 level on this machine scales the measured fp32 peak by the vector
// width (SSE4.1 4 lanes, AVX2 8, AVX-512 16) at the same bandwidth; aarch64-linux is a documented
// reference core (docs/backends.md): a Neoverse-N1-class core (Graviton2, Ampere Altra), two
// 128-bit FMA pipes at 2.5 GHz, 40 GFLOP/s fp32 and 80 GOP/s int8 a core, 20 GB/s a core up to
// 100 GB/s.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "engine/graph_facts.h"
#include "target/target.h"

namespace kiln::backend {

struct TargetPeaks {
  double gflops = 0;      // fp32, all threads
  double int8_gops = 0;   // int8 multiply-adds as 2 ops, all threads (0: as fp32)
  double gbps = 0;        // memory bandwidth
  std::string source;     // "measured on this CPU (AMD EPYC ...)", "scaled from ...", "reference core"
};

struct LatencyPrediction {
  double ms = 0;
  double compute_ms = 0, memory_ms = 0;  // the sums of each node's two times, for the why
  int nodes = 0, compute_bound = 0;      // nodes costed, and those above the ridge
  bool exact = true;                     // false when a node's dims were not all known
  TargetPeaks peaks;
};

// The target's peaks on `threads` threads (probing this machine once, cached).
TargetPeaks target_peaks(const Target& t, int threads);

// The graph of `facts` on `peaks`: folded nodes cost nothing; a node's time is the larger of its
// FLOPs over the peak (int8's for the integer ops) and its bytes over the bandwidth.
LatencyPrediction predict_latency(const engine::GraphFacts& facts, const TargetPeaks& peaks);

// "1.93 ms (roofline estimate: 41 of 52 nodes memory-bound; 2400 GFLOP/s, 80 GB/s measured on ...)".
std::string prediction_text(const LatencyPrediction& p);
// {"ms", "compute_ms", "memory_ms", "nodes", "compute_bound", "exact", "gflops", "int8_gops", "gbps", "peaks"}
nlohmann::json prediction_json(const LatencyPrediction& p);

}  // namespace kiln::backend
