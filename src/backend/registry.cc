#include "backend/registry.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "backend/plugin_backend.h"
#include "support/error.h"

namespace kiln::backend {

BackendRegistry& BackendRegistry::global() {
  static BackendRegistry r;
  return r;
}

std::shared_ptr<Backend> BackendRegistry::find(const std::string& name, int threads, std::string& why_not) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = backends_.find(name);
  if (it != backends_.end()) return it->second;
  std::shared_ptr<Backend> b;
  if (name == "cpu") {
    b = make_cpu_backend();
  } else if (name == "reference") {
    b = make_reference_backend();
  } else {
    std::string env = "KILN_BACKEND_OPTIONS_" + name;
    std::transform(env.begin(), env.end(), env.begin(), [](unsigned char c) { return std::toupper(c); });
    std::string options = fmt::format("threads={}", threads);
    if (const char* o = std::getenv(env.c_str()); o && *o) options += std::string(";") + o;
    b = load_plugin(name, options, why_not);
    if (!b) return nullptr;  // not cached: a later call may find it
  }
  backends_[name] = b;
  return b;
}

void BackendRegistry::add(std::shared_ptr<Backend> b) {
  std::lock_guard<std::mutex> lock(mu_);
  backends_[b->name()] = std::move(b);
}

void BackendRegistry::remove(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  backends_.erase(name);
}

std::vector<std::string> parse_backend_list(const std::string& spec) {
  std::vector<std::string> names;
  for (size_t start = 0; start <= spec.size();) {
    const size_t end = std::min(spec.find(',', start), spec.size());
    const std::string name = spec.substr(start, end - start);
    if (name.empty()) fail(ErrorKind::kBadInput, "--backends '{}': an empty backend name", spec);
    for (char c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-')
        fail(ErrorKind::kBadInput, "--backends '{}': '{}' is not a backend name", spec, name);
    if (std::find(names.begin(), names.end(), name) != names.end())
      fail(ErrorKind::kBadInput, "--backends '{}': '{}' named twice", spec, name);
    names.push_back(name);
    start = end + 1;
  }
  return names;
}

ResolvedBackends resolve_backends(const std::vector<std::string>& names, int threads, int* implicit) {
  ResolvedBackends r;
  std::vector<std::string> all = names;
  int added = 0;
  for (const char* fallback : {"cpu", "reference"})
    if (std::find(all.begin(), all.end(), fallback) == all.end()) {
      all.push_back(fallback);
      ++added;
    }
  if (implicit) *implicit = added;
  for (const std::string& n : all) {
    std::string why;
    if (auto b = BackendRegistry::global().find(n, threads, why)) r.backends.push_back(std::move(b));
    else r.missing.push_back(n + ": " + why);
  }
  return r;
}

}  // namespace kiln::backend
