// Rays <-> Maroon tensors, and the arms that Maroon's own engine computes (softmax).
#include <cstring>

#include "lagoon/internal.h"
#include "lagoon/lagoon.hpp"
#include "maroon/tensor.h"

namespace maroon::lagoon {

static DType dtype_for(const Meta& m) {
  switch (m.kind) {
    case Kind::I754:
      if (m.bloq == 4) return DType::Float16;
      if (m.bloq == 5) return DType::Float32;
      if (m.bloq == 6) return DType::Float64;
      break;
    case Kind::Uint:
      if (m.bloq == 3) return DType::UInt8;
      if (m.bloq == 4) return DType::UInt16;
      if (m.bloq == 5) return DType::UInt32;
      if (m.bloq == 6) return DType::UInt64;
      break;
    case Kind::Int2:
      if (m.bloq == 3) return DType::Int8;
      if (m.bloq == 4) return DType::Int16;
      if (m.bloq == 5) return DType::Int32;
      if (m.bloq == 6) return DType::Int64;
      break;
  }
  throw Error(kEKind, "to-tensor: %" + std::string(kind_name(m.kind)) + " at bloq " + std::to_string(m.bloq) +
                          " has no Maroon dtype");
}

Tensor to_tensor(const RayRef& a) {
  DType d = dtype_for(a.meta);
  Shape s(a.meta.shape.begin(), a.meta.shape.end());
  // The elements are already Maroon's layout (row-major, little-endian, natural size): the
  // ray's atom minus its pin byte is the tensor's buffer.
  return Tensor::from_bytes(a.elems(), a.n * a.meta.elem_bytes(), s, d);
}

Ray from_tensor(const Tensor& t) {
  Meta m;
  for (int64_t d : t.shape()) m.shape.push_back(uint64_t(d));
  switch (t.dtype()) {
    case DType::Float16: m.kind = Kind::I754, m.bloq = 4; break;
    case DType::Float32: m.kind = Kind::I754, m.bloq = 5; break;
    case DType::Float64: m.kind = Kind::I754, m.bloq = 6; break;
    case DType::UInt8: m.kind = Kind::Uint, m.bloq = 3; break;
    case DType::UInt16: m.kind = Kind::Uint, m.bloq = 4; break;
    case DType::UInt32: m.kind = Kind::Uint, m.bloq = 5; break;
    case DType::UInt64: m.kind = Kind::Uint, m.bloq = 6; break;
    case DType::Int8: m.kind = Kind::Int2, m.bloq = 3; break;
    case DType::Int16: m.kind = Kind::Int2, m.bloq = 4; break;
    case DType::Int32: m.kind = Kind::Int2, m.bloq = 5; break;
    case DType::Int64: m.kind = Kind::Int2, m.bloq = 6; break;
    default:
      throw Error(kEKind, "from-tensor: dtype " + std::string(dtype_name(t.dtype())) + " has no Lagoon kind");
  }
  Ray r = make_ray(m);
  std::vector<uint8_t> b = t.bytes();
  if (b.size() + 1 != r.data.size()) throw Error(kEInternal, "from-tensor: buffer size mismatch");
  if (!b.empty()) std::memcpy(r.elems(), b.data(), b.size());
  return r;
}

Ray softmax(const RayRef& a, uint32_t axis, Round r) {
  if (a.meta.kind != Kind::I754) throw Error(kEKind, "softmax: %i754 only");
  if (axis >= a.meta.shape.size())
    throw Error(kEArg, "softmax: axis " + std::to_string(axis) + " out of range for " + shape_str(a.meta.shape));
  try {
    RoundingScope scope(r);  // nodes built here round in r; realize() sets its own FP state
    Tensor t = to_tensor(a).softmax(int64_t(axis));
    return from_tensor(t.realize());
  } catch (const maroon::Error& e) {
    throw Error(kEArg, std::string("softmax: ") + e.what());
  }
}

}  // namespace maroon::lagoon
