#include "engine/graph_facts.h"

#include <algorithm>

#include "ops/infer.h"
#include "ops/op.h"
#include "support/error.h"

namespace kiln::engine {

namespace {

// Values of `main` read from inside g (and the graphs nested in it).
void outer_reads(const Graph& g, const Graph& main, std::vector<const Value*>& out) {
  for (const auto& n : g.nodes()) {
    for (const Value* v : n->inputs)
      if (v && v->owner == &main) out.push_back(v);
    for_each_subgraph(*n, [&](const Graph& sg) { outer_reads(sg, main, out); });
  }
  for (const Value* v : g.outputs)
    if (v->owner == &main) out.push_back(v);
}

}  // namespace

GraphFacts::GraphFacts(Model& model, const std::vector<std::vector<int64_t>>& input_dims,
                       std::function<void(const Value*)> restore_released)
    : model_(model), graph_(*model.graph), restore_(std::move(restore_released)) {
  Graph& g = *model.graph;
  // Inference with the fed shapes in place of the declared ones; every value's dims are read from
  // what it found, then every type goes back to what it was, so that the next set of input shapes
  // (the next plan) starts from the model as prepared, not from this plan's concrete dims (a graph
  // output's type is also its declared one, which inference checks).
  std::vector<std::pair<Value*, TypeInfo>> saved;
  for_each_nested_graph(g, [&](Graph& sg) {
    auto keep = [&](Value* v) {
      if (v) saved.emplace_back(v, v->type);
    };
    for (Value* v : sg.inputs) keep(v);
    for (Value* v : sg.initializers) keep(v);
    for (const auto& n : sg.nodes())
      for (Value* v : n->outputs) keep(v);
  });
  auto restore = [&] {
    for (auto it = saved.rbegin(); it != saved.rend(); ++it) it->first->type = it->second;
  };
  size_t k = 0;
  std::vector<Value*> fed;
  for (Value* v : g.inputs) {
    if (v->is_constant()) continue;
    if (k < input_dims.size() && v->type.is_tensor()) {
      v->type.shape = shape_of(input_dims[k]);
      fed.push_back(v);
    }
    ++k;
  }
  InferFacts inferred;
  try {
    infer_shapes(model, {}, &inferred);
  } catch (...) {
    restore();
    throw;
  }
  for (Value* v : fed) dims_[v] = *known_dims(*v->type.shape);
  record_dims(model);
  restore();
  for (size_t i = 0; i < g.nodes().size(); ++i) position_[g.nodes()[i].get()] = static_cast<int>(i);
  for (const Value* v : g.outputs) outputs_.insert(v);
  collect_reads();
  fold_constants(inferred.constants);
}

void GraphFacts::record_dims(const Model& model) {
  auto record = [&](const Value* v) {
    if (!v || dims_.contains(v) || !v->type.is_tensor() || !v->type.shape) return;
    if (auto d = known_dims(*v->type.shape)) dims_[v] = std::move(*d);
  };
  for (const Value* v : graph_.initializers) record(v);
  for (const auto& n : graph_.nodes()) {
    for (const Value* v : n->inputs) record(v);
    for (const Value* v : n->outputs) record(v);
  }
}

void GraphFacts::collect_reads() {
  for (const auto& n : graph_.nodes()) {
    std::vector<const Value*> r;
    for (const Value* v : n->inputs)
      if (v) r.push_back(v);
    for_each_subgraph(*n, [&](const Graph& sg) { outer_reads(sg, graph_, r); });
    std::vector<const Value*> unique;
    for (const Value* v : r)
      if (std::find(unique.begin(), unique.end(), v) == unique.end()) unique.push_back(v);
    for (const Value* v : unique) consumers_[v].push_back(n.get());
    reads_[n.get()] = std::move(unique);
  }
}

void GraphFacts::fold_constants(const std::unordered_map<const Value*, Tensor>& inferred) {
  for (const auto& np : graph_.nodes()) {
    const Node& n = *np;
    bool all_inferred = true;
    for (const Value* out : n.outputs)
      if (out && !inferred.contains(out)) all_inferred = false;
    if (all_inferred) {
      for (const Value* out : n.outputs)
        if (out) constants_[out] = inferred.at(out);
      folded_.insert(&n);
      continue;
    }
    const OpSchema* schema = OpRegistry::global().find(n.domain, n.op_type);
    if (!schema || !schema->kernel || !schema->deterministic || has_subgraph(n)) continue;
    if (std::any_of(n.inputs.begin(), n.inputs.end(), [&](const Value* in) { return in && !has_constant(in); }))
      continue;
    // Large outputs of known dims wait until asked for (constant()); the rest are computed now.
    const auto is_large = [&](const Value* out) {
      const auto d = dims_.find(out);
      if (d == dims_.end()) return false;
      int64_t elems = 1;
      for (int64_t x : d->second) elems *= x;
      return elems > kEagerFoldElements;
    };
    const bool large = !n.outputs.empty() && std::all_of(n.outputs.begin(), n.outputs.end(), [&](const Value* out) {
      return !out || is_large(out);
    });
    if (large) {
      for (const Value* out : n.outputs)
        if (out) deferred_[out] = &n;
      folded_.insert(&n);
      continue;
    }
    if (!evaluate(n).empty()) continue;  // not folded: the run reports it, as the reference runtime would
    for (const Value* out : n.outputs)
      if (out) dims_[out] = constants_.at(out).dims();
    folded_.insert(&n);
  }
}

std::string GraphFacts::evaluate(const Node& n) const {
  const OpSchema* schema = OpRegistry::global().find(n.domain, n.op_type);
  std::vector<RtValue> in(n.inputs.size());
  std::vector<const RtValue*> ptrs(n.inputs.size(), nullptr);
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (!n.inputs[i]) continue;
    const Tensor* c = constant(n.inputs[i]);
    if (!c) return "an input is not constant";
    in[i] = RtValue::of(*c), ptrs[i] = &in[i];
  }
  std::vector<RtValue> outs;
  try {
    KernelContext ctx(n, ptrs, outs, nullptr);
    schema->kernel(ctx);
  } catch (const Error& e) {
    return e.what();
  }
  for (int i = 0; i < n.num_outputs(); ++i)
    if (n.outputs[i] && (i >= static_cast<int>(outs.size()) || !outs[i].is_tensor())) return "an output is not set";
  for (int i = 0; i < n.num_outputs(); ++i)
    if (const Value* out = n.outputs[i]) constants_[out] = std::move(outs[i].tensor);
  return "";
}

const std::vector<int64_t>* GraphFacts::dims(const Value* v) const {
  if (v->is_constant()) return &v->data.dims();
  auto it = dims_.find(v);
  return it == dims_.end() ? nullptr : &it->second;
}

const Tensor* GraphFacts::constant(const Value* v) const {
  if (v->is_constant()) {
    if (!v->data.raw() && v->data.numel() > 0 && restore_) restore_(v);
    return &v->data;
  }
  if (auto it = constants_.find(v); it != constants_.end()) return &it->second;
  const auto d = deferred_.find(v);
  if (d == deferred_.end()) return nullptr;
  const Node& n = *d->second;
  const std::string why = evaluate(n);
  KILN_CHECK(why.empty(), ErrorKind::kBadModel, "node '{}' ({}) on its constant inputs: {}", n.name, n.op_type, why);
  for (const Value* out : n.outputs) deferred_.erase(out);
  return &constants_.at(v);
}

std::optional<float> GraphFacts::scalar(const Value* v) const {
  const Tensor* t = v ? constant(v) : nullptr;
  if (!t || t->numel() != 1 || !(is_float(t->dtype()) || is_integer(t->dtype()))) return std::nullopt;
  return static_cast<float>(t->get_f64(0));
}

const std::vector<const Node*>& GraphFacts::consumers(const Value* v) const {
  static const std::vector<const Node*> none;
  auto it = consumers_.find(v);
  return it == consumers_.end() ? none : it->second;
}

const std::vector<const Value*>& GraphFacts::reads(const Node* n) const { return reads_.at(n); }

bool GraphFacts::only_used_by(const Value* v, std::initializer_list<const Node*> nodes) const {
  if (is_graph_output(v)) return false;
  const auto& c = consumers(v);
  if (c.size() != nodes.size()) return false;
  for (const Node* n : nodes)
    if (std::find(c.begin(), c.end(), n) == c.end()) return false;
  return true;
}

}  // namespace kiln::engine
