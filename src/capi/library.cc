// The C API's library-wide functions: versions and element types.
#include "ir/dtype.h"
#include "kiln/kiln.h"

#ifndef KILN_VERSION_STRING
#error "KILN_VERSION_STRING is set by CMakeLists.txt (the project's VERSION)"
#endif

static_assert(KILN_DTYPE_INT2 + 1 == kiln::kDataTypeCount, "kiln_dtype lists every kiln::DataType");
static_assert(KILN_DTYPE_FLOAT32 == static_cast<int>(kiln::DataType::kFloat) &&
              KILN_DTYPE_BFLOAT16 == static_cast<int>(kiln::DataType::kBFloat16) &&
              KILN_DTYPE_INT2 == static_cast<int>(kiln::DataType::kInt2),
              "kiln_dtype values are ONNX's, as kiln::DataType's");

extern "C" {

int kiln_api_version(void) { return KILN_API_VERSION; }

const char* kiln_version(void) { return KILN_VERSION_STRING; }

size_t kiln_dtype_size(kiln_dtype dtype) {
  if (!kiln::is_valid_dtype(dtype)) return 0;
  return kiln::dtype_size(static_cast<kiln::DataType>(dtype));
}

const char* kiln_dtype_name(kiln_dtype dtype) {
  if (!kiln::is_valid_dtype(dtype) || dtype == KILN_DTYPE_UNDEFINED) return "undefined";
  // dtype_name returns views of string literals: NUL-terminated.
  return kiln::dtype_name(static_cast<kiln::DataType>(dtype)).data();
}

}  // extern "C"
