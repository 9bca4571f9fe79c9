"""The primitives of docs/spec.md recomputed from their definitions: integer ops (sections 8-9),
float ADD/MUL/MULACC/RECIPROCAL/SQRT/TRUNC/MAX/comparisons in every rounding mode (ieee.py),
WHERE, CAST and BITCAST between every pair of dtypes, REDUCE and REDUCE_MULACC as left folds, the
movement ops, and GATHER (section 15: a copy of the selected element's bits, zero bits for an index
outside the axis). EXP2, LOG2, SIN and POW are not checked here (correct rounding of
transcendentals needs an arbitrary-precision library; src/math is verified against MPFR)."""
import numpy as np

import ieee
from tensors import DTYPES, T, from_bits

NOT_CHECKED = {"EXP2", "LOG2", "SIN", "POW"}


def width(dtype): return 1 if dtype == "bool" else DTYPES[dtype][1] * 8
def kind(dtype): return DTYPES[dtype][2]


def value(dtype, x):
    """An integer dtype's element bits as its (signed or unsigned) value."""
    w = width(dtype)
    return x - (1 << w) if kind(dtype) == "i" and x >> (w - 1) else x


def wrap(dtype, v): return v & ((1 << width(dtype)) - 1)


def int_bounds(dtype):
    w = width(dtype)
    return (-(1 << (w - 1)), (1 << (w - 1)) - 1) if kind(dtype) == "i" else (0, (1 << w) - 1)


def int_binary(op, dtype, a, b):
    w, (lo, hi) = width(dtype), int_bounds(dtype)
    x, y = value(dtype, a), value(dtype, b)
    if op in ("CDIV", "CMOD", "FLOORDIV", "FLOORMOD"):
        if y == 0:
            return wrap(dtype, -1) if op in ("CDIV", "FLOORDIV") else a
        if x == lo and y == -1 and kind(dtype) == "i":
            return a if op in ("CDIV", "FLOORDIV") else 0
        q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
        return wrap(dtype, {"CDIV": q, "CMOD": x - y * q, "FLOORDIV": x // y, "FLOORMOD": x % y}[op])
    if op == "SHL":
        return wrap(dtype, x << y) if 0 <= y < w else 0
    if op == "SHR":
        return wrap(dtype, x >> y) if 0 <= y < w else wrap(dtype, -1 if x < 0 else 0)
    return {"ADD": lambda: wrap(dtype, x + y), "MUL": lambda: wrap(dtype, x * y), "MAX": lambda: wrap(dtype, max(x, y)),
            "CMPLT": lambda: int(x < y), "CMPNE": lambda: int(a != b), "CMPEQ": lambda: int(a == b),
            "AND": lambda: a & b, "OR": lambda: a | b, "XOR": lambda: a ^ b}[op]()


def bool_binary(op, a, b):
    return {"ADD": a | b, "MAX": a | b, "MUL": a & b, "CMPLT": int(not a and b), "CMPNE": a ^ b, "CMPEQ": 1 - (a ^ b),
            "AND": a & b, "OR": a | b, "XOR": a ^ b}[op]


def float_op(op, f, mode, xs):
    fn = {"ADD": lambda a, b: ieee.add(f, a, b, mode), "MUL": lambda a, b: ieee.mul(f, a, b, mode),
          "MAX": lambda a, b: ieee.maximum(f, a, b), "CMPLT": lambda a, b: int(ieee.lt(f, a, b)),
          "CMPNE": lambda a, b: int(not ieee.eq(f, a, b)), "CMPEQ": lambda a, b: int(ieee.eq(f, a, b)),
          "RECIPROCAL": lambda a: ieee.recip(f, a, mode), "SQRT": lambda a: ieee.sqrt(f, a, mode),
          "TRUNC": lambda a: ieee.trunc(f, a), "MULACC": lambda a, b, c: ieee.fma(f, a, b, c, mode)}[op]
    return fn(*xs)


def elementwise(e, ins):
    op, dt, mode = e["op"], e["dtype"], e["round"]
    cols = [t.ints() for t in ins]
    if op == "WHERE":
        return [a if c else b for c, a, b in zip(*cols)]
    if dt in ieee.FORMATS:
        return [float_op(op, ieee.FORMATS[dt], mode, xs) for xs in zip(*cols)]
    if op == "MULACC":
        return [wrap(dt, value(dt, a) * value(dt, b) + value(dt, c)) for a, b, c in zip(*cols)]
    return [bool_binary(op, a, b) if dt == "bool" else int_binary(op, dt, a, b) for a, b in zip(*cols)]


def cast(src, dst, mode, x):
    if src in ieee.FORMATS:
        f = ieee.FORMATS[src]
        if dst == src:
            return x  # CAST to the same dtype is the identity (docs/spec.md section 6): payloads kept
        if dst in ieee.FORMATS:
            return ieee.convert(f, ieee.FORMATS[dst], x, mode)
        if dst == "bool":
            return int(ieee.decode(f, x)[0] != "zero")
        return wrap(dst, ieee.to_int(f, x, *int_bounds(dst)))
    v = x if src == "bool" else value(src, x)
    if dst in ieee.FORMATS:
        return ieee.from_int(ieee.FORMATS[dst], v, mode)
    return int(v != 0) if dst == "bool" else wrap(dst, v)


def reduce_fold(op, dt, mode, items):
    """The left fold from the identity, one rounding per step (docs/spec.md section 10)."""
    if dt in ieee.FORMATS:
        f = ieee.FORMATS[dt]
        acc = {"ADD": 0, "MUL": f.bias << f.mbits, "MAX": f.sign | f.inf}[op]
        step = {"ADD": lambda a, x: ieee.add(f, a, x, mode), "MUL": lambda a, x: ieee.mul(f, a, x, mode),
                "MAX": lambda a, x: ieee.maximum(f, a, x)}[op]
    elif dt == "bool":
        acc, step = (1 if op == "MUL" else 0), (lambda a, x: bool_binary(op, a, x))
    else:
        acc = {"ADD": 0, "MUL": 1, "MAX": wrap(dt, int_bounds(dt)[0])}[op]
        step = lambda a, x: int_binary(op, dt, a, x)  # noqa: E731
    for x in items:
        acc = step(acc, x)
    return acc


def rows(bits, axes):
    """The reduced sub-spaces in row-major order, one row per output (outputs keep the axes)."""
    keep = [i for i in range(bits.ndim) if i not in axes]
    moved = np.transpose(bits, keep + list(axes))
    out_shape = tuple(1 if i in axes else bits.shape[i] for i in range(bits.ndim))
    n_out = int(np.prod([bits.shape[i] for i in keep], dtype=np.int64))
    return moved.reshape(n_out, int(np.prod([bits.shape[i] for i in axes], dtype=np.int64))), out_shape


def reduce(e, ins):
    x = ins[0]
    r, shape = rows(x.bits(), tuple(e["args"]["axes"]))
    return [reduce_fold(e["args"]["reduce_op"], e["dtype"], e["round"], [int(v) for v in row]) for row in r], shape


def fused_reduce(e, ins, fused=True):
    a, b = ins[0].bits(), ins[1].bits()
    shape = np.broadcast_shapes(a.shape, b.shape)
    ra, out_shape = rows(np.broadcast_to(a, shape), tuple(e["args"]["axes"]))
    rb, _ = rows(np.broadcast_to(b, shape), tuple(e["args"]["axes"]))
    f, mode = ieee.FORMATS[e["dtype"]], e["round"]
    out = []
    for xa, xb in zip(ra, rb):
        acc = 0
        for p, q in zip(xa, xb):
            acc = ieee.fma(f, int(p), int(q), acc, mode) if fused else ieee.add(f, acc, ieee.mul(f, int(p), int(q), mode), mode)
        out.append(acc)
    return out, out_shape


def movement(e, x):
    a, args = x.bits(), e["args"]
    op = e["op"]
    if op == "RESHAPE":
        return a.reshape(args["shape"])
    if op == "EXPAND":
        return np.broadcast_to(a, args["shape"])
    if op == "PERMUTE":
        return np.transpose(a, args["order"])
    if op == "PAD":
        return np.pad(a, args["pairs"])
    if op == "SHRINK":
        return a[tuple(slice(b, e_) for b, e_ in args["pairs"])]
    return np.flip(a, args["axes"])


def gather(e, ins):
    """GATHER by its definition, element by element: idx's size-1 axes (but `axis`) stretch; an
    index value v in [0, size) copies x's bits at that position, any other value gives zero bits."""
    x, axis = ins[0].bits(), e["args"]["axis"]
    idx = np.array([value(ins[1].dtype, v) for v in ins[1].ints()], dtype=object).reshape(ins[1].shape)
    shape = list(x.shape)
    shape[axis] = idx.shape[axis]
    idx = np.broadcast_to(idx, shape)
    out = np.zeros(shape, dtype=x.dtype)
    for p in np.ndindex(*shape):
        v = idx[p]
        if 0 <= v < x.shape[axis]:
            out[p] = x[p[:axis] + (v,) + p[axis + 1:]]
    return T(ins[0].dtype, shape, out.astype(x.dtype.newbyteorder("<")).tobytes())


def expected(e, ins):
    """The expected output tensor of a primitive vector, or None when it is not checked here."""
    op, out_dt = e["op"], e["dtype"]
    if op in NOT_CHECKED:
        return None
    if op == "GATHER":
        return gather(e, ins)
    if op in ("RESHAPE", "EXPAND", "PERMUTE", "PAD", "SHRINK", "FLIP"):
        a = movement(e, ins[0])
        return T(ins[0].dtype, a.shape, np.ascontiguousarray(a).tobytes())
    if op == "REDUCE":
        bits, shape = reduce(e, ins)
        return from_bits(out_dt, shape, bits)
    if op in ("REDUCE_MULACC", "REDUCE_ADD(MUL)"):
        bits, shape = fused_reduce(e, ins, op == "REDUCE_MULACC")
        return from_bits(out_dt, shape, bits)
    if op == "BITCAST":
        return T(e["args"]["to"], ins[0].shape, ins[0].data)
    if op == "CAST":
        to = e["args"]["to"]
        return from_bits(to, ins[0].shape, [cast(out_dt, to, e["round"], x) for x in ins[0].ints()])
    bits = elementwise(e, ins)
    res = "bool" if op in ("CMPLT", "CMPNE", "CMPEQ") else out_dt
    return from_bits(res, ins[-1].shape, bits)
