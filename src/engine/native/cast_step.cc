// Cast between float32 and float16 or bfloat16 on kiln's loop ("cpu.cast"): what a float16 model's
// edges are (reduced_float.h, `kiln quantize --keep-io-types`). The reference kernel converts
// through double into a zero-filled tensor of its own: PP-OCR's fp16 recognizer spent 4.8 ms of
// 13 in its four Casts. The conversions are the same functions the reference ends in
// (half_to_float, float_to_half: round to nearest even, NaN kept, overflow to infinity), so the
// results are the same bits.
#include "engine/cpu/parallel.h"
#include "engine/lowering.h"
#include "engine/native/native_kernels.h"
#include "engine/native/native_step.h"
#include "engine/threads.h"
#include "ops/attrs.h"

namespace kiln::engine {

namespace {

bool converted(DataType t) {
  return t == DataType::kFloat || t == DataType::kFloat16 || t == DataType::kBFloat16;
}

class CastStep : public NativeStep {
 public:
  CastStep(const Node& n, DataType from, DataType to) : NativeStep(n, "cpu.cast"), from_(from), to_(to) {}
  using NativeStep::read;
  using NativeStep::write;
  void run(RunState& st) override {
    const Tensor& x = in(st, 0);
    void* y = out(st, 0).raw();
    cpu::parallel_for(x.numel(), 1 << 14, [&](int64_t b, int64_t e) {
      if (from_ == DataType::kFloat) {
        const float* s = x.data<float>();
        auto* d = static_cast<uint16_t*>(y);
        if (to_ == DataType::kFloat16)
          for (int64_t i = b; i < e; ++i) d[i] = float_to_half(s[i]);
        else
          for (int64_t i = b; i < e; ++i) d[i] = float_to_bfloat16(s[i]);
      } else {
        const auto* s = x.data<uint16_t>();
        auto* d = static_cast<float*>(y);
        if (from_ == DataType::kFloat16)
          for (int64_t i = b; i < e; ++i) d[i] = half_to_float(s[i]);
        else
          for (int64_t i = b; i < e; ++i) d[i] = bfloat16_to_float(s[i]);
      }
    });
  }

 private:
  DataType from_, to_;
};

// float32 to or from float16 / bfloat16, dims known, no attribute but `to` (and `saturate`,
// which only float8 reads).
bool match_cast(const Node& n, const MatchContext& ctx, Group& g) {
  if (!n.has_input(0) || n.num_outputs() != 1 || !n.outputs[0] || !ctx.facts.dims(n.inputs[0])) return false;
  for (const Attribute& a : n.attrs)
    if (a.name != "to" && a.name != "saturate") return false;
  const DataType from = ctx.facts.dtype(n.inputs[0]);
  const auto to = static_cast<DataType>(attr_int(n, "to", 0));
  return from != to && converted(from) && converted(to) &&
         (from == DataType::kFloat || to == DataType::kFloat);
}

bool build_cast(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  const auto* dims = lw.facts().dims(n.inputs[0]);
  auto step = std::make_unique<CastStep>(n, lw.facts().dtype(n.inputs[0]),
                                         static_cast<DataType>(attr_int(n, "to", 0)));
  int64_t count = 1;
  for (int64_t d : *dims) count *= d;
  step->threads = threads_for_bytes(6.0 * static_cast<double>(count));
  step->read(lw.plain(n.inputs[0]), *dims);
  step->write(lw.define(n.outputs[0]));
  lw.add(std::move(step));
  return true;
}

}  // namespace

constinit const KernelImpl kCpuCast{.name = "cpu.cast", .match = match_cast, .build = build_cast};

}  // namespace kiln::engine
