// ReverseSequence: each batch row's first sequence_lens[b] steps reversed along the time axis,
// the rest kept. The lengths are read on the host (as Compress reads its condition); the result
// is one gather along the time axis with host-computed indices, so it moves values, never
// computes them: the same bits as the input's.
#include "onnx/graph.h"

namespace maroon::onnx {

namespace {

std::vector<Tensor> reverse_sequence(const OpCtx& c) {
  const Tensor& x = c.input(0);
  if (x.ndim() < 2) c.fail("input must have rank 2 or more, got " + shape_str(x.shape()));
  const int64_t time = c.attr_i("time_axis", 0), batch = c.attr_i("batch_axis", 1);
  if (!((time == 0 && batch == 1) || (time == 1 && batch == 0)))
    c.fail("time_axis and batch_axis must be 0 and 1 in some order, got " + std::to_string(time) + " and " +
           std::to_string(batch));
  const int64_t nt = x.shape()[time], nb = x.shape()[batch];
  std::vector<int64_t> lens = c.ints(1);
  if (static_cast<int64_t>(lens.size()) != nb)
    c.fail("sequence_lens has " + std::to_string(lens.size()) + " values for a batch of " + std::to_string(nb));
  Shape ishape(static_cast<size_t>(x.ndim()), 1);
  ishape[time] = nt;
  ishape[batch] = nb;
  std::vector<int64_t> idx(static_cast<size_t>(nt * nb));
  for (int64_t b = 0; b < nb; ++b) {
    if (lens[b] < 0 || lens[b] > nt)
      c.fail("sequence_lens value " + std::to_string(lens[b]) + " is outside [0, " + std::to_string(nt) + "]");
    for (int64_t t = 0; t < nt; ++t) {
      const int64_t at = time == 0 ? t * nb + b : b * nt + t;
      idx[static_cast<size_t>(at)] = t < lens[b] ? lens[b] - 1 - t : t;
    }
  }
  Tensor index = Tensor::from_vector(idx, ishape).expand(x.shape());
  return {x.gather(time, index)};
}

}  // namespace

void add_sequence_ops(OpTable& t) { t["ReverseSequence"] = reverse_sequence; }

}  // namespace maroon::onnx
