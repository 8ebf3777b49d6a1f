// GRU as a step of the reference form ("cpu.gru", cpu/gru.h): float data, the default activations,
// no clip or sequence_lens, either linear_before_reset; anything else (and every malformed input,
// so that its errors stay the reference's) goes to the reference kernel.
#include <algorithm>

#include "engine/cpu/gru.h"
#include "engine/kernel_table.h"
#include "engine/lowering.h"
#include "engine/native/native_kernels.h"
#include "engine/reference_step.h"
#include "ops/attrs.h"

namespace kiln::engine {

namespace {

const KernelFn& reference_gru() {
  static const KernelFn& fn = OpRegistry::global().find("", "GRU")->kernel;
  return fn;
}

bool dims_are(const KernelContext& ctx, int i, std::vector<int64_t> dims) {
  return ctx.input(i).dtype() == DataType::kFloat && ctx.input(i).dims() == dims;
}

// The dims when this kernel runs the node, else nullopt.
std::optional<cpu::GruDims> fast_gru(const KernelContext& ctx) {
  const Node& n = ctx.node();
  if (n.attr("activations") || n.attr("activation_alpha") || n.attr("activation_beta") ||
      n.attr("clip") || ctx.has_input(4))
    return std::nullopt;
  const std::string dir = attr_string(n, "direction", "forward");
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional") return std::nullopt;
  const Tensor& x = ctx.input(0);
  const Tensor& r = ctx.input(2);
  if (x.dtype() != DataType::kFloat || x.rank() != 3 || r.rank() != 3 || x.numel() == 0)
    return std::nullopt;
  cpu::GruDims d;
  d.batch_first = attr_int(n, "layout", 0) != 0;
  d.linear_before_reset = attr_int(n, "linear_before_reset", 0) != 0;
  d.seq = x.dim(d.batch_first ? 1 : 0);
  d.batch = x.dim(d.batch_first ? 0 : 1);
  d.input = x.dim(2);
  d.hidden = r.dim(2);
  d.directions = dir == "bidirectional" ? 2 : 1;
  const int64_t D = d.directions, H = d.hidden, B = d.batch;
  if (H <= 0 || attr_int(n, "hidden_size", H) != H) return std::nullopt;
  const std::vector<int64_t> state =
      d.batch_first ? std::vector<int64_t>{B, D, H} : std::vector<int64_t>{D, B, H};
  if (!dims_are(ctx, 1, {D, 3 * H, d.input}) || !dims_are(ctx, 2, {D, 3 * H, H}) ||
      (ctx.has_input(3) && !dims_are(ctx, 3, {D, 6 * H})) ||
      (ctx.has_input(5) && !dims_are(ctx, 5, state)))
    return std::nullopt;
  return d;
}

void run_gru(KernelContext& ctx) {
  const auto fast = fast_gru(ctx);
  if (!fast) return reference_gru()(ctx);
  const cpu::GruDims& d = *fast;
  const int64_t D = d.directions, B = d.batch, H = d.hidden, S = d.seq;
  const bool reverse_only = attr_string(ctx.node(), "direction", "forward") == "reverse";
  const std::vector<int64_t> state =
      d.batch_first ? std::vector<int64_t>{B, D, H} : std::vector<int64_t>{D, B, H};
  Tensor y(DataType::kFloat, d.batch_first ? std::vector<int64_t>{B, S, D, H}
                                           : std::vector<int64_t>{S, D, B, H});
  Tensor yh(DataType::kFloat, state);
  auto state_at = [&](int64_t dir, int64_t b) { return d.batch_first ? (b * D + dir) * H : (dir * B + b) * H; };
  std::vector<float> h(static_cast<size_t>(B * H));
  for (int64_t dir = 0; dir < D; ++dir) {
    for (int64_t b = 0; b < B; ++b) {
      const int64_t at = state_at(dir, b);
      for (int64_t k = 0; k < H; ++k)
        h[b * H + k] = ctx.has_input(5) ? ctx.input(5).data<float>()[at + k] : 0.0f;
    }
    const float* w = ctx.input(1).data<float>() + dir * 3 * H * d.input;
    const float* r = ctx.input(2).data<float>() + dir * 3 * H * H;
    const float* bias = ctx.has_input(3) ? ctx.input(3).data<float>() + dir * 6 * H : nullptr;
    cpu::gru_direction(d, dir, reverse_only || dir == 1, ctx.input(0).data<float>(), w, r, bias,
                       h.data(), y.data<float>());
    for (int64_t b = 0; b < B; ++b) std::copy_n(h.data() + b * H, H, yh.data<float>() + state_at(dir, b));
  }
  ctx.set_output(0, std::move(y));
  ctx.set_output(1, std::move(yh));
}

bool build_gru(Group& g, Lowering& lw) {
  static const KernelFn fn = run_gru;
  add_kernel_context_step(g, lw, fn, "cpu.gru");
  return true;
}

}  // namespace

constinit const KernelImpl kCpuGru{.name = "cpu.gru", .match = match_reference, .build = build_gru};

}  // namespace kiln::engine
