// The C API's error handling: statuses, the per-thread last message, and the guard that turns
// every exception into a status so none crosses the C boundary.
#pragma once

#include <fmt/format.h>

#include <string>

#include "kiln/kiln.h"

namespace kiln::capi {

// A refusal of the C API itself (a NULL pointer, a too-small buffer ...), with its status.
struct Refusal {
  kiln_status status;
  std::string message;
};

template <typename... Args>
[[noreturn]] void refuse(kiln_status status, fmt::format_string<Args...> f, Args&&... args) {
  throw Refusal{status, fmt::format(f, std::forward<Args>(args)...)};
}

// Fails with KILN_ERROR_INVALID_ARGUMENT unless `p` is non-NULL; `what` names it ("session").
inline void require(const void* p, const char* what) {
  if (p == nullptr) refuse(KILN_ERROR_INVALID_ARGUMENT, "{} is NULL", what);
}

// Sets this thread's last message and returns the status.
kiln_status set_last_error(kiln_status status, const std::string& message);

// The status of the exception in flight (call inside a catch block), its message recorded.
kiln_status status_of_current_exception(const char* function) noexcept;

// Runs `fn`, returning KILN_OK (last message cleared) or the status of what it threw.
template <typename Fn>
kiln_status guarded(const char* function, Fn&& fn) noexcept {
  try {
    fn();
    return set_last_error(KILN_OK, "");
  } catch (...) {
    return status_of_current_exception(function);
  }
}

}  // namespace kiln::capi
