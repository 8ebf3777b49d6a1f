#include "serve/http_client.h"

#include <httplib.h>

#include <regex>

#include "support/error.h"

namespace kiln::serve {

struct HttpClient::Impl {
  std::unique_ptr<httplib::Client> client;
};

HttpClient::HttpClient(const std::string& base, std::string token, int timeout_s)
    : impl_(std::make_unique<Impl>()), base_(base), token_(std::move(token)) {
  static const std::regex url(R"(http://([A-Za-z0-9.\-]+|\[[0-9A-Fa-f:]+\])(?::([0-9]{1,5}))?/?)");
  std::smatch m;
  KILN_CHECK(std::regex_match(base, m, url), ErrorKind::kBadInput,
             "--server '{}': expected http://HOST:PORT (https is not built in: put a TLS proxy in front)",
             base.substr(0, 200));
  const int port = m[2].matched ? std::stoi(m[2]) : 80;
  KILN_CHECK(port > 0 && port < 65536, ErrorKind::kBadInput, "--server '{}': bad port", base);
  impl_->client = std::make_unique<httplib::Client>(m[1].str(), port);
  impl_->client->set_connection_timeout(10, 0);
  impl_->client->set_read_timeout(timeout_s, 0);
  impl_->client->set_write_timeout(timeout_s, 0);
}

HttpClient::~HttpClient() = default;

HttpResult HttpClient::request(const std::string& method, const std::string& path, const std::string& body,
                               const std::string& content_type) {
  httplib::Headers headers;
  if (!token_.empty()) headers.emplace("Authorization", "Bearer " + token_);
  httplib::Result r = method == "GET"    ? impl_->client->Get(path, headers)
                      : method == "POST" ? impl_->client->Post(path, headers, body, content_type)
                      : method == "PUT"  ? impl_->client->Put(path, headers, body, content_type)
                                         : impl_->client->Delete(path, headers);
  HttpResult out;
  if (!r) {
    out.error = "no answer from " + base_ + path + ": " + httplib::to_string(r.error());
    return out;
  }
  out.status = r->status;
  out.body = r->body;
  return out;
}

}  // namespace kiln::serve
