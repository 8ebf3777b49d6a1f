#include "report/compare_sections.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <vector>

#include "report/charts.h"

namespace kiln {

std::string before_color() { return category_color(0); }
std::string after_color() { return category_color(1); }

std::string signed_change(int64_t before, int64_t after) {
  const int64_t d = after - before;
  return d > 0 ? fmt::format("+{}", d) : fmt::format("{}", d);
}

std::string ratio_text(double before, double after) {
  if (!(before > 0)) return "-";
  return fmt::format("{:.2f}x", after / before);
}

void op_count_section(HtmlPage& page, const OpCounts& before, const OpCounts& after,
                      size_t chart_rows) {
  const bool both = !after.label.empty();
  auto count = [](const OpCounts& c, const std::string& op) -> int64_t {
    auto it = c.ops.find(op);
    return it == c.ops.end() ? 0 : it->second;
  };
  std::set<std::string> names;
  for (const auto& [op, n] : before.ops) names.insert(op);
  if (both)
    for (const auto& [op, n] : after.ops) names.insert(op);
  // Most nodes on either side first; ties by name (the set's order, kept by a stable sort).
  std::vector<std::string> ops(names.begin(), names.end());
  std::stable_sort(ops.begin(), ops.end(), [&](const std::string& a, const std::string& b) {
    return std::max(count(before, a), count(after, a)) > std::max(count(before, b), count(after, b));
  });

  BarChart chart;
  chart.title = "Nodes by op type";
  chart.value_axis = "nodes";
  BarSeries b{before.label, before_color(), {}}, a{after.label, after_color(), {}};
  int64_t rest_b = 0, rest_a = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (i + 1 < chart_rows || ops.size() <= chart_rows) {
      chart.rows.push_back(ops[i]);
      b.values.push_back(static_cast<double>(count(before, ops[i])));
      a.values.push_back(static_cast<double>(count(after, ops[i])));
    } else {
      rest_b += count(before, ops[i]);
      rest_a += count(after, ops[i]);
    }
  }
  if (ops.size() > chart_rows) {
    chart.rows.push_back(fmt::format("{} other op types", ops.size() - chart_rows + 1));
    b.values.push_back(static_cast<double>(rest_b));
    a.values.push_back(static_cast<double>(rest_a));
  }
  chart.series.push_back(std::move(b));
  if (both) chart.series.push_back(std::move(a));
  page.figure(bar_chart_svg(chart), both ? fmt::format("Nodes of each op type, {} and {}, "
                                                       "subgraphs included.",
                                                       before.label, after.label)
                                         : "Nodes of each op type, subgraphs included.");

  HtmlTable t;
  t.caption = "Every op type";
  t.header = {"op"};
  t.header.push_back(both ? before.label : "nodes");
  if (both) t.header.insert(t.header.end(), {after.label, "change"});
  t.numeric = {false, true, true, true};
  int64_t total_b = 0, total_a = 0;
  for (const std::string& op : ops) {
    const int64_t nb = count(before, op), na = count(after, op);
    total_b += nb;
    total_a += na;
    std::vector<std::string> row = {op, std::to_string(nb)};
    if (both) row.insert(row.end(), {std::to_string(na), nb == na ? "" : signed_change(nb, na)});
    t.rows.push_back(std::move(row));
  }
  std::vector<std::string> total = {"all", std::to_string(total_b)};
  if (both) total.insert(total.end(), {std::to_string(total_a), signed_change(total_b, total_a)});
  t.rows.push_back(std::move(total));
  page.table(t);
}

}  // namespace kiln
