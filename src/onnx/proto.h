// The one place that includes ONNX's generated protobuf classes (libonnx-dev, onnx-ml.proto).
#pragma once

#include <onnx/onnx-data_pb.h>
#include <onnx/onnx_pb.h>
