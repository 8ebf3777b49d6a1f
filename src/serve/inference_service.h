// kiln serve's inference side, the Open Inference Protocol's /v2 routes: a model's metadata and
// readiness, infer (JSON tensors and the binary data extension) through the model's dynamic
// batcher, and the repository extension's load and unload (as Triton has them). A model served
// is a registry version, named by its number or an alias ({v} in the routes); the newest when none
// is named.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "serve/batcher.h"
#include "serve/metrics.h"
#include "serve/model_repository.h"
#include "serve/registry_store.h"
#include "serve/service_stores.h"
#include "serve/traffic_split.h"

namespace httplib {
class Server;
struct Request;
}  // namespace httplib

namespace kiln::serve {

struct InferenceOptions {
  BatchOptions batching;
  int request_time_limit_s = 300;  // the longest a request waits for its run (queue and compute)
  bool open_inference = false;     // metadata, ready and infer without a token (load/unload keep theirs)
  std::vector<TrafficSplit> splits;  // A/B: a model's unversioned requests shared between aliases
  uint64_t max_infer_bytes = uint64_t(256) << 20;  // an infer request's body (uploads have their own cap)
  int max_loaded_models = 0;  // versions loaded at once; past it the least recently used is unloaded (0: no limit)
};

class InferenceService {
 public:
  // `authorize` throws (HttpError 401/403) unless the request's token has the scope.
  using Authorize = std::function<void(const httplib::Request&, TokenScope)>;
  InferenceService(const ServiceStores& stores, InferenceOptions opts, Metrics& metrics, Authorize authorize);

  // GET /v2/models/{name}[/versions/{v}], .../ready, POST .../infer, POST
  // /v2/repository/models/{name}/load and /unload; and the server's pre-routing handler, which
  // refuses an infer whose Content-Length is past max_infer_bytes (413) before its body is read.
  void add_routes(httplib::Server& server);

  ModelRepository& models() { return models_; }

 private:
  const ServiceStores& stores_;
  InferenceOptions opts_;
  Authorize authorize_;
  ModelRepository models_;
};

}  // namespace kiln::serve
