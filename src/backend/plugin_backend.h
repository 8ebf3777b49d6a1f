// Backends in shared libraries: a plugin is found by name (libkiln_backend_<name>.so in the
// folders of KILN_BACKEND_PATH, then beside the kiln binary), loaded with dlopen, and held to the
// ABI version of include/kiln/backend_abi.h. A plugin that is missing or built for another ABI is
// a reason (one line), never a crash.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace kiln::backend {

// The folders searched for plugins, in order.
std::vector<std::filesystem::path> plugin_search_path();
// The plugin `name`, loaded and created (with `options`: "key=value;..."); null with why_not set
// when it is not found, is refused or fails to start.
std::shared_ptr<Backend> load_plugin(const std::string& name, const std::string& options,
                                     std::string& why_not);
// The same for a given file (tests).
std::shared_ptr<Backend> load_plugin_file(const std::filesystem::path& file, const std::string& options,
                                          std::string& why_not);

}  // namespace kiln::backend
