// The HTML page of `kiln bench --html`: the latency of every timed run (distribution, histogram,
// the runs in order), the summary, and with a baseline both side by side with the nodes by op.
#include <fmt/format.h>

#include <functional>
#include <set>

#include "profile/bench_report.h"
#include "report/charts.h"
#include "report/compare_sections.h"
#include "report/html_page.h"
#include "profile/report_format.h"

namespace kiln {

namespace {

// The baseline (or the only model) in the "before" colour, the model beside it in "after".
std::vector<DistributionSeries> latency_series(const BenchReport& r) {
  std::vector<DistributionSeries> out;
  for (size_t i = 0; i < r.runs.size(); ++i)
    out.push_back({r.runs[i].label, i == 0 ? before_color() : after_color(), r.runs[i].ms});
  return out;
}

struct Measure {
  const char* name;
  std::function<double(const BenchRun&, const LatencySummary&)> value;
  std::function<std::string(double)> text;
};

std::string mb_text(double mb) { return fmt::format("{:.1f} MB", mb); }
std::string count_text(double n) { return fmt::format("{:.0f}", n); }

std::vector<Measure> measures() {
  using S = LatencySummary;
  return {
      {"latency p50", [](const BenchRun&, const S& s) { return s.p50; }, format_ms},
      {"latency p90", [](const BenchRun&, const S& s) { return s.p90; }, format_ms},
      {"latency p99", [](const BenchRun&, const S& s) { return s.p99; }, format_ms},
      {"latency mean", [](const BenchRun&, const S& s) { return s.mean; }, format_ms},
      {"latency min", [](const BenchRun&, const S& s) { return s.min; }, format_ms},
      {"latency max", [](const BenchRun&, const S& s) { return s.max; }, format_ms},
      {"throughput (runs/s)", [](const BenchRun&, const S& s) { return s.throughput_per_s; },
       [](double v) { return fmt::format("{:.1f}", v); }},
      {"session creation", [](const BenchRun& b, const S&) { return b.load_ms; }, format_ms},
      {"first run", [](const BenchRun& b, const S&) { return b.first_run_ms; }, format_ms},
      {"nodes", [](const BenchRun& b, const S&) { return static_cast<double>(b.graph.nodes); },
       count_text},
      {"plan steps",
       [](const BenchRun& b, const S&) { return b.plan ? static_cast<double>(b.plan->steps) : 0; },
       count_text},
      {"activations",
       [](const BenchRun& b, const S&) {
         return b.plan ? static_cast<double>(b.plan->arena_bytes) / (1 << 20) : 0;
       },
       mb_text},
  };
}

void summary_table(HtmlPage& page, const BenchReport& r) {
  std::vector<LatencySummary> stats;
  for (const BenchRun& b : r.runs) stats.push_back(latency_summary(b.ms));
  HtmlTable t;
  t.header = {""};
  for (const BenchRun& b : r.runs) t.header.push_back(b.label);
  if (r.runs.size() == 2) t.header.push_back(r.runs[1].label + " / " + r.runs[0].label);
  t.numeric = {false, true, true, true};
  for (const Measure& m : measures()) {
    std::vector<std::string> row = {m.name};
    std::vector<double> v;
    for (size_t i = 0; i < r.runs.size(); ++i) {
      v.push_back(m.value(r.runs[i], stats[i]));
      row.push_back(m.text(v.back()));
    }
    if (v.size() == 2) row.push_back(ratio_text(v[0], v[1]));
    t.rows.push_back(std::move(row));
  }
  t.caption = fmt::format("{} timed runs after {} warmup runs{}", r.counts.iterations,
                          r.counts.warmup,
                          r.runs.size() == 2 ? "; a ratio below 1 is less time (or fewer)" : "");
  page.table(t);
}

void latency_section(HtmlPage& page, const BenchReport& r) {
  page.heading("Latency");
  const std::vector<DistributionSeries> series = latency_series(r);
  page.figure(distribution_svg({.title = "Latency of each timed run", .value_axis = "latency (ms)",
                                .series = series}),
              "A dot per run; the box spans the 25th to 75th percentile, the bar is the median.");
  page.figure(histogram_svg({.title = "Latency histogram", .value_axis = "latency (ms)",
                             .series = series}),
              "Runs per latency bin; every series shares the bins. The bins end at 1.5 "
              "interquartile ranges above the 75th percentile; slower runs are counted in the "
              "bin on the right.");
  page.figure(series_svg({.title = "Runs in order",
                          .index_axis = "timed run",
                          .value_axis = "latency (ms)",
                          .series = series}),
              r.runs.size() > 1 ? "Each model's timed runs in the order they ran, the models taking "
                                  "turns: drift and interference show here, on both alike."
                                : "The timed runs in the order they ran: drift and interference "
                                  "show here.");
}

void plan_section(HtmlPage& page, const BenchReport& r) {
  std::set<std::string> kernels;
  for (const BenchRun& b : r.runs)
    if (b.plan)
      for (const auto& [k, n] : b.plan->kernels) kernels.insert(k);
  if (kernels.empty()) return;
  page.heading("The plan");
  HtmlTable t;
  t.header = {"kernel"};
  for (const BenchRun& b : r.runs) t.header.push_back(b.label);
  t.numeric = {false, true, true};
  for (const std::string& k : kernels) {
    std::vector<std::string> row = {k};
    for (const BenchRun& b : r.runs) {
      int steps = 0;
      if (b.plan)
        if (const auto it = b.plan->kernels.find(k); it != b.plan->kernels.end()) steps = it->second;
      row.push_back(std::to_string(steps));
    }
    t.rows.push_back(std::move(row));
  }
  t.caption = "Steps of the fast engine's plan by kernel (fused groups are one step)";
  page.table(t);
}

}  // namespace

std::string bench_html(const BenchReport& r) {
  std::string title = "kiln bench";
  if (!r.runs.empty()) {
    std::string file = r.runs.back().model;
    if (const size_t slash = file.find_last_of('/'); slash != std::string::npos)
      file = file.substr(slash + 1);
    title += ": " + file;
  }
  HtmlPage page(title);
  std::vector<std::pair<std::string, std::string>> facts = {
      {"engine", r.engine},
      {"threads", r.threads > 0 ? std::to_string(r.threads) : "default (every core)"},
      {"runs", fmt::format("{} timed after {} warmup", r.counts.iterations, r.counts.warmup)},
      {"peak RSS", mb_text(r.peak_rss_mb)}};
  for (const BenchRun& b : r.runs)
    facts.push_back({b.label, fmt::format("{} at -O {}", b.model, b.optimize_level)});
  page.facts(facts);
  summary_table(page, r);
  latency_section(page, r);
  if (!r.runs.empty()) {
    page.heading("Nodes by op");
    const BenchRun& last = r.runs.back();
    if (r.runs.size() > 1)
      op_count_section(page, {r.runs[0].label, r.runs[0].graph.ops}, {last.label, last.graph.ops});
    else
      op_count_section(page, {last.label, last.graph.ops}, {});
  }
  plan_section(page, r);
  page.note("Written by kiln bench. Latency is wall-clock time of one run, inputs to outputs.");
  return page.str();
}

}  // namespace kiln
