#include "quant/mixed_precision.h"

#include <algorithm>
#include <set>

#include "quant/evaluate.h"

namespace kiln::quant {

double output_loss(const std::vector<OutputError>& errors) {
  double worst = 1;
  for (const OutputError& e : errors)
    if (e.compared) worst = std::min(worst, e.cosine);
  return 1 - worst;
}

namespace {

// The loss with only the nodes in `quantize_only` quantized (all: when empty and `float_nodes`
// names the ones to leave).
double loss_of(const Model& float_model, QuantizeOptions o, const TensorRanges& ranges,
               const std::vector<std::string>& float_nodes, engine::ModelRunner& reference,
               const std::vector<FeedSet>& sets) {
  Model m = clone_model(float_model);
  o.exclude_nodes.insert(o.exclude_nodes.end(), float_nodes.begin(), float_nodes.end());
  quantize_with_ranges(m, o, ranges, "the model");
  auto model = std::make_shared<Model>(std::move(m));
  PerShapeRunner runner([model] { return engine::make_runner(clone_model(*model), engine::EngineKind::kFast); });
  return output_loss(compare_models(reference, runner, sets));
}

}  // namespace

MixedPrecision search_mixed_precision(const Model& float_model, const QuantizeOptions& o,
                                      const TensorRanges& ranges,
                                      const std::vector<NodeDecision>& quantized,
                                      engine::ModelRunner& reference,
                                      const std::vector<FeedSet>& sets, double max_loss,
                                      bool progress) {
  MixedPrecision mp;
  std::vector<std::string> nodes;
  for (const NodeDecision& d : quantized)
    if (d.precision == "int8") nodes.push_back(d.node);
  mp.loss_all = loss_of(float_model, o, ranges, {}, reference, sets);
  ++mp.models_measured;
  mp.loss_final = mp.loss_all;
  mp.reached = mp.loss_all <= max_loss;
  if (mp.reached || nodes.empty()) return mp;
  {
    ProgressBar bar("damage per node", static_cast<int64_t>(nodes.size()), progress);
    for (const std::string& n : nodes) {
      std::vector<std::string> others;
      for (const std::string& k : nodes)
        if (k != n) others.push_back(k);
      mp.damage.push_back({n, loss_of(float_model, o, ranges, others, reference, sets)});
      ++mp.models_measured;
      bar.step();
    }
  }
  std::stable_sort(mp.damage.begin(), mp.damage.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  ProgressBar bar("keeping the worst float", static_cast<int64_t>(nodes.size()), progress);
  for (const auto& [node, damage] : mp.damage) {
    if (mp.kept_float.size() + 1 >= nodes.size()) break;  // one node at least stays quantized
    mp.kept_float.push_back(node);
    mp.loss_final = loss_of(float_model, o, ranges, mp.kept_float, reference, sets);
    ++mp.models_measured;
    bar.step();
    if (mp.loss_final <= max_loss) {
      mp.reached = true;
      break;
    }
  }
  return mp;
}

}  // namespace kiln::quant
