#include "serve/server.h"

#include <httplib.h>

#include <atomic>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "ir/graph.h"
#include "onnx/import.h"
#include "runtime/session.h"
#include "serve/compile_request.h"
#include "serve/http_reply.h"
#include "serve/inference_service.h"
#include "serve/metrics.h"
#include "serve/request_deadline.h"
#include "serve/server_metrics.h"
#include "serve/service_stores.h"
#include "serve/tokens.h"
#include "serve/ci_routes.h"
#include "serve/http_reply.h"
#include "serve/model_quantize.h"
#include "support/error.h"

namespace kiln::serve {

namespace {

using json = nlohmann::json;
constexpr size_t kMaxUploadBytes = size_t(2) << 30;

json version_json(const ModelVersion& v) {
  return {{"name", v.name}, {"version", v.version}, {"sha256", v.sha256}, {"bytes", v.bytes}, {"created", v.created}};
}

json values_json(const std::vector<Value*>& values) {
  json out = json::array();
  for (const Value* v : values)
    if (!v->is_constant()) out.push_back({{"name", v->name}, {"type", v->type.to_string()}});
  return out;
}

// Parameters as kiln inspect counts them at the top level: the initializers' elements and the
// tensors of Constant nodes (where exporters such as paddle2onnx keep the weights).
int64_t parameter_count(const Model& m) {
  int64_t n = 0;
  for (const Value* v : m.graph->initializers) n += v->data.numel();
  for (const auto& node : m.graph->nodes())
    if (node->domain.empty() && node->op_type == "Constant")
      for (const auto& a : node->attrs)
        if (a.kind == AttrKind::kTensor) n += a.t.numel();
  return n;
}

json job_json(const Job& j) {
  json targets = j.results.is_object() && j.results.contains("targets") ? j.results["targets"] : json::array();
  json body = {{"job", j.id}, {"model", j.spec.model}, {"version", j.spec.version},
               {"state", job_state_name(j.state)}, {"attempt", j.attempt}, {"worker", j.worker},
               {"created", j.created}, {"started", j.started}, {"finished", j.finished},
               {"request", j.spec.request}, {"targets", targets}, {"log", j.log}};
  if (j.results.is_object() && j.results.contains("error")) body["error"] = j.results["error"];
  return body;
}

class Service {
 public:
  explicit Service(const ServeOptions& opts)
      : stores_(open_stores({.db = opts.db, .data = opts.data})),
        queue_(stores_.open_queue()),
        inference_(stores_,
                   {.batching = opts.batching,
                    .request_time_limit_s = opts.request_time_limit_s,
                    .open_inference = opts.open_inference,
                    .splits = opts.splits,
                    .max_infer_bytes = uint64_t(opts.max_infer_mb) << 20,
                    .max_loaded_models = opts.max_loaded_models},
                   metrics_,
                   [this](const httplib::Request& req, TokenScope need) { authorize(req, need); }) {}

  Metrics& metrics() { return metrics_; }
  JobQueue& queue() { return *queue_; }
  InferenceService& inference() { return inference_; }

  const ServiceStores& stores() const { return stores_; }

  // The token's scope must allow `need`: 401 without a known token, 403 with too small a scope.
  TokenScope authorize(const httplib::Request& req, TokenScope need) {
    const std::string h = req.get_header_value("Authorization");
    if (h.rfind("Bearer ", 0) != 0) throw HttpError{401, "an Authorization: Bearer token is needed (kiln token create)"};
    const auto scope = scope_of_token(*stores_.registry, h.substr(7));
    if (!scope) throw HttpError{401, "unknown token"};
    if (!scope_allows(*scope, need))
      throw HttpError{403, std::string("the token's scope is ") + scope_name(*scope) + ", this needs " + scope_name(need)};
    return *scope;
  }

  // POST /v1/models/{name}: the bytes go through kiln's loader and checks, as `kiln inspect` does.
  void upload(const httplib::Request& req, httplib::Response& res) {
    authorize(req, TokenScope::kWrite);
    const std::string name = req.matches[1];
    check_model_name(name);
    Model m = load_model_from_bytes(req.body, stores_.empty_dir);
    prepare_model(m);
    const std::string sha = stores_.content->put(req.body);
    bool created = false;
    const ModelVersion v = stores_.registry->add_version(name, sha, static_cast<int64_t>(req.body.size()), &created);
    json body = version_json(v);
    body["created_now"] = created;
    reply(res, created ? 201 : 200, body);
  }

  void list(const httplib::Request& req, httplib::Response& res) {
    authorize(req, TokenScope::kRead);
    json models = json::array();
    for (const std::string& name : stores_.registry->model_names()) {
      json versions = json::array();
      for (const ModelVersion& v : stores_.registry->versions(name)) versions.push_back(version_json(v));
      models.push_back({{"name", name}, {"versions", versions}});
    }
    reply(res, 200, {{"models", models}});
  }

  // A version by its number or an alias of it; 404 when there is none.
  ModelVersion resolve(const std::string& name, const std::string& ref) {
    std::optional<ModelVersion> v;
    if (!ref.empty() && ref.size() <= 18 && ref.find_first_not_of("0123456789") == std::string::npos) {
      v = stores_.registry->version(name, std::stoll(ref));
    } else {
      const auto aliases = stores_.registry->aliases(name);
      if (auto a = aliases.find(ref); a != aliases.end()) v = stores_.registry->version(name, a->second);
    }
    if (!v) throw HttpError{404, "model '" + name + "' has no version or alias '" + ref.substr(0, 140) + "'"};
    return *v;
  }

  // GET /v1/models/{name}/versions/{v}: the version and what kiln infers of it (kiln inspect's
  // inputs, outputs, opsets and parameters); {v} is a number or an alias.
  void show(const httplib::Request& req, httplib::Response& res) {
    authorize(req, TokenScope::kRead);
    const ModelVersion v = resolve(req.matches[1], req.matches[2]);
    Model m = load_model_from_bytes(stores_.content->get(v.sha256), stores_.empty_dir);
    prepare_model(m);
    json body = version_json(v);
    body["producer"] = m.producer_name;
    body["inputs"] = values_json(m.graph->inputs);
    body["outputs"] = values_json(m.graph->outputs);
    body["nodes"] = m.graph->nodes().size();
    json opsets = json::object();
    for (const auto& [d, n] : m.opsets) opsets[d.empty() ? "ai.onnx" : d] = n;
    body["opsets"] = opsets;
    body["parameters"] = parameter_count(m);
    reply(res, 200, body);
  }

  // GET /v1/models/{name}: its versions, aliases and the aliases' policies.
  void model(const httplib::Request& req, httplib::Response& res) {
    authorize(req, TokenScope::kRead);
    const std::string name = req.matches[1];
    json versions = json::array();
    for (const ModelVersion& v : stores_.registry->versions(name)) versions.push_back(version_json(v));
    if (versions.empty()) throw HttpError{404, "no model '" + name.substr(0, 140) + "'"};
    json policies = json::object();
    for (const auto& [alias, text] : stores_.registry->alias_policies(name)) policies[alias] = json::parse(text);
    reply(res, 200, {{"name", name}, {"versions", versions}, {"aliases", stores_.registry->aliases(name)},
                     {"alias_policies", policies}});
  }

  // POST /v1/models/{name}/versions/{v}/compile: checks the request, queues a job (202).
  void compile(const httplib::Request& req, httplib::Response& res) {
    authorize(req, TokenScope::kWrite);
    const ModelVersion v = resolve(req.matches[1], req.matches[2]);
    const json body = json::parse(req.body, nullptr, false);
    if (body.is_discarded()) throw HttpError{400, "the request body is not JSON"};
    const CompileRequest r = parse_compile_request(body);
    check_quantize_request(stores_, v.sha256, r);
    const int64_t id = queue_->enqueue(
        {.model = v.name, .version = v.version, .model_sha256 = v.sha256, .request = compile_request_json(r)});
    reply(res, 202, {{"job", id}, {"state", "queued"}, {"model", v.name}, {"version", v.version},
                     {"url", "/v1/jobs/" + std::to_string(id)}});
  }

  Job find_job(const std::string& id_text) {
    const auto j = queue_->job(std::stoll(id_text));
    if (!j) throw HttpError{404, "no job " + id_text};
    return *j;
  }

  // GET /v1/jobs/{id}: the state, the log and per target the results.
  void job(const httplib::Request& req, httplib::Response& res) {
    authorize(req, TokenScope::kRead);
    reply(res, 200, job_json(find_job(req.matches[1])));
  }

  // GET /v1/jobs/{id}/artifacts/{target}: the artifact's bytes.
  void artifact(const httplib::Request& req, httplib::Response& res) {
    authorize(req, TokenScope::kRead);
    const Job j = find_job(req.matches[1]);
    const std::string target = req.matches[2];
    if (j.state == JobState::kQueued || j.state == JobState::kRunning)
      throw HttpError{409, "job " + std::to_string(j.id) + " is " + job_state_name(j.state) + ": no artifact yet"};
    const json targets = job_json(j)["targets"];
    for (const json& t : targets) {
      if (t.value("target", "") != target) continue;
      if (!t.contains("artifact"))
        throw HttpError{404, "job " + std::to_string(j.id) + " made no artifact for " + target + ": " +
                                 t.value("error", std::string("failed"))};
      const std::string sha = t["artifact"]["sha256"];
      res.status = 200;
      res.set_header("Content-Disposition", "attachment; filename=\"" + j.spec.model + "-" +
                                                std::to_string(j.spec.version) + "-" + target + ".kiln\"");
      res.set_header("X-Kiln-Sha256", sha);
      res.set_content(stores_.content->get(sha), "application/octet-stream");
      return;
    }
    throw HttpError{404, "job " + std::to_string(j.id) + " has no target '" + target.substr(0, 140) + "'"};
  }

 private:
  ServiceStores stores_;
  std::unique_ptr<JobQueue> queue_;  // the server's own connection (workers take theirs)
  Metrics metrics_;
  InferenceService inference_;
};

}  // namespace

void run_server(const ServeOptions& opts) {
  Service service(opts);
  httplib::Server server;
  server.set_payload_max_length(kMaxUploadBytes);
  server.set_read_timeout(opts.request_timeout_s, 0);
  server.set_write_timeout(opts.request_timeout_s, 0);
  // Responses go out as headers and body in two writes: without TCP_NODELAY the body waits for the
  // client's delayed ACK of the headers (40 ms on Linux) on every keep-alive request.
  server.set_tcp_nodelay(true);
  // httplib closes a keep-alive connection after 5 requests by default: under 100 clients that is
  // hundreds of reconnects a second against its listen backlog of 5, and a connection reset now
  // and then (serve_load saw one). 100 requests per connection cuts the reconnects 20-fold.
  server.set_keep_alive_max_count(100);
  // Requests block their thread while they wait for their model's batch: enough threads that
  // concurrent clients reach the batcher instead of waiting for a connection to be taken.
  server.new_task_queue = [n = opts.http_threads] { return new httplib::ThreadPool(static_cast<size_t>(n)); };
  server.Get("/v2/health/live", guarded([](const auto&, auto& res) { reply(res, 200, {{"live", true}}); }));
  server.Get("/v2/health/ready", guarded([](const auto&, auto& res) { reply(res, 200, {{"ready", true}}); }));
  server.Post(R"(/v1/models/([^/]+))", guarded([&](const auto& req, auto& res) { service.upload(req, res); }));
  server.Get("/v1/models", guarded([&](const auto& req, auto& res) { service.list(req, res); }));
  add_ci_routes(server, service.stores(), [&](const auto& req, TokenScope need) { return service.authorize(req, need); });
  server.Get(R"(/v1/models/([^/]+))", guarded([&](const auto& req, auto& res) { service.model(req, res); }));
  server.Get(R"(/v1/models/([^/]+)/versions/([^/]+))",
             guarded([&](const auto& req, auto& res) { service.show(req, res); }));
  server.Post(R"(/v1/models/([^/]+)/versions/([^/]+)/compile)",
              guarded([&](const auto& req, auto& res) { service.compile(req, res); }));
  server.Get(R"(/v1/jobs/([0-9]{1,18}))", guarded([&](const auto& req, auto& res) { service.job(req, res); }));
  server.Get(R"(/v1/jobs/([0-9]{1,18})/artifacts/([^/]+))",
             guarded([&](const auto& req, auto& res) { service.artifact(req, res); }));
  service.inference().add_routes(server);
  std::unique_ptr<RequestDeadlines> deadlines;  // made once the port is bound (below)
  add_metrics_route(server, service.metrics(), service.queue(), [&deadlines](const std::string& addr, int port) {
    if (deadlines) deadlines->answered(addr, port);
  });
  if (!server.bind_to_port(opts.host, opts.port))
    fail(ErrorKind::kBadInput, "--listen {}:{}: cannot listen there (in use, or not this machine's address)",
         opts.host, opts.port);
  deadlines = std::make_unique<RequestDeadlines>(opts.port, opts.request_time_limit_s, &service.metrics());
  // The compile workers: threads of this process, each with its own connection to the queue.
  std::atomic<bool> stop{false};
  std::vector<std::unique_ptr<JobWorker>> workers;
  std::vector<std::thread> threads;
  for (int i = 0; i < opts.workers; ++i) {
    WorkerOptions w = opts.worker;
    w.name = default_worker_name(i);
    w.on_target = compile_metrics_reporter(service.metrics());
    workers.push_back(std::make_unique<JobWorker>(service.stores(), w));
    threads.emplace_back([&stop, worker = workers.back().get()] { worker->run(stop); });
  }
  std::cerr << "kiln serve: listening on http://" << opts.host << ":" << opts.port << " (data " << opts.data.string()
            << (opts.db.empty() ? ", registry and jobs in SQLite there" : ", registry and jobs in PostgreSQL")
            << ", " << opts.workers << " compile workers)" << std::endl;
  server.listen_after_bind();
  stop = true;
  for (auto& t : threads) t.join();
}

}  // namespace kiln::serve
