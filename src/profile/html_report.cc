// The HTML page of `kiln profile --html`: charts of where the time went, against the roofline, the
// tables and the model summary.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "profile/charts.h"
#include "profile/html_page.h"
#include "profile/report.h"
#include "profile/report_format.h"
#include "profile/report_rows.h"

namespace kiln {

namespace {

constexpr int kColoredOps = 11;  // op types with their own colour; the rest are "other"
constexpr const char* kOther = "other";

// Op types by time get the palette in order; the rest share grey.
class OpColors {
 public:
  explicit OpColors(const ProfileSummary& s) {
    for (size_t i = 0; i < s.ops.size(); ++i) {
      const bool own = static_cast<int>(i) < kColoredOps;
      color_[s.ops[i].label] = own ? category_color(static_cast<int>(i)) : kOtherColor;
      group_[s.ops[i].label] = own ? s.ops[i].label : kOther;
      if (own) legend_.push_back({s.ops[i].label, color_[s.ops[i].label]});
    }
    if (s.ops.size() > kColoredOps) legend_.push_back({kOther, kOtherColor});
  }
  // Subgraph nodes of op types with no depth-0 node are "other" too.
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

std::string time_by_op_chart(const ProfileSummary& s, const OpColors& colors) {
  BarChart c;
  c.title = "Time by op type";
  c.value_axis = "time per run (ms)";
  BarSeries series{"time", category_color(0), {}};
  double other = 0;
  int other_ops = 0;
  for (size_t i = 0; i < s.ops.size(); ++i) {
    const WorkStats& w = s.ops[i];
    if (static_cast<int>(i) >= kColoredOps) {
      other += w.ms;
      ++other_ops;
      continue;
    }
    c.rows.push_back(w.label);
    series.values.push_back(w.ms);
    c.row_colors.push_back(colors.color(w.label));
    c.tooltips.push_back(fmt::format("{}: {} per run, {} of the run, {} nodes", w.label,
                                     format_ms(w.ms), format_percent(w.share), w.nodes));
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
  const OpColors colors(s);
  std::string file = r.model.path;
  if (const size_t slash = file.find_last_of('/'); slash != std::string::npos)
    file = file.substr(slash + 1);
  HtmlPage page("kiln profile: " + file);
  page.facts(run_facts(r));

  page.heading("Where the time goes");
  page.figure(time_by_op_chart(s, colors),
              "Mean time per measured run of the main graph's nodes, by op type.");
  const int run = median_run(s);
  page.figure(timeline_chart(r, colors, run),
              "Each bar is one node as it ran; lanes are op types. Hover a bar for the node.");

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
