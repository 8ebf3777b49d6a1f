// ConvTranspose 2-D whose kernel equals its strides, or of few output channels, on
// cpu::patch_deconv: channels-last in and out, the bias (its own and a following bias Add) added
// as each row is made and the activations and scalings after it applied to each row while it is
// in cache. oneDNN 2.6 runs these shapes through its backward-data convolution with 16-channel
// blocks: PP-OCR's detector head (24 -> 1 channels, 320x320 -> 640x640) took 166 ms there.
#include "engine/cpu/patch_deconv.h"
#include "engine/epilogue.h"
#include "engine/lowering.h"
#include "engine/native/native_kernels.h"
#include "engine/native/native_step.h"
#include "engine/native/physical_order.h"
#include "engine/native/row_epilogue.h"
#include "engine/onednn/deconv_geometry.h"
#include "engine/threads.h"

namespace kiln::engine {

namespace {

// Overlapping or dilated patches run here below this many output channels: oneDNN 2.6 pads the
// channels to blocks of 16, so with one output channel it did 3-5 GFLOP/s (and 85-125 with 64).
constexpr int64_t kFewChannels = 16;

// The shape when n is a 2-D ConvTranspose of one group whose kernel equals its strides without
// dilation, or one of few output channels; pads that only crop.
std::optional<cpu::PatchDeconvShape> patch_shape(const Node& n, const GraphFacts& f) {
  const auto g = deconv_geometry(n, f);
  if (!g || g->src.size() != 4 || g->weights.size() != 4) return std::nullopt;  // 4: one group
  const cpu::PatchDeconvShape s{
      .batch = g->src[0], .h = g->src[2], .w = g->src[3], .channels = g->src[1],
      .out_channels = g->channels_out, .kh = g->weights[2], .kw = g->weights[3],
      .out_h = g->dst[2], .out_w = g->dst[3], .pad_top = g->pad_l[0], .pad_left = g->pad_l[1],
      .stride_h = g->strides[0], .stride_w = g->strides[1],
      .dilation_h = g->dilations[0] + 1, .dilation_w = g->dilations[1] + 1};
  if (s.pad_top < 0 || s.pad_left < 0 || (!s.tiles() && s.out_channels >= kFewChannels))
    return std::nullopt;
  return s;
}

class PatchDeconvStep : public NativeStep {
 public:
  PatchDeconvStep(const Node& n, const cpu::PatchDeconvShape& s, const Tensor& weights,
                  std::optional<Tensor> bias, std::vector<cpu::RowOp> epilogue)
      : NativeStep(n, "cpu.patch_deconv"), shape_(s),
        packed_(cpu::pack_patch_deconv_weights(weights.data<float>(), s.channels, s.out_channels,
                                               s.kh, s.kw)),
        bias_(std::move(bias)), epilogue_(std::move(epilogue)) {}
  using NativeStep::read;
  using NativeStep::write;
  void run(RunState& st) override {
    cpu::patch_deconv(shape_, in(st, 0).data<float>(), packed_.data(),
                      bias_ ? bias_->data<float>() : nullptr, epilogue_, out(st, 0).data<float>());
  }

 private:
  cpu::PatchDeconvShape shape_;
  cpu::AlignedFloats packed_;
  std::optional<Tensor> bias_;
  std::vector<cpu::RowOp> epilogue_;
};

bool match_patch_deconv(const Node& n, const MatchContext& ctx, Group& g) {
  if (!patch_shape(n, ctx.facts)) return false;
  g.epilogue = match_epilogue(n.outputs[0], ctx, 1);
  keep_row_ops(g.epilogue);
  return true;
}

bool build_patch_deconv(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  const GraphFacts& f = lw.facts();
  const cpu::PatchDeconvShape s = *patch_shape(n, f);
  RowEpilogue e = row_epilogue(g, n.has_input(2) ? f.constant(n.inputs[2]) : nullptr, s.out_channels, f);
  auto step = std::make_unique<PatchDeconvStep>(n, s, *f.constant(n.inputs[1]), std::move(e.bias),
                                                std::move(e.ops));
  const std::vector<int> channels_last = {0, 2, 3, 1};
  const std::vector<int64_t> y_dims = {s.batch, s.out_channels, s.out_h, s.out_w};
  step->threads = threads_for_work(2.0 * static_cast<double>(s.batch * s.h * s.w * s.channels) *
                                   static_cast<double>(s.out_channels * s.kh * s.kw));
  step->read(lw.in_layout(n.inputs[0], dense_md(*f.dims(n.inputs[0]), channels_last)),
             *f.dims(n.inputs[0]));
  step->write(lw.define(g.output(), dense_md(y_dims, channels_last)));
  lw.add(std::move(step));
  return true;
}

}  // namespace

constinit const KernelImpl kCpuPatchDeconv{.name = "cpu.patch_deconv",
                                           .match = match_patch_deconv,
                                           .build = build_patch_deconv};

}  // namespace kiln::engine
