#include "profile/chrome_trace.h"

#include <cmath>
#include <unordered_map>

namespace kiln {

namespace {

using nlohmann::ordered_json;

// Microseconds since `origin`, kept to the nanosecond.
double micros(int64_t ns, int64_t origin) {
  return std::round(static_cast<double>(ns - origin)) / 1000.0;
}

ordered_json complete_event(const char* cat, const std::string& name, const TimeSpan& span,
                            int64_t origin, int64_t pid, int64_t tid) {
  ordered_json e;
  e["cat"] = cat;
  e["pid"] = pid;
  e["tid"] = tid;
  e["dur"] = static_cast<double>(span.duration_ns()) / 1000.0;
  e["ts"] = micros(span.start_ns, origin);
  e["ph"] = "X";
  e["name"] = name;
  e["args"] = ordered_json::object();
  return e;
}

// A node's position in its graph, as ONNX Runtime's node_index.
class NodeIndex {
 public:
  int of(const Node* n) {
    if (!n) return -1;
    auto it = index_.find(n);
    if (it != index_.end()) return it->second;
    const auto& nodes = n->owner->nodes();
    for (size_t i = 0; i < nodes.size(); ++i) index_[nodes[i].get()] = static_cast<int>(i);
    return index_.at(n);
  }

 private:
  std::unordered_map<const Node*, int> index_;
};

// ONNX Runtime's node args: sizes in bytes as strings, activations apart from parameters.
ordered_json node_args(const ProfiledNode& n, int node_index, int run) {
  double activations = 0, parameters = 0, outputs = 0;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const bool parameter = n.node && i < n.node->inputs.size() && n.node->inputs[i] &&
                           n.node->inputs[i]->is_constant();
    (parameter ? parameters : activations) += n.inputs[i].bytes;
  }
  for (const OperandShape& s : n.outputs) outputs += s.bytes;
  auto bytes = [](double b) { return std::to_string(static_cast<int64_t>(b)); };
  ordered_json a;
  a["op_name"] = n.op_type;
  a["provider"] = n.kernel;
  a["kernel"] = n.kernel;
  a["node_index"] = std::to_string(node_index);
  a["activation_size"] = bytes(activations);
  a["parameter_size"] = bytes(parameters);
  a["output_size"] = bytes(outputs);
  a["input_type_shape"] = type_shape_list(n.inputs);
  a["output_type_shape"] = type_shape_list(n.outputs);
  a["flops"] = n.cost.flops;
  a["bytes"] = n.cost.bytes;
  a["depth"] = n.depth;
  if (!n.subgraph.empty()) a["subgraph"] = n.subgraph;
  a["run"] = run;
  return a;
}

}  // namespace

ordered_json type_shape_list(const std::vector<OperandShape>& operands) {
  ordered_json list = ordered_json::array();
  for (const OperandShape& s : operands) {
    if (!s.present) continue;
    ordered_json entry;
    entry[std::string(dtype_name(s.dtype))] = s.dims;
    list.push_back(entry);
  }
  return list;
}

ordered_json chrome_trace(const ProfileData& data, int64_t pid, int64_t tid) {
  int64_t origin = 0;
  if (!data.phases.empty()) origin = data.phases.front().span.start_ns;
  else if (!data.warmup_runs.empty()) origin = data.warmup_runs.front().start_ns;
  else if (!data.runs.empty()) origin = data.runs.front().start_ns;

  ordered_json events = ordered_json::array();
  for (const SessionPhase& p : data.phases)
    events.push_back(complete_event("Session", p.name, p.span, origin, pid, tid));
  for (size_t r = 0; r < data.warmup_runs.size(); ++r) {
    ordered_json e = complete_event("Session", "warmup_run", data.warmup_runs[r], origin, pid, tid);
    e["args"] = {{"warmup", r}};
    events.push_back(e);
  }
  for (size_t r = 0; r < data.runs.size(); ++r) {
    ordered_json e = complete_event("Session", "model_run", data.runs[r], origin, pid, tid);
    e["args"] = {{"run", r}};
    events.push_back(e);
  }
  NodeIndex index;
  for (const NodeExecution& x : data.executions) {
    const ProfiledNode& n = data.nodes.at(x.node);
    ordered_json e = complete_event("Node", n.name, x.span, origin, pid, tid);
    e["args"] = node_args(n, index.of(n.node), x.run);
    events.push_back(std::move(e));
  }
  return events;
}

}  // namespace kiln
