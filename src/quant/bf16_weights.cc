// bf16 weights (the default form of --mode bf16): the float32 weights of Conv, ConvTranspose,
// MatMul and Gemm, and the tables of Gather, stored as bfloat16 initializers, each read through
// one Cast to float32. Every op stays float32, so any runtime runs the file (ONNX Runtime's CPU
// provider has Cast from bfloat16, and no bf16 Conv or MatMul); kiln's engine computes those
// ops in bf16 where the CPU has it natively (engine/onednn/bf16_support.h).
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "opt/graph_edit.h"
#include "quant/rewrite.h"

namespace kiln::quant {

namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// The input holding the weight of each op (default_ops(Mode::kBFloat16); Gather: its table).
int weight_input(const Node& n) { return n.op_type == "Gather" ? 0 : 1; }

bool float_initializer(const Value* v) {
  return v && v->is_constant() && !v->is_graph_input && v->data.dtype() == DataType::kFloat &&
         v->data.dims().size() >= 2;
}

Tensor to_bf16(const Tensor& t) {
  Tensor out(DataType::kBFloat16, t.dims());
  uint16_t* d = out.data<uint16_t>();
  const float* s = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) d[i] = float_to_bfloat16(s[i]);
  return out;
}

}  // namespace

FloatConversion store_weights_bf16(Rewrite& r, const std::set<std::string>* only,
                                   std::vector<std::string>* stored) {
  FloatConversion stats;
  Graph& g = r.graph;
  std::vector<Node*> order;
  for (const auto& n : g.nodes()) order.push_back(n.get());
  std::map<Value*, Value*> cast_of;  // a float32 weight -> the Cast of its bf16 copy
  const QuantizeOptions& o = r.options;
  auto record = [&](const std::string& label, const std::string& op) {
    if (stored) stored->push_back(label);
    else r.decisions.push_back({label, op, "bf16", ""});
  };
  const auto ops = o.include_ops.empty() ? default_ops(Mode::kBFloat16) : o.include_ops;
  for (Node* n : order) {
    if (!n->domain.empty() || !contains(ops, n->op_type)) continue;
    const int i = weight_input(*n);
    if (!n->has_input(i)) continue;
    Value* w = n->inputs[i];
    const std::string label = node_label(*n);
    if (only && !only->contains(label)) continue;
    const bool by_node = contains(o.exclude_nodes, label);
    if (!only && (by_node || contains(o.exclude_ops, n->op_type))) {
      r.decisions.push_back({label, n->op_type, "float",
                             by_node ? "excluded by --exclude-nodes" : "excluded by --exclude-ops"});
      continue;
    }
    if (auto it = cast_of.find(w); it != cast_of.end()) {  // shared with a node before this one
      g.set_input(n, i, it->second);
      record(label, n->op_type);
      continue;
    }
    if (!float_initializer(w)) {
      if (n->op_type == "Gather" || only) continue;  // Gather: of a shape or an activation
      r.decisions.push_back({label, n->op_type, "float",
                             w->is_constant() ? "its weight is not a float32 tensor of rank 2 or more"
                                              : "its weight is not a constant"});
      continue;
    }
    Value* low = add_constant(r, w->name + "_bf16", to_bf16(w->data));
    Node* cast = add_op(r, "Cast", w->name + "_cast", {low});
    opt::set_attr_int(*cast, "to", static_cast<int64_t>(DataType::kFloat));
    cast->outputs[0]->type = w->type;
    g.set_input(n, i, cast->outputs[0]);  // other readers keep the float32 weight
    cast_of[w] = cast->outputs[0];
    ++stats.converted_initializers;
    ++stats.casts_added;
    record(label, n->op_type);
  }
  return stats;
}

}  // namespace kiln::quant
