// Dynamic batching of one served model (Triton's dynamic batcher is the model): requests wait in
// the model's queue; one thread per model takes them in arrival order and, when the model can
// run a batch, joins the requests that arrived within the queue delay (and fit: the same dims
// but the first, and the same datatypes) up to max_batch elements along the first dim, preferring
// the largest preferred size it can make; runs them as one batch; and splits each output back to
// its request (string tensors, BYTES, copied element by element). A model runs batches when every
// input's and output's first dim is the same symbol (`batch`); any other model runs its requests
// one by one, in the same queue. A batch that fails (one request's data the engine refuses) is
// run again one request at a time, so each request gets its own result or error.
//
// Per request the queue time (arrival to the start of its run) and the compute time (its run,
// shared by the batch) are measured and reported to the metrics with the batch sizes run.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/compiled_model.h"
#include "serve/metrics.h"

namespace kiln::serve {

struct BatchOptions {
  int max_batch = 1;     // elements along the first dim in one run; 1: no batching
  int64_t delay_us = 0;  // how long the oldest request may wait for others to join it
  // Batch sizes to cut at when there is more than one choice; the engine's plan for each is made
  // at load (when the inputs' other dims are known), the other sizes' on their first run.
  std::vector<int> preferred;
};

// What one request got: its outputs or the error of its run, and its times.
struct BatchResult {
  std::vector<RtValue> outputs;
  std::exception_ptr error;
  int64_t queue_us = 0;
  int64_t compute_us = 0;
  int batch_size = 0;  // the first dim of the run this request was part of (1 when unbatched)
};

class ModelBatcher {
 public:
  // `labels` name the model in the metrics ({model, version}); `metrics` may be null.
  ModelBatcher(std::unique_ptr<engine::CompiledModel> model, BatchOptions opts, Metrics* metrics, Labels labels);
  // Runs what is queued, then stops the thread.
  ~ModelBatcher();
  ModelBatcher(const ModelBatcher&) = delete;
  ModelBatcher& operator=(const ModelBatcher&) = delete;

  // Queues a request (feeds in the model's input order, checked against its inputs already).
  std::future<BatchResult> submit(std::vector<Tensor> feeds);

  // The model's inputs and outputs (names and types) as they were at load: the engine's own
  // Values are retyped while it makes a plan for some dims, on the batcher's thread.
  const std::vector<const Value*>& inputs() const { return input_ptrs_; }
  const std::vector<const Value*>& outputs() const { return output_ptrs_; }
  bool batches() const { return batchable_ && opts_.max_batch > 1; }
  size_t queued() const;
  // Runs that had more than one request, since the start (tests, docs).
  int64_t batched_runs() const { return batched_runs_; }
  // The engine's plans made so far, one per batch size run or prepared (tests).
  int plans() const { return model_->plans(); }

 private:
  using Clock = std::chrono::steady_clock;
  struct Pending {
    std::vector<Tensor> feeds;
    int64_t rows = 1;  // the first dim (1 when the model does not batch)
    Clock::time_point arrived;
    std::promise<BatchResult> done;
  };

  // Makes the engine's plan for each preferred size now, when every input's other dims are known.
  void prepare_plans();
  void loop();
  // How many of the queue's first requests fit the first one's batch within max_batch (`rows`
  // their rows): what waiting can still add to.
  size_t fitting_prefix(int64_t* rows) const;
  // How many of them join the batch that runs now: the fitting prefix, cut at the largest
  // preferred size it reaches.
  size_t batch_prefix(int64_t* rows) const;
  bool fits(const Pending& a, const Pending& b) const;
  void execute(std::vector<std::unique_ptr<Pending>> batch);
  void run_alone(Pending& p, Clock::time_point start);
  void report(const BatchResult& r, bool ok);
  void count_run();  // the run's metrics: exec_total, and the runs the engine put on one thread

  std::unique_ptr<engine::CompiledModel> model_;
  BatchOptions opts_;
  Metrics* metrics_;
  Labels labels_;
  bool batchable_ = false;
  std::vector<Value> inputs_, outputs_;
  std::vector<const Value*> input_ptrs_, output_ptrs_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Pending>> queue_;
  bool stop_ = false;
  std::atomic<int64_t> batched_runs_{0};
  int64_t runs_on_one_thread_ = 0;  // the engine's count at the last run (the executing thread's)
  std::thread thread_;
};

// Declares the inference metrics the batchers report (kiln_inference_*).
void declare_inference_metrics(Metrics& m);

}  // namespace kiln::serve
