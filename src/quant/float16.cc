// fp16 / bf16: float32 initializers converted (with range checks), every node whose op takes the
// reduced type (the op schemas' type constraints) computing in it, Casts where a float32 node or a
// float32-only input (shape inputs, Resize scales, ...) meets a reduced value, and the model's
// inputs and outputs kept float32 (--keep-io-types).
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "opt/graph_edit.h"
#include "quant/rewrite.h"
#include "spec/op_types.h"
#include "support/error.h"

namespace kiln::quant {

namespace {

// Ops kept float32 whatever their schema says: index- and shape-producing ops whose float inputs
// are ranges or boxes, ops that make their output type from an attribute, and reductions of
// values that overflow fp16 easily.
const std::set<std::string> kKeepFloat = {
    "Range", "NonMaxSuppression", "TopK", "RoiAlign", "Resize", "Upsample", "CumSum",
    "ConstantOfShape", "Cast", "CastLike", "EyeLike", "RandomNormal", "RandomUniform",
    "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli", "If", "Loop", "Scan",
    "SequenceConstruct", "SequenceInsert", "SplitToSequence", "ConcatFromSequence", "Shape", "Size"};

std::string type_name(DataType t) { return fmt::format("tensor({})", dtype_name(t)); }

bool is_f32(const Value* v) {
  return v && v->type.kind == TypeInfo::Kind::kTensor && v->type.elem == DataType::kFloat;
}

// Whether formal `i` of the op's inputs (or outputs) takes the reduced type.
bool formal_allows(const std::vector<FormalTypes>& formals, size_t i, DataType to) {
  if (formals.empty()) return false;
  const FormalTypes& f = i < formals.size() ? formals[i] : formals.back();
  if (i >= formals.size() && !f.variadic) return false;
  for (const std::string& t : f.types)
    if (t == type_name(to)) return true;
  return false;
}

class FloatConverter {
 public:
  FloatConverter(Rewrite& r, DataType to) : r_(r), to_(to) {}

  FloatConversion run() {
    Graph& g = r_.graph;
    if (!r_.options.keep_io_types)
      for (Value* v : g.inputs)
        if (is_f32(v) && !v->is_constant()) v->type.elem = to_, low_.insert(v);
    std::vector<Node*> order;
    for (const auto& n : g.nodes()) order.push_back(n.get());
    for (Node* n : order) convert(*n);
    for (size_t i = 0; i < g.outputs.size(); ++i) {
      Value* v = g.outputs[i];
      if (!low_.contains(v) || !r_.options.keep_io_types) continue;
      // The producer writes a reduced value; a Cast makes the output under its own name.
      Value* low = g.add_value(g.unique_name(v->name + "_" + std::string(dtype_name(to_))));
      low->type = v->type;
      g.set_output(v->producer, v->producer_output, low);
      redirect_uses(g, v, low);
      low_.insert(low);
      Node* cast = add_op(r_, "Cast", v->name + "_cast", {low});
      opt::set_attr_int(*cast, "to", static_cast<int64_t>(DataType::kFloat));
      g.set_output(cast, 0, v);
      v->type.elem = DataType::kFloat;
      ++stats_.casts_added;
    }
    return stats_;
  }

 private:
  bool converts(const Node& n, const OpTypes*& types) const {
    types = nullptr;
    if (!n.domain.empty() || kKeepFloat.contains(n.op_type)) return false;
    types = find_op_types(n.domain, n.op_type, n.opset);
    if (!types) return false;
    bool any = false;
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      const Value* v = n.outputs[i];
      if (!is_f32(v)) continue;
      if (!formal_allows(types->outputs, i, to_)) return false;
      for (const Use& u : v->uses)
        if (u.node->owner != &r_.graph) return false;  // read inside a subgraph: stays float32
      any = true;
    }
    return any;
  }

  Tensor reduced(const Tensor& t) {
    Tensor out(to_, t.dims());
    uint16_t* d = out.data<uint16_t>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      float x = static_cast<float>(t.get_f64(i));
      if (to_ == DataType::kFloat16) {
        if (std::isfinite(x) && std::fabs(x) > 65504.0f) x = std::copysign(65504.0f, x), ++stats_.clamped_values;
        else if (x != 0 && std::fabs(x) < 5.9604645e-8f / 2) ++stats_.flushed_values;
        d[i] = float_to_half(x);
      } else {
        d[i] = float_to_bfloat16(x);
      }
    }
    return out;
  }

  Value* cast_of(Value* v, DataType to, std::map<Value*, Value*>& cache) {
    if (auto it = cache.find(v); it != cache.end()) return it->second;
    Node* c = add_op(r_, "Cast", v->name + "_cast_" + std::string(dtype_name(to)), {v});
    opt::set_attr_int(*c, "to", static_cast<int64_t>(to));
    c->outputs[0]->type = TypeInfo::tensor(to);
    ++stats_.casts_added;
    return cache[v] = c->outputs[0];
  }

  Value* reduced_input(Value* v) {
    if (low_.contains(v)) return v;
    if (v->is_constant() && !v->is_graph_input) {
      if (auto it = converted_.find(v); it != converted_.end()) return it->second;
      ++stats_.converted_initializers;
      Value* c = add_constant(r_, v->name + "_" + std::string(dtype_name(to_)), reduced(v->data));
      low_.insert(c);
      return converted_[v] = c;
    }
    return cast_of(v, to_, to_low_);
  }

  void convert(Node& n) {
    Graph& g = r_.graph;
    const OpTypes* types = nullptr;
    const bool low = converts(n, types);
    for (int i = 0; i < n.num_inputs(); ++i) {
      Value* v = n.inputs[i];
      if (!v) continue;
      const bool slot_low = low && formal_allows(types->inputs, i, to_);
      if (slot_low && !low_.contains(v) && is_f32(v)) g.set_input(&n, i, reduced_input(v));
      else if (!slot_low && low_.contains(v)) g.set_input(&n, i, cast_of(v, DataType::kFloat, to_float_));
    }
    if (low && n.op_type == "Constant") {
      Attribute* a = n.attr("value");
      if (!a || a->t.dtype() != DataType::kFloat) return record(n, false, "a Constant not of float32");
      a->t = reduced(a->t);
      ++stats_.converted_initializers;
    }
    if (low)
      for (Value* v : n.outputs)
        if (is_f32(v)) v->type.elem = to_, low_.insert(v);
    record(n, low, low ? "" : why_float(n, types));
  }

  std::string why_float(const Node& n, const OpTypes* types) const {
    bool has_float = false;
    for (const Value* v : n.outputs) has_float |= is_f32(v);
    if (!has_float) return "";
    if (kKeepFloat.contains(n.op_type)) return "kept float32 (index, shape or type-making op)";
    if (!n.domain.empty()) return fmt::format("op of domain '{}'", n.domain);
    if (!types) return "no schema known for this op version";
    return fmt::format("its schema does not take {}", dtype_name(to_));
  }

  void record(const Node& n, bool low, const std::string& why) {
    if (low) r_.decisions.push_back({node_label(n), n.op_type, std::string(dtype_name(to_)), ""});
    else if (!why.empty()) r_.decisions.push_back({node_label(n), n.op_type, "float", why});
  }

  Rewrite& r_;
  DataType to_;
  FloatConversion stats_;
  std::set<const Value*> low_;
  std::map<Value*, Value*> converted_, to_low_, to_float_;
};

}  // namespace

FloatConversion convert_float_precision(Rewrite& r, DataType to) {
  return FloatConverter(r, to).run();
}

}  // namespace kiln::quant
