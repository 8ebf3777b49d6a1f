// Which Resize nodes cpu::resize_2d runs, read once for the context kernel (tensors at run time)
// and for the planned step (constants at plan time).
#pragma once

#include <optional>
#include <vector>

#include "engine/cpu/resize.h"
#include "ir/graph.h"

namespace kiln::engine {

// The options of a Resize of float data x (dims x_dims, rank >= 2, no zero dim) with only its
// last two axes resized, nearest or linear, any coordinate mode but tf_crop_and_resize, no
// antialias, the default axes and aspect policy; `scales` and `sizes` are the node's inputs 2 and
// 3 (null or empty when absent). The output dims through out_dims. nullopt: the reference's.
std::optional<cpu::ResizeOptions> resize_options(const Node& n, int opset,
                                                 const std::vector<int64_t>& x_dims,
                                                 const Tensor* scales, const Tensor* sizes,
                                                 std::vector<int64_t>& out_dims);

}  // namespace kiln::engine
