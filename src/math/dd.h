// Double-double arithmetic from IEEE basic operations only (no FMA: Dekker's product).
// Requires round-to-nearest and no flush-to-zero, which the library guarantees around math calls.
#pragma once

namespace maroon::math::detail {

struct DD {
  double hi, lo;
};

// a + b = s + e exactly (Knuth).
inline DD two_sum(double a, double b) {
  double s = a + b;
  double bb = s - a;
  double e = (a - (s - bb)) + (b - bb);
  return {s, e};
}
// a + b = s + e exactly when a == 0 or exponent(a) >= exponent(b) (Dekker).
inline DD fast_two_sum(double a, double b) {
  double s = a + b;
  double e = b - (s - a);
  return {s, e};
}
// Veltkamp split: a = hi + lo with hi, lo of at most 26 significant bits each.
inline void split(double a, double* hi, double* lo) {
  double t = 134217729.0 * a;  // 2^27 + 1
  *hi = t - (t - a);
  *lo = a - *hi;
}
// a * b = p + e exactly (Dekker), barring overflow/underflow.
inline DD two_prod(double a, double b) {
  double p = a * b;
  double ah, al, bh, bl;
  split(a, &ah, &al);
  split(b, &bh, &bl);
  double e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
  return {p, e};
}
// Relative error below ~2^-104 (accurate double-double addition, Li et al.).
inline DD dd_add(DD a, DD b) {
  DD s = two_sum(a.hi, b.hi);
  DD t = two_sum(a.lo, b.lo);
  s.lo += t.hi;
  s = fast_two_sum(s.hi, s.lo);
  s.lo += t.lo;
  return fast_two_sum(s.hi, s.lo);
}
inline DD dd_add_d(DD a, double b) {
  DD s = two_sum(a.hi, b);
  s.lo += a.lo;
  return fast_two_sum(s.hi, s.lo);
}
// Relative error below ~2^-104.
inline DD dd_mul(DD a, DD b) {
  DD p = two_prod(a.hi, b.hi);
  p.lo += a.hi * b.lo + a.lo * b.hi;
  return fast_two_sum(p.hi, p.lo);
}
inline DD dd_mul_d(DD a, double b) {
  DD p = two_prod(a.hi, b);
  p.lo += a.lo * b;
  return fast_two_sum(p.hi, p.lo);
}

}  // namespace maroon::math::detail
