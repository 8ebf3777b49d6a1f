#include "backend/plugin_backend.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>

#include "backend/graph_desc.h"
#include "kiln/backend_abi.h"
#include "support/error.h"

namespace kiln::backend {

namespace {

constexpr size_t kReasonLen = 512;

// The library stays loaded as long as a backend or a partition of it lives.
struct Library {
  void* handle = nullptr;
  ~Library() {
    if (handle) dlclose(handle);
  }
};

class PluginPartition : public CompiledPartition {
 public:
  PluginPartition(std::shared_ptr<Library> lib, const kiln_backend_api* api, kiln_partition* p,
                  std::string name)
      : lib_(std::move(lib)), api_(api), p_(p), name_(std::move(name)) {}
  ~PluginPartition() override { api_->destroy_partition(p_); }
  void run(std::span<const Tensor* const> inputs, std::span<Tensor* const> outputs) override {
    ins_.clear();
    outs_.clear();
    for (const Tensor* t : inputs) ins_.push_back(t->raw());
    for (Tensor* t : outputs) outs_.push_back(t->raw());
    char err[kReasonLen] = {0};
    if (api_->run(p_, ins_.data(), outs_.data(), err, sizeof err) != 0)
      fail(ErrorKind::kRuntime, "backend '{}' failed to run a partition: {}", name_, err);
  }

 private:
  std::shared_ptr<Library> lib_;
  const kiln_backend_api* api_;
  kiln_partition* p_;
  std::string name_;
  std::vector<const void*> ins_;
  std::vector<void*> outs_;
};

class PluginBackend : public Backend {
 public:
  PluginBackend(std::shared_ptr<Library> lib, const kiln_backend_api* api, kiln_backend* b)
      : lib_(std::move(lib)), api_(api), b_(b) {}
  ~PluginBackend() override { api_->destroy(b_); }
  std::string name() const override { return api_->name; }
  std::string version() const override { return api_->version; }
  std::vector<NodeClaim> claim(const engine::GraphFacts& facts, const Target&) override {
    GraphDesc desc(facts);
    std::vector<NodeClaim> out;
    for (int32_t i = 0; i < desc.c().n_nodes; ++i) {
      char why[kReasonLen] = {0};
      const bool ok = api_->claim(b_, &desc.c(), i, why, sizeof why) == 0;
      out.push_back({ok, ok ? std::string(api_->name) : std::string(why)});
    }
    return out;
  }
  std::unique_ptr<CompiledPartition> compile(const PartitionSpec& p, std::string& why_not) override {
    GraphDesc desc(p);
    kiln_partition* part = nullptr;
    char err[kReasonLen] = {0};
    if (api_->compile(b_, &desc.c(), &part, err, sizeof err) != 0 || !part) {
      why_not = err[0] ? err : "compile failed (no reason given)";
      return nullptr;
    }
    return std::make_unique<PluginPartition>(lib_, api_, part, api_->name);
  }

 private:
  std::shared_ptr<Library> lib_;
  const kiln_backend_api* api_;
  kiln_backend* b_;
};

}  // namespace

std::vector<std::filesystem::path> plugin_search_path() {
  std::vector<std::filesystem::path> dirs;
  if (const char* env = std::getenv("KILN_BACKEND_PATH")) {
    std::string s = env;
    for (size_t start = 0; start <= s.size();) {
      const size_t end = std::min(s.find(':', start), s.size());
      if (end > start) dirs.emplace_back(s.substr(start, end - start));
      start = end + 1;
    }
  }
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back(exe.parent_path());
  return dirs;
}

std::shared_ptr<Backend> load_plugin_file(const std::filesystem::path& file, const std::string& options,
                                          std::string& why_not) {
  auto lib = std::make_shared<Library>();
  lib->handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib->handle) {
    const char* e = dlerror();
    why_not = fmt::format("cannot load '{}': {}", file.string(), e ? e : "dlopen failed");
    return nullptr;
  }
  auto entry = reinterpret_cast<kiln_backend_entry_fn>(dlsym(lib->handle, KILN_BACKEND_ENTRY_SYMBOL));
  if (!entry) {
    why_not = fmt::format("'{}' is not a kiln backend (no {})", file.string(), KILN_BACKEND_ENTRY_SYMBOL);
    return nullptr;
  }
  const kiln_backend_api* api = entry(KILN_BACKEND_ABI_VERSION);
  if (!api) {
    why_not = fmt::format("'{}' does not serve backend ABI version {}", file.string(), KILN_BACKEND_ABI_VERSION);
    return nullptr;
  }
  if (api->abi_version != KILN_BACKEND_ABI_VERSION || api->struct_size < sizeof(kiln_backend_api)) {
    why_not = fmt::format("'{}' was built for backend ABI version {} (table of {} bytes); this kiln has version {} "
                          "({} bytes): rebuild the plugin against this kiln's include/kiln/backend_abi.h",
                          file.string(), api->abi_version, api->struct_size, KILN_BACKEND_ABI_VERSION,
                          sizeof(kiln_backend_api));
    return nullptr;
  }
  if (!api->name || !api->version || !api->create || !api->destroy || !api->claim || !api->compile ||
      !api->run || !api->destroy_partition) {
    why_not = fmt::format("'{}' has an incomplete backend table", file.string());
    return nullptr;
  }
  kiln_backend* b = nullptr;
  char err[kReasonLen] = {0};
  if (api->create(options.c_str(), &b, err, sizeof err) != 0 || !b) {
    why_not = fmt::format("backend '{}' did not start: {}", api->name, err);
    return nullptr;
  }
  return std::make_shared<PluginBackend>(std::move(lib), api, b);
}

std::shared_ptr<Backend> load_plugin(const std::string& name, const std::string& options,
                                     std::string& why_not) {
  const std::string file = "libkiln_backend_" + name + ".so";
  std::string searched;
  for (const auto& dir : plugin_search_path()) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(dir / file, ec)) return load_plugin_file(dir / file, options, why_not);
    searched += (searched.empty() ? "" : ", ") + dir.string();
  }
  why_not = fmt::format("plugin {} not found (searched KILN_BACKEND_PATH and the kiln binary's folder: {})",
                        file, searched.empty() ? "none" : searched);
  return nullptr;
}

}  // namespace kiln::backend
