// The terminal table of `kiln profile`.
#include <fmt/format.h>

#include "profile/report.h"
#include "profile/report_rows.h"
#include "report/text_table.h"

namespace kiln {

namespace {

std::string table_of(const ReportRows& rows) {
  TextTable t(rows.header, rows.numeric);
  for (const auto& row : rows.rows) t.add(row);
  return t.str();
}

}  // namespace

std::string profile_table(const ProfileReport& r, int top) {
  std::string out = fmt::format("kiln profile: {}\n", r.model.path);
  size_t key_width = 0;
  const auto facts = run_facts(r);
  for (const auto& [k, v] : facts) key_width = std::max(key_width, k.size());
  for (const auto& [k, v] : facts) out += fmt::format("  {:<{}}  {}\n", k, key_width, v);
  out += fmt::format("\nop types by time ({} of {})\n", std::min<size_t>(top, r.summary.ops.size()),
                     r.summary.ops.size());
  out += table_of(op_rows(r.summary.ops, top));
  if (!r.summary.subgraph_ops.empty()) {
    out += fmt::format("\nop types inside subgraphs (If/Loop/Scan bodies; their time is also their "
                       "holder's) ({} of {})\n",
                       std::min<size_t>(top, r.summary.subgraph_ops.size()),
                       r.summary.subgraph_ops.size());
    out += table_of(op_rows(r.summary.subgraph_ops, top));
  }
  out += fmt::format("\nnodes by time ({} of {})\n",
                     std::min<size_t>(top, r.summary.nodes.size()), r.summary.nodes.size());
  out += table_of(node_rows(r, top));
  return out;
}

}  // namespace kiln
