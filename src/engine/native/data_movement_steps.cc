// Transpose, Gather and Concat on kiln's CPU kernels: any element type, row-major.
#include "engine/cpu/layout.h"
#include "engine/lowering.h"
#include "engine/native/native_kernels.h"
#include "engine/native/native_step.h"
#include "ops/attrs.h"

namespace kiln::engine {

namespace {

// A tensor of fixed-size elements (no strings) with known dims.
const std::vector<int64_t>* known(const Value* v, const GraphFacts& f) {
  if (!v || !v->type.is_tensor() || f.dtype(v) == DataType::kString || dtype_size(f.dtype(v)) == 0)
    return nullptr;
  return f.dims(v);
}

std::optional<int> axis_of(const Node& n, int64_t dflt, int rank) {
  int64_t a = attr_int(n, "axis", dflt);
  if (a < -rank || a >= rank) return std::nullopt;
  return static_cast<int>(a < 0 ? a + rank : a);
}

// --- Transpose

class TransposeStep : public NativeStep {
 public:
  TransposeStep(const Node& n, std::vector<int64_t> perm, size_t elem)
      : NativeStep(n, "cpu.transpose"), perm_(std::move(perm)), elem_(elem) {}
  using NativeStep::read;
  using NativeStep::write;
  void run(RunState& st) override {
    const Tensor& x = in(st, 0);
    cpu::transpose(x.raw(), x.dims(), perm_, out(st, 0).raw(), elem_);
  }

 private:
  std::vector<int64_t> perm_;
  size_t elem_;
};

std::optional<std::vector<int64_t>> perm_of(const Node& n, const GraphFacts& f) {
  const auto* d = n.has_input(0) ? known(n.inputs[0], f) : nullptr;
  if (!d || !n.outputs[0]) return std::nullopt;
  std::vector<int64_t> perm = attr_ints(n, "perm");
  if (perm.empty())
    for (int i = static_cast<int>(d->size()) - 1; i >= 0; --i) perm.push_back(i);
  if (perm.size() != d->size()) return std::nullopt;
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[p]) return std::nullopt;
    seen[p] = true;
  }
  return perm;
}

bool match_transpose(const Node& n, const MatchContext& ctx, Group& g) {
  return perm_of(n, ctx.facts).has_value();
}

bool build_transpose(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  auto step = std::make_unique<TransposeStep>(n, *perm_of(n, lw.facts()),
                                              dtype_size(lw.facts().dtype(n.inputs[0])));
  step->read(lw.plain(n.inputs[0]), *lw.facts().dims(n.inputs[0]));
  step->write(lw.define(n.outputs[0]));
  lw.add(std::move(step));
  return true;
}

// --- Gather: data [outer, n, inner] along axis, int32 / int64 indices.

struct GatherShape {
  int64_t outer, n, inner, count;
  size_t elem;
  bool i64;
};

std::optional<GatherShape> gather_shape(const Node& n, const GraphFacts& f) {
  if (n.num_inputs() != 2 || !n.has_input(0) || !n.has_input(1) || !n.outputs[0]) return std::nullopt;
  const auto* d = known(n.inputs[0], f);
  const auto* idx = f.dims(n.inputs[1]);
  const DataType it = f.dtype(n.inputs[1]);
  if (!d || !idx || d->empty() || (it != DataType::kInt64 && it != DataType::kInt32)) return std::nullopt;
  const auto axis = axis_of(n, 0, static_cast<int>(d->size()));
  if (!axis) return std::nullopt;
  return GatherShape{dims_product(*d, 0, *axis), (*d)[*axis], dims_product(*d, *axis + 1, d->size()),
                     dims_product(*idx, 0, idx->size()), dtype_size(f.dtype(n.inputs[0])),
                     it == DataType::kInt64};
}

class GatherStep : public NativeStep {
 public:
  GatherStep(const Node& n, GatherShape s) : NativeStep(n, "cpu.gather"), s_(s) {}
  using NativeStep::read;
  using NativeStep::write;
  void run(RunState& st) override {
    const Tensor& x = in(st, 0);
    const Tensor& idx = in(st, 1);
    void* y = out(st, 0).raw();
    if (s_.i64)
      cpu::gather(x.raw(), s_.outer, s_.n, s_.inner, idx.data<int64_t>(), s_.count, y, s_.elem);
    else
      cpu::gather(x.raw(), s_.outer, s_.n, s_.inner, idx.data<int32_t>(), s_.count, y, s_.elem);
  }

 private:
  GatherShape s_;
};

bool match_gather(const Node& n, const MatchContext& ctx, Group& g) {
  return gather_shape(n, ctx.facts).has_value();
}

bool build_gather(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  const GraphFacts& f = lw.facts();
  auto step = std::make_unique<GatherStep>(n, *gather_shape(n, f));
  step->read(lw.plain(n.inputs[0]), *f.dims(n.inputs[0]));
  step->read(lw.plain(n.inputs[1]), *f.dims(n.inputs[1]));
  step->write(lw.define(n.outputs[0]));
  lw.add(std::move(step));
  return true;
}

// --- Concat along an axis.

struct ConcatShape {
  std::vector<int64_t> lens;
  int64_t outer, inner;
  size_t elem;
};

std::optional<ConcatShape> concat_shape(const Node& n, const GraphFacts& f) {
  if (n.num_inputs() < 1 || !n.outputs[0]) return std::nullopt;
  const auto* o = known(n.outputs[0], f);
  if (!o || o->empty()) return std::nullopt;
  const auto axis = axis_of(n, 0, static_cast<int>(o->size()));
  if (!axis) return std::nullopt;
  ConcatShape s{{}, dims_product(*o, 0, *axis), dims_product(*o, *axis + 1, o->size()),
                dtype_size(f.dtype(n.outputs[0]))};
  for (const Value* v : n.inputs) {
    const auto* d = v ? known(v, f) : nullptr;
    if (!d || d->size() != o->size() || f.dtype(v) != f.dtype(n.outputs[0])) return std::nullopt;
    s.lens.push_back((*d)[*axis]);
  }
  return s;
}

class ConcatStep : public NativeStep {
 public:
  ConcatStep(const Node& n, ConcatShape s) : NativeStep(n, "cpu.concat"), s_(std::move(s)) {}
  using NativeStep::read;
  using NativeStep::write;
  void run(RunState& st) override {
    xs_.resize(s_.lens.size());
    for (size_t k = 0; k < xs_.size(); ++k) xs_[k] = in(st, k).raw();
    cpu::concat(xs_, s_.lens, s_.outer, s_.inner, out(st, 0).raw(), s_.elem);
  }

 private:
  ConcatShape s_;
  std::vector<const void*> xs_;
};

bool match_concat(const Node& n, const MatchContext& ctx, Group& g) {
  return concat_shape(n, ctx.facts).has_value();
}

bool build_concat(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  const GraphFacts& f = lw.facts();
  std::vector<int> reads;
  for (const Value* v : n.inputs) reads.push_back(lw.plain(v));
  const ConcatShape s = *concat_shape(n, f);
  add_concat_step(n, reads, lw.define(n.outputs[0]), s.lens, s.outer, s.inner, lw);
  return true;
}

}  // namespace

namespace {

class ChannelConcatStep : public NativeStep {
 public:
  ChannelConcatStep(const Node& n, std::vector<int64_t> blocks, int64_t out_block)
      : NativeStep(n, "cpu.concat"), blocks_(std::move(blocks)), out_block_(out_block) {}
  using NativeStep::read;
  using NativeStep::write;
  void run(RunState& st) override {
    const auto& y = out(st, 0);
    pieces_.clear();
    for (size_t k = 0; k < blocks_.size(); ++k) {
      const Tensor& x = in(st, k);
      pieces_.push_back({x.data<float>(), x.dim(1), blocks_[k]});
    }
    cpu::concat_channels(pieces_, y.dim(0), y.dim(2) * y.dim(3), out_block_, out(st, 0).data<float>());
  }

 private:
  std::vector<int64_t> blocks_;
  int64_t out_block_;
  std::vector<cpu::ChannelPiece> pieces_;
};

}  // namespace

namespace {

class NormalizingConcatStep : public NativeStep {
 public:
  NormalizingConcatStep(const Node& n, std::vector<int64_t> channels, int64_t block,
                        std::vector<float> scale, std::vector<float> shift, bool relu)
      : NativeStep(n, "cpu.concat"), channels_(std::move(channels)), block_(block),
        scale_(std::move(scale)), shift_(std::move(shift)), relu_(relu) {}
  using NativeStep::read;
  using NativeStep::write;
  void run(RunState& st) override {
    const auto& y = out(st, 0);
    xs_.resize(channels_.size());
    for (size_t k = 0; k < xs_.size(); ++k) xs_[k] = in(st, k).data<float>();
    cpu::concat_blocks_affine(xs_, channels_, y.dim(0), y.dim(2) * y.dim(3), block_,
                              scale_.data(), shift_.data(), relu_, out(st, 0).data<float>());
  }

 private:
  std::vector<int64_t> channels_;
  int64_t block_;
  std::vector<float> scale_, shift_;
  bool relu_;
  std::vector<const float*> xs_;
};

}  // namespace

void add_normalizing_concat_step(const Node& n, const std::vector<int>& reads, int out,
                                 std::vector<int64_t> channels, int64_t block,
                                 std::vector<float> scale, std::vector<float> shift, bool relu,
                                 Lowering& lw) {
  const GraphFacts& f = lw.facts();
  auto step = std::make_unique<NormalizingConcatStep>(n, std::move(channels), block,
                                                      std::move(scale), std::move(shift), relu);
  for (size_t k = 0; k < reads.size(); ++k) step->read(reads[k], *f.dims(n.inputs[k]));
  step->write(out);
  lw.add(std::move(step));
}

void add_channel_concat_step(const Node& n, const std::vector<int>& reads,
                             std::vector<int64_t> blocks, int64_t out_block, int out, Lowering& lw) {
  const GraphFacts& f = lw.facts();
  const auto& y = *f.dims(n.outputs[0]);
  // One image: a piece in the output's blocks is one run of it, its producer may write it there.
  std::vector<PlacedInput> placed;
  int64_t channel = 0;
  for (size_t k = 0; k < reads.size(); ++k) {
    if (out_block > 0 && blocks[k] == out_block && y[0] == 1)
      placed.push_back({reads[k], out, static_cast<size_t>(channel * y[2] * y[3]) * sizeof(float)});
    channel += (*f.dims(n.inputs[k]))[1];
  }
  auto step = std::make_unique<ChannelConcatStep>(n, std::move(blocks), out_block);
  for (size_t k = 0; k < reads.size(); ++k) step->read(reads[k], *f.dims(n.inputs[k]));
  step->write(out);
  step->placed_inputs = std::move(placed);
  lw.add(std::move(step));
}

void add_concat_step(const Node& n, const std::vector<int>& reads, int out,
                     std::vector<int64_t> lens, int64_t outer, int64_t inner, Lowering& lw) {
  const GraphFacts& f = lw.facts();
  const size_t elem = dtype_size(f.dtype(n.outputs[0]));
  // One row: each piece is one run of the output, its producer may write it there.
  std::vector<PlacedInput> placed;
  int64_t at = 0;
  for (size_t k = 0; k < reads.size() && outer == 1; ++k) {
    placed.push_back({reads[k], out, static_cast<size_t>(at * inner) * elem});
    at += lens[k];
  }
  auto step = std::make_unique<ConcatStep>(n, ConcatShape{std::move(lens), outer, inner, elem});
  for (size_t k = 0; k < reads.size(); ++k) step->read(reads[k], *f.dims(n.inputs[k]));
  step->write(out);
  step->placed_inputs = std::move(placed);
  lw.add(std::move(step));
}

constinit const KernelImpl kCpuTranspose{.name = "cpu.transpose", .match = match_transpose,
                                         .build = build_transpose};
constinit const KernelImpl kCpuGather{.name = "cpu.gather", .match = match_gather,
                                      .build = build_gather};
constinit const KernelImpl kCpuConcat{.name = "cpu.concat", .match = match_concat,
                                      .build = build_concat};

}  // namespace kiln::engine
