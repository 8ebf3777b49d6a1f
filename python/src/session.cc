#include "session.h"

#include <pybind11/stl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "errors.h"
#include "frontend/compile.h"
#include "ir/walk.h"
#include "onnx/export.h"
#include "onnx/import.h"
#include "ops/infer.h"
#include "opt/pipeline.h"
#include "profile/chrome_trace.h"
#include "runtime/session.h"
#include "support/error.h"

namespace kiln::python {

namespace py = pybind11;
namespace fs = std::filesystem;

namespace {

py::object shape_list(const TypeInfo& t) {
  if (!t.is_tensor() || !t.shape) return py::none();
  py::list dims;
  for (const Dim& d : *t.shape) {
    if (d.is_known()) dims.append(d.value());
    else if (d.is_symbolic()) dims.append(d.sym());
    else dims.append(py::none());
  }
  return dims;
}

ArgInfo arg_of(const Value& v) { return {v.name, ort_type_name(v.type), shape_list(v.type)}; }

Model load(const py::object& src, std::string& phase) {
  if (py::isinstance<py::bytes>(src) || py::isinstance<py::bytearray>(src)) {
    phase = "model_loading_array";
    const std::string bytes =
        py::isinstance<py::bytes>(src)
            ? src.cast<std::string>()
            : std::string(PyByteArray_AsString(src.ptr()), static_cast<size_t>(PyByteArray_Size(src.ptr())));
    return translate(true, "Load model from bytes failed: ",
                     [&] { return load_model_from_bytes(bytes, fs::current_path()); });
  }
  phase = "model_loading_uri";
  const std::string path = py::str(py::module_::import("os").attr("fspath")(src));
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw OrtError(OrtCode::kNoSuchFile,
                   "Load model from " + path + " failed: Load model " + path + " failed. File doesn't exist");
  return translate(true, "Load model from " + path + " failed: ", [&] { return load_model(path); });
}

// add_free_dimension_override_by_name: the symbolic dims of that name in the graph inputs.
void override_dims(Model& m, const std::vector<std::pair<std::string, int64_t>>& overrides) {
  if (overrides.empty()) return;
  for (Value* v : m.graph->inputs) {
    if (!v->type.is_tensor() || !v->type.shape) continue;
    for (Dim& d : *v->type.shape)
      for (const auto& [name, size] : overrides)
        if (d.is_symbolic() && d.sym() == name) d = Dim(size);
  }
}

void collect_constants(const Graph& g, std::vector<Range>& out) {
  for (const Value* v : g.initializers)
    if (v->data.defined() && v->data.numel() > 0) out.push_back(range_of(v->data));
  for (const auto& n : g.nodes()) {
    for (const Attribute& a : n->attrs)
      if (a.kind == AttrKind::kTensor && a.t.defined() && a.t.numel() > 0) out.push_back(range_of(a.t));
    for_each_subgraph(*n, [&](const Graph& sg) { collect_constants(sg, out); });
  }
}

std::string time_stamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d_%H-%M-%S", &tm);
  return buf;
}

}  // namespace

Session::Session(const py::object& path_or_bytes, const SessionConfig& cfg)
    : profiling_(cfg.profiling), profile_prefix_(cfg.profile_prefix) {
  profiling_start_ns_ = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::system_clock::now().time_since_epoch()).count();
  const int64_t t0 = steady_now_ns();
  std::string phase;
  Model m = load(path_or_bytes, phase);
  const int64_t t1 = steady_now_ns();
  override_dims(m, cfg.dim_overrides);
  engine::EngineOptions opts{.threads = cfg.threads, .optimize_level = cfg.level,
                             .allow_newer_opset = cfg.allow_newer_opset};
  opts_ = opts;
  dim_overrides_ = cfg.dim_overrides;
  const bool overridable = std::any_of(m.graph->inputs.begin(), m.graph->inputs.end(),
                                       [](const Value* v) { return v->is_constant(); });
  if (phase == "model_loading_uri") source_path_ = py::str(py::module_::import("os").attr("fspath")(path_or_bytes));
  else if (overridable) source_bytes_ = path_or_bytes;
  {
    py::gil_scoped_release nogil;
    translate(false, "", [&] {
      if (!cfg.optimized_path.empty()) {
        // The optimized graph, portable ONNX, as kiln optimize writes it; the engine starts from it.
        prepare_model(m, {.allow_newer_opset = cfg.allow_newer_opset});
        opt::optimize(m, opt::level_pipeline(cfg.level));
        infer_shapes(m);
        save_model(m, cfg.optimized_path);
        opts.optimize_level = 0;
      }
      model_ = frontend::compile_model(std::move(m), opts);
    });
  }
  const int64_t t2 = steady_now_ns();
  if (profiling_) {
    profile_.engine = "fast";
    profile_.phases = {{phase, {t0, t1}}, {"session_initialization", {t1, t2}}};
    recorder_ = std::make_unique<ProfileRecorder>(profile_);
  }

  const Graph& g = *model_->model().graph;
  for (const Value* v : model_->inputs()) {
    input_index_[v->name] = static_cast<int>(specs_.size());
    InputSpec s{v, v->type.is_tensor() ? v->type.elem : DataType::kUndefined, {}, false};
    if (v->type.is_tensor() && v->type.shape) {
      s.ranked = true;
      for (const Dim& d : *v->type.shape) s.dims.push_back(d.is_known() ? d.value() : -1);
    }
    specs_.push_back(std::move(s));
    input_args_.push_back(arg_of(*v));
  }
  for (const Value* v : model_->outputs()) {
    output_index_.emplace(v->name, static_cast<int>(output_args_.size()));
    output_args_.push_back(arg_of(*v));
  }
  for (const Value* v : g.inputs)
    if (v->is_constant()) {
      initializer_index_[v->name] = static_cast<int>(initializer_args_.size());
      initializer_args_.push_back(arg_of(*v));
      init_specs_.push_back({v, v->data.dtype(), v->data.dims(), true});
    }
  collect_constants(g, constants_);
}

RtValue Session::feed_value(const InputSpec& spec, py::handle obj) const {
  const std::string& name = spec.value->name;
  if (!spec.value->type.is_tensor())
    throw OrtError(OrtCode::kNotImplemented, "input '" + name + "' is a " +
                   ort_type_name(spec.value->type) + ": kiln's Python session feeds tensors only");
  py::array a = py::isinstance<py::array>(obj) ? py::reinterpret_borrow<py::array>(obj)
                                               : py::array(py::module_::import("numpy").attr("asarray")(obj));
  const DataType dt = dtype_of(a);
  if (dt != spec.dtype) {
    const std::string actual = dt == DataType::kUndefined ? "numpy " + std::string(py::str(a.dtype()))
                                                          : ort_tensor_type(dt);
    throw OrtError(OrtCode::kInvalidArgument, "Unexpected input data type for input '" + name +
                   "'. Actual: (" + actual + ") , expected: (" + ort_tensor_type(spec.dtype) + ")");
  }
  if (spec.ranked) {
    if (a.ndim() != static_cast<py::ssize_t>(spec.dims.size()))
      throw OrtError(OrtCode::kInvalidArgument, "Invalid rank for input: " + name + " Got: " +
                     std::to_string(a.ndim()) + " Expected: " + std::to_string(spec.dims.size()) +
                     " Please fix either the inputs/outputs or the model.");
    std::string bad;
    for (size_t i = 0; i < spec.dims.size(); ++i)
      if (spec.dims[i] >= 0 && a.shape(i) != spec.dims[i])
        bad += " index: " + std::to_string(i) + " Got: " + std::to_string(a.shape(i)) +
               " Expected: " + std::to_string(spec.dims[i]) + "\n";
    if (!bad.empty())
      throw OrtError(OrtCode::kInvalidArgument, "Got invalid dimensions for input: " + name +
                     " for the following indices\n" + bad + " Please fix either the inputs/outputs or the model.");
  }
  return RtValue::of(tensor_from_array(a, dt));
}

std::vector<int> Session::output_indices(const py::object& output_names) const {
  std::vector<int> idx;
  if (output_names.is_none()) {
    for (size_t i = 0; i < output_args_.size(); ++i) idx.push_back(static_cast<int>(i));
    return idx;
  }
  for (py::handle h : output_names) {
    const std::string n = py::str(h);
    auto it = output_index_.find(n);
    if (it == output_index_.end()) throw OrtError(OrtCode::kInvalidArgument, "Invalid output name: " + n);
    idx.push_back(it->second);
  }
  return idx;
}

py::list Session::run(const py::object& output_names, const py::dict& feed) {
  const std::vector<int> wanted = output_indices(output_names);
  std::vector<RtValue> feeds(specs_.size());
  std::vector<bool> given(specs_.size(), false);
  std::unordered_map<std::string, RtValue> overrides;  // initializers fed in place of their values
  for (auto [k, v] : feed) {
    const std::string n = py::str(k);
    auto it = input_index_.find(n);
    if (it == input_index_.end()) {
      auto init = initializer_index_.find(n);
      if (init == initializer_index_.end()) throw OrtError(OrtCode::kInvalidArgument, "Invalid input name: " + n);
      overrides[n] = feed_value(init_specs_[init->second], v);
      continue;
    }
    feeds[it->second] = feed_value(specs_[it->second], v);
    given[it->second] = true;
  }
  if (std::find(given.begin(), given.end(), false) != given.end()) {
    py::list missing;
    for (size_t i = 0; i < specs_.size(); ++i)
      if (!given[i]) missing.append(specs_[i].value->name);
    py::list keys;
    for (auto [k, v] : feed) keys.append(k);
    throw py::value_error("Required inputs (" + std::string(py::repr(missing)) +
                          ") are missing from input feed (" + std::string(py::repr(keys)) + ").");
  }
  engine::CompiledModel* model = model_.get();
  if (!overrides.empty()) {
    // The initializers-as-inputs model, fed the given values and the file's for the others.
    model = &override_model();
    std::vector<RtValue> all;
    for (const Value* v : model->inputs()) {
      if (auto it = input_index_.find(v->name); it != input_index_.end()) all.push_back(feeds[it->second]);
      else if (auto o = overrides.find(v->name); o != overrides.end()) all.push_back(std::move(o->second));
      else all.push_back(RtValue::of(initializer_defaults_.at(v->name)));
    }
    feeds = std::move(all);
  }
  std::vector<RtValue> results;
  {
    py::gil_scoped_release nogil;
    translate(false, "", [&] {
      std::unique_lock<std::mutex> lock(profile_mu_, std::defer_lock);
      if (profiling_) lock.lock();
      if (lock.owns_lock() && recorder_) {  // profiling, and not ended meanwhile
        recorder_->begin_run();
        results = model->run(feeds, recorder_.get());
        recorder_->end_run();
      } else {
        results = model->run(feeds);
      }
    });
  }
  // A result sharing bytes with a feed, a constant of the model or another result is copied:
  // every array handed back is the caller's alone.
  std::vector<Range> taken;
  for (const RtValue& f : feeds) taken.push_back(range_of(f.tensor));
  py::list out;
  for (int i : wanted) {
    RtValue& r = results[i];
    if (r.is_tensor() && r.tensor.numel() > 0) {
      const Range rr = range_of(r.tensor);
      bool shared = std::any_of(taken.begin(), taken.end(), [&](const Range& t) { return overlaps(rr, t); });
      shared = shared || std::any_of(constants_.begin(), constants_.end(),
                                     [&](const Range& c) { return overlaps(rr, c); });
      if (shared) r.tensor = r.tensor.clone();
      taken.push_back(range_of(r.tensor));
    }
    out.append(py_from_value(std::move(r)));
  }
  return out;
}

engine::CompiledModel& Session::override_model() {
  if (override_ready_) return *override_model_;
  std::string bytes;
  if (source_path_.empty())
    bytes = py::isinstance<py::bytes>(source_bytes_)
                ? source_bytes_.cast<std::string>()
                : std::string(PyByteArray_AsString(source_bytes_.ptr()),
                              static_cast<size_t>(PyByteArray_Size(source_bytes_.ptr())));
  py::gil_scoped_release nogil;
  std::lock_guard<std::mutex> lock(override_mu_);
  if (!override_model_) {
    translate(false, "", [&] {
      Model m = source_path_.empty() ? load_model_from_bytes(bytes, fs::current_path()) : load_model(source_path_);
      override_dims(m, dim_overrides_);
      Graph& g = *m.graph;
      for (Value* v : g.inputs)
        if (v->is_constant()) {
          initializer_defaults_[v->name] = v->data;
          v->data = Tensor();
        }
      std::erase_if(g.initializers, [](const Value* v) { return v->is_graph_input; });
      override_model_ = frontend::compile_model(std::move(m), opts_);
    });
    override_ready_ = true;
  }
  return *override_model_;
}

py::dict Session::metadata() const {
  const Model& m = model_->model();
  py::dict d;
  d["producer_name"] = m.producer_name;
  d["graph_name"] = m.graph->name;
  d["domain"] = m.domain;
  d["description"] = m.doc_string;
  d["graph_description"] = m.graph->doc_string;
  d["version"] = m.model_version;
  py::dict custom;
  for (const auto& [k, v] : m.metadata) custom[py::str(k)] = v;
  d["custom_metadata_map"] = custom;
  return d;
}

std::string Session::end_profiling() {
  if (!profiling_) return "";
  std::lock_guard<std::mutex> lock(profile_mu_);
  const std::string path = profile_prefix_ + "_" + time_stamp() + ".json";
  const auto trace = chrome_trace(profile_, getpid(), getpid());
  std::ofstream f(path);
  if (!f) throw OrtError(OrtCode::kFail, "end_profiling: cannot write " + path);
  f << trace.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  profiling_ = false;
  recorder_.reset();
  return path;
}

void register_session(py::module_& m) {
  py::class_<SessionConfig>(m, "SessionConfig")
      .def(py::init<>())
      .def_readwrite("level", &SessionConfig::level)
      .def_readwrite("threads", &SessionConfig::threads)
      .def_readwrite("profiling", &SessionConfig::profiling)
      .def_readwrite("profile_prefix", &SessionConfig::profile_prefix)
      .def_readwrite("optimized_path", &SessionConfig::optimized_path)
      .def_readwrite("dim_overrides", &SessionConfig::dim_overrides)
      .def_readwrite("allow_newer_opset", &SessionConfig::allow_newer_opset);
  auto args = [](const std::vector<ArgInfo>& v) {
    py::list out;
    for (const ArgInfo& a : v) out.append(py::make_tuple(a.name, a.shape, a.type));
    return out;
  };
  py::class_<Session>(m, "Session")
      .def(py::init<const py::object&, const SessionConfig&>())
      .def("run", &Session::run)
      .def("inputs", [args](const Session& s) { return args(s.inputs()); })
      .def("outputs", [args](const Session& s) { return args(s.outputs()); })
      .def("overridable_initializers", [args](const Session& s) { return args(s.overridable_initializers()); })
      .def("metadata", &Session::metadata)
      .def("end_profiling", &Session::end_profiling)
      .def("profiling_start_ns", &Session::profiling_start_ns);
}

}  // namespace kiln::python
