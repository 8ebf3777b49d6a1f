// The analysis as text (the terminal), JSON (tools) and an HTML page (src/report's page builder),
// the graph drawn as one box per node in graph order, colored by the backend that runs it.
#include <fmt/format.h>

#include "backend/analysis.h"
#include "report/html_page.h"

namespace kiln::backend {

namespace {

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::string dims_text(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

// "Conv: 53 on xnnpack" / "Softmax: 12 on cpu (xnnpack: op not supported)".
std::string op_line(const OpPlacement& o) {
  std::string placed;
  for (const auto& [b, n] : o.placed) placed += fmt::format("{}{} on {}", placed.empty() ? "" : ", ", n, b);
  std::string why;
  for (const auto& [key, n] : o.refused)
    why += fmt::format("{}{}: {}{}", why.empty() ? "" : "; ", key.first, key.second,
                       n == o.nodes ? "" : fmt::format(" ({} nodes)", n));
  return fmt::format("{:<22} {:>4}  {}{}", o.op, o.nodes, placed, why.empty() ? "" : "  (" + why + ")");
}

std::string partition_label(const PartitionPlan& plan, const Partition& p) {
  return fmt::format("{:<10} {:>4} nodes  {} .. {}  in {} out {}  copies {}", plan.backends[p.backend]->name(),
                     p.nodes.size(), node_label(*p.nodes.front()), node_label(*p.nodes.back()), p.inputs.size(),
                     p.outputs.size(), p.boundary_copies);
}

const char* color_of(const std::string& backend) {
  if (backend == "xnnpack") return "#4e79a7";
  if (backend == "cpu") return "#59a14f";
  if (backend == "reference") return "#e15759";
  return "#b07aa1";
}

std::string escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '&') o += "&amp;";
    else if (c == '"') o += "&quot;";
    else o += c;
  }
  return o;
}

// One box per node that runs, in graph order, 32 to a row; a thicker gap where a partition ends.
std::string graph_svg(const PartitionPlan& plan) {
  constexpr int kPerRow = 32, kW = 26, kH = 26, kGap = 4;
  std::vector<int> part_of(plan.nodes.size(), -1);
  for (size_t k = 0; k < plan.partitions.size(); ++k)
    for (const Node* n : plan.partitions[k].nodes) part_of[plan.node_index(n)] = static_cast<int>(k);
  std::string boxes;
  int shown = 0;
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    if (plan.assigned[i] < 0) continue;
    const int x = (shown % kPerRow) * (kW + kGap), y = (shown / kPerRow) * (kH + kGap);
    const std::string b = plan.backends[plan.assigned[i]]->name();
    const std::string op = plan.nodes[i]->op_type;
    boxes += fmt::format(
        "<g><title>{} on {} (partition {})</title><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"3\" "
        "fill=\"{}\"/><text x=\"{}\" y=\"{}\" font-size=\"8\" fill=\"white\" text-anchor=\"middle\">{}</text></g>",
        escape(node_label(*plan.nodes[i])), b, part_of[i] + 1, x, y, kW, kH, color_of(b), x + kW / 2, y + kH / 2 + 3,
        escape(op.substr(0, 4)));
    ++shown;
  }
  const int rows = (shown + kPerRow - 1) / kPerRow;
  std::string legend;
  int lx = 0;
  for (const auto& b : plan.backends) {
    legend += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" "
                          "font-size=\"11\">{}</text>",
                          lx, rows * (kH + kGap) + 6, color_of(b->name()), lx + 16, rows * (kH + kGap) + 16,
                          escape(b->name()));
    lx += 110;
  }
  return fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\">{}{}</svg>",
                     kPerRow * (kW + kGap), rows * (kH + kGap) + 28, boxes, legend);
}

}  // namespace

std::string analysis_text(const Analysis& a) {
  std::string s = fmt::format("model      {}\n", a.model);
  for (const auto& [name, d] : a.inputs) s += fmt::format("input      {} {}\n", name, dims_text(d));
  s += fmt::format("nodes      {} ({} folded: computed before the run)\n", a.nodes, a.folded);
  for (const auto& [name, v] : a.backend_versions) s += fmt::format("backend    {}: {}\n", name, v);
  for (const std::string& m : a.missing_backends) s += fmt::format("missing    {}\n", m);
  for (const TargetAnalysis& t : a.targets) {
    s += fmt::format("\ntarget {} ({}{}): order {}\n", t.target.name,
                     t.target.name == native_target().name ? "this machine, " : "",
                     t.missing_on_host.empty() ? "runs here" : "not here: lacks " + join(t.missing_on_host),
                     join([&] {
                       std::vector<std::string> v;
                       for (const auto& b : t.plan.backends) v.push_back(b->name());
                       return v;
                     }()));
    s += "  ops\n";
    for (const OpPlacement& o : t.ops) s += "    " + op_line(o) + "\n";
    s += fmt::format("  partitions ({}, {} boundary copies{})\n", t.plan.partitions.size(), t.plan.boundary_copies,
                     t.compiled ? "" : "; not compiled: the target does not run here");
    for (size_t k = 0; k < t.plan.partitions.size(); ++k)
      s += fmt::format("    {:>3}. {}\n", k + 1, partition_label(t.plan, t.plan.partitions[k]));
    for (const Fallback& f : t.plan.fallbacks)
      s += fmt::format("  fallback   {} gave back {} nodes (first {}): {}\n", f.backend, f.nodes.size(),
                       node_label(*f.nodes.front()), f.reason);
    s += fmt::format("  recommended order {}: {}\n", join(t.recommended), t.recommended_why);
    s += fmt::format("  predicted  {}\n", prediction_text(t.predicted));
  }
  return s;
}

nlohmann::json analysis_json(const Analysis& a) {
  nlohmann::json j;
  j["model"] = a.model;
  j["nodes"] = a.nodes;
  j["folded"] = a.folded;
  for (const auto& [name, d] : a.inputs) j["inputs"].push_back({{"name", name}, {"dims", d}});
  j["backends"] = nlohmann::json::array();
  for (const auto& [name, v] : a.backend_versions) j["backends"].push_back({{"name", name}, {"version", v}});
  j["missing_backends"] = a.missing_backends;
  for (const TargetAnalysis& t : a.targets) {
    nlohmann::json tj;
    tj["name"] = t.target.name;
    tj["native"] = t.target.name == native_target().name;  // this machine's row
    tj["arch"] = t.target.arch;
    tj["features"] = t.target.features;
    tj["runs_here"] = t.missing_on_host.empty();
    tj["missing_on_host"] = t.missing_on_host;
    tj["compiled"] = t.compiled;
    for (const auto& b : t.plan.backends) tj["order"].push_back(b->name());
    for (const OpPlacement& o : t.ops) {
      nlohmann::json oj{{"op", o.op}, {"nodes", o.nodes}, {"placed", o.placed}};
      oj["refused"] = nlohmann::json::array();
      for (const auto& [key, n] : o.refused)
        oj["refused"].push_back({{"backend", key.first}, {"reason", key.second}, {"nodes", n}});
      tj["ops"].push_back(oj);
    }
    tj["partitions"] = nlohmann::json::array();
    for (const Partition& p : t.plan.partitions)
      tj["partitions"].push_back({{"backend", t.plan.backends[p.backend]->name()}, {"nodes", p.nodes.size()},
                                  {"first", node_label(*p.nodes.front())}, {"last", node_label(*p.nodes.back())},
                                  {"inputs", p.inputs.size()}, {"outputs", p.outputs.size()},
                                  {"boundary_copies", p.boundary_copies}});
    tj["fallbacks"] = nlohmann::json::array();
    for (const Fallback& f : t.plan.fallbacks)
      tj["fallbacks"].push_back({{"backend", f.backend}, {"nodes", f.nodes.size()}, {"reason", f.reason}});
    tj["boundary_copies"] = t.plan.boundary_copies;
    tj["recommended"] = {{"order", t.recommended}, {"why", t.recommended_why}};
    tj["predicted"] = prediction_json(t.predicted);
    for (size_t i = 0; i < t.plan.nodes.size(); ++i) {
      const Node& n = *t.plan.nodes[i];
      nlohmann::json nj{{"node", node_label(n)}, {"op", n.op_type}};
      const int b = t.plan.assigned[i];
      nj["backend"] = b < 0 ? "folded" : t.plan.backends[b]->name();
      for (size_t e = 0; b > 0 && e < static_cast<size_t>(b); ++e)
        nj["not_on"][t.plan.backends[e]->name()] = t.plan.claims[e][i].claimed ? "its partition failed to compile"
                                                                               : t.plan.claims[e][i].reason;
      tj["placement"].push_back(nj);
    }
    j["targets"].push_back(tj);
  }
  return j;
}

std::string analysis_html(const Analysis& a) {
  HtmlPage page("kiln analyze: " + a.model);
  std::vector<std::pair<std::string, std::string>> facts = {{"model", a.model},
                                                            {"nodes", fmt::format("{} ({} folded)", a.nodes, a.folded)}};
  for (const auto& [name, d] : a.inputs) facts.push_back({"input " + name, dims_text(d)});
  for (const auto& [name, v] : a.backend_versions) facts.push_back({"backend " + name, v});
  for (const std::string& m : a.missing_backends) facts.push_back({"missing", m});
  page.facts(facts);
  for (const TargetAnalysis& t : a.targets) {
    page.heading("Target " + t.target.name);
    page.paragraph(fmt::format("{}; {}. Recommended order: {} ({}). Predicted latency: {}.", t.target.summary,
                               t.missing_on_host.empty() ? "runs here" : "does not run here (lacks " + join(t.missing_on_host) + ")",
                               join(t.recommended), t.recommended_why, prediction_text(t.predicted)));
    page.figure(graph_svg(t.plan), "every node that runs, in graph order, colored by the backend that runs it");
    HtmlTable ops{.header = {"op", "nodes", "placed", "why not on the earlier backends"}, .numeric = {false, true}};
    for (const OpPlacement& o : t.ops) {
      std::string placed, why;
      for (const auto& [b, n] : o.placed) placed += fmt::format("{}{} on {}", placed.empty() ? "" : ", ", n, b);
      for (const auto& [key, n] : o.refused) why += fmt::format("{}{}: {} ({})", why.empty() ? "" : "; ", key.first, key.second, n);
      ops.rows.push_back({o.op, std::to_string(o.nodes), placed, why});
    }
    page.table(ops);
    HtmlTable parts{.header = {"#", "backend", "nodes", "first", "last", "inputs", "outputs", "boundary copies"},
                    .numeric = {true, false, true, false, false, true, true, true},
                    .caption = fmt::format("{} partitions, {} boundary copies", t.plan.partitions.size(), t.plan.boundary_copies)};
    for (size_t k = 0; k < t.plan.partitions.size(); ++k) {
      const Partition& p = t.plan.partitions[k];
      parts.rows.push_back({std::to_string(k + 1), t.plan.backends[p.backend]->name(), std::to_string(p.nodes.size()),
                            node_label(*p.nodes.front()), node_label(*p.nodes.back()), std::to_string(p.inputs.size()),
                            std::to_string(p.outputs.size()), std::to_string(p.boundary_copies)});
    }
    page.table(parts);
    for (const Fallback& f : t.plan.fallbacks)
      page.note(fmt::format("fallback: {} gave back {} nodes: {}", f.backend, f.nodes.size(), f.reason));
  }
  return page.str();
}

}  // namespace kiln::backend
