// kiln serve's own metrics at GET /metrics (metrics.h is the registry): HTTP requests by route,
// method and status; compile jobs by state (the job store's, so every server's and worker's
// jobs) and the queue depth; per target the compiles this server's workers committed and their
// durations; the inference metrics come from the models' batchers (batcher.h).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>

#include "serve/job_queue.h"
#include "serve/metrics.h"

namespace httplib {
class Server;
}

namespace kiln::serve {

// Declares the HTTP and compile metrics, counts every request the server answers (its logger)
// and serves GET /metrics from `metrics`, reading the job counts from `queue` at each scrape.
// `answered` (may be empty) hears every request answered, after the metrics (the logger is one).
void add_metrics_route(httplib::Server& server, Metrics& metrics, JobQueue& queue,
                       std::function<void(const std::string& remote_addr, int remote_port)> answered = {});

// What a worker calls with each committed target's result (WorkerOptions::on_target).
std::function<void(const nlohmann::json&)> compile_metrics_reporter(Metrics& metrics);

}  // namespace kiln::serve
