// kiln serve --data DIR [--listen HOST:PORT]: serves the registry in DIR until stopped.
#include "cli/serve_command.h"

#include <memory>
#include <string>

#include "serve/server.h"
#include "support/error.h"

namespace kiln::cli {

Action add_serve(CLI::App& app) {
  auto data = std::make_shared<std::string>();
  auto listen = std::make_shared<std::string>("127.0.0.1:8080");
  app.add_option("--data", *data, "The data folder: registry.sqlite3 and the models' bytes (made when missing)")
      ->required();
  app.add_option("--listen", *listen, "HOST:PORT to listen on (default 127.0.0.1:8080)");
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
    serve::run_server({.data = *data, .host = listen->substr(0, colon), .port = port});
    return 0;
  };
}

}  // namespace kiln::cli
