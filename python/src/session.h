// The session behind kiln.InferenceSession: a CompiledModel (the fast engine, as `kiln run`) with
// onnxruntime's feed checks, zero-copy numpy in and out, the GIL released while it runs, and
// onnxruntime-format profiling.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/compiled_model.h"
#include "profile/profile_data.h"
#include "profile/recorder.h"
#include "values.h"

namespace kiln::python {

// What kiln.SessionOptions carries down (python/kiln/_session.py fills it).
struct SessionConfig {
  int level = 2;              // kiln's -O level (GraphOptimizationLevel mapped)
  int threads = 0;            // intra_op_num_threads; 0: all cores
  bool profiling = false;
  std::string profile_prefix = "onnxruntime_profile_";
  std::string optimized_path;  // optimized_model_filepath: the optimized model is written there
  std::vector<std::pair<std::string, int64_t>> dim_overrides;  // add_free_dimension_override_by_name
  bool allow_newer_opset = false;
};

// A graph value as onnxruntime's NodeArg shows it.
struct ArgInfo {
  std::string name;
  std::string type;         // "tensor(float)"
  pybind11::object shape;   // list of int / str / None, or None when the rank is unknown
};

class Session {
 public:
  Session(const pybind11::object& path_or_bytes, const SessionConfig& cfg);

  // onnxruntime's run: output_names None (all) or a list of names; feed a dict name -> array.
  pybind11::list run(const pybind11::object& output_names, const pybind11::dict& feed);

  const std::vector<ArgInfo>& inputs() const { return input_args_; }
  const std::vector<ArgInfo>& outputs() const { return output_args_; }
  const std::vector<ArgInfo>& overridable_initializers() const { return initializer_args_; }
  pybind11::dict metadata() const;

  // Writes the Chrome trace of the runs since creation (or the last call) and returns its path;
  // "" when profiling is off.
  std::string end_profiling();
  int64_t profiling_start_ns() const { return profiling_start_ns_; }

 private:
  struct InputSpec {
    const Value* value;
    DataType dtype;
    std::vector<int64_t> dims;  // -1: not fixed
    bool ranked;
  };
  RtValue feed_value(const InputSpec& spec, pybind11::handle obj) const;
  // The model again with its overridable initializers as inputs (made on the first run feeding
  // one, with the GIL held on entry), and their values from the file, by name.
  engine::CompiledModel& override_model();
  std::vector<int> output_indices(const pybind11::object& output_names) const;

  std::unique_ptr<engine::CompiledModel> model_;
  std::vector<InputSpec> specs_;
  std::unordered_map<std::string, int> input_index_, output_index_;
  std::unordered_map<std::string, int> initializer_index_;
  std::vector<ArgInfo> input_args_, output_args_, initializer_args_;
  std::vector<InputSpec> init_specs_;  // the overridable initializers, as feeds
  engine::EngineOptions opts_;
  std::vector<std::pair<std::string, int64_t>> dim_overrides_;
  std::string source_path_;    // empty for a model from bytes
  pybind11::object source_bytes_;  // the bytes object, when the model has overridable initializers
  std::mutex override_mu_;
  std::atomic<bool> override_ready_{false};
  std::unique_ptr<engine::CompiledModel> override_model_;
  std::unordered_map<std::string, Tensor> initializer_defaults_;
  std::vector<Range> constants_;  // the model's constant tensors, never handed out as is

  std::atomic<bool> profiling_{false};  // end_profiling may race a run
  std::string profile_prefix_;
  int64_t profiling_start_ns_ = 0;
  std::mutex profile_mu_;  // the recorder hears one run at a time
  ProfileData profile_;
  std::unique_ptr<ProfileRecorder> recorder_;
};

void register_session(pybind11::module_& m);

}  // namespace kiln::python
