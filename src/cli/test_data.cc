#include "cli/test_data.h"

#include <algorithm>

#include "spec/tensor_file.h"
#include "support/error.h"

namespace kiln::cli {

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
  // Files go to values in order, unless every file names a distinct value of the model.
  std::vector<RtValue> in_order(files.size());
  std::vector<std::string> names(files.size());
  for (size_t i = 0; i < files.size(); ++i)
    in_order[i] = read_value_file(files[i], values[i]->type.kind, &names[i]);
  std::vector<RtValue> out(values.size());
  std::vector<bool> taken(values.size(), false);
  bool by_name = !files.empty();
  std::vector<size_t> slot(files.size());
  for (size_t i = 0; i < files.size() && by_name; ++i) {
    auto it = std::find_if(values.begin(), values.end(),
                           [&](const Value* v) { return v->name == names[i]; });
    by_name = it != values.end() && !taken[it - values.begin()];
    if (by_name) {
      slot[i] = static_cast<size_t>(it - values.begin());
      taken[slot[i]] = true;
    }
  }
  for (size_t i = 0; i < files.size(); ++i) out[by_name ? slot[i] : i] = std::move(in_order[i]);
  return out;
}

std::vector<InputSet> read_input_sets(const fs::path& dir, const std::vector<const Value*>& inputs) {
  KILN_CHECK(fs::is_directory(dir), ErrorKind::kBadInput, "'{}' is not a directory", dir.string());
  std::vector<InputSet> sets;
  if (!numbered_files(dir, "input").empty()) {
    sets.push_back({dir.string(), read_values(dir, "input", inputs)});
    return sets;
  }
  std::vector<fs::path> folders;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      folders.push_back(e.path());
  std::sort(folders.begin(), folders.end());
  KILN_CHECK(!folders.empty(), ErrorKind::kBadInput,
             "'{}' has no input_N.pb files and no test_data_set_* folders", dir.string());
  for (const fs::path& f : folders) {
    KILN_CHECK(!numbered_files(f, "input").empty(), ErrorKind::kBadInput,
               "'{}' has no input_N.pb files", f.string());
    sets.push_back({f.string(), read_values(f, "input", inputs)});
  }
  return sets;
}

}  // namespace kiln::cli
