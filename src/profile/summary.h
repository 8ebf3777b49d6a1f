// The numbers a profile report shows: run latency, where the time went by op type and by node, and
// how each did against the machine's roofline.
#pragma once

#include <string>
#include <vector>

#include "profile/profile_data.h"
#include "profile/roofline.h"

namespace kiln {

// Time and work of a group of executions (one op type, or one node), per measured run.
struct WorkStats {
  std::string label;    // the op type, or the node's name
  std::string op_type;  // of a node; for an op type, the same as label
  std::string kernels;  // the kernels that ran, comma-separated
  int entry = -1;       // of a node: its index in ProfileData::nodes
  int depth = 0;        // of a node (op types gather depth-0 nodes only)
  int nodes = 0;        // nodes in the group
  double calls = 0;     // executions per run
  double ms = 0;        // mean time per run
  // Of an op type: ms less the time of the nodes run inside its nodes' subgraphs (an If's branch
  // nodes, which subgraph_ops counts): what the op spent itself. Elsewhere the same as ms.
  double own_ms = 0;
  double share = 0;     // ms over the mean run latency
  double flops = 0;     // per run
  double bytes = 0;     // per run
  double gflops = 0, gbps = 0;  // achieved
  double intensity = 0;         // FLOP per byte
  bool compute_bound = false;   // by the roofline at this intensity
  double peak_share = 0;        // of the roofline at this intensity
  bool exact = true;            // every cost estimate exact
};

struct LatencyStats {
  double mean_ms = 0, median_ms = 0, min_ms = 0, max_ms = 0, stddev_ms = 0;
};

LatencyStats latency_stats(std::vector<double> ms);

struct ProfileSummary {
  int runs = 0;
  LatencyStats latency;           // of the measured runs
  std::vector<double> run_ms;     // each measured run
  std::vector<double> node_ms;    // each run's sum of depth-0 node times
  double nodes_ms = 0;            // mean of node_ms
  double coverage = 0;            // nodes_ms / latency.mean_ms
  WorkStats total;                // all depth-0 nodes together
  std::vector<WorkStats> ops;     // by op type, most time first
  // By op type, the nodes inside subgraphs (If/Loop/Scan bodies), most time first. Their time is
  // also inside the node holding the subgraph (an If's), so these are not in `ops` or `total`.
  std::vector<WorkStats> subgraph_ops;
  std::vector<WorkStats> nodes;   // by node, every depth, most time first
};

ProfileSummary summarize(const ProfileData& data, const Roofline& roof);

}  // namespace kiln
