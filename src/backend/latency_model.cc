#include "backend/latency_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "ops/cost.h"
#include "profile/peak_probe.h"

namespace kiln::backend {

namespace {

int lanes_of(const std::string& isa) {
  if (isa == "avx512") return 16;
  if (isa == "avx2") return 8;
  if (isa == "neon") return 4;
  return 4;  // scalar kernels and oneDNN capped at SSE4.1: 128-bit vectors
}

// The reference aarch64 core of docs/backends.md.
constexpr double kArmGflopsPerCore = 40, kArmInt8GopsPerCore = 80, kArmGbpsPerCore = 20, kArmGbpsMax = 100;

bool integer_op(const Node& n) {
  static const char* const kOps[] = {"QLinearConv", "QLinearMatMul", "ConvInteger", "MatMulInteger",
                                     "DynamicQuantizeMatMul", "QGemm"};
  return std::any_of(std::begin(kOps), std::end(kOps), [&](const char* op) { return n.op_type == op; });
}

// An operand at the plan's dims (the facts'), else as its type says.
OperandShape operand(const engine::GraphFacts& facts, const Value* v) {
  if (!v) return {};
  const std::vector<int64_t>* dims = facts.dims(v);
  if (!dims || !v->type.is_tensor()) return OperandShape::of(v);
  OperandShape s{.present = true, .dtype = v->type.elem, .dims = *dims};
  s.bytes = s.numel() * static_cast<double>(dtype_size(v->type.elem));
  return s;
}

}  // namespace

TargetPeaks target_peaks(const Target& t, int threads) {
  threads = std::max(threads, 1);
  if (t.arch != host_arch())
    return {kArmGflopsPerCore * threads, kArmInt8GopsPerCore * threads,
            std::min(kArmGbpsPerCore * threads, kArmGbpsMax),
            fmt::format("a reference {} core ({} threads; docs/backends.md)", t.arch, threads)};
  const MachinePeak m = machine_peak(threads, /*use_cache=*/true);
  TargetPeaks p{m.gflops, m.int8_gops, m.gbps(), fmt::format("measured on this CPU ({}, {} threads)", m.cpu, threads)};
  const int have = lanes_of(m.isa), want = lanes_of(t.kernel_isa);
  if (t.name != native_target().name && want != have) {
    const double scale = static_cast<double>(want) / have;
    p.gflops *= scale;
    p.int8_gops *= scale;
    p.source = fmt::format("this CPU's, scaled from {} to {} lanes ({}, {} threads)", have, want, m.cpu, threads);
  }
  return p;
}

LatencyPrediction predict_latency(const engine::GraphFacts& facts, const TargetPeaks& peaks) {
  LatencyPrediction r{.peaks = peaks};
  const double gflops = std::max(peaks.gflops, 1e-3), gbps = std::max(peaks.gbps, 1e-3);
  const double int8 = peaks.int8_gops > 0 ? peaks.int8_gops : gflops;
  for (const auto& n : facts.graph().nodes()) {
    if (facts.folded(n.get())) continue;
    std::vector<OperandShape> ins, outs;
    for (const Value* v : n->inputs) ins.push_back(operand(facts, v));
    for (const Value* v : n->outputs) outs.push_back(operand(facts, v));
    const NodeCost c = node_cost(*n, ins, outs);
    const double compute = c.flops / ((integer_op(*n) ? int8 : gflops) * 1e6);  // ms
    const double memory = c.bytes / (gbps * 1e6);
    r.ms += std::max(compute, memory);
    r.compute_ms += compute;
    r.memory_ms += memory;
    ++r.nodes;
    if (compute >= memory) ++r.compute_bound;
    r.exact = r.exact && c.exact;
  }
  return r;
}

std::string prediction_text(const LatencyPrediction& p) {
  return fmt::format("{:.3g} ms{} (roofline estimate: {} of {} nodes compute-bound; {:.0f} GFLOP/s, {:.0f} GB/s {})",
                     p.ms, p.exact ? "" : "+", p.compute_bound, p.nodes, p.peaks.gflops, p.peaks.gbps, p.peaks.source);
}

nlohmann::json prediction_json(const LatencyPrediction& p) {
  return {{"ms", p.ms},
          {"compute_ms", p.compute_ms},
          {"memory_ms", p.memory_ms},
          {"nodes", p.nodes},
          {"compute_bound", p.compute_bound},
          {"exact", p.exact},
          {"gflops", p.peaks.gflops},
          {"int8_gops", p.peaks.int8_gops},
          {"gbps", p.peaks.gbps},
          {"peaks", p.peaks.source}};
}

}  // namespace kiln::backend
