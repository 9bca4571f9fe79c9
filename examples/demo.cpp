// A small tour: a few results and their exact bits. Run it twice, on any machine: same output.
#include <cinttypes>
#include <cstdio>
#include <string>

#include "maroon/maroon.h"

using namespace maroon;

namespace {

void show(const char* what, const Tensor& t) {
  std::printf("%-44s %-8s", what, std::string(dtype_name(t.dtype())).c_str());
  const int hex = static_cast<int>(itemsize(t.dtype()) * 2);
  for (uint64_t b : t.bits()) std::printf(" 0x%0*" PRIx64, hex, b);
  std::printf("\n");
}

}  // namespace

int main() {
  Tensor a = Tensor::from_vector<float>({0.1f, 1.0f, -2.5f, 3.0f}, {4});
  Tensor b = Tensor::from_vector<float>({0.2f, 3.0f, 0.5f, 0.0f}, {4});

  std::printf("Maroon %s: every value below has these bits on every machine.\n\n", "0.1");
  for (Round r : kAllRounds) {
    RoundingScope scope(r);
    std::string label = "a + b, rounding " + std::string(round_name(r));
    show(label.c_str(), prim::add(a, b));
  }
  show("1 / b (RECIPROCAL; 1/0 = +inf)", b.reciprocal());
  show("sqrt(a) (NaN is canonical)", a.sqrt());
  show("exp2(a)", a.exp2());
  show("max(a, b)", prim::maximum(a, b));
  show("a < b", prim::cmplt(a, b));

  Tensor i8 = Tensor::from_vector<int8_t>({100, -128, 7, -7}, {4});
  show("int8 * 3 (wraps)", prim::mul(i8, 3));
  show("int8 // 0 (defined: -1)", prim::floordiv(i8, Tensor::full({4}, 0, DType::Int8)));
  show("int8 cdiv -1 (MIN/-1 = MIN)", prim::cdiv(i8, -1));
  show("float32 -> uint8 cast (saturates)",
       Tensor::from_vector<float>({-3.5f, 300.f, 1e30f, 0.f}, {4}).cast(DType::UInt8));

  // A 2x3 @ 3x2 matmul from primitives: MUL then REDUCE ADD, summed in increasing k.
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor w = Tensor::from_vector<float>({0.5f, -1, 0.25f, 2, 1.5f, 0.125f}, {3, 2});
  Tensor prod = prim::mul(x.reshape({2, 3, 1}), w.reshape({1, 3, 2}));
  show("matmul via MUL + REDUCE ADD", prod.reduce(ReduceOp::ADD, {1}).reshape({2, 2}));
  show("permuted view of x (no copy)", x.permute({1, 0}));
  return 0;
}
