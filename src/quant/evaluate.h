// How far the quantized model's outputs are from the float model's, and how fast each runs: both
// models run on the same input sets.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/runner.h"
#include "quant/calibrate.h"

namespace kiln::quant {

// A runner that opens a fresh executor for each distinct set of input dims. The fast engine's
// plans for a second set of dims of one CompiledModel can fail inference against the dims the first
// bound (PP-OCR's recognizer on images of two widths: "output ... is float[1,25,6625], the graph
// declares it float[1,26,6625]"); until the engine keeps its plans apart, one executor per set
// of dims does.
class PerShapeRunner final : public engine::ModelRunner {
 public:
  using Open = std::function<std::unique_ptr<engine::ModelRunner>()>;
  explicit PerShapeRunner(Open open);
  const Model& model() const override { return first_->model(); }
  const std::vector<const Value*>& inputs() const override { return first_->inputs(); }
  const std::vector<const Value*>& outputs() const override { return first_->outputs(); }
  std::vector<RtValue> run(const std::vector<RtValue>& feeds, RunObserver* observer = nullptr) override;

 private:
  Open open_;
  std::unique_ptr<engine::ModelRunner> first_;
  std::vector<std::vector<int64_t>> first_dims_;
  std::map<std::vector<std::vector<int64_t>>, std::unique_ptr<engine::ModelRunner>> others_;
};

// The dims of each tensor feed (empty for other values), the key of PerShapeRunner's executors.
std::vector<std::vector<int64_t>> feed_dims(const std::vector<RtValue>& feeds);

struct OutputError {
  std::string name;
  bool compared = false;
  std::string note;        // why not compared (not a float tensor, shapes differ ...)
  double max_abs = 0;      // over all sets
  double max_rel = 0;      // max |q - f| / max |f|, over all sets
  double cosine = 1;       // the lowest cosine similarity of one set's output
  std::optional<double> top1_agreement;  // class scores ([N, C] or [C]): rows whose argmax agree
};

// Errors of `quantized` against `reference` per output over the sets. Both must have the same
// inputs and outputs (names and order).
std::vector<OutputError> compare_models(engine::ModelRunner& reference,
                                        engine::ModelRunner& quantized,
                                        const std::vector<FeedSet>& sets);

// One output tensor pair's cosine similarity (1 when both are zero).
double cosine_similarity(const Tensor& a, const Tensor& b);

// The median wall times of `runs` runs of each model on one set, in milliseconds, after a warm-up
// run of each; the runs take turns (a b a b ...) so the machine's load falls on both alike.
std::pair<double, double> median_latencies_ms(engine::ModelRunner& a, engine::ModelRunner& b,
                                              const FeedSet& feeds, int runs);

}  // namespace kiln::quant
