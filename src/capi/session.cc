// kiln_session_*: creating a session from a file or from memory, and describing its inputs and
// outputs (include/kiln/kiln.h).
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <string_view>

#include "artifact/placement.h"
#include "capi/handles.h"
#include "capi/model_format.h"
#include "capi/status.h"
#include "frontend/compile.h"
#include "onnx/import.h"
#include "support/error.h"

namespace fs = std::filesystem;
using kiln::capi::guarded;
using kiln::capi::refuse;
using kiln::capi::require;

namespace {

kiln_tensor_info info_of(const kiln::Value& v) {
  kiln_tensor_info info;
  info.name = v.name;
  if (!v.type.is_tensor()) return info;
  info.is_tensor = true;
  info.dtype = static_cast<kiln_dtype>(v.type.elem);
  if (!v.type.shape) return info;
  info.rank = static_cast<int64_t>(v.type.shape->size());
  for (const kiln::Dim& d : *v.type.shape) {
    info.dims.push_back(d.is_known() ? d.value() : -1);
    info.dim_names.push_back(d.is_symbolic() ? d.sym() : "");
  }
  return info;
}

// kiln_options_set_dim: the symbolic dims of that name in the fed inputs become that size.
void fix_dims(kiln::Model& m, const kiln_options& opts) {
  std::set<std::string> symbols;
  for (kiln::Value* v : m.graph->inputs) {
    if (v->is_constant() || !v->type.is_tensor() || !v->type.shape) continue;
    for (kiln::Dim& d : *v->type.shape) {
      if (!d.is_symbolic()) continue;
      symbols.insert(d.sym());
      for (const auto& [name, size] : opts.fixed_dims)
        if (d.sym() == name) d = kiln::Dim(size);
    }
  }
  for (const auto& [name, size] : opts.fixed_dims)
    if (!symbols.contains(name)) {
      std::string known;
      for (const std::string& s : symbols) known += (known.empty() ? "" : ", ") + s;
      refuse(KILN_ERROR_INVALID_ARGUMENT, "'{}' (kiln_options_set_dim) is not a symbolic dim of an input ({})",
             name, known.empty() ? "the inputs have none" : "theirs: " + known);
    }
}

kiln_session* describe(std::unique_ptr<kiln_session> session) {
  for (const kiln::Value* v : session->model->inputs()) session->inputs.push_back(info_of(*v));
  for (const kiln::Value* v : session->model->outputs()) session->outputs.push_back(info_of(*v));
  return session.release();
}

kiln_session* make_session(kiln::Model model, const kiln_options* options) {
  const kiln_options opts = options ? *options : kiln_options{};
  fix_dims(model, opts);
  auto session = std::make_unique<kiln_session>();
  session->onnx_model = kiln::frontend::compile_model(std::move(model), opts.engine);
  session->model = session->onnx_model.get();
  return describe(std::move(session));
}

// A compiled artifact: compatibility checked first, its graph read, pre-packed weights taken, its
// declared shapes planned (src/artifact/artifact.h). Its shapes were declared at compile.
kiln_session* make_artifact_session(const std::function<std::unique_ptr<kiln::artifact::Artifact>(
                                        const kiln::artifact::LoadOptions&)>& open,
                                    const kiln_options* options) {
  const kiln_options opts = options ? *options : kiln_options{};
  if (!opts.fixed_dims.empty())
    refuse(KILN_ERROR_INVALID_ARGUMENT,
           "kiln_options_set_dim('{}') on a compiled artifact: its shapes were declared when it was compiled "
           "(kiln compile --shapes)", opts.fixed_dims.front().first);
  auto session = std::make_unique<kiln_session>();
  session->artifact = open({.engine = opts.engine, .recorded_placement = kiln::artifact::artifact_placement, .quiet = true});
  session->model = &session->artifact->model();
  return describe(std::move(session));
}

// The first bytes of the file at `path`: KILN_ERROR_IO when it cannot be read.
std::string file_head(const fs::path& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) refuse(KILN_ERROR_IO, "'{}': no such file", path.string());
  if (fs::is_directory(st)) refuse(KILN_ERROR_IO, "'{}' is a folder, not a model file", path.string());
  std::ifstream f(path, std::ios::binary);
  if (!f) refuse(KILN_ERROR_IO, "'{}' cannot be read", path.string());
  std::string head(kiln::capi::kFormatHeadBytes, '\0');
  f.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(f.gcount()));
  return head;
}

}  // namespace

extern "C" {

kiln_status kiln_session_create(const char* path, const kiln_options* options, kiln_session** out) {
  return guarded(__func__, [&] {
    require(out, "out");
    *out = nullptr;
    require(path, "path");
    const fs::path p(path);
    if (kiln::capi::detect_format(file_head(p)) == kiln::capi::ModelFormat::kArtifact) {
      *out = make_artifact_session([&](const auto& load) { return kiln::artifact::Artifact::open(p, load); },
                                   options);
      return;
    }
    *out = make_session(kiln::load_model(p), options);
  });
}

kiln_status kiln_session_create_from_memory(const void* data, size_t size, const kiln_options* options,
                                            kiln_session** out) {
  return guarded(__func__, [&] {
    require(out, "out");
    *out = nullptr;
    if (size > 0) require(data, "data");
    const std::string_view bytes(static_cast<const char*>(data), size);
    if (kiln::capi::detect_format(bytes.substr(0, kiln::capi::kFormatHeadBytes)) ==
        kiln::capi::ModelFormat::kArtifact) {
      // Copied into a 64-byte aligned block the session keeps, as a mapped file would be: the
      // weights are views into it and the caller may free its buffer after the call.
      std::shared_ptr<void> block(std::aligned_alloc(64, (size + 63) / 64 * 64), std::free);
      if (!block) refuse(KILN_ERROR_RUNTIME, "out of memory for a {}-byte artifact", size);
      std::memcpy(block.get(), data, size);
      *out = make_artifact_session(
          [&](const auto& load) {
            return kiln::artifact::Artifact::from_bytes({static_cast<const uint8_t*>(block.get()), size}, block,
                                                        "the buffer", load);
          },
          options);
      return;
    }
    const fs::path dir = options && !options->external_data_dir.empty() ? fs::path(options->external_data_dir)
                                                                         : fs::current_path();
    *out = make_session(kiln::load_model_from_bytes(bytes, dir), options);
  });
}

void kiln_session_destroy(kiln_session* session) { delete session; }

kiln_status kiln_session_input_count(const kiln_session* session, size_t* count) {
  return guarded(__func__, [&] {
    require(session, "session");
    require(count, "count");
    *count = session->inputs.size();
  });
}

kiln_status kiln_session_output_count(const kiln_session* session, size_t* count) {
  return guarded(__func__, [&] {
    require(session, "session");
    require(count, "count");
    *count = session->outputs.size();
  });
}

kiln_status kiln_session_input_info(const kiln_session* session, size_t index, const kiln_tensor_info** info) {
  return guarded(__func__, [&] {
    require(session, "session");
    require(info, "info");
    if (index >= session->inputs.size())
      refuse(KILN_ERROR_INVALID_ARGUMENT, "input {} of a model with {} inputs", index, session->inputs.size());
    *info = &session->inputs[index];
  });
}

kiln_status kiln_session_output_info(const kiln_session* session, size_t index, const kiln_tensor_info** info) {
  return guarded(__func__, [&] {
    require(session, "session");
    require(info, "info");
    if (index >= session->outputs.size())
      refuse(KILN_ERROR_INVALID_ARGUMENT, "output {} of a model with {} outputs", index, session->outputs.size());
    *info = &session->outputs[index];
  });
}

kiln_status kiln_tensor_info_name(const kiln_tensor_info* info, const char** name) {
  return guarded(__func__, [&] {
    require(info, "info");
    require(name, "name");
    *name = info->name.c_str();
  });
}

kiln_status kiln_tensor_info_dtype(const kiln_tensor_info* info, kiln_dtype* dtype) {
  return guarded(__func__, [&] {
    require(info, "info");
    require(dtype, "dtype");
    *dtype = info->dtype;
  });
}

kiln_status kiln_tensor_info_rank(const kiln_tensor_info* info, int64_t* rank) {
  return guarded(__func__, [&] {
    require(info, "info");
    require(rank, "rank");
    *rank = info->rank;
  });
}

kiln_status kiln_tensor_info_dims(const kiln_tensor_info* info, int64_t* dims, size_t capacity) {
  return guarded(__func__, [&] {
    require(info, "info");
    if (info->rank < 0) refuse(KILN_ERROR_INVALID_ARGUMENT, "'{}' has no known rank, so no dims", info->name);
    if (capacity < info->dims.size())
      refuse(KILN_ERROR_BUFFER_TOO_SMALL, "'{}' has rank {}, the dims array holds {}", info->name,
             info->dims.size(), capacity);
    if (!info->dims.empty()) require(dims, "dims");
    for (size_t i = 0; i < info->dims.size(); ++i) dims[i] = info->dims[i];
  });
}

kiln_status kiln_tensor_info_dim_name(const kiln_tensor_info* info, size_t axis, const char** name) {
  return guarded(__func__, [&] {
    require(info, "info");
    require(name, "name");
    if (axis >= info->dim_names.size())
      refuse(KILN_ERROR_INVALID_ARGUMENT, "axis {} of '{}', which has rank {}", axis, info->name, info->rank);
    *name = info->dim_names[axis].c_str();
  });
}

}  // extern "C"
