// Where `kiln ci` runs a pipeline's compile jobs: on a kiln serve (HTTP, its registry, workers
// and aliases) or here (a registry and job queue in a local data folder, the jobs run by a
// JobWorker of this process: the same child processes, compile cache and results as the
// server's workers).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "serve/gate.h"
#include "serve/job_worker.h"

namespace kiln::serve {

class CiBackend {
 public:
  virtual ~CiBackend() = default;
  // The version of `name` holding these .onnx bytes (made when new); fails (kBadInput/kBadModel)
  // with the loader's message for a model kiln refuses.
  virtual int64_t upload_model(const std::string& name, const std::string& bytes) = 0;
  // A TensorProto file's sha256 once stored (calibration sets).
  virtual std::string upload_tensor(const std::string& bytes) = 0;
  virtual std::optional<int64_t> alias_version(const std::string& name, const std::string& alias) = 0;
  // Queues a compile of (name, version) and waits for it; returns the job (GET /v1/jobs/{id}'s JSON).
  virtual nlohmann::json compile(const std::string& name, int64_t version, const nlohmann::json& request) = 0;
  virtual PromoteOutcome promote(const std::string& name, const std::string& alias, int64_t version,
                                 const nlohmann::json& gate) = 0;
  virtual std::string where() const = 0;  // for the report: "http://..." or "local DIR"
};

// `base` http://HOST:PORT, the token of write scope (promote) or read.
std::unique_ptr<CiBackend> server_backend(const std::string& base, const std::string& token, int job_timeout_s);
// The registry and queue in `data` (made when missing), jobs run in this process by a worker.
std::unique_ptr<CiBackend> local_backend(const std::filesystem::path& data, const WorkerOptions& worker);

}  // namespace kiln::serve
