// GRU as a step of the reference form ("cpu.gru", cpu/gru.h): float data, the default activations,
// no clip or sequence_lens, either linear_before_reset (native/recurrent_shape.h); anything else
// goes to the reference kernel.
#include "engine/cpu/gru.h"
#include "engine/kernel_table.h"
#include "engine/lowering.h"
#include "engine/native/native_kernels.h"
#include "engine/native/recurrent_shape.h"
#include "engine/native/recurrent_step.h"
#include "engine/reference_step.h"

namespace kiln::engine {

namespace {

void run_gru(KernelContext& ctx, const std::vector<cpu::PackedRecurrent>& packs) {
  static const KernelFn& reference = OpRegistry::global().find("", "GRU")->kernel;
  const auto shape = recurrent_shape(ctx, 3);
  if (!shape) return reference(ctx);
  const RecurrentShape& s = *shape;
  const cpu::GruDims d{.seq = s.seq, .batch = s.batch, .input = s.input, .hidden = s.hidden,
                       .directions = s.directions, .batch_first = s.batch_first,
                       .linear_before_reset = attr_int(ctx.node(), "linear_before_reset", 0) != 0};
  const int64_t H = s.hidden;
  Tensor y(DataType::kFloat, s.y_dims());
  Tensor yh(DataType::kFloat, s.state_dims());
  std::vector<float> h;
  for (int64_t dir = 0; dir < s.directions; ++dir) {
    load_state(ctx, 5, s, dir, h);
    const float* w = ctx.input(1).data<float>() + dir * 3 * H * s.input;
    const float* r = ctx.input(2).data<float>() + dir * 3 * H * H;
    const float* bias = ctx.has_input(3) ? ctx.input(3).data<float>() + dir * 6 * H : nullptr;
    // per direction: all three gates (linear_before_reset), or z and r, then the candidate's
    const size_t per_dir = d.linear_before_reset ? 1 : 2;
    cpu::GruPacks p;
    if (packs.size() == per_dir * static_cast<size_t>(s.directions)) {
      p.gates = &packs[dir * per_dir];
      if (!d.linear_before_reset) p.candidate = &packs[dir * per_dir + 1];
    }
    cpu::gru_direction(d, dir, s.reverse_only || dir == 1, ctx.input(0).data<float>(), w, r, bias,
                       h.data(), y.data<float>(), p);
    store_state(h, s, dir, yh);
  }
  ctx.set_output(0, std::move(y));
  ctx.set_output(1, std::move(yh));
}

bool build_gru(Group& g, Lowering& lw) {
  // per direction, as run_gru reads them: all three gates, or z and r, then the candidate's
  const bool linear_before_reset = attr_int(*g.anchor, "linear_before_reset", 0) != 0;
  add_recurrent_step(g, lw, "cpu.gru", run_gru,
                     recurrent_packs(g, lw, linear_before_reset ? std::vector<int64_t>{3} : std::vector<int64_t>{2, 1}));
  return true;
}

}  // namespace

constinit const KernelImpl kCpuGru{.name = "cpu.gru", .match = match_reference, .build = build_gru};

}  // namespace kiln::engine
