// The C++ side of Maroon's Lagoon layer: rays, Lagoon's arms with Lagoon's semantics, nouns
// with jam/cue, and conversion to and from Maroon tensors. The C ABI (maroon/lagoon.h) is a thin
// wrapper over these functions that turns exceptions into status codes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "float/u128.h"
#include "maroon/round.h"

namespace maroon {
class Tensor;
}

namespace maroon::lagoon {

enum class Kind : uint8_t { I754 = 0, Uint = 1, Int2 = 2 };
const char* kind_name(Kind k);  // "i754", "uint", "int2"

// Errors carry the C ABI's status code (MAROON_LAGOON_E*).
class Error : public std::runtime_error {
 public:
  Error(int code, const std::string& msg) : std::runtime_error(msg), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};
enum : int { kEArg = 1, kEKind = 2, kEDomain = 3, kEFormat = 4, kENoMem = 5, kEInternal = 6 };

// Largest ray this layer will allocate, in elements (a guard against hostile metas: a shape
// whose product is huge must fail cleanly, not try to allocate).
inline constexpr uint64_t kMaxElems = uint64_t{1} << 32;

struct Meta {
  std::vector<uint64_t> shape;
  int bloq = 5;
  Kind kind = Kind::I754;
  uint64_t numel() const;  // throws kENoMem past kMaxElems (checked product)
  size_t elem_bytes() const { return bloq >= 3 ? size_t{1} << (bloq - 3) : 0; }
  bool operator==(const Meta&) const = default;
};

// A validated input ray. For bloq >= 3, `elems` points at the N packed little-endian elements
// inside the caller's atom bytes: arms read them in place.
struct RayRef {
  Meta meta;
  const uint8_t* data = nullptr;  // the atom bytes (pin included)
  size_t len = 0;
  uint64_t n = 0;
  const uint8_t* elems() const { return data; }
};

// An owned ray: `data` is the minimal atom (elements, then the pin).
struct Ray {
  Meta meta;
  std::vector<uint8_t> data;
  RayRef ref() const;
  uint8_t* elems() { return data.data(); }
};

// Lagoon's +check on (meta, atom bytes); throws kEFormat naming `what` if it fails.
RayRef view(const Meta& m, const uint8_t* data, size_t len, const char* what = "ray");
// A ray of `m` with every element zero and the pin set (bloq >= 3).
Ray make_ray(const Meta& m);
// Element access (bloq >= 3), little-endian, up to 128 bits.
u128 load(const uint8_t* p, size_t w);
void store(uint8_t* p, size_t w, u128 v);

// ---- arms (Lagoon's names; rounding `r` affects %i754 only) ----
enum class Bin { Add, Sub, Mul, Div, Mod, Gth, Gte, Lth, Lte, Equ, Neq };
Bin bin_from_name(const std::string& name);  // "add", ... ; throws kEArg
Ray binary(Bin op, const RayRef& a, const RayRef& b, Round r);
Ray binary_scalar(Bin op, const RayRef& a, const std::vector<uint8_t>& n, Round r);
Ray broadcast_binary(Bin op, const RayRef& a, const RayRef& b, Round r);
Ray abs(const RayRef& a, Round r);
Ray cumsum(const RayRef& a, Round r);
Ray prod(const RayRef& a, Round r);
Ray dot(const RayRef& a, const RayRef& b, Round r);
Ray mmul(const RayRef& a, const RayRef& b, Round r);
Ray max(const RayRef& a);
Ray min(const RayRef& a);
uint64_t argmax(const RayRef& a);
uint64_t argmin(const RayRef& a);
bool any(const RayRef& a);
bool all(const RayRef& a);
Ray pow_n(const RayRef& a, uint64_t n, Round r);
Ray transpose(const RayRef& a);
Ray diag(const RayRef& a);
Ray trace(const RayRef& a, Round r);

Ray zeros(const Meta& m);
Ray ones(const Meta& m);
Ray eye(const Meta& m);
Ray iota(const Meta& m);
Ray magic(const Meta& m);
Ray fill(const Meta& m, const std::vector<uint8_t>& x);
Ray linspace(const Meta& m, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, uint64_t n,
             Round r);
Ray range(const Meta& m, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b,
          const std::vector<uint8_t>& d, Round r, uint64_t max_elems);
Ray spac(const Meta& m, const uint8_t* data, size_t len);

std::vector<uint8_t> get_item(const RayRef& a, const std::vector<uint64_t>& index);
Ray set_item(const RayRef& a, const std::vector<uint64_t>& index, const std::vector<uint8_t>& val);
Ray get_row(const RayRef& a, const std::vector<uint64_t>& index);
Ray set_row(const RayRef& a, const std::vector<uint64_t>& index, const RayRef& row);
Ray reshape(const RayRef& a, const std::vector<uint64_t>& shape);

Ray broadcast_to(const RayRef& a, const std::vector<uint64_t>& shape);
Ray permute(const RayRef& a, const std::vector<uint32_t>& order);
Ray flip(const RayRef& a, const std::vector<uint32_t>& axes);
Ray pad(const RayRef& a, const std::vector<uint64_t>& before, const std::vector<uint64_t>& after);
Ray sum_axis(const RayRef& a, uint32_t axis, Round r);
Ray max_axis(const RayRef& a, uint32_t axis);
Ray softmax(const RayRef& a, uint32_t axis, Round r);
Ray conv2d(const RayRef& x, const RayRef& w, const uint32_t stride[2], const uint32_t padding[2], Round r);

// ---- Maroon tensors ----
// %i754 bloq 4/5/6 <-> float16/32/64, %uint bloq 3-6 <-> uint8-64, %int2 <-> int8-64. Bloq 7
// (binary128) has no Maroon dtype and is rejected (kEKind); so are bool and bfloat16 tensors.
Tensor to_tensor(const RayRef& a);
Ray from_tensor(const Tensor& t);

// ---- nouns, jam and cue ----
// A noun is an atom (little-endian bytes, no trailing zeros) or a cell; cells share children,
// so a cued DAG with backreferences stays the size of its input.
struct Noun;
using NounP = std::shared_ptr<const Noun>;
struct Noun {
  bool is_cell = false;
  std::vector<uint8_t> atom;  // atom: minimal little-endian bytes (0 is empty)
  NounP head, tail;
  Noun() = default;
  Noun(const Noun&) = delete;
  Noun& operator=(const Noun&) = delete;
  ~Noun();
  static NounP make_atom(std::vector<uint8_t> bytes);
  static NounP make_atom(uint64_t v);
  static NounP make_cell(NounP h, NounP t);
};
bool noun_equal(const Noun& a, const Noun& b);
std::vector<uint8_t> jam(const Noun& n);
// Throws kEFormat on malformed input: a backreference to anything but an earlier, complete
// noun, an atom length past the end, a truncated stream. Memory stays O(input).
NounP cue(const uint8_t* bytes, size_t len);

NounP ray_to_noun(const RayRef& a);
Ray noun_to_ray(const Noun& n);  // throws kEFormat / kEKind

}  // namespace maroon::lagoon
