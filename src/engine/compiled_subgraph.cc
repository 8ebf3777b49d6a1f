#include "engine/compiled_subgraph.h"

#include <algorithm>

#include "engine/compiled_model.h"
#include "ir/graph_copy.h"
#include "support/error.h"

namespace kiln::engine {

namespace {

// Distinct input shapes a body is planned for before it goes to the interpreter for good.
constexpr size_t kMaxBodyPlans = 8;

// Reports the copy's steps as nodes of the original body, inside the node holding it.
class BodyObserver : public RunObserver {
 public:
  BodyObserver(RunObserver& outer, const std::unordered_map<const Node*, const Node*>& origin)
      : outer_(outer), origin_(origin) {}
  void on_node(const NodeEvent& e) override {
    NodeEvent mapped = e;
    if (auto it = origin_.find(e.node); it != origin_.end()) mapped.node = it->second;
    mapped.depth = e.depth + 1;
    outer_.on_node(mapped);
  }

 private:
  RunObserver& outer_;
  const std::unordered_map<const Node*, const Node*>& origin_;
};

}  // namespace

CompiledSubgraph::CompiledSubgraph(const Model& enclosing, const Graph& body,
                                   std::unordered_map<const Value*, Tensor> constants,
                                   const EngineOptions& opts)
    : body_(body),
      ir_version_(enclosing.ir_version),
      opsets_(enclosing.opsets),
      constants_(std::move(constants)),
      opts_(opts) {
  opts_.optimize_level = 0;  // the optimizer already ran over the subgraphs with the model
}

CompiledSubgraph::~CompiledSubgraph() = default;

void CompiledSubgraph::compile(const std::vector<RtValue>& inputs, const OuterValue& outer) {
  SubgraphCopy copy = copy_subgraph(body_, [&](const Value* v) -> const Tensor* {
    auto it = constants_.find(v);
    return it == constants_.end() ? nullptr : &it->second;
  });
  KILN_CHECK(inputs.size() == body_.inputs.size(), ErrorKind::kRuntime,
             "the body has {} inputs, {} given", body_.inputs.size(), inputs.size());
  // Types from the values of this run: element type fixed, dims per plan (a Loop's carried
  // values may change their rank).
  Graph& g = *copy.graph;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const RtValue& v = i < inputs.size() ? inputs[i] : outer(copy.outer_inputs[i - inputs.size()]);
    KILN_CHECK(v.is_tensor(), ErrorKind::kUnsupported, "input '{}' is a {}", g.inputs[i]->name,
               v.describe());
    // A CompiledModel is not fed the inputs that have an initializer.
    KILN_CHECK(!g.inputs[i]->is_constant(), ErrorKind::kUnsupported,
               "input '{}' has an initializer", g.inputs[i]->name);
    g.inputs[i]->type = TypeInfo::tensor(v.tensor.dtype());
  }
  Model m;
  m.ir_version = ir_version_;
  m.opsets = opsets_;
  m.graph = std::move(copy.graph);
  outer_inputs_ = std::move(copy.outer_inputs);
  origin_ = std::move(copy.origin);
  model_ = std::make_unique<CompiledModel>(std::move(m), opts_);
}

bool CompiledSubgraph::planned(const Signature& sig) {
  if (std::find(plans_.begin(), plans_.end(), sig) != plans_.end()) return true;
  if (unplannable_.contains(sig)) return false;
  if (plans_.size() >= kMaxBodyPlans) {
    declined_ = fmt::format("its input shapes changed more than {} times", kMaxBodyPlans);
    model_.reset();
    return false;
  }
  try {
    model_->summary(sig);  // makes the plan
  } catch (const std::exception& e) {  // kiln's errors, oneDNN's
    unplannable_[sig] = e.what();
    return false;
  }
  plans_.push_back(sig);
  return true;
}

std::optional<std::vector<RtValue>> CompiledSubgraph::run(const std::vector<RtValue>& inputs,
                                                          const OuterValue& outer,
                                                          RunObserver* observer) {
  if (!declined_.empty()) return std::nullopt;
  if (!model_) {
    try {
      compile(inputs, outer);
    } catch (const std::exception& e) {  // kiln's errors, oneDNN's
      declined_ = e.what();
      model_.reset();
      return std::nullopt;
    }
  }
  feeds_.assign(inputs.begin(), inputs.end());
  for (const Value* v : outer_inputs_) feeds_.push_back(outer(v));
  Signature sig;
  sig.reserve(feeds_.size());
  const auto& declared = model_->inputs();
  bool same_types = true;
  for (size_t i = 0; i < feeds_.size(); ++i) {
    // Another element type than the first run's (a Loop's carried value may change it).
    same_types &= feeds_[i].is_tensor() && feeds_[i].tensor.dtype() == declared[i]->type.elem;
    if (same_types) sig.push_back(feeds_[i].tensor.dims());
  }
  std::optional<std::vector<RtValue>> outs;
  if (same_types && planned(sig)) {
    std::optional<BodyObserver> body_observer;
    if (observer) body_observer.emplace(*observer, origin_);
    outs = model_->run(feeds_, body_observer ? &*body_observer : nullptr);
  }
  feeds_.clear();  // the inputs are not kept alive until the next run
  return outs;
}

std::string CompiledSubgraph::describe() const {
  if (!declined_.empty()) return "interpreter: " + declined_;
  if (!model_) return "not run";
  std::string out = fmt::format("fast engine, {} plan{}", plans_.size(), plans_.size() == 1 ? "" : "s");
  for (const auto& [sig, why] : unplannable_) {
    out += "; interpreter for input dims";
    for (const auto& dims : sig) out += " " + dims_to_string(dims);
    out += ": " + why;
  }
  return out;
}

}  // namespace kiln::engine
