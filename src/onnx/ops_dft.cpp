// DFT, STFT (opset 17) and MelWeightMatrix (17) as compositions of the Tensor API.
//
// The transform is the direct one, a matrix product: Y = X · W with W[j, k] = e^{∓2πi·jk/n}, so
// each output bin is one left-fold dot product over the signal (matmul's order, docs/spec.md),
// never an FFT's butterflies. The twiddles are Maroon's correctly rounded SIN of a reduced angle:
// jk mod n is exact on the host, and by the sine's symmetries every cos and sin of 2π·m/n is
// ±sin(q·(π/(2n))) for an integer q in [0, n], so the table has n + 1 entries, is exactly 0 and 1
// where the true value is (m a multiple of n/4), and its angles never exceed π/2.
#include <cmath>
#include <numbers>

#include "onnx/graph.h"

namespace maroon::onnx {

namespace {

// The largest twiddle matrix (n × bins) the direct transform builds.
constexpr int64_t kMaxTwiddles = INT64_C(1) << 26;

// cos(2π·m/n) and sin(2π·m/n) for m = jk mod n, j < n, k < bins: two (n, bins) tensors of `d`.
std::pair<Tensor, Tensor> twiddles(const OpCtx& c, int64_t n, int64_t bins, DType d) {
  if (n * bins > kMaxTwiddles)
    c.fail("the direct DFT of length " + std::to_string(n) + " would build " + std::to_string(n * bins) +
           " twiddles, more than " + std::to_string(kMaxTwiddles));
  // sin(2π·q/(4n)) = sign · sin(2π·r/(4n)), r in [0, n].
  auto reduce = [n](int64_t q, int64_t& r, bool& neg) {
    q %= 4 * n;
    if (q < 0) q += 4 * n;
    neg = q >= 2 * n;
    if (neg) q -= 2 * n;
    r = q > n ? 2 * n - q : q;
  };
  std::vector<int64_t> ic, is;
  std::vector<uint8_t> nc, ns;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t k = 0; k < bins; ++k) {
      const int64_t m = (j * k) % n;
      int64_t r;
      bool neg;
      reduce(4 * m, r, neg);  // sin(2π m/n)
      is.push_back(r);
      ns.push_back(neg);
      reduce(n - 4 * m, r, neg);  // cos(2π m/n) = sin(2π (n/4 − m)/n)
      ic.push_back(r);
      nc.push_back(neg);
    }
  Tensor table = Tensor::arange(n + 1, DType::Int64).cast(d).mul(std::numbers::pi / static_cast<double>(2 * n)).sin();
  auto pick = [&](const std::vector<int64_t>& idx, const std::vector<uint8_t>& neg) {
    Tensor v = table.gather(0, Tensor::from_vector(idx, {n * bins})).reshape({n, bins});
    Tensor mask = Tensor::from_vector(neg, {n, bins}, DType::Bool);
    return mask.where(v.neg(), v);
  };
  return {pick(ic, nc), pick(is, ns)};
}

// The transform along the last axis of xr (and xi, the imaginary part, if any): (re, im), each
// (..., bins). Forward: re = xr·C + xi·S, im = xi·C − xr·S; inverse: re = xr·C − xi·S,
// im = xi·C + xr·S, each then ÷ n.
std::pair<Tensor, Tensor> transform(const OpCtx& c, const Tensor& xr, const std::optional<Tensor>& xi, int64_t bins,
                                    bool inverse) {
  const int64_t n = xr.shape().back();
  auto [C, S] = twiddles(c, n, bins, xr.dtype());
  Tensor re = xr.matmul(C), rs = xr.matmul(S);
  Tensor im = inverse ? rs : rs.neg();
  if (xi) {
    Tensor ic = xi->matmul(C), is = xi->matmul(S);
    re = inverse ? re.sub(is) : re.add(is);
    im = inverse ? ic.add(rs) : ic.sub(rs);
  }
  if (inverse) {
    Tensor len = Tensor::full({}, static_cast<double>(n), xr.dtype());
    re = re.div(len);
    im = im.div(len);
  }
  return {re, im};
}

// x's last axis (1: real, 2: complex) split into the real and imaginary parts (views).
std::pair<Tensor, std::optional<Tensor>> parts(const OpCtx& c, const Tensor& x) {
  if (!is_float(x.dtype())) c.fail("input must be a float tensor, got " + std::string(dtype_name(x.dtype())));
  const int64_t last = x.ndim() >= 2 ? x.shape().back() : 0;
  if (last != 1 && last != 2) c.fail("input's last axis must be 1 (real) or 2 (complex), got " + shape_str(x.shape()));
  std::vector<Tensor> p = x.split(1, -1);
  const int64_t r = x.ndim() - 1;
  if (last == 1) return {p[0].squeeze(r), std::nullopt};
  return {p[0].squeeze(r), p[1].squeeze(r)};
}

std::vector<Tensor> dft(const OpCtx& c) {
  const Tensor& x = c.input(0);
  auto [xr, xi] = parts(c, x);
  const int64_t r = x.ndim();
  int64_t axis = c.attr_i("axis", 1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r - 2)
    c.fail("axis " + std::to_string(c.attr_i("axis", 1)) + " must name a signal axis of " + shape_str(x.shape()));
  const bool inverse = c.attr_i("inverse", 0) != 0, onesided = c.attr_i("onesided", 0) != 0;
  if (inverse && onesided) c.fail("an inverse onesided DFT is refused (its missing half is not defined here)");
  const int64_t n = x.shape()[axis];
  int64_t len = n;
  if (c.has(1)) {
    std::vector<int64_t> l = c.ints(1);
    if (l.size() != 1 || l[0] < 1) c.fail("dft_length must be one positive integer");
    len = l[0];
  }
  // The signal axis last (views), zero-padded or cut to dft_length.
  std::vector<int64_t> order;
  for (int64_t i = 0; i < r - 1; ++i)
    if (i != axis) order.push_back(i);
  order.push_back(axis);
  auto fit = [&](Tensor t) {
    t = t.permute(order);
    if (len > n) {
      Pairs p(static_cast<size_t>(t.ndim()), {0, 0});
      p.back() = {0, len - n};
      return t.pad(p);
    }
    if (len < n) {
      Pairs p;
      for (int64_t d : t.shape()) p.push_back({0, d});
      p.back() = {0, len};
      return t.shrink(p);
    }
    return t;
  };
  std::optional<Tensor> fi;
  if (xi) fi = fit(*xi);
  auto [re, im] = transform(c, fit(xr), fi, onesided ? len / 2 + 1 : len, inverse);
  Tensor y = Tensor::stack_all({re, im}, -1);  // (..., bins, 2), the bins axis at r - 2
  std::vector<int64_t> back(static_cast<size_t>(r));
  for (size_t i = 0; i < order.size(); ++i) back[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);
  back[static_cast<size_t>(r - 1)] = r - 1;
  return {y.permute(back)};
}

std::vector<Tensor> stft(const OpCtx& c) {
  const Tensor& x = c.input(0);
  if (x.ndim() != 3) c.fail("signal must be (batch, length, 1 or 2), got " + shape_str(x.shape()));
  std::vector<int64_t> step = c.ints(1);
  if (step.size() != 1 || step[0] < 1) c.fail("frame_step must be one positive integer");
  int64_t len = -1;
  if (c.has(2)) {
    const Tensor& w = c.input(2);
    if (w.ndim() != 1 || w.dtype() != x.dtype()) c.fail("window must be 1-D of the signal's dtype, got " + shape_str(w.shape()));
    len = w.shape()[0];
  }
  if (c.has(3)) {
    std::vector<int64_t> l = c.ints(3);
    if (l.size() != 1 || l[0] < 1 || (len >= 0 && l[0] != len))
      c.fail("frame_length must be one positive integer, equal to the window's length if both are given");
    len = l[0];
  }
  if (len < 1) c.fail("needs a window or a frame_length");
  const int64_t total = x.shape()[1];
  if (total < len) c.fail("signal of length " + std::to_string(total) + " is shorter than a frame (" + std::to_string(len) + ")");
  const int64_t frames = (total - len) / step[0] + 1;
  std::vector<int64_t> idx;
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t t = 0; t < len; ++t) idx.push_back(f * step[0] + t);
  // (batch, frames, len, 1 or 2): one gather of the frames' samples, then the window.
  Tensor fr = x.gather(1, Tensor::from_vector(idx, {1, frames * len, 1}).expand({x.shape()[0], frames * len, x.shape()[2]}))
                  .reshape({x.shape()[0], frames, len, x.shape()[2]});
  if (c.has(2)) fr = fr.mul(c.input(2).reshape({len, 1}));
  auto [xr, xi] = parts(c, fr);
  const bool onesided = c.attr_i("onesided", 1) != 0;
  auto [re, im] = transform(c, xr, xi, onesided ? len / 2 + 1 : len, false);
  return {Tensor::stack_all({re, im}, -1)};
}

// ONNX 1.12's reference (its test generator): the band edges in mel, spaced by
// (high − low) ÷ (num_mel_bins + 2), back to Hz and to spectrogram bins (floored), then
// triangles of exact integer ratios.
std::vector<Tensor> mel_weight_matrix(const OpCtx& c) {
  auto one_int = [&](size_t i, const char* what) {
    std::vector<int64_t> v = c.ints(i);
    if (v.size() != 1 || v[0] < 1 || v[0] > (INT64_C(1) << 20))
      c.fail(std::string(what) + " must be one integer in [1, 2^20]");
    return v[0];
  };
  const int64_t mels = one_int(0, "num_mel_bins"), dft_len = one_int(1, "dft_length"), rate = one_int(2, "sample_rate");
  const Tensor& lo = c.input(3);
  const Tensor& hi = c.input(4);
  if (!is_float(lo.dtype()) || lo.dtype() != hi.dtype() || lo.numel() != 1 || hi.numel() != 1)
    c.fail("lower_edge_hertz and upper_edge_hertz must be one float each, of one dtype");
  const DType out = dtype_from_onnx(static_cast<int32_t>(c.attr_i("output_datatype", 1)), c.node.label());
  if (!is_float(out)) c.fail("output_datatype must be a float type");
  auto mel = [](const Tensor& hz) { return hz.div(700.0).add(1.0).log10().mul(2595.0).reshape({}); };
  Tensor low = mel(lo), step = mel(hi).sub(low).div(static_cast<double>(mels + 2));
  Tensor f = Tensor::arange(mels + 2, DType::Int64).cast(DType::Float64).mul(step.cast(DType::Float64)).add(low.cast(DType::Float64));
  Tensor hz = Tensor::full({mels + 2}, 10.0, DType::Float64).pow(f.div(2595.0)).sub(1.0).mul(700.0);
  std::vector<double> edges = hz.mul(static_cast<double>(dft_len + 1)).div(static_cast<double>(rate)).floor().tolist();
  const int64_t bins = dft_len / 2 + 1;
  std::vector<int64_t> num(static_cast<size_t>(bins * mels), 0), den(static_cast<size_t>(bins * mels), 1);
  auto set = [&](double row, int64_t i, int64_t nu, int64_t de) {
    if (!(row >= 0 && row < static_cast<double>(bins)))
      c.fail("mel band " + std::to_string(i) + " reaches spectrogram bin " + std::to_string(row) + ", outside [0, " +
             std::to_string(bins) + ")");
    const size_t at = static_cast<size_t>(static_cast<int64_t>(row) * mels + i);
    num[at] = nu;
    den[at] = de;
  };
  for (int64_t i = 0; i < mels; ++i) {
    for (int k = 0; k < 3; ++k)
      if (!(std::fabs(edges[static_cast<size_t>(i + k)]) < 1e15)) c.fail("a mel band edge is not finite");
    const int64_t l = static_cast<int64_t>(edges[i]), m = static_cast<int64_t>(edges[i + 1]),
                  h = static_cast<int64_t>(edges[i + 2]);
    if (m == l) set(static_cast<double>(m), i, 1, 1);
    for (int64_t j = l; m > l && j <= m; ++j) set(static_cast<double>(j), i, j - l, m - l);
    for (int64_t j = m; h > m && j < h; ++j) set(static_cast<double>(j), i, h - j, h - m);
  }
  Tensor w = Tensor::from_vector(num, {bins, mels}).cast(DType::Float64).div(Tensor::from_vector(den, {bins, mels}).cast(DType::Float64));
  return {w.cast(out)};
}

}  // namespace

void add_dft_ops(OpTable& t) {
  t["DFT"] = dft;
  t["STFT"] = stft;
  t["MelWeightMatrix"] = mel_weight_matrix;
}

}  // namespace maroon::onnx
