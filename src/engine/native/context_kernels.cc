#include "engine/native/context_kernels.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "engine/cpu/indexing.h"
#include "engine/cpu/nms.h"
#include "engine/cpu/resize.h"
#include "engine/native/native_kernels.h"
#include "engine/reference_step.h"
#include "engine/resize_options.h"
#include "ops/attrs.h"
#include "support/error.h"

namespace kiln::engine {

namespace {

const KernelFn& reference_kernel(const Node& n) {
  const OpSchema* schema = OpRegistry::global().find(n.domain, n.op_type);
  KILN_CHECK(schema && schema->kernel, ErrorKind::kUnsupported, "{}no kernel for this op", n.where());
  return schema->kernel;
}

// Float boxes and scores of the shapes ONNX asks for; anything else goes to the reference kernel.
void run_nms(KernelContext& ctx) {
  const Tensor& boxes = ctx.input(0);
  const Tensor& scores = ctx.input(1);
  if (boxes.dtype() != DataType::kFloat || scores.dtype() != DataType::kFloat ||
      boxes.rank() != 3 || boxes.dim(2) != 4 || scores.rank() != 3 ||
      scores.dim(0) != boxes.dim(0) || scores.dim(2) != boxes.dim(1))
    return reference_kernel(ctx.node())(ctx);
  cpu::NmsOptions o;
  if (ctx.has_input(2) && ctx.input(2).numel() > 0)
    o.max_output_boxes_per_class = std::max<int64_t>(0, ctx.input(2).get_i64(0));
  if (ctx.has_input(3) && ctx.input(3).numel() > 0) o.iou_threshold = ctx.input(3).get_f64(0);
  if (ctx.has_input(4) && ctx.input(4).numel() > 0) o.score_threshold = ctx.input(4).get_f64(0);
  o.center_point_box = attr_int(ctx.node(), "center_point_box", 0) != 0;
  const std::vector<int64_t> selected =
      cpu::non_max_suppression(boxes.data<float>(), scores.data<float>(), boxes.dim(0),
                               scores.dim(1), boxes.dim(1), o);
  Tensor t(DataType::kInt64, {static_cast<int64_t>(selected.size() / 3), 3});
  std::copy(selected.begin(), selected.end(), t.data<int64_t>());
  ctx.set_output(0, std::move(t));
}

void run_resize(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> out_dims;
  const auto o = x.dtype() == DataType::kFloat && x.numel() > 0
                     ? resize_options(ctx.node(), ctx.opset(), x.dims(),
                                      ctx.has_input(2) ? &ctx.input(2) : nullptr,
                                      ctx.has_input(3) ? &ctx.input(3) : nullptr, out_dims)
                     : std::nullopt;
  if (!o) return reference_kernel(ctx.node())(ctx);
  const int rank = x.rank();
  Tensor y(DataType::kFloat, out_dims);
  cpu::resize_2d(x.data<float>(), x.numel() / (x.dim(rank - 2) * x.dim(rank - 1)), x.dim(rank - 2),
                 x.dim(rank - 1), y.data<float>(), out_dims[rank - 2], out_dims[rank - 1], *o);
  ctx.set_output(0, std::move(y));
}

void run_non_zero(KernelContext& ctx) {
  auto y = cpu::non_zero(ctx.input(0));
  if (!y) return reference_kernel(ctx.node())(ctx);
  ctx.set_output(0, std::move(*y));
}

void run_gather_nd(KernelContext& ctx) {
  auto y = attr_int(ctx.node(), "batch_dims", 0) == 0
               ? cpu::gather_nd(ctx.input(0), ctx.input(1))
               : std::nullopt;
  if (!y) return reference_kernel(ctx.node())(ctx);
  ctx.set_output(0, std::move(*y));
}

struct ContextKernel {
  std::string_view op;    // of the ai.onnx domain
  std::string_view name;  // the kernel's name in plans and profiles
  KernelFn fn;
};

const std::array<ContextKernel, 4>& context_kernels() {
  static const std::array<ContextKernel, 4> kernels{{
      {"NonMaxSuppression", "cpu.nms", run_nms},
      {"Resize", "cpu.resize", run_resize},
      {"NonZero", "cpu.nonzero", run_non_zero},
      {"GatherND", "cpu.gather_nd", run_gather_nd},
  }};
  return kernels;
}

const ContextKernel* find_kernel(const Node& n) {
  if (!n.domain.empty()) return nullptr;
  for (const ContextKernel& k : context_kernels())
    if (n.op_type == k.op) return &k;
  return nullptr;
}

class ContextOverrides : public KernelOverrides {
 public:
  Choice find(const Node& n) const override {
    const ContextKernel* k = find_kernel(n);
    return k ? Choice{&k->fn, k->name} : Choice{};
  }
};

bool build_context_kernel(Group& g, Lowering& lw) {
  const ContextKernel* k = find_kernel(*g.anchor);
  if (!k) return false;
  add_kernel_context_step(g, lw, k->fn, k->name);
  return true;
}

}  // namespace

const KernelOverrides& context_kernel_overrides() {
  static const ContextOverrides overrides;
  return overrides;
}

// Each runs the context kernel of its node's op (context_kernels()).
constinit const KernelImpl kCpuNms{.name = "cpu.nms", .match = match_reference,
                                   .build = build_context_kernel};
constinit const KernelImpl kCpuResizeContext{.name = "cpu.resize_context",
                                             .match = match_reference,
                                             .build = build_context_kernel};
constinit const KernelImpl kCpuNonZero{.name = "cpu.nonzero", .match = match_reference,
                                       .build = build_context_kernel};
constinit const KernelImpl kCpuGatherNd{.name = "cpu.gather_nd", .match = match_reference,
                                        .build = build_context_kernel};

}  // namespace kiln::engine
