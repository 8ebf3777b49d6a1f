#include "backend/graph_desc.h"

namespace kiln::backend {

GraphDesc::GraphDesc(const engine::GraphFacts& facts) : facts_(facts) {
  for (const auto& n : facts.graph().nodes()) add_node(*n);
  for (const Value* v : facts.graph().inputs)
    if (!v->is_constant()) inputs_.push_back(value_index(v));
  for (const Value* v : facts.graph().outputs) outputs_.push_back(value_index(v));
  finish();
}

GraphDesc::GraphDesc(const PartitionSpec& p) : facts_(p.facts) {
  for (const Node* n : p.nodes) add_node(*n);
  for (const Value* v : p.inputs) inputs_.push_back(value_index(v));
  for (const Value* v : p.outputs) outputs_.push_back(value_index(v));
  finish();
}

int32_t GraphDesc::value_index(const Value* v) {
  if (!v) return -1;
  auto it = index_.find(v);
  if (it != index_.end()) return it->second;
  kiln_value_desc d{.name = v->name.c_str(), .dtype = static_cast<kiln_dtype>(facts_.dtype(v)),
                    .rank = -1};
  if (const auto* dims = facts_.dims(v)) {
    dims_.push_back(*dims);
    d.rank = static_cast<int32_t>(dims->size());
    d.dims = dims_.back().data();
  }
  if (const Tensor* c = facts_.constant(v)) d.data = c->raw();
  values_.push_back(d);
  return index_[v] = static_cast<int32_t>(values_.size() - 1);
}

void GraphDesc::add_node(const Node& n) {
  auto& attrs = attrs_.emplace_back();
  for (const Attribute& a : n.attrs) {
    kiln_attr c{.name = a.name.c_str(), .kind = KILN_ATTR_OTHER};
    switch (a.kind) {
      case AttrKind::kInt: c.kind = KILN_ATTR_INT; c.i = a.i; break;
      case AttrKind::kFloat: c.kind = KILN_ATTR_FLOAT; c.f = a.f; break;
      case AttrKind::kString: c.kind = KILN_ATTR_STRING; c.s = a.s.c_str(); break;
      case AttrKind::kInts:
        c.kind = KILN_ATTR_INTS;
        c.ints = ints_.emplace_back(a.ints).data();
        c.n = static_cast<int64_t>(a.ints.size());
        break;
      case AttrKind::kFloats:
        c.kind = KILN_ATTR_FLOATS;
        c.floats = floats_.emplace_back(a.floats).data();
        c.n = static_cast<int64_t>(a.floats.size());
        break;
      default: break;
    }
    attrs.push_back(c);
  }
  auto& ins = io_.emplace_back();
  for (const Value* v : n.inputs) ins.push_back(value_index(v));
  auto& outs = io_.emplace_back();
  for (const Value* v : n.outputs) outs.push_back(value_index(v));
  nodes_.push_back({.name = n.name.c_str(), .op_type = n.op_type.c_str(), .domain = n.domain.c_str(),
                    .opset = n.opset,
                    .n_attrs = static_cast<int32_t>(attrs.size()), .attrs = attrs.data(),
                    .n_inputs = static_cast<int32_t>(ins.size()), .inputs = ins.data(),
                    .n_outputs = static_cast<int32_t>(outs.size()), .outputs = outs.data()});
}

void GraphDesc::finish() {
  desc_ = {.n_values = static_cast<int32_t>(values_.size()), .values = values_.data(),
           .n_nodes = static_cast<int32_t>(nodes_.size()), .nodes = nodes_.data(),
           .n_inputs = static_cast<int32_t>(inputs_.size()), .inputs = inputs_.data(),
           .n_outputs = static_cast<int32_t>(outputs_.size()), .outputs = outputs_.data()};
}

}  // namespace kiln::backend
