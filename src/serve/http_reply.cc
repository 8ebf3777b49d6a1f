#include "serve/http_reply.h"

#include "support/error.h"

namespace kiln::serve {

using json = nlohmann::json;

void reply(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace) + "\n", "application/json");
}

Handler guarded(Handler h) {
  return [h](const httplib::Request& req, httplib::Response& res) {
    try {
      h(req, res);
    } catch (const HttpError& e) {
      reply(res, e.status, {{"error", e.message}});
    } catch (const Error& e) {
      const bool bad = e.kind() == ErrorKind::kBadModel || e.kind() == ErrorKind::kBadInput ||
                       e.kind() == ErrorKind::kUnsupported;
      reply(res, bad ? 400 : 500, {{"error", e.what()}});
    } catch (const std::exception& e) {
      reply(res, 500, {{"error", std::string("internal error (a bug in kiln): ") + e.what()}});
    }
  };
}

}  // namespace kiln::serve
