#include "errors.h"

#include <new>

#include "support/error.h"

namespace kiln::python {

namespace py = pybind11;

namespace {

const char* code_name(OrtCode c) {
  switch (c) {
    case OrtCode::kFail: return "FAIL";
    case OrtCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case OrtCode::kNoSuchFile: return "NO_SUCHFILE";
    case OrtCode::kNoModel: return "NO_MODEL";
    case OrtCode::kEngineError: return "ENGINE_ERROR";
    case OrtCode::kRuntimeException: return "RUNTIME_EXCEPTION";
    case OrtCode::kInvalidProtobuf: return "INVALID_PROTOBUF";
    case OrtCode::kModelLoaded: return "MODEL_LOADED";
    case OrtCode::kNotImplemented: return "NOT_IMPLEMENTED";
    case OrtCode::kInvalidGraph: return "INVALID_GRAPH";
    case OrtCode::kEpFail: return "EP_FAIL";
  }
  return "FAIL";
}

// The Python class names of kiln/capi/onnxruntime_pybind11_state.py.
const char* class_name(OrtCode c) {
  switch (c) {
    case OrtCode::kFail: return "Fail";
    case OrtCode::kInvalidArgument: return "InvalidArgument";
    case OrtCode::kNoSuchFile: return "NoSuchFile";
    case OrtCode::kNoModel: return "NoModel";
    case OrtCode::kEngineError: return "EngineError";
    case OrtCode::kRuntimeException: return "RuntimeException";
    case OrtCode::kInvalidProtobuf: return "InvalidProtobuf";
    case OrtCode::kModelLoaded: return "ModelLoaded";
    case OrtCode::kNotImplemented: return "NotImplemented";
    case OrtCode::kInvalidGraph: return "InvalidGraph";
    case OrtCode::kEpFail: return "EPFail";
  }
  return "Fail";
}

}  // namespace

void rethrow_kiln_error(const std::exception& e, bool load, const std::string& context) {
  OrtCode code = OrtCode::kFail;
  if (const auto* k = dynamic_cast<const Error*>(&e)) {
    switch (k->kind()) {
      case ErrorKind::kBadModel: code = load ? OrtCode::kInvalidProtobuf : OrtCode::kInvalidGraph; break;
      case ErrorKind::kBadInput: code = load ? OrtCode::kNoSuchFile : OrtCode::kInvalidArgument; break;
      case ErrorKind::kUnsupported: code = OrtCode::kNotImplemented; break;
      case ErrorKind::kRuntime: code = OrtCode::kRuntimeException; break;
      case ErrorKind::kInternal: code = OrtCode::kFail; break;
    }
  } else if (dynamic_cast<const std::bad_alloc*>(&e)) {
    code = OrtCode::kRuntimeException;
  }
  throw OrtError(code, context + e.what());
}

void register_errors(py::module_& m) {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const OrtError& e) {
      py::object cls = py::module_::import("kiln.capi.onnxruntime_pybind11_state").attr(class_name(e.code()));
      const std::string msg = std::string("[ONNXRuntimeError] : ") +
                              std::to_string(static_cast<int>(e.code())) + " : " + code_name(e.code()) +
                              " : " + e.what();
      PyErr_SetString(cls.ptr(), msg.c_str());
    } catch (const Error& e) {  // a kiln::Error no call site translated
      py::object cls = py::module_::import("kiln.capi.onnxruntime_pybind11_state").attr("Fail");
      PyErr_SetString(cls.ptr(), e.what());
    }
  });
}

}  // namespace kiln::python
