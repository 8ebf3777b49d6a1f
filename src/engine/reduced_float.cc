#include "engine/reduced_float.h"

#include <algorithm>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "spec/op_types.h"

namespace kiln::engine {

namespace {

bool reduced(DataType t) { return t == DataType::kFloat16 || t == DataType::kBFloat16; }

DataType dtype_of(const Value* v) {
  return v && v->type.is_tensor() ? v->type.elem : DataType::kUndefined;
}

// The formal parameter value i of a side is bound to (the last one when it is variadic).
const FormalTypes* formal(const std::vector<FormalTypes>& formals, int i) {
  if (formals.empty()) return nullptr;
  if (static_cast<size_t>(i) < formals.size()) return &formals[i];
  return formals.back().variadic ? &formals.back() : nullptr;
}

bool is_type_parameter(const FormalTypes& f) { return f.type_str.find('(') == std::string::npos; }

bool allows_float(const FormalTypes& f) {
  for (const std::string& t : f.types)
    if (t == "tensor(float)") return true;
  return false;
}

// The type parameters of n bound to a reduced float type that n may compute in float32 instead:
// bound so on an input (every input of that parameter of the same type) and given to an output.
// Empty when n is to stay as it is, also when another output of a reduced type has a parameter
// no input binds (LinearAttention's present_state without a past_state: its kernel picks it).
std::set<std::string> float32_parameters(const Node& n, const OpTypes* ops) {
  if (!ops || n.op_type == "Cast" || n.op_type == "CastLike") return {};
  for (const Attribute& a : n.attrs)
    if (a.kind == AttrKind::kGraph || a.kind == AttrKind::kGraphs) return {};
  std::unordered_map<std::string, DataType> bound;
  std::set<std::string> mixed;
  for (int i = 0; i < n.num_inputs(); ++i) {
    const FormalTypes* f = formal(ops->inputs, i);
    if (!n.inputs[i] || !f || !is_type_parameter(*f)) continue;
    const DataType t = dtype_of(n.inputs[i]);
    auto [it, fresh] = bound.emplace(f->type_str, t);
    if (!fresh && it->second != t) mixed.insert(f->type_str);
  }
  std::set<std::string> out;
  for (int i = 0; i < n.num_outputs(); ++i) {
    const FormalTypes* f = formal(ops->outputs, i);
    if (!n.outputs[i] || !f || !is_type_parameter(*f)) continue;
    auto it = bound.find(f->type_str);
    if (it != bound.end() && reduced(it->second) && !mixed.contains(f->type_str) && allows_float(*f))
      out.insert(f->type_str);
    else if (reduced(dtype_of(n.outputs[i])))
      return {};  // a reduced output whose type no input sets here: the kernel's to say
  }
  return out;
}

class Rewriter {
 public:
  // cast_opset: the ai.onnx version the Casts it adds are of (13 or later: bfloat16).
  Rewriter(Graph& g, int cast_opset) : g_(g), cast_opset_(cast_opset) {
    for (const Value* v : g.outputs) graph_outputs_.insert(v);
  }

  // n's signature is `ops`; `params` what float32_parameters found.
  void rewrite(Node& n, const OpTypes& ops, const std::set<std::string>& params) {
    for (int i = 0; i < n.num_inputs(); ++i) {
      const FormalTypes* f = formal(ops.inputs, i);
      Value* in = n.inputs[i];
      if (!in || !f || !params.contains(f->type_str)) continue;
      g_.set_input(&n, i, float32_of(in));
      // A reduced initializer its last reader no longer reads is let go of now, not at the end:
      // the model's weights are not held in both types at once (BERT-base: 220 MB more).
      if (in->is_constant() && !in->is_graph_input && in->uses.empty() && !graph_outputs_.contains(in))
        in->data = Tensor();
    }
    for (int i = 0; i < n.num_outputs(); ++i) {
      const FormalTypes* f = formal(ops.outputs, i);
      Value* out = n.outputs[i];
      if (!out || !f || !params.contains(f->type_str)) continue;
      Value* wide = g_.add_value(g_.unique_name(out->name + "_float32"));
      wide->type = TypeInfo::tensor(DataType::kFloat, out->type.shape);
      g_.set_output(&n, i, wide);
      add_cast(wide, out, out->type.elem);  // the reduced value, under its own name, for the rest
      float32_[out] = wide;
      casts_back_.push_back(out);
    }
  }

  // The Casts back whose value nothing reads any more (every reader computes in float32 now).
  void remove_unread_casts() {
    for (Value* v : casts_back_)
      if (v->uses.empty() && !graph_outputs_.contains(v)) g_.remove_node(v->producer);
  }

 private:
  // v in float32: the float32 value it was made from, a float32 copy of a constant, or a Cast.
  Value* float32_of(Value* v) {
    if (auto it = float32_.find(v); it != float32_.end()) return it->second;
    Value* wide = g_.add_value(g_.unique_name(v->name + "_float32"));
    wide->type = TypeInfo::tensor(DataType::kFloat, v->type.shape);
    if (v->is_constant() && !v->is_graph_input && reduced(v->data.dtype())) {
      wide->data = widened(v->data);
      g_.initializers.push_back(wide);
    } else {
      add_cast(v, wide, DataType::kFloat);
    }
    float32_[v] = wide;
    return wide;
  }

  static Tensor widened(const Tensor& t) {
    Tensor w = Tensor::uninitialized(DataType::kFloat, t.dims());
    const auto* bits = t.data<uint16_t>();
    float* out = w.data<float>();
    const bool half = t.dtype() == DataType::kFloat16;
    for (int64_t i = 0; i < t.numel(); ++i) out[i] = half ? half_to_float(bits[i]) : bfloat16_to_float(bits[i]);
    return w;
  }

  void add_cast(Value* from, Value* to, DataType type) {
    Node* c = g_.add_node("Cast");
    c->name = g_.unique_name(to->name + "_cast");
    c->opset = cast_opset_;
    Attribute a{.name = "to", .kind = AttrKind::kInt};
    a.i = static_cast<int64_t>(type);
    c->attrs.push_back(std::move(a));
    g_.set_input(c, 0, from);
    g_.set_output(c, 0, to);
  }

  Graph& g_;
  int cast_opset_;
  std::set<const Value*> graph_outputs_;
  std::unordered_map<const Value*, Value*> float32_;
  std::vector<Value*> casts_back_;
};

}  // namespace

int compute_reduced_floats_in_float32(Graph& g) {
  struct Todo {
    Node* node;
    const OpTypes* ops;
    std::set<std::string> params;
  };
  std::vector<Todo> todo;
  for (const auto& n : g.nodes()) {
    const OpTypes* ops = find_op_types(n->domain, n->op_type, n->opset);
    if (auto params = float32_parameters(*n, ops); !params.empty()) todo.push_back({n.get(), ops, std::move(params)});
  }
  if (todo.empty()) return 0;
  int opset = 13;
  for (const auto& n : g.nodes())
    if (n->domain.empty()) opset = std::max(opset, n->opset);
  Rewriter r(g, opset);
  for (const Todo& t : todo) r.rewrite(*t.node, *t.ops, t.params);
  r.remove_unread_casts();
  // The initializers let go of above (their float32 copies are read instead).
  std::set<const Value*> outputs(g.outputs.begin(), g.outputs.end());
  std::erase_if(g.initializers, [&](Value* v) {
    return !v->data.defined() && v->uses.empty() && !v->is_graph_input && !outputs.contains(v);
  });
  g.sort_topologically();
  return static_cast<int>(todo.size());
}

}  // namespace kiln::engine
