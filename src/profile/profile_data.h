// What a profile holds: the nodes that ran (one entry per node, kernel and operand shapes), every
// timed execution of them, the measured runs and the session phases before them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ops/cost.h"

namespace kiln {

// A stretch of steady_clock time, in nanoseconds.
struct TimeSpan {
  int64_t start_ns = 0, end_ns = 0;
  int64_t duration_ns() const { return end_ns - start_ns; }
};

// A named phase of the session: "model_loading_uri", "session_initialization", "plan".
struct SessionPhase {
  std::string name;
  TimeSpan span;
};

// A node as it ran: one entry per (node, kernel, operand shapes) seen.
struct ProfiledNode {
  const Node* node = nullptr;  // null for an executor's own step
  std::string name;     // the node's name, or its first output's; "... (reorder)" for a layout change
  std::string op_type;  // "Conv", or "domain.Op" outside ai.onnx; "Reorder" for a layout change
  std::string kernel;   // the implementation that ran
  int depth = 0;        // 0: main graph; n: inside n levels of subgraphs
  // Where a subgraph node is: the nodes and attributes holding its graph, outermost first
  // ("/If > else_branch", "/Loop > body > /If > then_branch"); empty in the main graph.
  std::string subgraph;
  std::vector<OperandShape> inputs, outputs;
  NodeCost cost;        // of one execution, from the shapes it ran with
};

// One execution of a profiled node in one measured run.
struct NodeExecution {
  int run = 0;   // index into ProfileData::runs
  int node = 0;  // index into ProfileData::nodes
  TimeSpan span;
};

struct ProfileData {
  std::string engine;                   // "fast", "reference"
  int plan_steps = 0;                   // the fast engine's steps per run (0: no plan)
  std::map<std::string, int> plan_kernels;  // kernel -> steps of the plan
  std::vector<SessionPhase> phases;     // before the runs, in order
  std::vector<TimeSpan> warmup_runs;    // unobserved
  std::vector<TimeSpan> runs;           // measured, each observed node by node
  std::vector<ProfiledNode> nodes;      // in first-execution order
  std::vector<NodeExecution> executions;
};

// The name a node goes by in reports: its own, or its first output's when it has none.
std::string node_display_name(const Node& n);
// "Conv", or "domain.Op" outside ai.onnx.
std::string node_op_name(const Node& n);
// The node of a subgraph's parent graph that holds it in an attribute (null when none does), and
// its step of a subgraph path ("if > then_branch", "scan > body[1]"; the graph's name without one).
struct SubgraphHolder {
  const Node* node = nullptr;
  std::string step;
};
SubgraphHolder holder_of(const Graph& g);
// The subgraph path of a node (ProfiledNode::subgraph): empty in the main graph.
std::string subgraph_path(const Node& n);

}  // namespace kiln
