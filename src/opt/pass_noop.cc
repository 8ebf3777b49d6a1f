// Nodes that return their input unchanged are removed: Identity, Dropout at inference (or of ratio
// 0 in training mode), and
// Cast/Reshape/Transpose/Pad/Slice/Expand/Concat/Split/Flatten/Tile that do nothing, x*1, x+0,
// and the second of two idempotent ops (Relu(Relu(x))).
#include <set>

#include "opt/graph_edit.h"
#include "opt/passes.h"

namespace kiln::opt {

namespace {

bool same_type(const Value* a, const Value* b) {
  const TypeInfo &x = a->type, &y = b->type;
  if (!x.is_tensor() || !y.is_tensor() || x.elem != y.elem || !x.shape || !y.shape) return false;
  if (x.shape->size() != y.shape->size()) return false;
  for (size_t i = 0; i < x.shape->size(); ++i)
    if (!(*x.shape)[i].same_as((*y.shape)[i])) return false;
  return true;
}

bool all_equal(const std::optional<std::vector<double>>& v, double x) {
  if (!v) return false;
  for (double e : *v)
    if (e != x) return false;
  return true;
}

// The input a no-op node passes through (null: the node does something).
Value* passthrough(const Node& n, const InferFacts& facts) {
  if (!n.domain.empty() || n.outputs.empty() || !n.outputs[0] || !n.has_input(0)) return nullptr;
  Value* x = n.inputs[0];
  const Value* y = n.outputs[0];
  const std::string& op = n.op_type;
  if (op == "Identity") return x;
  if (op == "Dropout") {
    const bool mask_used = n.num_outputs() > 1 && n.outputs[1] && !n.outputs[1]->uses.empty();
    const bool training = n.has_input(2) && !all_equal(constant_values(n.inputs[2], facts), 0);
    // In training mode a ratio of 0 drops nothing either (torch exports in train mode write it).
    const bool drops = training && !(n.has_input(1) && all_equal(constant_values(n.inputs[1], facts), 0));
    return mask_used || drops ? nullptr : x;
  }
  // The rest change nothing only when the output has the input's type and shape.
  if (!same_type(x, y)) return nullptr;
  if (op == "Cast" || op == "Reshape" || op == "Expand" || op == "Flatten") return x;
  if (op == "Transpose") {
    auto perm = attr_ints(n, "perm");
    for (size_t i = 0; i < perm.size(); ++i)
      if (perm[i] != static_cast<int64_t>(i)) return nullptr;
    return x;
  }
  if (op == "Pad") return all_equal(constant_values(n.inputs[1], facts), 0) ? x : nullptr;
  if (op == "Slice") {
    // same shape and unit steps: the whole tensor
    return !n.has_input(4) || all_equal(constant_values(n.inputs[4], facts), 1) ? x : nullptr;
  }
  if (op == "Tile") return all_equal(constant_values(n.inputs[1], facts), 1) ? x : nullptr;
  if (op == "Concat" && n.num_inputs() == 1) return x;
  if (op == "Split" && n.num_outputs() == 1) return x;
  if (op == "Mul" || op == "Add" || op == "Sub" || op == "Div") {
    if (!n.has_input(1)) return nullptr;
    const double unit = (op == "Mul" || op == "Div") ? 1 : 0;
    return all_equal(constant_values(n.inputs[1], facts), unit) ? x : nullptr;
  }
  return nullptr;
}

// f(f(x)) == f(x)
const std::set<std::string, std::less<>> kIdempotent = {"Relu", "Abs", "Ceil", "Floor", "Round",
                                                         "Sign"};

class EliminateNoops final : public GraphPass {
 public:
  std::string_view name() const override { return "eliminate-noops"; }
  std::string_view summary() const override {
    return "removes Identity, inference (or ratio-0) Dropout and ops that change nothing (x*1, x+0, empty Pad ...)";
  }

 protected:
  void run_graph(Graph& g, const Model& m, PassContext& ctx) const override {
    std::vector<Node*> dead;
    for (const auto& up : g.nodes()) {
      Node* n = up.get();
      Value* x = passthrough(*n, ctx.facts());
      std::string what = n->op_type + " changes nothing";
      if (!x && n->domain.empty() && kIdempotent.contains(n->op_type) && n->has_input(0) &&
          n->inputs[0]->producer && n->inputs[0]->producer->op_type == n->op_type &&
          n->inputs[0]->producer->domain.empty()) {
        x = n->inputs[0];
        what = n->op_type + " of " + n->op_type + " is the inner one";
      }
      if (!x) continue;
      if (!ctx.allow()) break;
      std::string why;
      if (!replace_value(g, n->outputs[0], x, &why)) {
        ctx.near_miss(*n, what + ", but " + why);
        continue;
      }
      ctx.applied(what, {node_label(*n)}, {});
      dead.push_back(n);
    }
    for (Node* n : dead) {
      // A Dropout's unused mask output goes with it.
      for (int i = 0; i < n->num_outputs(); ++i)
        if (n->outputs[i] && n->outputs[i]->producer == n) n->outputs[i]->producer = nullptr;
      g.remove_node(n);
    }
  }
};

}  // namespace

std::unique_ptr<Pass> make_eliminate_noops() { return std::make_unique<EliminateNoops>(); }

}  // namespace kiln::opt
