// oneDNN's pooling, for what needs it outside the dispatch table: the measured choice between
// kiln's pooling of channel blocks (cpu.pool) and oneDNN's (engine/tuning.h).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <functional>

#include "engine/graph_facts.h"

namespace kiln::engine {

// One run of oneDNN's pooling of n (a float MaxPool or AveragePool onednn.pool takes) reading its
// input in the layout `made`, on scratch buffers, as onednn.pool would run it; null where oneDNN
// has no optimized implementation of it in that layout.
std::function<void()> timed_onednn_pool(const Node& n, const GraphFacts& f, const dnnl::memory::desc& made);

}  // namespace kiln::engine
