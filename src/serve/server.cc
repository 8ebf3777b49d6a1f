#include "serve/server.h"

#include <httplib.h>

#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>

#include "ir/graph.h"
#include "onnx/import.h"
#include "runtime/session.h"
#include "serve/inference.h"
#include "serve/model_blobs.h"
#include "support/sha256.h"
#include "serve/sqlite_store.h"
#include "serve/tokens.h"
#include "support/error.h"

namespace kiln::serve {

namespace {

using json = nlohmann::json;
using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;

constexpr size_t kMaxUploadBytes = size_t(2) << 30;

// A refusal with its HTTP status.
struct HttpError {
  int status;
  std::string message;
};

void reply(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace) + "\n", "application/json");
}

// Every handler's errors as JSON {"error": one line}: bad input 4xx, kiln's bugs 500.
Handler guarded(Handler h) {
  return [h](const httplib::Request& req, httplib::Response& res) {
    try {
      h(req, res);
    } catch (const HttpError& e) {
      reply(res, e.status, {{"error", e.message}});
    } catch (const Error& e) {
      const bool bad = e.kind() == ErrorKind::kBadModel || e.kind() == ErrorKind::kBadInput ||
                       e.kind() == ErrorKind::kUnsupported;
      reply(res, bad ? 400 : 500, {{"error", e.what()}});
    } catch (const std::exception& e) {
      reply(res, 500, {{"error", std::string("internal error (a bug in kiln): ") + e.what()}});
    }
  };
}

json version_json(const ModelVersion& v) {
  return {{"name", v.name}, {"version", v.version}, {"sha256", v.sha256}, {"bytes", v.bytes}, {"created", v.created}};
}

json values_json(const std::vector<Value*>& values) {
  json out = json::array();
  for (const Value* v : values)
    if (!v->is_constant()) out.push_back({{"name", v->name}, {"type", v->type.to_string()}});
  return out;
}

class Service {
 public:
  explicit Service(const ServeOptions& opts)
      : store_(open_data_registry(opts.data)), blobs_(opts.data) {}

  // The token's scope must allow `need`: 401 without a known token, 403 with too small a scope.
  void authorize(const httplib::Request& req, TokenScope need) {
    const std::string h = req.get_header_value("Authorization");
    if (h.rfind("Bearer ", 0) != 0) throw HttpError{401, "an Authorization: Bearer token is needed (kiln token create)"};
    const auto scope = scope_of_token(*store_, h.substr(7));
    if (!scope) throw HttpError{401, "unknown token"};
    if (!scope_allows(*scope, need))
      throw HttpError{403, std::string("the token's scope is ") + scope_name(*scope) + ", this needs " + scope_name(need)};
  }

  // POST /v1/models/{name}: the bytes go through kiln's loader and checks, as `kiln inspect` does.
  void upload(const httplib::Request& req, httplib::Response& res) {
    authorize(req, TokenScope::kWrite);
    const std::string name = req.matches[1];
    check_model_name(name);
    Model m = load_model_from_bytes(req.body, blobs_.empty_dir());
    prepare_model(m);
    const std::string sha = sha256_hex(req.body);
    blobs_.put(sha, req.body);
    bool created = false;
    const ModelVersion v = store_->add_version(name, sha, static_cast<int64_t>(req.body.size()), &created);
    json body = version_json(v);
    body["created_now"] = created;
    reply(res, created ? 201 : 200, body);
  }

  void list(const httplib::Request& req, httplib::Response& res) {
    authorize(req, TokenScope::kRead);
    json models = json::array();
    for (const std::string& name : store_->model_names()) {
      json versions = json::array();
      for (const ModelVersion& v : store_->versions(name)) versions.push_back(version_json(v));
      models.push_back({{"name", name}, {"versions", versions}});
    }
    reply(res, 200, {{"models", models}});
  }

  // GET /v1/models/{name}/versions/{v}: the version and what kiln infers of it.
  void show(const httplib::Request& req, httplib::Response& res) {
    authorize(req, TokenScope::kRead);
    const std::string name = req.matches[1];
    const int64_t number = std::stoll(req.matches[2]);
    const auto v = store_->version(name, number);
    if (!v) throw HttpError{404, "model '" + name + "' has no version " + std::to_string(number)};
    Model m = load_model_from_bytes(blobs_.get(v->sha256), blobs_.empty_dir());
    prepare_model(m);
    json body = version_json(*v);
    body["producer"] = m.producer_name;
    body["inputs"] = values_json(m.graph->inputs);
    body["outputs"] = values_json(m.graph->outputs);
    body["nodes"] = m.graph->nodes().size();
    reply(res, 200, body);
  }

  // POST /v2/models/{name}[/versions/{v}]/infer: the Open Inference Protocol's JSON tensors, on
  // the fast engine (the newest version when none is named).
  void run(const httplib::Request& req, httplib::Response& res) {
    authorize(req, TokenScope::kRead);
    const std::string name = req.matches[1];
    std::optional<ModelVersion> v;
    if (req.matches.size() > 2 && req.matches[2].matched) {
      v = store_->version(name, std::stoll(req.matches[2]));
    } else {
      const auto all = store_->versions(name);
      if (!all.empty()) v = all.back();
    }
    if (!v) throw HttpError{404, "no model '" + name + "'" + (req.matches.size() > 2 && req.matches[2].matched
                                                                  ? " version " + std::string(req.matches[2])
                                                                  : "")};
    const json request = json::parse(req.body, nullptr, false);
    if (request.is_discarded()) throw HttpError{400, "the request body is not JSON"};
    engine::CompiledModel& model = sessions_.get(v->name, v->version, [&] {
      Model m = load_model_from_bytes(blobs_.get(v->sha256), blobs_.empty_dir());
      return m;
    });
    json body = infer(model, request);
    body["model_name"] = v->name;
    body["model_version"] = std::to_string(v->version);
    if (request.contains("id")) body["id"] = request["id"];
    reply(res, 200, body);
  }

 private:
  std::unique_ptr<RegistryStore> store_;
  ModelBlobs blobs_;
  InferenceSessions sessions_;
};

}  // namespace

void run_server(const ServeOptions& opts) {
  Service service(opts);
  httplib::Server server;
  server.set_payload_max_length(kMaxUploadBytes);
  server.Get("/v2/health/live", guarded([](const auto&, auto& res) { reply(res, 200, {{"live", true}}); }));
  server.Get("/v2/health/ready", guarded([](const auto&, auto& res) { reply(res, 200, {{"ready", true}}); }));
  server.Post(R"(/v1/models/([^/]+))", guarded([&](const auto& req, auto& res) { service.upload(req, res); }));
  server.Get("/v1/models", guarded([&](const auto& req, auto& res) { service.list(req, res); }));
  server.Get(R"(/v1/models/([^/]+)/versions/([0-9]{1,18}))",
             guarded([&](const auto& req, auto& res) { service.show(req, res); }));
  server.Post(R"(/v2/models/([^/]+)(?:/versions/([0-9]{1,18}))?/infer)",
              guarded([&](const auto& req, auto& res) { service.run(req, res); }));
  if (!server.bind_to_port(opts.host, opts.port))
    fail(ErrorKind::kBadInput, "--listen {}:{}: cannot listen there (in use, or not this machine's address)",
         opts.host, opts.port);
  std::cerr << "kiln serve: listening on http://" << opts.host << ":" << opts.port << " (data " << opts.data.string()
            << ")" << std::endl;
  server.listen_after_bind();
}

}  // namespace kiln::serve
