#include "engine/plain_weights.h"

#include <algorithm>

#include "engine/graph_facts.h"
#include "engine/onednn/weight_cache.h"
#include "engine/plan.h"
#include "ops/infer.h"

namespace kiln::engine {

PlainWeights::PlainWeights(Graph& graph, WeightCache& cache) : cache_(cache) {
  for (Value* v : graph.initializers) {
    const DataType t = v->data.defined() ? v->data.dtype() : DataType::kUndefined;
    if ((t == DataType::kFloat || t == DataType::kInt8) && v->data.nbytes() >= kMinBytes)
      candidates_[v] = v;
  }
}

bool PlainWeights::releasable(const Value* v, const GraphFacts& facts, const Plan& plan) const {
  if (!v->data.raw() || facts.is_graph_output(v)) return false;
  for (const Node* c : facts.consumers(v)) {
    // Read from inside a subgraph: the body copies it when it is compiled, on its first run.
    if (std::find(c->inputs.begin(), c->inputs.end(), v) == c->inputs.end()) return false;
    if (facts.folded(c)) continue;  // computed before the plan, not read by it
    auto it = lowered_.find(c);
    if (it == lowered_.end() || !it->second) return false;
  }
  // A slot holding it: a reference kernel or a CPU kernel reads the plain bytes at run time.
  for (const SlotInfo& s : plan.slots)
    if (s.source == SlotInfo::Source::kConstant && s.constant.is_tensor() &&
        s.constant.tensor.raw() == v->data.raw())
      return false;
  return true;
}

void PlainWeights::lowered(const Group& g, const GraphFacts& facts, const Plan& plan, size_t first_step) {
  bool packed = first_step < plan.steps.size();
  for (size_t i = first_step; i < plan.steps.size(); ++i) packed = packed && plan.steps[i]->reads_packed_constants;
  const auto members = g.members();
  for (const Node* m : members) lowered_[m] = packed;
  if (!packed) return;
  for (const Node* m : members)
    for (const Value* in : m->inputs) {
      if (!in) continue;
      release_if_packed(in, facts, plan);
      // A weight read through a folded node (a quantized conv's DequantizeLinear of its int8
      // weights, which the step reads as stored and packs): the folded node is no member.
      if (in->producer && facts.folded(in->producer))
        for (const Value* w : in->producer->inputs)
          if (w) release_if_packed(w, facts, plan);
    }
}

void PlainWeights::release_if_packed(const Value* in, const GraphFacts& facts, const Plan& plan) {
  auto it = candidates_.find(in);
  if (it == candidates_.end() || !releasable(in, facts, plan)) return;
  Value* v = it->second;
  if (!cache_.drop_source(v->data, v)) return;
  v->data = Tensor::view(v->data.dtype(), v->data.dims(), nullptr, nullptr);
  released_.push_back(v);
}

void PlainWeights::begin_plan() {
  lowered_.clear();
  std::vector<const Value*> read_by_inference;
  // Inference evaluates no node reading more constant elements than its fold limit: a larger
  // weight waits until GraphFacts asks for it (restore(), through GraphFacts::constant), which a
  // plan whose int8 kernels pack the stored bytes never does (a QDQ conv's DequantizeLinear).
  const int64_t fold_limit = InferOptions{}.fold_limit;
  for (const Value* v : released_) {
    if (v->data.numel() > fold_limit) continue;
    for (const Use& u : v->uses)
      if (std::all_of(u.node->inputs.begin(), u.node->inputs.end(), [](const Value* in) { return !in || in->is_constant(); })) {
        read_by_inference.push_back(v);
        break;
      }
  }
  for (const Value* v : read_by_inference) restore(v);
}

void PlainWeights::restore(const Value* v) {
  const auto it = std::find(released_.begin(), released_.end(), v);
  if (it == released_.end()) return;
  Value* w = *it;
  w->data = cache_.restore_source(w, w->data.dtype(), w->data.dims());
  released_.erase(it);
}

size_t PlainWeights::released_bytes() const {
  size_t n = 0;
  for (const Value* v : released_) n += v->data.nbytes();
  return n;
}

}  // namespace kiln::engine
