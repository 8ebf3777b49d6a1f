#include "profile/recorder.h"

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
        same_operands(p.inputs, e.inputs, input_ptr) &&
        same_operands(p.outputs, e.outputs, output_ptr))
      return i;
  }
  ProfiledNode p;
  p.node = e.node;
  p.name = node_display_name(*e.node);
  p.op_type = node_op_name(*e.node);
  p.kernel = std::string(e.kernel);
  p.depth = e.depth;
  for (const RtValue* v : e.inputs) p.inputs.push_back(OperandShape::of(input_ptr(v)));
  for (const RtValue& v : e.outputs) p.outputs.push_back(OperandShape::of(output_ptr(v)));
  p.cost = node_cost(*e.node, p.inputs, p.outputs);
  data_.nodes.push_back(std::move(p));
  entries.push_back(static_cast<int>(data_.nodes.size()) - 1);
  return entries.back();
}

void ProfileRecorder::on_node(const NodeEvent& e) {
  KILN_CHECK(in_run_ && e.node, ErrorKind::kRuntime, "profile: a node was heard outside a run");
  data_.executions.push_back({.run = static_cast<int>(data_.runs.size()),
                              .node = node_index(e),
                              .span = {e.start_ns, e.end_ns}});
}

}  // namespace kiln
