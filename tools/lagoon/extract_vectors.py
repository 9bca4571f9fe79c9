#!/usr/bin/python3
"""Extracts Lagoon's own test vectors from urbit/numerics' Hoon test files.

Usage:
  /usr/bin/python3 tools/lagoon/extract_vectors.py --git-dir /path/to/numerics/.git \
      [--rev HEAD] [--out tests/data/lagoon/vectors.jsonl]

Reads lagoon/desk/tests/lib/lagoon-*.hoon (with `git show`, so no work tree is needed) and
writes one JSON object per line: an expression (a Lagoon arm applied to literal rays, atoms and
nested arm calls), the rounding mode of the door it was called on, and the expected result the
test asserts. The test suite (tests/lagoon) runs these through the C ABI; it never reads Hoon.

How: this is a small evaluator for the subset of Hoon the test files are written in (tall runes
%- %+ %^ =/ =. ^- |. ;: :~ |=, wide calls, cells, lists, faces, casts), not a pattern matcher,
so each vector comes from the test's own literals and control flow (its tables, its `turn`
loops). Lagoon arms are *not* evaluated here (that is the code under test): a call such as
`(add:la x y)` becomes a recorded expression. Only constructors whose meaning is raw bit
packing (fill, zeros, ones, eye, iota, magic, en-ray, spac, set-item, reshape, reap) are
computed here, and only when their result is an *input* to another call or an expected value;
when a constructor is itself the call under test (test-zeros, test-eye, ...), it is recorded.

Float literals (.1 @rs, .~1 @rd, .~~1 @rh, .~~~1 @rq) are converted exactly: the decimal is
read as a Fraction and rounded once to nearest-even (Hoon's literal parsing), with subnormals,
overflow to infinity, .inf and .nan handled.

Anything outside the subset (or a kind Maroon's Lagoon layer does not implement: %unum, %cplx,
%fixp) raises Unsupported; the assertion is skipped and counted in the summary printed at the
end, so nothing is silently dropped.
"""
import argparse
import json
import re
import subprocess
import sys
from fractions import Fraction

TEST_FILES = [
    "arithmetic", "builders", "compare-reduce", "cplx", "fails", "fixp", "indexing", "int2",
    "linalg", "rounding", "unary", "unsigned", "unum",
]
SUPPORTED_KINDS = {"i754", "uint", "int2"}


class Unsupported(Exception):
    pass


# ---------------------------------------------------------------- atoms and literals

def cord(s):
    return int.from_bytes(s.encode(), "little")


def uncord(a):
    n = (a.bit_length() + 7) // 8
    return a.to_bytes(n, "little").decode()


FLOAT_FORMATS = {0: (8, 23), 1: (11, 52), 2: (5, 10), 3: (15, 112)}  # tildes -> (ebits, mbits)
FLOAT_BLOQ = {0: 5, 1: 6, 2: 4, 3: 7}


def round_to_float(value, ebits, mbits):
    """Rounds an exact rational to the IEEE format, nearest-even; returns the bits."""
    sign = 0
    if value < 0:
        sign, value = 1, -value
    bias = (1 << (ebits - 1)) - 1
    width = 1 + ebits + mbits
    if value == 0:
        return sign << (width - 1)
    emin = 1 - bias
    # exponent e with 2^e <= value < 2^(e+1)
    e = value.numerator.bit_length() - value.denominator.bit_length()
    if Fraction(2) ** e > value:
        e -= 1
    q = max(e, emin) - mbits  # the exponent of the last kept bit
    scaled = value / (Fraction(2) ** q)
    n = scaled.numerator // scaled.denominator
    rem = scaled - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1):
        n += 1
    if n >= (1 << (mbits + 1)):  # carried into the next binade
        n >>= 1
        q += 1
    if q + mbits > bias:  # overflow: nearest gives infinity
        return (sign << (width - 1)) | (((1 << ebits) - 1) << mbits)
    if n < (1 << mbits):  # subnormal (or rounded to zero)
        return (sign << (width - 1)) | n
    exp_field = q + mbits + bias
    return (sign << (width - 1)) | (exp_field << mbits) | (n - (1 << mbits))


FLOAT_RE = re.compile(r"^\.(~{0,3})(-?)(inf|nan|\d+(?:\.\d+)?(?:e-?\d+)?)$")


def parse_float(tok):
    m = FLOAT_RE.match(tok)
    if not m:
        return None
    tildes, neg, body = len(m.group(1)), m.group(2) == "-", m.group(3)
    ebits, mbits = FLOAT_FORMATS[tildes]
    width = 1 + ebits + mbits
    if body == "nan":
        return (((1 << ebits) - 1) << mbits) | (1 << (mbits - 1))
    if body == "inf":
        return ((1 if neg else 0) << (width - 1)) | (((1 << ebits) - 1) << mbits)
    mant, _, exp = body.partition("e")
    value = Fraction(mant)
    if exp:
        value *= Fraction(10) ** int(exp)
    if neg:
        value = -value
    bits = round_to_float(value, ebits, mbits)
    if neg and value == 0:
        bits |= 1 << (width - 1)
    return bits


def parse_atom(tok):
    if re.fullmatch(r"0x[0-9a-f]+(\.[0-9a-f]{4})*", tok):
        return int(tok[2:].replace(".", ""), 16)
    if re.fullmatch(r"\d{1,3}(\.\d{3})*", tok):
        return int(tok.replace(".", ""))
    return None


# ---------------------------------------------------------------- nouns, rays, calls

class Ray:
    def __init__(self, meta, data):
        self.meta, self.data = meta, data  # meta: (shape list, bloq, kind str, tail)


class Call:
    """A recorded Lagoon arm application (the thing under test)."""

    def __init__(self, arm, rnd, noun):
        self.arm, self.rnd, self.noun = arm, rnd, noun


class Door:
    def __init__(self, rnd):
        self.rnd = rnd


class Gate:
    def __init__(self, sample, body, env, ev):
        self.sample, self.body, self.env, self.ev = sample, body, env, ev

    def __call__(self, *args):
        noun = args[0] if len(args) == 1 else cell(*args)
        env = dict(self.env)
        bind_sample(self.sample, noun, env, self.ev)
        return self.ev.eval(self.body, env)


class Faced:
    """A tuple typed by a +$ mold with faces, so `zero.r` works."""

    def __init__(self, names, values):
        self.fields = dict(zip(names, values))


def cell(*xs):
    out = xs[-1]
    for x in reversed(xs[:-1]):
        out = (x, out)
    return out


def hlist(noun):
    out = []
    while noun != 0:
        if not isinstance(noun, tuple):
            raise Unsupported("not a list")
        out.append(noun[0])
        noun = noun[1]
    return out


def to_meta(noun):
    if isinstance(noun, Ray):
        raise Unsupported("ray where meta expected")
    shape, rest = noun
    bloq, rest = rest
    kind, tail = rest
    kind = uncord(kind) if isinstance(kind, int) else kind
    if tail != 0:
        raise Unsupported("meta tail")
    return ([int(d) for d in hlist(shape)], int(bloq), kind, 0)


def to_ray(v, ev):
    v = force(v, ev)
    if isinstance(v, Ray):
        return v
    if isinstance(v, tuple):
        return Ray(to_meta(v[0]), v[1])
    raise Unsupported("not a ray")


def destructure(noun, n):
    parts = []
    for _ in range(n - 1):
        if isinstance(noun, Ray) or not isinstance(noun, tuple):
            raise Unsupported("sample shape")
        parts.append(noun[0])
        noun = noun[1]
    parts.append(noun)
    return parts


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


# Constructors computed here (raw bit packing only), as Lagoon defines them.
ONE = {("i754", 4): 0x3C00, ("i754", 5): 0x3F800000, ("i754", 6): 0x3FF0000000000000,
       ("i754", 7): 0x3FFF << 112, ("uint", None): 1, ("int2", None): 1}


def kind_one(meta):
    kind, bloq = meta[2], meta[1]
    if kind == "i754":
        return ONE[(kind, bloq)]
    if kind in ("uint", "int2"):
        return 1
    raise Unsupported("kind " + kind)


def mk_zeros(meta):
    return Ray(meta, 1 << ((1 << meta[1]) * numel(meta[0])))


def mk_fill(meta, x):
    w = 1 << meta[1]
    x &= (1 << w) - 1
    d = 0
    for i in range(numel(meta[0])):
        d |= x << (i * w)
    return Ray(meta, d | (1 << (w * numel(meta[0]))))


def item_offset(shape, dex):
    off, cof = 0, 1
    sap, dx = list(reversed(shape)), list(reversed(dex))
    for i, s in enumerate(sap):
        if i >= len(dx) or not dx[i] < s:
            raise Unsupported("index out of range in a constructor")
        off += dx[i] * cof
        cof *= s
    return off


def get_dim(shape, i):
    res = []
    for s in reversed(shape):
        res.append(i % s)
        i //= s
    return list(reversed(res))


def mk_enray(meta, nd):
    w = 1 << meta[1]
    r = mk_zeros(meta)
    for i in range(numel(meta[0])):
        # ++get-item-baum: descend by the index, stopping at the first atom it reaches.
        a = nd
        for d in get_dim(meta[0], i):
            a = hlist(a)[d]
            if isinstance(a, int):
                break
        if not isinstance(a, int):
            raise Unsupported("baum deeper than the shape")
        r.data |= a << (i * w)
    return r


def mk_set_item(r, dex, val):
    w = 1 << r.meta[1]
    off = item_offset(r.meta[0], dex) * w
    mask = ((1 << w) - 1) << off
    return Ray(r.meta, (r.data & ~mask) | ((val & ((1 << w) - 1)) << off))


def builder(arm, noun, ev):
    """Evaluates a constructor; None if `arm` is not one."""
    if arm == "zeros":
        return mk_zeros(to_meta(noun))
    if arm == "fill":
        m, x = destructure(noun, 2)
        return mk_fill(to_meta(m), x)
    if arm == "ones":
        m = to_meta(noun)
        return mk_fill(m, kind_one(m))
    if arm == "eye":
        m = to_meta(noun)
        if len(m[0]) != 2 or m[0][0] != m[0][1]:
            raise Unsupported("eye of a non-square shape")
        n = m[0][0]
        r = mk_zeros(([n, n], m[1], m[2], 0))
        for i in range(n):
            r = mk_set_item(r, [i, i], kind_one(m))
        return r
    if arm == "iota":
        m = to_meta(noun)
        if len(m[0]) != 1 or m[0][0] == 0:
            raise Unsupported("iota")
        meta = (m[0], m[1], "uint", 0)
        return mk_enray(meta, cell(*range(m[0][0]), 0))
    if arm == "magic":
        m = to_meta(noun)
        n = numel(m[0])
        r = mk_enray(([n], m[1], "uint", 0), cell(*range(n), 0))
        return Ray((m[0], m[1], "uint", 0), r.data)
    if arm == "en-ray":
        m, nd = destructure(noun, 2)
        return mk_enray(to_meta(m), nd)
    if arm == "spac":
        r = to_ray(noun, ev)
        return Ray(r.meta, r.data | mk_zeros(r.meta).data)
    if arm == "set-item":
        r, dex, val = destructure(noun, 3)
        return mk_set_item(to_ray(r, ev), [int(x) for x in hlist(dex)], val)
    return None


def force(v, ev):
    """Evaluates constructor calls (inputs and expected values); other calls stay recorded."""
    if isinstance(v, Call):
        r = builder(v.arm, force_noun(v.noun, ev), ev)
        if r is None:
            raise Unsupported("value of a non-constructor call " + v.arm)
        return r
    return v


def force_noun(noun, ev):
    if isinstance(noun, Call):
        return force(noun, ev)
    if isinstance(noun, tuple):
        return (force_noun(noun[0], ev), force_noun(noun[1], ev))
    return noun


# ---------------------------------------------------------------- serialisation

def ser_meta(m):
    return {"shape": m[0], "bloq": m[1], "kind": m[2]}


ARM_SAMPLES = {  # how each arm's sample noun splits, so vectors carry typed arguments
    **{a: ["ray", "ray"] for a in ["add", "sub", "mul", "div", "mod", "gth", "gte", "lth", "lte",
                                    "equ", "neq", "dot", "mmul"]},
    **{a + "-scalar": ["ray", "atom"] for a in ["add", "sub", "mul", "div", "mod"]},
    **{a: ["ray"] for a in ["check", "abs", "cumsum", "max", "min", "argmax", "argmin", "transpose",
                            "diag", "trace", "ravel", "prod", "any", "all", "spac", "head"]},
    **{a: ["meta"] for a in ["zeros", "ones", "eye", "iota", "magic"]},
    "fill": ["meta", "atom"], "en-ray": ["meta", "baum"],
    "linspace": ["meta", "pair", "atom"], "range": ["meta", "pair", "atom"],
    "get-item": ["ray", "list"], "set-item": ["ray", "list", "atom"],
    "get-row": ["ray", "list"], "set-row": ["ray", "list", "ray"],
    "pow-n": ["ray", "atom"], "reshape": ["ray", "list"],
}


def ser_arg(typ, v, ev):
    if typ == "ray":
        if isinstance(v, Call):
            # A constructor that Lagoon itself rejects (ones at bloq 3, ...) stays a call, so
            # the test runs it through the C ABI and expects the error there.
            try:
                built = builder(v.arm, force_noun(v.noun, ev), ev)
            except (KeyError, Unsupported):
                built = None
            if built is None:
                return {"call": ser_call(v, ev)}
        r = to_ray(v, ev)
        if r.meta[2] not in SUPPORTED_KINDS:
            raise Unsupported("kind " + r.meta[2])
        return {"ray": dict(ser_meta(r.meta), data=hex(r.data))}
    v = force_noun(v, ev)
    if typ == "meta":
        m = to_meta(v)
        if m[2] not in SUPPORTED_KINDS:
            raise Unsupported("kind " + m[2])
        return {"meta": ser_meta(m)}
    if typ == "atom":
        return {"atom": hex(v)}
    if typ == "pair":
        a, b = destructure(v, 2)
        return {"pair": [hex(a), hex(b)]}
    if typ == "list":
        return {"list": [int(x) for x in hlist(v)]}
    raise Unsupported("argument type " + typ)


def ser_call(c, ev):
    if c.arm not in ARM_SAMPLES:
        raise Unsupported("arm " + c.arm)
    spec = ARM_SAMPLES[c.arm]
    parts = destructure(c.noun, len(spec))
    return {"arm": c.arm, "rnd": c.rnd, "args": [ser_arg(t, p, ev) for t, p in zip(spec, parts)]}


def ser_expect(v, ev):
    v = force(v, ev)
    if isinstance(v, Ray) or (isinstance(v, tuple) and not isinstance(v[1], tuple)):
        r = to_ray(v, ev)
        return {"ray": dict(ser_meta(r.meta), data=hex(r.data))}
    if isinstance(v, int):
        return {"atom": hex(v)}
    raise Unsupported("expected value")


# ---------------------------------------------------------------- tokenizer and parser

RUNES = {"!>": 1, "%-": 2, "%+": 3, "%^": 4, "=/": 3, "=.": 3, "^-": 2, "|.": 1, "?>": 2, "|=": 2,
         ";:": -1, ":~": -1}


def strip_comments(text):
    return "\n".join(re.sub(r"(^|\s)::.*$", "", line) for line in text.split("\n"))


def words(text):
    """Splits tall-form text at gaps (2+ spaces or a newline) outside brackets."""
    out, cur, depth, i = [], [], 0, 0
    while i < len(text):
        ch = text[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if depth == 0 and ch in " \n":
            j = i
            while j < len(text) and text[j] in " \n":
                j += 1
            gap = text[i:j]
            if "\n" in gap or len(gap) >= 2 or j >= len(text):
                if cur:
                    out.append("".join(cur))
                cur = []
                i = j
                continue
        cur.append(ch)
        i += 1
    if cur:
        out.append("".join(cur))
    return out


def parse_tall(ws, i):
    w = ws[i]
    if w in RUNES:
        n = RUNES[w]
        kids, i = [], i + 1
        if n == -1:
            while ws[i] != "==":
                k, i = parse_tall(ws, i)
                kids.append(k)
            return (w, kids), i + 1
        for _ in range(n):
            if w == "|=" and not kids:  # the sample is a wide form
                kids.append(("wide", ws[i]))
                i += 1
                continue
            k, i = parse_tall(ws, i)
            kids.append(k)
        return (w, kids), i
    return ("wide", w), i + 1


def split_wide(s):
    """Splits a wide sequence at single spaces outside brackets."""
    out, depth, cur = [], 0, []
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == " " and depth == 0:
            if cur:
                out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if cur:
        out.append("".join(cur))
    return out


def matching(s, i):
    depth = 0
    for j in range(i, len(s)):
        if s[j] in "([{":
            depth += 1
        elif s[j] in ")]}":
            depth -= 1
            if depth == 0:
                return j
    raise Unsupported("unbalanced " + s)


def bind_sample(sample, noun, env, ev):
    s = sample.strip()
    if s.startswith("[") and s.endswith("]"):
        names = split_wide(s[1:-1])
        parts = destructure(noun, len(names))
        for nm, v in zip(names, parts):
            bind_one(nm, v, env, ev)
    else:
        bind_one(s, noun, env, ev)


def bind_one(spec, v, env, ev):
    name, _, typ = spec.partition("=")
    if typ in ev.molds and isinstance(v, tuple):
        names = ev.molds[typ]
        v = Faced(names, destructure(v, len(names)))
    env[name] = v


class Evaluator:
    def __init__(self, text):
        self.arms, self.molds = {}, {}
        text = strip_comments(text)
        for m in re.finditer(r"^\+\$\s+(\S+)\s+\[([^\]]*)\]", text, re.M):
            self.molds[m.group(1)] = [f.split("=")[0] for f in m.group(2).split()]
        parts = re.split(r"^\+\+\s+(\S+)", text, flags=re.M)
        for k in range(1, len(parts), 2):
            body = re.split(r"^(--|\+\$)", parts[k + 1], flags=re.M)[0]
            self.arms[parts[k]] = body

    def arm_value(self, name):
        ws = words(self.arms[name])
        ast, i = parse_tall(ws, 0)
        return self.eval(ast, {})

    # ---- evaluation
    def eval(self, ast, env):
        kind, x = ast
        if kind == "wide":
            return self.wide(x, env)
        rune, kids = kind, x
        if rune == "%-":
            return self.apply(self.eval(kids[0], env), [self.eval(kids[1], env)])
        if rune == "%+":
            return self.apply(self.eval(kids[0], env), [self.eval(k, env) for k in kids[1:]])
        if rune == "%^":
            return self.apply(self.eval(kids[0], env), [self.eval(k, env) for k in kids[1:]])
        if rune in ("=/", "=."):
            name = kids[0][1].split("=")[0]
            env = dict(env)
            if "." in name:  # =.  bloq.meta.mar  6: a new meta field on a ray, data unchanged
                field, _, rest = name.partition(".")
                if rest.partition(".")[0] != "meta" or field not in ("shape", "bloq"):
                    raise Unsupported("=. into a wing")
                base = rest.partition(".")[2]
                r = to_ray(env[base], self)
                v = self.eval(kids[1], env)
                shape, bloq, kind, tail = r.meta
                if field == "shape":
                    shape = [int(d) for d in hlist(v)]
                else:
                    bloq = int(v)
                env[base] = Ray((shape, bloq, kind, tail), r.data)
                return self.eval(kids[2], env)
            env[name] = self.eval(kids[1], env)
            return self.eval(kids[2], env)
        if rune == "?>":
            # ?>  (check:la mar)  ~ inside expect-fail: the assertion is what fails, so the
            # recorded call is the condition (an arm returning a loobean).
            cond = self.eval(kids[0], env)
            if not (isinstance(cond, Call) and cond.arm == "check"):
                raise Unsupported("?> on something other than +check")
            return cond
        if rune == "^-":
            return self.eval(kids[1], env)
        if rune == "!>":
            return self.eval(kids[0], env)
        if rune == "|.":
            return ("thunk", kids[0], env)
        if rune == "|=":
            return Gate(kids[0][1], kids[1], env, self)
        if rune == ";:":
            f = self.eval(kids[0], env)
            return self.apply(f, [self.eval(k, env) for k in kids[1:]])
        if rune == ":~":
            return cell(*[self.eval(k, env) for k in kids], 0)
        raise Unsupported("rune " + rune)

    def apply(self, f, args):
        if callable(f):
            return f(*args)
        raise Unsupported("apply of a non-gate " + (f"call to {f.arm}" if isinstance(f, Call) else type(f).__name__))

    def wide(self, s, env):
        s = s.strip()
        if s.startswith("`"):  # `type`value: a cast
            j = s.index("`", 1)
            return self.wide(s[j + 1:], env)
        if s.startswith("!>(") or s.startswith("|.("):
            j = matching(s, 2)
            inner = s[3:j]
            if s.startswith("!>"):
                return self.wide(inner, env)
            return ("thunk", ("wide", inner), env)
        if s.startswith("^-(") and s.endswith(")"):
            return self.wide(split_wide(s[3:-1])[1], env)
        if s.startswith("~[") and s.endswith("]") and matching(s, 1) == len(s) - 1:
            return cell(*[self.wide(p, env) for p in split_wide(s[2:-1])], 0)
        if s.startswith("[") and matching(s, 0) == len(s) - 1:
            return cell(*[self.wide(p, env) for p in split_wide(s[1:-1])])
        if s.startswith("(") and matching(s, 0) == len(s) - 1:
            parts = split_wide(s[1:-1])
            f = self.wide(parts[0], env)
            return self.apply(f, [self.wide(p, env) for p in parts[1:]])
        if s == "~":
            return 0
        if s in ("%.y", "&"):
            return 0
        if s in ("%.n", "|"):
            return 1
        if s.startswith("%") and re.fullmatch(r"%[a-z0-9-]+", s):
            return cord(s[1:])
        f = parse_float(s)
        if f is not None:
            return f
        a = parse_atom(s)
        if a is not None:
            return a
        m = re.fullmatch(r"([a-z][a-z0-9-]*)=(.+)", s, re.S)  # a face
        if m and not s.startswith("=") and "(" not in m.group(1):
            return self.wide(m.group(2), env)
        m = re.fullmatch(r"([a-z][a-z0-9-]*):(la|\(lake [^)]*\))", s)
        if m:
            door = Door("z") if m.group(2) == "la" else self.wide(m.group(2), env)
            arm = m.group(1)
            return lambda *args: Call(arm, door.rnd, args[0] if len(args) == 1 else cell(*args))
        return self.name(s, env)

    def name(self, s, env):
        if "." in s:  # a wing: field.value
            field, _, base = s.partition(".")
            v = self.name(base, env)
            if isinstance(v, Faced) and field in v.fields:
                return v.fields[field]
            raise Unsupported("wing " + s)
        if s in env:
            return env[s]
        if s in BUILTINS:
            return BUILTINS[s](self)
        if s in self.arms and s not in ("is-equal", "is-close"):
            return self.arm_value(s)
        raise Unsupported("name " + s)


# ---------------------------------------------------------------- test builtins

class Recorder:
    def __init__(self):
        self.vectors, self.skipped = [], []
        self.ctx = None


REC = Recorder()


def record(expected, actual, ev):
    """One assertion: `actual` must be a recorded Call."""
    try:
        if not isinstance(actual, Call):
            raise Unsupported("assertion on a value that is not an arm call")
        vec = {"expr": ser_call(actual, ev)}
        vec["expect"] = {"fail": True} if expected == "fail" else ser_expect(expected, ev)
        REC.vectors.append(dict(REC.ctx, **vec))
    except (Unsupported, ValueError, IndexError, TypeError, KeyError) as e:
        REC.skipped.append(dict(REC.ctx, reason=str(e)))
    return []


def b_is_equal(ev):
    return lambda a, b: record(a, b, ev)


def b_expect_fail(ev):
    def f(thunk):
        try:
            _, body, env = thunk
            actual = ev.eval(body, env)
        except (Unsupported, ValueError, IndexError, TypeError, KeyError) as e:
            REC.skipped.append(dict(REC.ctx, reason=str(e)))
            return []
        return record("fail", actual, ev)
    return f


def b_weld(ev):
    return lambda *xs: [v for x in xs for v in (x or [])]


def b_zing(ev):
    return lambda xs: [v for x in hlist(xs) for v in (x or [])] if not isinstance(xs, list) else \
        [v for x in xs for v in (x or [])]


def b_turn(ev):
    def f(lst, gate):
        out = [gate(x) for x in hlist(lst)]
        return cell(*out, 0) if out else 0
    return f


def b_reap(ev):
    return lambda n, x: cell(*([x] * n), 0) if n else 0


def b_hed(ev):
    # ++hed in compare-reduce: the head scalar of a reduced ray's ravel.
    return lambda r: Call("head", "z", r)


def b_lake(ev):
    return lambda mode: Door(uncord(mode))


BUILTINS = {"is-equal": b_is_equal, "expect-eq": b_is_equal, "expect-fail": b_expect_fail,
            "weld": b_weld, "zing": b_zing, "turn": b_turn, "reap": b_reap, "hed": b_hed,
            "lake": b_lake}


# ---------------------------------------------------------------- driver

def summarize_key(vec):
    expr = vec["expr"]
    while expr["arm"] in ("head", "get-item") and "call" in expr["args"][0]:
        expr = expr["args"][0]["call"]
    arm = expr["arm"]
    kind = "?"
    for a in expr["args"]:
        for key in ("ray", "meta"):
            if key in a:
                kind = f'{a[key]["kind"]}/{a[key]["bloq"]}'
                break
        if kind != "?":
            break
        if "call" in a:
            inner = a["call"]["args"][0]
            for key in ("ray", "meta"):
                if key in inner:
                    kind = f'{inner[key]["kind"]}/{inner[key]["bloq"]}'
        if kind != "?":
            break
    return arm, kind


def self_test():
    """Checks the literal parser: binary64 against Python's float() (correctly rounded), and
    for every width that the chosen value is the nearest (ties to even) among its neighbours."""
    import random
    import struct
    rng = random.Random(1)
    for _ in range(3000):
        digits = str(rng.randrange(1, 10 ** rng.randrange(1, 20)))
        point = rng.randrange(0, len(digits))
        text = digits[:point] + ("." + digits[point:] if point < len(digits) else "")
        exp = rng.randrange(-330, 310)
        lit = f".~{text.lstrip('.') if not text.startswith('.') else '0' + text}e{exp}"
        dec = lit[2:]
        want = struct.unpack("<Q", struct.pack("<d", float(dec)))[0]
        assert parse_float(lit) == want, (lit, hex(parse_float(lit)), hex(want))
    for tildes, (ebits, mbits) in FLOAT_FORMATS.items():
        for _ in range(500):
            x = Fraction(rng.randrange(1, 10 ** 12), 10 ** rng.randrange(0, 15))
            bits = round_to_float(x, ebits, mbits)
            bias = (1 << (ebits - 1)) - 1

            def val(b):
                e, m = b >> mbits, b & ((1 << mbits) - 1)
                if e == 0:
                    return Fraction(m) * Fraction(2) ** (1 - bias - mbits)
                return Fraction(m + (1 << mbits)) * Fraction(2) ** (e - bias - mbits)
            if bits >> mbits == (1 << ebits) - 1:
                continue  # overflowed to infinity
            v, lo, hi = val(bits), val(max(bits - 1, 0)), val(bits + 1)
            assert abs(x - v) <= abs(x - lo) and abs(x - v) <= abs(x - hi), (x, tildes)
            if abs(x - v) in (abs(x - lo), abs(x - hi)) and x != v:
                assert bits % 2 == 0, (x, tildes)  # a tie goes to the even neighbour
    # Known encodings (IEEE 754): 0.1 in each width, 1.0, -0.0, 2^-24 (binary16's least).
    assert parse_float(".1") == 0x3F800000 and parse_float(".0.1") == 0x3DCCCCCD
    assert parse_float(".~~0.1") == 0x2E66 and parse_float(".~0.1") == 0x3FB999999999999A
    assert parse_float(".-0.0") == 0x80000000 and parse_float(".~~0.000000059604644775390625") == 1
    assert parse_float(".~~~1") == 0x3FFF << 112
    print("extract_vectors.py self-test: ok")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--self-test", action="store_true", help="check the literal parser and exit")
    ap.add_argument("--git-dir")
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--out", default="tests/data/lagoon/vectors.jsonl")
    args = ap.parse_args()
    if args.self_test:
        self_test()
        return
    if not args.git_dir:
        ap.error("--git-dir is required")
    sys.setrecursionlimit(10000)
    rev = subprocess.run(["git", "--git-dir", args.git_dir, "rev-parse", args.rev],
                         capture_output=True, text=True, check=True).stdout.strip()
    for name in TEST_FILES:
        path = f"lagoon/desk/tests/lib/lagoon-{name}.hoon"
        text = subprocess.run(["git", "--git-dir", args.git_dir, "show", f"{rev}:{path}"],
                              capture_output=True, text=True, check=True).stdout
        ev = Evaluator(text)
        for arm in ev.arms:
            if not arm.startswith("test-"):
                continue
            REC.ctx = {"file": name, "test": arm}
            try:
                ev.arm_value(arm)
            except (Unsupported, ValueError, IndexError, TypeError, KeyError) as e:
                REC.skipped.append(dict(REC.ctx, reason=str(e)))
    with open(args.out, "w") as f:
        f.write(json.dumps({"source": "urbit/numerics", "rev": rev,
                            "generator": "tools/lagoon/extract_vectors.py"}) + "\n")
        for v in REC.vectors:
            f.write(json.dumps(v, separators=(",", ":")) + "\n")
    counts = {}
    for v in REC.vectors:
        k = summarize_key(v)
        counts[k] = counts.get(k, 0) + 1
    print(f"{len(REC.vectors)} vectors from {rev[:7]} -> {args.out}")
    for (arm, kind), n in sorted(counts.items()):
        print(f"  {arm:12s} {kind:8s} {n}")
    reasons = {}
    for s in REC.skipped:
        key = (s["file"], s["reason"])
        reasons[key] = reasons.get(key, 0) + 1
    print(f"{len(REC.skipped)} assertions skipped:")
    for (fname, reason), n in sorted(reasons.items()):
        print(f"  {fname:15s} {n:3d}  {reason}")


if __name__ == "__main__":
    main()
