// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, as ONNX's function bodies define them:
// loss[n, d...] = -input[n, target[n, d...], d...] * weight[target] (0 where target is
// ignore_index), then none / sum / mean, the mean dividing by the sum of the weights applied.
#include "onnx/graph.h"

namespace maroon::onnx {

namespace {

// The per-element loss and the weights applied, both shaped like the target.
std::pair<Tensor, Tensor> nll(const OpCtx& c, const Tensor& input, const Tensor& target, std::optional<Tensor> weight) {
  if (input.ndim() < 2 || target.ndim() != input.ndim() - 1) c.fail("input must be (N, C, ...) and target (N, ...)");
  if (!is_int(target.dtype())) c.fail("target must be integers");
  const int64_t classes = input.shape()[1];
  Tensor t = target.cast(DType::Int64);
  Tensor keep = Tensor::full(t.shape(), true, DType::Bool);
  if (c.has_attr("ignore_index")) keep = t.ne(Tensor::full({}, c.attr_i("ignore_index", 0), DType::Int64));
  Tensor safe = keep.where(t, Tensor::full({}, int64_t{0}, DType::Int64));
  safe = checked_indices(c, safe, classes);
  Tensor picked = input.gather(1, safe.unsqueeze(1)).squeeze(1);
  Tensor w = weight ? (*weight)[std::vector<Index>{Index(safe.reshape({safe.numel()}))}].reshape(t.shape())
                    : Tensor::full(t.shape(), 1.0, input.dtype());
  w = keep.where(w, Tensor::full({}, 0.0, input.dtype()));
  return {picked.mul(w).neg(), w};
}

Tensor reduce_loss(const OpCtx& c, const Tensor& loss, const Tensor& w) {
  std::string r = c.attr_s("reduction", "mean");
  if (r == "none") return loss;
  if (r == "sum") return loss.sum();
  if (r == "mean") return loss.sum().div(w.sum());
  c.fail("reduction '" + r + "' is not none, sum or mean");
}

std::optional<Tensor> optional_input(const OpCtx& c, size_t i) {
  if (!c.has(i)) return std::nullopt;
  return c.input(i);
}

std::vector<Tensor> nll_loss(const OpCtx& c) {
  auto [loss, w] = nll(c, c.input(0), c.input(1), optional_input(c, 2));
  return {reduce_loss(c, loss, w)};
}

std::vector<Tensor> softmax_cross_entropy(const OpCtx& c) {
  const Tensor& scores = c.input(0);
  if (!is_float(scores.dtype()) || scores.ndim() < 2) c.fail("scores must be float (N, C, ...)");
  Tensor logp = scores.log_softmax(1);
  auto [loss, w] = nll(c, logp, c.input(1), optional_input(c, 2));
  return {reduce_loss(c, loss, w), logp};
}

}  // namespace

void add_loss_ops(OpTable& t) {
  t["NegativeLogLikelihoodLoss"] = nll_loss;
  t["SoftmaxCrossEntropyLoss"] = softmax_cross_entropy;
}

}  // namespace maroon::onnx
