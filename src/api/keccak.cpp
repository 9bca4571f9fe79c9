// Keccak (SHA-3 / SHAKE) as Tensor ops on uint64 lanes, tinygrad's mixin/op.py recipe. The
// byte <-> lane reinterpretations (tinygrad's size-changing bitcast) are done on the host:
// Maroon's BITCAST primitive keeps the item size.
#include "api/internal.h"
#include "maroon/tensor.h"
#include "maroon/primitives.h"

namespace maroon {

namespace {

// Little-endian reinterpretation of a uint8 tensor's rows as uint64 lanes, or back.
Tensor bytes_as(const Tensor& t, DType to, const Shape& shape) {
  std::vector<uint8_t> b = t.bytes();
  return Tensor::from_bytes(b.data(), b.size(), shape, to);
}

Tensor u64s(const std::vector<uint64_t>& v) { return Tensor::from_vector<uint64_t>(v, {static_cast<int64_t>(v.size())}); }

}  // namespace

Tensor Tensor::keccak(const std::string& cfg) const {
  int64_t rate, dsbyte;
  if (cfg == "sha3_224") rate = 144, dsbyte = 6;
  else if (cfg == "sha3_256") rate = 136, dsbyte = 6;
  else if (cfg == "shake_128") rate = 168, dsbyte = 31;
  else throw ShapeError("[keccak] cfg must be sha3_224, sha3_256 or shake_128, not '" + cfg + "'");
  if (ndim() < 1) throw ShapeError("[keccak] needs at least one axis, got " + shape_str(shape()));
  static const int rot[] = {44, 43, 21, 14, 28, 20, 3, 45, 61, 1, 6, 25, 8, 18, 27, 36, 10, 15, 56, 62, 55, 39, 41, 2};
  std::vector<uint64_t> v0{0}, v1{1};
  for (int r : rot) {
    v0.push_back(uint64_t{1} << r);
    v1.push_back(uint64_t{1} << (64 - r));
  }
  Tensor rot_v0 = u64s(v0), rot_v1 = u64s(v1);
  Tensor reorder = Tensor::from_vector<int32_t>(
      {0, 6, 12, 18, 24, 3, 9, 10, 16, 22, 1, 7, 13, 19, 20, 4, 5, 11, 17, 23, 2, 8, 14, 15, 21}, {25});
  static const uint64_t rc[] = {1ull, 32898ull, 9223372036854808714ull, 9223372039002292224ull, 32907ull,
                                2147483649ull, 9223372039002292353ull, 9223372036854808585ull, 138ull, 136ull,
                                2147516425ull, 2147483658ull, 2147516555ull, 9223372036854775947ull,
                                9223372036854808713ull, 9223372036854808579ull, 9223372036854808578ull,
                                9223372036854775936ull, 32778ull, 9223372039002259466ull, 9223372039002292353ull,
                                9223372036854808704ull, 2147483649ull, 9223372039002292232ull};
  // The input's bytes, one row per message.
  Shape lead(shape().begin(), shape().end() - 1);
  const int64_t bs = api::prod(lead), row = shape().back() * static_cast<int64_t>(itemsize(dtype()));
  Tensor data = bytes_as(*this, DType::UInt8, {bs, row});
  const int64_t data_pad = rate - row % rate;
  data = data.pad({{0, 0}, {0, data_pad}}).reshape({bs, -1, rate});
  data = data.pad({{0, 0}, {0, 0}, {0, 200 - rate}});
  const int64_t blocks = data.shape()[1];
  const int64_t lbe = (blocks - 1) * 200 + rate - data_pad;
  std::vector<std::pair<int64_t, int64_t>> mb =
      data_pad == 1 ? std::vector<std::pair<int64_t, int64_t>>{{lbe, 0}, {1, dsbyte ^ 128}, {200 - rate, 0}}
                    : std::vector<std::pair<int64_t, int64_t>>{{lbe, 0}, {1, dsbyte}, {data_pad - 2, 0}, {1, 128}, {200 - rate, 0}};
  std::vector<Tensor> parts;
  for (auto [l, v] : mb)
    if (l > 0) parts.push_back(api::filled({l}, v, DType::UInt8));
  Tensor pad_mask = Tensor::cat_all(parts).unsqueeze(0);
  data = bytes_as(prim::bitwise_xor(data.flatten(1), pad_mask), DType::UInt64, {bs, blocks, 25});
  Tensor state = zeros({bs, 25}, DType::UInt64);
  for (int64_t k = 0; k < blocks; ++k) {
    state = prim::bitwise_xor(state, data[{Index(slice()), Index(k)}]);
    for (int i = 0; i < 24; ++i) {
      Tensor p = state.reshape({bs, 5, 5}).transpose(2, 1);
      auto col = [&](int64_t c) { return p[{Index(slice()), Index(slice()), Index(c)}]; };
      Tensor t1 = prim::bitwise_xor(
          prim::bitwise_xor(prim::bitwise_xor(prim::bitwise_xor(col(0), col(1)), col(2)), col(3)), col(4));
      t1 = t1.roll({-1}, {1});
      Tensor d = prim::bitwise_xor(t1.roll({2}, {1}), prim::bitwise_xor(t1 << 1, t1 >> 63));
      state = prim::bitwise_xor(state, d.unsqueeze(2).expand_to({bs, 5, 5}).transpose(2, 1).flatten(1));
      state = state[{Index(slice()), Index(reorder)}];
      // Rotations: x * 2^r | x // 2^(64-r).
      state = prim::bitwise_or(state * rot_v0, state.div(rot_v1, "floor")).reshape({bs, 5, 5});
      state = prim::bitwise_xor(state, prim::bitwise_and(state.roll({-1}, {2}).bitwise_not(), state.roll({-2}, {2})));
      std::vector<uint64_t> mask(25, 0);
      mask[0] = rc[i];
      state = prim::bitwise_xor(state.flatten(1), u64s(mask));
    }
  }
  const int64_t obytes = (200 - rate) / 2;
  Tensor out = bytes_as(state, DType::UInt8, {bs, 200}).shrink({{0, bs}, {0, obytes}});
  Shape os = lead;
  os.push_back(obytes);
  return out.reshape(os);
}

}  // namespace maroon

namespace maroon {

namespace {
Tensor hash_1mb(const Tensor& t) {  // t: (chunks, 2^20) uint8
  return t.reshape({-1, 4096}).keccak("shake_128").reshape({t.shape()[0], -1}).keccak("shake_128");
}
}  // namespace

Tensor Tensor::hash() const {
  std::vector<uint8_t> b = bytes();
  Tensor data = Tensor::from_bytes(b.data(), b.size(), {static_cast<int64_t>(b.size())}, DType::UInt8);
  const int64_t MB = int64_t{1} << 20;
  int64_t n = data.shape()[0];
  int64_t chunks = api::ceildiv(n, MB);
  while (chunks > 1) {
    data = hash_1mb(data.pad_to({chunks * MB}).reshape({chunks, MB})).flatten();
    chunks = api::ceildiv(chunks, 65536);
  }
  return hash_1mb(data.pad_to({MB}).unsqueeze(0)).flatten().shrink({{0, 16}});
}

}  // namespace maroon
