// What kiln serve's HTTP handlers share: a refusal with its status (HttpError), a JSON reply, and
// the wrapper that turns every handler's errors into JSON {"error": one line}: bad input 4xx,
// kiln's bugs 500.
#pragma once

#include <httplib.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace kiln::serve {

using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;

// A refusal with its HTTP status.
struct HttpError {
  int status;
  std::string message;
};

void reply(httplib::Response& res, int status, const nlohmann::json& body);

// h with its errors answered: HttpError with its status, kiln's kBadModel/kBadInput/kUnsupported
// 400, anything else 500.
Handler guarded(Handler h);

}  // namespace kiln::serve
