#include "spec/normalize.h"

#include <cctype>

#include "ir/walk.h"
#include "support/error.h"

namespace kiln {

const std::vector<NormalizeRule>& normalize_rules() {
  static const std::vector<NormalizeRule> rules = [] {
    const DataType i64 = DataType::kInt64, same = DataType::kUndefined;
    std::vector<NormalizeRule> r = {
        {"Squeeze", 13, {{"axes", 1, i64, false}}},
        {"Unsqueeze", 13, {{"axes", 1, i64, false}}},
        {"Split", 13, {{"split", 1, i64, false}}},
        {"ReduceSum", 13, {{"axes", 1, i64, false}}},
        {"Slice", 10, {{"starts", 1, i64, false}, {"ends", 2, i64, false}, {"axes", 3, i64, false}}},
        {"Pad", 11, {{"pads", 1, i64, false}, {"paddings", 1, i64, false}, {"value", 2, same, true}}},
        {"Clip", 11, {{"min", 1, same, true}, {"max", 2, same, true}}},
        {"TopK", 10, {{"k", 1, i64, false}}},
        {"Dropout", 12, {{"ratio", 1, DataType::kFloat, true}}},
        {"Upsample", 9, {{"scales", 1, DataType::kFloat, false}}},
    };
    for (const char* op : {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                           "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"})
      r.push_back({op, 18, {{"axes", 1, i64, false}}});
    return r;
  }();
  return rules;
}

namespace {

const NormalizeRule* rule_for(const Node& n) {
  if (!n.domain.empty()) return nullptr;
  for (const auto& r : normalize_rules())
    if (r.op == n.op_type && n.opset < r.before) return &r;
  return nullptr;
}

Tensor constant_from_attr(const Attribute& a, DataType dtype, bool scalar, const Node& n) {
  std::vector<double> values;
  if (a.kind == AttrKind::kInts) values.assign(a.ints.begin(), a.ints.end());
  else if (a.kind == AttrKind::kFloats) values.assign(a.floats.begin(), a.floats.end());
  else if (a.kind == AttrKind::kInt) values = {double(a.i)};
  else if (a.kind == AttrKind::kFloat) values = {double(a.f)};
  else fail(ErrorKind::kBadModel, "{}attribute '{}' has the wrong kind", n.where(), a.name);
  if (a.kind == AttrKind::kInts && dtype == DataType::kInt64) {
    Tensor t(DataType::kInt64, {int64_t(a.ints.size())});
    for (size_t i = 0; i < a.ints.size(); ++i) t.data<int64_t>()[i] = a.ints[i];
    return t;
  }
  Tensor t(dtype, scalar ? std::vector<int64_t>{} : std::vector<int64_t>{int64_t(values.size())});
  for (size_t i = 0; i < values.size() && i < size_t(t.numel()); ++i) t.set_f64(i, values[i]);
  return t;
}

// Cast before opset 6 names its target type as a string ("FLOAT").
DataType dtype_from_upper_name(const std::string& s) {
  for (int32_t i = 1; i < kDataTypeCount; ++i) {
    std::string name(dtype_name(static_cast<DataType>(i)));
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (name == s) return static_cast<DataType>(i);
  }
  return DataType::kUndefined;
}

void normalize_node(Node& n) {
  if (n.domain.empty() && n.op_type == "Cast" && n.opset < 6) {
    Attribute* to = n.attr("to");
    if (to && to->kind == AttrKind::kString) {
      const DataType t = dtype_from_upper_name(to->s);
      KILN_CHECK(t != DataType::kUndefined, ErrorKind::kBadModel, "{}unknown type '{}' in 'to'",
                 n.where(), to->s);
      to->kind = AttrKind::kInt;
      to->i = static_cast<int64_t>(t);
    }
    return;
  }
  // Resize-10 takes (X, scales); later versions (X, roi, scales, sizes).
  if (n.domain.empty() && n.op_type == "Resize" && n.opset < 11 && n.num_inputs() == 2) {
    Value* scales = n.inputs[1];
    n.owner->set_input(&n, 1, nullptr);
    n.owner->set_input(&n, 2, scales);
    return;
  }
  const NormalizeRule* rule = rule_for(n);
  if (!rule) return;
  for (const auto& mv : rule->moves) {
    const Attribute* a = n.attr(mv.attr);
    if (!a) continue;
    DataType dt = mv.dtype;
    if (dt == DataType::kUndefined)
      dt = n.has_input(0) && n.inputs[0]->type.elem != DataType::kUndefined ? n.inputs[0]->type.elem
                                                                           : DataType::kFloat;
    Tensor t = constant_from_attr(*a, dt, mv.scalar, n);
    Graph& g = *n.owner;
    Value* v = g.add_value(g.unique_name((n.name.empty() ? n.op_type : n.name) + "_" + mv.attr));
    v->data = std::move(t);
    v->type = TypeInfo::tensor(v->data.dtype(), shape_of(v->data.dims()));
    g.set_input(&n, mv.input, v);
    std::erase_if(n.attrs, [&](const Attribute& x) { return x.name == mv.attr; });
  }
}

void normalize_graph(Graph& g) {
  for_each_nested_node(g, [](Node& n) { normalize_node(n); });
}

}  // namespace

void normalize_opsets(Model& m) {
  // Function bodies take their opsets from the function; set each node's version first.
  for (auto& f : m.functions) normalize_graph(*f.body);
  normalize_graph(*m.graph);
}

Denormalized denormalize(const Node& n) {
  Denormalized d;
  d.inputs.assign(n.inputs.begin(), n.inputs.end());
  if (n.domain.empty() && n.op_type == "Cast" && n.opset < 6) {
    if (const Attribute* to = n.attr("to"); to && to->kind == AttrKind::kInt) {
      Attribute a = *to;
      a.kind = AttrKind::kString;
      a.s = std::string(dtype_name(static_cast<DataType>(to->i)));
      for (char& c : a.s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      d.extra_attrs.push_back(std::move(a));
      d.replaced_attr = "to";
    }
    return d;
  }
  if (n.domain.empty() && n.op_type == "Resize" && n.opset < 11 && n.num_inputs() >= 3) {
    d.inputs = {n.inputs[0], n.inputs[2]};
    return d;
  }
  const NormalizeRule* rule = rule_for(n);
  if (!rule) return d;
  size_t keep = d.inputs.size();
  for (const auto& mv : rule->moves) {
    if (!n.has_input(mv.input) || !n.inputs[mv.input]->is_constant()) continue;
    if (mv.attr == "paddings" && n.opset >= 2) continue;  // Pad-1 only
    if (mv.attr == "pads" && n.opset < 2) continue;
    const Tensor& t = n.inputs[mv.input]->data;
    Attribute a;
    a.name = mv.attr;
    if (mv.scalar) {
      a.kind = AttrKind::kFloat;
      a.f = static_cast<float>(t.get_f64(0));
    } else if (is_float(t.dtype())) {
      a.kind = AttrKind::kFloats;
      for (int64_t i = 0; i < t.numel(); ++i) a.floats.push_back(static_cast<float>(t.get_f64(i)));
    } else if (mv.attr == "k") {
      a.kind = AttrKind::kInt;
      a.i = t.get_i64(0);
    } else {
      a.kind = AttrKind::kInts;
      a.ints = t.to_int64s();
    }
    d.extra_attrs.push_back(std::move(a));
    d.inputs[mv.input] = nullptr;
    keep = std::min(keep, size_t(mv.input));
  }
  while (d.inputs.size() > keep && !d.inputs.back()) d.inputs.pop_back();
  return d;
}

}  // namespace kiln
