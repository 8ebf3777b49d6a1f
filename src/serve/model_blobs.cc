#include "serve/model_blobs.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

#include "serve/registry_store.h"
#include "support/error.h"

namespace kiln::serve {

namespace fs = std::filesystem;

ModelBlobs::ModelBlobs(const fs::path& data) : dir_(data / "blobs"), empty_(data / "empty") {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  fs::create_directories(empty_, ec);
  if (!fs::is_directory(dir_) || !fs::is_directory(empty_))
    fail(ErrorKind::kBadInput, "--data '{}': cannot make blobs/ and empty/ in it", data.string());
}

void ModelBlobs::put(const std::string& sha256, std::string_view bytes) const {
  check_sha256(sha256);
  const fs::path dest = dir_ / sha256;
  if (fs::exists(dest)) return;
  const fs::path tmp = dir_ / (sha256 + ".part." + std::to_string(getpid()));
  {
    std::ofstream f(tmp, std::ios::binary);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!f.flush()) fail(ErrorKind::kRuntime, "cannot write '{}'", tmp.string());
  }
  fs::rename(tmp, dest);
}

std::string ModelBlobs::get(const std::string& sha256) const {
  check_sha256(sha256);
  std::ifstream f(dir_ / sha256, std::ios::binary);
  if (!f) fail(ErrorKind::kRuntime, "the registry's blob {} is missing", sha256);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace kiln::serve
