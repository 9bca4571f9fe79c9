// tinygrad's random numbers: Threefry-2x32 (20 rounds) with its key and counter scheme
// (mixin/rand.py, tensor.py _next_counter), and the distributions derived from rand.
//
// The Threefry words are computed on the host: 32-bit integer arithmetic is exact, so this is
// bit-identical to tinygrad's THREEFRY primitive. Everything after the raw bits (shift, or,
// bitcast, -1, Box-Muller, scaling) is built from Maroon primitives.

#include <atomic>
#include <cmath>
#include <mutex>
#include <cstring>
#include <numbers>

#include "core/checked.h"
#include "core/fpenv.h"
#include "core/jit_hooks.h"
#include "math/math.h"
#include "api/internal.h"
#include "maroon/tensor.h"
#include "maroon/primitives.h"

namespace maroon {

namespace {

struct RngState {
  uint64_t seed = 0;
  bool seeded = false;
  uint64_t counter = 0;  // tinygrad's [low, high] uint32 pair
};

RngState& rng() {
  static RngState s;
  return s;
}
// Guards rng(): threads may draw at once (the order they draw in is theirs to fix).
std::mutex& rng_mutex() {
  static std::mutex m;
  return m;
}
uint64_t rng_seed() {
  std::lock_guard<std::mutex> lock(rng_mutex());
  return rng().seed;
}

// sha256((0).to_bytes(4, "big")) as an integer, mod 2**32: tinygrad's key word for the first
// (here the only) device.
constexpr uint32_t kDeviceKey0 = 0x14b81119u;

uint32_t rotl(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

// tinygrad's threefry2x32 (codegen/decomp/op.py): x = (x1 << 32) | x0, key = (k1 << 32) | k0.
// Returns (xr0, xr1), the low and high words of the result.
std::pair<uint32_t, uint32_t> threefry(uint32_t x0, uint32_t x1, uint32_t key0, uint32_t key1) {
  static const int rotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  const uint32_t ks[3] = {key1, key0 ^ key1 ^ 0x1BD11BDAu, key0};
  uint32_t a = x0 + ks[2], b = x1 + ks[0];
  for (int i = 0; i < 5; ++i) {
    for (int r : rotations[i % 2]) {
      a = a + b;
      b = a ^ rotl(b, r);
    }
    a = a + ks[i % 3];
    b = b + ks[(i + 1) % 3] + static_cast<uint32_t>(i + 1);
  }
  return {a, b};
}

// `num` random uint32 words: tinygrad's random_bits, under key (key0, key1).
std::vector<uint32_t> random_words(uint64_t counter, uint64_t num, uint32_t key0, uint32_t key1) {
  std::vector<uint32_t> out;
  out.reserve(num);
  for (uint64_t i = 0; i < num; i += 0xffffffffull) {
    uint64_t chunk = std::min<uint64_t>(num - i, 0xffffffffull);
    uint32_t lo = static_cast<uint32_t>(counter), hi = static_cast<uint32_t>(counter >> 32);
    uint32_t c_lo = lo + static_cast<uint32_t>(i & 0xffffffff);
    uint32_t c_hi = hi + static_cast<uint32_t>(i >> 32) + (c_lo < lo ? 1 : 0);
    auto [nk0, nk1] = threefry(c_lo, c_hi, key0, key1);
    uint64_t half = (chunk + 1) / 2;
    std::vector<uint32_t> lo_words(half), hi_words(half);
    for (uint64_t j = 0; j < half; ++j) {
      auto [r0, r1] = threefry(static_cast<uint32_t>(j), static_cast<uint32_t>(j + half), nk0, nk1);
      lo_words[j] = r0;
      hi_words[j] = r1;
    }
    // cat(low words, high words)[:chunk]
    for (uint64_t j = 0; j < chunk; ++j) out.push_back(j < half ? lo_words[j] : hi_words[j - half]);
  }
  return out;
}

// tinygrad's _next_counter: reserve `num` words, return the counter before the reservation.
uint64_t next_counter(uint64_t num) {
  jit_refuse("random numbers");
  std::lock_guard<std::mutex> lock(rng_mutex());
  RngState& s = rng();
  if (!s.seeded) {
    s.seeded = true;
    s.counter = 0;
  }
  uint64_t c = s.counter;
  s.counter += num;
  return c;
}

std::atomic<bool> g_training{false};  // read and set from any thread

}  // namespace

void Tensor::manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(rng_mutex());
  rng().seed = seed;
  rng().seeded = true;
  rng().counter = 0;
}

// Unseeded (seeded == false) behaves as seed 0 with counter 0: next_counter starts there.
Tensor::RandomState Tensor::random_state() { return {rng().seed, rng().counter}; }

void Tensor::set_random_state(const RandomState& s) {
  rng().seed = s.seed;
  rng().seeded = true;
  rng().counter = s.counter;
}

bool Tensor::training() { return g_training; }
void Tensor::set_training(bool on) { g_training = on; }

Tensor Tensor::rand(const Shape& shape, DType dtype) {
  if (!is_float(dtype) || is_weak(dtype))
    throw DTypeError("[rand] only supports concrete float dtypes, got " + api::dt(dtype));
  check_shape("rand", shape, dtype);
  const int64_t numel = api::prod(shape);
  const size_t isz = itemsize(dtype);
  const uint64_t nwords = (static_cast<uint64_t>(numel) * isz + 3) / 4;  // fits: the shape was checked
  check_alloc("rand", nwords, 4, "the random words of shape " + shape_str(shape));
  std::vector<uint32_t> words =
      random_words(next_counter(nwords), nwords, kDeviceKey0, static_cast<uint32_t>(rng_seed()));
  // bits.bitcast(uint of the float's width): the words' bytes as wider or narrower elements.
  DType udt = isz == 2 ? DType::UInt16 : isz == 4 ? DType::UInt32 : DType::UInt64;
  const int64_t nelem = static_cast<int64_t>(nwords * 4 / isz);
  Tensor bits = Tensor::from_bytes(words.data(), nelem * isz, {nelem}, udt);
  const int nmant = dtype == DType::Float16 ? 10 : dtype == DType::BFloat16 ? 7 : dtype == DType::Float32 ? 23 : 52;
  const int width = static_cast<int>(isz * 8);
  uint64_t one_bits = dtype == DType::Float16 ? 0x3c00 : dtype == DType::BFloat16 ? 0x3f80
                      : dtype == DType::Float32 ? 0x3f800000u : 0x3ff0000000000000ull;
  Tensor one = Tensor::from_bytes(&one_bits, isz, {}, udt);
  // (bits >> (width - nmant)) | bits_of(1.0), reinterpreted: a float in [1, 2), minus 1.
  Tensor f = prim::bitwise_or(prim::shr(bits, Scalar(width - nmant)), one).bitcast(dtype);
  return f.shrink({{0, numel}}).sub(1).reshape(shape);
}

Tensor Tensor::rand_like(std::optional<DType> d) const { return rand(shape(), d ? *d : dtype()); }

Tensor Tensor::randn_like(std::optional<DType> d) const {
  DType out = d ? *d : dtype();
  Shape s2 = shape();
  s2.insert(s2.begin(), 2);
  Tensor src = rand(s2, DType::Float32);
  Tensor u0 = src[0], u1 = src[1];
  // Box-Muller: cos(2*pi*u0) * sqrt(-2*log(1-u1)).
  Tensor r = prim::add(1, u1.neg()).log().mul(-2).sqrt();
  return u0.mul(2 * std::numbers::pi).cos().mul(r).cast(out);
}

Tensor Tensor::randn(const Shape& shape, DType dtype) { return empty(shape, dtype).randn_like(dtype); }

Tensor Tensor::uniform(const Shape& shape, double low, double high, DType dtype) {
  if (low >= high) throw ShapeError("[uniform] requires low < high");
  return (prim::mul(high - low, rand(shape))).cast(dtype) + low;
}

Tensor Tensor::randint(const Shape& shape, int64_t low, int64_t high, DType dtype) {
  if (!is_int(dtype)) throw DTypeError("[randint] dtype must be int, not " + api::dt(dtype));
  if (low >= high) throw ShapeError("[randint] requires low < high");
  // uniform with an int dtype: (high-low)*rand is a float32 cast (truncating) to the int
  // dtype, then + low; the scalars are Python ints (weak).
  Tensor r = prim::mul(Scalar(high - low), rand(shape)).cast(dtype);
  return r + Scalar(low);
}

Tensor Tensor::normal(const Shape& shape, double mean, double std_, DType dtype) {
  if (std_ < 0) throw ShapeError("[normal] requires std >= 0");
  return prim::mul(std_, randn(shape, dtype)) + mean;
}

Tensor Tensor::scaled_uniform(const Shape& shape, DType dtype) {
  // prod**-0.5 as tinygrad (C's pow) computes it, correctly rounded by Maroon's own pow: no libm.
  const double n = static_cast<double>(api::prod(shape)), e = -0.5;
  uint64_t nb, eb;
  std::memcpy(&nb, &n, 8);
  std::memcpy(&eb, &e, 8);
  const uint64_t rb = math::pow(sf::kF64, nb, eb, Round::NearestEven);
  double r;
  std::memcpy(&r, &rb, 8);
  return uniform(shape, -1.0, 1.0, dtype).mul(r);
}

Tensor Tensor::glorot_uniform(const Shape& shape, DType dtype) {
  Shape rest(shape.begin() + 1, shape.end());
  double bound = in_ieee_env([&] { return std::sqrt(6.0 / static_cast<double>(shape[0] + api::prod(rest))); });
  return uniform(shape, -bound, bound, dtype);
}

Tensor Tensor::kaiming_uniform(const Shape& shape, double a, DType dtype) {
  Shape rest(shape.begin() + 1, shape.end());
  double bound = in_ieee_env([&] { return std::sqrt(6.0 / (1 + a * a) / static_cast<double>(api::prod(rest))); });
  return uniform(shape, -bound, bound, dtype);
}

Tensor Tensor::kaiming_normal(const Shape& shape, double a, DType dtype) {
  Shape rest(shape.begin() + 1, shape.end());
  double std_ = in_ieee_env([&] { return std::sqrt(2.0 / (1 + a * a) / static_cast<double>(api::prod(rest))); });
  return normal(shape, 0.0, std_, dtype);
}

Tensor Tensor::randperm(int64_t n, DType dtype) { return rand({n}).argsort().cast(dtype); }

Tensor Tensor::multinomial(int64_t num_samples, bool replacement) const {
  if (ndim() < 1 || ndim() > 2 || num_samples <= 0)
    throw ShapeError("[multinomial] needs a 1-D or 2-D tensor and num_samples > 0, got " + shape_str(shape()));
  Tensor w = ndim() == 1 ? unsqueeze(0) : *this;
  if (!replacement && num_samples > w.shape()[1])
    throw ShapeError("[multinomial] without replacement, num_samples must not exceed " + std::to_string(w.shape()[1]));
  Tensor idx = Tensor::zeros({1});
  if (replacement || num_samples == 1) {
    Tensor cw = w.cumsum(1).float_();
    Tensor cdf = cw.div(cw[{slice(), Index(-1)}].unsqueeze(1));
    Tensor u = rand({num_samples, cdf.shape()[0], 1});
    idx = u.ge(cdf).sum(2).permute({1, 0});
  } else {
    // Efraimidis-Spirakis: the top keys log2(u) / w.
    idx = w.rand_like(DType::Float32).log2().div(w).topk(num_samples, 1).second;
  }
  return (ndim() == 1 ? idx.squeeze(0) : idx).cast(DType::Int32);
}

Tensor Tensor::random_bits(const Tensor& key, const Tensor& counter, int64_t num) {
  if (key.numel() != 2 || counter.numel() != 2)
    throw ShapeError("[random_bits] key and counter must each hold two uint32 words");
  std::vector<uint64_t> k = key.cast(DType::UInt32).bits(), c = counter.cast(DType::UInt32).bits();
  std::vector<uint32_t> w = random_words(c[0] | (c[1] << 32), static_cast<uint64_t>(num), static_cast<uint32_t>(k[0]),
                                         static_cast<uint32_t>(k[1]));
  return from_vector<uint32_t>(w, {num});
}

Tensor Tensor::threefry(const Tensor& key) const {
  if (dtype() != DType::UInt64 || key.dtype() != DType::UInt64)
    throw DTypeError("[threefry] needs uint64 data and key, got " + api::dt(dtype()) + " and " + api::dt(key.dtype()));
  Tensor k = key.expand_to(shape());
  std::vector<uint64_t> x = bits(), kb = k.bits(), out(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    auto [r0, r1] = maroon::threefry(static_cast<uint32_t>(x[i]), static_cast<uint32_t>(x[i] >> 32),
                                     static_cast<uint32_t>(kb[i]), static_cast<uint32_t>(kb[i] >> 32));
    out[i] = (static_cast<uint64_t>(r1) << 32) | r0;
  }
  return from_vector<uint64_t>(out, shape());
}

Tensor Tensor::dropout(double p) const {
  if (p < 0 || p > 1) throw ShapeError("[dropout] p=" + std::to_string(p) + " is out of range [0, 1]");
  if (!training() || p == 0) return *this;
  if (p == 1) return const_like(0);
  return rand_like(DType::Float32).ge(p).where(*this, 0).div(1.0 - p);
}

}  // namespace maroon
