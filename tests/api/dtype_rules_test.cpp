// The dtype each Tensor method returns, for every input dtype, against tinygrad itself
// (tests/data/tinygrad/dtype_rules.txt, made by tools/tinygrad/gen_dtypes.py). tinygrad's weak
// results (weakint, weakfloat) are compared with the dtype they realize as (int32, float32).
//
// One deliberate difference: tinygrad's SQRT/SIN/LOG2/EXP2/RECIPROCAL accept integers and
// compute in float32; Maroon's primitives are float-only (docs/spec.md) and throw DTypeError,
// so for those primitives on integer/bool inputs the test expects the error.
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "util.h"

namespace maroon {
namespace {

using Op = std::function<Tensor(const Tensor&)>;

const std::map<std::string, Op>& ops() {
  static const std::map<std::string, Op> m = {
      {"sum", [](const Tensor& x) { return x.sum(); }},
      {"prod", [](const Tensor& x) { return x.prod(); }},
      {"max", [](const Tensor& x) { return x.max(); }},
      {"min", [](const Tensor& x) { return x.min(); }},
      {"mean", [](const Tensor& x) { return x.mean(); }},
      {"var", [](const Tensor& x) { return x.var(); }},
      {"any", [](const Tensor& x) { return x.any(); }},
      {"argmax", [](const Tensor& x) { return x.argmax(); }},
      {"cumsum", [](const Tensor& x) { return x.cumsum(); }},
      {"exp", [](const Tensor& x) { return x.exp(); }},
      {"log", [](const Tensor& x) { return x.log(); }},
      {"sqrt", [](const Tensor& x) { return x.sqrt(); }},
      {"sin", [](const Tensor& x) { return x.sin(); }},
      {"cos", [](const Tensor& x) { return x.cos(); }},
      {"sigmoid", [](const Tensor& x) { return x.sigmoid(); }},
      {"relu", [](const Tensor& x) { return x.relu(); }},
      {"neg", [](const Tensor& x) { return x.neg(); }},
      {"abs", [](const Tensor& x) { return x.abs(); }},
      {"div_int", [](const Tensor& x) { return x / 2; }},
      {"mul_float", [](const Tensor& x) { return x * 2.5; }},
      {"add_int", [](const Tensor& x) { return x + 3; }},
      {"softmax", [](const Tensor& x) { return x.softmax(); }},
      {"square", [](const Tensor& x) { return x.square(); }},
      {"matmul", [](const Tensor& x) { return x.reshape({2, 2}).matmul(x.reshape({2, 2})); }},
      {"eq", [](const Tensor& x) { return x == x; }},
      {"where", [](const Tensor& x) { return (x > 0).where(x, 0); }},
      {"maximum_int", [](const Tensor& x) { return x.maximum(1); }},
      {"minimum", [](const Tensor& x) { return x.minimum(x); }},
      {"sign", [](const Tensor& x) { return x.sign(); }},
      {"trunc_cast", [](const Tensor& x) { return x.cast(DType::Float32).trunc(); }},
      {"one_hot", [](const Tensor& x) { return x.one_hot(3); }},
  };
  return m;
}

TEST(DTypeRules, MatchTinygrad) {
  std::ifstream in(std::string(MAROON_SOURCE_DIR) + "/tests/data/tinygrad/dtype_rules.txt");
  ASSERT_TRUE(in.good()) << "missing tests/data/tinygrad/dtype_rules.txt";
  std::string line;
  int checked = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    std::string op, in_dt, want;
    ss >> op >> in_dt >> want;
    auto it = ops().find(op);
    ASSERT_NE(it, ops().end()) << "unknown op " << op;
    DType d = dtype_from_name(in_dt);
    std::vector<uint8_t> raw(4 * itemsize(d), 0);
    Tensor x = Tensor::from_bytes(raw.data(), raw.size(), {4}, d);
    std::string got;
    try {
      got = std::string(dtype_name(it->second(x).dtype()));
    } catch (const Error&) {
      got = "error";
    }
    if (want == "weakint") want = "int32";
    if (want == "weakfloat") want = "float32";
    if ((op == "sqrt" || op == "sin") && !is_float(d)) want = "error";
    EXPECT_EQ(got, want) << op << "(" << in_dt << ")";
    ++checked;
  }
  EXPECT_GT(checked, 300);
}

}  // namespace
}  // namespace maroon
