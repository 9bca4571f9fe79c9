"""IEEE 754 binary arithmetic from integers, written from the standard and docs/spec.md alone (no
Maroon): each result is computed exactly (Python integers) and rounded once to the format in one
of the four rounding modes. Values travel as raw bits (Python ints), as the vectors store them."""
from dataclasses import dataclass
from math import isqrt

MODES = ("nearest", "toward_zero", "up", "down")


@dataclass(frozen=True)
class Fmt:
    bits: int
    ebits: int
    mbits: int

    @property
    def bias(self): return (1 << (self.ebits - 1)) - 1
    @property
    def sign(self): return 1 << (self.bits - 1)
    @property
    def emask(self): return (1 << self.ebits) - 1
    @property
    def emin_q(self): return 1 - self.bias - self.mbits   # exponent of the subnormals' lsb
    @property
    def emax_q(self): return self.bias - self.mbits       # exponent of the largest binade's lsb
    @property
    def inf(self): return self.emask << self.mbits
    @property
    def nan(self): return self.inf | (1 << (self.mbits - 1))  # the canonical NaN
    @property
    def max(self): return self.inf - 1


FORMATS = {"float16": Fmt(16, 5, 10), "bfloat16": Fmt(16, 8, 7), "float32": Fmt(32, 8, 23), "float64": Fmt(64, 11, 52)}


def decode(f, x):
    """(kind, negative, num, exp): value = num * 2**exp; kind is 'zero', 'finite', 'inf' or 'nan'."""
    neg = bool(x & f.sign)
    e, m = (x >> f.mbits) & f.emask, x & ((1 << f.mbits) - 1)
    if e == f.emask:
        return ("nan" if m else "inf"), neg, 0, 0
    if e == 0:
        return ("finite" if m else "zero"), neg, m, f.emin_q
    return "finite", neg, m | (1 << f.mbits), e - f.bias - f.mbits


def is_nan(f, x): return decode(f, x)[0] == "nan"


def overflow(f, neg, mode):
    away = {"nearest": True, "toward_zero": False, "up": not neg, "down": neg}[mode]
    return (f.sign if neg else 0) | (f.inf if away else f.max)


def round_rat(f, neg, num, den, exp, mode):
    """Rounds (-1)**neg * num/den * 2**exp (num, den > 0) to f, once, in `mode`."""
    p = f.mbits + 1
    t = max(0, p + 3 - (num.bit_length() - den.bit_length()))
    q, r = divmod(num << t, den)
    while q.bit_length() < p + 2:
        t += 1
        q, r = divmod(num << t, den)
    e, sticky = exp - t, r != 0           # value = (q + r/den) * 2**e
    qe = max(q.bit_length() - 1 + e - f.mbits, f.emin_q)
    shift = qe - e
    keep, rem, half = q >> shift, q & ((1 << shift) - 1), 1 << (shift - 1)
    inexact = rem != 0 or sticky
    if mode == "nearest":
        up = rem > half or (rem == half and (sticky or keep & 1))
    else:
        up = inexact and {"toward_zero": False, "up": not neg, "down": neg}[mode]
    keep += up
    if keep >> p:
        keep, qe = keep >> 1, qe + 1
    if qe > f.emax_q:
        return overflow(f, neg, mode)
    s = f.sign if neg else 0
    if keep >> f.mbits:
        return s | ((qe - f.emin_q + 1) << f.mbits) | (keep - (1 << f.mbits))
    return s | keep


def add_exact(f, mode, sa, na, ea, sb, nb, eb, zero_a, zero_b):
    e0 = min(ea, eb)
    s = (-1 if sa else 1) * (na << (ea - e0)) + (-1 if sb else 1) * (nb << (eb - e0))
    if s == 0:  # IEEE 754 section 6.3: -0 + -0 = -0, +0 + +0 = +0, otherwise +0 (-0 rounding down)
        neg = sa if (zero_a and zero_b and sa == sb) else mode == "down"
        return f.sign if neg else 0
    return round_rat(f, s < 0, abs(s), 1, e0, mode)


def add(f, a, b, mode):
    ka, sa, na, ea = decode(f, a)
    kb, sb, nb, eb = decode(f, b)
    if ka == "nan" or kb == "nan" or (ka == kb == "inf" and sa != sb):
        return f.nan
    if ka == "inf" or kb == "inf":
        return a if ka == "inf" else b
    return add_exact(f, mode, sa, na, ea, sb, nb, eb, ka == "zero", kb == "zero")


def mul(f, a, b, mode):
    ka, sa, na, ea = decode(f, a)
    kb, sb, nb, eb = decode(f, b)
    neg = sa != sb
    if ka == "nan" or kb == "nan" or {ka, kb} == {"inf", "zero"}:
        return f.nan
    if "inf" in (ka, kb):
        return (f.sign if neg else 0) | f.inf
    if "zero" in (ka, kb):
        return f.sign if neg else 0
    return round_rat(f, neg, na * nb, 1, ea + eb, mode)


def fma(f, a, b, c, mode):
    """a*b + c with one rounding (MULACC)."""
    ka, sa, na, ea = decode(f, a)
    kb, sb, nb, eb = decode(f, b)
    kc, sc, nc, ec = decode(f, c)
    sp = sa != sb
    if "nan" in (ka, kb, kc) or {ka, kb} == {"inf", "zero"}:
        return f.nan
    if "inf" in (ka, kb):
        return f.nan if kc == "inf" and sc != sp else (f.sign if sp else 0) | f.inf
    if kc == "inf":
        return c
    zero_p = "zero" in (ka, kb)
    return add_exact(f, mode, sp, 0 if zero_p else na * nb, ea + eb, sc, nc, ec, zero_p, kc == "zero")


def recip(f, a, mode):
    k, s, n, e = decode(f, a)
    if k == "nan":
        return f.nan
    if k == "inf":
        return f.sign if s else 0
    if k == "zero":
        return (f.sign if s else 0) | f.inf
    return round_rat(f, s, 1, n, -e, mode)


def sqrt_rat(f, num, den, exp, mode):
    """Rounds sqrt(num/den * 2**exp) (positive) to f."""
    if exp & 1:
        num, exp = num << 1, exp - 1
    v_num, v_den = num * den, den * den               # sqrt(num/den) = sqrt(num*den)/den
    k = max(0, (f.mbits + 4) - (v_num.bit_length() - 2 * v_den.bit_length()) // 2)
    s = isqrt((v_num << (2 * k)) // v_den)
    exact = s * s * v_den == v_num << (2 * k)
    # 2s (+1 when inexact: strictly between s and s+1, which rounds as the true value does).
    return round_rat(f, False, 2 * s + (0 if exact else 1), 1, exp // 2 - k - 1, mode)


def sqrt(f, a, mode):
    k, s, n, e = decode(f, a)
    if k == "nan" or (s and k != "zero"):
        return f.nan
    if k in ("zero", "inf"):
        return a
    return sqrt_rat(f, n, 1, e, mode)


def trunc(f, a):
    k, s, n, e = decode(f, a)
    if k == "nan":
        return f.nan
    if k != "finite" or e >= 0:
        return a
    i = n >> -e
    return round_rat(f, s, i, 1, 0, "nearest") if i else (f.sign if s else 0)


def _key(f, x):
    """An integer with the order of the (non-NaN) values: -0 and +0 both map to 0."""
    return -(x & ~f.sign) if x & f.sign else x


def lt(f, a, b): return not (is_nan(f, a) or is_nan(f, b)) and _key(f, a) < _key(f, b)
def eq(f, a, b): return not (is_nan(f, a) or is_nan(f, b)) and _key(f, a) == _key(f, b)


def maximum(f, a, b):
    """IEEE 754-2019 maximum: NaN if either is NaN; -0 < +0; otherwise the larger operand's bits."""
    if is_nan(f, a) or is_nan(f, b):
        return f.nan
    if eq(f, a, b):
        return b if a & f.sign else a   # max(-0, +0) = +0
    return b if lt(f, a, b) else a


def convert(fr, to, x, mode):
    k, s, n, e = decode(fr, x)
    if k == "nan":
        return to.nan
    if k == "inf":
        return (to.sign if s else 0) | to.inf
    if k == "zero":
        return to.sign if s else 0
    return round_rat(to, s, n, 1, e, mode)


def from_int(f, v, mode): return 0 if v == 0 else round_rat(f, v < 0, abs(v), 1, 0, mode)


def to_int(f, x, lo, hi):
    """Truncation toward zero, saturating at [lo, hi]; NaN gives 0."""
    k, s, n, e = decode(f, x)
    if k == "nan":
        return 0
    if k == "inf":
        return lo if s else hi
    i = (n << e) if e >= 0 else (n >> -e)
    i = -i if s else i
    return min(max(i, lo), hi)
