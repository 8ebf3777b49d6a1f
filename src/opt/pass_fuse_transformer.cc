// Transformer patterns become ONNX's own fused ops when the model's opset has them:
// decomposed LayerNorm -> LayerNormalization (17), erf/tanh GELU -> Gelu (20),
// RMSNorm -> RMSNormalization (23). Never a vendor op.
#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "opt/fusion.h"
#include "opt/passes.h"

namespace kiln::opt {

namespace {

// v * x * 0.5 in any association, starting from v: Mul(Mul(v, x), 0.5), Mul(Mul(v, 0.5), x) or
// Mul(v, Mul(x, 0.5)).
std::optional<Match> half_x_times(const Graph& g, Value* v, const Value* x, const InferFacts& f) {
  Node* m1 = read_by(g, v, "Mul");
  if (!m1) return std::nullopt;
  const Value* o1 = other_input(*m1, v);
  if (o1 == x || is_scalar(o1, f, 0.5)) {
    Node* m2 = read_by(g, m1->outputs[0], "Mul");
    if (!m2) return std::nullopt;
    const Value* o2 = other_input(*m2, m1->outputs[0]);
    if ((o1 == x && is_scalar(o2, f, 0.5)) || (o1 != x && o2 == x))
      return Match{{m1, m2}, m2->outputs[0]};
    return std::nullopt;
  }
  Node* h = made_by(g, o1, "Mul");
  if (h && single_consumer(g, o1) == m1 && is_scalar(other_input(*h, x), f, 0.5) &&
      other_input(*h, x) != nullptr)
    return Match{{h, m1}, m1->outputs[0]};
  return std::nullopt;
}

class FuseGelu final : public FusionPass {
 public:
  std::string_view name() const override { return "fuse-gelu"; }
  std::string_view summary() const override {
    return "erf and tanh GELU decompositions -> Gelu (opset 20)";
  }

 protected:
  void run_graph(Graph& g, const Model& m, PassContext& ctx) const override {
    std::vector<std::pair<Match, std::pair<Value*, const char*>>> found;
    for (const auto& up : g.nodes()) {
      Node* n = up.get();
      if (!n->domain.empty()) continue;
      if (n->op_type == "Erf") {
        if (auto r = erf_form(g, *n, ctx.facts())) found.push_back(*r);
      } else if (n->op_type == "Tanh") {
        if (auto r = tanh_form(g, *n, ctx.facts())) found.push_back(*r);
      }
    }
    for (auto& [match, how] : found) {
      if (!opset_allows(m, *match.nodes.front(), ctx, 20, "Gelu") || !ctx.allow()) continue;
      Node* gelu = add_node(g, "Gelu", node_label(*match.nodes.front()) + "_gelu", {how.first}, 1,
                            model_opset(m));
      if (std::string_view(how.second) == "tanh")
        set_attr_string(*gelu, "approximate", "tanh");
      const auto removed = labels(match);
      replace_match(g, match, gelu);
      ctx.applied(fmt::format("GELU ({}) -> Gelu", how.second), removed, {node_label(*gelu)});
    }
  }

 private:
  using Found = std::pair<Match, std::pair<Value*, const char*>>;

  // x / sqrt(2) (or x * 1/sqrt(2)) -> Erf -> + 1 -> * x * 0.5
  static std::optional<Found> erf_form(const Graph& g, Node& erf, const InferFacts& f) {
    Node* pre = made_by(g, erf.inputs[0], "Div");
    bool ok = pre && is_scalar(pre->inputs[1], f, std::sqrt(2.0));
    if (!ok) {
      pre = made_by(g, erf.inputs[0], "Mul");
      ok = pre && (is_scalar(pre->inputs[1], f, std::sqrt(0.5)) ||
                   is_scalar(pre->inputs[0], f, std::sqrt(0.5)));
    }
    if (!ok || single_consumer(g, pre->outputs[0]) != &erf) return std::nullopt;
    Value* x = is_scalar(pre->inputs[1], f, pre->op_type == "Div" ? std::sqrt(2.0) : std::sqrt(0.5))
                   ? pre->inputs[0]
                   : pre->inputs[1];
    Node* add = read_by(g, erf.outputs[0], "Add");
    if (!add || !is_scalar(other_input(*add, erf.outputs[0]), f, 1.0)) return std::nullopt;
    auto tail = half_x_times(g, add->outputs[0], x, f);
    if (!tail) return std::nullopt;
    Match m{{pre, &erf, add}, tail->out};
    m.nodes.insert(m.nodes.end(), tail->nodes.begin(), tail->nodes.end());
    return Found{m, {x, "erf"}};
  }

  // tanh(sqrt(2/pi) * (x + 0.044715 * x^3)) -> + 1 -> * x * 0.5
  static std::optional<Found> tanh_form(const Graph& g, Node& tanh, const InferFacts& f) {
    const double k = std::sqrt(2.0 / M_PI);
    Node* scale = made_by(g, tanh.inputs[0], "Mul");
    if (!scale || single_consumer(g, scale->outputs[0]) != &tanh) return std::nullopt;
    Value* inner = is_scalar(scale->inputs[1], f, k) ? scale->inputs[0]
                   : is_scalar(scale->inputs[0], f, k) ? scale->inputs[1] : nullptr;
    Node* sum = made_by(g, inner, "Add");
    if (!sum || single_consumer(g, inner) != scale) return std::nullopt;
    for (int i = 0; i < 2; ++i) {
      Value* x = sum->inputs[i];
      Node* cubic = made_by(g, sum->inputs[1 - i], "Mul");
      if (!cubic || single_consumer(g, cubic->outputs[0]) != sum) continue;
      Value* p = is_scalar(cubic->inputs[1], f, 0.044715) ? cubic->inputs[0]
                 : is_scalar(cubic->inputs[0], f, 0.044715) ? cubic->inputs[1] : nullptr;
      Node* pow = made_by(g, p, "Pow");
      if (!pow || pow->inputs[0] != x || !is_scalar(pow->inputs[1], f, 3.0) ||
          single_consumer(g, p) != cubic)
        continue;
      Node* add = read_by(g, tanh.outputs[0], "Add");
      if (!add || !is_scalar(other_input(*add, tanh.outputs[0]), f, 1.0)) return std::nullopt;
      auto tail = half_x_times(g, add->outputs[0], x, f);
      if (!tail) return std::nullopt;
      Match m{{pow, cubic, sum, scale, &tanh, add}, tail->out};
      m.nodes.insert(m.nodes.end(), tail->nodes.begin(), tail->nodes.end());
      return Found{m, {x, "tanh"}};
    }
    return std::nullopt;
  }
};

// Trailing axes [first, rank) of a Reduce node with constant axes input; -1 when not trailing.
int64_t trailing_axis(const Node& reduce, const InferFacts& f) {
  const auto& s = reduce.inputs[0]->type.shape;
  const Tensor* axes = reduce.has_input(1) ? constant_of(reduce.inputs[1], f) : nullptr;
  if (!s || !axes || attr_int(reduce, "keepdims") != 1) return -1;
  const int64_t rank = static_cast<int64_t>(s->size());
  std::vector<int64_t> a = axes->to_int64s();
  for (int64_t& x : a) x = x < 0 ? x + rank : x;
  std::sort(a.begin(), a.end());
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != rank - static_cast<int64_t>(a.size()) + static_cast<int64_t>(i)) return -1;
  return a.empty() ? -1 : a.front();
}

// A constant usable as the scale or bias of a normalization over dims [axis, rank) of x.
bool fits_normalized(const Value* c, const Value* x, int64_t axis, const InferFacts& f) {
  const Tensor* t = constant_of(c, f);
  const auto& s = x->type.shape;
  if (!t || !s) return false;
  const int64_t rank = static_cast<int64_t>(s->size()), n = rank - axis;
  if (t->rank() > n) return false;
  for (int64_t j = 0; j < t->rank(); ++j) {
    const Dim& d = (*s)[rank - t->rank() + j];
    if (!d.is_known() || d.value() != t->dim(static_cast<int>(j))) return false;
  }
  return true;
}

// Ones of the normalized shape, for a normalization without a scale.
Value* ones_scale(Graph& g, const Value* x, int64_t axis, const std::string& base) {
  const auto& s = *x->type.shape;
  std::vector<int64_t> dims;
  for (size_t i = axis; i < s.size(); ++i) dims.push_back(s[i].is_known() ? s[i].value() : -1);
  for (int64_t d : dims)
    if (d < 0) return nullptr;
  Tensor t(x->type.elem, dims);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, 1.0);
  return add_initializer(g, base + "_scale", std::move(t));
}

// The optional "* gamma + beta" after a normalization's output.
void affine_tail(const Graph& g, Match& m, const Value* x, int64_t axis, const InferFacts& f,
                 Value** gamma, Value** beta) {
  if (Node* mul = read_by(g, m.out, "Mul"); mul && fits_normalized(other_input(*mul, m.out), x, axis, f)) {
    *gamma = other_input(*mul, m.out);
    m.nodes.push_back(mul);
    m.out = mul->outputs[0];
    if (!beta) return;
    if (Node* add = read_by(g, m.out, "Add"); add && fits_normalized(other_input(*add, m.out), x, axis, f)) {
      *beta = other_input(*add, m.out);
      m.nodes.push_back(add);
      m.out = add->outputs[0];
    }
  }
}

class FuseLayerNorm final : public FusionPass {
 public:
  std::string_view name() const override { return "fuse-layernorm"; }
  std::string_view summary() const override {
    return "mean/variance LayerNorm decomposition -> LayerNormalization (opset 17)";
  }

 protected:
  void run_graph(Graph& g, const Model& m, PassContext& ctx) const override {
    const InferFacts& f = ctx.facts();
    std::vector<Node*> means;
    for (const auto& up : g.nodes())
      if (up->op_type == "ReduceMean" && up->domain.empty()) means.push_back(up.get());
    std::unordered_set<const Node*> gone;  // matched nodes are freed: never touch them again
    for (Node* mean : means) {
      if (gone.contains(mean)) continue;
      Value* x = mean->inputs[0];
      const int64_t axis = trailing_axis(*mean, f);
      Node* sub = read_by(g, mean->outputs[0], "Sub");
      if (axis < 0 || !sub || sub->inputs[0] != x || sub->inputs[1] != mean->outputs[0]) continue;
      Value* d = sub->outputs[0];
      if (d->uses.size() != 2 || is_graph_output(g, d)) continue;
      Node* sq = nullptr;
      Node* div = nullptr;
      for (const Use& u : d->uses) {
        Node* n = u.node;
        if (n->op_type == "Div" && n->inputs[0] == d) div = n;
        else if (n->op_type == "Pow" && n->inputs[0] == d && is_scalar(n->inputs[1], f, 2.0)) sq = n;
        else if (n->op_type == "Mul" && n->inputs[0] == d && n->inputs[1] == d) sq = n;
      }
      if (!sq || !div) continue;
      Node* var = read_by(g, sq->outputs[0], "ReduceMean");
      if (!var || trailing_axis(*var, f) != axis) continue;
      Node* add = read_by(g, var->outputs[0], "Add");
      auto eps = add ? scalar(other_input(*add, var->outputs[0]), f) : std::nullopt;
      Node* sqrt = add ? read_by(g, add->outputs[0], "Sqrt") : nullptr;
      if (!eps || !sqrt || single_consumer(g, sqrt->outputs[0]) != div ||
          div->inputs[1] != sqrt->outputs[0])
        continue;
      Match match{{mean, sub, sq, var, add, sqrt, div}, div->outputs[0]};
      Value* gamma = nullptr;
      Value* beta = nullptr;
      affine_tail(g, match, x, axis, f, &gamma, &beta);
      if (!opset_allows(m, *mean, ctx, 17, "LayerNormalization")) continue;
      if (!gamma && !(gamma = ones_scale(g, x, axis, node_label(*mean)))) {
        ctx.near_miss(*mean, "LayerNorm pattern without a scale over dims that are not static");
        continue;
      }
      if (!ctx.allow()) return;
      std::vector<Value*> inputs = {x, gamma};
      if (beta) inputs.push_back(beta);
      Node* ln = add_node(g, "LayerNormalization", node_label(*mean) + "_layernorm", inputs, 1,
                          model_opset(m));
      set_attr_int(*ln, "axis", axis);
      set_attr_float(*ln, "epsilon", static_cast<float>(*eps));
      const auto removed = labels(match);
      gone.insert(match.nodes.begin(), match.nodes.end());
      replace_match(g, match, ln);
      ctx.applied("LayerNorm decomposition -> LayerNormalization", removed, {node_label(*ln)});
    }
  }
};

class FuseRmsNorm final : public FusionPass {
 public:
  std::string_view name() const override { return "fuse-rmsnorm"; }
  std::string_view summary() const override {
    return "x / sqrt(mean(x^2) + eps) * scale -> RMSNormalization (opset 23)";
  }

 protected:
  void run_graph(Graph& g, const Model& m, PassContext& ctx) const override {
    const InferFacts& f = ctx.facts();
    std::vector<Node*> pows;
    for (const auto& up : g.nodes())
      if (up->op_type == "Pow" && up->domain.empty() && is_scalar(up->inputs[1], f, 2.0))
        pows.push_back(up.get());
    for (Node* pow : pows) {
      Value* x = pow->inputs[0];
      Node* mean = read_by(g, pow->outputs[0], "ReduceMean");
      const int64_t axis = mean ? trailing_axis(*mean, f) : -1;
      Node* add = axis >= 0 ? read_by(g, mean->outputs[0], "Add") : nullptr;
      auto eps = add ? scalar(other_input(*add, mean->outputs[0]), f) : std::nullopt;
      Node* sqrt = eps ? read_by(g, add->outputs[0], "Sqrt") : nullptr;
      if (!sqrt) continue;
      Match match{{pow, mean, add, sqrt}, nullptr};
      if (Node* div = read_by(g, sqrt->outputs[0], "Div"); div && div->inputs[0] == x) {
        match.nodes.push_back(div);
        match.out = div->outputs[0];
      } else if (Node* rec = read_by(g, sqrt->outputs[0], "Reciprocal")) {
        Node* mul = read_by(g, rec->outputs[0], "Mul");
        if (!mul || other_input(*mul, rec->outputs[0]) != x) continue;
        match.nodes.insert(match.nodes.end(), {rec, mul});
        match.out = mul->outputs[0];
      } else {
        continue;
      }
      Value* gamma = nullptr;
      affine_tail(g, match, x, axis, f, &gamma, nullptr);
      if (!opset_allows(m, *pow, ctx, 23, "RMSNormalization")) continue;
      if (!gamma && !(gamma = ones_scale(g, x, axis, node_label(*pow)))) continue;
      if (!ctx.allow()) return;
      Node* rms = add_node(g, "RMSNormalization", node_label(*pow) + "_rmsnorm", {x, gamma}, 1,
                           model_opset(m));
      set_attr_int(*rms, "axis", axis);
      set_attr_float(*rms, "epsilon", static_cast<float>(*eps));
      const auto removed = labels(match);
      replace_match(g, match, rms);
      ctx.applied("RMSNorm decomposition -> RMSNormalization", removed, {node_label(*rms)});
    }
  }
};

}  // namespace

std::unique_ptr<Pass> make_fuse_gelu() { return std::make_unique<FuseGelu>(); }
std::unique_ptr<Pass> make_fuse_layernorm() { return std::make_unique<FuseLayerNorm>(); }
std::unique_ptr<Pass> make_fuse_rmsnorm() { return std::make_unique<FuseRmsNorm>(); }

}  // namespace kiln::opt
