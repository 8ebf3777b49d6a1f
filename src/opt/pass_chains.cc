// Chains of the same op merged into one: Transpose∘Transpose, Reshape∘Reshape,
// Unsqueeze∘Unsqueeze, Squeeze∘Squeeze, Concat∘Concat on the same axis.
#include <algorithm>

#include "opt/graph_edit.h"
#include "opt/passes.h"

namespace kiln::opt {

namespace {

// The producer of input i of n when it is the same op in the same domain.
Node* same_op_producer(const Node& n, int i) {
  if (!n.has_input(i)) return nullptr;
  Node* p = n.inputs[i]->producer;
  return p && p->op_type == n.op_type && p->domain == n.domain && p->owner == n.owner ? p : nullptr;
}

int64_t rank_of(const Value* v) {
  return v && v->type.is_tensor() && v->type.shape ? static_cast<int64_t>(v->type.shape->size())
                                                   : -1;
}

// Axes normalized to [0, rank); empty when one is out of range.
std::vector<int64_t> normalized_axes(std::vector<int64_t> axes, int64_t rank) {
  for (int64_t& a : axes) {
    if (a < 0) a += rank;
    if (a < 0 || a >= rank) return {};
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

class MergeChains final : public GraphPass {
 public:
  std::string_view name() const override { return "merge-chains"; }
  std::string_view summary() const override {
    return "merges consecutive Transposes, Reshapes, Squeezes, Unsqueezes and Concats";
  }

 protected:
  void run_graph(Graph& g, const Model& m, PassContext& ctx) const override {
    for (const auto& up : g.nodes()) {
      Node* n = up.get();
      if (!n->domain.empty()) continue;
      Node* inner = same_op_producer(*n, 0);
      if (!inner) continue;
      std::string what;
      if (n->op_type == "Transpose") what = transpose(g, *n, *inner, ctx);
      else if (n->op_type == "Reshape") what = reshape(g, *n, *inner, ctx);
      else if (n->op_type == "Unsqueeze" || n->op_type == "Squeeze") what = squeeze(g, *n, *inner, ctx);
      else if (n->op_type == "Concat") continue;  // below: any input, not only the first
      if (!what.empty()) ctx.applied(what, {node_label(*inner), node_label(*n)}, {node_label(*n)});
    }
    for (const auto& up : g.nodes()) {
      Node* n = up.get();
      if (n->op_type == "Concat" && n->domain.empty()) concat(g, *n, ctx);
    }
  }

 private:
  // n now reads inner's input; inner goes when nothing else reads it (dce).
  static void bypass(Graph& g, Node& n, const Node& inner) { g.set_input(&n, 0, inner.inputs[0]); }

  std::string transpose(Graph& g, Node& n, const Node& inner, PassContext& ctx) const {
    auto p1 = attr_ints(inner, "perm"), p2 = attr_ints(n, "perm");
    if (p1.empty() || p2.empty() || p1.size() != p2.size()) {
      ctx.near_miss(n, "Transpose after Transpose, but a perm is implicit");
      return {};
    }
    if (!ctx.allow()) return {};
    std::vector<int64_t> q(p2.size());
    for (size_t i = 0; i < q.size(); ++i) q[i] = p1[p2[i]];
    n.attr("perm")->ints = q;
    bypass(g, n, inner);
    return "two Transposes merged";
  }

  std::string reshape(Graph& g, Node& n, const Node& inner, PassContext& ctx) const {
    const Tensor* shape = constant_of(n.inputs[1], ctx.facts());
    if (!shape) return {};
    const bool allowzero = attr_int(n, "allowzero", 0) != 0;
    if (!allowzero)
      for (int64_t d : shape->to_int64s())
        if (d == 0) {
          ctx.near_miss(n, "Reshape after Reshape, but the target copies a dim (0)");
          return {};
        }
    if (!ctx.allow()) return {};
    bypass(g, n, inner);
    return "two Reshapes merged";
  }

  // Unsqueeze(Unsqueeze(x, a1), a2) -> Unsqueeze(x, a); Squeeze likewise. Axes are inputs.
  std::string squeeze(Graph& g, Node& n, const Node& inner, PassContext& ctx) const {
    const bool unsqueeze = n.op_type == "Unsqueeze";
    const Tensor* a1 = constant_of(inner.has_input(1) ? inner.inputs[1] : nullptr, ctx.facts());
    const Tensor* a2 = constant_of(n.has_input(1) ? n.inputs[1] : nullptr, ctx.facts());
    const int64_t r0 = rank_of(inner.inputs[0]), r1 = rank_of(n.inputs[0]), r2 = rank_of(n.outputs[0]);
    if (!a1 || !a2 || r0 < 0 || r1 < 0 || r2 < 0) return {};
    // Simulate: which dims of the final tensor are the original ones (true) or inserted ones.
    std::vector<int64_t> axes;
    if (unsqueeze) {
      auto x1 = normalized_axes(a1->to_int64s(), r1), x2 = normalized_axes(a2->to_int64s(), r2);
      if (x1.empty() || x2.empty()) return {};
      std::vector<bool> mid(r1, true), fin;
      for (int64_t a : x1) mid[a] = false;
      size_t k = 0;
      for (int64_t i = 0; i < r2; ++i)
        fin.push_back(std::binary_search(x2.begin(), x2.end(), i) ? false : mid[k++]);
      for (int64_t i = 0; i < r2; ++i)
        if (!fin[i]) axes.push_back(i);
    } else {
      auto x1 = normalized_axes(a1->to_int64s(), r0), x2 = normalized_axes(a2->to_int64s(), r1);
      if (x1.empty() || x2.empty()) return {};
      std::vector<int64_t> mid;  // original index of each dim after the first squeeze
      for (int64_t i = 0; i < r0; ++i)
        if (!std::binary_search(x1.begin(), x1.end(), i)) mid.push_back(i);
      axes = x1;
      for (int64_t a : x2) axes.push_back(mid[a]);
      std::sort(axes.begin(), axes.end());
    }
    if (!ctx.allow()) return {};
    Value* c = add_initializer(g, n.inputs[1]->name + "_merged", Tensor::from_int64s(axes));
    g.set_input(&n, 1, c);
    bypass(g, n, inner);
    return fmt::format("two {}s merged", n.op_type);
  }

  void concat(Graph& g, Node& n, PassContext& ctx) const {
    const int64_t rank = rank_of(n.outputs[0]);
    if (rank < 0) return;
    auto axis_of = [&](const Node& c) {
      int64_t a = attr_int(c, "axis", 0);
      return a < 0 ? a + rank : a;
    };
    std::vector<Value*> inputs;
    std::vector<std::string> merged;
    for (Value* v : n.inputs) {
      Node* p = v ? v->producer : nullptr;
      if (p && p->op_type == "Concat" && p->domain.empty() && p->owner == &g &&
          axis_of(*p) == axis_of(n) && single_consumer(g, v) == &n && ctx.allow()) {
        inputs.insert(inputs.end(), p->inputs.begin(), p->inputs.end());
        merged.push_back(node_label(*p));
      } else {
        inputs.push_back(v);
      }
    }
    if (merged.empty()) return;
    for (int i = n.num_inputs(); i-- > 0;) g.set_input(&n, i, nullptr);
    n.inputs.clear();
    for (size_t i = 0; i < inputs.size(); ++i) g.set_input(&n, static_cast<int>(i), inputs[i]);
    merged.push_back(node_label(n));
    ctx.applied("Concats on the same axis merged", merged, {node_label(n)});
  }
};

}  // namespace

std::unique_ptr<Pass> make_merge_chains() { return std::make_unique<MergeChains>(); }

}  // namespace kiln::opt
