#include "profile/summary.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "support/error.h"

namespace kiln {

namespace {

double ms_of(const TimeSpan& s) { return static_cast<double>(s.duration_ns()) / 1e6; }

// Builds a WorkStats from its executions, then finishes the rates.
struct Group {
  WorkStats stats;
  double total_ns = 0;
  double inner_ns = 0;  // of executions inside the group's subgraphs, one level down
  double executions = 0;
  std::set<std::string> kernels;

  void add(const ProfiledNode& n, int64_t ns) {
    total_ns += static_cast<double>(ns);
    executions += 1;
    stats.flops += n.cost.flops;
    stats.bytes += n.cost.bytes;
    stats.exact &= n.cost.exact;
    kernels.insert(n.kernel);
  }

  WorkStats finish(int runs, double run_ms, const Roofline& roof) {
    WorkStats s = stats;
    s.ms = total_ns / 1e6 / runs;
    s.own_ms = (total_ns - inner_ns) / 1e6 / runs;
    s.calls = executions / runs;
    s.flops /= runs;
    s.bytes /= runs;
    s.share = run_ms > 0 ? s.ms / run_ms : 0;
    const double seconds = s.ms / 1e3;
    s.gflops = seconds > 0 ? s.flops / seconds / 1e9 : 0;
    s.gbps = seconds > 0 ? s.bytes / seconds / 1e9 : 0;
    s.intensity = s.bytes > 0 ? s.flops / s.bytes : 0;
    s.compute_bound = s.bytes > 0 ? roof.compute_bound(s.intensity) : s.flops > 0;
    s.peak_share = roof.peak_share(s.flops, s.bytes, seconds);
    for (const std::string& k : kernels) s.kernels += (s.kernels.empty() ? "" : ",") + k;
    return s;
  }
};

std::vector<WorkStats> by_time(std::vector<WorkStats> v) {
  std::stable_sort(v.begin(), v.end(), [](const WorkStats& a, const WorkStats& b) {
    return a.ms > b.ms;
  });
  return v;
}

// Per entry of data.nodes: the node holding the subgraph it ran in (an If), null in the main
// graph or where the holder is unknown.
std::vector<const Node*> holding_nodes(const ProfileData& data) {
  std::vector<const Node*> holders;
  holders.reserve(data.nodes.size());
  for (const ProfiledNode& n : data.nodes)
    holders.push_back(n.depth > 0 && n.node && n.node->owner ? holder_of(*n.node->owner).node
                                                             : nullptr);
  return holders;
}

}  // namespace

LatencyStats latency_stats(std::vector<double> ms) {
  LatencyStats s;
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  s.min_ms = ms.front();
  s.max_ms = ms.back();
  s.median_ms = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
  s.mean_ms = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(n);
  double var = 0;
  for (double x : ms) var += (x - s.mean_ms) * (x - s.mean_ms);
  s.stddev_ms = n > 1 ? std::sqrt(var / static_cast<double>(n - 1)) : 0;
  return s;
}

ProfileSummary summarize(const ProfileData& data, const Roofline& roof) {
  KILN_CHECK(!data.runs.empty(), ErrorKind::kRuntime, "profile: no measured runs to summarize");
  ProfileSummary sum;
  sum.runs = static_cast<int>(data.runs.size());
  for (const TimeSpan& r : data.runs) sum.run_ms.push_back(ms_of(r));
  sum.latency = latency_stats(sum.run_ms);
  sum.node_ms.assign(data.runs.size(), 0);

  Group total;
  std::map<std::string, Group> ops, subgraph_ops;
  std::vector<Group> nodes(data.nodes.size());
  const std::vector<const Node*> holders = holding_nodes(data);
  std::map<std::pair<int, std::string>, int64_t> inner;  // (holder's depth, op type) -> time
  for (const NodeExecution& e : data.executions) {
    const ProfiledNode& n = data.nodes.at(e.node);
    const int64_t ns = e.span.duration_ns();
    nodes[e.node].add(n, ns);
    if (n.depth != 0) {
      subgraph_ops[n.op_type].add(n, ns);
      if (const Node* h = holders[e.node]) inner[{n.depth - 1, node_op_name(*h)}] += ns;
      continue;
    }
    sum.node_ms.at(e.run) += static_cast<double>(ns) / 1e6;
    total.add(n, ns);
    ops[n.op_type].add(n, ns);
  }
  // The time of subgraph nodes is not their holder's own (at the holder's level only).
  for (const auto& [at, ns] : inner) {
    auto& groups = at.first == 0 ? ops : subgraph_ops;
    if (auto g = groups.find(at.second); g != groups.end()) g->second.inner_ns += static_cast<double>(ns);
  }
  const double run_ms = sum.latency.mean_ms;
  sum.nodes_ms = latency_stats(sum.node_ms).mean_ms;
  sum.coverage = run_ms > 0 ? sum.nodes_ms / run_ms : 0;

  total.stats.label = "all nodes";
  sum.total = total.finish(sum.runs, run_ms, roof);
  for (auto& [op, g] : ops) {
    g.stats.label = g.stats.op_type = op;
    sum.ops.push_back(g.finish(sum.runs, run_ms, roof));
  }
  for (auto& [op, g] : subgraph_ops) {
    g.stats.label = g.stats.op_type = op;
    sum.subgraph_ops.push_back(g.finish(sum.runs, run_ms, roof));
  }
  // An op's node count: distinct graph nodes among its entries (main graph or subgraphs).
  std::map<std::string, std::set<const void*>> op_nodes, subgraph_op_nodes;
  for (size_t i = 0; i < data.nodes.size(); ++i) {
    const ProfiledNode& n = data.nodes[i];
    // Executor steps without a node count one each.
    (n.depth == 0 ? op_nodes : subgraph_op_nodes)[n.op_type].insert(
        n.node ? static_cast<const void*>(n.node) : &n);
  }
  for (WorkStats& s : sum.ops) s.nodes = static_cast<int>(op_nodes[s.op_type].size());
  for (WorkStats& s : sum.subgraph_ops)
    s.nodes = static_cast<int>(subgraph_op_nodes[s.op_type].size());
  sum.total.nodes = 0;
  for (const auto& [op, set] : op_nodes) sum.total.nodes += static_cast<int>(set.size());

  for (size_t i = 0; i < data.nodes.size(); ++i) {
    const ProfiledNode& n = data.nodes[i];
    nodes[i].stats.label = n.name;
    nodes[i].stats.op_type = n.op_type;
    nodes[i].stats.depth = n.depth;
    nodes[i].stats.entry = static_cast<int>(i);
    nodes[i].stats.nodes = 1;
    sum.nodes.push_back(nodes[i].finish(sum.runs, run_ms, roof));
  }
  sum.ops = by_time(std::move(sum.ops));
  sum.subgraph_ops = by_time(std::move(sum.subgraph_ops));
  sum.nodes = by_time(std::move(sum.nodes));
  return sum;
}

}  // namespace kiln
