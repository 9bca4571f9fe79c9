// Det: Gaussian elimination with partial pivoting (LAPACK getrf's pivot: the first row of
// largest |a| in the column, NaN never chosen), the arithmetic all Tensor API ops: per column k,
// factors a_ik ÷ a_kk (Maroon's division; 0 where the pivot is 0), rows updated a_ij − f·a_kj
// (two roundings, unfused); det = ±(left-fold product of the diagonal). The host only reads each
// pivot column's magnitudes to choose the row swaps (data-dependent, as Compress reads its
// condition), and applies them with a gather.
#include <cmath>

#include "onnx/graph.h"

namespace maroon::onnx {

namespace {

std::vector<Tensor> det(const OpCtx& c) {
  const Tensor& x = c.input(0);
  if (!is_float(x.dtype()) || x.ndim() < 2 || x.shape()[x.ndim() - 1] != x.shape()[x.ndim() - 2])
    c.fail("input must be float (..., M, M), got " + shape_str(x.shape()));
  const int64_t m = x.shape().back();
  const Shape batch_shape(x.shape().begin(), x.shape().end() - 2);
  const int64_t nb = prod(batch_shape);
  Tensor a = x.reshape({nb, m, m});
  std::vector<double> sign(static_cast<size_t>(nb), 1.0);
  for (int64_t k = 0; k < m; ++k) {
    // Row swaps: rows k and p per matrix, p the first row >= k of largest |a_ik|.
    std::vector<double> colv = a.shrink({{0, nb}, {k, m}, {k, k + 1}}).abs().cast(DType::Float64).to_vector<double>();
    std::vector<int64_t> perm;
    for (int64_t b = 0; b < nb; ++b) {
      int64_t p = 0;
      for (int64_t i = 1; i < m - k; ++i)
        if (colv[static_cast<size_t>(b * (m - k) + i)] > colv[static_cast<size_t>(b * (m - k) + p)]) p = i;
      if (p != 0) sign[static_cast<size_t>(b)] = -sign[static_cast<size_t>(b)];
      for (int64_t i = 0; i < m; ++i) perm.push_back(i == k ? k + p : (i == k + p ? k : i));
    }
    a = a.gather(1, Tensor::from_vector(perm, {nb, m, 1}).expand({nb, m, m}));
    if (k + 1 == m) break;
    Tensor pivot_row = a.shrink({{0, nb}, {k, k + 1}, {0, m}});           // (nb, 1, m)
    Tensor pivot = a.shrink({{0, nb}, {k, k + 1}, {k, k + 1}});           // (nb, 1, 1)
    Tensor below = a.shrink({{0, nb}, {k + 1, m}, {0, m}});               // (nb, m-k-1, m)
    Tensor col = a.shrink({{0, nb}, {k + 1, m}, {k, k + 1}});             // (nb, m-k-1, 1)
    Tensor f = pivot.eq(Tensor::full({}, 0.0, x.dtype())).where(Tensor::full({}, 0.0, x.dtype()), col.div(pivot));
    a = a.shrink({{0, nb}, {0, k + 1}, {0, m}}).cat({below.sub(f.mul(pivot_row))}, 1);
  }
  std::vector<int64_t> di;  // the diagonal's flat positions
  for (int64_t i = 0; i < m; ++i) di.push_back(i * (m + 1));
  Tensor d = m == 0 ? Tensor::ones({nb}, x.dtype())
                    : a.reshape({nb, m * m}).gather(1, Tensor::from_vector(di, {1, m}).expand({nb, m})).prod(1);
  return {d.mul(Tensor::from_vector(sign, {nb}).cast(x.dtype())).reshape(batch_shape)};
}

}  // namespace

void add_det_ops(OpTable& t) { t["Det"] = det; }

}  // namespace maroon::onnx
