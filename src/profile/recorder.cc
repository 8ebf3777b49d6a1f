#include "profile/recorder.h"

#include <fmt/format.h>

#include <algorithm>

#include "support/error.h"

namespace kiln {

namespace {

bool same_operand(const OperandShape& s, const RtValue* v) {
  if (!v || !v->is_tensor()) return !s.present && s.bytes == OperandShape::of(v).bytes;
  return s.present && s.dtype == v->tensor.dtype() && s.dims == v->tensor.dims();
}

template <typename Values, typename Get>
bool same_operands(const std::vector<OperandShape>& shapes, const Values& values, Get get) {
  if (shapes.size() != values.size()) return false;
  for (size_t i = 0; i < shapes.size(); ++i)
    if (!same_operand(shapes[i], get(values[i]))) return false;
  return true;
}

const RtValue* input_ptr(const RtValue* v) { return v; }
const RtValue* output_ptr(const RtValue& v) { return v.is_none() ? nullptr : &v; }

template <typename Values, typename Get>
std::vector<OperandShape> shapes_of(const Values& values, Get get) {
  std::vector<OperandShape> out;
  out.reserve(values.size());
  for (const auto& v : values) out.push_back(OperandShape::of(get(v)));
  return out;
}

// A step that changes a tensor's memory layout for the node it is reported under ("onednn.reorder"):
// reported apart from that node, with no arithmetic.
bool is_layout_change(std::string_view kernel) { return kernel.ends_with("reorder"); }

// The node's inputs in its own order. An executor that reports every input (the interpreter) is
// taken as is. One that keeps constants inside its kernels (oneDNN's reordered weights) reports
// only the activations: they fill the node's non-constant inputs in order, constants come from
// the graph, and reported extras (a fused residual) follow.
std::vector<OperandShape> node_inputs(const Node& n, std::vector<OperandShape> reported) {
  if (reported.size() == n.inputs.size()) return reported;
  std::vector<OperandShape> aligned;
  size_t next = 0;
  for (const Value* v : n.inputs) {
    if (!v) aligned.emplace_back();
    else if (v->is_constant() || next >= reported.size()) aligned.push_back(OperandShape::of(v));
    else aligned.push_back(reported[next++]);
  }
  for (; next < reported.size(); ++next) aligned.push_back(reported[next]);
  return aligned;
}

// Name, op type, operands and cost of a new entry from what its step reported.
void describe(ProfiledNode& p, std::vector<OperandShape> reported) {
  const bool layout = is_layout_change(p.kernel);
  if (!p.node) {  // an executor's own step (a copy of an output ...)
    p.name = p.op_type = p.kernel;
  } else {
    p.name = node_display_name(*p.node) + (layout ? " (reorder)" : "");
    p.op_type = layout ? "Reorder" : node_op_name(*p.node);
    p.subgraph = subgraph_path(*p.node);
  }
  if (p.node && !layout) {
    p.inputs = node_inputs(*p.node, std::move(reported));
    p.cost = node_cost(*p.node, p.inputs, p.outputs);
    return;
  }
  p.inputs = std::move(reported);
  p.cost = {};
  for (const OperandShape& s : p.inputs) p.cost.bytes += s.bytes;
  for (const OperandShape& s : p.outputs) p.cost.bytes += s.bytes;
}

}  // namespace

std::string node_display_name(const Node& n) {
  if (!n.name.empty()) return n.name;
  for (const Value* v : n.outputs)
    if (v) return v->name;
  return n.op_type;
}

std::string node_op_name(const Node& n) {
  return n.domain.empty() ? n.op_type : n.domain + "." + n.op_type;
}

SubgraphHolder holder_of(const Graph& g) {
  SubgraphHolder h{nullptr, g.name.empty() ? "subgraph" : g.name};  // no holder found: the name
  if (!g.parent()) return h;
  for (const auto& node : g.parent()->nodes())
    for (const Attribute& a : node->attrs) {
      if (a.g.get() == &g) return {node.get(), node_display_name(*node) + " > " + a.name};
      for (size_t k = 0; k < a.graphs.size(); ++k)
        if (a.graphs[k].get() == &g)
          return {node.get(), fmt::format("{} > {}[{}]", node_display_name(*node), a.name, k)};
    }
  return h;
}

std::string subgraph_path(const Node& n) {
  std::string path;
  for (const Graph* g = n.owner; g && g->parent(); g = g->parent()) {
    const std::string step = holder_of(*g).step;
    path = path.empty() ? step : step + " > " + path;
  }
  return path;
}

void ProfileRecorder::begin_run() {
  KILN_CHECK(!in_run_, ErrorKind::kRuntime, "profile: a run began inside another");
  in_run_ = true;
  current_ = {steady_now_ns(), 0};
}

void ProfileRecorder::end_run() {
  KILN_CHECK(in_run_, ErrorKind::kRuntime, "profile: a run ended that had not begun");
  current_.end_ns = steady_now_ns();
  data_.runs.push_back(current_);
  in_run_ = false;
}

int ProfileRecorder::node_index(const NodeEvent& e) {
  std::vector<int>& entries = by_node_[e.node];
  for (int i : entries) {
    const ProfiledNode& p = data_.nodes[i];
    if (p.kernel == e.kernel && p.depth == e.depth &&
        same_operands(reported_inputs_[i], e.inputs, input_ptr) &&
        same_operands(p.outputs, e.outputs, output_ptr))
      return i;
  }
  ProfiledNode p;
  p.node = e.node;
  p.kernel = std::string(e.kernel);
  p.depth = e.depth;
  p.outputs = shapes_of(e.outputs, output_ptr);
  std::vector<OperandShape> reported = shapes_of(e.inputs, input_ptr);
  reported_inputs_.push_back(reported);
  describe(p, std::move(reported));
  data_.nodes.push_back(std::move(p));
  entries.push_back(static_cast<int>(data_.nodes.size()) - 1);
  return entries.back();
}

void ProfileRecorder::on_node(const NodeEvent& e) {
  KILN_CHECK(in_run_, ErrorKind::kRuntime, "profile: a node was heard outside a run");
  data_.executions.push_back({.run = static_cast<int>(data_.runs.size()),
                              .node = node_index(e),
                              .span = {e.start_ns, e.end_ns}});
}

}  // namespace kiln
