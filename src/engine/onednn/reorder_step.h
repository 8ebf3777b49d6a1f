// A layout change: a value copied from one memory layout into another (oneDNN reorder).
#pragma once

#include <memory>

#include <oneapi/dnnl/dnnl.hpp>

#include "engine/step.h"

namespace kiln::engine {

// Reads slot src (logical dims `dims`, layout src_md), writes slot dst (layout dst_md) into a
// planned buffer.
std::unique_ptr<Step> make_reorder_step(const Node* for_node, const std::vector<int64_t>& dims,
                                        int src, const dnnl::memory::desc& src_md, int dst,
                                        const dnnl::memory::desc& dst_md);

}  // namespace kiln::engine
