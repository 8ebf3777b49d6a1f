#include "serve/ci_backends.h"

#include <chrono>
#include <thread>

#include "onnx/import.h"
#include "runtime/session.h"
#include "serve/http_client.h"
#include "serve/service_stores.h"
#include "support/error.h"

namespace kiln::serve {

namespace {

using json = nlohmann::json;

class ServerBackend final : public CiBackend {
 public:
  ServerBackend(const std::string& base, const std::string& token, int job_timeout_s)
      : http_(base, token), job_timeout_s_(job_timeout_s) {}

  int64_t upload_model(const std::string& name, const std::string& bytes) override {
    return call("POST", "/v1/models/" + name, bytes, "application/octet-stream", {200, 201})["version"];
  }
  std::string upload_tensor(const std::string& bytes) override {
    return call("POST", "/v1/tensors", bytes, "application/octet-stream", {201})["sha256"];
  }
  std::optional<int64_t> alias_version(const std::string& name, const std::string& alias) override {
    const json m = call("GET", "/v1/models/" + name, "", "", {200});
    const json a = m.value("aliases", json::object());
    if (!a.contains(alias)) return std::nullopt;
    return a[alias].get<int64_t>();
  }
  json compile(const std::string& name, int64_t version, const json& request) override {
    const json q = call("POST", "/v1/models/" + name + "/versions/" + std::to_string(version) + "/compile",
                        request.dump(), "application/json", {202});
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(job_timeout_s_);
    for (;;) {
      json j = call("GET", "/v1/jobs/" + std::to_string(q["job"].get<int64_t>()), "", "", {200});
      const std::string s = j.value("state", "");
      if (s != "queued" && s != "running") return j;
      KILN_CHECK(std::chrono::steady_clock::now() < end, ErrorKind::kRuntime, "job {} still {} after {} s",
                 q["job"].get<int64_t>(), s, job_timeout_s_);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }
  PromoteOutcome promote(const std::string& name, const std::string& alias, int64_t version, const json& gate) override {
    const HttpResult r = http_.request("PUT", "/v1/models/" + name + "/aliases/" + alias,
                                       json{{"version", version}, {"gate", gate}}.dump());
    KILN_CHECK(r.status != 0, ErrorKind::kRuntime, "{}", r.error);
    const json body = json::parse(r.body, nullptr, false);
    PromoteOutcome p;
    p.status = r.status;
    if (body.is_object()) {
      p.error = body.value("error", std::string());
      p.verdict = body.value("gate", json());
    }
    return p;
  }
  std::string where() const override { return http_.base(); }

 private:
  json call(const std::string& method, const std::string& path, const std::string& body, const std::string& type,
            std::initializer_list<int> ok) {
    const HttpResult r = http_.request(method, path, body, type.empty() ? "application/json" : type);
    KILN_CHECK(r.status != 0, ErrorKind::kRuntime, "{}", r.error);
    const json j = json::parse(r.body, nullptr, false);
    for (int s : ok)
      if (r.status == s) return j;
    const std::string why = j.is_object() ? j.value("error", r.body) : r.body.substr(0, 300);
    // The server's 4xx are the pipeline's fault (a model it refuses, a bad request, a token).
    fail(r.status >= 400 && r.status < 500 ? ErrorKind::kBadInput : ErrorKind::kRuntime, "{} {}: {} {}", method, path,
         r.status, why);
  }

  HttpClient http_;
  int job_timeout_s_;
};

class LocalBackend final : public CiBackend {
 public:
  LocalBackend(const std::filesystem::path& data, const WorkerOptions& worker)
      : stores_(open_stores({.data = data})), queue_(stores_.open_queue()), worker_(stores_, worker) {}

  int64_t upload_model(const std::string& name, const std::string& bytes) override {
    check_model_name(name);
    Model m = load_model_from_bytes(bytes, stores_.empty_dir);  // what kiln serve's upload checks
    prepare_model(m);
    const std::string sha = stores_.content->put(bytes);
    bool created = false;
    return stores_.registry->add_version(name, sha, static_cast<int64_t>(bytes.size()), &created).version;
  }
  std::string upload_tensor(const std::string& bytes) override { return stores_.content->put(bytes); }
  std::optional<int64_t> alias_version(const std::string& name, const std::string& alias) override {
    const auto a = stores_.registry->aliases(name);
    if (auto it = a.find(alias); it != a.end()) return it->second;
    return std::nullopt;
  }
  json compile(const std::string& name, int64_t version, const json& request) override {
    const auto v = stores_.registry->version(name, version);
    KILN_CHECK(v.has_value(), ErrorKind::kInternal, "no version {} of {}", version, name);
    const CompileRequest r = parse_compile_request(request);
    const int64_t id = queue_->enqueue(
        {.model = name, .version = version, .model_sha256 = v->sha256, .request = compile_request_json(r)});
    for (;;) {  // this worker runs the queue's jobs, oldest first, until ours is done
      const auto j = queue_->job(id);
      if (j && j->state != JobState::kQueued && j->state != JobState::kRunning) {
        const json targets = j->results.is_object() ? j->results.value("targets", json::array()) : json::array();
        return {{"job", j->id}, {"state", job_state_name(j->state)}, {"targets", targets}, {"log", j->log}};
      }
      if (!worker_.run_one()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  PromoteOutcome promote(const std::string& name, const std::string& alias, int64_t version, const json& gate) override {
    return promote_through_gate(*stores_.registry, *queue_, name, alias, version, gate);
  }
  std::string where() const override { return "local " + stores_.data.string(); }

 private:
  ServiceStores stores_;
  std::unique_ptr<JobQueue> queue_;
  JobWorker worker_;
};

}  // namespace

std::unique_ptr<CiBackend> server_backend(const std::string& base, const std::string& token, int job_timeout_s) {
  return std::make_unique<ServerBackend>(base, token, job_timeout_s);
}

std::unique_ptr<CiBackend> local_backend(const std::filesystem::path& data, const WorkerOptions& worker) {
  return std::make_unique<LocalBackend>(data, worker);
}

}  // namespace kiln::serve
