#include "serve/batcher.h"

#include <algorithm>
#include <cstring>

#include "support/error.h"

namespace kiln::serve {

namespace {

// The symbol every input's and output's first dim is, or "" when they are not all one symbol.
std::string batch_symbol(const engine::CompiledModel& m) {
  std::string sym;
  auto same = [&](const Value* v) {
    if (!v->type.is_tensor() || !v->type.shape || v->type.shape->empty()) return false;
    const Dim& d = (*v->type.shape)[0];
    if (!d.is_symbolic()) return false;
    if (sym.empty()) sym = d.sym();
    return d.sym() == sym;
  };
  if (m.inputs().empty() || m.outputs().empty()) return "";
  for (const Value* v : m.inputs())
    if (!same(v)) return "";
  for (const Value* v : m.outputs())
    if (!same(v)) return "";
  return sym;
}

int64_t micros(std::chrono::steady_clock::duration d) {
  return std::chrono::duration_cast<std::chrono::microseconds>(d).count();
}

// The tensors joined along their first dim (all of one dtype and the same other dims).
Tensor concat_rows(const std::vector<const Tensor*>& parts) {
  std::vector<int64_t> dims = parts[0]->dims();
  dims[0] = 0;
  for (const Tensor* p : parts) dims[0] += p->dim(0);
  Tensor out(parts[0]->dtype(), dims);
  if (out.dtype() == DataType::kString) {  // (BYTES: std::strings, copied one by one)
    std::string* at = out.strings();
    for (const Tensor* p : parts) at = std::copy(p->strings(), p->strings() + p->numel(), at);
    return out;
  }
  char* at = static_cast<char*>(out.raw());
  for (const Tensor* p : parts) {
    if (p->nbytes()) std::memcpy(at, p->raw(), p->nbytes());
    at += p->nbytes();
  }
  return out;
}

// Rows [begin, begin + n) of t, copied.
Tensor slice_rows(const Tensor& t, int64_t begin, int64_t n) {
  std::vector<int64_t> dims = t.dims();
  const int64_t row_elems = dims[0] ? t.numel() / dims[0] : 0;
  const size_t row = dims[0] ? t.nbytes() / static_cast<size_t>(dims[0]) : 0;
  dims[0] = n;
  Tensor out(t.dtype(), dims);
  if (out.dtype() == DataType::kString)
    std::copy(t.strings() + row_elems * begin, t.strings() + row_elems * (begin + n), out.strings());
  else if (out.nbytes()) std::memcpy(out.raw(), static_cast<const char*>(t.raw()) + row * begin, out.nbytes());
  return out;
}

}  // namespace

void declare_inference_metrics(Metrics& m) {
  using T = Metrics::Type;
  const std::vector<double> us = {100, 250, 500, 1e3, 2.5e3, 5e3, 1e4, 2.5e4, 5e4, 1e5, 2.5e5, 5e5, 1e6, 2.5e6, 1e7};
  m.declare("kiln_inference_requests_total", T::kCounter, "Inference requests queued, by model and version.");
  m.declare("kiln_inference_request_success_total", T::kCounter, "Inference requests that got their outputs.");
  m.declare("kiln_inference_request_failure_total", T::kCounter,
            "Inference requests whose run failed (after they were queued).");
  m.declare("kiln_inference_queue_duration_us", T::kHistogram,
            "Microseconds a request waited in its model's queue, arrival to the start of its run.", us);
  m.declare("kiln_inference_compute_infer_duration_us", T::kHistogram,
            "Microseconds of the run a request was part of (a batch's run counts for each of its requests).", us);
  m.declare("kiln_inference_exec_total", T::kCounter, "Runs of the model (a batch is one run).");
  m.declare("kiln_inference_exec_one_thread_total", T::kCounter,
            "Runs the engine put on one thread because more threads wanted the cores than there are.");
  m.declare("kiln_inference_batch_size", T::kHistogram,
            "Requests' elements along the first dim per run of the model.", {1, 2, 4, 8, 16, 32, 64, 128});
  m.declare("kiln_inference_queue_depth", T::kGauge, "Requests waiting in the model's queue now.");
}

ModelBatcher::ModelBatcher(std::unique_ptr<engine::CompiledModel> model, BatchOptions opts, Metrics* metrics,
                           Labels labels)
    : model_(std::move(model)), opts_(std::move(opts)), metrics_(metrics), labels_(std::move(labels)) {
  batchable_ = !batch_symbol(*model_).empty();
  for (const Value* v : model_->inputs()) inputs_.push_back(Value{.name = v->name, .type = v->type});
  for (const Value* v : model_->outputs()) outputs_.push_back(Value{.name = v->name, .type = v->type});
  for (const Value& v : inputs_) input_ptrs_.push_back(&v);
  for (const Value& v : outputs_) output_ptrs_.push_back(&v);
  std::sort(opts_.preferred.begin(), opts_.preferred.end());
  if (batches()) prepare_plans();
  thread_ = std::thread([this] { loop(); });
}

void ModelBatcher::prepare_plans() {
  for (int size : opts_.preferred) {
    if (size > opts_.max_batch) continue;
    std::vector<std::vector<int64_t>> dims;
    for (const Value& v : inputs_) {
      std::vector<int64_t> d{size};
      for (size_t i = 1; i < v.type.shape->size(); ++i) {
        const Dim& each = (*v.type.shape)[i];
        if (!each.is_known()) return;  // another symbolic dim: plans are made as its sizes come
        d.push_back(each.value());
      }
      dims.push_back(std::move(d));
    }
    try {
      model_->prepare(dims);
    } catch (const std::exception&) {
      // (This size's first batch tries again: its run fails there, and each of its requests
      // then runs alone and gets its own answer.)
    }
  }
}

ModelBatcher::~ModelBatcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

size_t ModelBatcher::queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

std::future<BatchResult> ModelBatcher::submit(std::vector<Tensor> feeds) {
  auto p = std::make_unique<Pending>();
  if (batchable_ && !feeds.empty() && feeds[0].rank()) p->rows = feeds[0].dim(0);
  if (batches()) {
    for (const Tensor& t : feeds)
      if (t.rank() == 0 || t.dim(0) != p->rows)
        fail(ErrorKind::kBadInput, "the inputs' first dims differ ({} and {}): they are the model's one batch dim",
             p->rows, t.rank() ? t.dim(0) : 0);
  }
  p->feeds = std::move(feeds);
  p->arrived = Clock::now();
  std::future<BatchResult> f = p->done.get_future();
  if (metrics_) metrics_->add("kiln_inference_requests_total", labels_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(p));
  }
  cv_.notify_one();
  return f;
}

bool ModelBatcher::fits(const Pending& a, const Pending& b) const {
  if (a.feeds.size() != b.feeds.size()) return false;
  for (size_t i = 0; i < a.feeds.size(); ++i) {
    const Tensor &x = a.feeds[i], &y = b.feeds[i];
    if (x.dtype() != y.dtype() || x.rank() != y.rank() || x.rank() == 0) return false;
    if (!std::equal(x.dims().begin() + 1, x.dims().end(), y.dims().begin() + 1)) return false;
  }
  return true;
}

size_t ModelBatcher::fitting_prefix(int64_t* rows) const {
  *rows = queue_.front()->rows;
  if (!batches()) return 1;
  size_t n = 1;
  while (n < queue_.size() && fits(*queue_.front(), *queue_[n]) && *rows + queue_[n]->rows <= opts_.max_batch)
    *rows += queue_[n++]->rows;
  return n;
}

size_t ModelBatcher::batch_prefix(int64_t* rows) const {
  const size_t n = fitting_prefix(rows);
  if (opts_.preferred.empty()) return n;
  // The longest prefix of those whose rows are a preferred size.
  int64_t sum = 0;
  size_t cut = 0;
  int64_t cut_rows = 0;
  for (size_t i = 0; i < n; ++i) {
    sum += queue_[i]->rows;
    if (std::binary_search(opts_.preferred.begin(), opts_.preferred.end(), static_cast<int>(sum)))
      cut = i + 1, cut_rows = sum;
  }
  if (cut == 0) return n;
  *rows = cut_rows;
  return cut;
}

void ModelBatcher::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopped, and nothing left to run
    if (batches()) {
      // Wait for others to join the oldest request until its delay is over or the batch is full
      // (the largest preferred size, or max_batch), or the next request cannot join it.
      const auto deadline = queue_.front()->arrived + std::chrono::microseconds(opts_.delay_us);
      const int64_t full = opts_.preferred.empty() ? opts_.max_batch
                                                   : std::min<int64_t>(opts_.preferred.back(), opts_.max_batch);
      // (The wait looks at every request that fits, not at a preferred cut of them: 3 queued
      // with preferred sizes 2, 4 and 8 wait for more rather than run 2.)
      for (;;) {
        int64_t rows = 0;
        const size_t n = fitting_prefix(&rows);
        const bool blocked = n < queue_.size();  // the next one does not fit this batch
        if (stop_ || rows >= full || blocked || Clock::now() >= deadline) break;
        cv_.wait_until(lock, deadline);
      }
    }
    int64_t rows = 0;
    const size_t n = batch_prefix(&rows);
    std::vector<std::unique_ptr<Pending>> batch;
    for (size_t i = 0; i < n; ++i) {
      batch.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    lock.unlock();
    execute(std::move(batch));
    lock.lock();
  }
}

void ModelBatcher::report(const BatchResult& r, bool ok) {
  if (!metrics_) return;
  metrics_->add(ok ? "kiln_inference_request_success_total" : "kiln_inference_request_failure_total", labels_);
  metrics_->observe("kiln_inference_queue_duration_us", labels_, static_cast<double>(r.queue_us));
  metrics_->observe("kiln_inference_compute_infer_duration_us", labels_, static_cast<double>(r.compute_us));
}

void ModelBatcher::count_run() {
  metrics_->add("kiln_inference_exec_total", labels_);
  const int64_t on_one = model_->plan_stats().runs_on_one_thread;  // engine/thread_backoff.h
  if (on_one > runs_on_one_thread_) metrics_->add("kiln_inference_exec_one_thread_total", labels_, on_one - runs_on_one_thread_);
  runs_on_one_thread_ = on_one;
}

void ModelBatcher::run_alone(Pending& p, Clock::time_point start) {
  BatchResult r;
  r.queue_us = micros(start - p.arrived);
  r.batch_size = static_cast<int>(p.rows);
  std::vector<RtValue> feeds;
  for (Tensor& t : p.feeds) feeds.push_back(RtValue::of(std::move(t)));
  try {
    r.outputs = model_->run(feeds);
  } catch (...) {
    r.error = std::current_exception();
  }
  r.compute_us = micros(Clock::now() - start);
  if (metrics_) {
    count_run();
    metrics_->observe("kiln_inference_batch_size", labels_, static_cast<double>(p.rows));
  }
  report(r, !r.error);
  p.done.set_value(std::move(r));
}

void ModelBatcher::execute(std::vector<std::unique_ptr<Pending>> batch) {
  const auto start = Clock::now();
  if (batch.size() == 1) {
    run_alone(*batch[0], start);
    return;
  }
  int64_t rows = 0;
  for (const auto& p : batch) rows += p->rows;
  std::vector<RtValue> feeds;
  for (size_t i = 0; i < batch[0]->feeds.size(); ++i) {
    std::vector<const Tensor*> parts;
    for (const auto& p : batch) parts.push_back(&p->feeds[i]);
    feeds.push_back(RtValue::of(concat_rows(parts)));
  }
  std::vector<RtValue> outputs;
  try {
    outputs = model_->run(feeds);
    for (const RtValue& o : outputs)
      if (!o.is_tensor() || o.tensor.rank() == 0 || o.tensor.dim(0) != rows)
        fail(ErrorKind::kRuntime, "an output's first dim is not the batch's {}", rows);
  } catch (const std::exception&) {
    // One request's data may be what the engine refuses: each runs alone and gets its own answer.
    for (auto& p : batch) run_alone(*p, Clock::now());
    return;
  }
  const int64_t compute_us = micros(Clock::now() - start);
  batched_runs_++;
  if (metrics_) {
    count_run();
    metrics_->observe("kiln_inference_batch_size", labels_, static_cast<double>(rows));
  }
  int64_t at = 0;
  for (auto& p : batch) {
    BatchResult r;
    r.queue_us = micros(start - p->arrived);
    r.compute_us = compute_us;
    r.batch_size = static_cast<int>(rows);
    for (const RtValue& o : outputs) r.outputs.push_back(RtValue::of(slice_rows(o.tensor, at, p->rows)));
    at += p->rows;
    report(r, true);
    p->done.set_value(std::move(r));
  }
}

}  // namespace kiln::serve
