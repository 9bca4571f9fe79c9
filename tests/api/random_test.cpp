// The RNG against reference vectors produced by running tinygrad itself
// (tests/data/tinygrad/rand_vectors.txt, made by tools/tinygrad/gen_rand.py).
//
// rand (float16/32/64) and randint must match bit for bit. uniform and the uniform initialisers
// compute c*rand + low: tinygrad's CPU backend fuses that into one FMA (its kernel is
// `(6.5f*val0)+-2.5f` compiled with contraction), while Maroon rounds each op as written. So
// they are checked (a) bit for bit against the unfused recipe applied to tinygrad's own rand
// bits at the same counter position, and (b) against tinygrad's fused result within the two
// roundings in play (half an ulp of the product plus one ulp of the result).
// randn goes through sin and log, whose implementations differ (tinygrad's CPU backend uses its
// SLEEF-derived polynomials, Maroon its own), and cos(2*pi*u) amplifies the difference
// near its zeros: it is compared within 1e-6 * max(1, |value|).
#include <fstream>
#include <map>
#include <sstream>

#include "util.h"
#include "maroon/primitives.h"

namespace maroon {
namespace {

struct Vec {
  std::string dtype;
  Shape shape;
  std::vector<uint64_t> bits;
};

std::map<std::string, Vec> load() {
  std::ifstream in(std::string(MAROON_SOURCE_DIR) + "/tests/data/tinygrad/rand_vectors.txt");
  EXPECT_TRUE(in.good()) << "missing tests/data/tinygrad/rand_vectors.txt";
  std::map<std::string, Vec> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    std::string name, shape;
    Vec v;
    ss >> name >> v.dtype >> shape;
    if (shape != "scalar") {
      std::istringstream sh(shape);
      std::string part;
      while (std::getline(sh, part, 'x')) v.shape.push_back(std::stoll(part));
    }
    std::string hex;
    while (ss >> hex) v.bits.push_back(std::stoull(hex, nullptr, 16));
    out[name] = v;
  }
  return out;
}

void expect_bits(const Vec& want, const Tensor& got, const std::string& name) {
  SCOPED_TRACE(name);
  ASSERT_EQ(got.shape(), want.shape);
  ASSERT_EQ(std::string(dtype_name(got.dtype())), want.dtype);
  std::vector<uint64_t> b = got.bits();
  ASSERT_EQ(b.size(), want.bits.size());
  for (size_t i = 0; i < b.size(); ++i) EXPECT_EQ(b[i], want.bits[i]) << "element " << i;
}

float as_f32(uint64_t b) {
  uint32_t w = static_cast<uint32_t>(b);
  float f;
  std::memcpy(&f, &w, 4);
  return f;
}

// See the file comment: exact against the unfused recipe on tinygrad's rand; from its FMA by at
// most half an ulp of the product plus one ulp of the result (the two results round
// different exact values).
void expect_uniform(const Vec& fused, const Vec& rand, const Tensor& got, double scale, double low,
                    const std::string& name) {
  SCOPED_TRACE(name);
  ASSERT_EQ(got.shape(), fused.shape);
  std::vector<uint32_t> rb(rand.bits.begin(), rand.bits.end());
  Tensor r = Tensor::from_vector<uint32_t>(rb, rand.shape).bitcast(DType::Float32);
  Tensor recipe = (prim::mul(scale, r)).cast(DType::Float32) + low;
  EXPECT_EQ(got.bits(), recipe.bits());
  std::vector<uint64_t> b = got.bits();
  for (size_t i = 0; i < b.size(); ++i) {
    float g = as_f32(b[i]), w = as_f32(fused.bits[i]);
    // The unfused form rounds the product too: at most half an ulp of it plus half of the sum.
    double prod = scale * as_f32(rand.bits[i]);
    double bound = std::ldexp(1.0, std::ilogb(prod) - 24) + std::ldexp(1.0, std::ilogb(w) - 23);
    EXPECT_LE(std::fabs(static_cast<double>(g) - w), bound) << "element " << i;
  }
}

TEST(RandomTinygrad, StreamsMatchBitForBit) {
  auto ref = load();
  ASSERT_FALSE(ref.empty());
  for (uint64_t seed : {0, 1337, 42}) {
    std::string p = "s" + std::to_string(seed) + ".";
    Tensor::manual_seed(seed);
    expect_bits(ref[p + "rand5"], Tensor::rand({5}), p + "rand5");
    expect_bits(ref[p + "rand3x4"], Tensor::rand({3, 4}), p + "rand3x4");
    expect_bits(ref[p + "rand7_f16"], Tensor::rand({7}, DType::Float16), p + "rand7_f16");
    expect_bits(ref[p + "rand3_f64"], Tensor::rand({3}, DType::Float64), p + "rand3_f64");
    expect_bits(ref[p + "randint2x5"], Tensor::randint({2, 5}, -3, 17), p + "randint2x5");
    expect_uniform(ref[p + "uniform6"], ref[p + "uniform6.rand"], Tensor::uniform({6}, -2.5, 4.0), 6.5, -2.5,
                   p + "uniform6");
    {
      // randn: within 4 ulps (see the file comment), but the counter must advance exactly.
      Tensor r = Tensor::randn({2, 3});
      const Vec& want = ref[p + "randn2x3"];
      std::vector<double> got = r.tolist();
      ASSERT_EQ(got.size(), want.bits.size());
      for (size_t i = 0; i < got.size(); ++i) {
        uint32_t wb = static_cast<uint32_t>(want.bits[i]);
        float wf;
        std::memcpy(&wf, &wb, 4);
        EXPECT_NEAR(got[i], wf, 1e-6 * std::max(1.0, std::fabs(static_cast<double>(wf))))
            << p << "randn element " << i;
      }
    }
    {
      double kb = std::sqrt(6.0 / (1 + 0.01 * 0.01) / 3), gb = std::sqrt(6.0 / (3 + 5));
      expect_uniform(ref[p + "kaiming4x3"], ref[p + "kaiming4x3.rand"], Tensor::kaiming_uniform({4, 3}), 2 * kb,
                     -kb, p + "kaiming4x3");
      expect_uniform(ref[p + "glorot3x5"], ref[p + "glorot3x5.rand"], Tensor::glorot_uniform({3, 5}), 2 * gb,
                     -gb, p + "glorot3x5");
    }
    expect_bits(ref[p + "rand1000"], Tensor::rand({1000}), p + "rand1000");
    expect_bits(ref[p + "rand9"], Tensor::rand({9}), p + "rand9");
    expect_bits(ref[p + "randperm8"], Tensor::randperm(8), p + "randperm8");
    expect_bits(ref[p + "multinomial"], Tensor::from_vector<float>({1, 2, 3, 4}, {4}).multinomial(6, true),
                p + "multinomial");
  }
}

TEST(RandomTinygrad, ThreefryPrimitive) {
  auto ref = load();
  Tensor x = Tensor::from_vector<uint64_t>({1, 2, 3, (uint64_t{1} << 40) + 5, ~uint64_t{0}}, {5});
  Tensor key = Tensor::from_vector<uint64_t>({0x1234567890abcdefull}, {1});
  expect_bits(ref["threefry"], x.threefry(key), "threefry");
}

TEST(RandomTinygrad, ManualSeedRestartsTheStream) {
  Tensor::manual_seed(7);
  std::vector<uint64_t> a = Tensor::rand({4}).bits();
  Tensor::manual_seed(7);
  EXPECT_EQ(Tensor::rand({4}).bits(), a);
  EXPECT_NE(Tensor::rand({4}).bits(), a);  // the counter moved on
}

TEST(RandomTinygrad, BadArgumentsThrow) {
  EXPECT_THROW(Tensor::rand({2}, DType::Int32), DTypeError);
  EXPECT_THROW(Tensor::randint({2}, 5, 5), ShapeError);
  EXPECT_THROW(Tensor::uniform({2}, 1.0, 0.0), ShapeError);
  EXPECT_THROW(Tensor::randint({2}, 0, 3, DType::Float32), DTypeError);
}

TEST(RandomTinygrad, DropoutOnlyWhileTraining) {
  Tensor x = Tensor::ones({64});
  EXPECT_EQ(x.dropout(0.5).tolist(), x.tolist());
  TrainingScope t;
  Tensor::manual_seed(3);
  std::vector<double> d = x.dropout(0.25).tolist();
  int zeros = 0;
  for (double v : d) {
    EXPECT_TRUE(v == 0.0 || v == static_cast<double>(1.0f / 0.75f) || std::fabs(v - 1 / 0.75) < 1e-6);
    zeros += v == 0.0;
  }
  EXPECT_GT(zeros, 0);
  EXPECT_LT(zeros, 64);
}

}  // namespace
}  // namespace maroon
