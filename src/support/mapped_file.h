// Read-only views of files: memory-mapped when possible, with checks for untrusted paths.
#pragma once

#include <cstddef>
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
  // Drops the resident pages wholly inside [offset, offset + length) from this process (the
  // kernel reads them from the file again if they are touched later). Only for ranges nobody
  // wrote to: the private copy of a written page would be lost.
  void release(int64_t offset, int64_t length) const;
  const std::filesystem::path& path() const { return path_; }

 private:
  MappedFile() = default;
  uint8_t* data_ = nullptr;
  int64_t size_ = 0;
  std::filesystem::path path_;
};

// Where p lies in a file mapped by MappedFile::open that is still open, hands the resident pages
// wholly inside [p, p + n) back to the kernel (MADV_PAGEOUT: clean file pages leave this process's
// RSS, a page someone wrote to is kept); elsewhere (heap memory) does nothing. For weights whose
// packed copy replaced them: a later reader faults them in again from the file.
void release_mapped_pages(const void* p, size_t n);

// Resolves `location` (from an external_data entry of a model in `model_dir`) safely: relative,
// no "..", no symlink on the way, a regular file inside model_dir. Fails (kBadModel) otherwise.
std::filesystem::path safe_external_path(const std::filesystem::path& model_dir,
                                         const std::string& location);

// Writes bytes to `path` through a temporary file and a rename, so a failure never leaves a
// half-written file in place of the user's data.
void write_file_atomically(const std::filesystem::path& path, const std::string& bytes);

}  // namespace kiln
