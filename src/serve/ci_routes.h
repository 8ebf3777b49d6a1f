// The routes of kiln serve's CI flow (docs/service.md): calibration tensors uploaded for quantized
// compile jobs (POST /v1/tensors), aliases moved only through a gate (PUT
// /v1/models/{name}/aliases/{alias}: serve/gate.h), the job list (GET /v1/jobs) and a job's
// report pages (GET /v1/jobs/{id}/reports/{name}), and the web page that shows them (GET /).
#pragma once

#include <httplib.h>

#include <functional>

#include "serve/registry_store.h"
#include "serve/service_stores.h"

namespace kiln::serve {

// Checks the request's Bearer token allows `need` (HttpError 401/403 otherwise); returns its scope.
using Authorize = std::function<TokenScope(const httplib::Request&, TokenScope need)>;

// Registers the routes on `server`; they use `stores` (and a job queue connection of their own)
// for as long as the server runs.
void add_ci_routes(httplib::Server& server, const ServiceStores& stores, Authorize authorize);

}  // namespace kiln::serve
