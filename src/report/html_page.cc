#include "report/html_page.h"

#include <fmt/format.h>

#include <algorithm>

#include "report/svg.h"

namespace kiln {

namespace {

constexpr const char* kStyle = R"(
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #222; margin: 0;
       background: #fafafa; }
main { max-width: 1000px; margin: 0 auto; padding: 24px 28px 48px; background: #fff; }
h1 { font-size: 24px; margin: 0 0 6px; }
h2 { font-size: 19px; margin: 32px 0 10px; padding-bottom: 4px; border-bottom: 1px solid #ddd; }
h3 { font-size: 16px; margin: 20px 0 8px; }
p { line-height: 1.45; margin: 8px 0; }
p.note { color: #666; font-size: 13px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 18px; margin: 10px 0; }
dl.facts dt { color: #666; }
dl.facts dd { margin: 0; font-variant-numeric: tabular-nums; }
figure { margin: 14px 0; }
figure svg { max-width: 100%; height: auto; display: block; }
figcaption { color: #666; font-size: 13px; margin-top: 4px; }
table { border-collapse: collapse; font-size: 13px; margin: 10px 0; width: 100%; }
caption { text-align: left; color: #666; padding-bottom: 4px; }
th, td { padding: 4px 8px; border-bottom: 1px solid #eee; text-align: left; }
th { background: #f2f2f2; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr:hover td { background: #f7fbff; }
)";

}  // namespace

HtmlPage::HtmlPage(std::string title) : title_(std::move(title)) {
  body_ += "<h1>" + escape_markup(title_) + "</h1>\n";
}

void HtmlPage::heading(const std::string& text, int level) {
  level = std::clamp(level, 2, 4);
  body_ += fmt::format("<h{0}>{1}</h{0}>\n", level, escape_markup(text));
}

void HtmlPage::paragraph(const std::string& text) {
  body_ += "<p>" + escape_markup(text) + "</p>\n";
}

void HtmlPage::note(const std::string& text) {
  body_ += "<p class=\"note\">" + escape_markup(text) + "</p>\n";
}

void HtmlPage::facts(const std::vector<std::pair<std::string, std::string>>& items) {
  body_ += "<dl class=\"facts\">";
  for (const auto& [k, v] : items)
    body_ += "<dt>" + escape_markup(k) + "</dt><dd>" + escape_markup(v) + "</dd>";
  body_ += "</dl>\n";
}

void HtmlPage::table(const HtmlTable& t) {
  auto cls = [&](size_t col) {
    return col < t.numeric.size() && t.numeric[col] ? " class=\"num\"" : "";
  };
  body_ += "<table>";
  if (!t.caption.empty()) body_ += "<caption>" + escape_markup(t.caption) + "</caption>";
  body_ += "<thead><tr>";
  for (size_t c = 0; c < t.header.size(); ++c)
    body_ += fmt::format("<th{}>{}</th>", cls(c), escape_markup(t.header[c]));
  body_ += "</tr></thead><tbody>";
  for (const auto& row : t.rows) {
    body_ += "<tr>";
    for (size_t c = 0; c < row.size(); ++c)
      body_ += fmt::format("<td{}>{}</td>", cls(c), escape_markup(row[c]));
    body_ += "</tr>";
  }
  body_ += "</tbody></table>\n";
}

void HtmlPage::figure(const std::string& svg, const std::string& caption) {
  body_ += "<figure>" + svg;
  if (!caption.empty()) body_ += "<figcaption>" + escape_markup(caption) + "</figcaption>";
  body_ += "</figure>\n";
}

std::string HtmlPage::str() const {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n<main>\n{}</main>\n</body>\n</html>\n",
      escape_markup(title_), kStyle, body_);
}

}  // namespace kiln
