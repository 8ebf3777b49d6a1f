#include "serve/ci_routes.h"

#include <unistd.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>

#include "serve/gate.h"
#include "serve/http_reply.h"
#include "serve/json_fields.h"
#include "serve/job_queue.h"
#include "serve/web_page.h"
#include "spec/tensor_file.h"
#include "support/error.h"
#include "support/mapped_file.h"

namespace kiln::serve {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr size_t kMaxTensorBytes = size_t(1) << 30;

// A job as the list shows it: no request or log (GET /v1/jobs/{id} has them), its reports' URLs.
json job_summary(const Job& j) {
  const json targets = j.results.is_object() ? j.results.value("targets", json::array()) : json::array();
  json reports = json::object();
  for (const json& t : targets)
    if (t.is_object() && t.contains("reports") && t["reports"].is_object())
      for (const auto& [name, sha] : t["reports"].items())
        reports[name] = "/v1/jobs/" + std::to_string(j.id) + "/reports/" + name;
  return {{"job", j.id}, {"model", j.spec.model}, {"version", j.spec.version}, {"state", job_state_name(j.state)},
          {"attempt", j.attempt}, {"created", j.created}, {"started", j.started}, {"finished", j.finished},
          {"targets", targets}, {"reports", reports}};
}

class CiRoutes {
 public:
  CiRoutes(const ServiceStores& stores, Authorize authorize)
      : stores_(stores), authorize_(std::move(authorize)), queue_(stores.open_queue()) {}

  // POST /v1/tensors: a TensorProto file (as kiln run reads input_N.pb), checked by kiln's reader
  // and kept in the content store; compile requests name it by its sha256 (quantize.calibrate).
  void upload_tensor(const httplib::Request& req, httplib::Response& res) {
    authorize_(req, TokenScope::kWrite);
    if (req.body.size() > kMaxTensorBytes) throw HttpError{413, "a tensor upload is capped at 1 GiB"};
    if (req.body.empty()) throw HttpError{400, "the body must be a TensorProto file (input_N.pb)"};
    // kiln's reader takes a file: the bytes go to a private temporary one under DATA/work.
    const fs::path tmp = stores_.data / "work" /
                         fmt::format("tensor-upload-{}-{}.pb", getpid(), counter_.fetch_add(1));
    fs::create_directories(tmp.parent_path());
    write_file_atomically(tmp, req.body);
    std::string name;
    RtValue v;
    try {
      v = read_value_file(tmp, TypeInfo::Kind::kTensor, &name);
    } catch (const Error& e) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw HttpError{400, std::string("not a TensorProto file: ") + e.what()};
    }
    std::error_code ec;
    fs::remove(tmp, ec);
    const std::string sha = stores_.content->put(req.body);
    reply(res, 201, {{"sha256", sha}, {"bytes", req.body.size()}, {"name", name},
                     {"datatype", std::string(dtype_name(v.tensor.dtype()))}, {"shape", v.tensor.dims()}});
  }

  // GET /v1/jobs?limit=N: the newest N jobs (default 50, at most 500), newest first.
  void list_jobs(const httplib::Request& req, httplib::Response& res) {
    authorize_(req, TokenScope::kRead);
    int limit = 50;
    if (req.has_param("limit")) {
      const std::string l = req.get_param_value("limit");
      if (l.empty() || l.size() > 3 || l.find_first_not_of("0123456789") != std::string::npos || std::stoi(l) < 1 ||
          std::stoi(l) > 500)
        throw HttpError{400, "limit must be 1-500"};
      limit = std::stoi(l);
    }
    std::vector<Job> jobs;
    {
      std::lock_guard<std::mutex> lock(queue_mu_);
      jobs = queue_->recent_jobs(limit);
    }
    json out = json::array();
    for (const Job& j : jobs) out.push_back(job_summary(j));
    reply(res, 200, {{"jobs", out}});
  }

  // GET /v1/jobs/{id}/reports/{name}: a report page the job made (kiln analyze's, "analyze").
  void report(const httplib::Request& req, httplib::Response& res) {
    authorize_(req, TokenScope::kRead);
    std::optional<Job> j;
    {
      std::lock_guard<std::mutex> lock(queue_mu_);
      j = queue_->job(std::stoll(req.matches[1]));
    }
    if (!j) throw HttpError{404, "no job " + std::string(req.matches[1])};
    const std::string name = req.matches[2];
    const json targets = j->results.is_object() ? j->results.value("targets", json::array()) : json::array();
    for (const json& t : targets) {
      if (!t.is_object() || !t.contains("reports") || !t["reports"].contains(name)) continue;
      res.status = 200;
      res.set_content(stores_.content->get(t["reports"][name].get<std::string>()), "text/html; charset=utf-8");
      return;
    }
    throw HttpError{404, "job " + std::to_string(j->id) + " has no report '" + name.substr(0, 100) + "'"};
  }

  // PUT /v1/models/{name}/aliases/{alias} with {"version": N, "gate": {...}}: moved only when the
  // gate passes on the jobs' stored results (serve/gate.h); an admin token may move it without one.
  void set_alias(const httplib::Request& req, httplib::Response& res) {
    const TokenScope scope = authorize_(req, TokenScope::kWrite);
    const std::string name = req.matches[1], alias = req.matches[2];
    check_model_name(name);
    check_alias_name(alias);
    const json body = json::parse(req.body, nullptr, false);
    if (!body.is_object() || !body.contains("version") || !body["version"].is_number_integer())
      throw HttpError{400, "the body must be {\"version\": N, \"gate\": {...}}"};
    for (const auto& [k, v] : body.items())
      if (k != "version" && k != "gate") throw HttpError{400, "unknown field '" + k.substr(0, 100) + "' (known: version, gate)"};
    const int64_t version = body["version"].get<int64_t>();
    if (!stores_.registry->version(name, version))
      throw HttpError{404, "model '" + name + "' has no version " + std::to_string(version)};
    if (!body.contains("gate")) {
      if (scope != TokenScope::kAdmin)
        throw HttpError{403, "an alias moves through a gate: {\"version\": N, \"gate\": {\"job\": J, ...}} (kiln ci "
                             "--promote), or with an admin token"};
      stores_.registry->set_alias(name, alias, version);
      reply(res, 200, {{"name", name}, {"alias", alias}, {"version", version}, {"gate", "forced (admin token)"}});
      return;
    }
    std::lock_guard<std::mutex> lock(queue_mu_);  // the verdict and the move, one at a time
    const PromoteOutcome p = promote_through_gate(*stores_.registry, *queue_, name, alias, version, body["gate"]);
    if (p.status != 200) {
      json err = {{"error", p.error}};
      if (!p.verdict.is_null()) err["gate"] = p.verdict;
      reply(res, p.status, err);
      return;
    }
    reply(res, 200, {{"name", name}, {"alias", alias}, {"version", version}, {"gate", p.verdict}});
  }

  // PUT /v1/models/{name}/aliases/{alias}/policy with {"tolerance": {...}, "latency_regression": X}
  // (admin): the least strict thresholds a gate moving the alias may use; {} removes the policy.
  // GET (read) answers it, null when there is none.
  void alias_policy(const httplib::Request& req, httplib::Response& res, bool set) {
    authorize_(req, set ? TokenScope::kAdmin : TokenScope::kRead);
    const std::string name = req.matches[1], alias = req.matches[2];
    check_model_name(name);
    check_alias_name(alias);
    if (stores_.registry->versions(name).empty()) throw HttpError{404, "no model '" + name + "'"};
    if (set) {
      const json body = json::parse(req.body, nullptr, false);
      if (!body.is_object())
        throw HttpError{400, "the body must be {\"tolerance\": {\"max_abs\": X, \"min_cosine\": Y}, "
                             "\"latency_regression\": Z} (each optional; {} removes the policy)"};
      try {
        check_known_fields(body, {"tolerance", "latency_regression"}, "policy");
      } catch (const Error& e) {
        throw HttpError{400, e.what()};
      }
      GateThresholds t;
      try {
        t = parse_gate_thresholds(body);
      } catch (const Error& e) {
        throw HttpError{400, std::string("policy: ") + e.what()};
      }
      const bool none = !t.max_abs && !t.min_cosine && !t.latency_regression;
      stores_.registry->set_alias_policy(name, alias, none ? "" : gate_thresholds_json(t).dump());
    }
    const auto policies = stores_.registry->alias_policies(name);
    const auto p = policies.find(alias);
    reply(res, 200, {{"name", name}, {"alias", alias}, {"policy", p == policies.end() ? json() : json::parse(p->second)}});
  }

 private:
  const ServiceStores& stores_;
  Authorize authorize_;
  std::mutex queue_mu_;               // queue_ is one connection: one request at a time
  std::unique_ptr<JobQueue> queue_;
  std::atomic<uint64_t> counter_{0};
};

}  // namespace

void add_ci_routes(httplib::Server& server, const ServiceStores& stores, Authorize authorize) {
  auto routes = std::make_shared<CiRoutes>(stores, std::move(authorize));
  server.Post("/v1/tensors", guarded([routes](const auto& req, auto& res) { routes->upload_tensor(req, res); }));
  server.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(web_page_html()), "text/html; charset=utf-8");
  });
  server.Get("/v1/jobs", guarded([routes](const auto& req, auto& res) { routes->list_jobs(req, res); }));
  server.Get(R"(/v1/jobs/([0-9]{1,18})/reports/([a-z]{1,32}))",
             guarded([routes](const auto& req, auto& res) { routes->report(req, res); }));
  server.Put(R"(/v1/models/([^/]+)/aliases/([^/]+))",
             guarded([routes](const auto& req, auto& res) { routes->set_alias(req, res); }));
  server.Put(R"(/v1/models/([^/]+)/aliases/([^/]+)/policy)",
             guarded([routes](const auto& req, auto& res) { routes->alias_policy(req, res, true); }));
  server.Get(R"(/v1/models/([^/]+)/aliases/([^/]+)/policy)",
             guarded([routes](const auto& req, auto& res) { routes->alias_policy(req, res, false); }));
}

}  // namespace kiln::serve
