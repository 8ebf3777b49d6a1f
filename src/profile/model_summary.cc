#include "profile/report.h"

namespace kiln {

namespace {

int count_subgraph_nodes(const Graph& g) {
  int n = 0;
  for (const Graph* sg : g.subgraphs()) {
    n += static_cast<int>(sg->nodes().size());
    n += count_subgraph_nodes(*sg);
  }
  return n;
}

}  // namespace

ModelSummary summarize_model(const Model& m, const std::string& path,
                             const std::vector<const Value*>& inputs,
                             const std::vector<RtValue>& feeds) {
  ModelSummary s;
  s.path = path;
  s.producer = m.producer_name + (m.producer_version.empty() ? "" : " " + m.producer_version);
  for (const auto& [domain, version] : m.opsets) s.opsets[domain.empty() ? "ai.onnx" : domain] = version;
  for (size_t i = 0; i < inputs.size(); ++i)
    s.inputs.emplace_back(inputs[i]->name, i < feeds.size() ? feeds[i].describe() : "none");
  for (const Value* v : m.graph->outputs) s.outputs.emplace_back(v->name, v->type.to_string());
  const Graph& g = *m.graph;
  s.nodes = static_cast<int>(g.nodes().size());
  s.subgraph_nodes = count_subgraph_nodes(g);
  for (const auto& n : g.nodes()) ++s.ops[node_op_name(*n)];
  for (const Value* v : g.initializers) {
    s.params += v->data.numel();
    s.param_bytes += static_cast<int64_t>(v->data.nbytes());
  }
  return s;
}

}  // namespace kiln
