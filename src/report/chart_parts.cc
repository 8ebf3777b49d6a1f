#include "report/chart_parts.h"

namespace kiln::chart_parts {

namespace {
constexpr double kCharWidth = 6.8;  // of 12px text, roughly
}  // namespace

double text_width(std::string_view s, double size) {
  return static_cast<double>(s.size()) * kCharWidth * size / 12;
}

std::string shorten(const std::string& s, size_t max_chars) {
  if (s.size() <= max_chars) return s;
  return s.substr(0, max_chars - 1) + "\u2026";
}

double quantile(const std::vector<double>& sorted, double p) {
  const double at = p * static_cast<double>(sorted.size() - 1);
  const size_t i = static_cast<size_t>(at);
  return i + 1 < sorted.size() ? sorted[i] + (at - static_cast<double>(i)) * (sorted[i + 1] - sorted[i])
                               : sorted[i];
}

void draw_title(Svg& svg, const std::string& title) {
  svg.text(12, 22, title, {.size = 15, .bold = true, .fill = "#222"});
}

double layout_legend(const Legend& legend, double x, double width, Svg* svg, double y) {
  if (legend.empty()) return 0;
  double cx = x, cy = y;
  constexpr double kRow = 18;
  for (const auto& [label, color] : legend) {
    const double w = 16 + text_width(label) + 14;
    if (cx + w > x + width && cx > x) {
      cx = x;
      cy += kRow;
    }
    if (svg) {
      svg->rect(cx, cy, 11, 11, color);
      svg->text(cx + 15, cy + 10, label, {.size = 12});
    }
    cx += w;
  }
  return cy - y + kRow + 4;
}

}  // namespace kiln::chart_parts
