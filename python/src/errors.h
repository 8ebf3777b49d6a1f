// Errors as onnxruntime's Python exceptions: kiln::Error kinds mapped to the classes of
// kiln.capi.onnxruntime_pybind11_state (InvalidArgument, NoSuchFile, InvalidProtobuf, Fail ...),
// with onnxruntime's message prefix ("[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : ...").
#pragma once

#include <pybind11/pybind11.h>

#include <stdexcept>
#include <string>

namespace kiln::python {

// onnxruntime's status codes, as its messages number them.
enum class OrtCode {
  kFail = 1, kInvalidArgument = 2, kNoSuchFile = 3, kNoModel = 4, kEngineError = 5,
  kRuntimeException = 6, kInvalidProtobuf = 7, kModelLoaded = 8, kNotImplemented = 9,
  kInvalidGraph = 10, kEpFail = 11,
};

// Thrown by the binding; translated into the matching Python class with the prefixed message.
class OrtError : public std::runtime_error {
 public:
  OrtError(OrtCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  OrtCode code() const { return code_; }

 private:
  OrtCode code_;
};

// Runs fn, rethrowing a kiln::Error as an OrtError: `load` picks the codes of model loading
// (kBadModel -> InvalidProtobuf, kBadInput -> NoSuchFile), else kBadModel -> InvalidGraph,
// kBadInput -> InvalidArgument; kUnsupported -> NotImplemented, kRuntime -> RuntimeException,
// kInternal -> Fail. `context` goes in front of the message.
[[noreturn]] void rethrow_kiln_error(const std::exception& e, bool load, const std::string& context);

template <typename Fn>
auto translate(bool load, const std::string& context, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const OrtError&) {
    throw;
  } catch (const std::exception& e) {
    rethrow_kiln_error(e, load, context);
  }
}

void register_errors(pybind11::module_& m);

}  // namespace kiln::python
