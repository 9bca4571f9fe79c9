/* Maroon's Lagoon layer: Lagoon's rays and arms (urbit/numerics lagoon.hoon), bit for bit,
 * through a plain C ABI usable as jet implementations from a C runtime (vere, or any other).
 *
 * A ray is Lagoon's `[meta data]`: `meta` is shape, bloq (log2 of the element width in bits)
 * and kind; `data` is one atom holding the row-major elements from the least significant bit,
 * element i at bit i * 2^bloq, with a single 1 (the pin) above the last element. Here `data`
 * travels as that atom's little-endian bytes, exactly as a runtime holds it (u3r_bytes): for
 * bloq >= 3 that is the packed C array of little-endian elements followed by one 0x01 byte, so
 * inputs are read in place (no copy) and results are handed back as atom bytes.
 *
 * Semantics are Lagoon's (see docs/lagoon.md): bare Lagoon rounds toward zero (%z), sums are
 * right folds (cumsum, dot, trace), mmul is a left fold with separate roundings, comparisons
 * return the kind's 1 and 0, equ/neq are bit equality, NaNs are canonical. Supported: %i754 at
 * bloq 4-7 (binary16/32/64/128), %uint and %int2 at bloq 3-6 (8-64 bits). Ray I/O (check, jam,
 * cue) accepts any bloq 0-7 of those kinds.
 *
 * Nothing crosses this ABI as an exception: every function returns a status code (0 is
 * success) and, if `err` is not NULL, fills it with the code and a message naming the arm and
 * the problem. Results are allocated with malloc by Maroon and released with
 * maroon_lagoon_result_free / maroon_lagoon_free. Functions are thread-safe; each saves and
 * restores the caller's floating-point environment. */
#ifndef MAROON_LAGOON_H
#define MAROON_LAGOON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Everything declared here is exported from the shared library (built -fvisibility=hidden). */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* Kinds (Lagoon's $kind); the others (%unum %cplx %fixp) are rejected with MAROON_LAGOON_EKIND. */
enum { MAROON_LAGOON_I754 = 0, MAROON_LAGOON_UINT = 1, MAROON_LAGOON_INT2 = 2 };

/* Rounding modes: the first letter of Lagoon's rounding-mode term. 0 means bare Lagoon's
 * default, %z. The mode affects %i754 arithmetic only (as in Lagoon). */
enum {
  MAROON_LAGOON_RND_DEFAULT = 0,
  MAROON_LAGOON_RND_N = 'n', /* nearest, ties to even */
  MAROON_LAGOON_RND_Z = 'z', /* toward zero (bare Lagoon) */
  MAROON_LAGOON_RND_U = 'u', /* up, toward +inf */
  MAROON_LAGOON_RND_D = 'd'  /* down, toward -inf */
};

/* Status codes. */
enum {
  MAROON_LAGOON_OK = 0,
  MAROON_LAGOON_EARG = 1,    /* bad argument: mismatched metas, wrong rank, bad axis */
  MAROON_LAGOON_EKIND = 2,   /* kind or bloq not supported by this arm */
  MAROON_LAGOON_EDOMAIN = 3, /* where Lagoon crashes: integer /0, %mod of a non-finite
                                quotient, index out of range, a range that never ends */
  MAROON_LAGOON_EFORMAT = 4, /* malformed ray data (fails Lagoon's +check) or jam bytes */
  MAROON_LAGOON_ENOMEM = 5,  /* allocation failed or a size limit was exceeded */
  MAROON_LAGOON_EINTERNAL = 6
};

typedef struct {
  int code;
  char message[256];
} maroon_lagoon_error;

typedef struct {
  const uint64_t* shape;
  uint32_t rank;
  uint32_t bloq;
  uint32_t kind;
} maroon_lagoon_meta;

/* An input ray: meta and the data atom's little-endian bytes (pin included; trailing zero
 * bytes are allowed). Must pass Lagoon's +check: the highest set bit lies in element N. */
typedef struct {
  maroon_lagoon_meta meta;
  const uint8_t* data;
  size_t len;
} maroon_lagoon_ray;

/* A result ray, owned by the caller after a successful call; data is the minimal atom. */
typedef struct {
  uint64_t* shape;
  uint32_t rank;
  uint32_t bloq;
  uint32_t kind;
  uint8_t* data;
  size_t len;
} maroon_lagoon_result;

/* A scalar argument (raw bits, as Lagoon's `n=@`): little-endian bytes. */
typedef struct {
  const uint8_t* bytes;
  size_t len;
} maroon_lagoon_atom;

void maroon_lagoon_result_free(maroon_lagoon_result* r);
void maroon_lagoon_free(void* p);

/* A result viewed as an input ray (for chaining calls); valid while `r` lives. */
static inline maroon_lagoon_ray maroon_lagoon_as_ray(const maroon_lagoon_result* r) {
  maroon_lagoon_ray out;
  out.meta.shape = r->shape;
  out.meta.rank = r->rank;
  out.meta.bloq = r->bloq;
  out.meta.kind = r->kind;
  out.data = r->data;
  out.len = r->len;
  return out;
}

/* ---- rays ---- */
/* Lagoon's +check. */
int maroon_lagoon_check(const maroon_lagoon_ray* a, maroon_lagoon_error* err);
/* Lagoon's +spac: ORs the pin into `data` (which need not pass +check). */
int maroon_lagoon_spac(const maroon_lagoon_ray* a, maroon_lagoon_result* out, maroon_lagoon_error* err);
/* jam of the ray noun [[shape bloq kind ~] data] (Urbit's serialization), as atom bytes. */
int maroon_lagoon_jam(const maroon_lagoon_ray* a, uint8_t** out, size_t* out_len, maroon_lagoon_error* err);
/* cue: bytes of a jammed ray -> ray. Rejects malformed input (bad backreferences, truncated
 * or oversized atoms, wrong noun shape, failing +check); allocation is bounded by the input. */
int maroon_lagoon_cue(const uint8_t* bytes, size_t len, maroon_lagoon_result* out, maroon_lagoon_error* err);

/* ---- builders ---- */
int maroon_lagoon_zeros(const maroon_lagoon_meta* m, maroon_lagoon_result* out, maroon_lagoon_error* err);
int maroon_lagoon_ones(const maroon_lagoon_meta* m, maroon_lagoon_result* out, maroon_lagoon_error* err);
int maroon_lagoon_eye(const maroon_lagoon_meta* m, maroon_lagoon_result* out, maroon_lagoon_error* err);
int maroon_lagoon_iota(const maroon_lagoon_meta* m, maroon_lagoon_result* out, maroon_lagoon_error* err);
int maroon_lagoon_magic(const maroon_lagoon_meta* m, maroon_lagoon_result* out, maroon_lagoon_error* err);
int maroon_lagoon_fill(const maroon_lagoon_meta* m, maroon_lagoon_atom x, maroon_lagoon_result* out,
                       maroon_lagoon_error* err);
/* linspace [a b] n and range [a b) step d (%i754; `m` gives the bloq). range fails with
 * EDOMAIN where Lagoon would not terminate, and with ENOMEM past max_elems (0: 2^26). */
int maroon_lagoon_linspace(const maroon_lagoon_meta* m, maroon_lagoon_atom a, maroon_lagoon_atom b,
                           uint64_t n, int rnd, maroon_lagoon_result* out, maroon_lagoon_error* err);
int maroon_lagoon_range(const maroon_lagoon_meta* m, maroon_lagoon_atom a, maroon_lagoon_atom b,
                        maroon_lagoon_atom d, int rnd, uint64_t max_elems, maroon_lagoon_result* out,
                        maroon_lagoon_error* err);

/* ---- elementwise (Lagoon's bin-op: both metas must be equal) ---- */
#define MAROON_LAGOON_BINARY(name)                                                          \
  int maroon_lagoon_##name(const maroon_lagoon_ray* a, const maroon_lagoon_ray* b, int rnd, \
                           maroon_lagoon_result* out, maroon_lagoon_error* err);
MAROON_LAGOON_BINARY(add)
MAROON_LAGOON_BINARY(sub)
MAROON_LAGOON_BINARY(mul)
MAROON_LAGOON_BINARY(div)
MAROON_LAGOON_BINARY(mod) /* %i754: a - b*san(toi_rnd(a/b)) (numerics #78) */
MAROON_LAGOON_BINARY(gth)
MAROON_LAGOON_BINARY(gte)
MAROON_LAGOON_BINARY(lth)
MAROON_LAGOON_BINARY(lte)
MAROON_LAGOON_BINARY(equ) /* bit equality */
MAROON_LAGOON_BINARY(neq)
MAROON_LAGOON_BINARY(dot) /* cumsum(mul a b): products, then a right fold */
MAROON_LAGOON_BINARY(mmul) /* per output: acc = +0; acc = acc + a_ik*b_kj, k ascending */
#undef MAROON_LAGOON_BINARY

/* The *-scalar arms: `fill` a ray with n, then the elementwise arm. */
#define MAROON_LAGOON_SCALAR(name)                                                        \
  int maroon_lagoon_##name##_scalar(const maroon_lagoon_ray* a, maroon_lagoon_atom n, int rnd, \
                                    maroon_lagoon_result* out, maroon_lagoon_error* err);
MAROON_LAGOON_SCALAR(add)
MAROON_LAGOON_SCALAR(sub)
MAROON_LAGOON_SCALAR(mul)
MAROON_LAGOON_SCALAR(div)
MAROON_LAGOON_SCALAR(mod)
#undef MAROON_LAGOON_SCALAR

/* ---- unary and reductions ---- */
#define MAROON_LAGOON_UNARY(name)                                                   \
  int maroon_lagoon_##name(const maroon_lagoon_ray* a, int rnd, maroon_lagoon_result* out, \
                           maroon_lagoon_error* err);
MAROON_LAGOON_UNARY(abs)
MAROON_LAGOON_UNARY(cumsum) /* the total (not prefix) sum, right fold from +0 */
MAROON_LAGOON_UNARY(prod)   /* right fold of mul from 1 */
MAROON_LAGOON_UNARY(max)    /* Lagoon's reel: starts at x0, scans x_{n-1}..x_0, strict > */
MAROON_LAGOON_UNARY(min)
MAROON_LAGOON_UNARY(transpose)
MAROON_LAGOON_UNARY(diag)   /* n x 1, a_00 first (numerics #75) */
MAROON_LAGOON_UNARY(trace)  /* cumsum(diag a) */
#undef MAROON_LAGOON_UNARY
/* First ravel index whose bits equal max (min). */
int maroon_lagoon_argmax(const maroon_lagoon_ray* a, uint64_t* index, maroon_lagoon_error* err);
int maroon_lagoon_argmin(const maroon_lagoon_ray* a, uint64_t* index, maroon_lagoon_error* err);
/* Loobeans as Lagoon returns them: 0 is %.y (true), 1 is %.n. */
int maroon_lagoon_any(const maroon_lagoon_ray* a, int* loobean, maroon_lagoon_error* err);
int maroon_lagoon_all(const maroon_lagoon_ray* a, int* loobean, maroon_lagoon_error* err);
int maroon_lagoon_pow_n(const maroon_lagoon_ray* a, uint64_t n, int rnd, maroon_lagoon_result* out,
                        maroon_lagoon_error* err);

/* ---- indexing ---- */
int maroon_lagoon_get_item(const maroon_lagoon_ray* a, const uint64_t* index, uint32_t n_index,
                           uint8_t* item, size_t item_len, maroon_lagoon_error* err);
int maroon_lagoon_set_item(const maroon_lagoon_ray* a, const uint64_t* index, uint32_t n_index,
                           maroon_lagoon_atom val, maroon_lagoon_result* out, maroon_lagoon_error* err);
int maroon_lagoon_get_row(const maroon_lagoon_ray* a, const uint64_t* index, uint32_t n_index,
                          maroon_lagoon_result* out, maroon_lagoon_error* err);
int maroon_lagoon_set_row(const maroon_lagoon_ray* a, const uint64_t* index, uint32_t n_index,
                          const maroon_lagoon_ray* row, maroon_lagoon_result* out, maroon_lagoon_error* err);
int maroon_lagoon_reshape(const maroon_lagoon_ray* a, const uint64_t* shape, uint32_t rank,
                          maroon_lagoon_result* out, maroon_lagoon_error* err);

/* ---- arms Lagoon lacks (semantics in docs/lagoon.md) ---- */
/* Elementwise arm `op` ("add" "sub" "mul" "div" "mod" "gth" "gte" "lth" "lte" "equ" "neq")
 * with numpy broadcasting of the shapes (bloq and kind must match). */
int maroon_lagoon_broadcast_op(const char* op, const maroon_lagoon_ray* a, const maroon_lagoon_ray* b,
                               int rnd, maroon_lagoon_result* out, maroon_lagoon_error* err);
int maroon_lagoon_broadcast_to(const maroon_lagoon_ray* a, const uint64_t* shape, uint32_t rank,
                               maroon_lagoon_result* out, maroon_lagoon_error* err);
/* Output axis i is input axis order[i]. */
int maroon_lagoon_permute(const maroon_lagoon_ray* a, const uint32_t* order, uint32_t rank,
                          maroon_lagoon_result* out, maroon_lagoon_error* err);
int maroon_lagoon_flip(const maroon_lagoon_ray* a, const uint32_t* axes, uint32_t n_axes,
                       maroon_lagoon_result* out, maroon_lagoon_error* err);
/* Zero bits before[i] / after[i] elements on each axis. */
int maroon_lagoon_pad(const maroon_lagoon_ray* a, const uint64_t* before, const uint64_t* after,
                      uint32_t rank, maroon_lagoon_result* out, maroon_lagoon_error* err);
/* Along one axis, kept as size 1: sum is cumsum's right fold, max is Lagoon's max. */
int maroon_lagoon_sum_axis(const maroon_lagoon_ray* a, uint32_t axis, int rnd, maroon_lagoon_result* out,
                           maroon_lagoon_error* err);
int maroon_lagoon_max_axis(const maroon_lagoon_ray* a, uint32_t axis, maroon_lagoon_result* out,
                           maroon_lagoon_error* err);
/* Softmax along `axis` (%i754 bloq 4-6), by Maroon's Tensor::softmax (Maroon's core contract:
 * exp via EXP2, left-fold sums) in mode `rnd`. */
int maroon_lagoon_softmax(const maroon_lagoon_ray* a, uint32_t axis, int rnd, maroon_lagoon_result* out,
                          maroon_lagoon_error* err);
/* 2-D convolution (cross-correlation): x [N C H W], w [O C KH KW] -> [N O OH OW], with stride
 * and zero padding per spatial axis. Each output is a left fold from +0 over (c, kh, kw) of
 * separately rounded products: mmul's order applied to im2col. Any supported kind. */
int maroon_lagoon_conv2d(const maroon_lagoon_ray* x, const maroon_lagoon_ray* w, const uint32_t stride[2],
                         const uint32_t padding[2], int rnd, maroon_lagoon_result* out,
                         maroon_lagoon_error* err);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* MAROON_LAGOON_H */
