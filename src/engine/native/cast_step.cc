// Cast between float32 and float16 or bfloat16 on kiln's kernels ("cpu.cast", cpu/float16.h): what
// a float16 model's edges are (reduced_float.h, `kiln quantize --keep-io-types`). The reference
// kernel converts through double into a zero-filled tensor of its own: PP-OCR's fp16 recognizer
// spent 4.8 ms of 13 in its four Casts. The results are the same bits as the reference's (its
// half_to_float, float_to_half: round to nearest even, NaN kept, overflow to infinity).
#include "engine/cpu/float16.h"
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
    Tensor& y = out(st, 0);
    if (from_ == DataType::kFloat) cpu::narrow(to_, x.data<float>(), y.data<uint16_t>(), x.numel());
    else cpu::widen(from_, x.data<uint16_t>(), y.data<float>(), x.numel());
  }

 private:
  DataType from_, to_;  // one of them float32
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
  step->threads = threads_for_bytes(6.0 * static_cast<double>(dims_product(*dims, 0, dims->size())));
  step->read(lw.plain(n.inputs[0]), *dims);
  step->write(lw.define(n.outputs[0]));
  lw.add(std::move(step));
  return true;
}

}  // namespace

constinit const KernelImpl kCpuCast{.name = "cpu.cast", .match = match_cast, .build = build_cast};

}  // namespace kiln::engine
