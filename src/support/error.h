// Errors: one exception type for every recoverable failure, with a kind that maps to an exit code.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace kiln {

enum class ErrorKind {
  kBadModel,     // the model file is malformed, hostile or fails a check
  kBadInput,     // inputs, flags or files given by the user are wrong
  kUnsupported,  // valid ONNX that kiln cannot handle (yet)
  kRuntime,      // a failure while running (index out of range, allocation cap ...)
  kInternal,     // a bug in kiln: an invariant of its own code broke (KILN_ASSERT)
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message) : std::runtime_error(std::move(message)), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

template <typename... Args>
[[noreturn]] void fail(ErrorKind kind, fmt::format_string<Args...> f, Args&&... args) {
  throw Error(kind, fmt::format(f, std::forward<Args>(args)...));
}

// Adds context ("node 'x' (Conv): ") in front of an error raised below it, keeping the kind.
template <typename Fn>
auto with_context(const std::string& context, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const Error& e) {
    throw Error(e.kind(), context + e.what());
  }
}

}  // namespace kiln

#define KILN_CHECK(cond, kind, ...)                \
  do {                                             \
    if (!(cond)) ::kiln::fail(kind, __VA_ARGS__);  \
  } while (0)

// For violated invariants inside kiln (bugs), not for bad input: a kInternal error, which the
// command line reports as a bug in kiln with its own exit code (3), apart from bad input (2).
#define KILN_ASSERT(cond, msg)                                                               \
  do {                                                                                       \
    if (!(cond))                                                                             \
      ::kiln::fail(::kiln::ErrorKind::kInternal, "internal error (a bug in kiln): {} ({}:{})", \
                   msg, __FILE__, __LINE__);                                                 \
  } while (0)
