// kiln serve's HTTP server (cpp-httplib): the registry's management endpoints behind Bearer
// tokens, and the Open Inference Protocol's health endpoints. docs/service.md lists the routes.
#pragma once

#include <filesystem>
#include <string>

namespace kiln::serve {

struct ServeOptions {
  std::filesystem::path data;     // the data folder: registry.sqlite3, blobs/
  std::string host = "127.0.0.1";
  int port = 8080;
};

// Serves until the process is stopped; fails (kBadInput) when the address cannot be bound.
void run_server(const ServeOptions& opts);

}  // namespace kiln::serve
