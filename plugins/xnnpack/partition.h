// A partition compiled into an XNNPACK runtime: its subgraph is built from kiln's description
// (partition.cc), images converted between kiln's NCHW and XNNPACK's NHWC at its boundary.
#pragma once

#include <xnnpack.h>

#include <deque>
#include <string>
#include <vector>

#include "graph_view.h"

namespace kiln_xnnpack {

struct Port {
  uint32_t id = 0;              // the XNNPACK external value
  bool image = false;           // rank 4: NCHW outside, NHWC inside (staged)
  std::vector<int64_t> dims;    // kiln's (NCHW) dims
  std::vector<float> staging;   // images: the NHWC copy
};

struct Partition {
  xnn_runtime_t runtime = nullptr;
  std::vector<Port> inputs, outputs;
  std::deque<std::vector<float>> constants;  // weights laid out for XNNPACK; outlive the runtime
  std::vector<xnn_external_value> externals;
  std::vector<void*> bound;                  // the pointers the runtime was last set up with
  ~Partition() {
    if (runtime) xnn_delete_runtime(runtime);
  }
};

// Builds p from partition g; returns "" or why it cannot.
std::string compile_partition(const GraphView& g, pthreadpool_t pool, Partition& p);
// Runs p on kiln's row-major buffers; returns "" or what failed.
std::string run_partition(Partition& p, const void* const* inputs, void* const* outputs);

}  // namespace kiln_xnnpack
