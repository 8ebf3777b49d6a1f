// NonMaxSuppression (the detection exports' box filter), reference kernel and inference.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "ops/normalization_util.h"

namespace kiln::norm {

namespace {

// ---------------------------------------------------------------------------------------------
// NonMaxSuppression: per batch and class, greedily keeps the best-scoring boxes whose IoU with
// every box kept before is at most iou_threshold. Output: (selected, 3) of (batch, class, box).

bool suppressed(const double* a, const double* b, bool center, double iou_threshold) {
  double ax0, ax1, ay0, ay1, bx0, bx1, by0, by1;
  if (!center) {  // [y1, x1, y2, x2], corners in any order
    ay0 = std::min(a[0], a[2]), ay1 = std::max(a[0], a[2]);
    ax0 = std::min(a[1], a[3]), ax1 = std::max(a[1], a[3]);
    by0 = std::min(b[0], b[2]), by1 = std::max(b[0], b[2]);
    bx0 = std::min(b[1], b[3]), bx1 = std::max(b[1], b[3]);
  } else {  // [x_center, y_center, width, height]
    ax0 = a[0] - a[2] / 2, ax1 = a[0] + a[2] / 2, ay0 = a[1] - a[3] / 2, ay1 = a[1] + a[3] / 2;
    bx0 = b[0] - b[2] / 2, bx1 = b[0] + b[2] / 2, by0 = b[1] - b[3] / 2, by1 = b[1] + b[3] / 2;
  }
  const double ix = std::min(ax1, bx1) - std::max(ax0, bx0);
  const double iy = std::min(ay1, by1) - std::max(ay0, by0);
  if (ix <= 0 || iy <= 0) return false;
  const double inter = ix * iy;
  const double area_a = (ax1 - ax0) * (ay1 - ay0), area_b = (bx1 - bx0) * (by1 - by0);
  const double uni = area_a + area_b - inter;
  if (area_a <= 0 || area_b <= 0 || uni <= 0) return false;
  return inter / uni > iou_threshold;
}

void run_nms(KernelContext& ctx) {
  const Node& n = ctx.node();
  const Tensor& boxes = ctx.input(0);
  const Tensor& scores = ctx.input(1);
  if (boxes.rank() != 3 || boxes.dim(2) != 4)
    ctx.fail_here("boxes must have shape (batches, boxes, 4)");
  if (scores.rank() != 3 || scores.dim(0) != boxes.dim(0) || scores.dim(2) != boxes.dim(1))
    ctx.fail_here(fmt::format("scores {} do not fit boxes {}", dims_to_string(scores.dims()),
                              dims_to_string(boxes.dims())));
  int64_t max_out = 0;
  if (ctx.has_input(2) && ctx.input(2).numel() > 0)
    max_out = std::max<int64_t>(0, ctx.input(2).get_i64(0));
  double iou = 0;
  if (ctx.has_input(3) && ctx.input(3).numel() > 0) iou = ctx.input(3).get_f64(0);
  std::optional<double> score_threshold;
  if (ctx.has_input(4) && ctx.input(4).numel() > 0) score_threshold = ctx.input(4).get_f64(0);
  const bool center = attr_int(n, "center_point_box", 0) != 0;
  const int64_t B = boxes.dim(0), NB = boxes.dim(1), NC = scores.dim(1);
  const auto bv = to_doubles(n, boxes);
  const auto sv = to_doubles(n, scores);
  std::vector<int64_t> out;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < NC; ++c) {
      const double* s = sv.data() + (b * NC + c) * NB;
      std::vector<int64_t> cand;
      for (int64_t i = 0; i < NB; ++i)
        if (!score_threshold || s[i] > *score_threshold) cand.push_back(i);
      std::stable_sort(cand.begin(), cand.end(), [&](int64_t i, int64_t j) { return s[i] > s[j]; });
      std::vector<int64_t> kept;
      for (int64_t i : cand) {
        if (static_cast<int64_t>(kept.size()) >= max_out) break;
        bool keep = true;
        for (int64_t j : kept)
          if (suppressed(bv.data() + (b * NB + i) * 4, bv.data() + (b * NB + j) * 4, center, iou)) {
            keep = false;
            break;
          }
        if (!keep) continue;
        kept.push_back(i);
        out.insert(out.end(), {b, c, i});
      }
    }
  Tensor t(DataType::kInt64, {static_cast<int64_t>(out.size() / 3), 3});
  std::copy(out.begin(), out.end(), t.data<int64_t>());
  ctx.set_output(0, std::move(t));
}

}  // namespace

void register_nms(OpRegistry& r) {
  r.add("", "NonMaxSuppression")
      .versions(10)
      .inputs(2, 5)
      .outputs(1, 1)
      .attr("center_point_box", AttrKind::kInt)
      .shape([](InferContext& ctx) {
        ctx.set_output(0, DataType::kInt64, Shape{Dim(), Dim(3)});
      })
      .run(run_nms);
}

}  // namespace kiln::norm
