// kiln worker [--db URL] [--data DIR] [--workers N]: claims and runs compile jobs until stopped.
// `kiln worker --compile-target DIR` is the child process of one target's compile (internal).
#include "cli/worker_command.h"

#include <atomic>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cli/serve_options.h"
#include "serve/job_worker.h"
#include "serve/service_stores.h"
#include "serve/target_compile.h"

namespace kiln::cli {

Action add_worker(CLI::App& app) {
  auto common = std::make_shared<ServeCommonArgs>();
  auto compile_dir = std::make_shared<std::string>();
  add_serve_common_options(app, *common);
  app.add_option("--compile-target", *compile_dir,
                 "(internal) compile the one target DIR/request.json names: the child process of a job")
      ->group("");
  return [=]() {
    if (!compile_dir->empty()) return serve::compile_target_in_dir(*compile_dir);
    const serve::ServiceStores stores = serve::open_stores({.db = common->db, .data = common->data});
    std::atomic<bool> stop{false};
    std::vector<std::unique_ptr<serve::JobWorker>> workers;
    for (int i = 0; i < std::max(1, common->workers); ++i) {
      serve::WorkerOptions w = worker_options(*common);
      w.name = serve::default_worker_name(i);
      workers.push_back(std::make_unique<serve::JobWorker>(stores, w));
    }
    std::cerr << "kiln worker: " << workers.size() << " workers on "
              << (common->db.empty() ? common->data + "/registry.sqlite3" : std::string("PostgreSQL")) << std::endl;
    std::vector<std::thread> threads;
    for (auto& w : workers) threads.emplace_back([&stop, worker = w.get()] { worker->run(stop); });
    for (auto& t : threads) t.join();
    return 0;
  };
}

}  // namespace kiln::cli
