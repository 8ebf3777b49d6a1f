// Resize of the last two axes with constant scales or sizes as a planned step (cpu.resize): its
// output goes into the arena, where the context kernel's fresh tensor cost a page fault per 4 KB
// on every run (PP-OCR's 96x160x160 upsample: 48 ms, nearly all of it faults), and it reads its
// input in the layout it was made in (row-major, channels-last or 16/8-channel blocks) and writes
// the same layout, so no reorder surrounds it. Anything else stays on the context kernel.
#include <algorithm>

#include "engine/cpu/resize.h"
#include "engine/lowering.h"
#include "engine/native/native_kernels.h"
#include "engine/native/native_step.h"
#include "engine/native/physical_order.h"
#include "engine/onednn/dnnl_context.h"
#include "engine/resize_options.h"
#include "engine/threads.h"

namespace kiln::engine {

namespace {

using tag = dnnl::memory::format_tag;

struct ResizePlan {
  cpu::ResizeOptions options;
  std::vector<int64_t> x_dims, y_dims;
};

std::optional<ResizePlan> resize_plan(const Node& n, const GraphFacts& f) {
  if (!n.has_input(0) || !n.outputs[0] || f.dtype(n.inputs[0]) != DataType::kFloat) return std::nullopt;
  const auto* x = f.dims(n.inputs[0]);
  const auto* y = f.dims(n.outputs[0]);
  auto input = [&](int i, const Tensor*& t) {  // absent, or a constant
    t = n.has_input(i) ? f.constant(n.inputs[i]) : nullptr;
    return !n.has_input(i) || t;
  };
  const Tensor *scales = nullptr, *sizes = nullptr;
  if (!x || !y || !input(2, scales) || !input(3, sizes)) return std::nullopt;
  ResizePlan p{.x_dims = *x};
  const auto o = resize_options(n, n.opset, *x, scales, sizes, p.y_dims);
  if (!o || p.y_dims != *y) return std::nullopt;
  p.options = *o;
  return p;
}

// How resize_2d walks a layout: x as [planes, h, w, inner], and the output's layout.
struct Walk {
  int64_t planes = 1, inner = 1;
  std::optional<dnnl::memory::desc> x_md, y_md;  // nullopt: row-major
};

// The walk over the layout x was made in: dense with H right before W in memory, or blocks of
// 16 or 8 channels; nullopt for other layouts (then it is read row-major).
std::optional<Walk> layout_walk(const std::optional<dnnl::memory::desc>& md, const ResizePlan& p) {
  const int rank = static_cast<int>(p.x_dims.size());
  if (!md || md->data_type() != dnnl::memory::data_type::f32) return std::nullopt;
  if (auto order = physical_order(*md)) {
    const auto h_at = std::find(order->begin(), order->end(), rank - 2) - order->begin();
    if (h_at + 1 >= rank || (*order)[h_at + 1] != rank - 1) return std::nullopt;
    Walk w{.x_md = md, .y_md = dense_md(p.y_dims, *order)};
    for (int i = 0; i < h_at; ++i) w.planes *= p.x_dims[(*order)[i]];  // the axes before H
    for (int i = h_at + 2; i < rank; ++i) w.inner *= p.x_dims[(*order)[i]];  // those after W
    return w;
  }
  if (rank != 4) return std::nullopt;
  for (auto [t, block] : {std::pair{tag::nChw16c, 16}, std::pair{tag::nChw8c, 8}}) {
    const dnnl::memory::desc blocked(p.x_dims, dnnl::memory::data_type::f32, t);
    if (*md != blocked) continue;
    const int64_t channel_blocks = (p.x_dims[1] + block - 1) / block;
    return Walk{.planes = p.x_dims[0] * channel_blocks, .inner = block, .x_md = blocked,
                .y_md = dnnl::memory::desc(p.y_dims, dnnl::memory::data_type::f32, t)};
  }
  return std::nullopt;
}

class ResizeStep : public NativeStep {
 public:
  ResizeStep(const Node& n, const ResizePlan& p, const Walk& w)
      : NativeStep(n, "cpu.resize"), plan_(p), walk_(w) {}
  using NativeStep::read;
  using NativeStep::write;
  void run(RunState& st) override {
    const int rank = static_cast<int>(plan_.x_dims.size());
    cpu::resize_2d(in(st, 0).data<float>(), walk_.planes, plan_.x_dims[rank - 2],
                   plan_.x_dims[rank - 1], out(st, 0).data<float>(), plan_.y_dims[rank - 2],
                   plan_.y_dims[rank - 1], plan_.options, walk_.inner);
  }

 private:
  ResizePlan plan_;
  Walk walk_;
};

bool match_resize(const Node& n, const MatchContext& ctx, Group& g) {
  return resize_plan(n, ctx.facts).has_value();
}

bool build_resize(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  const ResizePlan p = *resize_plan(n, lw.facts());
  Walk w;
  // A graph output is returned row-major: reorder the input (an upsample's smaller side) instead.
  auto made = lw.facts().is_graph_output(n.outputs[0]) ? std::nullopt : layout_walk(lw.layout(n.inputs[0]), p);
  if (made) w = *made;
  else w.planes = dims_product(p.x_dims, 0, p.x_dims.size() - 2);
  auto step = std::make_unique<ResizeStep>(n, p, w);
  step->threads = threads_for_bytes(4.0 * static_cast<double>(dims_product(p.y_dims, 0, p.y_dims.size())));
  step->read(w.x_md ? lw.in_layout(n.inputs[0], *w.x_md) : lw.plain(n.inputs[0]), p.x_dims);
  step->write(lw.define(n.outputs[0], w.y_md));
  lw.add(std::move(step));
  return true;
}

}  // namespace

constinit const KernelImpl kCpuResize{.name = "cpu.resize", .match = match_resize,
                                      .build = build_resize};

}  // namespace kiln::engine
