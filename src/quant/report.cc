#include "quant/report.h"

#include <map>

#include <fmt/format.h>

namespace kiln::quant {

namespace {

std::string mb(int64_t b) { return fmt::format("{:.2f} MB", b / 1048576.0); }

std::string format_name(const QuantizeOptions& o) {
  if (o.mode == Mode::kDynamic) return "MatMulInteger (dynamic)";
  if (o.mode == Mode::kStatic) return o.format == Format::kQdq ? "QDQ" : "QOperator";
  if (o.mode == Mode::kBFloat16)
    return o.bf16_whole_graph ? "bfloat16, whole graph" : "bfloat16 weights, Cast to float32";
  return "float16";
}

}  // namespace

std::string summary_text(const QuantizeReport& r) {
  std::string s;
  std::map<std::string, int> by_precision;
  for (const auto& d : r.result.decisions) ++by_precision[d.precision];
  s += fmt::format("quantized {} -> {} ({} mode, {}) in {:.0f} ms\n", r.model, r.output,
                   mode_name(r.options.mode), format_name(r.options), r.quantize_ms);
  for (const std::string& n : r.result.notes) s += fmt::format("  note: {}\n", n);
  std::string counts;
  for (const auto& [p, n] : by_precision) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, p);
  s += fmt::format("  nodes: {}\n", counts.empty() ? "none" : counts);
  int shown = 0;
  for (const auto& d : r.result.decisions)
    if (d.precision == "float" && !d.reason.empty() && shown++ < 8)
      s += fmt::format("    float: {} ({}): {}\n", d.node, d.op, d.reason);
  if (shown > 8) s += fmt::format("    ... and {} more left float (see --report)\n", shown - 8);
  const FloatConversion& c = r.result.conversion;
  if (r.options.mode == Mode::kFloat16 || r.options.mode == Mode::kBFloat16)
    s += fmt::format("  initializers converted: {}, values clamped to the type's range: {}, "
                     "flushed to 0: {}, casts added: {}\n",
                     c.converted_initializers, c.clamped_values, c.flushed_values, c.casts_added);
  if (r.result.calibration_sets > 0)
    s += fmt::format("  calibration: {} sets, {}, {} tensors\n", r.result.calibration_sets,
                     method_name(r.options.method), r.result.ranges.size());
  if (r.mixed) {
    const MixedPrecision& mp = *r.mixed;
    s += fmt::format("  --max-loss {}: all int8 loses {:.4g} of cosine; {} ({} models measured)\n",
                     r.max_loss, mp.loss_all,
                     mp.kept_float.empty()
                         ? std::string("within the budget, nothing kept float")
                         : fmt::format("kept {}: {} -> loss {:.4g}{}",
                                       r.options.fallback == DataType::kBFloat16 ? "bf16" : "float",
                                       fmt::join(mp.kept_float, ", "),
                                       mp.loss_final, mp.reached ? "" : " (budget NOT reached)"),
                     mp.models_measured);
  }
  s += fmt::format("  size: {} -> {} ({:.2f}x)\n", mb(r.bytes_before), mb(r.bytes_after),
                   r.bytes_after > 0 ? double(r.bytes_before) / r.bytes_after : 0.0);
  if (r.latency_before_ms && r.latency_after_ms)
    s += fmt::format("  latency (kiln fast engine, median of {}): {:.2f} ms -> {:.2f} ms ({:.2f}x)\n",
                     r.latency_runs, *r.latency_before_ms, *r.latency_after_ms,
                     *r.latency_before_ms / *r.latency_after_ms);
  if (!r.errors.empty()) {
    s += fmt::format("  outputs vs the float model on {} {}{}:\n", r.eval_sets, r.eval_source,
                     r.random_inputs ? " (random inputs: these figures say little about accuracy "
                                       "on real data)" : "");
    for (const OutputError& e : r.errors) {
      if (!e.compared) {
        s += fmt::format("    {:<24} not compared: {}\n", e.name, e.note);
        continue;
      }
      s += fmt::format("    {:<24} cosine {:.5f}  max abs {:.3g}  rel {:.3g}{}\n", e.name, e.cosine,
                       e.max_abs, e.max_rel,
                       e.top1_agreement ? fmt::format("  top-1 agree {:.1f}%", 100 * *e.top1_agreement) : "");
    }
  }
  return s;
}

nlohmann::json report_json(const QuantizeReport& r) {
  using nlohmann::json;
  json j;
  j["model"] = r.model;
  j["output"] = r.output;
  j["mode"] = mode_name(r.options.mode);
  j["format"] = format_name(r.options);
  j["activation_type"] = dtype_name(r.options.activation_type);
  j["weight_type"] = dtype_name(r.options.weight_type);
  j["quantize_ms"] = r.quantize_ms;
  j["size_bytes"] = {{"before", r.bytes_before}, {"after", r.bytes_after}};
  if (r.latency_before_ms && r.latency_after_ms)
    j["latency_ms"] = {{"engine", "kiln fast"}, {"runs", r.latency_runs}, {"threads", r.threads},
                       {"before_p50", *r.latency_before_ms}, {"after_p50", *r.latency_after_ms}};
  if (r.result.calibration_sets > 0) {
    json cal;
    cal["sets"] = r.result.calibration_sets;
    cal["method"] = method_name(r.options.method);
    if (r.options.method == RangeMethod::kPercentile) cal["percentile"] = r.options.percentile;
    for (const auto& [t, range] : r.result.ranges) cal["ranges"][t] = {range.min, range.max};
    j["calibration"] = cal;
  }
  const FloatConversion& c = r.result.conversion;
  if (r.options.mode == Mode::kFloat16 || r.options.mode == Mode::kBFloat16)
    j["conversion"] = {{"initializers", c.converted_initializers}, {"clamped", c.clamped_values},
                       {"flushed_to_zero", c.flushed_values}, {"casts_added", c.casts_added}};
  j["evaluation"] = {{"sets", r.eval_sets}, {"inputs", r.eval_source}, {"random", r.random_inputs}};
  json outs = json::array();
  for (const OutputError& e : r.errors) {
    json o = {{"name", e.name}, {"compared", e.compared}};
    if (e.compared) {
      o["max_abs"] = e.max_abs;
      o["relative"] = e.max_rel;
      o["cosine"] = e.cosine;
      if (e.top1_agreement) o["top1_agreement"] = *e.top1_agreement;
    } else {
      o["note"] = e.note;
    }
    outs.push_back(o);
  }
  j["outputs"] = outs;
  json nodes = json::array();
  for (const auto& d : r.result.decisions)
    nodes.push_back({{"node", d.node}, {"op", d.op}, {"precision", d.precision}, {"why", d.reason}});
  j["nodes"] = nodes;
  j["notes"] = r.result.notes;
  if (r.mixed) {
    json damage = json::array();
    for (const auto& [node, d] : r.mixed->damage) damage.push_back({{"node", node}, {"loss_alone", d}});
    j["mixed_precision"] = {{"max_loss", r.max_loss}, {"loss_all_int8", r.mixed->loss_all},
                            {"fallback", r.options.fallback == DataType::kBFloat16 ? "bf16" : "float"},
                            {"loss", r.mixed->loss_final}, {"reached", r.mixed->reached},
                            {"kept_float", r.mixed->kept_float}, {"damage", damage},
                            {"models_measured", r.mixed->models_measured}};
  }
  return j;
}

}  // namespace kiln::quant
