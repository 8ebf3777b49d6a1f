// kiln serve's HTTP server (cpp-httplib): the registry's management endpoints behind Bearer
// tokens, compile jobs and their artifacts, the Open Inference Protocol's health and inference
// endpoints, and --workers compile workers in threads. docs/service.md lists the routes.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "serve/batcher.h"
#include "serve/job_worker.h"
#include "serve/traffic_split.h"

namespace kiln::serve {

struct ServeOptions {
  std::filesystem::path data;     // the data folder: registry.sqlite3 (without db), blobs/, cache/
  std::string db;                 // postgresql://... : the registry and the jobs there
  std::string host = "127.0.0.1";
  int port = 8080;
  int workers = 1;                // compile workers in this process (0: queue only)
  int request_timeout_s = 60;     // each read of a request and write of a response
  int request_time_limit_s = 300; // a whole request, first byte to answer (an inference's wait too)
  int http_threads = 128;         // requests served at once (each waits for its model's batch)
  BatchOptions batching;          // dynamic batching of every served model (off: max_batch 1)
  bool open_inference = false;    // /v2 metadata, ready and infer need no token
  std::vector<TrafficSplit> splits;  // --split: A/B shares between a model's aliases
  int max_infer_mb = 256;         // an infer request's body
  int max_loaded_models = 0;      // versions loaded at once, the least recently used unloaded past it (0: no limit)
  WorkerOptions worker;           // name is made per worker thread
};

// Serves until the process is stopped; fails (kBadInput) when the address cannot be bound.
void run_server(const ServeOptions& opts);

}  // namespace kiln::serve
