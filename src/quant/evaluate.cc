#include "quant/evaluate.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "runtime/compare.h"
#include "support/error.h"

namespace kiln::quant {

namespace {

// Agreeing argmax rows over the last axis, or nullopt when t is not a [N, C] / [C] score tensor.
std::optional<std::pair<int64_t, int64_t>> argmax_agreement(const Tensor& a, const Tensor& b) {
  if (a.rank() < 1 || a.rank() > 2 || a.dims().back() < 2) return std::nullopt;
  const int64_t c = a.dims().back(), rows = a.numel() / c;
  int64_t agree = 0;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t ia = 0, ib = 0;
    for (int64_t k = 1; k < c; ++k) {
      if (a.get_f64(r * c + k) > a.get_f64(r * c + ia)) ia = k;
      if (b.get_f64(r * c + k) > b.get_f64(r * c + ib)) ib = k;
    }
    agree += ia == ib;
  }
  return std::make_pair(agree, rows);
}

}  // namespace

std::vector<std::vector<int64_t>> feed_dims(const std::vector<RtValue>& feeds) {
  std::vector<std::vector<int64_t>> dims;
  for (const RtValue& v : feeds) dims.push_back(v.is_tensor() ? v.tensor.dims() : std::vector<int64_t>{});
  return dims;
}

PerShapeRunner::PerShapeRunner(Open open) : open_(std::move(open)), first_(open_()) {}

std::vector<RtValue> PerShapeRunner::run(const std::vector<RtValue>& feeds, RunObserver* observer) {
  const auto dims = feed_dims(feeds);
  if (first_dims_.empty()) first_dims_ = dims;
  if (dims == first_dims_) return first_->run(feeds, observer);
  auto& runner = others_[dims];
  if (!runner) runner = open_();
  return runner->run(feeds, observer);
}

double cosine_similarity(const Tensor& a, const Tensor& b) {
  double dot = 0, na = 0, nb = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.get_f64(i), y = b.get_f64(i);
    dot += x * y, na += x * x, nb += y * y;
  }
  if (na == 0 && nb == 0) return 1;
  if (na == 0 || nb == 0) return 0;
  return dot / std::sqrt(na * nb);
}

std::vector<OutputError> compare_models(engine::ModelRunner& reference,
                                        engine::ModelRunner& quantized,
                                        const std::vector<FeedSet>& sets) {
  std::vector<OutputError> out;
  for (const Value* v : reference.outputs()) out.push_back({.name = v->name});
  KILN_CHECK(quantized.outputs().size() == out.size(), ErrorKind::kInternal,
             "the quantized model has {} outputs, the float model {}", quantized.outputs().size(),
             out.size());
  std::vector<std::pair<int64_t, int64_t>> top1(out.size(), {0, 0});
  std::vector<bool> scores(out.size(), true);
  for (const FeedSet& feeds : sets) {
    const auto f = reference.run(feeds);
    const auto q = quantized.run(feeds);
    for (size_t i = 0; i < out.size(); ++i) {
      OutputError& e = out[i];
      if (!f[i].is_tensor() || !q[i].is_tensor() || !is_float(f[i].tensor.dtype())) {
        e.note = "not a float tensor";
        continue;
      }
      const Comparison c = compare_values(q[i], f[i], {.rtol = 0, .atol = 0});
      if (q[i].tensor.dims() != f[i].tensor.dims() || q[i].tensor.dtype() != f[i].tensor.dtype()) {
        e.note = c.reason;
        continue;
      }
      double fmax = 0;
      for (int64_t k = 0; k < f[i].tensor.numel(); ++k) fmax = std::max(fmax, std::fabs(f[i].tensor.get_f64(k)));
      e.compared = true;
      e.max_abs = std::max(e.max_abs, c.max_abs_error);
      e.max_rel = std::max(e.max_rel, fmax > 0 ? c.max_abs_error / fmax : c.max_abs_error);
      e.cosine = std::min(e.cosine, cosine_similarity(q[i].tensor, f[i].tensor));
      if (auto a = argmax_agreement(q[i].tensor, f[i].tensor)) {
        top1[i].first += a->first;
        top1[i].second += a->second;
      } else {
        scores[i] = false;
      }
    }
  }
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i].compared && scores[i] && top1[i].second > 0)
      out[i].top1_agreement = static_cast<double>(top1[i].first) / top1[i].second;
  return out;
}

std::pair<double, double> median_latencies_ms(engine::ModelRunner& a, engine::ModelRunner& b,
                                              const FeedSet& feeds, int runs) {
  a.run(feeds);
  b.run(feeds);
  std::vector<double> ms[2];
  auto time = [&](engine::ModelRunner& r, std::vector<double>& out) {
    const auto t0 = std::chrono::steady_clock::now();
    r.run(feeds);
    out.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  };
  for (int i = 0; i < std::max(runs, 1); ++i) {
    time(a, ms[0]);
    time(b, ms[1]);
  }
  for (auto& m : ms) std::sort(m.begin(), m.end());
  return {ms[0][ms[0].size() / 2], ms[1][ms[1].size() / 2]};
}

}  // namespace kiln::quant
