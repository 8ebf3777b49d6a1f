#include "serve/inference_service.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "artifact/format/format.h"
#include "onnx/import.h"
#include "runtime/session.h"
#include "serve/binary_tensors.h"
#include "serve/http_reply.h"
#include "serve/inference.h"
#include "serve/traffic_split.h"
#include "support/error.h"

namespace kiln::serve {

namespace {

using json = nlohmann::json;

// The protocol's tensor metadata: name, datatype and shape, -1 for a dim the model leaves open.
json tensor_metadata(const std::vector<const Value*>& values) {
  json out = json::array();
  for (const Value* v : values) {
    json shape = json::array();
    if (v->type.shape)
      for (const Dim& d : *v->type.shape) shape.push_back(d.is_known() ? d.value() : -1);
    std::string datatype = "UNSUPPORTED";  // (a sequence, bfloat16 ...: infer refuses them)
    if (v->type.is_tensor()) {
      try {
        datatype = datatype_name(v->type.elem);
      } catch (const Error&) {
      }
    }
    out.push_back({{"name", v->name}, {"datatype", datatype}, {"shape", shape}});
  }
  return out;
}

std::vector<const Value*> fed_inputs(const Model& m) {
  std::vector<const Value*> out;
  for (const Value* v : m.graph->inputs)
    if (!v->is_constant()) out.push_back(v);
  return out;
}

}  // namespace

InferenceService::InferenceService(const ServiceStores& stores, InferenceOptions opts, Metrics& metrics,
                                   Authorize authorize)
    : stores_(stores), opts_(std::move(opts)), models_(opts_.batching, &metrics, opts_.max_loaded_models) {
  // --open-inference: what needs only a read token (metadata, ready, infer) needs none.
  authorize_ = [open = opts_.open_inference, authorize = std::move(authorize)](const httplib::Request& req,
                                                                             TokenScope need) {
    if (!(open && need == TokenScope::kRead)) authorize(req, need);
  };
}

void InferenceService::add_routes(httplib::Server& server) {
  // The version `ref` names (a number or an alias), or the newest; 404 when there is none.
  auto resolve = [this](const std::string& name, const std::optional<std::string>& ref) {
    std::optional<ModelVersion> v;
    if (ref) {
      if (ref->size() <= 18 && ref->find_first_not_of("0123456789") == std::string::npos) {
        v = stores_.registry->version(name, std::stoll(*ref));
      } else {
        const auto aliases = stores_.registry->aliases(name);
        if (auto a = aliases.find(*ref); a != aliases.end()) v = stores_.registry->version(name, a->second);
      }
    } else {
      const auto all = stores_.registry->versions(name);
      if (!all.empty()) v = all.back();
    }
    if (!v)
      throw HttpError{404, "no model '" + name.substr(0, 140) + "'" +
                               (ref ? " version or alias '" + ref->substr(0, 140) + "'" : std::string())};
    return *v;
  };
  // The version a route's {name} and {v} name (the newest without {v}).
  auto pick = [resolve](const httplib::Request& req) {
    const bool named = req.matches.size() > 2 && req.matches[2].matched;
    return resolve(req.matches[1], named ? std::optional<std::string>(req.matches[2]) : std::nullopt);
  };
  auto load = [this](const ModelVersion& v) {
    return [this, v] { return load_model_from_bytes(stores_.content->get(v.sha256), stores_.empty_dir); };
  };
  const std::string model = R"(/v2/models/([^/]+)(?:/versions/([^/]+))?)";

  // An infer body past the limit is refused from its Content-Length, before it is read (a body
  // without one, chunked, is held to the server's payload cap and then to this limit).
  server.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    const bool infer = req.method == "POST" && req.path.rfind("/v2/models/", 0) == 0 && req.path.size() >= 6 &&
                       req.path.compare(req.path.size() - 6, 6, "/infer") == 0;
    if (!infer || !req.has_header("Content-Length")) return httplib::Server::HandlerResponse::Unhandled;
    const std::string n = req.get_header_value("Content-Length");
    if (n.size() <= 18 && n.find_first_not_of("0123456789") == std::string::npos && !n.empty() &&
        std::stoull(n) <= opts_.max_infer_bytes)
      return httplib::Server::HandlerResponse::Unhandled;
    res.set_header("Connection", "close");
    reply(res, 413, {{"error", "the request body (Content-Length " + n.substr(0, 24) + ") is past the infer limit of " +
                                   std::to_string(opts_.max_infer_bytes) + " bytes (--max-infer-mb)"}});
    return httplib::Server::HandlerResponse::Handled;
  });

  server.Get("/v2", guarded([](const auto&, auto& res) {
               reply(res, 200, {{"name", "kiln"}, {"version", artifact::kiln_version()},
                                {"extensions", json::array({"binary_tensor_data", "model_repository"})}});
             }));

  // Metadata: from the loaded session when there is one, else from the model's file (checked and
  // inferred as kiln inspect does).
  server.Get(model, guarded([this, pick](const httplib::Request& req, httplib::Response& res) {
               authorize_(req, TokenScope::kRead);
               const ModelVersion v = pick(req);
               const bool named = req.matches[2].matched;
               json versions = json::array();
               if (named) versions.push_back(std::to_string(v.version));
               else
                 for (const ModelVersion& each : stores_.registry->versions(v.name))
                   versions.push_back(std::to_string(each.version));
               json inputs, outputs;
               if (auto b = models_.find(v.name, v.version)) {
                 inputs = tensor_metadata(b->inputs());
                 outputs = tensor_metadata(b->outputs());
               } else {
                 Model m = load_model_from_bytes(stores_.content->get(v.sha256), stores_.empty_dir);
                 prepare_model(m);
                 inputs = tensor_metadata(fed_inputs(m));
                 outputs = tensor_metadata({m.graph->outputs.begin(), m.graph->outputs.end()});
               }
               reply(res, 200, {{"name", v.name}, {"versions", versions}, {"platform", "kiln_onnx"},
                                {"inputs", inputs}, {"outputs", outputs}});
             }));

  // Ready: 200 when the version is loaded (a session made), 400 when it is not (yet).
  server.Get(model + "/ready", guarded([this, pick](const httplib::Request& req, httplib::Response& res) {
               authorize_(req, TokenScope::kRead);
               const ModelVersion v = pick(req);
               const bool ready = models_.find(v.name, v.version) != nullptr;
               json body = {{"name", v.name}, {"version", std::to_string(v.version)}, {"ready", ready}};
               if (!ready)
                 body["error"] = "model '" + v.name + "' version " + std::to_string(v.version) +
                                 " is not loaded (its first request or POST /v2/repository/models/" + v.name +
                                 "/load loads it)";
               reply(res, ready ? 200 : 400, body);
             }));

  server.Post(model + "/infer", guarded([this, pick, resolve, load](const httplib::Request& req, httplib::Response& res) {
                authorize_(req, TokenScope::kRead);
                std::optional<std::string> header_length;
                if (req.has_header(kInferenceHeaderLength)) header_length = req.get_header_value(kInferenceHeaderLength);
                if (req.body.size() > opts_.max_infer_bytes)
                  throw HttpError{413, "the request body (" + std::to_string(req.body.size()) +
                                           " bytes) is past the infer limit of " + std::to_string(opts_.max_infer_bytes) +
                                           " bytes (--max-infer-mb)"};
                const InferBody body = split_infer_body(req.body, header_length);
                const json request = json::parse(body.json.begin(), body.json.end(), nullptr, false);
                if (request.is_discarded())
                  throw HttpError{400, header_length ? "the request's JSON header is not JSON" : "the request body is not JSON"};
                // No version named and a --split for the model: one of its aliases, by share.
                const TrafficSplit* split = nullptr;
                for (const TrafficSplit& s : opts_.splits)
                  if (s.model == std::string(req.matches[1])) split = &s;
                const bool named = req.matches[2].matched;
                const std::string id = request.is_object() && request.contains("id") && request["id"].is_string()
                                           ? request["id"].get<std::string>()
                                           : std::string();
                const ModelVersion v = split && !named ? resolve(req.matches[1], pick_alias(*split, id)) : pick(req);
                auto batcher = models_.get(v.name, v.version, load(v));
                if (!batcher)
                  throw HttpError{400, "model '" + v.name + "' is unloaded: POST /v2/repository/models/" + v.name +
                                           "/load loads it"};
                InferRequest r = read_infer_request(batcher->inputs(), batcher->outputs(), request,
                                                    body.binary);
                std::future<BatchResult> done = batcher->submit(std::move(r.feeds));
                if (done.wait_for(std::chrono::seconds(opts_.request_time_limit_s)) != std::future_status::ready)
                  throw HttpError{503, "the request ran past --request-time-limit (" +
                                           std::to_string(opts_.request_time_limit_s) + " s) in the model's queue or run"};
                BatchResult result = done.get();
                if (result.error) {
                  // The run failed on these inputs (a value the model cannot take: an index out of
                  // range, a branch whose shapes do not fit): the request's fault, 400. kiln's own
                  // bugs (kInternal) stay 500.
                  try {
                    std::rethrow_exception(result.error);
                  } catch (const Error& e) {
                    if (e.kind() == ErrorKind::kRuntime)
                      throw HttpError{400, std::string("the model failed on this request's inputs: ") + e.what()};
                    throw;
                  }
                }
                std::string binary;
                json out = infer_response(batcher->outputs(), result.outputs, r, &binary);
                out["model_name"] = v.name;
                out["model_version"] = std::to_string(v.version);
                if (request.contains("id")) out["id"] = request["id"];
                res.set_header("X-Kiln-Queue-Us", std::to_string(result.queue_us));
                res.set_header("X-Kiln-Compute-Us", std::to_string(result.compute_us));
                res.set_header("X-Kiln-Batch-Size", std::to_string(result.batch_size));
                const bool any_binary = std::any_of(out["outputs"].begin(), out["outputs"].end(),
                                                    [](const json& o) { return o.contains("parameters"); });
                if (!any_binary) {
                  reply(res, 200, out);
                  return;
                }
                const std::string header = out.dump(-1, ' ', false, json::error_handler_t::replace);
                res.status = 200;
                res.set_header(kInferenceHeaderLength, std::to_string(header.size()));
                res.set_content(header + binary, "application/octet-stream");
              }));

  // The repository extension. load takes {"parameters": {"version_policy": "latest" | "all" |
  // [versions]}} (default latest); unload drops every loaded version of the name.
  server.Post(R"(/v2/repository/models/([^/]+)/load)",
              guarded([this, load](const httplib::Request& req, httplib::Response& res) {
                authorize_(req, TokenScope::kWrite);
                const std::string name = req.matches[1];
                const std::vector<ModelVersion> all = stores_.registry->versions(name);
                if (all.empty()) throw HttpError{404, "no model '" + name.substr(0, 140) + "'"};
                json policy = "latest";
                if (!req.body.empty()) {
                  const json body = json::parse(req.body, nullptr, false);
                  if (!body.is_object()) throw HttpError{400, "the body must be a JSON object"};
                  if (body.contains("parameters") && body["parameters"].is_object() &&
                      body["parameters"].contains("version_policy"))
                    policy = body["parameters"]["version_policy"];
                }
                std::vector<ModelVersion> chosen;
                if (policy == "latest") {
                  chosen.push_back(all.back());
                } else if (policy == "all") {
                  chosen = all;
                } else if (policy.is_array() && !policy.empty()) {
                  for (const json& n : policy) {
                    if (!n.is_number_integer()) throw HttpError{400, "version_policy: " + n.dump() + " is not a version"};
                    auto v = stores_.registry->version(name, n.get<int64_t>());
                    if (!v) throw HttpError{404, "model '" + name + "' has no version " + n.dump()};
                    chosen.push_back(*v);
                  }
                } else {
                  throw HttpError{400, "version_policy must be \"latest\", \"all\" or a list of versions"};
                }
                const int most = models_.max_loaded();
                if (most > 0 && chosen.size() > static_cast<size_t>(most))
                  throw HttpError{400, "version_policy loads " + std::to_string(chosen.size()) +
                                           " versions; --max-loaded-models keeps " + std::to_string(most)};
                json loaded = json::array();
                for (const ModelVersion& v : chosen) {
                  models_.get(name, v.version, load(v), /*explicit_load=*/true);
                  loaded.push_back(std::to_string(v.version));
                }
                reply(res, 200, {{"name", name}, {"loaded", loaded}});
              }));
  server.Post(R"(/v2/repository/models/([^/]+)/unload)",
              guarded([this](const httplib::Request& req, httplib::Response& res) {
                authorize_(req, TokenScope::kWrite);
                const std::string name = req.matches[1];
                if (stores_.registry->versions(name).empty())
                  throw HttpError{404, "no model '" + name.substr(0, 140) + "'"};
                reply(res, 200, {{"name", name}, {"unloaded", models_.unload(name)}});
              }));
}

}  // namespace kiln::serve
