// Backends by name: `cpu` and `reference` are built in, any other name is a plugin loaded on first
// use (plugin_backend.h). A backend list ("xnnpack,cpu") resolves to the backends in that order;
// those that cannot be had are named with their reason, and the rest still run.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace kiln::backend {

class BackendRegistry {
 public:
  static BackendRegistry& global();
  // The backend `name`; null with why_not set when it cannot be had. A plugin gets its options
  // from KILN_BACKEND_OPTIONS_<NAME> ("key=value;...", docs/backends.md) and threads=N.
  std::shared_ptr<Backend> find(const std::string& name, int threads, std::string& why_not);
  // A backend under its name (tests: a backend made to fail); replaces any with that name.
  void add(std::shared_ptr<Backend> b);
  void remove(const std::string& name);

 private:
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Backend>> backends_;
};

// "xnnpack,cpu" -> {"xnnpack", "cpu"}; fails (kBadInput) on an empty or repeated name.
std::vector<std::string> parse_backend_list(const std::string& spec);

struct ResolvedBackends {
  std::vector<std::shared_ptr<Backend>> backends;  // in the order asked, those that could be had
  std::vector<std::string> missing;                // "xnnpack: plugin ... not found"
};
// The named backends, in order. Unless the list has them, cpu and reference are added last (the
// engine runs what no listed backend takes), `implicit` counting how many were.
ResolvedBackends resolve_backends(const std::vector<std::string>& names, int threads, int* implicit = nullptr);

}  // namespace kiln::backend
