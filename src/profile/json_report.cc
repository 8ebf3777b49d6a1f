// The one JSON object of `kiln profile --json`.
#include "engine/placement.h"
#include "profile/chrome_trace.h"
#include "profile/report.h"

namespace kiln {

namespace {

using nlohmann::ordered_json;

ordered_json work_json(const WorkStats& w) {
  ordered_json j;
  j["ms_per_run"] = w.ms;
  j["share"] = w.share;
  j["calls_per_run"] = w.calls;
  j["flops_per_run"] = w.flops;
  j["bytes_per_run"] = w.bytes;
  j["gflops"] = w.gflops;
  j["gbps"] = w.gbps;
  j["intensity"] = w.intensity;
  j["bound"] = w.flops == 0 && w.bytes == 0 ? "none" : (w.compute_bound ? "compute" : "memory");
  j["peak_share"] = w.peak_share;
  j["cost_exact"] = w.exact;
  return j;
}

ordered_json latency_json(const LatencyStats& l) {
  return {{"mean_ms", l.mean_ms}, {"median_ms", l.median_ms}, {"min_ms", l.min_ms},
          {"max_ms", l.max_ms}, {"stddev_ms", l.stddev_ms}};
}

}  // namespace

ordered_json profile_json(const ProfileReport& r) {
  const ProfileSummary& s = r.summary;
  ordered_json j;
  ordered_json model;
  model["path"] = r.model.path;
  model["producer"] = r.model.producer;
  model["opsets"] = r.model.opsets;
  model["nodes"] = r.model.nodes;
  model["subgraph_nodes"] = r.model.subgraph_nodes;
  model["params"] = r.model.params;
  model["param_bytes"] = r.model.param_bytes;
  model["inputs"] = ordered_json::object();
  for (const auto& [name, fed] : r.model.inputs) model["inputs"][name] = fed;
  j["model"] = model;
  j["engine"] = r.data.engine;
  if (r.data.plan_steps > 0)
    j["plan"] = {{"steps", r.data.plan_steps}, {"kernels", r.data.plan_kernels}};
  j["threads"] = r.threads;
  j["runs"] = s.runs;
  j["warmup_runs"] = r.data.warmup_runs.size();
  j["peak"] = {{"cpu", r.peak.cpu}, {"threads", r.peak.threads}, {"isa", r.peak.isa},
               {"gflops", r.peak.gflops}, {"gbps", r.peak.gbps()},
               {"copy_gbps", r.peak.copy_gbps}, {"triad_gbps", r.peak.triad_gbps},
               {"int8_isa", r.peak.int8_isa}, {"int8_gops", r.peak.int8_gops},
               {"bf16_native", r.peak.bf16_native}, {"bf16_isa", r.peak.bf16_isa}, {"bf16_gflops", r.peak.bf16_gflops},
               {"gemm_f32_gops", r.peak.gemm_f32_gops}, {"gemm_int8_gops", r.peak.gemm_int8_gops},
               {"gemm_bf16_gops", r.peak.gemm_bf16_gops},
               {"cached", r.peak.from_cache}};
  j["phases"] = ordered_json::object();
  for (const SessionPhase& p : r.data.phases)
    j["phases"][p.name + "_ms"] = static_cast<double>(p.span.duration_ns()) / 1e6;
  j["latency"] = latency_json(s.latency);
  j["run_ms"] = s.run_ms;
  j["node_sum_ms"] = s.node_ms;
  j["coverage"] = s.coverage;
  j["total"] = work_json(s.total);
  auto ops_json = [](const std::vector<WorkStats>& ops) {
    ordered_json list = ordered_json::array();
    for (const WorkStats& w : ops) {
      ordered_json o;
      o["op"] = w.label;
      o["nodes"] = w.nodes;
      o["kernels"] = w.kernels;
      o.update(work_json(w));
      o["own_ms_per_run"] = w.own_ms;  // without the nodes inside its subgraphs
      list.push_back(o);
    }
    return list;
  };
  j["ops"] = ops_json(s.ops);
  if (!s.subgraph_ops.empty()) j["subgraph_ops"] = ops_json(s.subgraph_ops);
  j["nodes"] = ordered_json::array();
  for (const WorkStats& w : s.nodes) {
    const ProfiledNode& n = r.data.nodes.at(w.entry);
    ordered_json o;
    o["name"] = n.name;
    o["op"] = n.op_type;
    o["kernel"] = n.kernel;
    o["backend"] = std::string(engine::backend_of_kernel(n.kernel));
    o["depth"] = n.depth;
    if (!n.subgraph.empty()) o["subgraph"] = n.subgraph;
    o["input_type_shape"] = type_shape_list(n.inputs);
    o["output_type_shape"] = type_shape_list(n.outputs);
    o.update(work_json(w));
    j["nodes"].push_back(o);
  }
  return j;
}

}  // namespace kiln
