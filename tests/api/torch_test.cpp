// The Tensor API, forward and backward, against PyTorch, on random shapes with broadcasting,
// non-contiguous (permuted) views, ties and zeros.
//
// Tolerances (tinygrad's own test_ops defaults): forward |maroon - torch| <= 1e-5 + 1e-4*|torch|,
// gradients <= 1e-4 + 1e-3*|torch|; a few cases widen them and say why. Exact equality for
// integer and boolean results.
#include <random>

#include "torch_harness.h"
#include "maroon/primitives.h"

namespace maroon {
namespace {

using torchtest::Case;
using torchtest::Input;
using V = std::vector<Tensor>;

Input F(Shape s, double lo = -2, double hi = 2) {
  Input i;
  i.shape = s;
  i.lo = lo;
  i.hi = hi;
  return i;
}
Input Q(Shape s) {  // quantized: ties and zeros
  Input i = F(s);
  i.quantize = true;
  return i;
}
Input P(Shape base, std::vector<int64_t> perm, double lo = -2, double hi = 2) {  // permuted view
  Input i = F(base, lo, hi);
  i.perm = perm;
  return i;
}
Input I(Shape s, int64_t lo, int64_t hi) {
  Input i = F(s, static_cast<double>(lo), static_cast<double>(hi));
  i.integer = true;
  return i;
}
Input NoGrad(Input i) {
  i.grad = false;
  return i;
}

void report(const char* group, const torchtest::Outcome& o) {
  std::printf("[torch] %s: %d cases, %d forward and %d backward comparisons\n", group, o.cases, o.forward_checked,
              o.backward_checked);
}

TEST(TorchCompare, Elementwise) {
  std::vector<Case> cs = {
      {"add broadcast", {F({3, 1}), F({1, 4})}, [](const V& x) { return x[0] + x[1]; }, "x0 + x1"},
      {"sub permuted", {P({4, 3}, {1, 0}), F({4})}, [](const V& x) { return x[0] - x[1]; }, "x0 - x1"},
      {"mul 3d", {F({2, 3, 4}), F({4})}, [](const V& x) { return x[0] * x[1]; }, "x0 * x1"},
      {"div", {F({2, 3}), F({3}, 0.5, 2)}, [](const V& x) { return x[0] / x[1]; }, "x0 / x1"},
      {"scalar ops", {F({5})}, [](const V& x) { return (2.5 - x[0]) * 3 / 4 + 1; }, "(2.5 - x0) * 3 / 4 + 1"},
      {"neg", {Q({6})}, [](const V& x) { return -x[0]; }, "-x0"},
      {"exp", {F({2, 3})}, [](const V& x) { return x[0].exp(); }, "x0.exp()"},
      {"log", {F({2, 3}, 0.1, 3)}, [](const V& x) { return x[0].log(); }, "x0.log()"},
      {"exp2", {F({5})}, [](const V& x) { return x[0].exp2(); }, "torch.exp2(x0)"},
      {"log2", {F({5}, 0.1, 3)}, [](const V& x) { return x[0].log2(); }, "torch.log2(x0)"},
      {"sqrt", {F({5}, 0.1, 3)}, [](const V& x) { return x[0].sqrt(); }, "x0.sqrt()"},
      {"rsqrt", {F({5}, 0.1, 3)}, [](const V& x) { return x[0].rsqrt(); }, "x0.rsqrt()"},
      {"sin", {F({2, 4}, -6, 6)}, [](const V& x) { return x[0].sin(); }, "x0.sin()"},
      {"cos", {P({2, 4}, {1, 0}, -6, 6)}, [](const V& x) { return x[0].cos(); }, "x0.cos()"},
      {"tan", {F({5}, -1.2, 1.2)}, [](const V& x) { return x[0].tan(); }, "x0.tan()"},
      {"relu ties", {Q({3, 4})}, [](const V& x) { return x[0].relu(); }, "x0.relu()"},
      {"leaky_relu", {F({6})}, [](const V& x) { return x[0].leaky_relu(0.1); }, "F.leaky_relu(x0, 0.1)"},
      {"elu", {F({6})}, [](const V& x) { return x[0].elu(); }, "F.elu(x0)"},
      {"sigmoid", {F({6}, -5, 5)}, [](const V& x) { return x[0].sigmoid(); }, "x0.sigmoid()"},
      {"tanh", {F({6}, -3, 3)}, [](const V& x) { return x[0].tanh(); }, "x0.tanh()"},
      {"gelu tanh", {F({6}, -3, 3)}, [](const V& x) { return x[0].gelu(); }, "F.gelu(x0, approximate='tanh')"},
      {"silu", {F({6})}, [](const V& x) { return x[0].silu(); }, "F.silu(x0)"},
      {"softplus", {F({6})}, [](const V& x) { return x[0].softplus(); }, "F.softplus(x0)"},
      {"mish", {F({6})}, [](const V& x) { return x[0].mish(); }, "F.mish(x0)"},
      {"abs ties", {Q({8})}, [](const V& x) { return x[0].abs(); }, "x0.abs()"},
      {"sign", {Q({8})}, [](const V& x) { return x[0].sign(); }, "x0.sign()"},
      {"clip at bounds", {Q({3, 3})}, [](const V& x) { return x[0].clip(-1.0, 0.5); }, "x0.clip(-1.0, 0.5)"},
      {"maximum ties", {Q({4, 3}), Q({3})}, [](const V& x) { return x[0].maximum(x[1]); }, "torch.maximum(x0, x1)"},
      {"minimum ties", {Q({4, 3}), Q({4, 1})}, [](const V& x) { return x[0].minimum(x[1]); }, "torch.minimum(x0, x1)"},
      {"pow", {F({5}, 0.2, 2), F({5}, -2, 2)}, [](const V& x) { return x[0].pow(x[1]); }, "x0.pow(x1)"},
      {"pow scalar", {F({5}, 0.2, 2)}, [](const V& x) { return x[0].pow(2.5); }, "x0.pow(2.5)"},
      {"square", {Q({5})}, [](const V& x) { return x[0].square(); }, "x0.square()"},
      {"reciprocal", {F({5}, 0.3, 2)}, [](const V& x) { return x[0].reciprocal(); }, "x0.reciprocal()"},
      {"floor", {F({7})}, [](const V& x) { return x[0].floor(); }, "x0.floor()"},
      {"ceil", {F({7})}, [](const V& x) { return x[0].ceil(); }, "x0.ceil()"},
      {"round half even", {Q({9})}, [](const V& x) { return x[0].round(); }, "x0.round()"},
      {"trunc", {F({7})}, [](const V& x) { return x[0].trunc(); }, "x0.trunc()"},
      {"where", {F({3, 4}), F({4})}, [](const V& x) { return (x[0] > 0).where(x[0], x[1]); },
       "torch.where(x0 > 0, x0, x1)"},
      {"comparisons", {Q({3, 4}), Q({4})},
       [](const V& x) { return ((x[0] < x[1]) | (x[0] >= x[1] * 2)).cast(DType::Int32) + (x[0] == x[1]).cast(DType::Int32); },
       "((x0 < x1) | (x0 >= x1 * 2)).int() + (x0 == x1).int()", false},
      {"bitwise ints", {I({6}, -50, 50), I({6}, -50, 50)},
       [](const V& x) { return (x[0] & x[1]) ^ (x[0] | 3) ^ ~x[1]; }, "(x0 & x1) ^ (x0 | 3) ^ ~x1", false},
      {"int floordiv mod", {I({8}, -20, 20), I({8}, 1, 7)}, [](const V& x) { return x[0].div(x[1], "floor") * 100 + x[0].mod(x[1]); },
       "torch.div(x0, x1, rounding_mode='floor') * 100 + torch.remainder(x0, x1)", false},
      {"cast float->int", {F({6}, -5, 5)}, [](const V& x) { return x[0].cast(DType::Int32); }, "x0.int()", false},
      {"erf gelu none", {F({6}, -2, 2)}, [](const V& x) { return x[0].gelu("none"); }, "F.gelu(x0)", true,
       2e-4, 1e-3, 2e-4, 1e-3},  // tinygrad's erf is the A&S 7.1.26 polynomial: |error| <= 1.5e-7 * x
      {"logaddexp", {F({4}), F({4})}, [](const V& x) { return x[0].logaddexp(x[1]); }, "torch.logaddexp(x0, x1)"},
      {"hardtanh/relu6/hardswish", {F({8}, -8, 8)},
       [](const V& x) { return x[0].hardtanh() + x[0].relu6() + x[0].hardswish(); },
       "F.hardtanh(x0) + F.relu6(x0) + F.hardswish(x0)"},
      {"selu/celu/softsign", {F({6})}, [](const V& x) { return x[0].selu() + x[0].celu() + x[0].softsign(); },
       "F.selu(x0) + F.celu(x0) + F.softsign(x0)", true, 1e-4, 1e-4, 1e-3, 1e-3},  // tinygrad's selu constants are rounded
      {"sinh/cosh/asinh", {F({5}, -1.5, 1.5)}, [](const V& x) { return x[0].sinh() + x[0].cosh() + x[0].asinh(); },
       "x0.sinh() + x0.cosh() + x0.asinh()"},
      {"lerp", {F({4}), F({4}), F({4}, 0, 1)}, [](const V& x) { return x[0].lerp(x[1], x[2]); }, "torch.lerp(x0, x1, x2)"},
  };
  report("elementwise", torchtest::run_cases(cs, 1000));
}

TEST(TorchCompare, Reductions) {
  std::vector<Case> cs = {
      {"sum all", {F({3, 4})}, [](const V& x) { return x[0].sum(); }, "x0.sum()"},
      {"sum axis keepdim permuted", {P({3, 4, 2}, {2, 0, 1})}, [](const V& x) { return x[0].sum({0, 2}, true); },
       "x0.sum((0, 2), keepdim=True)"},
      {"prod with zeros", {Q({3, 4})}, [](const V& x) { return x[0].prod(1); }, "x0.prod(1)"},
      {"max ties (amax)", {Q({4, 5})}, [](const V& x) { return x[0].max(1); }, "x0.amax(1)"},
      {"min ties (amin)", {Q({4, 5})}, [](const V& x) { return x[0].min(0, true); }, "x0.amin(0, keepdim=True)"},
      {"max all", {Q({3, 3})}, [](const V& x) { return x[0].max(); }, "x0.amax()"},
      {"mean", {F({3, 5})}, [](const V& x) { return x[0].mean(-1); }, "x0.mean(-1)"},
      {"var", {F({4, 5})}, [](const V& x) { return x[0].var(1); }, "x0.var(1)"},
      {"std all", {P({4, 3}, {1, 0})}, [](const V& x) { return x[0].std(); }, "x0.std()"},
      {"var unbiased=False", {F({6})}, [](const V& x) { return x[0].var({}, false, 0); }, "x0.var(unbiased=False)"},
      {"argmax ties", {Q({4, 6})}, [](const V& x) { return x[0].argmax(1); }, "x0.argmax(1).int()", false},
      {"argmin all", {Q({4, 6})}, [](const V& x) { return x[0].argmin(); }, "x0.argmin().int()", false},
      {"any/all", {Q({4, 3})}, [](const V& x) { return x[0].any(1).cast(DType::Int32) + x[0].all(0).sum(); },
       "x0.bool().any(1).int() + x0.bool().all(0).sum()", false},
      {"logsumexp", {F({3, 4}, -5, 5)}, [](const V& x) { return x[0].logsumexp(1); }, "x0.logsumexp(1)"},
      {"softmax", {F({3, 5}, -4, 4)}, [](const V& x) { return x[0].softmax(-1); }, "x0.softmax(-1)"},
      {"softmax axis 0 permuted", {P({5, 3}, {1, 0})}, [](const V& x) { return x[0].softmax(0); }, "x0.softmax(0)"},
      {"log_softmax", {F({3, 5}, -4, 4)}, [](const V& x) { return x[0].log_softmax(); }, "x0.log_softmax(-1)"},
      {"cumsum", {F({3, 6})}, [](const V& x) { return x[0].cumsum(1); }, "x0.cumsum(1)"},
      {"cumsum long", {F({600})}, [](const V& x) { return x[0].cumsum(0); }, "x0.cumsum(0)", true, 2e-4, 1e-4},
      {"cumprod", {F({2, 5}, 0.5, 1.5)}, [](const V& x) { return x[0].cumprod(1); }, "x0.cumprod(1)"},
  };
  report("reductions", torchtest::run_cases(cs, 2000));
}

TEST(TorchCompare, Movement) {
  std::vector<Case> cs = {
      {"reshape", {F({2, 6})}, [](const V& x) { return x[0].reshape({3, -1}).exp(); }, "x0.reshape(3, -1).exp()"},
      {"expand", {F({3, 1})}, [](const V& x) { return x[0].expand_to({2, 3, 4}) * 1.5; }, "x0.expand(2, 3, 4) * 1.5"},
      {"permute", {F({2, 3, 4})}, [](const V& x) { return x[0].permute({2, 0, 1}).exp(); }, "x0.permute(2, 0, 1).exp()"},
      {"transpose", {F({2, 3, 4})}, [](const V& x) { return x[0].transpose(0, 2).exp(); }, "x0.transpose(0, 2).exp()"},
      {"flatten/unflatten", {F({2, 3, 4})}, [](const V& x) { return x[0].flatten(1).unflatten(1, {4, 3}).exp(); },
       "x0.flatten(1).unflatten(1, (4, 3)).exp()"},
      {"squeeze/unsqueeze", {F({2, 1, 3})}, [](const V& x) { return x[0].squeeze(1).unsqueeze(0).exp(); },
       "x0.squeeze(1).unsqueeze(0).exp()"},
      {"pad value", {F({2, 3})}, [](const V& x) { return x[0].pad_value({{1, 2}, {0, 1}}, 0.5).exp(); },
       "F.pad(x0, (0, 1, 1, 2), value=0.5).exp()"},
      {"pad negative", {F({4, 5})}, [](const V& x) { return x[0].pad_value({{-1, 2}, {1, -2}}, 0.0).exp(); },
       "F.pad(x0, (1, -2, -1, 2)).exp()"},
      {"pad replicate", {F({1, 3, 4})}, [](const V& x) { return x[0].pad({{0, 0}, {1, 2}, {2, 1}}, "replicate").exp(); },
       "F.pad(x0, (2, 1, 1, 2), mode='replicate').exp()"},
      {"pad reflect", {F({1, 3, 4})}, [](const V& x) { return x[0].pad({{0, 0}, {1, 2}, {2, 1}}, "reflect").exp(); },
       "F.pad(x0, (2, 1, 1, 2), mode='reflect').exp()"},
      {"pad circular", {F({1, 1, 3, 4})},
       [](const V& x) { return x[0].pad({{0, 0}, {0, 0}, {1, 2}, {2, 1}}, "circular").exp(); },
       "F.pad(x0, (2, 1, 1, 2), mode='circular').exp()"},
      {"shrink", {F({4, 5})}, [](const V& x) { return x[0].shrink({{1, 3}, {2, 5}}).exp(); }, "x0[1:3, 2:5].exp()"},
      {"flip", {F({3, 4})}, [](const V& x) { return x[0].flip({0, 1}).exp(); }, "x0.flip((0, 1)).exp()"},
      {"getitem int/slice/step", {F({4, 5, 6})},
       [](const V& x) { return x[0][{Index(1), Index(slice(std::nullopt, std::nullopt, 2)), Index(slice(-4, -1))}].exp(); },
       "x0[1, ::2, -4:-1].exp()"},
      {"getitem negative step/newaxis", {F({5, 4})},
       [](const V& x) { return x[0][{Index(slice(std::nullopt, std::nullopt, -2)), Index::none(), Index(2)}].exp(); },
       "x0.flip(0)[::2, None, 2].exp()"},  // torch has no negative steps; x[::-2] of 5 is flip(x)[::2]
      {"getitem ellipsis", {F({2, 3, 4})}, [](const V& x) { return x[0][{Index::ellipsis(), Index(-1)}].exp(); },
       "x0[..., -1].exp()"},
      {"getitem tensor", {F({5, 3}), I({4}, -5, 5)}, [](const V& x) { return x[0][{Index(x[1])}].exp(); },
       "x0[x1].exp()"},
      {"getitem two tensors", {F({4, 5}), I({3}, 0, 4), I({3}, 0, 5)},
       [](const V& x) { return x[0][{Index(x[1]), Index(x[2])}].exp(); }, "x0[x1, x2].exp()"},
      {"getitem tensors apart", {F({3, 4, 5}), I({2}, 0, 3), I({2}, -5, 5)},
       [](const V& x) { return x[0][{Index(x[1]), Index(slice()), Index(x[2])}].exp(); }, "x0[x1, :, x2].exp()"},
      {"getitem tensor after slice", {F({3, 4, 5}), I({2, 2}, 0, 4)},
       [](const V& x) { return x[0][{Index(slice(1, std::nullopt)), Index(x[1])}].exp(); }, "x0[1:, x1].exp()"},
      {"gather", {F({3, 4}), I({3, 2}, 0, 4)}, [](const V& x) { return x[0].gather(1, x[1]).exp(); },
       "x0.gather(1, x1).exp()"},
      {"cat", {F({2, 3}), F({4, 3})}, [](const V& x) { return x[0].cat({x[1]}, 0).exp(); }, "torch.cat((x0, x1), 0).exp()"},
      {"cat same", {F({2, 3}), P({3, 2}, {1, 0})}, [](const V& x) { return x[0].cat({x[1]}, 1).exp(); },
       "torch.cat((x0, x1), 1).exp()"},
      {"stack", {F({2, 3}), F({2, 3})}, [](const V& x) { return x[0].stack({x[1]}, 1).exp(); },
       "torch.stack((x0, x1), 1).exp()"},
      {"repeat", {F({2, 3})}, [](const V& x) { return x[0].repeat({2, 1, 2}).exp(); }, "x0.repeat(2, 1, 2).exp()"},
      {"repeat_interleave", {F({2, 3})}, [](const V& x) { return x[0].repeat_interleave(2, 1).exp(); },
       "x0.repeat_interleave(2, 1).exp()"},
      {"split", {F({5, 2})}, [](const V& x) { auto s = x[0].split(2, 0); return s[2].exp() + s[0].sum(); },
       "x0.split(2, 0)[2].exp() + x0.split(2, 0)[0].sum()"},
      {"chunk", {F({2, 7})}, [](const V& x) { auto s = x[0].chunk(3, 1); return s[1].exp(); }, "x0.chunk(3, 1)[1].exp()"},
      {"one_hot", {I({5}, 0, 4)}, [](const V& x) { return x[0].one_hot(4); }, "F.one_hot(x0, 4)", false},
      {"roll", {F({3, 4})}, [](const V& x) { return x[0].roll({1, -2}, {0, 1}).exp(); }, "x0.roll((1, -2), (0, 1)).exp()"},
      {"diagonal/diag", {F({3, 4})}, [](const V& x) { return x[0].diagonal(1).diag().exp(); },
       "x0.diagonal(1).diag().exp()"},
      {"triu/tril", {F({3, 4})}, [](const V& x) { return x[0].triu(1) + x[0].tril(-1) * 2; },
       "x0.triu(1) + x0.tril(-1) * 2"},
  };
  report("movement", torchtest::run_cases(cs, 3000));
}

TEST(TorchCompare, LinalgConvPool) {
  std::vector<Case> cs = {
      {"matmul", {F({3, 4}), F({4, 5})}, [](const V& x) { return x[0].matmul(x[1]); }, "x0 @ x1"},
      {"matmul batched broadcast", {F({2, 1, 3, 4}), P({4, 5, 3}, {2, 0, 1})},
       [](const V& x) { return x[0].matmul(x[1]); }, "x0 @ x1"},
      {"dot vector", {F({4}), F({4, 3})}, [](const V& x) { return x[0].dot(x[1]); }, "x0 @ x1"},
      {"linear", {F({2, 3}), F({3, 4}), F({4})}, [](const V& x) { return x[0].linear(x[1], x[2]); }, "x0 @ x1 + x2"},
      {"einsum", {F({2, 3}), F({3, 4})}, [](const V& x) { return Tensor::einsum("ij,jk->ki", {x[0], x[1]}); },
       "torch.einsum('ij,jk->ki', x0, x1)"},
      {"conv2d", {F({2, 3, 6, 5}), F({4, 3, 3, 2}), F({4})},
       [](const V& x) { return x[0].conv2d(x[1], x[2]); }, "F.conv2d(x0, x1, x2)"},
      {"conv2d stride pad dilation", {F({1, 2, 7, 7}), F({3, 2, 3, 3})},
       [](const V& x) { return x[0].conv2d(x[1], std::nullopt, 1, {2}, {2}, {1}); },
       "F.conv2d(x0, x1, stride=2, dilation=2, padding=1)"},
      {"conv2d groups", {F({1, 4, 5, 5}), F({6, 2, 3, 3})},
       [](const V& x) { return x[0].conv2d(x[1], std::nullopt, 2, {1}, {1}, {1, 0}); },
       "F.conv2d(x0, x1, groups=2, padding=(1, 0))"},
      {"conv_transpose2d", {F({1, 2, 4, 4}), F({2, 3, 3, 3}), F({3})},
       [](const V& x) { return x[0].conv_transpose2d(x[1], x[2], 1, {2}, {1}, {1}, {1}); },
       "F.conv_transpose2d(x0, x1, x2, stride=2, padding=1, output_padding=1)"},
      {"max_pool2d", {F({1, 2, 4, 6})}, [](const V& x) { return x[0].max_pool2d(); }, "F.max_pool2d(x0, 2)"},
      // With ties tinygrad shares the gradient among the tied maxima (torch's max_pool2d gives it
      // to one): compare against amax over the unfolded windows, which shares as tinygrad does.
      {"max_pool2d ties", {Q({1, 2, 4, 6})}, [](const V& x) { return x[0].max_pool2d(); },
       "x0.unfold(2, 2, 2).unfold(3, 2, 2).amax((-2, -1))"},
      {"max_pool2d stride pad", {F({1, 1, 5, 5})}, [](const V& x) { return x[0].max_pool2d({3, 3}, {2, 2}, {1}, {1}); },
       "F.max_pool2d(x0, 3, stride=2, padding=1)"},
      {"avg_pool2d", {F({2, 1, 4, 6})}, [](const V& x) { return x[0].avg_pool2d(); }, "F.avg_pool2d(x0, 2)"},
      {"avg_pool2d pad no count", {F({1, 1, 5, 5})},
       [](const V& x) { return x[0].avg_pool2d({3, 3}, {2, 2}, {1}, {1}, false); },
       "F.avg_pool2d(x0, 3, stride=2, padding=1, count_include_pad=False)"},
      {"layernorm", {F({3, 6})}, [](const V& x) { return x[0].layernorm(); }, "F.layer_norm(x0, (6,))"},
      {"batchnorm fn", {F({2, 3, 2, 2}), F({3}), F({3}), F({3}), F({3}, 0.5, 2)},
       [](const V& x) { return x[0].batchnorm(x[1], x[2], x[3], x[4]); },
       "(x0 - x3.reshape(1,3,1,1)) * x1.reshape(1,3,1,1) * x4.reshape(1,3,1,1) + x2.reshape(1,3,1,1)"},
  };
  report("linalg/conv/pool", torchtest::run_cases(cs, 4000));
}

TEST(TorchCompare, Losses) {
  std::vector<Case> cs = {
      {"sparse_categorical_crossentropy", {F({4, 5}, -3, 3), I({4}, 0, 5)},
       [](const V& x) { return x[0].sparse_categorical_crossentropy(x[1]); }, "F.cross_entropy(x0, x1)"},
      {"sparse_cce label smoothing", {F({4, 5}, -3, 3), I({4}, 0, 5)},
       [](const V& x) { return x[0].sparse_categorical_crossentropy(x[1], -1, 0.1); },
       "F.cross_entropy(x0, x1, label_smoothing=0.1)"},
      {"sparse_cce ignore_index", {F({5, 4}, -3, 3), I({5}, 0, 4)},
       [](const V& x) { return x[0].sparse_categorical_crossentropy(x[1], 2); },
       "F.cross_entropy(x0, x1, ignore_index=2)"},
      {"cross_entropy probs", {F({3, 4}), F({3, 4}, 0, 1)},
       [](const V& x) { return x[0].cross_entropy(x[1]); }, "F.cross_entropy(x0, x1)"},
      {"cross_entropy indices smoothing", {F({3, 4}), I({3}, 0, 4)},
       [](const V& x) { return x[0].cross_entropy(x[1], Reduction::Sum, 0.2); },
       "F.cross_entropy(x0, x1, reduction='sum', label_smoothing=0.2)"},
      {"nll_loss", {F({4, 3}), I({4}, 0, 3)}, [](const V& x) { return x[0].nll_loss(x[1]); }, "F.nll_loss(x0, x1)"},
      {"nll_loss weight", {F({4, 3}), I({4}, 0, 3), NoGrad(F({3}, 0.5, 2))},
       [](const V& x) { return x[0].nll_loss(x[1], x[2]); }, "F.nll_loss(x0, x1, weight=x2)"},
      {"binary_crossentropy", {F({6}, 0.05, 0.95), F({6}, 0, 1)},
       [](const V& x) { return x[0].binary_crossentropy(x[1]); }, "F.binary_cross_entropy(x0, x1)"},
      {"binary_crossentropy_logits", {F({6}, -3, 3), F({6}, 0, 1)},
       [](const V& x) { return x[0].binary_crossentropy_logits(x[1]); }, "F.binary_cross_entropy_with_logits(x0, x1)"},
      {"mse", {F({3, 4}), F({3, 4})}, [](const V& x) { return x[0].mse(x[1]); }, "F.mse_loss(x0, x1)"},
  };
  report("losses", torchtest::run_cases(cs, 5000));
}


TEST(TorchCompare, SortScatterAndMore) {
  std::vector<Case> cs = {
      {"sort values", {F({3, 5})}, [](const V& x) { return x[0].sort(1).first; }, "x0.sort(1).values"},
      {"sort descending indices", {F({4, 3})}, [](const V& x) { return x[0].sort(0, true).second; },
       "x0.sort(0, descending=True).indices.int()", false},
      {"sort ties stable indices", {Q({2, 6})}, [](const V& x) { return x[0].sort(-1).second; },
       "torch.sort(x0, stable=True, dim=-1).indices.int()", false},
      {"argsort", {F({7})}, [](const V& x) { return x[0].argsort(); }, "x0.argsort().int()", false},
      {"topk", {F({2, 6})}, [](const V& x) { return x[0].topk(3).first; }, "x0.topk(3).values"},
      {"scatter permutation", {F({4, 3}), F({4, 3}), F({4, 3})},
       [](const V& x) { return x[0].scatter(0, x[2].argsort(0), x[1]); },
       "x0.scatter(0, x2.argsort(0), x1)"},
      {"scatter_reduce sum", {F({4, 3}), I({2, 3}, 0, 4), F({2, 3})},
       [](const V& x) { return x[0].scatter_reduce(0, x[1], x[2], "sum"); },
       "x0.scatter_reduce(0, x1, x2, reduce='sum')"},
      {"scatter_reduce amax no self", {F({4, 3}), I({3, 3}, 0, 4), F({3, 3})},
       [](const V& x) { return x[0].scatter_reduce(0, x[1], x[2], "amax", false); },
       "x0.scatter_reduce(0, x1, x2, reduce='amax', include_self=False)", false},
      {"interpolate linear", {F({1, 2, 5})}, [](const V& x) { return x[0].interpolate({8}); },
       "F.interpolate(x0, size=(8,), mode='linear', align_corners=False)"},
      {"interpolate bilinear align", {F({1, 1, 3, 4})}, [](const V& x) { return x[0].interpolate({5, 6}, "linear", true); },
       "F.interpolate(x0, size=(5, 6), mode='bilinear', align_corners=True)"},
      {"interpolate nearest", {F({1, 1, 3, 4})}, [](const V& x) { return x[0].interpolate({5, 7}, "nearest"); },
       "F.interpolate(x0, size=(5, 7), mode='nearest')"},
      {"attention", {F({2, 3, 4}), F({2, 5, 4}), F({2, 5, 3})},
       [](const V& x) { return x[0].scaled_dot_product_attention(x[1], x[2]); },
       "torch.softmax(x0 @ x1.transpose(-2, -1) / 2.0, -1) @ x2"},
      {"attention causal", {F({1, 4, 4}), F({1, 4, 4}), F({1, 4, 2})},
       [](const V& x) { return x[0].scaled_dot_product_attention(x[1], x[2], std::nullopt, 0.0, true); },
       "torch.softmax((x0 @ x1.transpose(-2, -1) / 2.0).masked_fill(~torch.ones(4, 4, dtype=torch.bool).tril(), float('-inf')), -1) @ x2"},
      {"asin/acos/atan", {F({6}, -0.9, 0.9)}, [](const V& x) { return x[0].asin() + x[0].acos() * 2 + x[0].atan(); },
       "x0.asin() + x0.acos() * 2 + x0.atan()", true, 1e-5, 1e-4, 1e-4, 1e-3},
      {"cummax/cummin", {F({3, 5})}, [](const V& x) { return x[0].cummax(1) + x[0].cummin(0); },
       "x0.cummax(1).values + x0.cummin(0).values"},
      {"cummax indices", {F({3, 5})}, [](const V& x) { return x[0].cummax_indices(1); }, "x0.cummax(1).indices.int()",
       false},
      {"logcumsumexp", {F({2, 5})}, [](const V& x) { return x[0].logcumsumexp(1); }, "x0.logcumsumexp(1)"},
      {"unfold", {F({2, 7})}, [](const V& x) { return x[0].unfold(1, 3, 2).exp(); }, "x0.unfold(1, 3, 2).exp()"},
      {"meshgrid", {F({3}), F({4})}, [](const V& x) { auto g = x[0].meshgrid({x[1]}); return g[0] * g[1] + g[1]; },
       "torch.meshgrid(x0, x1, indexing='ij')[0] * torch.meshgrid(x0, x1, indexing='ij')[1] + torch.meshgrid(x0, x1, indexing='ij')[1]"},
      {"rearrange", {F({2, 6, 3})}, [](const V& x) { return x[0].rearrange("b (h w) c -> b c h w", {{"h", 2}}).exp(); },
       "x0.reshape(2, 2, 3, 3).permute(0, 3, 1, 2).exp()"},
      {"isclose", {Q({6}), Q({6})}, [](const V& x) { return x[0].isclose(x[1] + 1e-9); }, "torch.isclose(x0, x1 + 1e-9)",
       false},
      {"var_mean/std_mean", {F({3, 4})},
       [](const V& x) { auto [v, m] = x[0].var_mean(1); auto [s, m2] = x[0].std_mean(0); return v + m + s.sum() + m2.sum(); },
       "torch.var_mean(x0, 1)[0] + torch.var_mean(x0, 1)[1] + torch.std_mean(x0, 0)[0].sum() + torch.std_mean(x0, 0)[1].sum()"},
      {"softmin/normalize", {F({3, 4})}, [](const V& x) { return x[0].softmin(1) + x[0].normalize(); },
       "F.softmin(x0, 1) + F.normalize(x0)"},
      {"logsigmoid/hardsigmoid/quick_gelu", {F({7}, -4, 4)},
       [](const V& x) { return x[0].logsigmoid() + x[0].hardsigmoid() + x[0].quick_gelu(); },
       "F.logsigmoid(x0) + F.hardsigmoid(x0) + x0 * torch.sigmoid(1.702 * x0)"},
      {"fmod/mod float", {F({6}), F({6}, 0.5, 2)}, [](const V& x) { return x[0].fmod(x[1]) + x[0].mod(x[1]) * 2; },
       "torch.fmod(x0, x1) + torch.remainder(x0, x1) * 2", false},
      {"copysign/masked_fill", {F({6}), F({6})},
       [](const V& x) { return x[0].copysign(x[1]) + x[0].masked_fill(x[1] > 0, 0.5); },
       "torch.copysign(x0, x1) + x0.masked_fill(x1 > 0, 0.5)"},
      {"shifts", {I({6}, 0, 100)}, [](const V& x) { return (x[0] << 2) + (x[0] >> 1); }, "(x0 << 2) + (x0 >> 1)", false},
      {"einsum batched", {F({2, 3, 4}), F({2, 4, 5})}, [](const V& x) { return Tensor::einsum("bij,bjk->bik", {x[0], x[1]}); },
       "torch.einsum('bij,bjk->bik', x0, x1)"},
      {"masked_select", {Q({3, 4})}, [](const V& x) { return x[0].masked_select(x[0] > 0).exp(); },
       "x0.masked_select(x0 > 0).exp()"},
      {"nonzero", {Q({3, 4})}, [](const V& x) { return x[0].nonzero(); }, "x0.nonzero().int()", false},
      {"max_pool2d indices", {F({1, 2, 4, 6})}, [](const V& x) { return x[0].max_pool2d_with_indices().second; },
       "F.max_pool2d(x0, 2, return_indices=True)[1].int()", false},
      {"max_unpool2d", {F({1, 2, 4, 6})},
       [](const V& x) { auto [v, i] = x[0].max_pool2d_with_indices(); return v.max_unpool2d(i); },
       "F.max_unpool2d(*F.max_pool2d(x0, 2, return_indices=True), 2)"},
      {"clone", {F({2, 3})}, [](const V& x) { return x[0].clone().exp(); }, "x0.clone().exp()"},
      // QR's signs are a convention: compare Q@R (the input) and |R| with torch's.
      {"qr", {F({4, 3})}, [](const V& x) { auto [q, r] = x[0].qr(); return q.matmul(r) + r.abs().sum(); },
       "torch.linalg.qr(x0, mode='complete')[0] @ torch.linalg.qr(x0, mode='complete')[1] + torch.linalg.qr(x0, mode='complete')[1].abs().sum()",
       false},
      // SVD: singular values, and U diag(S) V^T reconstructs the input (vectors' signs are a convention).
      {"svd", {F({4, 3})},
       [](const V& x) { auto [u, sv, vt] = x[0].svd(false); return sv.sum() + (u * sv.unsqueeze(0)).matmul(vt); },
       "torch.linalg.svdvals(x0).sum() + x0", false, 1e-4, 1e-4},
      {"newton_schulz", {F({3, 4})}, [](const V& x) { return x[0].newton_schulz(2, {3.4445, -4.775, 2.0315}); },
       "(lambda G: [G := 3.4445 * G + -4.775 * (G @ G.T @ G) + 2.0315 * (G @ G.T @ (G @ G.T @ G)) for _ in range(2)][-1])(x0 / (x0.square().sum().sqrt() + 1e-7))"},
      {"einsum ellipsis", {F({2, 3, 4}), F({4, 5})}, [](const V& x) { return Tensor::einsum("...j,jk->...k", {x[0], x[1]}); },
       "torch.einsum('...j,jk->...k', x0, x1)"},
      {"einsum trace and diagonal", {F({3, 3}), F({2, 4, 4})},
       [](const V& x) { return Tensor::einsum("ii", {x[0]}) + Tensor::einsum("bjj->bj", {x[1]}).sum(); },
       "torch.einsum('ii', x0) + torch.einsum('bjj->bj', x1).sum()"},
      {"einsum trace-free outer", {F({3}), F({4})}, [](const V& x) { return Tensor::einsum("i,j->ij", {x[0], x[1]}); },
       "torch.einsum('i,j->ij', x0, x1)"},
  };
  report("sort/scatter/more", torchtest::run_cases(cs, 6000));
}

TEST(TorchCompare, Creation) {
  std::vector<Case> cs = {
      {"arange int", {}, [](const V&) { return Tensor::arange(2, 17, 3); }, "torch.arange(2, 17, 3, dtype=torch.int32)", false},
      {"arange float", {}, [](const V&) { return Tensor::arange(0.5, 3.0, 0.25); }, "torch.arange(0.5, 3.0, 0.25)", false},
      {"arange negative step", {}, [](const V&) { return Tensor::arange(10, 0, -3); }, "torch.arange(10, 0, -3, dtype=torch.int32)", false},
      {"linspace", {}, [](const V&) { return Tensor::linspace(-1, 2, 7); }, "torch.linspace(-1, 2, 7)", false},
      {"eye", {}, [](const V&) { return Tensor::eye(3, 4); }, "torch.eye(3, 4)", false},
      {"zeros/ones/full", {}, [](const V&) { return Tensor::zeros({2, 3}) + Tensor::ones({2, 3}) * 2 + Tensor::full({2, 3}, 0.25); },
       "torch.zeros(2, 3) + torch.ones(2, 3) * 2 + torch.full((2, 3), 0.25)", false},
      {"*_like", {F({2, 2})}, [](const V& x) { return x[0].zeros_like() + x[0].ones_like() + x[0].full_like(3.0); },
       "torch.zeros_like(x0) + torch.ones_like(x0) + torch.full_like(x0, 3.0)", false},
  };
  report("creation", torchtest::run_cases(cs, 7000));
}


TEST(TorchCompare, MiscMethods) {
  std::vector<Case> cs = {
      {"T/view/contiguous", {F({2, 3})}, [](const V& x) { return x[0].T().view({6}).contiguous().exp(); },
       "x0.T.reshape(6).contiguous().exp()"},
      {"acosh/atanh/log10", {F({5}, 0.1, 0.9)},
       [](const V& x) { return (x[0] + 1.5).acosh() + x[0].atanh() + x[0].log10(); },
       "(x0 + 1.5).acosh() + x0.atanh() + x0.log10()"},
      {"erf", {F({6}, -2, 2)}, [](const V& x) { return x[0].erf(); }, "torch.erf(x0)", true, 2e-6, 1e-5, 2e-6, 1e-4},
      {"swish/neg/clamp", {Q({8})}, [](const V& x) { return x[0].swish() + x[0].neg() + x[0].clamp(-0.5); },
       "F.silu(x0) - x0 + x0.clamp(min=-0.5)"},
      {"casts", {F({6}, -100, 100)},
       [](const V& x) { return x[0].half().float_() + x[0].bfloat16().float_() + x[0].double_().float_() +
                               x[0].long_().float_() + x[0].short_().float_() + x[0].int_().float_(); },
       "x0.half().float() + x0.bfloat16().float() + x0.double().float() + x0.long().float() + x0.short().float() + x0.int().float()",
       false},
      {"bitwise methods", {I({6}, -40, 40), I({6}, -40, 40)},
       [](const V& x) { return x[0].bitwise_and(x[1]) + x[0].bitwise_or(x[1]) * 3 + x[0].bitwise_xor(x[1]) * 5 +
                               x[0].bitwise_not() + x[0].abs().lshift(Scalar(2)) + x[0].abs().rshift(Scalar(1)); },
       "(x0 & x1) + (x0 | x1) * 3 + (x0 ^ x1) * 5 + ~x0 + (x0.abs() << 2) + (x0.abs() >> 1)", false},
      {"logical_not/ne/isfinite/allclose", {Q({6}), Q({6})},
       [](const V& x) { return x[0].ne(x[1]).logical_not().cast(DType::Int32) + x[0].isfinite().cast(DType::Int32) +
                               x[0].allclose(x[0]).cast(DType::Int32); },
       "(x0 != x1).logical_not().int() + x0.isfinite().int() + int(torch.allclose(x0, x0))", false},
      {"const_like/pad_to/shrink_to", {F({2, 3})},
       [](const V& x) { return x[0].pad_to({3, 4}).exp() + x[0].const_like(2.0).pad_to({3, 4}) + x[0].shrink_to({1, 2}).sum(); },
       "F.pad(x0, (0, 1, 0, 1)).exp() + F.pad(torch.full_like(x0, 2.0), (0, 1, 0, 1)) + x0[:1, :2].sum()"},
      {"bool_/to_vector", {Q({4})}, [](const V& x) {
         std::vector<uint8_t> b = x[0].bool_().to_vector<uint8_t>();
         return Tensor::from_vector<uint8_t>(b, {4}).cast(DType::Int32) + x[0].size(0); },
       "x0.bool().int() + 4", false},
      {"usum/uprod/sequential", {F({3}), F({3}), F({3})},
       [](const V& x) {
         std::vector<std::function<Tensor(const Tensor&)>> fs = {[](const Tensor& t) { return t.exp(); },
                                                                 [](const Tensor& t) { return t * 2; }};
         return Tensor::usum({x[0], x[1], x[2]}) + Tensor::uprod({x[0], x[1], x[2]}) + x[0].sequential(fs);
       },
       "x0 + x1 + x2 + x0 * x1 * x2 + x0.exp() * 2"},
      {"operators", {Q({2, 3}), F({3}, 0.5, 2)},
       [](const V& x) { return (x[0] + x[1]) * (1 - x[0]) / x[1] + 2 / x[1] + (x[0] > x[1]).where(1.0, 0.0) + (-x[0]); },
       "(x0 + x1) * (1 - x0) / x1 + 2 / x1 + (x0 > x1).float() - x0"},
  };
  report("misc", torchtest::run_cases(cs, 8000));
}


// Random shapes: rank 1-4, sizes 1-4, broadcasting by setting random axes of one operand to 1,
// random axes for reductions, random permuted views; drawn from a fixed seed.
TEST(TorchCompare, RandomShapes) {
  std::mt19937 gen(20261129);
  auto pick = [&](int n) { return static_cast<int>(gen() % static_cast<uint32_t>(n)); };
  auto py_shape = [](const Shape& s) {
    std::string o = "(";
    for (int64_t d : s) o += std::to_string(d) + ",";
    return o + ")";
  };
  std::vector<Case> cs;
  for (int i = 0; i < 36; ++i) {
    int rank = 1 + pick(4);
    Shape a;
    for (int r = 0; r < rank; ++r) a.push_back(1 + pick(4));
    Shape b = a;
    for (auto& d : b)
      if (pick(3) == 0) d = 1;
    if (pick(2)) b.erase(b.begin(), b.begin() + pick(static_cast<int>(b.size())));  // fewer leading axes
    if (b.empty()) b.push_back(1);
    int64_t ax = pick(rank);
    // A permuted base for the first operand: the op sees base.permute(rev) == shape a.
    std::vector<int64_t> rev;
    for (int r = rank - 1; r >= 0; --r) rev.push_back(r);
    Shape abase(a.rbegin(), a.rend());
    Input ia = pick(2) ? P(abase, rev) : F(a);
    std::string sa = std::to_string(ax);
    switch (i % 9) {
      case 0: cs.push_back({"add " + py_shape(a) + py_shape(b), {ia, F(b)}, [](const V& x) { return x[0] + x[1]; }, "x0 + x1"}); break;
      case 1: cs.push_back({"mul " + py_shape(a) + py_shape(b), {ia, Q(b)}, [](const V& x) { return x[0] * x[1]; }, "x0 * x1"}); break;
      case 2: cs.push_back({"div " + py_shape(a) + py_shape(b), {ia, F(b, 0.5, 2)}, [](const V& x) { return x[0] / x[1]; }, "x0 / x1"}); break;
      case 3: cs.push_back({"maximum ties " + py_shape(a) + py_shape(b), {Q(a), Q(b)}, [](const V& x) { return x[0].maximum(x[1]); }, "torch.maximum(x0, x1)"}); break;
      case 4: cs.push_back({"sum axis " + sa + " " + py_shape(a), {ia}, [ax](const V& x) { return x[0].sum(ax); }, "x0.sum(" + sa + ")"}); break;
      case 5: cs.push_back({"max ties axis " + sa + " " + py_shape(a), {Q(a)}, [ax](const V& x) { return x[0].max(ax, true); }, "x0.amax(" + sa + ", keepdim=True)"}); break;
      case 6: cs.push_back({"softmax axis " + sa + " " + py_shape(a), {ia}, [ax](const V& x) { return x[0].softmax(ax); }, "x0.softmax(" + sa + ")"}); break;
      case 7: cs.push_back({"where " + py_shape(a) + py_shape(b), {ia, F(b)}, [](const V& x) { return (x[0] > x[1]).where(x[0], x[1] * 2); }, "torch.where(x0 > x1, x0, x1 * 2)"}); break;
      case 8: {
        int64_t k = 1 + pick(4), n = 1 + pick(4);
        Shape la = a, rb = {k, n};
        la.back() = k;
        cs.push_back({"matmul " + py_shape(la) + py_shape(rb), {F(la), F(rb)}, [](const V& x) { return x[0].matmul(x[1]); }, "x0 @ x1"});
        break;
      }
    }
  }
  report("random shapes", torchtest::run_cases(cs, 9000));
}

TEST(Api, PropertiesAndLeaves) {
  Tensor x = Tensor::ones({2, 3, 4}, DType::Float16);
  EXPECT_EQ(x.ndim(), 3);
  EXPECT_EQ(x.numel(), 24);
  EXPECT_EQ(x.element_size(), 2);
  EXPECT_EQ(x.nbytes(), 48);
  EXPECT_EQ(x.bytes().size(), 48u);
  EXPECT_EQ(x.size(), x.shape());
  EXPECT_EQ(x.size(-1), 4);
  EXPECT_EQ(x.max_shape(), x.shape());
  EXPECT_EQ(x.max_numel(), 24);
  EXPECT_TRUE(x.is_floating_point());
  EXPECT_FALSE(Tensor::ones({2}, DType::Int32).is_floating_point());
  EXPECT_EQ(x.empty_like().shape(), x.shape());
  EXPECT_EQ(Tensor::const_(3, DType::Int8).dtype(), DType::Int8);
  Tensor y = (x * 2).realize();
  EXPECT_EQ(y.tolist(), std::vector<double>(24, 2.0));
  EXPECT_EQ(x.half().dtype(), DType::Float16);
}

TEST(Api, RandomDerivedDistributions) {
  // normal/randn_like/kaiming_normal/scaled_uniform/rand_like are built from rand and randn as
  // tinygrad builds them: check the recipe on the same stream position, and the moments.
  Tensor::manual_seed(11);
  Tensor n = Tensor::normal({4000}, 1.5, 0.5);
  Tensor::manual_seed(11);
  Tensor r = Tensor::randn({4000});
  EXPECT_EQ(n.bits(), (prim::mul(0.5, r) + 1.5).bits());
  double m = n.mean().item(), sd = n.std().item();
  EXPECT_NEAR(m, 1.5, 0.05);
  EXPECT_NEAR(sd, 0.5, 0.03);
  Tensor::manual_seed(12);
  Tensor k = Tensor::kaiming_normal({64, 50});
  EXPECT_NEAR(k.std().item(), std::sqrt(2.0 / (1 + 1e-4) / 50), 0.01);
  Tensor::manual_seed(13);
  Tensor su = Tensor::scaled_uniform({10, 10});
  for (double v : su.tolist()) EXPECT_LE(std::fabs(v), 0.1);
  Tensor::manual_seed(14);
  Tensor a = Tensor::zeros({3, 2}).rand_like();
  Tensor b = Tensor::zeros({3, 2}).randn_like();
  Tensor::manual_seed(14);
  EXPECT_EQ(a.bits(), Tensor::rand({3, 2}).bits());
  EXPECT_EQ(b.bits(), Tensor::randn({3, 2}).bits());
  // random_bits with the device key and counter 0 gives rand's first words.
  Tensor::manual_seed(0);
  std::vector<uint64_t> words = Tensor::random_bits(Tensor::from_vector<uint32_t>({0x14b81119u, 0}, {2}),
                                                    Tensor::from_vector<uint32_t>({0, 0}, {2}), 4).bits();
  std::vector<uint64_t> f = Tensor::rand({4}).bits();
  for (size_t i = 0; i < 4; ++i) {
    uint32_t one_two = static_cast<uint32_t>((words[i] >> 9) | 0x3f800000u), want;
    float v;
    std::memcpy(&v, &one_two, 4);
    v -= 1.0f;  // exact: v is in [1, 2)
    std::memcpy(&want, &v, 4);
    EXPECT_EQ(f[i], want) << i;
  }
}

}  // namespace
}  // namespace maroon
