// The C ABI (maroon/lagoon.h): converts arguments, calls the C++ arms, and turns every
// exception into a status code and a message. Nothing throws across this boundary.
#include <cstdlib>
#include <cstring>
#include <new>

#include "lagoon/internal.h"
#include "lagoon/lagoon.hpp"
#include "maroon/lagoon.h"

using namespace maroon;
using namespace maroon::lagoon;

namespace {

int fail(maroon_lagoon_error* err, int code, const char* msg) {
  if (err) {
    err->code = code;
    std::snprintf(err->message, sizeof err->message, "%s", msg);
  }
  return code;
}

template <class Fn>
int guarded(maroon_lagoon_error* err, Fn&& fn) {
  try {
    fn();
    if (err) {
      err->code = 0;
      err->message[0] = 0;
    }
    return MAROON_LAGOON_OK;
  } catch (const lagoon::Error& e) {
    return fail(err, e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return fail(err, MAROON_LAGOON_ENOMEM, "out of memory");
  } catch (const std::length_error&) {
    return fail(err, MAROON_LAGOON_ENOMEM, "size limit exceeded");
  } catch (const std::exception& e) {
    return fail(err, MAROON_LAGOON_EINTERNAL, e.what());
  } catch (...) {
    return fail(err, MAROON_LAGOON_EINTERNAL, "unknown error");
  }
}

Kind to_kind(uint32_t k) {
  switch (k) {
    case MAROON_LAGOON_I754: return Kind::I754;
    case MAROON_LAGOON_UINT: return Kind::Uint;
    case MAROON_LAGOON_INT2: return Kind::Int2;
  }
  throw lagoon::Error(kEKind, "unknown kind code " + std::to_string(k));
}

Round to_round(int rnd) {
  switch (rnd) {
    case MAROON_LAGOON_RND_DEFAULT:
    case MAROON_LAGOON_RND_Z: return Round::TowardZero;
    case MAROON_LAGOON_RND_N: return Round::NearestEven;
    case MAROON_LAGOON_RND_U: return Round::Up;
    case MAROON_LAGOON_RND_D: return Round::Down;
  }
  throw lagoon::Error(kEArg, "unknown rounding mode " + std::to_string(rnd) + " (use 'n' 'z' 'u' 'd')");
}

Meta to_meta(const maroon_lagoon_meta* m) {
  if (!m) throw lagoon::Error(kEArg, "meta is NULL");
  if (m->rank > 0 && !m->shape) throw lagoon::Error(kEArg, "shape is NULL");
  if (m->rank > 64) throw lagoon::Error(kEArg, "rank above 64");
  if (m->bloq > 7) throw lagoon::Error(kEKind, "bloq " + std::to_string(m->bloq) + " is not supported (0-7)");
  Meta out;
  out.shape.assign(m->shape, m->shape + m->rank);
  out.bloq = int(m->bloq);
  out.kind = to_kind(m->kind);
  return out;
}

RayRef to_ref(const maroon_lagoon_ray* a, const char* what) {
  if (!a) throw lagoon::Error(kEArg, std::string(what) + " is NULL");
  return view(to_meta(&a->meta), a->data, a->len, what);
}

std::vector<uint8_t> to_bytes(maroon_lagoon_atom x) {
  if (x.len > 0 && !x.bytes) throw lagoon::Error(kEArg, "scalar bytes are NULL");
  if (x.len > 4096) throw lagoon::Error(kEArg, "scalar wider than 4096 bytes");
  return std::vector<uint8_t>(x.bytes, x.bytes + x.len);
}

std::vector<uint64_t> to_index(const uint64_t* p, uint32_t n) {
  if (n > 0 && !p) throw lagoon::Error(kEArg, "index is NULL");
  if (n > 64) throw lagoon::Error(kEArg, "index rank above 64");
  return std::vector<uint64_t>(p, p + n);
}

void emit(const Ray& r, maroon_lagoon_result* out) {
  if (!out) throw lagoon::Error(kEArg, "out is NULL");
  auto* shape = static_cast<uint64_t*>(std::malloc(sizeof(uint64_t) * (r.meta.shape.size() + 1)));
  auto* data = static_cast<uint8_t*>(std::malloc(r.data.size() ? r.data.size() : 1));
  if (!shape || !data) {
    std::free(shape);
    std::free(data);
    throw std::bad_alloc();
  }
  if (!r.meta.shape.empty()) std::memcpy(shape, r.meta.shape.data(), sizeof(uint64_t) * r.meta.shape.size());
  std::memcpy(data, r.data.data(), r.data.size());
  out->shape = shape;
  out->rank = uint32_t(r.meta.shape.size());
  out->bloq = uint32_t(r.meta.bloq);
  out->kind = uint32_t(r.meta.kind);
  out->data = data;
  out->len = r.data.size();
}

}  // namespace

extern "C" {

void maroon_lagoon_result_free(maroon_lagoon_result* r) {
  if (!r) return;
  std::free(r->shape);
  std::free(r->data);
  r->shape = nullptr;
  r->data = nullptr;
  r->len = 0;
  r->rank = 0;
}

void maroon_lagoon_free(void* p) { std::free(p); }

int maroon_lagoon_check(const maroon_lagoon_ray* a, maroon_lagoon_error* err) {
  return guarded(err, [&] { to_ref(a, "check"); });
}

int maroon_lagoon_spac(const maroon_lagoon_ray* a, maroon_lagoon_result* out, maroon_lagoon_error* err) {
  return guarded(err, [&] {
    if (!a) throw lagoon::Error(kEArg, "ray is NULL");
    if (a->len > 0 && !a->data) throw lagoon::Error(kEArg, "data is NULL");
    emit(spac(to_meta(&a->meta), a->data, a->len), out);
  });
}

int maroon_lagoon_jam(const maroon_lagoon_ray* a, uint8_t** out, size_t* out_len, maroon_lagoon_error* err) {
  return guarded(err, [&] {
    if (!out || !out_len) throw lagoon::Error(kEArg, "out is NULL");
    std::vector<uint8_t> bytes = jam(*ray_to_noun(to_ref(a, "jam")));
    auto* p = static_cast<uint8_t*>(std::malloc(bytes.size() ? bytes.size() : 1));
    if (!p) throw std::bad_alloc();
    std::memcpy(p, bytes.data(), bytes.size());
    *out = p;
    *out_len = bytes.size();
  });
}

int maroon_lagoon_cue(const uint8_t* bytes, size_t len, maroon_lagoon_result* out, maroon_lagoon_error* err) {
  return guarded(err, [&] { emit(noun_to_ray(*cue(bytes, len)), out); });
}

#define BUILDER(cname, fn)                                                                          \
  int maroon_lagoon_##cname(const maroon_lagoon_meta* m, maroon_lagoon_result* out, maroon_lagoon_error* err) { \
    return guarded(err, [&] { emit(fn(to_meta(m)), out); });                                        \
  }
BUILDER(zeros, zeros)
BUILDER(ones, ones)
BUILDER(eye, eye)
BUILDER(iota, iota)
BUILDER(magic, magic)
#undef BUILDER

int maroon_lagoon_fill(const maroon_lagoon_meta* m, maroon_lagoon_atom x, maroon_lagoon_result* out,
                       maroon_lagoon_error* err) {
  return guarded(err, [&] { emit(fill(to_meta(m), to_bytes(x)), out); });
}

int maroon_lagoon_linspace(const maroon_lagoon_meta* m, maroon_lagoon_atom a, maroon_lagoon_atom b, uint64_t n,
                           int rnd, maroon_lagoon_result* out, maroon_lagoon_error* err) {
  return guarded(err, [&] { emit(linspace(to_meta(m), to_bytes(a), to_bytes(b), n, to_round(rnd)), out); });
}

int maroon_lagoon_range(const maroon_lagoon_meta* m, maroon_lagoon_atom a, maroon_lagoon_atom b,
                        maroon_lagoon_atom d, int rnd, uint64_t max_elems, maroon_lagoon_result* out,
                        maroon_lagoon_error* err) {
  return guarded(err, [&] {
    emit(range(to_meta(m), to_bytes(a), to_bytes(b), to_bytes(d), to_round(rnd), max_elems), out);
  });
}

#define BINARY(name, op)                                                                            \
  int maroon_lagoon_##name(const maroon_lagoon_ray* a, const maroon_lagoon_ray* b, int rnd,        \
                           maroon_lagoon_result* out, maroon_lagoon_error* err) {                   \
    return guarded(err, [&] { emit(binary(op, to_ref(a, #name), to_ref(b, #name), to_round(rnd)), out); }); \
  }                                                                                                 \
  int maroon_lagoon_##name##_scalar(const maroon_lagoon_ray* a, maroon_lagoon_atom n, int rnd,     \
                                    maroon_lagoon_result* out, maroon_lagoon_error* err) {          \
    return guarded(err, [&] { emit(binary_scalar(op, to_ref(a, #name), to_bytes(n), to_round(rnd)), out); }); \
  }
BINARY(add, Bin::Add)
BINARY(sub, Bin::Sub)
BINARY(mul, Bin::Mul)
BINARY(div, Bin::Div)
BINARY(mod, Bin::Mod)
#undef BINARY

#define COMPARE(name, op)                                                                           \
  int maroon_lagoon_##name(const maroon_lagoon_ray* a, const maroon_lagoon_ray* b, int rnd,        \
                           maroon_lagoon_result* out, maroon_lagoon_error* err) {                   \
    return guarded(err, [&] { emit(binary(op, to_ref(a, #name), to_ref(b, #name), to_round(rnd)), out); }); \
  }
COMPARE(gth, Bin::Gth)
COMPARE(gte, Bin::Gte)
COMPARE(lth, Bin::Lth)
COMPARE(lte, Bin::Lte)
COMPARE(equ, Bin::Equ)
COMPARE(neq, Bin::Neq)
#undef COMPARE

int maroon_lagoon_dot(const maroon_lagoon_ray* a, const maroon_lagoon_ray* b, int rnd, maroon_lagoon_result* out,
                      maroon_lagoon_error* err) {
  return guarded(err, [&] { emit(dot(to_ref(a, "dot"), to_ref(b, "dot"), to_round(rnd)), out); });
}

int maroon_lagoon_mmul(const maroon_lagoon_ray* a, const maroon_lagoon_ray* b, int rnd,
                       maroon_lagoon_result* out, maroon_lagoon_error* err) {
  return guarded(err, [&] { emit(mmul(to_ref(a, "mmul"), to_ref(b, "mmul"), to_round(rnd)), out); });
}

#define UNARY_R(name, expr)                                                                         \
  int maroon_lagoon_##name(const maroon_lagoon_ray* a, int rnd, maroon_lagoon_result* out,         \
                           maroon_lagoon_error* err) {                                              \
    return guarded(err, [&] {                                                                       \
      RayRef x = to_ref(a, #name);                                                                  \
      Round r = to_round(rnd);                                                                      \
      (void)r;                                                                                      \
      emit(expr, out);                                                                              \
    });                                                                                             \
  }
UNARY_R(abs, lagoon::abs(x, r))
UNARY_R(cumsum, cumsum(x, r))
UNARY_R(prod, prod(x, r))
UNARY_R(max, lagoon::max(x))
UNARY_R(min, lagoon::min(x))
UNARY_R(transpose, transpose(x))
UNARY_R(diag, diag(x))
UNARY_R(trace, trace(x, r))
#undef UNARY_R

int maroon_lagoon_argmax(const maroon_lagoon_ray* a, uint64_t* index, maroon_lagoon_error* err) {
  return guarded(err, [&] {
    if (!index) throw lagoon::Error(kEArg, "index is NULL");
    *index = argmax(to_ref(a, "argmax"));
  });
}

int maroon_lagoon_argmin(const maroon_lagoon_ray* a, uint64_t* index, maroon_lagoon_error* err) {
  return guarded(err, [&] {
    if (!index) throw lagoon::Error(kEArg, "index is NULL");
    *index = argmin(to_ref(a, "argmin"));
  });
}

int maroon_lagoon_any(const maroon_lagoon_ray* a, int* loobean, maroon_lagoon_error* err) {
  return guarded(err, [&] {
    if (!loobean) throw lagoon::Error(kEArg, "loobean is NULL");
    *loobean = any(to_ref(a, "any")) ? 0 : 1;
  });
}

int maroon_lagoon_all(const maroon_lagoon_ray* a, int* loobean, maroon_lagoon_error* err) {
  return guarded(err, [&] {
    if (!loobean) throw lagoon::Error(kEArg, "loobean is NULL");
    *loobean = all(to_ref(a, "all")) ? 0 : 1;
  });
}

int maroon_lagoon_pow_n(const maroon_lagoon_ray* a, uint64_t n, int rnd, maroon_lagoon_result* out,
                        maroon_lagoon_error* err) {
  return guarded(err, [&] { emit(pow_n(to_ref(a, "pow-n"), n, to_round(rnd)), out); });
}

int maroon_lagoon_get_item(const maroon_lagoon_ray* a, const uint64_t* index, uint32_t n_index, uint8_t* item,
                           size_t item_len, maroon_lagoon_error* err) {
  return guarded(err, [&] {
    std::vector<uint8_t> v = get_item(to_ref(a, "get-item"), to_index(index, n_index));
    if (!item || item_len < v.size())
      throw lagoon::Error(kEArg, "get-item: the item buffer needs " + std::to_string(v.size()) + " bytes");
    std::memset(item, 0, item_len);
    std::memcpy(item, v.data(), v.size());
  });
}

int maroon_lagoon_set_item(const maroon_lagoon_ray* a, const uint64_t* index, uint32_t n_index,
                           maroon_lagoon_atom val, maroon_lagoon_result* out, maroon_lagoon_error* err) {
  return guarded(err, [&] { emit(set_item(to_ref(a, "set-item"), to_index(index, n_index), to_bytes(val)), out); });
}

int maroon_lagoon_get_row(const maroon_lagoon_ray* a, const uint64_t* index, uint32_t n_index,
                          maroon_lagoon_result* out, maroon_lagoon_error* err) {
  return guarded(err, [&] { emit(get_row(to_ref(a, "get-row"), to_index(index, n_index)), out); });
}

int maroon_lagoon_set_row(const maroon_lagoon_ray* a, const uint64_t* index, uint32_t n_index,
                          const maroon_lagoon_ray* row, maroon_lagoon_result* out, maroon_lagoon_error* err) {
  return guarded(err, [&] {
    emit(set_row(to_ref(a, "set-row"), to_index(index, n_index), to_ref(row, "set-row")), out);
  });
}

int maroon_lagoon_reshape(const maroon_lagoon_ray* a, const uint64_t* shape, uint32_t rank,
                          maroon_lagoon_result* out, maroon_lagoon_error* err) {
  return guarded(err, [&] { emit(reshape(to_ref(a, "reshape"), to_index(shape, rank)), out); });
}

int maroon_lagoon_broadcast_op(const char* op, const maroon_lagoon_ray* a, const maroon_lagoon_ray* b, int rnd,
                               maroon_lagoon_result* out, maroon_lagoon_error* err) {
  return guarded(err, [&] {
    if (!op) throw lagoon::Error(kEArg, "op is NULL");
    emit(broadcast_binary(bin_from_name(op), to_ref(a, op), to_ref(b, op), to_round(rnd)), out);
  });
}

int maroon_lagoon_broadcast_to(const maroon_lagoon_ray* a, const uint64_t* shape, uint32_t rank,
                               maroon_lagoon_result* out, maroon_lagoon_error* err) {
  return guarded(err, [&] { emit(broadcast_to(to_ref(a, "broadcast-to"), to_index(shape, rank)), out); });
}

int maroon_lagoon_permute(const maroon_lagoon_ray* a, const uint32_t* order, uint32_t rank,
                          maroon_lagoon_result* out, maroon_lagoon_error* err) {
  return guarded(err, [&] {
    if (rank > 0 && !order) throw lagoon::Error(kEArg, "order is NULL");
    emit(permute(to_ref(a, "permute"), std::vector<uint32_t>(order, order + rank)), out);
  });
}

int maroon_lagoon_flip(const maroon_lagoon_ray* a, const uint32_t* axes, uint32_t n_axes,
                       maroon_lagoon_result* out, maroon_lagoon_error* err) {
  return guarded(err, [&] {
    if (n_axes > 0 && !axes) throw lagoon::Error(kEArg, "axes is NULL");
    emit(flip(to_ref(a, "flip"), std::vector<uint32_t>(axes, axes + n_axes)), out);
  });
}

int maroon_lagoon_pad(const maroon_lagoon_ray* a, const uint64_t* before, const uint64_t* after, uint32_t rank,
                      maroon_lagoon_result* out, maroon_lagoon_error* err) {
  return guarded(err, [&] { emit(pad(to_ref(a, "pad"), to_index(before, rank), to_index(after, rank)), out); });
}

int maroon_lagoon_sum_axis(const maroon_lagoon_ray* a, uint32_t axis, int rnd, maroon_lagoon_result* out,
                           maroon_lagoon_error* err) {
  return guarded(err, [&] { emit(sum_axis(to_ref(a, "sum-axis"), axis, to_round(rnd)), out); });
}

int maroon_lagoon_max_axis(const maroon_lagoon_ray* a, uint32_t axis, maroon_lagoon_result* out,
                           maroon_lagoon_error* err) {
  return guarded(err, [&] { emit(max_axis(to_ref(a, "max-axis"), axis), out); });
}

int maroon_lagoon_softmax(const maroon_lagoon_ray* a, uint32_t axis, int rnd, maroon_lagoon_result* out,
                          maroon_lagoon_error* err) {
  return guarded(err, [&] { emit(softmax(to_ref(a, "softmax"), axis, to_round(rnd)), out); });
}

int maroon_lagoon_conv2d(const maroon_lagoon_ray* x, const maroon_lagoon_ray* w, const uint32_t stride[2],
                         const uint32_t padding[2], int rnd, maroon_lagoon_result* out, maroon_lagoon_error* err) {
  return guarded(err, [&] {
    if (!stride || !padding) throw lagoon::Error(kEArg, "stride or padding is NULL");
    emit(conv2d(to_ref(x, "conv2d"), to_ref(w, "conv2d"), stride, padding, to_round(rnd)), out);
  });
}

}  // extern "C"
