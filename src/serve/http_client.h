// A small HTTP client of kiln serve's API (cpp-httplib underneath, private to src/serve): what
// `kiln ci --server URL` speaks. http:// only (cpp-httplib's TLS is not compiled in here).
#pragma once

#include <memory>
#include <string>

namespace kiln::serve {

struct HttpResult {
  int status = 0;      // 0: no answer (error says why)
  std::string body;
  std::string error;
};

class HttpClient {
 public:
  // `base`: http://HOST:PORT (a path after it is refused); `token` sent as Authorization: Bearer.
  // Fails (kBadInput) on a malformed URL.
  HttpClient(const std::string& base, std::string token, int timeout_s = 120);
  ~HttpClient();
  HttpResult request(const std::string& method, const std::string& path, const std::string& body = "",
                     const std::string& content_type = "application/json");
  const std::string& base() const { return base_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string base_, token_;
};

}  // namespace kiln::serve
