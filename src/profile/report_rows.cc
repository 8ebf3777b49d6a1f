#include "profile/report_rows.h"

#include <fmt/format.h>

#include "profile/report_format.h"

namespace kiln {

namespace {

const std::vector<std::string> kWorkHeader = {"ms/run", "share", "GFLOP/s", "GB/s",
                                              "FLOP/B", "bound", "of peak"};

std::vector<std::string> work_cells(const WorkStats& w) {
  return {fmt::format("{:.3f}", w.ms),
          format_percent(w.share),
          format_rate(w.gflops),
          format_rate(w.gbps),
          w.bytes > 0 ? format_rate(w.intensity) : "-",
          w.flops == 0 && w.bytes == 0 ? "-" : (w.compute_bound ? "compute" : "memory"),
          format_percent(w.peak_share)};
}

ReportRows with_work_columns(std::vector<std::string> head, size_t text_columns) {
  ReportRows r;
  r.header = std::move(head);
  r.numeric.assign(r.header.size(), false);
  for (size_t i = text_columns; i < r.header.size(); ++i) r.numeric[i] = true;
  for (const std::string& h : kWorkHeader) {
    r.header.push_back(h);
    r.numeric.push_back(h != "bound");
  }
  return r;
}

template <typename T>
size_t limit(const std::vector<T>& v, int top) {
  return top <= 0 ? v.size() : std::min(v.size(), static_cast<size_t>(top));
}

}  // namespace

ReportRows op_rows(const std::vector<WorkStats>& ops, int top) {
  ReportRows r = with_work_columns({"op", "nodes", "calls/run"}, 1);
  for (size_t i = 0; i < limit(ops, top); ++i) {
    const WorkStats& w = ops[i];
    std::vector<std::string> row = {w.label, std::to_string(w.nodes), fmt::format("{:g}", w.calls)};
    for (std::string& c : work_cells(w)) row.push_back(std::move(c));
    r.rows.push_back(std::move(row));
  }
  return r;
}

ReportRows node_rows(const ProfileReport& rep, int top) {
  ReportRows r = with_work_columns({"node", "op", "kernel", "output"}, 4);
  const auto& nodes = rep.summary.nodes;
  for (size_t i = 0; i < limit(nodes, top); ++i) {
    const WorkStats& w = nodes[i];
    const ProfiledNode& n = rep.data.nodes.at(w.entry);
    std::string name = n.subgraph.empty() ? w.label : fmt::format("{} (in {})", w.label, n.subgraph);
    std::vector<std::string> row = {std::move(name), w.op_type, w.kernels,
                                    format_operands(n.outputs)};
    for (std::string& c : work_cells(w)) row.push_back(std::move(c));
    r.rows.push_back(std::move(row));
  }
  return r;
}

std::vector<std::pair<std::string, std::string>> run_facts(const ProfileReport& r) {
  const ProfileSummary& s = r.summary;
  const LatencyStats& l = s.latency;
  const MachinePeak& p = r.peak;
  const Roofline roof = p.roofline();
  int executed = 0;
  for (const NodeExecution& e : r.data.executions)
    if (e.run == 0 && r.data.nodes[e.node].depth == 0) ++executed;
  std::vector<std::pair<std::string, std::string>> facts = {
      {"engine", fmt::format("{}, {} threads, {} measured runs after {} warmup", r.data.engine,
                             r.threads, s.runs, r.data.warmup_runs.size())},
      {"latency", fmt::format("mean {}, median {}, min {}, max {}, stddev {}",
                              format_ms(l.mean_ms), format_ms(l.median_ms), format_ms(l.min_ms),
                              format_ms(l.max_ms), format_ms(l.stddev_ms))},
      {"nodes", fmt::format("{} executed per run; their times sum to {} = {} of the run",
                            executed, format_ms(s.nodes_ms), format_percent(s.coverage))},
      {"work", fmt::format("{}FLOP and {}B moved per run: {} GFLOP/s, {} GB/s{}",
                           format_count(s.total.flops), format_count(s.total.bytes),
                           format_rate(s.total.gflops), format_rate(s.total.gbps),
                           s.total.exact ? "" : " (some shapes estimated)")},
      {"peak", fmt::format("{} GFLOP/s ({} FMA), {} GB/s memory (copy {}, triad {}); ridge {} "
                           "FLOP/B; {}",
                           format_rate(p.gflops), p.isa, format_rate(p.gbps()),
                           format_rate(p.copy_gbps), format_rate(p.triad_gbps),
                           format_rate(roof.ridge()),
                           p.from_cache ? "cached" : fmt::format("measured in {:.2f} s",
                                                                 p.probe_seconds))},
      {"reduced precision",
       fmt::format("int8 {} GOP/s ({}); bf16 {}", format_rate(p.int8_gops), p.int8_isa,
                   p.bf16_native ? format_rate(p.bf16_gflops) + " GFLOP/s (" + p.bf16_isa + ")"
                                 : "not native on this CPU (emulated in fp32)")},
      {"oneDNN matmul", fmt::format("fp32 {}, int8 {}, bf16 {} GOP/s (256x1024x1024)",
                                    format_rate(p.gemm_f32_gops), format_rate(p.gemm_int8_gops),
                                    p.gemm_bf16_gops > 0 ? format_rate(p.gemm_bf16_gops) : "none")},
  };
  if (r.data.plan_steps > 0) {
    std::string kernels;
    for (const auto& [k, n] : r.data.plan_kernels)
      kernels += fmt::format("{}{} {}", kernels.empty() ? "" : ", ", n, k);
    facts.insert(facts.begin() + 1,
                 {"plan", fmt::format("{} steps: {}", r.data.plan_steps, kernels)});
  }
  return facts;
}

}  // namespace kiln
