#include "quant/rewrite.h"

#include <algorithm>
#include <set>

#include "ir/walk.h"
#include "ops/infer.h"
#include "opt/graph_edit.h"
#include "opt/pipeline.h"
#include "support/error.h"

namespace kiln::quant {

Value* add_constant(Rewrite& r, const std::string& base, Tensor t) {
  return opt::add_initializer(r.graph, base, std::move(t));
}

Node* add_op(Rewrite& r, const std::string& op, const std::string& name,
             const std::vector<Value*>& inputs, int outputs, const std::string& domain) {
  const int opset = domain.empty() ? r.opset : opt::model_opset(r.model, domain);
  return opt::add_node(r.graph, op, r.graph.unique_name(name), inputs, outputs, opset, domain);
}

void redirect_uses(Graph& g, Value* from, Value* to, const Node* except) {
  const std::vector<Use> uses = from->uses;
  for (const Use& u : uses)  // readers in g only: `to` may not exist in an enclosing graph
    if (u.node != except && u.node->owner == &g) g.set_input(u.node, u.input_index, to);
}

void take_over_output(Graph& g, Node& old, Node& by) {
  g.set_output(&by, 0, old.outputs[0]);
  g.remove_node(&old);
}

void finish_rewrite(Rewrite& r) {
  for (Graph* g : opt::graphs_inner_first(r.model)) g->sort_topologically();
  opt::optimize(r.model, {"dce"});
  // Intermediate types may have changed (fp16); inference gives them again.
  for (Value* v : r.graph.value_infos)
    if (!v->is_graph_input && !opt::is_graph_output(r.graph, v)) v->has_declared_type = false;
  r.graph.value_infos.clear();
  infer_shapes(r.model);
}

void weights_as_initializers(Graph& g) {
  // A Constant node's tensor, or an Identity of an initializer (torch shares equal biases so).
  auto constant_data = [](const Node& n) -> const Tensor* {
    if (!n.domain.empty() || n.outputs.size() != 1 || !n.outputs[0]) return nullptr;
    const Attribute* a = n.attr("value");
    if (n.op_type == "Constant" && a && a->kind == AttrKind::kTensor) return &a->t;
    if (n.op_type == "Identity" && n.has_input(0) && n.inputs[0]->is_constant() &&
        !n.inputs[0]->is_graph_input)
      return &n.inputs[0]->data;
    return nullptr;
  };
  std::vector<Node*> constants;
  for_each_nested_node(g, [&](Node& n) {
    if (!constant_data(n)) return;
    for (const Use& u : n.outputs[0]->uses)
      if ((u.node->op_type == "Conv" || u.node->op_type == "MatMul" || u.node->op_type == "Gemm") &&
          u.input_index >= 1) {
        constants.push_back(&n);
        break;
      }
  });
  for (Node* n : constants) {
    Value* v = n->outputs[0];
    Graph& owner = *n->owner;
    v->data = *constant_data(*n);
    owner.remove_node(n);
    owner.initializers.push_back(v);
  }
}

int weight_axis(const Node& n, const QuantizeOptions& o, int opset) {
  const bool want = o.per_channel == PerChannel::kOn ||
                    (o.per_channel == PerChannel::kDefault && n.op_type == "Conv");
  if (!want) return -1;
  // DequantizeLinear's axis is opset 13; QLinearConv and MatMulInteger take per-channel from 10.
  if (o.mode == Mode::kStatic && o.format == Format::kQdq && opset < 13) return -1;
  if (n.op_type == "Conv") return 0;
  if (n.op_type == "Gemm") {
    const Attribute* t = n.attr("transB");
    return t && t->i ? 0 : 1;
  }
  return 1;  // MatMul [K, N]
}

Value* quantized_output(const Graph& g, const Node& n) {
  Value* y = n.outputs.empty() ? nullptr : n.outputs[0];
  if (!y) return nullptr;
  Node* next = opt::single_consumer(g, y);
  if (!next || !next->domain.empty() || next->outputs.size() != 1 || !next->outputs[0] ||
      next->inputs[0] != y)
    return y;
  // A Clip from 0 or more clips as an output range from 0 does (its zero point at the bottom).
  const bool clip_from_zero = next->op_type == "Clip" && next->has_input(1) &&
                              next->inputs[1]->is_constant() && next->inputs[1]->data.numel() == 1 &&
                              next->inputs[1]->data.get_f64(0) >= 0;
  if (next->op_type == "Relu" || clip_from_zero) return next->outputs[0];
  return y;
}

std::vector<std::string> tensors_to_calibrate(const Graph& g, const Selection& s,
                                              const QuantizeOptions& o) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto add = [&](const Value* v) {
    if (v && seen.insert(v->name).second) out.push_back(v->name);
  };
  for (const Node* n : s.nodes) {
    add(n->inputs[0]);
    const Graph& owner = *n->owner;
    const Value* y = quantized_output(owner, *n);
    // QDQ leaves the graph's outputs float; QOperator quantizes every quantized node's result.
    if (o.format == Format::kQOperator || !opt::is_graph_output(owner, y)) add(y);
  }
  return out;
}

}  // namespace kiln::quant
