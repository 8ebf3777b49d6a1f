// The content-addressed store of kiln serve: uploaded models and compiled artifacts, named by the
// sha256 of their bytes only (never by a name a request gave). An interface, so that a store other
// than a folder (an object store shared by machines) can stand in; open_folder_store is the one
// built: DATA/blobs/SHA256, each written to a unique temporary name and renamed into place, so
// two writers of the same bytes (threads, processes, machines on a shared folder) leave one
// whole file and a reader never sees half of one.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace kiln::serve {

class ContentStore {
 public:
  virtual ~ContentStore() = default;
  // Stores `bytes`; returns their sha256 (already there: kept as it is).
  virtual std::string put(std::string_view bytes) = 0;
  virtual std::string get(const std::string& sha256) = 0;  // fails (kRuntime) when missing
  virtual bool has(const std::string& sha256) = 0;
};

// DIR/blobs/ (made when missing). Fails (kBadInput) naming DIR when it cannot be made.
std::unique_ptr<ContentStore> open_folder_store(const std::filesystem::path& data);

// An empty folder under the data folder, DATA/empty: the external-data folder of uploaded models,
// so that a model can reach no file of the server's.
std::filesystem::path empty_model_dir(const std::filesystem::path& data);

}  // namespace kiln::serve
