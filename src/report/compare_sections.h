// Sections that the before/after pages (kiln optimize --report, kiln bench --compare) share: the
// nodes by op type of two models as a grouped bar chart and a table.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "report/html_page.h"

namespace kiln {

// The colours of "before" and "after" on every comparison page.
std::string before_color();
std::string after_color();

struct OpCounts {
  std::string label;                   // "before", "-O 0", "model.onnx"
  std::map<std::string, int64_t> ops;  // op type -> nodes
};

// A grouped bar chart of the op types (most nodes first; the rest summed into one row beyond
// `chart_rows`) and a table of every op type with its change. With one side only (`after` has no
// label), one series and no change column.
void op_count_section(HtmlPage& page, const OpCounts& before, const OpCounts& after,
                      size_t chart_rows = 24);

// "+3", "-12", "0"; and a ratio "0.81x" of after over before ("-" when before is 0).
std::string signed_change(int64_t before, int64_t after);
std::string ratio_text(double before, double after);

}  // namespace kiln
