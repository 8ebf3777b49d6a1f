#include "serve/content_store.h"

#include <unistd.h>

#include <atomic>
#include <fstream>

#include "serve/registry_store.h"
#include "support/error.h"
#include "support/limits.h"
#include "support/read_file.h"
#include "support/sha256.h"

namespace kiln::serve {

namespace fs = std::filesystem;

namespace {

class FolderStore final : public ContentStore {
 public:
  explicit FolderStore(const fs::path& data) : dir_(data / "blobs") {
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (!fs::is_directory(dir_, ec)) fail(ErrorKind::kBadInput, "--data '{}': cannot make blobs/ in it", data.string());
  }

  std::string put(std::string_view bytes) override {
    const std::string sha = sha256_hex(bytes);
    const fs::path dest = dir_ / sha;
    std::error_code ec;
    if (fs::exists(dest, ec)) return sha;
    // Unique per process and call: two writers never share a temporary file.
    static std::atomic<uint64_t> counter{0};
    const fs::path tmp = dir_ / (sha + ".part." + std::to_string(getpid()) + "." + std::to_string(counter++));
    {
      std::ofstream f(tmp, std::ios::binary);
      f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      if (!f.flush()) {
        fs::remove(tmp, ec);
        fail(ErrorKind::kRuntime, "cannot write '{}' (disk full?)", tmp.string());
      }
    }
    fs::rename(tmp, dest, ec);
    if (ec) {
      fs::remove(tmp, ec);
      fail(ErrorKind::kRuntime, "cannot store '{}': {}", dest.string(), ec.message());
    }
    return sha;
  }

  std::string get(const std::string& sha256) override {
    check_sha256(sha256);
    KILN_CHECK(has(sha256), ErrorKind::kRuntime, "the store's blob {} is missing", sha256);
    return read_file(dir_ / sha256, limits::kMaxModelBytes);  // artifacts may pass 2 GiB
  }

  bool has(const std::string& sha256) override {
    check_sha256(sha256);
    std::error_code ec;
    return fs::is_regular_file(dir_ / sha256, ec);
  }

 private:
  fs::path dir_;
};

}  // namespace

std::unique_ptr<ContentStore> open_folder_store(const fs::path& data) { return std::make_unique<FolderStore>(data); }

fs::path empty_model_dir(const fs::path& data) {
  const fs::path empty = data / "empty";
  std::error_code ec;
  fs::create_directories(empty, ec);
  if (!fs::is_directory(empty, ec)) fail(ErrorKind::kBadInput, "--data '{}': cannot make empty/ in it", data.string());
  return empty;
}

}  // namespace kiln::serve
