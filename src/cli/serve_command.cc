// kiln serve [--db URL] [--data DIR] [--listen HOST:PORT] [--workers N] [--max-batch N ...]: serves the
// registry, runs compile jobs and serves inference until stopped.
#include "cli/serve_command.h"

#include <memory>
#include <string>

#include "cli/serve_options.h"
#include "serve/server.h"
#include "support/error.h"

namespace kiln::cli {

Action add_serve(CLI::App& app) {
  auto common = std::make_shared<ServeCommonArgs>();
  auto listen = std::make_shared<std::string>("127.0.0.1:8080");
  auto request_timeout = std::make_shared<int>(60);
  auto batching = std::make_shared<serve::BatchOptions>();
  auto http_threads = std::make_shared<int>(128);
  auto time_limit = std::make_shared<int>(300);
  auto open_inference = std::make_shared<bool>(false);
  auto splits = std::make_shared<std::vector<std::string>>();
  auto max_infer_mb = std::make_shared<int>(256);
  auto max_loaded = std::make_shared<int>(0);
  add_serve_common_options(app, *common);
  app.add_option("--listen", *listen, "HOST:PORT to listen on (default 127.0.0.1:8080)");
  app.add_option("--request-timeout", *request_timeout,
                 "Seconds to read a request or write a response (default 60)")
      ->check(CLI::Range(1, 3600));
  app.add_option("--max-batch", batching->max_batch,
                 "Dynamic batching: the most elements along the batch dim in one run of a model whose "
                 "inputs and outputs share a symbolic first dim (default 1: no batching)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--batch-delay-us", batching->delay_us,
                 "Dynamic batching: microseconds a request may wait for others to join its batch (default 0: "
                 "only requests already queued join)")
      ->check(CLI::Range(int64_t{0}, int64_t{10'000'000}));
  app.add_option("--preferred-batch", batching->preferred,
                 "Dynamic batching: batch sizes to cut at when more are queued (repeatable)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--request-time-limit", *time_limit,
                 "Seconds for a whole request, first byte to answer: a slower client's connection is shut "
                 "down, an inference still queued or running then is answered 503 (default 300)")
      ->check(CLI::Range(1, 86400));
  app.add_flag("--open-inference", *open_inference,
               "Serve /v2 metadata, ready and infer without a token (load and unload still need a write token)");
  app.add_option("--split", *splits,
                 "A/B: NAME=ALIAS:WEIGHT,ALIAS:WEIGHT... shares a model's requests that name no version "
                 "between its aliases (by the request id's hash, else at random; repeatable)");
  app.add_option("--max-infer-mb", *max_infer_mb, "The largest infer request body in MiB (default 256; 413 past it)")
      ->check(CLI::Range(1, 2048));
  app.add_option("--max-loaded-models", *max_loaded,
                 "The most model versions loaded for inference at once: loading one past it unloads the least "
                 "recently used, which its next request loads again (default 0: no limit)")
      ->check(CLI::Range(0, 100000));
  app.add_option("--http-threads", *http_threads, "Requests served at once (default 128)")->check(CLI::Range(1, 4096));
  return [=]() {
    const auto colon = listen->rfind(':');
    int port = -1;
    if (colon != std::string::npos && colon > 0) {
      try {
        size_t used = 0;
        port = std::stoi(listen->substr(colon + 1), &used);
        if (used != listen->size() - colon - 1) port = -1;
      } catch (const std::exception&) {
        port = -1;
      }
    }
    if (port < 1 || port > 65535) fail(ErrorKind::kBadInput, "--listen '{}': expected HOST:PORT (port 1-65535)", *listen);
    std::vector<serve::TrafficSplit> parsed;
    for (const std::string& s : *splits) parsed.push_back(serve::parse_traffic_split(s));
    serve::run_server({.data = common->data, .db = common->db, .host = listen->substr(0, colon), .port = port,
                       .workers = common->workers, .request_timeout_s = *request_timeout,
                       .request_time_limit_s = *time_limit, .http_threads = *http_threads, .batching = *batching,
                       .open_inference = *open_inference, .splits = parsed,
                       .max_infer_mb = *max_infer_mb, .max_loaded_models = *max_loaded, .worker = worker_options(*common)});
    return 0;
  };
}

}  // namespace kiln::cli
