// The Reduce* operators: the Tensor API's reductions, each a left fold in index order from the
// identity (docs/spec.md). The Tensor API sums small integers and float16 in a wider accumulator
// (tinygrad's sum_acc_dtype); the result is cast back to the input's dtype, as ONNX types it.
#include "onnx/graph.h"

namespace maroon::onnx {

namespace {

using Reducer = Tensor (*)(const Tensor& x, const Axis& axes, bool keep);

void reduce(OpTable& t, const char* name, int64_t axes_input_opset, Reducer f) {
  t[name] = [f, axes_input_opset](const OpCtx& c) {
    const Tensor& x = c.input(0);
    std::vector<int64_t> axes;
    if (c.opset < axes_input_opset) axes = c.attr_ints("axes");
    else if (c.has(1)) axes = c.ints(1);
    const bool keep = c.attr_i("keepdims", 1) != 0;
    if (axes.empty() && c.attr_i("noop_with_empty_axes", 0)) return std::vector<Tensor>{x};
    for (int64_t& a : axes) a = c.axis(a, std::max<int64_t>(x.ndim(), 1));
    Axis ax = axes.empty() ? Axis() : Axis(axes);
    if (x.ndim() == 0) return std::vector<Tensor>{f(x, Axis(), false)};
    return std::vector<Tensor>{f(x, ax, keep).cast(x.dtype())};
  };
}

}  // namespace

void add_reduce_ops(OpTable& t) {
  reduce(t, "ReduceSum", 13, [](const Tensor& x, const Axis& a, bool k) { return x.sum(a, k); });
  reduce(t, "ReduceMean", 18, [](const Tensor& x, const Axis& a, bool k) { return x.mean(a, k); });
  reduce(t, "ReduceMax", 18, [](const Tensor& x, const Axis& a, bool k) { return x.max(a, k); });
  reduce(t, "ReduceMin", 18, [](const Tensor& x, const Axis& a, bool k) { return x.min(a, k); });
  reduce(t, "ReduceProd", 18, [](const Tensor& x, const Axis& a, bool k) { return x.prod(a, k); });
  reduce(t, "ReduceL1", 18, [](const Tensor& x, const Axis& a, bool k) { return x.abs().sum(a, k); });
  reduce(t, "ReduceL2", 18, [](const Tensor& x, const Axis& a, bool k) { return x.mul(x).sum(a, k).sqrt(); });
  reduce(t, "ReduceSumSquare", 18, [](const Tensor& x, const Axis& a, bool k) { return x.mul(x).sum(a, k); });
  reduce(t, "ReduceLogSum", 18, [](const Tensor& x, const Axis& a, bool k) { return x.sum(a, k).log(); });
  reduce(t, "ReduceLogSumExp", 18, [](const Tensor& x, const Axis& a, bool k) { return x.logsumexp(a, k); });
}

}  // namespace maroon::onnx
