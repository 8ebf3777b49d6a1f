#include "engine/qdq_pattern.h"

#include <cmath>

#include "ops/attrs.h"

namespace kiln::engine {

namespace {

bool is_int8_type(DataType t) { return t == DataType::kInt8 || t == DataType::kUInt8; }

}  // namespace

std::optional<QuantParams> quant_params(const Node& n, const GraphFacts& f) {
  const bool dq = is_op(&n, "DequantizeLinear");
  if (!dq && !is_op(&n, "QuantizeLinear")) return std::nullopt;
  if (!n.has_input(0) || !n.has_input(1) || n.num_outputs() < 1 || !n.outputs[0]) return std::nullopt;
  if (attr_int(n, "block_size", 0) != 0 || attr_int(n, "precision", 0) != 0) return std::nullopt;
  const Value* real = dq ? n.outputs[0] : n.inputs[0];
  const Value* quant = dq ? n.inputs[0] : n.outputs[0];
  QuantParams p;
  p.type = f.dtype(quant);
  if (f.dtype(real) != DataType::kFloat || !is_int8_type(p.type)) return std::nullopt;
  const Tensor* scale = f.constant(n.inputs[1]);
  if (!scale || scale->dtype() != DataType::kFloat || scale->numel() < 1 || scale->rank() > 1)
    return std::nullopt;
  const Tensor* zp = n.has_input(2) ? f.constant(n.inputs[2]) : nullptr;
  if (n.has_input(2) && (!zp || zp->dtype() != p.type || zp->numel() != scale->numel()))
    return std::nullopt;
  for (int64_t i = 0; i < scale->numel(); ++i) {
    const float s = scale->data<float>()[i];
    if (!std::isfinite(s) || !(s > 0)) return std::nullopt;
    p.scale.push_back(s);
    p.zero_point.push_back(!zp ? 0
                           : p.type == DataType::kInt8 ? zp->data<int8_t>()[i]
                                                       : zp->data<uint8_t>()[i]);
  }
  if (scale->rank() == 1 && scale->numel() > 1) {
    const auto* d = f.dims(quant);
    if (!d || d->empty()) return std::nullopt;
    const int rank = static_cast<int>(d->size());
    const int64_t axis = attr_int(n, "axis", 1);
    if (axis < -rank || axis >= rank) return std::nullopt;
    p.axis = static_cast<int>(axis < 0 ? axis + rank : axis);
    if ((*d)[p.axis] != scale->numel()) return std::nullopt;
  }
  return p;
}

std::optional<DequantizedInput> dequantized_input(const Value* v, const GraphFacts& f) {
  const Node* dq = v ? v->producer : nullptr;
  if (!is_op(dq, "DequantizeLinear") || f.constant(dq->inputs[0])) return std::nullopt;
  auto p = quant_params(*dq, f);
  if (!p || !p->per_tensor() || !f.dims(dq->inputs[0])) return std::nullopt;
  return DequantizedInput{dq, dq->inputs[0], std::move(*p)};
}

std::optional<DequantizedWeight> dequantized_weight(const Value* v, const GraphFacts& f,
                                                    int channel_axis) {
  const Node* dq = v ? v->producer : nullptr;
  if (!is_op(dq, "DequantizeLinear")) return std::nullopt;
  const std::vector<int64_t>* dims = int8_constant_dims(dq->inputs[0], f);
  if (!dims) return std::nullopt;
  auto p = quant_params(*dq, f);
  if (!p || (!p->per_tensor() && p->axis != channel_axis)) return std::nullopt;
  for (int32_t z : p->zero_point)
    if (z != 0) return std::nullopt;  // oneDNN's weights are symmetric
  return DequantizedWeight{dq, dq->inputs[0], dims, std::move(*p)};
}

const std::vector<int64_t>* int8_constant_dims(const Value* v, const GraphFacts& f) {
  if (!v || !f.has_constant(v) || f.dtype(v) != DataType::kInt8) return nullptr;
  return f.dims(v);
}

std::optional<Requantize> quantize_of(const Value* v, const MatchContext& ctx) {
  const Node* q = sole_consumer(v, ctx);
  if (!is_op(q, "QuantizeLinear") || q->inputs[0] != v) return std::nullopt;
  auto p = quant_params(*q, ctx.facts);
  if (!p || !p->per_tensor()) return std::nullopt;
  return Requantize{q, std::move(*p)};
}

int dedicate_dequantize(Graph& g) {
  std::vector<Node*> shared;
  for (const auto& n : g.nodes()) {
    if (!is_op(n.get(), "DequantizeLinear") || n->num_outputs() != 1 || !n->outputs[0]) continue;
    const Value* out = n->outputs[0];
    bool is_output = false;
    for (const Value* o : g.outputs) is_output |= o == out;
    bool in_main = true;  // a subgraph reading it keeps the shared one
    for (const Use& u : out->uses) in_main &= u.node->owner == &g;
    if (!is_output && in_main && out->uses.size() > 1) shared.push_back(n.get());
  }
  // Readers an int8 implementation may take with their DequantizeLinear; the others share one.
  auto int8_reader = [](const Node* n) {
    return n->domain.empty() && (n->op_type == "Conv" || n->op_type == "MatMul" ||
                                 n->op_type == "Gemm" || n->op_type == "Add");
  };
  int added = 0;
  for (Node* dq : shared) {
    Value* out = dq->outputs[0];
    std::vector<Use> own;  // the readers given a copy
    bool kept = false;     // the original still has a reader
    for (const Use& u : out->uses) {
      if (!int8_reader(u.node)) {
        kept = true;
        continue;
      }
      own.push_back(u);
    }
    if (!kept && !own.empty()) own.erase(own.begin());  // the first keeps the original
    for (const Use& use : own) {
      Node* copy = g.add_node(dq->op_type, dq->domain);
      copy->name = g.unique_name(dq->name.empty() ? "dequantize" : dq->name);
      copy->attrs = dq->attrs;
      copy->opset = dq->opset;
      for (int i = 0; i < dq->num_inputs(); ++i) g.set_input(copy, i, dq->inputs[i]);
      Value* v = g.add_value(g.unique_name(out->name));
      v->type = out->type;
      g.set_output(copy, 0, v);
      g.set_input(use.node, use.input_index, v);
      ++added;
    }
  }
  if (added) g.sort_topologically();
  return added;
}

}  // namespace kiln::engine
