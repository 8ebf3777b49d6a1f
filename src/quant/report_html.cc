// The --report FILE.html page: the same record as the JSON, on the report toolkit's page builder.
#include <fmt/format.h>

#include "quant/report.h"
#include "report/charts.h"
#include "report/html_page.h"

namespace kiln::quant {

std::string report_html(const QuantizeReport& r) {
  HtmlPage page(fmt::format("kiln quantize: {}", r.model));
  page.heading(fmt::format("{} mode", mode_name(r.options.mode)));
  std::vector<std::pair<std::string, std::string>> facts = {
      {"model", r.model},
      {"output", r.output},
      {"size", fmt::format("{:.2f} MB -> {:.2f} MB", r.bytes_before / 1048576.0, r.bytes_after / 1048576.0)},
      {"quantized in", fmt::format("{:.0f} ms", r.quantize_ms)}};
  if (r.result.calibration_sets > 0)
    facts.push_back({"calibration", fmt::format("{} sets, {}", r.result.calibration_sets,
                                                method_name(r.options.method))});
  if (r.latency_before_ms && r.latency_after_ms)
    facts.push_back({"latency (kiln fast engine)",
                     fmt::format("{:.2f} ms -> {:.2f} ms (median of {})", *r.latency_before_ms,
                                 *r.latency_after_ms, r.latency_runs)});
  page.facts(facts);
  BarChart size{.title = "file size", .value_axis = "MB", .rows = {"float", "quantized"}};
  size.series.push_back({"size", category_color(0), {r.bytes_before / 1048576.0, r.bytes_after / 1048576.0}});
  page.figure(bar_chart_svg(size));
  if (r.latency_before_ms && r.latency_after_ms) {
    BarChart lat{.title = "latency, median run", .value_axis = "ms", .rows = {"float", "quantized"}};
    lat.series.push_back({"latency", category_color(1), {*r.latency_before_ms, *r.latency_after_ms}});
    page.figure(bar_chart_svg(lat));
  }
  page.heading("Outputs against the float model");
  page.paragraph(fmt::format("{} input sets: {}{}", r.eval_sets, r.eval_source,
                             r.random_inputs ? " (random inputs: these figures say little about "
                                               "the accuracy on real data)" : ""));
  HtmlTable outs{.header = {"output", "cosine", "max abs", "relative", "top-1 agreement", "note"},
                 .numeric = {false, true, true, true, true, false}};
  for (const OutputError& e : r.errors)
    outs.rows.push_back({e.name, e.compared ? fmt::format("{:.5f}", e.cosine) : "",
                         e.compared ? fmt::format("{:.3g}", e.max_abs) : "",
                         e.compared ? fmt::format("{:.3g}", e.max_rel) : "",
                         e.top1_agreement ? fmt::format("{:.1f}%", 100 * *e.top1_agreement) : "",
                         e.note});
  page.table(outs);
  page.heading("Nodes");
  HtmlTable nodes{.header = {"node", "op", "precision", "how, or why float"}};
  for (const NodeDecision& d : r.result.decisions)
    nodes.rows.push_back({d.node, d.op, d.precision, d.reason});
  page.table(nodes);
  return page.str();
}

}  // namespace kiln::quant
