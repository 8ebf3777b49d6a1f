#include "capi/status.h"

#include <new>
#include <stdexcept>

#include "support/error.h"

namespace kiln::capi {

namespace {

thread_local std::string last_error;

kiln_status status_of(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kBadModel: return KILN_ERROR_BAD_MODEL;
    case ErrorKind::kBadInput: return KILN_ERROR_BAD_INPUT;
    case ErrorKind::kUnsupported: return KILN_ERROR_UNSUPPORTED;
    case ErrorKind::kRuntime: return KILN_ERROR_RUNTIME;
    case ErrorKind::kInternal: return KILN_ERROR_INTERNAL;
  }
  return KILN_ERROR_INTERNAL;
}

// One line: a message with line breaks (a library's) is joined with "; ".
std::string one_line(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '\n') out += "; ";
    else if (c != '\r') out += c;
  }
  return out;
}

}  // namespace

kiln_status set_last_error(kiln_status status, const std::string& message) {
  try {
    last_error = one_line(message);
  } catch (...) {  // out of memory for the message itself
    last_error.clear();
  }
  return status;
}

kiln_status status_of_current_exception(const char* function) noexcept {
  try {
    throw;
  } catch (const Refusal& r) {
    return set_last_error(r.status, std::string(function) + ": " + r.message);
  } catch (const Error& e) {
    return set_last_error(status_of(e.kind()), e.what());
  } catch (const std::bad_alloc&) {
    return set_last_error(KILN_ERROR_RUNTIME, std::string(function) + ": out of memory");
  } catch (const std::exception& e) {
    return set_last_error(KILN_ERROR_INTERNAL,
                          std::string(function) + ": internal error (a bug in kiln): " + e.what());
  } catch (...) {
    return set_last_error(KILN_ERROR_INTERNAL,
                          std::string(function) + ": internal error (a bug in kiln): unknown exception");
  }
}

}  // namespace kiln::capi

extern "C" {

const char* kiln_last_error(void) { return kiln::capi::last_error.c_str(); }

const char* kiln_status_name(kiln_status status) {
  switch (status) {
    case KILN_OK: return "KILN_OK";
    case KILN_ERROR_INVALID_ARGUMENT: return "KILN_ERROR_INVALID_ARGUMENT";
    case KILN_ERROR_IO: return "KILN_ERROR_IO";
    case KILN_ERROR_BAD_MODEL: return "KILN_ERROR_BAD_MODEL";
    case KILN_ERROR_BAD_INPUT: return "KILN_ERROR_BAD_INPUT";
    case KILN_ERROR_BUFFER_TOO_SMALL: return "KILN_ERROR_BUFFER_TOO_SMALL";
    case KILN_ERROR_UNSUPPORTED: return "KILN_ERROR_UNSUPPORTED";
    case KILN_ERROR_RUNTIME: return "KILN_ERROR_RUNTIME";
    case KILN_ERROR_INTERNAL: return "KILN_ERROR_INTERNAL";
    default: return "KILN_ERROR_UNKNOWN";
  }
}

}  // extern "C"
