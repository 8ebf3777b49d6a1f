#include "quant/quantize.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "onnx/export.h"
#include "onnx/import.h"
#include "ops/infer.h"
#include "opt/graph_edit.h"
#include "opt/pipeline.h"
#include "support/error.h"

namespace kiln::quant {

Model clone_model(const Model& m) {
  Model c = load_model_from_bytes(serialize_model(m), ".");
  infer_shapes(c);
  return c;
}

namespace {

// The nodes to quantize, after the checks of check_quantizable.
Selection selection_of(Model& m, const QuantizeOptions& o, const std::string& model_name) {
  Graph& g = *m.graph;
  weights_as_initializers(g);
  check_filters(g, o, model_name);
  const Selection s = select_nodes(g, o);
  if (s.nodes.empty()) {
    const auto ops = o.include_ops.empty() ? default_ops(o.mode) : o.include_ops;
    std::string why = s.skipped.empty()
                          ? fmt::format("it has no {} node", fmt::join(ops, " or "))
                          : fmt::format("node '{}' ({}): {}{}", s.skipped[0].node, s.skipped[0].op,
                                        s.skipped[0].reason,
                                        s.skipped.size() > 1
                                            ? fmt::format(" (and {} more)", s.skipped.size() - 1)
                                            : "");
    fail(ErrorKind::kBadModel, "'{}': nothing to quantize in {} mode: {}", model_name,
         mode_name(o.mode), why);
  }
  return s;
}

// Raises the model's ai.onnx opset to 13 where no op changes meaning, else to `least` (the mode's
// minimum); notes what was done, fails (kUnsupported) below `least`. Returns the opset reached.
int raise_opset(Model& m, int least, std::vector<std::string>& notes, const std::string& model_name,
                const std::string& mode) {
  const int before = opt::model_opset(m);
  std::string why_not_raised;
  if (before < 13) {
    for (int target : {13, least}) {
      if (opt::model_opset(m) >= target) break;
      opt::PipelineOptions po;
      po.pass.target_opset = target;
      const opt::OptimizeResult raised = opt::optimize(m, {"raise-opset"}, po);
      if (!raised.near_misses.empty() && why_not_raised.empty())
        why_not_raised = raised.near_misses[0].reason;
    }
    if (opt::model_opset(m) != before)
      notes.push_back(fmt::format("ai.onnx opset raised from {} to {} (no op changes meaning{})",
                                  before, opt::model_opset(m),
                                  why_not_raised.empty() ? "" : "; not further: " + why_not_raised));
  }
  const int opset = opt::model_opset(m);
  KILN_CHECK(opset >= least, ErrorKind::kUnsupported,
             "'{}' imports ai.onnx opset {}, {} mode needs {} ({})", model_name, opset, mode, least,
             why_not_raised);
  return opset;
}

// Calibrates (when `sets` is given) or takes `given` ranges, then rewrites.
QuantizeResult run_quantize(Model& m, const QuantizeOptions& o, const std::vector<FeedSet>* sets,
                            const std::vector<std::string>& set_names,
                            const CalibrationOptions& copts, const TensorRanges* given,
                            const std::string& model_name) {
  QuantizeResult result;
  Graph& g = *m.graph;
  Rewrite r{m, g, o, result.decisions, opt::model_opset(m)};
  weights_as_initializers(g);
  if (o.mode == Mode::kFloat16 || (o.mode == Mode::kBFloat16 && o.bf16_whole_graph)) {
    result.conversion = convert_float_precision(r, o.mode == Mode::kFloat16 ? DataType::kFloat16
                                                                            : DataType::kBFloat16);
    finish_rewrite(r);
    return result;
  }
  // Quantized ops need opset 10 (DynamicQuantizeLinear 11), DequantizeLinear's axis 13, a Cast
  // from bfloat16 13.
  const int least_opset = o.mode == Mode::kDynamic ? 11 : o.mode == Mode::kStatic ? 10 : 13;
  r.opset = raise_opset(m, least_opset, result.notes, model_name, mode_name(o.mode));
  if (o.mode == Mode::kBFloat16) {
    check_filters(g, o, model_name);
    result.conversion = store_weights_bf16(r);
    KILN_CHECK(result.conversion.converted_initializers > 0, ErrorKind::kBadModel,
               "'{}': nothing to store in bf16: no Conv, ConvTranspose, MatMul, Gemm or Gather "
               "reads a float32 weight", model_name);
    finish_rewrite(r);
    return result;
  }
  Selection s = selection_of(m, o, model_name);
  if (o.mode == Mode::kStatic) {
    const auto tensors = tensors_to_calibrate(g, s, o);
    if (sets) {
      result.ranges = calibrate(clone_model(m), tensors, *sets, set_names, copts);
      result.calibration_sets = static_cast<int>(sets->size());
    } else {
      for (const std::string& t : tensors)  // (those calibration did not reach: none)
        if (auto it = given->find(t); it != given->end()) result.ranges[t] = it->second;
    }
  }
  // Static: a node whose tensors no calibration set reached stays float.
  std::vector<NodeDecision> unreached;
  if (o.mode == Mode::kStatic) {
    std::vector<Node*> kept;
    for (Node* n : s.nodes) {
      Selection one{.nodes = {n}};
      bool reached = true;
      for (const std::string& t : tensors_to_calibrate(g, one, o)) reached &= result.ranges.contains(t);
      if (reached) kept.push_back(n);
      else unreached.push_back({node_label(*n), n->op_type, "float",
                                "no calibration set reached it (a branch the sets do not take)"});
    }
    s.nodes = kept;
  }
  // Each graph (the main one, If branches, Loop bodies) is rewritten with its own nodes.
  std::vector<std::pair<Graph*, Selection>> by_graph;
  for (Node* n : s.nodes) {
    auto it = std::find_if(by_graph.begin(), by_graph.end(),
                           [&](const auto& e) { return e.first == n->owner; });
    if (it == by_graph.end()) it = by_graph.insert(by_graph.end(), {n->owner, Selection{}});
    it->second.nodes.push_back(n);
  }
  for (auto& [graph, selected] : by_graph) {
    Rewrite rg{m, *graph, o, result.decisions, r.opset};
    if (o.mode == Mode::kDynamic) quantize_dynamic(rg, selected);
    else if (o.format == Format::kQdq) quantize_static_qdq(rg, selected, result.ranges);
    else quantize_static_qoperator(rg, selected, result.ranges);
  }
  // --fallback bf16: the nodes excluded by name (those --max-loss keeps out) get bf16 weights.
  if (o.fallback == DataType::kBFloat16 && !o.exclude_nodes.empty()) {
    if (r.opset >= 13) {
      const std::set<std::string> only(o.exclude_nodes.begin(), o.exclude_nodes.end());
      std::vector<std::string> stored;
      result.conversion = store_weights_bf16(r, &only, &stored);
      for (NodeDecision& d : s.skipped)
        if (std::find(stored.begin(), stored.end(), d.node) != stored.end()) {
          d.precision = "bf16";
          d.reason += "; weights stored bf16 (--fallback bf16)";
        }
    } else {
      result.notes.push_back(fmt::format("--fallback bf16 needs opset 13 (the model's: {}): the "
                                         "excluded nodes stay float32", r.opset));
    }
  }
  finish_rewrite(r);
  for (const NodeDecision& d : unreached) result.decisions.push_back(d);
  for (const NodeDecision& d : s.skipped) result.decisions.push_back(d);
  return result;
}

}  // namespace

void check_quantizable(Model& m, const QuantizeOptions& o, const std::string& model_name) {
  if (o.mode == Mode::kDynamic || o.mode == Mode::kStatic) selection_of(m, o, model_name);
}

QuantizeResult quantize(Model& m, const QuantizeOptions& o, const std::vector<FeedSet>& sets,
                        const std::vector<std::string>& set_names, const CalibrationOptions& copts,
                        const std::string& model_name) {
  return run_quantize(m, o, &sets, set_names, copts, nullptr, model_name);
}

QuantizeResult quantize_with_ranges(Model& m, const QuantizeOptions& o, const TensorRanges& ranges,
                                    const std::string& model_name) {
  return run_quantize(m, o, nullptr, {}, {}, &ranges, model_name);
}

}  // namespace kiln::quant
