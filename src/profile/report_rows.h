// The rows the terminal table and the HTML page share: op types and nodes with their time, work
// and roofline columns.
#pragma once

#include <string>
#include <vector>

#include "profile/report.h"

namespace kiln {

struct ReportRows {
  std::vector<std::string> header;
  std::vector<bool> numeric;
  std::vector<std::vector<std::string>> rows;
};

// The first `top` op types of `ops` (ProfileSummary::ops or subgraph_ops; all when top <= 0).
ReportRows op_rows(const std::vector<WorkStats>& ops, int top);
// The top `top` nodes by time, with their kernel and output shapes.
ReportRows node_rows(const ProfileReport& r, int top);
// One-line facts about the run: latency, node coverage, work, peak.
std::vector<std::pair<std::string, std::string>> run_facts(const ProfileReport& r);

}  // namespace kiln
