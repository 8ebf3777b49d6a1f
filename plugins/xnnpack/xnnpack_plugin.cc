// The xnnpack backend plugin: kiln's backend ABI (include/kiln/backend_abi.h) over XNNPACK's
// subgraph API. Options ("key=value;..."): threads=N (XNNPACK's pthreadpool), exclude=Op,Op (ops
// it will not claim), fail_compile=all|Op (compiles that fail on purpose: kiln's fallback tests).
#include <pthreadpool.h>
#include <xnnpack.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "graph_view.h"
#include "kiln/backend_abi.h"
#include "partition.h"

struct kiln_backend {
  pthreadpool_t pool = nullptr;
  std::vector<std::string> excluded;
  std::string fail_compile;
  ~kiln_backend() {
    if (pool) pthreadpool_destroy(pool);
  }
};

struct kiln_partition {
  kiln_xnnpack::Partition p;
};

namespace {

void set_error(char* buf, size_t len, const std::string& msg) {
  if (buf && len > 0) std::snprintf(buf, len, "%s", msg.c_str());
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t end = std::min(s.find(sep, start), s.size());
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

int create(const char* options, kiln_backend** out, char* err, size_t err_len) {
  static const xnn_status init = xnn_initialize(nullptr);
  if (init != xnn_status_success) {
    set_error(err, err_len, "xnn_initialize failed (status " + std::to_string(int(init)) + "): this CPU is not supported");
    return 1;
  }
  auto b = std::make_unique<kiln_backend>();
  int threads = 1;
  for (const std::string& kv : split(options ? options : "", ';')) {
    const size_t eq = kv.find('=');
    const std::string key = kv.substr(0, eq), value = eq == std::string::npos ? "" : kv.substr(eq + 1);
    if (key == "threads") {
      threads = std::atoi(value.c_str());
    } else if (key == "exclude") {
      b->excluded = split(value, ',');
    } else if (key == "fail_compile") {
      b->fail_compile = value;
    } else {
      set_error(err, err_len, "unknown option '" + key + "' (threads, exclude, fail_compile)");
      return 1;
    }
  }
  if (threads > 1) b->pool = pthreadpool_create(static_cast<size_t>(threads));
  *out = b.release();
  return 0;
}

void destroy(kiln_backend* b) { delete b; }

int claim(kiln_backend* b, const kiln_graph_desc* g, int32_t node, char* why_not, size_t len) {
  const std::string why = kiln_xnnpack::why_not(kiln_xnnpack::GraphView(*g), node, b->excluded);
  if (why.empty()) return 0;
  set_error(why_not, len, why);
  return 1;
}

int compile(kiln_backend* b, const kiln_graph_desc* g, kiln_partition** out, char* err, size_t len) {
  if (!b->fail_compile.empty()) {
    for (int32_t i = 0; i < g->n_nodes; ++i)
      if (b->fail_compile == "all" || b->fail_compile == g->nodes[i].op_type) {
        set_error(err, len, "compile refused by the plugin's option fail_compile=" + b->fail_compile);
        return 1;
      }
  }
  auto part = std::make_unique<kiln_partition>();
  const std::string e = kiln_xnnpack::compile_partition(kiln_xnnpack::GraphView(*g), b->pool, part->p);
  if (!e.empty()) {
    set_error(err, len, e);
    return 1;
  }
  *out = part.release();
  return 0;
}

int run(kiln_partition* p, const void* const* inputs, void* const* outputs, char* err, size_t len) {
  const std::string e = kiln_xnnpack::run_partition(p->p, inputs, outputs);
  if (e.empty()) return 0;
  set_error(err, len, e);
  return 1;
}

void destroy_partition(kiln_partition* p) { delete p; }

const kiln_backend_api kApi = {
    .abi_version = KILN_BACKEND_ABI_VERSION,
    .struct_size = sizeof(kiln_backend_api),
    .name = "xnnpack",
    .version = "kiln xnnpack plugin 1, XNNPACK 2022-02-16 (ae108ef)",
    .create = create,
    .destroy = destroy,
    .claim = claim,
    .compile = compile,
    .run = run,
    .destroy_partition = destroy_partition,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const kiln_backend_api* kiln_backend_entry(
    uint32_t host_abi_version) {
  return host_abi_version == KILN_BACKEND_ABI_VERSION ? &kApi : nullptr;
}
