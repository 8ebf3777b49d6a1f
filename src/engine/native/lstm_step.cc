// LSTM as a step of the reference form ("cpu.lstm", cpu/lstm.h): float data, the default
// activations, no clip, input_forget or sequence_lens (native/recurrent_shape.h); anything else
// goes to the reference kernel.
#include "engine/cpu/lstm.h"
#include "engine/kernel_table.h"
#include "engine/lowering.h"
#include "engine/native/native_kernels.h"
#include "engine/native/recurrent_shape.h"
#include "engine/native/recurrent_step.h"
#include "engine/reference_step.h"

namespace kiln::engine {

namespace {

// The shape when this kernel runs the node: the GRU's checks plus the LSTM's own inputs.
std::optional<RecurrentShape> lstm_shape(const KernelContext& ctx) {
  if (attr_int(ctx.node(), "input_forget", 0) != 0) return std::nullopt;
  auto s = recurrent_shape(ctx, 4);
  if (!s || (ctx.has_input(6) && !float_dims_are(ctx, 6, s->state_dims())) ||
      (ctx.has_input(7) && !float_dims_are(ctx, 7, {s->directions, 3 * s->hidden})))
    return std::nullopt;
  return s;
}

void run_lstm(KernelContext& ctx, const std::vector<cpu::PackedRecurrent>& packs) {
  static const KernelFn& reference = OpRegistry::global().find("", "LSTM")->kernel;
  const auto shape = lstm_shape(ctx);
  if (!shape) return reference(ctx);
  const RecurrentShape& s = *shape;
  const cpu::LstmDims d{.seq = s.seq, .batch = s.batch, .input = s.input, .hidden = s.hidden,
                        .directions = s.directions, .batch_first = s.batch_first};
  const int64_t H = s.hidden;
  Tensor y(DataType::kFloat, s.y_dims());
  Tensor yh(DataType::kFloat, s.state_dims()), yc(DataType::kFloat, s.state_dims());
  std::vector<float> h, c;
  for (int64_t dir = 0; dir < s.directions; ++dir) {
    load_state(ctx, 5, s, dir, h);
    load_state(ctx, 6, s, dir, c);
    const float* w = ctx.input(1).data<float>() + dir * 4 * H * s.input;
    const float* r = ctx.input(2).data<float>() + dir * 4 * H * H;
    const float* bias = ctx.has_input(3) ? ctx.input(3).data<float>() + dir * 8 * H : nullptr;
    const float* peep = ctx.has_input(7) ? ctx.input(7).data<float>() + dir * 3 * H : nullptr;
    const cpu::PackedRecurrent* packed = packs.size() == static_cast<size_t>(s.directions) ? &packs[dir] : nullptr;
    cpu::lstm_direction(d, dir, s.reverse_only || dir == 1, ctx.input(0).data<float>(), w, r, bias,
                        peep, h.data(), c.data(), y.data<float>(), packed);
    store_state(h, s, dir, yh);
    store_state(c, s, dir, yc);
  }
  ctx.set_output(0, std::move(y));
  ctx.set_output(1, std::move(yh));
  ctx.set_output(2, std::move(yc));
}

bool build_lstm(Group& g, Lowering& lw) {
  add_recurrent_step(g, lw, "cpu.lstm", run_lstm, recurrent_packs(g, lw, {4}));
  return true;
}

}  // namespace

constinit const KernelImpl kCpuLstm{.name = "cpu.lstm", .match = match_reference,
                                    .build = build_lstm};

}  // namespace kiln::engine
