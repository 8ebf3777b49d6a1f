// Random ops: RandomNormal, RandomUniform, RandomNormalLike, RandomUniformLike, Bernoulli,
// Multinomial. All nondeterministic (never folded); a `seed` attribute makes one node repeatable.
#include <cmath>
#include <cstring>
#include <random>

#include "ops/kernel_util.h"
#include "support/error.h"

namespace kiln {

namespace {

std::mt19937_64 make_rng(const Node& n) {
  if (auto s = attr_float_opt(n, "seed")) {
    uint64_t bits = 0;
    const float f = *s;
    std::memcpy(&bits, &f, sizeof(f));
    return std::mt19937_64(bits);
  }
  std::random_device rd;
  return std::mt19937_64((static_cast<uint64_t>(rd()) << 32) ^ rd());
}

DataType attr_dtype(const Node& n, DataType dflt) {
  const int64_t v = attr_int(n, "dtype", static_cast<int64_t>(dflt));
  KILN_CHECK(is_valid_dtype(static_cast<int32_t>(v)) && v != 0, ErrorKind::kBadModel,
             "{}invalid dtype {}", n.where(), v);
  return static_cast<DataType>(v);
}

void check_float_out(const Node& n, DataType t) {
  KILN_CHECK(t == DataType::kFloat || t == DataType::kDouble || t == DataType::kFloat16 ||
                 t == DataType::kBFloat16,
             ErrorKind::kBadModel, "{}dtype {} is not a float type", n.where(), dtype_name(t));
}

// Fills a float tensor with draws of dist.
template <typename Dist>
Tensor draw(const Node& n, DataType dt, const std::vector<int64_t>& dims, Dist dist) {
  check_float_out(n, dt);
  Tensor out(dt, dims);
  auto rng = make_rng(n);
  for (int64_t i = 0; i < out.numel(); ++i) out.set_f64(i, dist(rng));
  return out;
}

void run_random(KernelContext& ctx, bool normal, bool like) {
  const Node& n = ctx.node();
  std::vector<int64_t> dims;
  DataType dt;
  if (like) {
    const Tensor& x = ctx.input(0);
    dims = x.dims();
    dt = attr_dtype(n, x.dtype());
  } else {
    dims = attr_ints(n, "shape");
    dt = attr_dtype(n, DataType::kFloat);
  }
  if (normal) {
    const double mean = attr_float(n, "mean", 0.0f), scale = attr_float(n, "scale", 1.0f);
    ctx.set_output(0, draw(n, dt, dims, std::normal_distribution<double>(mean, scale)));
  } else {
    const double lo = attr_float(n, "low", 0.0f), hi = attr_float(n, "high", 1.0f);
    if (!(lo <= hi)) ctx.fail_here("low must not exceed high");
    ctx.set_output(0, draw(n, dt, dims, std::uniform_real_distribution<double>(lo, hi)));
  }
}

void infer_random(InferContext& ctx, bool like) {
  const Node& n = ctx.node();
  if (like) {
    const DataType dt = attr_dtype(n, ctx.input_dtype(0));
    check_float_out(n, dt);
    ctx.set_output(0, dt, ctx.input_shape(0));
    return;
  }
  const Attribute* a = n.attr("shape");
  if (!a) ctx.fail_here("attribute 'shape' is required");
  const DataType dt = attr_dtype(n, DataType::kFloat);
  check_float_out(n, dt);
  ctx.set_output(0, dt, shape_of(a->ints));
}

// Bernoulli(p): 1 with probability p.
void run_bernoulli(KernelContext& ctx) {
  const Tensor& p = ctx.input(0);
  const DataType dt = attr_dtype(ctx.node(), p.dtype());
  Tensor out(dt, p.dims());
  auto rng = make_rng(ctx.node());
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int64_t i = 0; i < p.numel(); ++i) {
    const double prob = p.get_f64(i);
    if (!(prob >= 0 && prob <= 1))
      ctx.fail_here(fmt::format("probability {} outside [0, 1]", prob));
    const bool one = u(rng) < prob;
    if (dt == DataType::kBool)
      out.data<bool>()[i] = one;
    else
      out.set_f64(i, one ? 1.0 : 0.0);
  }
  ctx.set_output(0, std::move(out));
}

// Multinomial(input [batch, classes] of unnormalized log-probabilities) -> [batch, sample_size].
void run_multinomial(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() != 2) ctx.fail_here("input must be [batch_size, class_size]");
  const int64_t B = x.dim(0), C = x.dim(1);
  const int64_t samples = attr_int(ctx.node(), "sample_size", 1);
  if (samples < 0) ctx.fail_here("sample_size must be non-negative");
  const DataType dt = attr_dtype(ctx.node(), DataType::kInt32);
  if (dt != DataType::kInt32 && dt != DataType::kInt64)
    ctx.fail_here("dtype must be int32 or int64");
  if (C == 0 && samples > 0) ctx.fail_here("no classes to sample from");
  Tensor out(dt, {B, samples});
  auto rng = make_rng(ctx.node());
  std::vector<double> w(C);
  for (int64_t b = 0; b < B; ++b) {
    double mx = -INFINITY;
    for (int64_t c = 0; c < C; ++c) mx = std::max(mx, x.get_f64(b * C + c));
    for (int64_t c = 0; c < C; ++c) w[c] = std::exp(x.get_f64(b * C + c) - mx);
    std::discrete_distribution<int64_t> dist(w.begin(), w.end());
    for (int64_t s = 0; s < samples; ++s)
      out.set_f64(b * samples + s, static_cast<double>(dist(rng)));
  }
  ctx.set_output(0, std::move(out));
}

}  // namespace

void register_misc_random_ops(OpRegistry& r) {
  for (bool normal : {true, false}) {
    const char* base = normal ? "RandomNormal" : "RandomUniform";
    auto& s = r.add("", base)
                  .versions(1)
                  .inputs(0, 0)
                  .attr("dtype", AttrKind::kInt)
                  .attr("seed", AttrKind::kFloat)
                  .attr("shape", AttrKind::kInts, true)
                  .shape([](InferContext& c) { infer_random(c, false); })
                  .run([normal](KernelContext& c) { run_random(c, normal, false); })
                  .nondeterministic();
    auto& l = r.add("", std::string(base) + "Like")
                  .versions(1)
                  .inputs(1, 1)
                  .attr("dtype", AttrKind::kInt)
                  .attr("seed", AttrKind::kFloat)
                  .shape([](InferContext& c) { infer_random(c, true); })
                  .run([normal](KernelContext& c) { run_random(c, normal, true); })
                  .nondeterministic();
    for (OpSchema* x : {&s, &l}) {
      if (normal)
        x->attr("mean", AttrKind::kFloat).attr("scale", AttrKind::kFloat);
      else
        x->attr("high", AttrKind::kFloat).attr("low", AttrKind::kFloat);
    }
  }
  r.add("", "Bernoulli")
      .versions(15)
      .inputs(1, 1)
      .attr("dtype", AttrKind::kInt)
      .attr("seed", AttrKind::kFloat)
      .shape([](InferContext& c) {
        c.set_output(0, attr_dtype(c.node(), c.input_dtype(0)), c.input_shape(0));
      })
      .run(run_bernoulli)
      .nondeterministic();
  r.add("", "Multinomial")
      .versions(7)
      .inputs(1, 1)
      .attr("dtype", AttrKind::kInt)
      .attr("sample_size", AttrKind::kInt)
      .attr("seed", AttrKind::kFloat)
      .shape([](InferContext& c) {
        const auto& s = c.input_shape(0);
        const Dim batch = s && s->size() == 2 ? (*s)[0] : Dim();
        c.set_output(0, attr_dtype(c.node(), DataType::kInt32),
                     Shape{batch, Dim(attr_int(c.node(), "sample_size", 1))});
      })
      .run(run_multinomial)
      .nondeterministic();
}

}  // namespace kiln
