// A self-contained HTML page: inline CSS, headings, text, key-value lists, tables and inline SVG.
// Nothing is fetched from the network (no scripts, fonts or images from elsewhere).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kiln {

struct HtmlTable {
  std::vector<std::string> header;
  std::vector<bool> numeric;  // per column: right-aligned; missing entries mean text
  std::vector<std::vector<std::string>> rows;
  std::string caption;
};

class HtmlPage {
 public:
  explicit HtmlPage(std::string title);

  void heading(const std::string& text, int level = 2);
  void paragraph(const std::string& text);
  void note(const std::string& text);  // smaller, grey
  // Label: value pairs, as a compact grid.
  void facts(const std::vector<std::pair<std::string, std::string>>& items);
  void table(const HtmlTable& t);
  // Trusted markup made by kiln (an SVG chart), wrapped in a figure.
  void figure(const std::string& svg, const std::string& caption = {});

  std::string str() const;

 private:
  std::string title_;
  std::string body_;
};

}  // namespace kiln
