#include "report/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace kiln {

namespace {

// Coordinates to a tenth of a pixel; non-finite ones (a bug upstream) as 0 so the markup stays valid.
std::string num(double v) {
  if (!std::isfinite(v)) v = 0;
  std::string s = fmt::format("{:.1f}", v);
  if (s.ends_with(".0")) s.resize(s.size() - 2);
  if (s == "-0") s = "0";
  return s;
}

// A child <title> (the browser's hover tooltip), or nothing.
std::string tooltip_element(std::string_view tooltip) {
  return tooltip.empty() ? "" : "<title>" + escape_markup(tooltip) + "</title>";
}

// The closing of an element that may hold a tooltip.
std::string close(std::string_view tag, std::string_view tooltip) {
  if (tooltip.empty()) return "/>";
  return ">" + tooltip_element(tooltip) + "</" + std::string(tag) + ">";
}

const char* anchor_name(TextStyle::Anchor a) {
  switch (a) {
    case TextStyle::Anchor::kMiddle: return "middle";
    case TextStyle::Anchor::kEnd: return "end";
    default: return "start";
  }
}

}  // namespace

std::string escape_markup(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

Svg::Svg(double width, double height, std::string_view label)
    : width_(width), height_(height), label_(label) {}

void Svg::rect(double x, double y, double w, double h, std::string_view fill,
               std::string_view tooltip) {
  body_ += fmt::format(R"svg(<rect x="{}" y="{}" width="{}" height="{}" fill="{}")svg", num(x), num(y),
                       num(std::max(w, 0.0)), num(std::max(h, 0.0)), escape_markup(fill));
  body_ += close("rect", tooltip);
}

void Svg::line(double x1, double y1, double x2, double y2, std::string_view stroke,
               double stroke_width, bool dashed) {
  body_ += fmt::format(R"svg(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="{}"{}/>)svg",
                       num(x1), num(y1), num(x2), num(y2), escape_markup(stroke),
                       num(stroke_width), dashed ? R"svg( stroke-dasharray="4 3")svg" : "");
}

void Svg::polyline(const std::vector<std::pair<double, double>>& points, std::string_view stroke,
                   double stroke_width) {
  std::string pts;
  for (const auto& [x, y] : points) pts += (pts.empty() ? "" : " ") + num(x) + "," + num(y);
  body_ += fmt::format(R"svg(<polyline points="{}" fill="none" stroke="{}" stroke-width="{}"/>)svg", pts,
                       escape_markup(stroke), num(stroke_width));
}

void Svg::circle(double cx, double cy, double r, std::string_view fill, std::string_view tooltip) {
  body_ += fmt::format(R"svg(<circle cx="{}" cy="{}" r="{}" fill="{}" fill-opacity="0.75" )svg"
                       R"svg(stroke="#222" stroke-width="0.5")svg",
                       num(cx), num(cy), num(r), escape_markup(fill));
  body_ += close("circle", tooltip);
}

void Svg::text(double x, double y, std::string_view s, const TextStyle& style) {
  std::string transform;
  if (style.rotate != 0)
    transform = fmt::format(R"svg( transform="rotate({} {} {})")svg", num(style.rotate), num(x), num(y));
  body_ += fmt::format(R"svg(<text x="{}" y="{}" font-size="{}" text-anchor="{}" fill="{}"{}{}>{}</text>)svg",
                       num(x), num(y), num(style.size), anchor_name(style.anchor),
                       escape_markup(style.fill), style.bold ? R"svg( font-weight="bold")svg" : "",
                       transform, escape_markup(s));
}

std::string Svg::str() const {
  return fmt::format(
      R"svg(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {} {}" )svg"
      R"svg(role="img" aria-label="{}" font-family="system-ui, sans-serif">{}</svg>)svg",
      num(width_), num(height_), num(width_), num(height_), escape_markup(label_), body_);
}

}  // namespace kiln
