#include "quant/calibrate.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <set>

#include <fmt/format.h>

#include "engine/compiled_model.h"
#include "opt/graph_edit.h"
#include "quant/evaluate.h"
#include "quant/quantize.h"
#include "runtime/session.h"
#include "support/error.h"

namespace kiln::quant {

namespace {

constexpr int kBins = 2048;

// Where each calibrated tensor is found in a run: a feed (graph input) or an output.
struct Source {
  bool is_feed = false;
  size_t index = 0;
};

const Tensor& float_tensor(const RtValue& v, const std::string& name) {
  KILN_CHECK(v.is_tensor() && v.tensor.dtype() == DataType::kFloat, ErrorKind::kUnsupported,
             "calibrating '{}': a float tensor was expected, the run gave {}", name, v.describe());
  return v.tensor;
}

const Tensor& tensor_of(const Source& s, const FeedSet& feeds, const std::vector<RtValue>& outs,
                        const std::string& name) {
  return float_tensor(s.is_feed ? feeds[s.index] : outs[s.index], name);
}

}  // namespace

void Histogram::add(const float* x, int64_t n) {
  if (counts.empty()) counts.assign(kBins, 0);
  const double width = (static_cast<double>(hi) - lo) / kBins;
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i];
    if (!std::isfinite(v)) continue;
    if (lo >= 0) v = std::fabs(v);
    const int64_t b = width > 0 ? static_cast<int64_t>((v - lo) / width) : 0;
    ++counts[std::clamp<int64_t>(b, 0, kBins - 1)];
  }
}

Range percentile_range(const Histogram& h, double percentile) {
  int64_t total = 0;
  for (int64_t c : h.counts) total += c;
  if (total == 0) return {h.lo, h.hi};
  const double tail = (100.0 - percentile) / 100.0 / (h.lo >= 0 ? 1 : 2);
  const double width = (static_cast<double>(h.hi) - h.lo) / h.counts.size();
  int64_t acc = 0;
  size_t left = 0, right = h.counts.size() - 1;
  for (size_t b = 0; b < h.counts.size(); ++b) {
    acc += h.counts[b];
    if (acc >= tail * total) { left = b; break; }
  }
  acc = 0;
  for (size_t b = h.counts.size(); b-- > 0;) {
    acc += h.counts[b];
    if (acc >= tail * total) { right = b; break; }
  }
  return {h.lo >= 0 ? h.lo : static_cast<float>(h.lo + width * left),
          static_cast<float>(h.lo + width * (right + 1))};
}

float entropy_threshold(const Histogram& h) {
  const int n = static_cast<int>(h.counts.size());
  constexpr int kLevels = 128;
  const double width = (static_cast<double>(h.hi) - h.lo) / n;
  double best_kl = INFINITY;
  int best = n;
  std::vector<double> p, q;
  for (int i = kLevels; i <= n; ++i) {
    p.assign(h.counts.begin(), h.counts.begin() + i);
    for (int j = i; j < n; ++j) p[i - 1] += h.counts[j];  // outliers clipped into the last bin
    // Q: P merged into kLevels levels, each spread back over its nonzero bins.
    q.assign(i, 0);
    for (int l = 0; l < kLevels; ++l) {
      const int b0 = l * i / kLevels, b1 = (l + 1) * i / kLevels;
      double sum = 0;
      int nonzero = 0;
      for (int b = b0; b < b1; ++b) {
        sum += h.counts[b];
        nonzero += h.counts[b] != 0;
      }
      for (int b = b0; b < b1; ++b)
        if (h.counts[b] != 0) q[b] = sum / nonzero;
    }
    double ps = 0, qs = 0;
    for (int b = 0; b < i; ++b) ps += p[b], qs += q[b];
    if (ps <= 0 || qs <= 0) continue;
    double kl = 0;
    for (int b = 0; b < i; ++b) {
      if (p[b] <= 0) continue;
      const double pb = p[b] / ps, qb = q[b] > 0 ? q[b] / qs : 1e-12;
      kl += pb * std::log(pb / qb);
    }
    if (kl < best_kl) best_kl = kl, best = i;
  }
  return static_cast<float>(h.lo + width * (best + 0.5));
}

ProgressBar::ProgressBar(std::string label, int64_t total, bool enabled)
    : label_(std::move(label)), total_(total), enabled_(enabled && total > 0) {
  draw();
}

void ProgressBar::step() {
  ++done_;
  draw();
}

void ProgressBar::draw() const {
  if (!enabled_) return;
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(kWidth * done_ / std::max<int64_t>(total_, 1));
  std::cerr << fmt::format("\r{} [{}{}] {}/{}", label_, std::string(filled, '#'),
                           std::string(kWidth - filled, '.'), done_, total_)
            << std::flush;
}

ProgressBar::~ProgressBar() {
  if (enabled_) std::cerr << "\n";
}

namespace {

using Visit = std::function<void(const std::string&, const Tensor&)>;
// Runs set i and shows `visit` every calibrated tensor's value in it.
using RunSet = std::function<void(size_t, const Visit&)>;

// The values a run gives a subgraph's nodes, as the interpreter reports them node by node.
class TensorTap final : public RunObserver {
 public:
  TensorTap(const std::set<std::string>& wanted, const Visit& visit) : wanted_(wanted), visit_(visit) {}
  void on_node(const NodeEvent& e) override {
    for (size_t i = 0; i < e.outputs.size() && i < e.node->outputs.size(); ++i) {
      const Value* v = e.node->outputs[i];
      if (v && wanted_.contains(v->name) && !e.outputs[i].is_none())
        visit_(v->name, float_tensor(e.outputs[i], v->name));
    }
  }

 private:
  const std::set<std::string>& wanted_;
  const Visit& visit_;
};

}  // namespace

std::map<std::string, Range> calibrate(Model model, const std::vector<std::string>& tensors,
                                       const std::vector<FeedSet>& sets,
                                       const std::vector<std::string>& set_names,
                                       const CalibrationOptions& opts) {
  KILN_CHECK(!sets.empty(), ErrorKind::kBadInput, "no calibration sets");
  Graph& g = *model.graph;
  std::vector<const Value*> feeds_of;  // the graph inputs a caller feeds, in order
  for (const Value* v : g.inputs)
    if (!v->is_constant()) feeds_of.push_back(v);
  const bool in_subgraphs = std::any_of(tensors.begin(), tensors.end(),
                                        [&](const std::string& t) { return !g.find(t); });
  auto context = [&](size_t i) {
    return fmt::format("calibration set {}: ", i < set_names.size() ? set_names[i] : fmt::format("#{}", i));
  };
  const std::set<std::string> wanted(tensors.begin(), tensors.end());
  std::map<std::vector<std::vector<int64_t>>, std::unique_ptr<engine::CompiledModel>> engines;
  std::unique_ptr<Session> session;
  std::map<std::string, Source> where;
  RunSet run_set;
  if (in_subgraphs) {
    // Tensors inside If/Loop bodies: the interpreter reports every node's values (slower; the
    // fast engine's fused groups would hide some).
    session = std::make_unique<Session>(std::move(model));
    run_set = [&](size_t i, const Visit& visit) {
      with_context(context(i), [&] { check_feeds(session->inputs(), sets[i]); });
      for (size_t k = 0; k < session->inputs().size() && k < sets[i].size(); ++k)
        if (wanted.contains(session->inputs()[k]->name))
          visit(session->inputs()[k]->name, float_tensor(sets[i][k], session->inputs()[k]->name));
      TensorTap tap(wanted, visit);
      with_context(context(i), [&] { session->run(sets[i], &tap); });
    };
  } else {
    for (const std::string& name : tensors) {
      Value* v = g.find(name);
      auto in = std::find(feeds_of.begin(), feeds_of.end(), v);
      if (in != feeds_of.end()) {
        where[name] = {true, static_cast<size_t>(in - feeds_of.begin())};
        continue;
      }
      auto out = std::find(g.outputs.begin(), g.outputs.end(), v);
      if (out == g.outputs.end()) {
        g.outputs.push_back(v);
        out = g.outputs.end() - 1;
      }
      where[name] = {false, static_cast<size_t>(out - g.outputs.begin())};
    }
    // One engine per set of input dims (evaluate.h's PerShapeRunner says why).
    run_set = [&](size_t i, const Visit& visit) {
      const auto outs = with_context(context(i), [&] {
        auto& engine = engines[feed_dims(sets[i])];
        if (!engine)
          engine = std::make_unique<engine::CompiledModel>(
              clone_model(model), engine::EngineOptions{.threads = opts.threads});
        check_feeds(engine->inputs(), sets[i]);
        return engine->run(sets[i]);
      });
      for (const std::string& t : tensors) visit(t, tensor_of(where[t], sets[i], outs, t));
    };
  }
  std::map<std::string, Range> ranges;
  std::set<std::string> seen;
  for (const std::string& t : tensors) ranges[t] = {INFINITY, -INFINITY};
  {
    ProgressBar bar(fmt::format("calibrating ({} sets)", sets.size()), sets.size(), opts.progress);
    const Visit minmax = [&](const std::string& t, const Tensor& x) {
      seen.insert(t);
      Range& r = ranges[t];
      const float* d = x.data<float>();
      for (int64_t k = 0; k < x.numel(); ++k)
        if (std::isfinite(d[k])) r.min = std::min(r.min, d[k]), r.max = std::max(r.max, d[k]);
    };
    for (size_t i = 0; i < sets.size(); ++i) {
      run_set(i, minmax);
      bar.step();
    }
  }
  // A tensor no set reached (a branch the sets never take) gets no range; one with no finite value
  // the range [0, 0].
  for (auto it = ranges.begin(); it != ranges.end();) {
    if (!seen.contains(it->first)) {
      it = ranges.erase(it);
      continue;
    }
    if (it->second.min > it->second.max) it->second = {0, 0};
    ++it;
  }
  if (opts.method == RangeMethod::kMinMax) return ranges;

  // Histograms need the full range first: a second pass.
  std::map<std::string, Histogram> hists;
  for (const auto& [t, r] : ranges) {
    Histogram& h = hists[t];
    if (opts.method == RangeMethod::kEntropy) h.lo = 0, h.hi = std::max(-r.min, r.max);
    else h.lo = r.min, h.hi = r.max;
  }
  {
    ProgressBar bar(fmt::format("histograms ({} sets)", sets.size()), sets.size(), opts.progress);
    const Visit histogram = [&](const std::string& t, const Tensor& x) {
      if (hists.contains(t)) hists[t].add(x.data<float>(), x.numel());
    };
    for (size_t i = 0; i < sets.size(); ++i) {
      run_set(i, histogram);
      bar.step();
    }
  }
  for (auto& [t, r] : ranges) {
    const Histogram& h = hists[t];
    if (opts.method == RangeMethod::kPercentile) {
      const Range p = percentile_range(h, opts.percentile);
      r = {std::max(r.min, p.min), std::min(r.max, p.max)};
    } else {
      const float th = entropy_threshold(h);
      r = {std::max(r.min, -th), std::min(r.max, th)};
    }
  }
  return ranges;
}

}  // namespace kiln::quant
