// Writing SVG markup: a drawing of rectangles, lines, text and dots with escaped text and hover
// tooltips (<title>), for charts inlined into self-contained HTML pages.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln {

// Escapes &, <, >, " and ' for text and attribute values of HTML and SVG.
std::string escape_markup(std::string_view s);

struct TextStyle {
  enum class Anchor { kStart, kMiddle, kEnd };
  Anchor anchor = Anchor::kStart;
  double size = 12;
  bool bold = false;
  std::string fill = "#333";
  double rotate = 0;  // degrees, about the anchor point
};

class Svg {
 public:
  // `label` names the drawing for screen readers.
  Svg(double width, double height, std::string_view label);

  double width() const { return width_; }
  double height() const { return height_; }

  void rect(double x, double y, double w, double h, std::string_view fill,
            std::string_view tooltip = {});
  void line(double x1, double y1, double x2, double y2, std::string_view stroke,
            double stroke_width = 1, bool dashed = false);
  void polyline(const std::vector<std::pair<double, double>>& points, std::string_view stroke,
                double stroke_width = 1);
  void circle(double cx, double cy, double r, std::string_view fill,
              std::string_view tooltip = {});
  void text(double x, double y, std::string_view s, const TextStyle& style = {});

  // The finished <svg> element.
  std::string str() const;

 private:
  double width_, height_;
  std::string label_;
  std::string body_;
};

}  // namespace kiln
