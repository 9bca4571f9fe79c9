// Resize (opset 10+) and Upsample: placeholder until the separable version lands.
#include "onnx/graph.h"

namespace maroon::onnx {

void add_resize_ops(OpTable&) {}

}  // namespace maroon::onnx
