// Calibration: the float model runs on the fast engine over the calibration sets and every
// tensor static quantization needs gets its range (min/max, or a threshold from a histogram:
// entropy, percentile).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/rt_value.h"
#include "quant/options.h"
#include "quant/qparams.h"

namespace kiln::quant {

using FeedSet = std::vector<RtValue>;  // one value per model input, in order

struct CalibrationOptions {
  RangeMethod method = RangeMethod::kMinMax;
  double percentile = 99.99;
  int threads = 0;
  bool progress = true;  // a progress bar on stderr
};

// Ranges of `tensors` (names of model values) over the sets; a tensor no set reached (inside a
// branch the sets never take) has none. `model` is a copy of the float
// model: the tensors become outputs of it so the engine keeps them. Fails (kBadInput) when a set
// does not fit the model's inputs, naming the set (its index, or `set_names[i]` when given).
std::map<std::string, Range> calibrate(Model model, const std::vector<std::string>& tensors,
                                       const std::vector<FeedSet>& sets,
                                       const std::vector<std::string>& set_names,
                                       const CalibrationOptions& opts);

// A histogram of |x| or x over [lo, hi] and the thresholds the methods take from it.
struct Histogram {
  float lo = 0, hi = 0;
  std::vector<int64_t> counts;
  void add(const float* x, int64_t n);
};
// The range keeping `percentile` % of the values (split evenly between both tails).
Range percentile_range(const Histogram& h, double percentile);
// The threshold T minimizing the KL divergence between the histogram of |x| and its 128-level
// quantization (TensorRT's entropy calibration); h must be over [0, max|x|].
float entropy_threshold(const Histogram& h);

// A progress bar on stderr: "label [#####.....] 5/16".
class ProgressBar {
 public:
  ProgressBar(std::string label, int64_t total, bool enabled = true);
  void step();
  ~ProgressBar();

 private:
  void draw() const;
  std::string label_;
  int64_t total_, done_ = 0;
  bool enabled_;
};

}  // namespace kiln::quant
