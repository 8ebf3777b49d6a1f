// What the recurrent steps (cpu.lstm, cpu.gru) share: the checks that a node is in the form their
// kernels run (float data, the default activations, no clip or sequence_lens, weights of the
// right dims) and the initial and final states in either layout. Anything else goes to the
// reference kernel, so that its errors stay the reference's.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "ops/attrs.h"
#include "ops/op.h"

namespace kiln::engine {

struct RecurrentShape {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, directions = 1;
  bool batch_first = false;  // layout 1: X [batch, seq, input], states [batch, dirs, hidden]
  bool reverse_only = false;

  std::vector<int64_t> state_dims() const {
    return batch_first ? std::vector<int64_t>{batch, directions, hidden}
                       : std::vector<int64_t>{directions, batch, hidden};
  }
  std::vector<int64_t> y_dims() const {
    return batch_first ? std::vector<int64_t>{batch, seq, directions, hidden}
                       : std::vector<int64_t>{seq, directions, batch, hidden};
  }
  // Where direction dir's row of batch b starts in a state tensor.
  int64_t state_at(int64_t dir, int64_t b) const {
    return batch_first ? (b * directions + dir) * hidden : (dir * batch + b) * hidden;
  }
};

inline bool float_dims_are(const KernelContext& ctx, int i, const std::vector<int64_t>& dims) {
  return ctx.input(i).dtype() == DataType::kFloat && ctx.input(i).dims() == dims;
}

// The shape of an LSTM (gates 4) or GRU (gates 3) node in the kernels' form, else nullopt: W
// [D, gates*H, I], R [D, gates*H, H], B [D, 2*gates*H], initial_h (input 5) of the state's dims.
inline std::optional<RecurrentShape> recurrent_shape(const KernelContext& ctx, int64_t gates) {
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
  RecurrentShape s;
  s.batch_first = attr_int(n, "layout", 0) != 0;
  s.reverse_only = dir == "reverse";
  s.seq = x.dim(s.batch_first ? 1 : 0);
  s.batch = x.dim(s.batch_first ? 0 : 1);
  s.input = x.dim(2);
  s.hidden = r.dim(2);
  s.directions = dir == "bidirectional" ? 2 : 1;
  const int64_t D = s.directions, H = s.hidden;
  if (H <= 0 || attr_int(n, "hidden_size", H) != H) return std::nullopt;
  if (!float_dims_are(ctx, 1, {D, gates * H, s.input}) || !float_dims_are(ctx, 2, {D, gates * H, H}) ||
      (ctx.has_input(3) && !float_dims_are(ctx, 3, {D, 2 * gates * H})) ||
      (ctx.has_input(5) && !float_dims_are(ctx, 5, s.state_dims())))
    return std::nullopt;
  return s;
}

// Direction dir's rows of input i (a state tensor), or zeros when the input is absent, as
// [batch, hidden] in h.
inline void load_state(const KernelContext& ctx, int i, const RecurrentShape& s, int64_t dir,
                       std::vector<float>& h) {
  h.assign(static_cast<size_t>(s.batch * s.hidden), 0.0f);
  if (!ctx.has_input(i)) return;
  for (int64_t b = 0; b < s.batch; ++b)
    std::copy_n(ctx.input(i).data<float>() + s.state_at(dir, b), s.hidden, h.data() + b * s.hidden);
}

// h ([batch, hidden]) into direction dir's rows of a state tensor.
inline void store_state(const std::vector<float>& h, const RecurrentShape& s, int64_t dir, Tensor& out) {
  for (int64_t b = 0; b < s.batch; ++b)
    std::copy_n(h.data() + b * s.hidden, s.hidden, out.data<float>() + s.state_at(dir, b));
}

}  // namespace kiln::engine
