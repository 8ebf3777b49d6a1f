#include "serve/server_metrics.h"

#include <httplib.h>

#include <memory>
#include <mutex>
#include <set>

#include "serve/http_reply.h"

namespace kiln::serve {

namespace {

constexpr size_t kMaxRoutes = 64;  // distinct route labels kept; the rest are "other"

void declare_server_metrics(Metrics& m) {
  using T = Metrics::Type;
  m.declare("kiln_http_requests_total", T::kCounter, "HTTP requests answered, by route, method and status.");
  m.declare("kiln_compile_jobs", T::kGauge, "Compile jobs in the job store, by state.");
  m.declare("kiln_compile_queue_depth", T::kGauge, "Compile jobs queued and not yet claimed.");
  m.declare("kiln_compile_targets_total", T::kCounter,
            "Targets of compile jobs this server's workers committed, by target, state and compile cache hit.");
  m.declare("kiln_compile_duration_seconds", T::kHistogram,
            "Seconds a target took in a compile job this server's workers committed (cache hits included).",
            {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 60, 120, 300, 900});
}

}  // namespace

void add_metrics_route(httplib::Server& server, Metrics& metrics, JobQueue& queue,
                       std::function<void(const std::string& remote_addr, int remote_port)> answered) {
  declare_server_metrics(metrics);
  metrics.collect("kiln_compile_jobs", [&queue] {
    std::vector<std::pair<Labels, double>> out;
    const auto counts = queue.count_by_state();
    for (JobState s : {JobState::kQueued, JobState::kRunning, JobState::kSucceeded, JobState::kFailed,
                       JobState::kFellBack}) {
      auto it = counts.find(job_state_name(s));
      out.push_back({{{"state", job_state_name(s)}}, it == counts.end() ? 0.0 : double(it->second)});
    }
    return out;
  });
  metrics.collect("kiln_compile_queue_depth", [&queue] {
    const auto counts = queue.count_by_state();
    auto it = counts.find(job_state_name(JobState::kQueued));
    return std::vector<std::pair<Labels, double>>{{{}, it == counts.end() ? 0.0 : double(it->second)}};
  });
  auto routes = std::make_shared<std::pair<std::mutex, std::set<std::string>>>();
  server.set_logger([&metrics, routes, answered](const httplib::Request& req, const httplib::Response& res) {
    if (answered) answered(req.remote_addr, req.remote_port);
    std::string route = route_label(req.path);
    {
      std::lock_guard<std::mutex> lock(routes->first);
      if (!routes->second.contains(route)) {
        if (routes->second.size() >= kMaxRoutes) route = "other";
        else routes->second.insert(route);
      }
    }
    static const std::set<std::string> methods = {"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"};
    const std::string method = methods.contains(req.method) ? req.method : "other";
    metrics.add("kiln_http_requests_total", {{"route", route}, {"method", method}, {"status", std::to_string(res.status)}});
  });
  server.Get("/metrics", guarded([&metrics](const httplib::Request&, httplib::Response& res) {
               res.status = 200;
               res.set_content(metrics.render(), "text/plain; version=0.0.4; charset=utf-8");
             }));
}

std::function<void(const nlohmann::json&)> compile_metrics_reporter(Metrics& metrics) {
  return [&metrics](const nlohmann::json& t) {
    const std::string target = t.value("target", std::string("(none)"));
    const std::string state = t.value("state", std::string("failed"));
    metrics.add("kiln_compile_targets_total",
                {{"target", target}, {"state", state}, {"cache_hit", t.value("cache_hit", false) ? "true" : "false"}});
    if (t.contains("seconds") && t["seconds"].is_number())
      metrics.observe("kiln_compile_duration_seconds", {{"target", target}}, t["seconds"].get<double>());
  };
}

}  // namespace kiln::serve
