// Matrix decompositions (tinygrad's mixin/op.py): Householder QR, one-sided Jacobi SVD and
// Newton-Schulz orthogonalisation, all as graphs of Tensor ops.
#include <algorithm>

#include "api/internal.h"
#include "maroon/tensor.h"
#include "maroon/primitives.h"

namespace maroon {

Tensor Tensor::newton_schulz(int64_t steps, const std::vector<double>& params, double eps) const {
  if (ndim() < 2) throw ShapeError("[newton_schulz] needs two or more dims, got " + shape_str(shape()));
  if (params.empty()) throw ShapeError("[newton_schulz] needs at least one polynomial coefficient");
  if (shape()[ndim() - 2] > shape()[ndim() - 1])
    return transpose(-2, -1).newton_schulz(steps, params, eps).transpose(-2, -1);
  Tensor G = div(square().sum({-2, -1}, true).sqrt() + eps);
  for (int64_t s = 0; s < steps; ++s) {
    std::optional<Tensor> acc;
    for (size_t i = 0; i < params.size(); ++i) {
      Tensor x = G;
      for (size_t k = 0; k < i; ++k) x = G.matmul(G.transpose(-2, -1)).matmul(x);
      Tensor term = prim::mul(params[i], x);
      acc = acc ? *acc + term : term;
    }
    G = *acc;
  }
  return G;
}

std::pair<Tensor, Tensor> Tensor::qr() const {
  if (ndim() < 2) throw ShapeError("[qr] expected two or more dimensions, got " + shape_str(shape()));
  Shape b(shape().begin(), shape().end() - 2);
  int64_t m = shape()[ndim() - 2], n = shape()[ndim() - 1];
  Tensor R = *this;
  Shape qs = b;
  qs.insert(qs.end(), {m, m});
  Tensor Q = eye(m, std::nullopt, dtype()).expand_to(qs);
  Tensor idx = arange(m);
  for (int64_t i = 0; i < std::min(m, n); ++i) {
    Tensor at_i = idx.eq(i);
    Tensor x = idx.ge(i).where(R[{Index::ellipsis(), Index(slice()), Index(i)}], 0);
    Tensor norm = x.square().sum(-1, true).sqrt();
    Tensor x0 = at_i.where(x, 0).sum(-1, true);
    Tensor sgn = x0.ne(0).where(x0.sign(), 1), active = norm.ne(0);
    Tensor u0 = x0 + sgn * norm;
    Tensor v = at_i.where(u0, x).div(active.where(u0, 1)).unsqueeze(-1);
    Tensor w = active.where(sgn * u0 / active.where(norm, 1), 0).unsqueeze(-1) * v;
    R = R - w.matmul(v.transpose(-2, -1).matmul(R));
    Q = Q - Q.matmul(v).matmul(w.transpose(-2, -1));
  }
  return {Q, R};
}



std::tuple<Tensor, Tensor, Tensor> Tensor::svd(bool full_matrices) const {
  if (ndim() < 2) throw ShapeError("[svd] expected two or more dimensions, got " + shape_str(shape()));
  Shape b(shape().begin(), shape().end() - 2);
  const int64_t m = shape()[ndim() - 2], n = shape()[ndim() - 1];
  auto [Q, R] = (m >= n ? *this : transpose(-2, -1)).qr();
  const int64_t num = std::min(m, n), q_num = std::max(m, n), h = num / 2;
  if (num < 2)  // the Jacobi rotations pair columns (tinygrad fails here too)
    throw ShapeError("[svd] needs at least 2 rows and 2 columns, got " + shape_str(shape()));
  auto bs = [&](Shape tail) {
    Shape s = b;
    s.insert(s.end(), tail.begin(), tail.end());
    return s;
  };
  Tensor U = R[{Index::ellipsis(), Index(slice(std::nullopt, num)), Index(slice(std::nullopt, num))}];
  Tensor V = eye(num, std::nullopt, dtype()).expand_to(bs({num, num}));
  Tensor perm = arange(h, DType::Int32).cat({arange(Scalar(h), Scalar(num), Scalar(1), DType::Int32).flip({0})});
  Tensor cols = arange(num, DType::Int32);
  Tensor eye_num = eye(num, std::nullopt, dtype()).expand_to(bs({num, num}));
  for (int64_t round = 0; round < 4 * num; ++round) {
    Tensor P = cols.unsqueeze(1).eq(perm.unsqueeze(0)).cast(U.dtype());
    Tensor P_pair = P[{Index::ellipsis(), Index(slice(std::nullopt, 2 * h))}];
    Tensor U_pair = U.matmul(P_pair);
    auto lr = U_pair.split(h, -1);
    Tensor gamma = (lr[0] * lr[1]).sum(-2).reshape(bs({1, h}));
    auto ab = U_pair.square().sum(-2).unsqueeze(-2).split(h, -1);
    Tensor rot = gamma.ne(0);
    Tensor tau = (ab[1] - ab[0]) / (2 * rot.where(gamma, 1));
    Tensor t = tau.ne(0).where(tau.sign(), 1) / (tau.abs() + (1 + tau.square()).sqrt());
    t = rot.where(t, 0);
    Tensor c = 1 / (1 + t.square()).sqrt();
    Tensor s = c * t;
    auto mij = P_pair.transpose(-2, -1).split(h, -2);
    Tensor Mi_a = mij[0].unsqueeze(-1), Mi_b = mij[0].unsqueeze(-2);
    Tensor Mj_a = mij[1].unsqueeze(-1), Mj_b = mij[1].unsqueeze(-2);
    Tensor cc = (c - 1).reshape(bs({h, 1, 1})), ss = s.reshape(bs({h, 1, 1}));
    Tensor Rot = eye_num + (cc * (Mi_a * Mi_b + Mj_a * Mj_b) + ss * (Mi_a * Mj_b - Mj_a * Mi_b)).sum(-3);
    U = U.matmul(Rot);
    V = V.matmul(Rot);
    if (num % 2 == 1) perm = (perm - 1).mod(Tensor::full({}, num, DType::Int32));
    else
      perm = perm[0].reshape({1}).cat({(perm[{Index(slice(1, num))}] - 2).mod(Tensor::full({}, num - 1, DType::Int32)) + 1});
  }
  auto [S, indices] = U.square().sum(-2).sqrt().sort(-1, true);
  Tensor new_idx = indices.unsqueeze(-2).expand_to(bs({num, num}));
  U = U.gather(-1, new_idx) / S.ne(0).where(S, 1).unsqueeze(-2);
  V = V.gather(-1, new_idx);
  Pairs pad(b.size(), {0, 0});
  pad.push_back({0, q_num - num});
  pad.push_back({0, q_num - num});
  Tensor eye_q = eye(q_num, std::nullopt, U.dtype()).expand_to(bs({q_num, q_num}));
  Tensor eye_n = eye(num, std::nullopt, U.dtype()).expand_to(bs({num, num})).pad(pad);
  U = Q.matmul(U.pad(pad) + eye_q - eye_n);
  if (!full_matrices) U = U[{Index::ellipsis(), Index(slice(0, num))}];
  if (m >= n) return {U, S, V.transpose(-2, -1)};
  return {V, S, U.transpose(-2, -1)};
}

}  // namespace maroon
