// The HTML page of `kiln profile --html`: charts of where the time went, against the roofline, the
// tables and the model summary.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "report/charts.h"
#include "report/html_page.h"
#include "profile/report.h"
#include "profile/report_format.h"
#include "profile/report_rows.h"

namespace kiln {

namespace {

constexpr int kColoredOps = 11;  // op types with their own colour; the rest are "other"
constexpr const char* kOther = "other";

// A row of the op type chart: an op type of the main graph or of the subgraphs.
struct OpTime {
  const WorkStats* op;
  bool in_subgraphs;
  std::string label() const { return op->label + (in_subgraphs ? " (in subgraphs)" : ""); }
};

// Main graph and subgraph op types by their own time, most first: a node holding subgraphs (an
// If) counts only its time outside them, so together they add up to the run's node time.
std::vector<OpTime> op_times(const ProfileSummary& s) {
  std::vector<OpTime> rows;
  for (const WorkStats& w : s.ops) rows.push_back({&w, false});
  for (const WorkStats& w : s.subgraph_ops) rows.push_back({&w, true});
  std::stable_sort(rows.begin(), rows.end(),
                   [](const OpTime& a, const OpTime& b) { return a.op->own_ms > b.op->own_ms; });
  return rows;
}

// Op types by own time (main graph and subgraphs alike) get the palette in order; the rest share
// grey.
class OpColors {
 public:
  explicit OpColors(const std::vector<OpTime>& ranked) {
    for (const OpTime& t : ranked) {
      const std::string& op = t.op->label;
      if (color_.count(op)) continue;  // in the main graph and in subgraphs: one colour
      const int rank = static_cast<int>(color_.size());
      const bool own = rank < kColoredOps;
      color_[op] = own ? category_color(rank) : kOtherColor;
      group_[op] = own ? op : kOther;
      if (own) legend_.push_back({op, color_[op]});
      else if (rank == kColoredOps) legend_.push_back({kOther, kOtherColor});  // last
    }
  }
  std::string color(const std::string& op) const {
    auto it = color_.find(op);
    return it == color_.end() ? kOtherColor : it->second;
  }
  std::string group(const std::string& op) const {
    auto it = group_.find(op);
    return it == group_.end() ? kOther : it->second;
  }
  const Legend& legend() const { return legend_; }

 private:
  std::map<std::string, std::string> color_, group_;
  Legend legend_;
};

std::string op_time_tooltip(const OpTime& t) {
  const WorkStats& w = *t.op;
  std::string s = fmt::format("{}: {} per run, {} of the run, {} nodes", t.label(),
                              format_ms(w.own_ms),
                              format_percent(w.ms > 0 ? w.share * w.own_ms / w.ms : 0), w.nodes);
  if (w.ms - w.own_ms > 0)
    s += fmt::format("; {} with the nodes inside its subgraphs (their own rows)", format_ms(w.ms));
  return s;
}

std::string time_by_op_chart(const std::vector<OpTime>& rows, const OpColors& colors) {
  BarChart c;
  c.title = "Time by op type";
  c.value_axis = "time per run (ms)";
  BarSeries series{"time", category_color(0), {}};
  double other = 0;
  int other_ops = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (static_cast<int>(i) >= kColoredOps) {
      other += rows[i].op->own_ms;
      ++other_ops;
      continue;
    }
    c.rows.push_back(rows[i].label());
    series.values.push_back(rows[i].op->own_ms);
    c.row_colors.push_back(colors.color(rows[i].op->label));
    c.tooltips.push_back(op_time_tooltip(rows[i]));
  }
  if (other_ops > 0) {
    c.rows.push_back(fmt::format("{} other op types", other_ops));
    series.values.push_back(other);
    c.row_colors.push_back(kOtherColor);
    c.tooltips.push_back(fmt::format("{} other op types: {} per run", other_ops, format_ms(other)));
  }
  c.series.push_back(std::move(series));
  return bar_chart_svg(c);
}

// The measured run whose latency is the median.
int median_run(const ProfileSummary& s) {
  std::vector<int> order(s.run_ms.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return s.run_ms[a] < s.run_ms[b]; });
  return order[order.size() / 2];
}

std::string timeline_chart(const ProfileReport& r, const OpColors& colors, int run) {
  TimelineChart c;
  c.title = fmt::format("Run {} of {} (the median), node by node", run + 1, r.summary.runs);
  c.time_axis = "time since the run began (ms)";
  std::map<std::string, int> lane_of;
  for (const auto& [label, color] : colors.legend()) {
    lane_of[label] = static_cast<int>(c.lanes.size());
    c.lanes.push_back(label);
  }
  const int64_t origin = r.data.runs.at(run).start_ns;
  for (const NodeExecution& e : r.data.executions) {
    if (e.run != run) continue;
    const ProfiledNode& n = r.data.nodes[e.node];
    auto lane = lane_of.find(colors.group(n.op_type));
    if (lane == lane_of.end()) continue;
    const double start = static_cast<double>(e.span.start_ns - origin) / 1e6;
    const double end = static_cast<double>(e.span.end_ns - origin) / 1e6;
    c.bars.push_back({.lane = lane->second,
                      .start = start,
                      .end = end,
                      .color = colors.color(n.op_type),
                      .tooltip = fmt::format("{} ({}, {}): {} at {}; {}", n.name, n.op_type,
                                             n.kernel, format_ms(end - start), format_ms(start),
                                             format_operands(n.outputs))});
  }
  return timeline_svg(c);
}

std::string roofline_chart(const ProfileReport& r, const OpColors& colors, int& unplaced) {
  RooflineChart c;
  c.title = "Nodes against the roofline";
  c.peak_gflops = r.peak.gflops;
  c.peak_gbps = r.peak.gbps();
  c.legend = colors.legend();
  unplaced = 0;
  for (const WorkStats& w : r.summary.nodes) {
    if (w.flops <= 0 || w.bytes <= 0 || w.ms <= 0) {
      ++unplaced;
      continue;
    }
    c.dots.push_back({.intensity = w.intensity,
                      .gflops = w.gflops,
                      .radius = 3 + 14 * std::sqrt(std::max(w.share, 0.0)),
                      .color = colors.color(w.op_type),
                      .tooltip = fmt::format("{} ({}): {} per run, {} GFLOP/s, {} FLOP/B, {} of "
                                             "its roof",
                                             w.label, w.op_type, format_ms(w.ms),
                                             format_rate(w.gflops), format_rate(w.intensity),
                                             format_percent(w.peak_share))});
  }
  return roofline_svg(c);
}

HtmlTable html_table(const ReportRows& rows, std::string caption) {
  return {rows.header, rows.numeric, rows.rows, std::move(caption)};
}

void model_section(HtmlPage& page, const ModelSummary& m) {
  page.heading("Model");
  std::vector<std::pair<std::string, std::string>> facts = {{"file", m.path},
                                                            {"producer", m.producer}};
  std::string opsets;
  for (const auto& [d, v] : m.opsets) opsets += fmt::format("{}{} {}", opsets.empty() ? "" : ", ", d, v);
  facts.push_back({"opsets", opsets});
  auto listed = [](const std::vector<std::pair<std::string, std::string>>& values) {
    std::string out;
    for (const auto& [name, type] : values) out += (out.empty() ? "" : "; ") + name + ": " + type;
    return out;
  };
  facts.push_back({"inputs (as fed)", listed(m.inputs)});
  facts.push_back({"outputs", listed(m.outputs)});
  facts.push_back({"nodes", fmt::format("{} in the main graph{}", m.nodes,
                                        m.subgraph_nodes ? fmt::format(", {} in subgraphs",
                                                                       m.subgraph_nodes)
                                                         : "")});
  facts.push_back({"parameters", fmt::format("{} ({}B)", format_count(static_cast<double>(m.params)),
                                             format_count(static_cast<double>(m.param_bytes)))});
  page.facts(facts);
  HtmlTable ops{{"op", "nodes"}, {false, true}, {}, "Nodes by op type"};
  std::vector<std::pair<std::string, int>> by_count(m.ops.begin(), m.ops.end());
  std::stable_sort(by_count.begin(), by_count.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [op, n] : by_count) ops.rows.push_back({op, std::to_string(n)});
  page.table(ops);
}

}  // namespace

std::string profile_html(const ProfileReport& r) {
  const ProfileSummary& s = r.summary;
  const std::vector<OpTime> op_rows_by_time = op_times(s);
  const OpColors colors(op_rows_by_time);
  std::string file = r.model.path;
  if (const size_t slash = file.find_last_of('/'); slash != std::string::npos)
    file = file.substr(slash + 1);
  HtmlPage page("kiln profile: " + file);
  page.facts(run_facts(r));

  page.heading("Where the time goes");
  page.figure(time_by_op_chart(op_rows_by_time, colors),
              "Mean time per measured run by op type. Nodes inside If, Loop and Scan bodies have "
              "rows of their own (\"in subgraphs\"); the node holding them counts only its time "
              "outside them, so no time is counted twice.");
  const int run = median_run(s);
  page.figure(timeline_chart(r, colors, run),
              "Each bar is one node as it ran; lanes are op types. Nodes inside subgraphs run "
              "within the bar of the node holding them. Hover a bar for the node.");

  page.heading("Against the machine");
  int unplaced = 0;
  const std::string roofline = roofline_chart(r, colors, unplaced);
  page.figure(roofline,
              fmt::format("One dot per node, its area by its share of the run; the roofs are "
                          "kiln's own probe of this machine ({} threads). {} nodes without "
                          "arithmetic (layout, indexing, casts) are not drawn. A share of peak "
                          "above 100% means the data came from caches, faster than the memory "
                          "roof.",
                          r.peak.threads, unplaced));

  page.heading("Op types");
  page.table(html_table(op_rows(s.ops, 0), "All op types of the main graph, most time first"));
  if (!s.subgraph_ops.empty())
    page.table(html_table(op_rows(s.subgraph_ops, 0),
                          "Op types inside subgraphs (If, Loop and Scan bodies), most time first; "
                          "their time is also inside the node that holds the subgraph"));
  page.heading("Nodes");
  page.table(html_table(node_rows(r, 40), fmt::format("The {} nodes that took the most time",
                                                      std::min<size_t>(40, s.nodes.size()))));
  model_section(page, r.model);
  page.note("Written by kiln profile. FLOPs and bytes are estimated from the shapes each node "
            "ran with (bytes: inputs read plus outputs written).");
  return page.str();
}

}  // namespace kiln
