// Model bytes of the registry on disk: DATA/blobs/SHA256, named by their hash only (never by a
// name a request gave), written atomically.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace kiln::serve {

class ModelBlobs {
 public:
  explicit ModelBlobs(const std::filesystem::path& data);
  // Stores `bytes` under `sha256` (already there: kept as it is).
  void put(const std::string& sha256, std::string_view bytes) const;
  std::string get(const std::string& sha256) const;  // fails (kRuntime) when missing
  // An empty folder: the external-data folder of uploaded models, so they can reach no file.
  const std::filesystem::path& empty_dir() const { return empty_; }

 private:
  std::filesystem::path dir_, empty_;
};

}  // namespace kiln::serve
