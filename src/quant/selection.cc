#include "quant/selection.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "ir/walk.h"
#include "support/error.h"

namespace kiln::quant {

namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

bool is_float_tensor(const Value* v) {
  return v && v->type.kind == TypeInfo::Kind::kTensor && v->type.elem == DataType::kFloat;
}

int64_t int_attr(const Node& n, const char* name, int64_t dflt) {
  const Attribute* a = n.attr(name);
  return a ? a->i : dflt;
}

// Why node n (of a quantizable op) cannot be quantized; empty when it can.
std::string why_not(const Node& n, const QuantizeOptions& o) {
  if (n.num_inputs() < 2 || !n.inputs[0] || !n.inputs[1]) return "an input is missing";
  const Value* x = n.inputs[0];
  const Value* w = n.inputs[kWeightInput];
  if (!is_float_tensor(x)) return "its activation input is not float32";
  if (x->is_constant()) return "its first input is a constant";
  if (!w->is_constant()) return "its weight is not a constant (activation x activation)";
  if (w->data.dtype() != DataType::kFloat) return "its weight is not float32";
  if (n.op_type == "MatMul" && w->data.rank() != 2) return "its weight is not 2-D";
  if (n.op_type == "Gemm") {
    if (int_attr(n, "transA", 0) != 0) return "Gemm with transA";
    if (w->data.rank() != 2) return "its weight is not 2-D";
    const Attribute* beta = n.attr("beta");
    if (n.has_input(2) && !n.inputs[2]->is_constant() && beta && beta->f != 1.0f)
      return "Gemm with beta != 1 and a C computed at run time";
  }
  if (n.op_type == "Conv") {
    if (w->data.rank() < 3) return "its weight has rank below 3";
    if (n.has_input(2) && !n.inputs[2]->is_constant()) return "its bias is not a constant";
  }
  if (o.mode == Mode::kDynamic && n.op_type == "Conv" && int_attr(n, "group", 1) != 1)
    return "ConvInteger of a grouped conv";
  if (o.mode == Mode::kStatic && o.format == Format::kQOperator && n.op_type == "Gemm")
    return "Gemm has no standard QLinear form (kept float; the QDQ format quantizes it)";
  return "";
}

}  // namespace

std::string node_label(const Node& n) {
  if (!n.name.empty()) return n.name;
  return !n.outputs.empty() && n.outputs[0] ? n.outputs[0]->name : n.op_type;
}

void check_filters(const Graph& g, const QuantizeOptions& o, const std::string& model_name) {
  const auto ok_ops = quantizable_ops(o.mode, o.format);
  std::set<std::string> ops, names;
  for_each_nested_node(g, [&](const Node& n) {
    ops.insert(n.op_type);
    names.insert(node_label(n));
  });
  for (const std::string& op : o.include_ops)
    KILN_CHECK(contains(ok_ops, op), ErrorKind::kBadInput,
               "--include-ops '{}': kiln does not quantize {} in {} mode (it quantizes {})", op, op,
               mode_name(o.mode), fmt::join(ok_ops, ", "));
  for (const std::string& op : o.exclude_ops)
    KILN_CHECK(ops.contains(op), ErrorKind::kBadInput, "--exclude-ops '{}': '{}' has no {} node",
               op, model_name, op);
  for (const std::string& name : o.exclude_nodes)
    KILN_CHECK(names.contains(name), ErrorKind::kBadInput,
               "--exclude-nodes '{}': '{}' has no node of that name", name, model_name);
}

Selection select_nodes(Graph& g, const QuantizeOptions& o) {
  const auto ops = o.include_ops.empty() ? default_ops(o.mode) : o.include_ops;
  Selection s;
  for_each_nested_node(g, [&](Node& n) {
    if (!n.domain.empty() || !contains(ops, n.op_type)) return;
    const std::string label = node_label(n);
    std::string reason;
    if (contains(o.exclude_nodes, label)) reason = "excluded by --exclude-nodes";
    else if (contains(o.exclude_ops, n.op_type)) reason = "excluded by --exclude-ops";
    else reason = why_not(n, o);
    if (reason.empty()) s.nodes.push_back(&n);
    else s.skipped.push_back({label, n.op_type, "float", reason});
  });
  return s;
}

}  // namespace kiln::quant
