// Signal processing: HannWindow, HammingWindow, BlackmanWindow, DFT, STFT, MelWeightMatrix.
// Transforms are direct DFTs in double with exact twiddle tables (index k*t mod n).
#include <cmath>
#include <numbers>

#include "ops/kernel_util.h"
#include "support/error.h"

namespace kiln {

namespace {

constexpr double kPi = std::numbers::pi;

int64_t scalar_int(const KernelContext& ctx, int i, const char* what) {
  const Tensor& t = ctx.input(i);
  if (t.numel() != 1) ctx.fail_here(fmt::format("{} must be a scalar", what));
  return t.get_i64(0);
}

std::optional<int64_t> const_scalar(const InferContext& ctx, int i) {
  if (!ctx.has_input(i)) return std::nullopt;
  if (auto v = ctx.input_dims_value(i); v && v->size() == 1 && (*v)[0].is_known())
    return (*v)[0].value();
  if (const Tensor* c = ctx.input_constant(i); c && c->numel() == 1 && is_integer(c->dtype()))
    return c->get_i64(0);
  return std::nullopt;
}

DataType output_datatype(const Node& n, DataType dflt = DataType::kFloat) {
  const int64_t v = attr_int(n, "output_datatype", static_cast<int64_t>(dflt));
  KILN_CHECK(is_valid_dtype(static_cast<int32_t>(v)) && v != 0, ErrorKind::kBadModel,
             "{}invalid output_datatype {}", n.where(), v);
  return static_cast<DataType>(v);
}

// ---------------------------------------------------------------------------------------------
// Windows: w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N = size (periodic) or size - 1.

void infer_window(InferContext& ctx) {
  Dim d;
  if (auto v = ctx.input_dims_value(0); v && v->size() == 1)
    d = (*v)[0];
  else if (auto c = const_scalar(ctx, 0))
    d = *c;
  ctx.set_output(0, output_datatype(ctx.node()), Shape{d});
}

void run_window(KernelContext& ctx, double a0, double a1, double a2) {
  const int64_t size = scalar_int(ctx, 0, "size");
  if (size < 0) ctx.fail_here(fmt::format("window size {} is negative", size));
  const bool periodic = attr_int(ctx.node(), "periodic", 1) != 0;
  const double N = static_cast<double>(periodic ? size : size - 1);
  Tensor out(output_datatype(ctx.node()), {size});
  for (int64_t i = 0; i < size; ++i) {
    const double x = N > 0 ? 2 * kPi * static_cast<double>(i) / N : 0;
    out.set_f64(i, a0 - a1 * std::cos(x) + a2 * std::cos(2 * x));
  }
  ctx.set_output(0, std::move(out));
}

// ---------------------------------------------------------------------------------------------
// DFT helpers

struct Twiddles {
  std::vector<double> c, s;  // cos/sin(2 pi j / n)
  explicit Twiddles(int64_t n) : c(n), s(n) {
    for (int64_t j = 0; j < n; ++j) {
      const double a = 2 * kPi * static_cast<double>(j) / static_cast<double>(n);
      c[j] = std::cos(a);
      s[j] = std::sin(a);
    }
  }
};

// In-place radix-2 FFT of a power-of-two length: a[k] = sum_t a[t] e^{sign 2 pi i k t / n}.
void fft_pow2(std::vector<std::complex<double>>& a, int sign, const Twiddles& tw) {
  const int64_t n = static_cast<int64_t>(a.size());
  for (int64_t i = 1, j = 0; i < n; ++i) {  // bit-reversal permutation
    int64_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  for (int64_t len = 2; len <= n; len <<= 1) {
    const int64_t step = n / len, half = len / 2;
    for (int64_t i = 0; i < n; i += len)
      for (int64_t k = 0; k < half; ++k) {
        const std::complex<double> w(tw.c[k * step], sign * tw.s[k * step]);
        const std::complex<double> u = a[i + k], v = a[i + k + half] * w;
        a[i + k] = u + v;
        a[i + k + half] = u - v;
      }
  }
}

// out[k] = sum_t in[t] e^{sign 2 pi i k t / n}, t < in_len (<= n), k < out_len.
// Power-of-two lengths use the FFT, others a direct sum.
void dft_1d(const std::vector<std::complex<double>>& in, int64_t n, int64_t out_len, int sign,
            const Twiddles& tw, std::vector<std::complex<double>>& out) {
  if (n >= 2 && (n & (n - 1)) == 0) {
    out.assign(n, {0, 0});
    std::copy_n(in.begin(), std::min<int64_t>(static_cast<int64_t>(in.size()), n), out.begin());
    fft_pow2(out, sign, tw);
    out.resize(out_len);
    return;
  }
  out.assign(out_len, {0, 0});
  const int64_t len = std::min<int64_t>(static_cast<int64_t>(in.size()), n);
  for (int64_t k = 0; k < out_len; ++k) {
    double re = 0, im = 0;
    int64_t j = 0;  // k*t mod n
    for (int64_t t = 0; t < len; ++t) {
      const double c = tw.c[j], s = sign * tw.s[j];
      re += in[t].real() * c - in[t].imag() * s;
      im += in[t].real() * s + in[t].imag() * c;
      j += k;
      if (j >= n) j %= n;
    }
    out[k] = {re, im};
  }
}

struct DftParams {
  int axis = 1;
  bool inverse = false, onesided = false;
};

DftParams dft_params(const Node& n, int opset, int rank, std::optional<int64_t> axis_input) {
  DftParams p;
  p.inverse = attr_int(n, "inverse", 0) != 0;
  p.onesided = attr_int(n, "onesided", 0) != 0;
  int64_t axis = opset >= 20 ? axis_input.value_or(-2) : attr_int(n, "axis", 1);
  KILN_CHECK(rank >= 2, ErrorKind::kBadModel, "{}input must have rank >= 2", n.where());
  if (axis < 0) axis += rank;
  KILN_CHECK(axis >= 0 && axis < rank - 1, ErrorKind::kBadModel,
             "{}axis out of range for rank {} (the last axis holds real/imaginary parts)",
             n.where(), rank);
  p.axis = static_cast<int>(axis);
  return p;
}

void infer_dft(InferContext& ctx) {
  const auto& s = ctx.input_shape(0);
  const DataType dt = ctx.input_dtype(0);
  if (!s) {
    ctx.set_output(0, dt, std::nullopt);
    return;
  }
  const int rank = static_cast<int>(s->size());
  std::optional<int64_t> axis_in;
  if (ctx.opset() >= 20 && ctx.has_input(2)) {
    axis_in = const_scalar(ctx, 2);
    if (!axis_in) {
      Shape out(rank, Dim());
      ctx.set_output(0, dt, out);
      return;
    }
  }
  const DftParams p = dft_params(ctx.node(), ctx.opset(), rank, axis_in);
  Shape out = *s;
  Dim n;
  if (ctx.has_input(1)) {
    if (auto v = const_scalar(ctx, 1)) n = *v;
  } else if (p.inverse && p.onesided) {
    n = (*s)[p.axis].is_known() ? Dim(2 * ((*s)[p.axis].value() - 1)) : Dim();
  } else {
    n = (*s)[p.axis];
  }
  if (!p.inverse && p.onesided)
    out[p.axis] = n.is_known() ? Dim(n.value() / 2 + 1) : Dim();
  else
    out[p.axis] = n;
  out[rank - 1] = p.inverse && p.onesided ? 1 : 2;
  ctx.set_output(0, dt, out);
}

void run_dft(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int rank = x.rank();
  if (rank < 2) ctx.fail_here("input must have rank >= 2");
  const int64_t comps = x.dim(rank - 1);
  if (comps != 1 && comps != 2) ctx.fail_here("the last axis must be 1 (real) or 2 (complex)");
  std::optional<int64_t> axis_in;
  if (ctx.opset() >= 20 && ctx.has_input(2)) axis_in = scalar_int(ctx, 2, "axis");
  const DftParams p = dft_params(ctx.node(), ctx.opset(), rank, axis_in);
  const int64_t len = x.dim(p.axis);
  int64_t n = p.inverse && p.onesided ? 2 * (len - 1) : len;
  if (ctx.has_input(1)) n = scalar_int(ctx, 1, "dft_length");
  if (n <= 0) ctx.fail_here(fmt::format("dft_length {} must be positive", n));
  const int64_t out_len = (!p.inverse && p.onesided) ? n / 2 + 1 : n;
  const bool real_out = p.inverse && p.onesided;
  std::vector<int64_t> od = x.dims();
  od[p.axis] = out_len;
  od[rank - 1] = real_out ? 1 : 2;
  Tensor out(x.dtype(), od);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < p.axis; ++d) outer *= x.dim(d);
  for (int d = p.axis + 1; d < rank - 1; ++d) inner *= x.dim(d);
  if (outer * inner == 0) {
    ctx.set_output(0, std::move(out));
    return;
  }
  if (n > allocation_cap() / 32) ctx.fail_here(fmt::format("dft_length {} is too large", n));
  const Twiddles tw(n);
  std::vector<std::complex<double>> sig, res;
  visit<KILN_FLOAT_TYPES>(ctx.node(), x.dtype(), [&]<typename T>() {
    const T* px = x.data<T>();
    T* po = out.data<T>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        auto at = [&](int64_t t) { return ((o * len + t) * inner + i) * comps; };
        if (real_out) {
          // Hermitian reconstruction of the n-point spectrum from its first half.
          sig.assign(n, {0, 0});
          for (int64_t k = 0; k <= n / 2; ++k) {
            if (k >= len) break;
            const double re = static_cast<double>(px[at(k)]);
            const double im = comps == 2 ? static_cast<double>(px[at(k) + 1]) : 0.0;
            sig[k] = {re, im};
            if (k > 0 && n - k != k) sig[n - k] = {re, -im};
          }
        } else {
          sig.resize(std::min(len, n));
          for (int64_t t = 0; t < static_cast<int64_t>(sig.size()); ++t)
            sig[t] = {static_cast<double>(px[at(t)]),
                      comps == 2 ? static_cast<double>(px[at(t) + 1]) : 0.0};
        }
        dft_1d(sig, n, out_len, p.inverse ? 1 : -1, tw, res);
        const double scale = p.inverse ? 1.0 / static_cast<double>(n) : 1.0;
        const int64_t oc = real_out ? 1 : 2;
        for (int64_t k = 0; k < out_len; ++k) {
          const int64_t off = ((o * out_len + k) * inner + i) * oc;
          po[off] = T(static_cast<compute_t<T>>(res[k].real() * scale));
          if (!real_out) po[off + 1] = T(static_cast<compute_t<T>>(res[k].imag() * scale));
        }
      }
    }
  });
  ctx.set_output(0, std::move(out));
}

// ---------------------------------------------------------------------------------------------
// STFT(signal [B, L, 1|2], frame_step, window? [W], frame_length?) -> [B, frames, bins, 2]

void infer_stft(InferContext& ctx) {
  const auto& s = ctx.input_shape(0);
  const bool onesided = attr_int(ctx.node(), "onesided", 1) != 0;
  Dim batch, frames, bins;
  std::optional<int64_t> fl = const_scalar(ctx, 3);
  if (!fl && ctx.has_input(2) && ctx.input_shape(2) && ctx.input_shape(2)->size() == 1 &&
      (*ctx.input_shape(2))[0].is_known())
    fl = (*ctx.input_shape(2))[0].value();
  const auto step = const_scalar(ctx, 1);
  if (s) {
    if (s->size() != 3) ctx.fail_here("signal must have rank 3");
    batch = (*s)[0];
    if (fl && step && *step > 0 && (*s)[1].is_known()) frames = ((*s)[1].value() - *fl) / *step + 1;
  }
  if (fl) bins = onesided ? *fl / 2 + 1 : *fl;
  ctx.set_output(0, ctx.input_dtype(0), Shape{batch, frames, bins, 2});
}

void run_stft(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() != 3 || (x.dim(2) != 1 && x.dim(2) != 2))
    ctx.fail_here(
        fmt::format("signal must be [batch, length, 1 or 2], got {}", dims_to_string(x.dims())));
  const int64_t B = x.dim(0), L = x.dim(1), comps = x.dim(2);
  const int64_t step = scalar_int(ctx, 1, "frame_step");
  if (step <= 0) ctx.fail_here(fmt::format("frame_step {} must be positive", step));
  int64_t fl = -1;
  std::vector<double> window;
  if (ctx.has_input(2)) {
    const Tensor& w = ctx.input(2);
    if (w.rank() != 1) ctx.fail_here("window must be 1-D");
    fl = w.dim(0);
    for (int64_t i = 0; i < fl; ++i) window.push_back(w.get_f64(i));
  }
  if (ctx.has_input(3)) {
    const int64_t f = scalar_int(ctx, 3, "frame_length");
    if (fl >= 0 && f != fl)
      ctx.fail_here(fmt::format("frame_length {} differs from the window length {}", f, fl));
    fl = f;
  }
  if (fl <= 0) ctx.fail_here("STFT needs a window or a positive frame_length");
  if (window.empty()) window.assign(fl, 1.0);
  if (fl > L) ctx.fail_here(fmt::format("frame_length {} exceeds the signal length {}", fl, L));
  const bool onesided = attr_int(ctx.node(), "onesided", 1) != 0;
  if (onesided && comps == 2) ctx.fail_here("onesided output needs a real signal");
  const int64_t frames = (L - fl) / step + 1;
  const int64_t bins = onesided ? fl / 2 + 1 : fl;
  Tensor out(x.dtype(), {B, frames, bins, 2});
  const Twiddles tw(fl);
  std::vector<std::complex<double>> sig(fl), res;
  visit<KILN_FLOAT_TYPES>(ctx.node(), x.dtype(), [&]<typename T>() {
    const T* px = x.data<T>();
    T* po = out.data<T>();
    for (int64_t b = 0; b < B; ++b)
      for (int64_t f = 0; f < frames; ++f) {
        for (int64_t t = 0; t < fl; ++t) {
          const int64_t off = (b * L + f * step + t) * comps;
          sig[t] = {static_cast<double>(px[off]) * window[t],
                    comps == 2 ? static_cast<double>(px[off + 1]) * window[t] : 0.0};
        }
        dft_1d(sig, fl, bins, -1, tw, res);
        for (int64_t k = 0; k < bins; ++k) {
          const int64_t off = ((b * frames + f) * bins + k) * 2;
          po[off] = T(static_cast<compute_t<T>>(res[k].real()));
          po[off + 1] = T(static_cast<compute_t<T>>(res[k].imag()));
        }
      }
  });
  ctx.set_output(0, std::move(out));
}

// ---------------------------------------------------------------------------------------------
// MelWeightMatrix(num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz)
//   -> [dft_length / 2 + 1, num_mel_bins], triangles of peak 1 on the mel scale.

void infer_mel(InferContext& ctx) {
  Dim rows, cols;
  if (auto v = const_scalar(ctx, 1)) rows = *v / 2 + 1;
  if (auto v = const_scalar(ctx, 0)) cols = *v;
  ctx.set_output(0, output_datatype(ctx.node()), Shape{rows, cols});
}

void run_mel(KernelContext& ctx) {
  const int64_t mel_bins = scalar_int(ctx, 0, "num_mel_bins");
  const int64_t dft_length = scalar_int(ctx, 1, "dft_length");
  const int64_t sample_rate = scalar_int(ctx, 2, "sample_rate");
  if (ctx.input(3).numel() != 1 || ctx.input(4).numel() != 1)
    ctx.fail_here("lower_edge_hertz and upper_edge_hertz must be scalars");
  const double lo = ctx.input(3).get_f64(0), hi = ctx.input(4).get_f64(0);
  if (mel_bins <= 0 || dft_length <= 0 || sample_rate <= 0)
    ctx.fail_here("num_mel_bins, dft_length and sample_rate must be positive");
  if (lo < 0 || hi < lo) ctx.fail_here("need 0 <= lower_edge_hertz <= upper_edge_hertz");
  const int64_t spec_bins = dft_length / 2 + 1;
  auto to_mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
  const double mlo = to_mel(lo), mhi = to_mel(hi);
  const double step = (mhi - mlo) / static_cast<double>(mel_bins + 2);
  Tensor out(output_datatype(ctx.node()), {spec_bins, mel_bins});  // checks the size first
  std::vector<int64_t> edge(mel_bins + 2);
  for (int64_t i = 0; i < mel_bins + 2; ++i) {
    const double hz =
        700.0 * (std::pow(10.0, (static_cast<double>(i) * step + mlo) / 2595.0) - 1.0);
    edge[i] = static_cast<int64_t>(
        std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate)));
  }
  auto set = [&](int64_t row, int64_t col, double v) {
    if (row >= 0 && row < spec_bins) out.set_f64(row * mel_bins + col, v);
  };
  for (int64_t i = 0; i < mel_bins; ++i) {
    const int64_t l = edge[i], c = edge[i + 1], h = edge[i + 2];
    if (c == l) {
      set(c, i, 1.0);
    } else {
      for (int64_t j = l; j <= c; ++j)
        set(j, i, static_cast<double>(j - l) / static_cast<double>(c - l));
    }
    if (h > c)
      for (int64_t j = c; j < h; ++j)
        set(j, i, static_cast<double>(h - j) / static_cast<double>(h - c));
  }
  ctx.set_output(0, std::move(out));
}

}  // namespace

void register_misc_signal_ops(OpRegistry& r) {
  auto window = [&](const char* name, double a0, double a1, double a2) {
    r.add("", name)
        .versions(17)
        .inputs(1, 1)
        .attr("output_datatype", AttrKind::kInt)
        .attr("periodic", AttrKind::kInt)
        .shape(infer_window)
        .run([a0, a1, a2](KernelContext& c) { run_window(c, a0, a1, a2); });
  };
  window("HannWindow", 0.5, 0.5, 0.0);
  window("HammingWindow", 25.0 / 46.0, 21.0 / 46.0, 0.0);
  window("BlackmanWindow", 0.42, 0.5, 0.08);
  r.add("", "DFT")
      .versions(17)
      .inputs(1, 3)
      .attr("axis", AttrKind::kInt)  // opsets 17-19; an input from 20
      .attr("inverse", AttrKind::kInt)
      .attr("onesided", AttrKind::kInt)
      .shape(infer_dft)
      .run(run_dft);
  r.add("", "STFT")
      .versions(17)
      .inputs(2, 4)
      .attr("onesided", AttrKind::kInt)
      .shape(infer_stft)
      .run(run_stft);
  r.add("", "MelWeightMatrix")
      .versions(17)
      .inputs(5, 5)
      .attr("output_datatype", AttrKind::kInt)
      .shape(infer_mel)
      .run(run_mel);
}

}  // namespace kiln
