// The HTML page of `kiln optimize --report FILE.html`: the model before and after (nodes by op,
// initializers, bytes), time and rewrites per pass, near misses, and the verification's errors.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <map>
#include <tuple>

#include "report/charts.h"
#include "report/compare_sections.h"
#include "report/html_page.h"
#include "profile/optimize_report.h"
#include "profile/report_format.h"

namespace kiln {

namespace {

constexpr size_t kListedRows = 400;  // rows of the full rewrite and near-miss lists

std::string file_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "2.44 MB", "116 B".
std::string bytes_text(int64_t b) {
  const std::string n = format_count(static_cast<double>(b));
  return n + (std::isdigit(static_cast<unsigned char>(n.back())) ? " B" : "B");
}

void summary_facts(HtmlPage& page, const OptimizeReport& r) {
  const opt::OptimizeResult& o = r.result;
  std::vector<std::pair<std::string, std::string>> facts = {
      {"model", r.model},
      {"written to", r.output},
      {"passes", fmt::format("{}", fmt::join(r.pipeline, ", "))},
      {"time", fmt::format("load {}, optimize {} ({} rounds)", format_ms(r.load_ms), format_ms(o.ms),
                           o.rounds)},
      {"nodes", fmt::format("{} before, {} after ({})", r.before.nodes, r.after.nodes,
                            signed_change(r.before.nodes, r.after.nodes))},
      {"rewrites", std::to_string(o.rewrites.size())},
      {"near misses", std::to_string(o.near_misses.size())}};
  if (r.verify)
    facts.push_back({"verification", r.verify->report.ok ? "the outputs agree"
                                                          : "the outputs DIFFER"});
  page.facts(facts);
}

void size_section(HtmlPage& page, const OptimizeReport& r) {
  page.heading("Before and after");
  const opt::ModelStats &b = r.before, &a = r.after;
  HtmlTable t{{"", "before", "after", "change", "after / before"}, {false, true, true, true, true},
              {}, "The model"};
  auto count_row = [&](const char* what, int64_t x, int64_t y) {
    t.rows.push_back({what, std::to_string(x), std::to_string(y), signed_change(x, y),
                      ratio_text(static_cast<double>(x), static_cast<double>(y))});
  };
  auto bytes_row = [&](const char* what, int64_t x, int64_t y) {
    t.rows.push_back({what, bytes_text(x), bytes_text(y),
                      (y >= x ? "+" : "-") + bytes_text(y >= x ? y - x : x - y),
                      ratio_text(static_cast<double>(x), static_cast<double>(y))});
  };
  count_row("nodes", b.nodes, a.nodes);
  count_row("subgraphs", b.subgraphs, a.subgraphs);
  count_row("initializers", b.initializers, a.initializers);
  bytes_row("initializer bytes", b.initializer_bytes, a.initializer_bytes);
  bytes_row("file size", b.file_bytes, a.file_bytes);
  page.table(t);
  op_count_section(page, {"before", b.ops}, {"after", a.ops});
}

void pass_section(HtmlPage& page, const OptimizeReport& r) {
  const opt::OptimizeResult& o = r.result;
  page.heading("Passes");
  std::map<std::string, int> misses;
  for (const opt::NearMiss& m : o.near_misses) ++misses[m.pass];
  BarChart time{.title = "Time per pass", .value_axis = "ms (all rounds)"};
  BarChart rewrites{.title = "Rewrites per pass", .value_axis = "rewrites"};
  BarSeries ms{"time", category_color(2), {}}, count{"rewrites", category_color(3), {}};
  HtmlTable t{{"pass", "runs", "rewrites", "near misses", "time"}, {false, true, true, true, true},
              {}, fmt::format("{} rounds until a round changed nothing", o.rounds)};
  for (const opt::PassStats& p : o.passes) {
    time.rows.push_back(p.name);
    ms.values.push_back(p.ms);
    time.tooltips.push_back(fmt::format("{}: {} over {} runs", p.name, format_ms(p.ms), p.runs));
    rewrites.rows.push_back(p.name);
    count.values.push_back(static_cast<double>(p.rewrites));
    t.rows.push_back({p.name, std::to_string(p.runs), std::to_string(p.rewrites),
                      std::to_string(misses[p.name]), format_ms(p.ms)});
  }
  time.series.push_back(std::move(ms));
  rewrites.series.push_back(std::move(count));
  page.figure(bar_chart_svg(time), "Time in each pass, all rounds together.");
  page.figure(bar_chart_svg(rewrites), "Rewrites each pass applied.");
  page.table(t);
}

void rewrite_section(HtmlPage& page, const OptimizeReport& r) {
  const opt::OptimizeResult& o = r.result;
  page.heading("Rewrites");
  if (o.rewrites.empty()) {
    page.paragraph("No pass changed the model.");
    return;
  }
  // (pass, what) -> times, nodes removed, nodes added; in pipeline order, then by name.
  std::map<std::pair<std::string, std::string>, std::tuple<int, size_t, size_t>> kinds;
  for (const opt::Rewrite& w : o.rewrites) {
    auto& [times, removed, added] = kinds[{w.pass, w.what}];
    ++times;
    removed += w.removed.size();
    added += w.added.size();
  }
  HtmlTable by_kind{{"pass", "rewrite", "times", "nodes removed", "nodes added"},
                    {false, false, true, true, true}, {}, "The rewrites by kind"};
  for (const std::string& pass : r.pipeline)
    for (const auto& [key, v] : kinds)
      if (key.first == pass)
        by_kind.rows.push_back({pass, key.second, std::to_string(std::get<0>(v)),
                                std::to_string(std::get<1>(v)), std::to_string(std::get<2>(v))});
  page.table(by_kind);

  HtmlTable all{{"#", "pass", "rewrite", "removed", "added"}, {true, false, false, false, false},
                {}, {}};
  for (size_t i = 0; i < o.rewrites.size() && i < kListedRows; ++i) {
    const opt::Rewrite& w = o.rewrites[i];
    all.rows.push_back({std::to_string(i + 1), w.pass, w.what,
                        fmt::format("{}", fmt::join(w.removed, ", ")),
                        fmt::format("{}", fmt::join(w.added, ", "))});
  }
  all.caption = o.rewrites.size() > kListedRows
                    ? fmt::format("The first {} of {} rewrites, in the order applied (the JSON "
                                  "report has all)",
                                  kListedRows, o.rewrites.size())
                    : "Every rewrite, in the order applied";
  page.table(all);
}

void near_miss_section(HtmlPage& page, const OptimizeReport& r) {
  const opt::OptimizeResult& o = r.result;
  page.heading("Near misses");
  if (o.near_misses.empty()) {
    page.paragraph("No pattern matched in part without being applied.");
    return;
  }
  page.note("Patterns that matched in part in the last round, and why the rest did not.");
  std::map<std::pair<std::string, std::string>, int> reasons;
  for (const opt::NearMiss& m : o.near_misses) ++reasons[{m.pass, m.reason}];
  HtmlTable by_reason{{"pass", "reason", "nodes"}, {false, false, true}, {}, "By reason"};
  for (const auto& [key, n] : reasons)
    by_reason.rows.push_back({key.first, key.second, std::to_string(n)});
  page.table(by_reason);
  HtmlTable all{{"pass", "node", "reason"}, {}, {}, {}};
  for (size_t i = 0; i < o.near_misses.size() && i < kListedRows; ++i) {
    const opt::NearMiss& m = o.near_misses[i];
    all.rows.push_back({m.pass, m.node, m.reason});
  }
  all.caption = o.near_misses.size() > kListedRows
                    ? fmt::format("The first {} of {} near misses", kListedRows, o.near_misses.size())
                    : "Every near miss";
  page.table(all);
}

std::string error_text(double e) { return fmt::format("{:.3g}", e); }

void verify_section(HtmlPage& page, const OptimizeReport& r) {
  page.heading("Verification");
  if (!r.verify) {
    page.paragraph("Not verified: --verify N runs both models on N seeded random input sets.");
    return;
  }
  const OptimizeVerification& v = *r.verify;
  page.facts({{"input sets", std::to_string(v.samples)},
              {"tolerance", fmt::format("rtol {}, atol {}", v.rtol, v.atol)},
              {"result", v.report.ok ? "every output agrees" : "some outputs differ"}});
  BarChart errors{.title = "Largest absolute error per output", .value_axis = "max |optimized - original|"};
  BarSeries abs{"max abs error", category_color(4), {}};
  HtmlTable t{{"output", "max abs error", "max rel error", "result"}, {false, true, true, false},
              {}, "Worst over the input sets, on the reference runtime"};
  for (const opt::OutputCheck& o : v.report.outputs) {
    errors.rows.push_back(o.name);
    abs.values.push_back(o.max_abs_error);
    errors.row_colors.push_back(o.ok ? category_color(4) : category_color(2));
    t.rows.push_back({o.name, error_text(o.max_abs_error), error_text(o.max_rel_error),
                      o.ok ? "ok" : "DIFFERS: " + o.reason});
  }
  errors.series.push_back(std::move(abs));
  page.figure(bar_chart_svg(errors), "Green: within tolerance; red: beyond it.");
  page.table(t);
  if (!v.bisect) return;
  const opt::BisectResult& b = *v.bisect;
  page.heading("Bisection", 3);
  if (b.first_bad && b.rewrite)
    page.facts({{"first bad rewrite", fmt::format("{} of {}", *b.first_bad, b.total)},
                {"pass", b.rewrite->pass},
                {"rewrite", b.rewrite->what},
                {"removed", fmt::format("{}", fmt::join(b.rewrite->removed, ", "))},
                {"how the outputs differed", b.failure},
                {"pipelines replayed", std::to_string(b.runs)}});
  else
    page.paragraph("No single rewrite found: the unoptimized model already differs.");
}

}  // namespace

std::string optimize_html(const OptimizeReport& r) {
  HtmlPage page("kiln optimize: " + file_name(r.model));
  summary_facts(page, r);
  size_section(page, r);
  pass_section(page, r);
  rewrite_section(page, r);
  near_miss_section(page, r);
  verify_section(page, r);
  page.note("Written by kiln optimize. Node counts include the nodes of subgraphs.");
  return page.str();
}

}  // namespace kiln
