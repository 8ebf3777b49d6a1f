#include "support/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <mutex>
#include <vector>
#include <cstring>
#include <fstream>

#include "support/error.h"

namespace kiln {

namespace fs = std::filesystem;

namespace {

// The mappings open now, for release_mapped_pages.
std::mutex& mappings_mutex() {
  static std::mutex mu;
  return mu;
}
std::vector<const MappedFile*>& open_mappings() {
  static std::vector<const MappedFile*> all;
  return all;
}

// The whole pages inside [p, p + n), as (start, length); length 0 when there is none.
std::pair<uint8_t*, size_t> whole_pages(const void* p, size_t n) {
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto lo = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const auto hi = (reinterpret_cast<uintptr_t>(p) + n) / page * page;
  return {reinterpret_cast<uint8_t*>(lo), hi > lo ? hi - lo : 0};
}

}  // namespace

std::shared_ptr<MappedFile> MappedFile::open(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  KILN_CHECK(fd >= 0, ErrorKind::kBadInput, "cannot open '{}': {}", path.string(),
             std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(ErrorKind::kBadInput, "'{}' is not a regular file", path.string());
  }
  std::shared_ptr<MappedFile> f(new MappedFile());
  f->path_ = path;
  f->size_ = st.st_size;
  if (st.st_size > 0) {
    void* p = ::mmap(nullptr, st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      fail(ErrorKind::kBadInput, "cannot map '{}': {}", path.string(), std::strerror(errno));
    }
    f->data_ = static_cast<uint8_t*>(p);
    std::lock_guard<std::mutex> lock(mappings_mutex());
    open_mappings().push_back(f.get());
  }
  ::close(fd);
  return f;
}

MappedFile::~MappedFile() {
  if (!data_) return;
  {
    std::lock_guard<std::mutex> lock(mappings_mutex());
    auto& all = open_mappings();
    all.erase(std::remove(all.begin(), all.end(), this), all.end());
  }
  ::munmap(data_, size_);
}

void MappedFile::release(int64_t offset, int64_t length) const {
  offset = std::clamp<int64_t>(offset, 0, size_);
  length = std::clamp<int64_t>(length, 0, size_ - offset);
  const auto [start, bytes] = whole_pages(data_ + offset, static_cast<size_t>(length));
  if (bytes > 0) ::madvise(start, bytes, MADV_DONTNEED);  // a hint: a failure leaves them resident
}

void release_mapped_pages(const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  std::lock_guard<std::mutex> lock(mappings_mutex());
  for (const MappedFile* f : open_mappings()) {
    if (b < f->data() || b + n > f->data() + f->size()) continue;
    const auto [start, bytes] = whole_pages(p, n);
    if (bytes > 0) ::madvise(start, bytes, MADV_PAGEOUT);  // a hint, as above
    return;
  }
}

fs::path safe_external_path(const fs::path& model_dir, const std::string& location) {
  KILN_CHECK(!location.empty(), ErrorKind::kBadModel, "external data location is empty");
  KILN_CHECK(location.find('\0') == std::string::npos, ErrorKind::kBadModel,
             "external data location contains a NUL byte");
  const fs::path rel(location);
  KILN_CHECK(rel.is_relative() && !rel.has_root_name() && !rel.has_root_directory(),
             ErrorKind::kBadModel, "external data location '{}' is not a relative path", location);
  fs::path p = model_dir;
  for (const auto& part : rel) {
    KILN_CHECK(part != "..", ErrorKind::kBadModel,
               "external data location '{}' leaves the model's folder", location);
    if (part == "." || part.empty()) continue;
    p /= part;
    std::error_code ec;
    auto st = fs::symlink_status(p, ec);
    KILN_CHECK(!ec && fs::exists(st), ErrorKind::kBadModel,
               "external data file '{}' does not exist", location);
    KILN_CHECK(!fs::is_symlink(st), ErrorKind::kBadModel,
               "external data location '{}' goes through a symlink", location);
  }
  std::error_code ec;
  KILN_CHECK(fs::is_regular_file(fs::symlink_status(p, ec)), ErrorKind::kBadModel,
             "external data location '{}' is not a regular file", location);
  return p;
}

void write_file_atomically(const fs::path& path, const std::string& bytes) {
  // A name of this process and call: two writers of one path (two workers storing the same cache
  // entry) never write into each other's temporary file; the last rename wins, whole.
  static std::atomic<uint64_t> serial{0};
  fs::path tmp = path;
  tmp += fmt::format(".kiln-tmp.{}.{}", static_cast<long>(::getpid()), serial++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    KILN_CHECK(out.good(), ErrorKind::kBadInput, "cannot write '{}'", tmp.string());
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out.good()) {
      std::error_code ec;
      fs::remove(tmp, ec);
      fail(ErrorKind::kBadInput, "cannot write '{}' (disk full?)", tmp.string());
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  KILN_CHECK(!ec, ErrorKind::kBadInput, "cannot write '{}': {}", path.string(), ec.message());
}

}  // namespace kiln
