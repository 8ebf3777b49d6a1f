#include "engine/cache_folder.h"

#include <cstdlib>
#include <fstream>

#include "support/mapped_file.h"

namespace kiln::engine {

std::optional<std::filesystem::path> cache_folder() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::filesystem::path(xdg) / "kiln";
  if (const char* home = std::getenv("HOME"); home && *home) return std::filesystem::path(home) / ".cache" / "kiln";
  return std::nullopt;
}

nlohmann::json read_machine_sections(const std::filesystem::path& file, int version) {
  std::ifstream in(file);
  if (!in) return nlohmann::json::object();
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.value("version", 0) != version || !j.contains("machines") || !j["machines"].is_object())
    return nlohmann::json::object();
  return j;
}

bool write_machine_sections(const std::filesystem::path& file, nlohmann::json j, int version) {
  try {
    j["version"] = version;
    if (!j.contains("machines") || !j["machines"].is_object()) j["machines"] = nlohmann::json::object();
    std::filesystem::create_directories(file.parent_path());
    write_file_atomically(file, j.dump(1) + "\n");
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace kiln::engine
