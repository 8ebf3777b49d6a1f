#include "profile/precision_forecast.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "engine/onednn/gemm_probe.h"
#include "profile/report_format.h"
#include "support/error.h"

namespace kiln {

namespace {

// A step's fixed cost that no precision shortens (dispatch, a primitive's setup per call).
constexpr double kStepOverheadMs = 0.004;

bool computes_reduced(const std::string& op, ReducedPrecision p) {
  static const std::set<std::string> heavy = {"Conv", "ConvTranspose", "MatMul", "Gemm"};
  if (p == ReducedPrecision::kInt8Dynamic) return op == "MatMul" || op == "Gemm";
  return heavy.contains(op);
}

// Whether v is known before a run: an initializer, or made from initializers alone (a Transpose of
// a weight at -O0), as the engine folds it.
bool known_before_run(const Value* v, int depth = 0) {
  if (!v) return false;
  if (v->is_constant()) return true;
  const Node* p = v->producer;
  if (!p || depth > 16 || v->is_graph_input) return false;
  for (const Value* in : p->inputs)
    if (in && !known_before_run(in, depth + 1)) return false;
  return true;
}

// Whether kiln runs the node in reduced precision: a conv or matmul whose weight (input 1) is
// known before a run. Products of two activations (attention's Q K^T and P V) stay float32 in
// every mode: kiln quantize leaves them out, and bf16 packs constant weights only. A node of no
// graph (a test's) is taken as having one.
bool weight_is_constant(const ProfiledNode& pn) {
  if (!pn.node) return true;
  return pn.node->inputs.size() > 1 && known_before_run(pn.node->inputs[1]);
}

// Ops that move int8 as they moved float between quantized nodes of a static QDQ model.
bool moves_int8(const std::string& op) {
  static const std::set<std::string> movers = {
      "Relu", "MaxPool", "AveragePool", "GlobalAveragePool", "Add", "Concat", "Reshape", "Flatten",
      "Transpose", "Squeeze", "Unsqueeze", "Clip", "Reorder", "Resize", "Pad", "Slice", "Split"};
  return movers.contains(op);
}

// Bytes of the node's constant inputs (its weights) and of the rest, per execution.
std::pair<double, double> weight_and_activation_bytes(const ProfiledNode& n) {
  double weights = 0, rest = 0;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const bool constant = n.node && i < n.node->inputs.size() && n.node->inputs[i] &&
                          n.node->inputs[i]->is_constant();
    (constant ? weights : rest) += n.inputs[i].bytes;
  }
  for (const OperandShape& o : n.outputs) rest += o.bytes;
  return {weights, rest};
}

int64_t product(const std::vector<int64_t>& d, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to && i < d.size(); ++i) p *= d[i];
  return p;
}

// The node's work as one (m x k) by (k x n) product: a Conv of group 1 as its im2col form, a
// MatMul or Gemm with 2-D weights; nullopt for the rest (grouped convs, batched products).
std::optional<std::tuple<int64_t, int64_t, int64_t>> product_shape(const ProfiledNode& n) {
  if (n.inputs.size() < 2 || n.outputs.empty() || !n.inputs[0].present || !n.inputs[1].present ||
      !n.outputs[0].present)
    return std::nullopt;
  const auto &x = n.inputs[0].dims, &w = n.inputs[1].dims, &y = n.outputs[0].dims;
  if (n.op_type == "Conv") {
    if (x.size() < 3 || w.size() != x.size() || y.size() != x.size() || w[1] != x[1]) return std::nullopt;
    return std::tuple{y[0] * product(y, 2, y.size()), w[1] * product(w, 2, w.size()), w[0]};
  }
  if ((n.op_type == "MatMul" || n.op_type == "Gemm") && w.size() == 2 && !y.empty()) {
    const int64_t cols = y.back(), rows = product(y, 0, y.size() - 1);
    return std::tuple{rows, w[0] * w[1] / std::max<int64_t>(cols, 1), cols};
  }
  return std::nullopt;
}

}  // namespace

GemmGain measured_gemm_gain(ReducedPrecision precision, int threads) {
  using engine::GemmPrecision;
  const GemmPrecision reduced = precision == ReducedPrecision::kBf16 ? GemmPrecision::kBf16 : GemmPrecision::kInt8;
  auto seen = std::make_shared<std::map<std::tuple<int64_t, int64_t, int64_t>, double>>();
  return [=](int64_t m, int64_t k, int64_t n) {
    const auto key = std::tuple{m, k, n};
    if (auto it = seen->find(key); it != seen->end()) return it->second;
    const double f32 = engine::measure_gemm_ops(GemmPrecision::kF32, m, k, n, threads);
    const double r = engine::measure_gemm_ops(reduced, m, k, n, threads);
    return (*seen)[key] = f32 > 0 && r > 0 ? r / f32 : 0.0;
  };
}

const char* precision_name(ReducedPrecision p) {
  switch (p) {
    case ReducedPrecision::kInt8Static: return "int8 static";
    case ReducedPrecision::kInt8Dynamic: return "int8 dynamic";
    case ReducedPrecision::kBf16: return "bf16";
  }
  return "?";
}

ReducedPrecision parse_reduced_precision(const std::string& s) {
  if (s == "int8") return ReducedPrecision::kInt8Static;
  if (s == "int8-dynamic") return ReducedPrecision::kInt8Dynamic;
  if (s == "bf16") return ReducedPrecision::kBf16;
  fail(ErrorKind::kBadInput, "unknown precision '{}': int8, int8-dynamic or bf16", s);
}

PrecisionForecast forecast_precision(const ProfileData& data, const ProfileSummary& summary,
                                     const MachinePeak& peak, ReducedPrecision precision, const GemmGain& gain) {
  PrecisionForecast f;
  f.precision = precision;
  f.fp32_ms = summary.latency.mean_ms;
  const bool bf16 = precision == ReducedPrecision::kBf16;
  // int8 is native with a dot product of 8-bit values (VNNI, AMX). Before it (AVX2, AVX-512BW)
  // oneDNN sums pairs of products in int16, which saturates: kiln's static int8 convs and
  // matmuls compute in float there (onednn/int8_support.h), no faster than fp32, and the dynamic
  // int8 matmuls run on kiln's own exact int16 kernel (cpu/int16_gemm.h), whose speed the probe's
  // int8 matmul figure is then.
  const bool int8_dot = peak.int8_isa == "avx512_vnni" || peak.int8_isa.rfind("amx", 0) == 0;
  const bool int16 = !bf16 && !int8_dot && precision == ReducedPrecision::kInt8Dynamic && peak.gemm_int8_gops > 0;
  f.native = bf16 ? peak.bf16_native : int8_dot || int16;
  f.units = bf16 ? (peak.bf16_native ? peak.bf16_isa : "emulated") : int16 ? "int16 (" + peak.int8_isa + ")" : peak.int8_isa;
  // Compute-bound work speeds up as oneDNN's matmul did on this CPU (the instruction peaks say
  // what the units could do; the kernels reach a different share of each); without that figure,
  // as the instruction peaks do.
  const double fp32_peak = peak.gflops * 1e9, bandwidth = peak.gbps() * 1e9;
  const double gemm_reduced = bf16 ? peak.gemm_bf16_gops : peak.gemm_int8_gops;
  const double compute_gain =
      peak.gemm_f32_gops > 0 && gemm_reduced > 0
          ? gemm_reduced / peak.gemm_f32_gops
          : (bf16 ? peak.bf16_gflops : peak.int8_gops) / std::max(peak.gflops, 1e-9);
  const double reduced_peak = fp32_peak * compute_gain;
  double saved_ms = 0;
  std::set<const Node*> profiled;  // nodes that ran as steps of their own
  for (const ProfiledNode& pn : data.nodes)
    if (pn.node) profiled.insert(pn.node);
  for (const WorkStats& w : summary.nodes) {
    if (w.depth != 0 || w.entry < 0) continue;
    const ProfiledNode& pn = data.nodes.at(w.entry);
    NodeForecast n{.node = w.label, .op_type = w.op_type, .kernel = w.kernels, .fp32_ms = w.ms,
                   .predicted_ms = w.ms, .reduced = false, .basis = "stays fp32"};
    const double per_call = w.calls > 0 ? 1.0 / w.calls : 0;  // WorkStats are per run
    const double flops = w.flops * per_call, bytes = w.bytes * per_call;
    const double overhead = std::min(w.ms, kStepOverheadMs * w.calls);
    if (computes_reduced(w.op_type, precision) && weight_is_constant(pn) && flops > 0 && fp32_peak > 0 &&
        bandwidth > 0) {
      n.reduced = true;
      if (!f.native) {
        n.basis = "emulated: no faster than fp32";
      } else {
        const auto [weights, activations] = weight_and_activation_bytes(pn);
        double reduced_bytes = bytes / 2;  // bf16
        if (precision == ReducedPrecision::kInt8Static) reduced_bytes = bytes / 4;
        if (precision == ReducedPrecision::kInt8Dynamic) {
          // int8 weights; the float activation is read to find its range, read again and
          // written as int8, then read as int8; the output stays float.
          const double in = pn.inputs.empty() ? 0 : pn.inputs[0].bytes;
          // (int16's packed weights are 2 bytes a value, its A widened to int16 too.)
          reduced_bytes = weights / (int16 ? 2 : 4) + (activations - in) + 2 * in + in / 4 + in / (int16 ? 2 : 4);
        }
        double node_peak = reduced_peak;  // at the node's own product shape, when measured
        if (const auto shape = gain ? product_shape(pn) : std::nullopt) {
          const auto [m, k, nn] = *shape;
          if (const double g = gain(m, k, nn); g > 0) {
            node_peak = fp32_peak * g;
            ++f.shapes_measured;
          }
        }
        const double roof_fp32 = std::max(flops / fp32_peak, bytes / bandwidth);
        const double roof_reduced = std::max(flops / node_peak, reduced_bytes / bandwidth);
        n.predicted_ms = overhead + (w.ms - overhead) * roof_reduced / roof_fp32;
        n.basis = flops / node_peak >= reduced_bytes / bandwidth ? "compute-bound" : "memory-bound";
      }
    } else if (precision == ReducedPrecision::kInt8Static && f.native && moves_int8(w.op_type)) {
      n.reduced = true;
      n.basis = "moves int8";
      n.predicted_ms = overhead + (w.ms - overhead) / 4;
    }
    saved_ms += n.fp32_ms - n.predicted_ms;
    f.nodes.push_back(std::move(n));
    // Static int8: a residual Add that rode in this conv's step in fp32 (a sum post-op) becomes a
    // step of its own between QDQ pairs: two int8 tensors read, one written, at the bandwidth.
    if (precision == ReducedPrecision::kInt8Static && f.native && w.op_type == "Conv" && pn.node &&
        !pn.node->outputs.empty() && pn.node->outputs[0] && !pn.outputs.empty() && bandwidth > 0) {
      for (const Use& u : pn.node->outputs[0]->uses) {
        if (!u.node || u.node->op_type != "Add" || profiled.contains(u.node)) continue;
        const double elems = pn.outputs[0].bytes / 4;  // the float output's elements
        const double ms = kStepOverheadMs + 3 * elems / bandwidth * 1e3;
        f.nodes.push_back({.node = u.node->name, .op_type = "Add", .kernel = "fused in fp32", .fp32_ms = 0,
                           .predicted_ms = ms, .reduced = true, .basis = "an int8 step of its own"});
        saved_ms -= ms;
        break;
      }
    }
  }
  f.predicted_ms = std::max(f.fp32_ms - saved_ms, 1e-6);
  f.note = fmt::format(
      "from this profile ({} runs) and this CPU's measures: {} matmul {:.1f}x faster in {} "
      "({} vs {} GOP/s), memory {} GB/s; each changed node keeps the share of its roofline it "
      "reached in fp32{}",
      summary.runs, int16 ? "kiln's int16" : "oneDNN's", compute_gain, bf16 ? "bf16" : "int8", format_rate(gemm_reduced),
      format_rate(peak.gemm_f32_gops), format_rate(peak.gbps()),
      f.shapes_measured ? fmt::format(", {} nodes scaled by that matmul at their own shape", f.shapes_measured)
                        : std::string());
  if (!f.native)
    f.note = bf16 ? "this CPU has no native bf16 (no AVX-512 BF16 or AMX): bf16 would be emulated, "
                    "and no faster than fp32"
                  : peak.int8_isa == "none"
                        ? "this CPU has no int8 instructions kiln knows"
                        : fmt::format("this CPU's int8 instructions ({}) sum pairs of products in "
                                      "int16, which saturates: kiln computes static int8 models in "
                                      "float there (exact), no faster than fp32{}",
                                      peak.int8_isa,
                                      peak.gemm_int8_gops > 0 ? " (dynamic int8's matmuls run on kiln's "
                                                                "int16 kernel: --predict int8-dynamic)"
                                                              : "");
  return f;
}

nlohmann::ordered_json forecast_json(const PrecisionForecast& f) {
  nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
  for (const NodeForecast& n : f.nodes)
    nodes.push_back({{"node", n.node}, {"op_type", n.op_type}, {"kernel", n.kernel},
                     {"fp32_ms", n.fp32_ms}, {"predicted_ms", n.predicted_ms},
                     {"reduced", n.reduced}, {"basis", n.basis}});
  return {{"precision", precision_name(f.precision)}, {"units", f.units}, {"native", f.native},
          {"fp32_ms", f.fp32_ms}, {"predicted_ms", f.predicted_ms}, {"speedup", f.speedup()},
          {"note", f.note}, {"nodes", nodes}};
}

std::string forecast_text(const PrecisionForecast& f, int top_nodes) {
  std::string out = fmt::format("predicted {}: {} -> {} per run, {:.2f}x on {}\n  {}\n",
                                precision_name(f.precision), format_ms(f.fp32_ms),
                                format_ms(f.predicted_ms), f.speedup(), f.units, f.note);
  std::vector<const NodeForecast*> saved;
  for (const NodeForecast& n : f.nodes)
    if (n.reduced) saved.push_back(&n);
  std::stable_sort(saved.begin(), saved.end(), [](const NodeForecast* a, const NodeForecast* b) {
    return a->fp32_ms - a->predicted_ms > b->fp32_ms - b->predicted_ms;
  });
  if (static_cast<int>(saved.size()) > top_nodes) saved.resize(top_nodes);
  for (const NodeForecast* n : saved)
    out += fmt::format("  {:<40} {:<8} {:>10} -> {:>10}  {}\n", n->node, n->op_type,
                       format_ms(n->fp32_ms), format_ms(n->predicted_ms), n->basis);
  return out;
}

}  // namespace kiln
