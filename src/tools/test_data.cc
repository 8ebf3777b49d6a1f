#include "tools/test_data.h"

#include <algorithm>

#include "onnx/tensor_proto.h"
#include "support/error.h"

namespace kiln::tools {

namespace fs = std::filesystem;

std::vector<fs::path> numbered_files(const fs::path& dir, const std::string& prefix) {
  KILN_CHECK(fs::is_directory(dir), ErrorKind::kBadInput, "'{}' is not a directory", dir.string());
  std::vector<std::pair<int, fs::path>> found;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix + "_", 0) != 0 || e.path().extension() != ".pb") continue;
    const std::string num = name.substr(prefix.size() + 1, name.size() - prefix.size() - 4);
    if (num.empty() || !std::all_of(num.begin(), num.end(), ::isdigit) || num.size() > 6) continue;
    found.emplace_back(std::stoi(num), e.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> out;
  for (auto& [n, p] : found) out.push_back(p);
  return out;
}

std::vector<RtValue> read_values(const fs::path& dir, const std::string& prefix,
                                 const std::vector<const Value*>& values) {
  const auto files = numbered_files(dir, prefix);
  KILN_CHECK(files.size() <= values.size(), ErrorKind::kBadInput,
             "'{}' has {} {} files, the model has {}", dir.string(), files.size(), prefix,
             values.size());
  std::vector<RtValue> out(values.size());
  for (size_t i = 0; i < files.size(); ++i)
    out[i] = read_value_file(files[i], values[i]->type.kind);
  return out;
}

}  // namespace kiln::tools
