// Read-only views of files: memory-mapped when possible, with checks for untrusted paths.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace kiln {

// A whole file mapped into memory (private, copy-on-write). Empty files map to size 0.
class MappedFile {
 public:
  // Fails (kBadInput) when the file cannot be opened or is not a regular file.
  static std::shared_ptr<MappedFile> open(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  uint8_t* data() const { return data_; }
  int64_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  MappedFile() = default;
  uint8_t* data_ = nullptr;
  int64_t size_ = 0;
  std::filesystem::path path_;
};

// Resolves `location` (from an external_data entry of a model in `model_dir`) safely: relative,
// no "..", no symlink on the way, a regular file inside model_dir. Fails (kBadModel) otherwise.
std::filesystem::path safe_external_path(const std::filesystem::path& model_dir,
                                         const std::string& location);

// Writes bytes to `path` through a temporary file and a rename, so a failure never leaves a
// half-written file in place of the user's data.
void write_file_atomically(const std::filesystem::path& path, const std::string& bytes);

}  // namespace kiln
