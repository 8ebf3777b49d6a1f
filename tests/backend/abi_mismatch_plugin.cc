// A backend plugin that says it was built for ABI version 99: kiln must refuse to load it
// (src/backend/plugin_test.cc). Its functions are never called.
#include "kiln/backend_abi.h"

namespace {

const kiln_backend_api kTable = {
    .abi_version = 99,
    .struct_size = sizeof(kiln_backend_api),
    .name = "abi_mismatch",
    .version = "test",
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const kiln_backend_api* kiln_backend_entry(
    uint32_t host_abi_version) {
  return &kTable;
}
