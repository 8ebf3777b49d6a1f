// Constant folding, and shape computations folded from what inference knows about dims.
#include <unordered_set>

#include "opt/graph_edit.h"
#include "opt/passes.h"

namespace kiln::opt {

namespace {

int64_t constant_input_bytes(const Node& n, const InferFacts& facts) {
  int64_t bytes = 0;
  for (const Value* v : n.inputs)
    if (const Tensor* t = constant_of(v, facts)) bytes += static_cast<int64_t>(t->nbytes());
  return bytes;
}

class FoldConstants final : public GraphPass {
 public:
  std::string_view name() const override { return "fold-constants"; }
  std::string_view summary() const override {
    return "evaluates nodes whose inputs are all constant (Shape of static tensors included)";
  }

 protected:
  void run_graph(Graph& g, const Model& m, PassContext& ctx) const override {
    const InferFacts& facts = ctx.facts();
    std::unordered_map<const Node*, std::string> why_not;
    for (const auto& [n, why] : facts.not_folded) why_not.emplace(n, why);

    std::vector<Node*> folded;
    for (const auto& up : g.nodes()) {
      Node* n = up.get();
      bool all = !n->outputs.empty();
      for (const Value* v : n->outputs)
        if (v && !facts.constants.contains(v)) all = false;
      if (!all) {
        if (auto it = why_not.find(n); it != why_not.end())
          ctx.near_miss(*n, "inputs are constant but not folded: " + it->second);
        continue;
      }
      int64_t out_bytes = 0;
      bool returned = false;
      for (const Value* v : n->outputs) {
        if (!v) continue;
        out_bytes += static_cast<int64_t>(facts.constants.at(v).nbytes());
        returned |= is_graph_output(g, v);
      }
      if (returned) {
        ctx.near_miss(*n, "constant, but its output is a graph output");
        continue;
      }
      const int64_t in_bytes = constant_input_bytes(*n, facts);
      if (out_bytes > ctx.options().fold_max_bytes && out_bytes > in_bytes) {
        ctx.near_miss(*n, fmt::format("folding would store {} bytes, more than its inputs ({}) "
                                      "and the limit ({})",
                                      out_bytes, in_bytes, ctx.options().fold_max_bytes));
        continue;
      }
      if (!ctx.allow()) break;
      std::vector<std::string> made;
      for (int i = 0; i < n->num_outputs(); ++i) {
        Value* v = n->outputs[i];
        if (!v) continue;
        n->outputs[i] = nullptr;
        v->producer = nullptr;
        v->producer_output = -1;
        v->data = facts.constants.at(v);
        v->type = TypeInfo::tensor(v->data.dtype(), shape_of(v->data.dims()));
        g.initializers.push_back(v);
        made.push_back(v->name);
      }
      ctx.applied(fmt::format("{} evaluated to {}", n->op_type, fmt::join(made, ", ")),
                  {node_label(*n)}, {});
      folded.push_back(n);
    }
    for (Node* n : folded) g.remove_node(n);
  }
};

// Reshape whose target shape is computed from the input's shape (Shape -> Gather -> Concat ...):
// the shape becomes a constant, with 0 where a dim is copied and -1 for one that is not known.
class SimplifyShapes final : public GraphPass {
 public:
  std::string_view name() const override { return "simplify-shapes"; }
  std::string_view summary() const override {
    return "turns computed Reshape shapes into constants (0 copies a dim, -1 infers one)";
  }

 protected:
  void run_graph(Graph& g, const Model& m, PassContext& ctx) const override {
    const InferFacts& facts = ctx.facts();
    for (const auto& up : g.nodes()) {
      Node* n = up.get();
      if (n->op_type != "Reshape" || !n->domain.empty() || !n->has_input(1)) continue;
      if (constant_of(n->inputs[1], facts)) continue;
      auto it = facts.dims_values.find(n->inputs[1]);
      if (it == facts.dims_values.end()) continue;
      const std::vector<Dim>& target = it->second;
      const auto& in_shape = n->inputs[0]->type.shape;
      const bool allowzero = attr_int(*n, "allowzero") != 0;
      std::vector<int64_t> shape;
      bool has_minus_one = false;
      for (const Dim& d : target)
        if (d.is_known() && d.value() == -1) has_minus_one = true;
      std::string why;
      for (size_t i = 0; i < target.size() && why.empty(); ++i) {
        const Dim& d = target[i];
        if (d.is_known()) {
          shape.push_back(d.value());
        } else if (!allowzero && in_shape && i < in_shape->size() && (*in_shape)[i].same_as(d) &&
                   !d.is_unknown()) {
          shape.push_back(0);
        } else if (!has_minus_one) {
          shape.push_back(-1);
          has_minus_one = true;
        } else {
          why = fmt::format("target dim {} ({}) is neither known, nor the input's dim {}, nor the "
                            "only unknown one",
                            i, d.to_string(), i);
        }
      }
      if (!why.empty()) {
        ctx.near_miss(*n, why);
        continue;
      }
      if (!ctx.allow()) return;
      const std::string computed = n->inputs[1]->name;
      Value* c = add_initializer(g, computed + "_const", Tensor::from_int64s(shape));
      g.set_input(n, 1, c);
      ctx.applied(fmt::format("Reshape target '{}' is now the constant {}", computed,
                              dims_to_string(shape)),
                  {}, {c->name});
    }
  }
};

}  // namespace

std::unique_ptr<Pass> make_fold_constants() { return std::make_unique<FoldConstants>(); }
std::unique_ptr<Pass> make_simplify_shapes() { return std::make_unique<SimplifyShapes>(); }

std::string kept_weight_decoding(const Node& n) {
  if (!n.domain.empty()) return "";
  // The weights stay int8 (a quarter of the bytes), and the fast engine's int8 kernels read them
  // through the DequantizeLinear (engine/qdq_pattern.h).
  if (n.op_type == "DequantizeLinear") return "a DequantizeLinear of constants is kept (quantized weights)";
  // bf16 or fp16 weights stay so (half the bytes); the fast engine computes their readers in
  // bf16 where the CPU has it (engine/onednn/bf16_support.h).
  const Attribute* to = n.attr("to");
  // Weights: initializers or Constant nodes of rank 2 or more (a Resize's scales, a shape's
  // values fold as before).
  const Value* in = n.has_input(0) ? n.inputs[0] : nullptr;
  const Tensor* w = nullptr;
  if (in && in->is_constant()) w = &in->data;
  else if (in && in->producer && in->producer->op_type == "Constant" && in->producer->domain.empty())
    if (const Attribute* v = in->producer->attr("value"); v && v->kind == AttrKind::kTensor) w = &v->t;
  if (n.op_type == "Cast" && to && to->i == static_cast<int64_t>(DataType::kFloat) && w &&
      (w->dtype() == DataType::kBFloat16 || w->dtype() == DataType::kFloat16) && w->rank() >= 2)
    return "a Cast of bf16/fp16 weights to float32 is kept (reduced-precision weights)";
  return "";
}

}  // namespace kiln::opt
