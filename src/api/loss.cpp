// Losses (tinygrad's mixin/op.py).
#include "api/internal.h"
#include "core/fpenv.h"
#include "maroon/tensor.h"
#include "maroon/primitives.h"

namespace maroon {

Reduction reduction_from_name(const std::string& r) {
  if (r == "mean") return Reduction::Mean;
  if (r == "sum") return Reduction::Sum;
  if (r == "none") return Reduction::None;
  throw ShapeError("[reduction] reduction='" + r + "' must be 'mean', 'sum' or 'none'");
}

Tensor Tensor::do_reduction(Reduction r) const {
  switch (r) {
    case Reduction::None: return *this;
    case Reduction::Sum: return sum();
    case Reduction::Mean: return mean();
  }
  return *this;
}

Tensor Tensor::binary_crossentropy(const Tensor& Y, Reduction r) const {
  Tensor a = Y.neg().mul(log());
  Tensor b = (1 - Y).mul((1 - *this).log());
  return a.sub(b).do_reduction(r);
}

Tensor Tensor::binary_crossentropy_logits(const Tensor& Y, Reduction r, std::optional<Tensor> pos_weight) const {
  Tensor log_p = logsigmoid(), log_1mp = neg().logsigmoid();
  Tensor a = pos_weight ? pos_weight->mul(Y).mul(log_p) : prim::mul(1, Y).mul(log_p);
  return a.add((1 - Y).mul(log_1mp)).neg().do_reduction(r);
}

Tensor Tensor::sparse_categorical_crossentropy(const Tensor& Y, int64_t ignore_index, double ls,
                                               Reduction r) const {
  if (ls < 0 || ls > 1) throw ShapeError("[sparse_categorical_crossentropy] label_smoothing must be in [0, 1]");
  if (ndim() == 0) throw ShapeError("[sparse_categorical_crossentropy] needs class scores, got a 0-d tensor");
  Tensor log_probs = log_softmax();
  Tensor loss_mask = ignore_index != -1 ? Y.ne(ignore_index) : api::filled(Y.shape(), true, DType::Bool);
  Tensor y = Y.unsqueeze(-1).one_hot_along_dim(shape().back(), -1).mul(loss_mask.unsqueeze(-1));
  Tensor smoothing = prim::mul(ls, log_probs.mean(-1).mul(loss_mask));
  Tensor unreduced = prim::mul(1 - ls, log_probs.mul(y).sum(-1)).add(smoothing);
  if (r == Reduction::Mean) return unreduced.sum().neg().div(loss_mask.sum());
  return unreduced.do_reduction(r).neg();
}

Tensor Tensor::cross_entropy(const Tensor& Y_in, Reduction r, double ls) const {
  if (ls < 0 || ls > 1) throw ShapeError("[cross_entropy] label_smoothing must be in [0, 1]");
  int64_t cd = ndim() == 1 ? 0 : 1;
  Tensor Y = Y_in;
  if (shape() != Y.shape()) {
    if (max(cd).shape() != Y.shape())
      throw ShapeError("[cross_entropy] shape mismatch: " + shape_str(shape()) + " and " + shape_str(Y.shape()));
    Y = Y.unsqueeze(cd).one_hot_along_dim(shape()[cd], cd);
  }
  const auto [keep, spread] = in_ieee_env([&] { return std::pair{1 - ls, ls / static_cast<double>(Y.shape()[cd])}; });
  Y = prim::mul(keep, Y).add(spread);
  return log_softmax(cd).mul(Y).sum(cd).neg().do_reduction(r);
}

Tensor Tensor::nll_loss(const Tensor& Y, std::optional<Tensor> weight, std::optional<int64_t> ignore_index,
                        Reduction r) const {
  Tensor w = weight ? weight->gather(0, Y.flatten()).reshape(Y.shape()) : Y.const_like(1);
  Tensor mw = ignore_index ? w.mul(Y.ne(*ignore_index)) : w;
  Tensor nll = gather(1, Y.unsqueeze(1)).squeeze(1).neg().mul(mw);
  if (r == Reduction::Mean) return nll.sum().div(mw.sum());
  return nll.do_reduction(r);
}

Tensor Tensor::mse(const Tensor& Y, Reduction r) const { return sub(Y).square().do_reduction(r); }

}  // namespace maroon
