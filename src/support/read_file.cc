#include "support/read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "support/error.h"

namespace kiln {

namespace {

// Closes the descriptor on every way out.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string read_file(const std::filesystem::path& path, int64_t max_bytes) {
  const Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  KILN_CHECK(f.fd >= 0, ErrorKind::kBadInput, "cannot read '{}': {}", path.string(), std::strerror(errno));
  struct stat st {};
  KILN_CHECK(::fstat(f.fd, &st) == 0 && S_ISREG(st.st_mode), ErrorKind::kBadInput, "'{}' is not a regular file",
             path.string());
  KILN_CHECK(st.st_size <= max_bytes, ErrorKind::kBadInput, "'{}' is {} bytes, more than the {} read here",
             path.string(), static_cast<int64_t>(st.st_size), max_bytes);
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < bytes.size()) {  // a file that shrinks while read ends where it ends
    const ssize_t n = ::read(f.fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    KILN_CHECK(n >= 0, ErrorKind::kBadInput, "cannot read '{}': {}", path.string(), std::strerror(errno));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  bytes.resize(got);
  return bytes;
}

}  // namespace kiln
