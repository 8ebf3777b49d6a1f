#include "engine/cpu/nms.h"

#include <algorithm>
#include <cmath>

namespace kiln::cpu {

namespace {

// A box's extent and area, computed once per run. The reference kernel recomputes them for every
// pair with the same double operations, so both see the same values and make the same decisions.
struct Extent {
  double x0, x1, y0, y1, area;
};

Extent extent_of(const float* b, bool center) {
  const double a0 = b[0], a1 = b[1], a2 = b[2], a3 = b[3];
  Extent e;
  if (!center) {  // [y1, x1, y2, x2], corners in any order
    e.y0 = std::min(a0, a2), e.y1 = std::max(a0, a2);
    e.x0 = std::min(a1, a3), e.x1 = std::max(a1, a3);
  } else {  // [x_center, y_center, width, height]
    e.x0 = a0 - a2 / 2, e.x1 = a0 + a2 / 2, e.y0 = a1 - a3 / 2, e.y1 = a1 + a3 / 2;
  }
  e.area = (e.x1 - e.x0) * (e.y1 - e.y0);
  return e;
}

// Whether kept box b suppresses candidate a: their IoU is above the threshold (the reference
// kernel's test, operation for operation).
bool suppresses(const Extent& a, const Extent& b, double iou_threshold) {
  const double ix = std::min(a.x1, b.x1) - std::max(a.x0, b.x0);
  const double iy = std::min(a.y1, b.y1) - std::max(a.y0, b.y0);
  if (ix <= 0 || iy <= 0) return false;
  const double inter = ix * iy;
  const double uni = a.area + b.area - inter;
  if (a.area <= 0 || b.area <= 0 || uni <= 0) return false;
  return inter / uni > iou_threshold;
}

// Cells along x over the candidates' extent, about one mean box width wide: a kept box is listed
// in every cell its x-range touches, so two boxes whose x-ranges overlap share a cell (the cell
// of a point is monotone in x). Non-finite coordinates or a zero extent give one cell, which is
// the all-pairs check.
class XGrid {
 public:
  XGrid(const std::vector<Extent>& ext, const std::vector<int64_t>& cand) {
    double lo = INFINITY, hi = -INFINITY, width = 0;
    bool finite = true;
    for (int64_t i : cand) {
      const Extent& e = ext[i];
      finite = finite && std::isfinite(e.x0) && std::isfinite(e.x1);
      lo = std::min(lo, e.x0), hi = std::max(hi, e.x1), width += std::fabs(e.x1 - e.x0);
    }
    const double span = hi - lo, mean_width = cand.empty() ? 0 : width / cand.size();
    int64_t n = 1;
    if (finite && span > 0 && mean_width > 0 && std::isfinite(span / mean_width)) {
      const double max_cells = std::min<double>(static_cast<double>(cand.size()), 65536.0);
      n = static_cast<int64_t>(std::min(std::ceil(span / mean_width), max_cells));
      n = std::max<int64_t>(n, 1);
    }
    cells_.resize(n);
    lo_ = lo;
    scale_ = n > 1 ? n / span : 0;
  }

  // The cells [first, last] that x-range [x0, x1] touches.
  std::pair<int64_t, int64_t> cells(const Extent& e) const {
    if (cells_.size() == 1) return {0, 0};
    const int64_t a = cell(e.x0), b = cell(e.x1);
    return {std::min(a, b), std::max(a, b)};
  }
  std::vector<int64_t>& at(int64_t c) { return cells_[c]; }

 private:
  int64_t cell(double x) const {
    const double c = (x - lo_) * scale_;
    const int64_t last = static_cast<int64_t>(cells_.size()) - 1;
    return c <= 0 ? 0 : c >= static_cast<double>(last) ? last : static_cast<int64_t>(c);
  }

  std::vector<std::vector<int64_t>> cells_;
  double lo_ = 0, scale_ = 0;
};

}  // namespace

std::vector<int64_t> non_max_suppression(const float* boxes, const float* scores, int64_t batches,
                                         int64_t classes, int64_t num_boxes, const NmsOptions& o) {
  std::vector<int64_t> out;
  if (batches <= 0 || classes <= 0 || num_boxes <= 0) return out;  // (no pointer arithmetic on empties)
  std::vector<Extent> ext(num_boxes);
  std::vector<int64_t> cand;
  std::vector<int64_t> kept;     // box indices, in selection order
  std::vector<int64_t> checked;  // per kept box: the last candidate checked against it
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t i = 0; i < num_boxes; ++i)
      ext[i] = extent_of(boxes + (b * num_boxes + i) * 4, o.center_point_box);
    for (int64_t c = 0; c < classes; ++c) {
      const float* s = scores + (b * classes + c) * num_boxes;
      cand.clear();
      for (int64_t i = 0; i < num_boxes; ++i)
        if (!o.score_threshold || static_cast<double>(s[i]) > *o.score_threshold) cand.push_back(i);
      std::stable_sort(cand.begin(), cand.end(), [&](int64_t i, int64_t j) {
        return static_cast<double>(s[i]) > static_cast<double>(s[j]);
      });
      XGrid grid(ext, cand);
      kept.clear();
      checked.clear();
      for (int64_t i : cand) {
        if (static_cast<int64_t>(kept.size()) >= o.max_output_boxes_per_class) break;
        const Extent& e = ext[i];
        const auto [first, last] = grid.cells(e);
        bool keep = true;
        for (int64_t cell = first; cell <= last && keep; ++cell)
          for (int64_t k : grid.at(cell)) {
            if (checked[k] == i) continue;  // listed in an earlier cell too
            checked[k] = i;
            if (suppresses(e, ext[kept[k]], o.iou_threshold)) {
              keep = false;
              break;
            }
          }
        if (!keep) continue;
        const auto k = static_cast<int64_t>(kept.size());
        kept.push_back(i);
        checked.push_back(-1);
        for (int64_t cell = first; cell <= last; ++cell) grid.at(cell).push_back(k);
        out.insert(out.end(), {b, c, i});
      }
    }
  }
  return out;
}

}  // namespace kiln::cpu
