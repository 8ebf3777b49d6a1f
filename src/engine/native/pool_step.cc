// MaxPool and AveragePool 2-D of float tensors made in channel blocks (nChw16c, nChw8c: what
// kiln's convs write) on cpu::block_pool, reading and writing those blocks; any other layout goes
// to onednn.pool (the build declines).
#include "engine/cpu/block_pool.h"
#include "engine/lowering.h"
#include "engine/native/native_kernels.h"
#include "engine/native/native_step.h"
#include "engine/onednn/pool.h"
#include "engine/threads.h"
#include "ops/attrs.h"
#include "ops/window_geometry.h"

namespace kiln::engine {

namespace {

using tag = dnnl::memory::format_tag;

// The pool's shape but for its block; nullopt for what the kernel does not take.
std::optional<cpu::BlockPoolShape> pool_shape(const Node& n, const GraphFacts& f) {
  if (!n.has_input(0) || f.dtype(n.inputs[0]) != DataType::kFloat) return std::nullopt;
  if (n.num_outputs() > 1 && n.outputs[1]) return std::nullopt;  // MaxPool's Indices
  const bool max = n.op_type == "MaxPool";
  if (max && attr_int(n, "storage_order", 0) != 0) return std::nullopt;
  const auto* x = f.dims(n.inputs[0]);
  if (!x || x->size() != 4) return std::nullopt;
  for (int64_t d : *x)
    if (d <= 0) return std::nullopt;
  const auto fit = nn::fit_window(n, {(*x)[2], (*x)[3]}, std::nullopt, true);
  if (!fit) return std::nullopt;
  const nn::Window& win = fit->window;
  const bool include_pad = !max && attr_int(n, "count_include_pad") != 0;
  for (int i = 0; i < 2; ++i) {
    if (win.d[i] != 1 || fit->out[i] <= 0 || win.pb[i] >= win.k[i]) return std::nullopt;
    // How far the last window reaches past the input: past the end pad (ceil_mode) the counts
    // of count_include_pad are another matter, left to oneDNN and the reference.
    const int64_t over = (fit->out[i] - 1) * win.s[i] + win.k[i] - (*x)[2 + i] - win.pb[i];
    if (over >= win.k[i] || (include_pad && over > win.pe[i])) return std::nullopt;
  }
  return cpu::BlockPoolShape{
      .batch = (*x)[0], .channels = (*x)[1], .h = (*x)[2], .w = (*x)[3], .out_h = fit->out[0],
      .out_w = fit->out[1], .kh = win.k[0], .kw = win.k[1], .stride_h = win.s[0], .stride_w = win.s[1],
      .pad_top = win.pb[0], .pad_left = win.pb[1], .max = max, .include_pad = include_pad};
}

class BlockPoolStep : public NativeStep {
 public:
  BlockPoolStep(const Node& n, cpu::BlockPoolShape s) : NativeStep(n, "cpu.pool"), shape_(s) {}
  using NativeStep::read;
  using NativeStep::write;
  void run(RunState& st) override { cpu::block_pool(shape_, in(st, 0).data<float>(), out(st, 0).data<float>()); }

 private:
  cpu::BlockPoolShape shape_;
};

bool match_pool(const Node& n, const MatchContext& ctx, Group&) { return pool_shape(n, ctx.facts).has_value(); }

// Whether kiln's pooling of these blocks runs at least as fast as oneDNN's (the order of
// preference: on AVX2 oneDNN's nChw8c pooling was 3.5x slower; on AVX-512 its nChw16c kernels
// may be as good), measured (engine/tuning.h).
bool measured_faster_than_onednn(const Node& n, const cpu::BlockPoolShape& s, const dnnl::memory::desc& made,
                                 int threads, Lowering& lw) {
  ThreadScope scope(threads);
  const std::string key =
      fmt::format("pool f32 cpu.pool|onednn.pool: {} {}x{}x{}x{} nChw{}c, {}x{} stride {}x{} pads {},{}, {} threads",
                  s.max ? "max" : s.include_pad ? "average with pads" : "average", s.batch, s.channels, s.h,
                  s.w, s.block, s.kh, s.kw, s.stride_h, s.stride_w, s.pad_top, s.pad_left, current_threads());
  const auto kiln_pool = [s] {
    auto x = std::make_shared<std::vector<float>>(static_cast<size_t>(s.batch * s.blocks() * s.block * s.h * s.w), 0.f);
    auto y = std::make_shared<std::vector<float>>(static_cast<size_t>(s.batch * s.blocks() * s.block * s.out_h * s.out_w));
    return std::function<void()>([s, x, y] { cpu::block_pool(s, x->data(), y->data()); });
  };
  const GraphFacts& f = lw.facts();
  return lw.tuner().choose(key, {{"cpu.pool", kiln_pool},
                                 {"onednn.pool", [&n, &f, made] { return timed_onednn_pool(n, f, made); }}}) == "cpu.pool";
}

bool build_pool(Group& g, Lowering& lw) {
  const Node& n = *g.anchor;
  cpu::BlockPoolShape s = *pool_shape(n, lw.facts());
  const auto made = lw.layout(n.inputs[0]);
  const std::vector<int64_t> x_dims = {s.batch, s.channels, s.h, s.w}, y_dims = {s.batch, s.channels, s.out_h, s.out_w};
  std::optional<tag> t;
  for (const auto& [block, blocked] : {std::pair{16, tag::nChw16c}, std::pair{8, tag::nChw8c}})
    if (made && *made == dnnl::memory::desc(x_dims, dnnl::memory::data_type::f32, blocked)) {
      s.block = block;
      t = blocked;
    }
  if (!t) return false;  // onednn.pool reads it as it is
  const int threads = threads_for_bytes(4.0 * static_cast<double>(s.batch * s.blocks() * s.block) *
                                        static_cast<double>(s.h * s.w + s.out_h * s.out_w));
  if (!measured_faster_than_onednn(n, s, *made, threads, lw)) return false;
  auto step = std::make_unique<BlockPoolStep>(n, s);
  step->threads = threads;
  step->read(lw.in_layout(n.inputs[0], *made), x_dims);
  step->write(lw.define(n.outputs[0], dnnl::memory::desc(y_dims, dnnl::memory::data_type::f32, *t)));
  lw.add(std::move(step));
  return true;
}

}  // namespace

constinit const KernelImpl kCpuPool{.name = "cpu.pool", .match = match_pool, .build = build_pool};

}  // namespace kiln::engine
