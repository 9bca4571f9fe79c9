"""One table of Tensor programs, run three ways: by Maroon (the tests), by PyTorch (live, in
test_vs_torch.py) and by tinygrad (tools/tinygrad/gen_python_ref.py stores its results in
tests/data/tinygrad/python_ref.npz, checked by test_vs_tinygrad.py).

A case is a program `fn(T, *xs)` written once against tinygrad's API, where T is the Tensor class
(maroon's or tinygrad's) and xs the inputs; `torch` is the same program in PyTorch (None: torch
has no equivalent). Inputs are made by numpy from fixed seeds, so every runner sees the same
values. Bounds are in ULPs (see ulp_error); 0 means bit-exact.
"""
import numpy as np


class Case:
    def __init__(self, name, inputs, fn, torch=None, ulp=0, grad_ulp=None, grad=True, tinygrad=True, tg_ulp=None,
                 tg_grad_ulp=None):
        self.name, self.inputs, self.fn, self.torch = name, inputs, fn, torch
        self.ulp = ulp                       # forward bound against PyTorch
        self.grad_ulp = ulp if grad_ulp is None else grad_ulp
        self.grad = grad                     # also compare d(sum(out))/d(float inputs)
        self.tinygrad = tinygrad             # included in the stored tinygrad results
        self.tg_ulp = self.ulp if tg_ulp is None else tg_ulp
        self.tg_grad_ulp = self.grad_ulp if tg_grad_ulp is None else tg_grad_ulp

    def arrays(self):
        """The inputs as numpy arrays, from a seed derived from the case's name."""
        rng = np.random.default_rng(sum(ord(c) * 131 ** i for i, c in enumerate(self.name)) % 2**32)
        out = []
        for spec in self.inputs:
            if isinstance(spec, np.ndarray):
                out.append(spec)
            elif spec[0] == "f":          # ("f", shape, low, high)
                out.append(rng.uniform(spec[2], spec[3], spec[1]).astype(np.float32))
            elif spec[0] == "i":          # ("i", shape, low, high), int32
                out.append(rng.integers(spec[2], spec[3], spec[1]).astype(np.int32))
            elif spec[0] == "b":          # ("b", shape)
                out.append(rng.integers(0, 2, spec[1]).astype(np.bool_))
            else:
                raise ValueError(spec)
        return out


def f(shape, low=-2.0, high=2.0): return ("f", shape, low, high)
def i(shape, low=-5, high=5): return ("i", shape, low, high)
def b(shape): return ("b", shape)


SPECIAL = np.array([0.0, -0.0, 1.0, -1.5, np.inf, -np.inf, np.nan, 3.0e38, 1e-40, 2.5], dtype=np.float32)
S = (3, 7)
CASES = []


def case(*args, **kw): CASES.append(Case(*args, **kw))


def same(method, *args, **kw):
    """A method with the same name and arguments in tinygrad and torch."""
    return lambda T, x, *r: getattr(x, method)(*r, *args, **kw)


def dropout_program(T, seed):
    """Dropout under Context(TRAINING=1), from the runner's own package (maroon or tinygrad)."""
    T.manual_seed(seed)
    with __import__(T.__module__.split(".")[0]).Context(TRAINING=1):
        return T.ones(3, 8).dropout(0.5)


def F(name, *args, **kw):
    return lambda torch, *xs: getattr(torch.nn.functional, name)(*xs, *args, **kw)


# ---- unary float ----
for name, lo, hi, ulp in [("exp", -3, 3, 1), ("exp2", -3, 3, 1), ("log", 0.1, 4, 1), ("log2", 0.1, 4, 1), ("log10", 0.1, 4, 2),
                          ("sqrt", 0.1, 4, 0), ("rsqrt", 0.1, 4, 1), ("sin", -4, 4, 1), ("cos", -4, 4, 2), ("tan", -1.2, 1.2, 3),
                          ("reciprocal", 0.5, 2, 0), ("sigmoid", -4, 4, 2), ("tanh", -3, 3, 4), ("relu", -2, 2, 0),
                          ("abs", -2, 2, 0), ("neg", -2, 2, 0), ("square", -2, 2, 0), ("sign", -2, 2, 0), ("floor", -3, 3, 0),
                          ("ceil", -3, 3, 0), ("round", -3, 3, 0), ("trunc", -3, 3, 0), ("sinh", -2, 2, 4), ("cosh", -2, 2, 4),
                          ("asinh", -2, 2, 4), ("acosh", 1.1, 3, 4), ("atanh", -0.9, 0.9, 4), ("asin", -0.9, 0.9, 4),
                          ("acos", -0.9, 0.9, 4), ("atan", -3, 3, 4)]:
    case(name, [f(S, lo, hi)], same(name), torch=same(name), ulp=ulp,
         grad=name not in ("floor", "ceil", "round", "trunc", "sign"))
case("erf", [f(S, -2, 2)], same("erf"), torch=same("erf"), ulp=1e3)        # tinygrad's erf is a 1.5e-7 polynomial
case("relu6", [f(S, -8, 8)], same("relu6"), torch=F("relu6"))
case("logsigmoid", [f(S, -4, 4)], same("logsigmoid"), torch=F("logsigmoid"), ulp=4)
case("softsign", [f(S)], same("softsign"), torch=F("softsign"), ulp=1)
case("silu", [f(S, -4, 4)], same("silu"), torch=F("silu"), ulp=2)
case("swish", [f(S, -4, 4)], same("swish"), torch=F("silu"), ulp=2)
case("hardswish", [f(S, -5, 5)], same("hardswish"), torch=F("hardswish"), ulp=1)
case("mish", [f(S, -4, 4)], same("mish"), torch=F("mish"), ulp=8)
case("quick_gelu", [f(S, -4, 4)], same("quick_gelu"), torch=lambda t, x: x * t.sigmoid(x * 1.702), ulp=4)
case("gelu", [f(S, -4, 4)], same("gelu"), torch=F("gelu", approximate="tanh"), ulp=16)
case("elu", [f(S, -4, 4)], same("elu"), torch=F("elu"), ulp=4)
case("elu_alpha", [f(S, -4, 4)], same("elu", 0.5), torch=F("elu", 0.5), ulp=4)
case("celu", [f(S, -4, 4)], same("celu", 0.7), torch=F("celu", 0.7), ulp=4)
case("selu", [f(S, -4, 4)], same("selu"), torch=F("selu"), ulp=64)           # tinygrad rounds alpha, gamma to 6 digits
case("leaky_relu", [f(S)], same("leaky_relu", 0.2), torch=F("leaky_relu", 0.2))
case("hardsigmoid", [f(S, -5, 5)], same("hardsigmoid"), torch=F("hardsigmoid"), ulp=2)
case("hardtanh", [f(S)], same("hardtanh", -0.5, 1.5), torch=F("hardtanh", -0.5, 1.5))
case("softplus", [f(S, -4, 4)], same("softplus"), torch=F("softplus"), ulp=4)
case("softplus_beta", [f(S, -4, 4)], same("softplus", 2.0), torch=F("softplus", 2.0), ulp=4)
case("isnan", [SPECIAL], same("isnan"), torch=same("isnan"), grad=False)
case("isinf", [SPECIAL], same("isinf"), torch=same("isinf"), grad=False)
case("isinf_pos", [SPECIAL], lambda T, x: x.isinf(detect_negative=False), torch=lambda t, x: t.isposinf(x), grad=False)
case("isfinite", [SPECIAL], same("isfinite"), torch=same("isfinite"), grad=False)
case("logical_not", [b(S)], same("logical_not"), torch=same("logical_not"), grad=False)
case("bitwise_not", [i(S, -100, 100)], same("bitwise_not"), torch=same("bitwise_not"), grad=False)
case("invert_op", [i(S, -100, 100)], lambda T, x: ~x, torch=lambda t, x: ~x, grad=False)

# ---- binary and operators ----
B2 = [f(S), f(S, 0.5, 2)]
case("add", B2, lambda T, x, y: x + y, torch=lambda t, x, y: x + y)
case("sub", B2, lambda T, x, y: x - y, torch=lambda t, x, y: x - y)
case("mul", B2, lambda T, x, y: x * y, torch=lambda t, x, y: x * y)
case("div", B2, lambda T, x, y: x / y, torch=lambda t, x, y: x / y, ulp=1)    # a * reciprocal(b), tinygrad's recipe
case("add_scalar", [f(S)], lambda T, x: x + 1.5, torch=lambda t, x: x + 1.5)
case("rsub_scalar", [f(S)], lambda T, x: 2 - x, torch=lambda t, x: 2 - x)
case("rmul_scalar", [f(S)], lambda T, x: 3 * x, torch=lambda t, x: 3 * x)
case("rdiv_scalar", [f(S, 0.5, 2)], lambda T, x: 1 / x, torch=lambda t, x: 1 / x)
case("broadcast_add", [f((3, 1)), f((1, 4))], lambda T, x, y: x + y, torch=lambda t, x, y: x + y)
case("pow", [f(S, 0.5, 2), f(S)], lambda T, x, y: x ** y, torch=lambda t, x, y: x ** y, ulp=1, grad_ulp=4)
case("pow_scalar", [f(S, 0.5, 2)], lambda T, x: x ** 3, torch=lambda t, x: x ** 3, ulp=1, grad_ulp=4, tg_ulp=2)
case("rpow", [f(S)], lambda T, x: 2 ** x, torch=lambda t, x: 2 ** x, ulp=1, grad_ulp=4)
case("maximum", B2, lambda T, x, y: x.maximum(y), torch=lambda t, x, y: t.maximum(x, y))
case("minimum", B2, lambda T, x, y: x.minimum(y), torch=lambda t, x, y: t.minimum(x, y))
case("maximum_scalar", [f(S)], lambda T, x: x.maximum(0.5), torch=lambda t, x: t.clamp(x, min=0.5))
case("mod_float", [f(S, -4, 4), f(S, 0.5, 2)], lambda T, x, y: x % y, torch=lambda t, x, y: t.remainder(x, y), ulp=2, grad=False)
case("fmod_float", [f(S, -4, 4), f(S, 0.5, 2)], lambda T, x, y: x.fmod(y), torch=lambda t, x, y: t.fmod(x, y), ulp=2, grad=False)
case("mod_int", [i(S, -20, 20), i(S, 1, 6)], lambda T, x, y: x % y, torch=lambda t, x, y: t.remainder(x, y), grad=False)
case("fmod_int", [i(S, -20, 20), i(S, 1, 6)], lambda T, x, y: x.fmod(y), torch=lambda t, x, y: t.fmod(x, y), grad=False)
case("floordiv_int", [i(S, -20, 20), i(S, 1, 6)], lambda T, x, y: x // y, torch=lambda t, x, y: t.div(x, y, rounding_mode="floor"),
     grad=False)
case("div_trunc_int", [i(S, -20, 20), i(S, 1, 6)], lambda T, x, y: x.div(y, rounding_mode="trunc"),
     torch=lambda t, x, y: t.div(x, y, rounding_mode="trunc"), grad=False)
case("int_mul_wraps", [i(S, -100, 100)], lambda T, x: x.cast("int8") * 300, torch=lambda t, x: x.to(t.int8) * 44, grad=False)
case("and_int", [i(S, 0, 64), i(S, 0, 64)], lambda T, x, y: x & y, torch=lambda t, x, y: x & y, grad=False)
case("or_int", [i(S, 0, 64), i(S, 0, 64)], lambda T, x, y: x | y, torch=lambda t, x, y: x | y, grad=False)
case("xor_int", [i(S, 0, 64), i(S, 0, 64)], lambda T, x, y: x ^ y, torch=lambda t, x, y: x ^ y, grad=False)
case("and_bool", [b(S), b(S)], lambda T, x, y: x & y, torch=lambda t, x, y: x & y, grad=False)
case("lshift", [i(S, 0, 1000)], lambda T, x: x << 3, torch=lambda t, x: x << 3, grad=False)
case("rshift", [i(S, 0, 1000)], lambda T, x: x >> 2, torch=lambda t, x: x >> 2, grad=False)
for op in ["<", "<=", ">", ">=", "==", "!="]:
    fn = eval(f"lambda T, x, y: x {op} y")
    case(f"cmp{op}", [f(S), f(S)], fn, torch=eval(f"lambda t, x, y: x {op} y"), grad=False)
case("cmp_scalar", [i(S)], lambda T, x: x < 1.5, torch=lambda t, x: x < 1.5, grad=False)
case("where", [b(S), f(S), f(S)], lambda T, c, x, y: c.where(x, y), torch=lambda t, c, x, y: t.where(c, x, y))
case("where_scalar", [b(S), f(S)], lambda T, c, x: c.where(x, 0.5), torch=lambda t, c, x: t.where(c, x, t.tensor(0.5)))
case("masked_fill", [f(S), b(S)], lambda T, x, m: x.masked_fill(m, -7.0), torch=lambda t, x, m: x.masked_fill(m, -7.0))
case("clamp", [f(S)], lambda T, x: x.clamp(-0.5, 0.75), torch=lambda t, x: x.clamp(-0.5, 0.75))
case("clip_min", [f(S)], lambda T, x: x.clip(min_=0.25), torch=lambda t, x: x.clip(min=0.25))
case("lerp", [f(S), f(S), f(S, 0, 1)], lambda T, x, y, w: x.lerp(y, w), torch=lambda t, x, y, w: t.lerp(x, y, w), ulp=2)
case("lerp_scalar", [f(S), f(S)], lambda T, x, y: x.lerp(y, 0.25), torch=lambda t, x, y: t.lerp(x, y, 0.25), ulp=2)
case("logaddexp", [f(S), f(S)], lambda T, x, y: x.logaddexp(y), torch=lambda t, x, y: t.logaddexp(x, y), ulp=4)
case("copysign", [f(S), f(S)], lambda T, x, y: x.copysign(y), torch=lambda t, x, y: t.copysign(x, y), grad=False)
case("isclose", [f(S), f(S)], lambda T, x, y: x.isclose(x + y * 1e-6), torch=lambda t, x, y: t.isclose(x, x + y * 1e-6), grad=False)
case("cast_int8", [f(S, -100, 100)], lambda T, x: x.cast("int8"), torch=lambda t, x: x.to(t.int8), grad=False)
case("cast_half", [f(S)], lambda T, x: x.half(), torch=lambda t, x: x.half())
case("cast_double", [f(S)], lambda T, x: x.double(), torch=lambda t, x: x.double())
case("cast_int_bool", [i(S)], lambda T, x: x.bool(), torch=lambda t, x: x.bool(), grad=False)
case("bitcast", [f(S)], lambda T, x: x.bitcast("int32"), torch=lambda t, x: x.view(t.int32), grad=False)

# ---- reductions ----
R = (4, 5, 6)
for name in ["sum", "max", "min", "mean"]:
    case(name, [f(R)], same(name), torch=same(name), ulp=2)
    case(f"{name}_axis", [f(R)], lambda T, x, n=name: getattr(x, n)(axis=1), torch=lambda t, x, n=name: getattr(t, "a" + n if n in ("max", "min") else n)(x, 1), ulp=2)
    case(f"{name}_keepdim", [f(R)], lambda T, x, n=name: getattr(x, n)(axis=(0, 2), keepdim=True),
         torch=lambda t, x, n=name: getattr(t, "a" + n if n in ("max", "min") else n)(x, (0, 2), keepdim=True), ulp=2)
case("max_ties", [np.array([[1, 3, 3], [2, 2, 2]], np.float32)], lambda T, x: x.max(axis=1), torch=lambda t, x: t.amax(x, 1))
case("sum_int", [i(R)], lambda T, x: x.sum(axis=0), torch=lambda t, x: x.sum(0, dtype=t.int32), grad=False)
case("prod", [f((3, 4), 0.5, 1.5)], lambda T, x: x.prod(axis=1), torch=lambda t, x: x.prod(1), ulp=2)
case("var", [f(R)], lambda T, x: x.var(axis=1), torch=lambda t, x: x.var(1), ulp=4, grad_ulp=8)
case("std", [f(R)], lambda T, x: x.std(axis=(0, 1)), torch=lambda t, x: x.std((0, 1)), ulp=4, grad_ulp=8)
case("var_nocorr", [f(R)], lambda T, x: x.var(axis=2, correction=0), torch=lambda t, x: x.var(2, unbiased=False), ulp=4, grad_ulp=8)
case("any", [b(R)], lambda T, x: x.any(axis=1), torch=lambda t, x: x.any(1), grad=False)
case("all", [b(R)], lambda T, x: x.all(axis=2), torch=lambda t, x: x.all(2), grad=False)
case("argmax", [f(R)], lambda T, x: x.argmax(axis=1), torch=lambda t, x: x.argmax(1).int(), grad=False)
case("argmin", [f(R)], lambda T, x: x.argmin(), torch=lambda t, x: x.argmin().int(), grad=False)
case("logsumexp", [f(R)], lambda T, x: x.logsumexp(axis=2), torch=lambda t, x: x.logsumexp(2), ulp=4)
case("softmax", [f(R)], same("softmax"), torch=lambda t, x: x.softmax(-1), ulp=4, grad_ulp=16)
case("softmax_axis0", [f(R)], lambda T, x: x.softmax(0), torch=lambda t, x: x.softmax(0), ulp=4, grad_ulp=16)
case("log_softmax", [f(R)], same("log_softmax"), torch=lambda t, x: x.log_softmax(-1), ulp=8, grad_ulp=16)
case("softmin", [f(R)], same("softmin"), torch=lambda t, x: t.nn.functional.softmin(x, -1), ulp=4, grad_ulp=16)
case("cumsum", [f((4, 9))], lambda T, x: x.cumsum(1), torch=lambda t, x: x.cumsum(1), ulp=4)
case("cumprod", [f((4, 6), 0.5, 1.5)], lambda T, x: x.cumprod(1), torch=lambda t, x: x.cumprod(1), ulp=4)
case("cummax", [f((4, 9))], lambda T, x: x.cummax(1)[0], torch=lambda t, x: x.cummax(1)[0])
case("cummax_idx", [f((4, 9))], lambda T, x: x.cummax(1)[1], torch=lambda t, x: x.cummax(1)[1].int(), grad=False)
case("cummin", [f((4, 9))], lambda T, x: x.cummin(0)[0], torch=lambda t, x: x.cummin(0)[0])
case("cummin_idx", [f((4, 9))], lambda T, x: x.cummin(0)[1], torch=lambda t, x: x.cummin(0)[1].int(), grad=False)
case("logcumsumexp", [f((3, 6))], lambda T, x: x.logcumsumexp(1), torch=lambda t, x: x.logcumsumexp(1), ulp=8)
case("sort", [f((3, 8))], lambda T, x: x.sort()[0], torch=lambda t, x: x.sort()[0])
case("sort_desc_idx", [f((3, 8))], lambda T, x: x.sort(0, descending=True)[1], torch=lambda t, x: x.sort(0, descending=True)[1].int(),
     grad=False)
case("argsort", [f((3, 8))], lambda T, x: x.argsort(), torch=lambda t, x: x.argsort().int(), grad=False)
case("topk", [f((3, 8))], lambda T, x: x.topk(3)[0], torch=lambda t, x: x.topk(3)[0])
case("topk_idx", [f((3, 8))], lambda T, x: x.topk(2, largest=False)[1], torch=lambda t, x: x.topk(2, largest=False)[1].int(),
     grad=False)
case("normalize", [f((4, 6))], lambda T, x: x.normalize(dim=1), torch=F("normalize", dim=1), ulp=4, grad_ulp=16)
case("var_mean", [f(R)], lambda T, x: x.var_mean(axis=1)[0], torch=lambda t, x: t.var_mean(x, 1)[0], ulp=4, grad_ulp=8)
case("std_mean", [f(R)], lambda T, x: x.std_mean(axis=1)[1], torch=lambda t, x: t.std_mean(x, 1)[1], ulp=4, grad_ulp=8)

# ---- movement ----
M = (2, 3, 4)
case("reshape", [f(M)], lambda T, x: x.reshape(4, -1), torch=lambda t, x: x.reshape(4, -1))
case("view", [f(M)], lambda T, x: x.view((6, 4)), torch=lambda t, x: x.view(6, 4))
case("expand", [f((3, 1))], lambda T, x: x.expand(2, 3, 4), torch=lambda t, x: x.expand(2, 3, 4))
case("permute", [f(M)], lambda T, x: x.permute(2, 0, 1), torch=lambda t, x: x.permute(2, 0, 1))
case("flip", [f(M)], lambda T, x: x.flip((0, 2)), torch=lambda t, x: x.flip((0, 2)))
case("shrink", [f(M)], lambda T, x: x.shrink((None, (1, 3), (0, 2))), torch=lambda t, x: x[:, 1:3, 0:2])
case("pad_flat", [f(M)], lambda T, x: x.pad((1, 2, 0, 1)), torch=F("pad", (1, 2, 0, 1)))
case("pad_grouped", [f(M)], lambda T, x: x.pad(((1, 0), None, (2, 2)), value=-1.0), torch=F("pad", (2, 2, 0, 0, 1, 0), value=-1.0))
case("pad_reflect", [f((1, 2, 5))], lambda T, x: x.pad((2, 1), mode="reflect"), torch=F("pad", (2, 1), mode="reflect"))
case("pad_replicate", [f((1, 2, 5))], lambda T, x: x.pad((2, 1), mode="replicate"), torch=F("pad", (2, 1), mode="replicate"))
case("pad_circular", [f((1, 2, 5))], lambda T, x: x.pad((2, 1), mode="circular"), torch=F("pad", (2, 1), mode="circular"))
case("pad_negative", [f(M)], lambda T, x: x.pad((-1, 1)), torch=F("pad", (-1, 1)))
case("pad_to", [f((2, 3))], lambda T, x: x.pad_to(4, 5), torch=F("pad", (0, 2, 0, 2)))
case("shrink_to", [f(M)], lambda T, x: x.shrink_to(2, 2, 3), torch=lambda t, x: x[:, :2, :3])
case("repeat", [f((2, 3))], lambda T, x: x.repeat(2, 1, 3), torch=lambda t, x: x.repeat(2, 1, 3))
case("repeat_interleave", [f((2, 3))], lambda T, x: x.repeat_interleave(2, dim=1), torch=lambda t, x: x.repeat_interleave(2, dim=1))
case("transpose", [f(M)], lambda T, x: x.transpose(0, 2), torch=lambda t, x: x.transpose(0, 2))
case("T", [f((3, 5))], lambda T, x: x.T, torch=lambda t, x: x.T)
case("flatten", [f(M)], lambda T, x: x.flatten(1), torch=lambda t, x: x.flatten(1))
case("unflatten", [f((2, 12))], lambda T, x: x.unflatten(1, (3, 4)), torch=lambda t, x: x.unflatten(1, (3, 4)))
case("squeeze", [f((2, 1, 3))], lambda T, x: x.squeeze(1), torch=lambda t, x: x.squeeze(1))
case("unsqueeze", [f((2, 3))], lambda T, x: x.unsqueeze(-1), torch=lambda t, x: x.unsqueeze(-1))
case("split", [f((7, 2))], lambda T, x: x.split(3)[2], torch=lambda t, x: x.split(3)[2])
case("split_sizes", [f((7, 2))], lambda T, x: x.split([2, 5])[1], torch=lambda t, x: x.split([2, 5])[1])
case("chunk", [f((7, 2))], lambda T, x: x.chunk(3)[1], torch=lambda t, x: x.chunk(3)[1])
case("cat", [f((2, 3)), f((4, 3))], lambda T, x, y: x.cat(y, y, dim=0), torch=lambda t, x, y: t.cat([x, y, y], 0))
case("cat_static", [f((2, 3)), f((2, 1))], lambda T, x, y: T.cat(x, y, dim=1), torch=lambda t, x, y: t.cat([x, y], 1))
case("stack", [f((2, 3)), f((2, 3))], lambda T, x, y: x.stack(y, dim=1), torch=lambda t, x, y: t.stack([x, y], 1))
case("roll", [f((3, 4))], lambda T, x: x.roll(1, 1), torch=lambda t, x: x.roll(1, 1))
case("roll_multi", [f((3, 4))], lambda T, x: x.roll((2, -1), (0, 1)), torch=lambda t, x: x.roll((2, -1), (0, 1)))
case("diag", [f((5,))], lambda T, x: x.diag(), torch=lambda t, x: x.diag())
case("diagonal", [f((4, 5))], lambda T, x: x.diagonal(1), torch=lambda t, x: x.diagonal(1))
case("unfold", [f((2, 9))], lambda T, x: x.unfold(1, 3, 2), torch=lambda t, x: x.unfold(1, 3, 2))
case("meshgrid", [f((3,)), f((4,))], lambda T, x, y: x.meshgrid(y)[1], torch=lambda t, x, y: t.meshgrid(x, y, indexing="ij")[1])
case("rearrange", [f((2, 3, 4))], lambda T, x: x.rearrange("a b c -> c (a b)"), torch=lambda t, x: x.permute(2, 0, 1).reshape(4, 6))
case("triu", [f((4, 5))], lambda T, x: x.triu(1), torch=lambda t, x: x.triu(1))
case("tril", [f((4, 5))], lambda T, x: x.tril(-1), torch=lambda t, x: x.tril(-1))

# ---- indexing ----
case("getitem_int", [f(M)], lambda T, x: x[1], torch=lambda t, x: x[1])
case("getitem_slices", [f(M)], lambda T, x: x[:, 1:, ::2], torch=lambda t, x: x[:, 1:, ::2])
case("getitem_negstep", [f(M)], lambda T, x: x[::-1, 2, 3:0:-2], torch=lambda t, x: x.flip(0)[:, 2][:, [3, 1]])
case("getitem_none_ellipsis", [f(M)], lambda T, x: x[None, ..., 1], torch=lambda t, x: x[None, ..., 1])
case("getitem_list", [f(M)], lambda T, x: x[[1, 0, 1]], torch=lambda t, x: x[[1, 0, 1]])
case("getitem_tensor", [f(M), np.array([[2, 0], [1, 1]], np.int32)], lambda T, x, ix: x[:, ix],
     torch=lambda t, x, ix: x[:, ix.long()])
case("getitem_two_tensors", [f(M), np.array([1, 0], np.int32), np.array([3, -1], np.int32)],
     lambda T, x, a, c: x[a, :, c], torch=lambda t, x, a, c: x[a.long(), :, c.long()])
case("gather", [f((3, 4)), np.array([[0, 3], [1, 1], [2, 0]], np.int32)], lambda T, x, ix: x.gather(1, ix),
     torch=lambda t, x, ix: x.gather(1, ix.long()))
case("one_hot", [np.array([0, 2, 1, 3], np.int32)], lambda T, x: x.one_hot(5), torch=lambda t, x: F("one_hot", 5)(t, x.long()).int(),
     grad=False)
case("scatter", [f((3, 4)), np.array([[0, 3], [1, 1], [2, 0]], np.int32), f((3, 2))],
     lambda T, x, ix, s: x.scatter(1, ix, s), torch=lambda t, x, ix, s: x.scatter(1, ix.long(), s), grad=False)
case("scatter_scalar", [f((3, 4)), np.array([[0, 3], [1, 1], [2, 0]], np.int32)],
     lambda T, x, ix: x.scatter(1, ix, 2.5), torch=lambda t, x, ix: x.scatter(1, ix.long(), 2.5), grad=False)
case("scatter_reduce_sum", [f((3, 4)), np.array([[0, 0], [1, 1], [2, 0]], np.int32), f((3, 2))],
     lambda T, x, ix, s: x.scatter_reduce(1, ix, s, "sum"), torch=lambda t, x, ix, s: x.scatter_reduce(1, ix.long(), s, "sum"),
     grad=False, ulp=1)
case("scatter_reduce_amax", [f((3, 4)), np.array([[0, 0], [1, 1], [2, 0]], np.int32), f((3, 2))],
     lambda T, x, ix, s: x.scatter_reduce(1, ix, s, "amax", include_self=False),
     torch=lambda t, x, ix, s: x.scatter_reduce(1, ix.long(), s, "amax", include_self=False), grad=False)
case("masked_select", [f((3, 4)), b((3, 4))], lambda T, x, m: x.masked_select(m), torch=lambda t, x, m: x.masked_select(m), grad=False)
case("nonzero", [i((3, 4), -1, 2)], lambda T, x: x.nonzero(), torch=lambda t, x: x.nonzero().int(), grad=False)
case("interpolate_linear", [f((1, 2, 5))], lambda T, x: x.interpolate((8,)),
     torch=lambda t, x: t.nn.functional.interpolate(x, size=(8,), mode="linear"), ulp=4, grad=False)
case("interpolate_nearest", [f((1, 2, 3, 4))], lambda T, x: x.interpolate((6, 5), mode="nearest"),
     torch=lambda t, x: t.nn.functional.interpolate(x, size=(6, 5), mode="nearest"), grad=False)

# ---- linear algebra, layers, losses ----
case("matmul", [f((5, 7)), f((7, 3))], lambda T, x, y: x @ y, torch=lambda t, x, y: x @ y, ulp=8)
case("matmul_batched", [f((2, 4, 7)), f((7, 3))], lambda T, x, y: x.matmul(y), torch=lambda t, x, y: x.matmul(y), ulp=8)
case("dot_vec", [f((6,)), f((6,))], lambda T, x, y: x.dot(y), torch=lambda t, x, y: x.dot(y), ulp=8)
case("linear", [f((4, 5)), f((5, 3)), f((3,))], lambda T, x, w, bb: x.linear(w, bb), torch=lambda t, x, w, bb: x @ w + bb, ulp=8)
case("einsum", [f((3, 4)), f((4, 5))], lambda T, x, y: T.einsum("ij,jk->ik", x, y), torch=lambda t, x, y: t.einsum("ij,jk->ik", x, y),
     ulp=8)
case("conv2d", [f((2, 3, 6, 6)), f((4, 3, 3, 3)), f((4,))], lambda T, x, w, bb: x.conv2d(w, bb, padding=1),
     torch=lambda t, x, w, bb: F("conv2d", bb, padding=1)(t, x, w), ulp=16, grad_ulp=32)
case("conv2d_stride_groups", [f((1, 4, 7, 7)), f((4, 2, 3, 3))], lambda T, x, w: x.conv2d(w, groups=2, stride=2, dilation=1),
     torch=lambda t, x, w: F("conv2d", groups=2, stride=2)(t, x, w), ulp=16, grad_ulp=32)
case("conv_transpose2d", [f((1, 2, 4, 4)), f((2, 3, 3, 3))], lambda T, x, w: x.conv_transpose2d(w, stride=2, padding=1),
     torch=lambda t, x, w: F("conv_transpose2d", stride=2, padding=1)(t, x, w), ulp=16, grad_ulp=32)
case("max_pool2d", [f((1, 2, 6, 6))], lambda T, x: x.max_pool2d(), torch=F("max_pool2d", 2))
case("max_pool2d_k3s1", [f((1, 1, 5, 5))], lambda T, x: x.max_pool2d(3, stride=1, padding=1), torch=F("max_pool2d", 3, 1, 1))
case("max_pool2d_indices", [f((1, 1, 4, 4))], lambda T, x: x.max_pool2d(return_indices=True)[1],
     torch=lambda t, x: F("max_pool2d", 2, return_indices=True)(t, x)[1].int(), grad=False)
case("avg_pool2d", [f((1, 2, 6, 6))], lambda T, x: x.avg_pool2d(), torch=F("avg_pool2d", 2), ulp=2)
case("avg_pool2d_pad", [f((1, 1, 5, 5))], lambda T, x: x.avg_pool2d(3, stride=2, padding=1, count_include_pad=False),
     torch=F("avg_pool2d", 3, 2, 1, count_include_pad=False), ulp=2)
case("max_unpool2d", [f((1, 1, 4, 4))], lambda T, x: (lambda v, ix: v.max_unpool2d(ix))(*x.max_pool2d(return_indices=True)),
     torch=lambda t, x: (lambda v, ix: F("max_unpool2d", 2)(t, v, ix))(*F("max_pool2d", 2, return_indices=True)(t, x)))
case("batchnorm", [f((2, 3, 4)), f((3,)), f((3,)), f((3,)), f((3,), 0.5, 2)],
     lambda T, x, w, bb, m, s: x.batchnorm(w, bb, m, s),
     torch=lambda t, x, w, bb, m, s: (x - m.reshape(1, 3, 1)) * w.reshape(1, 3, 1) * s.reshape(1, 3, 1) + bb.reshape(1, 3, 1), ulp=2)
case("layernorm", [f((3, 8))], lambda T, x: x.layernorm(), torch=lambda t, x: F("layer_norm", (8,))(t, x), ulp=8, grad_ulp=64)
case("sdpa", [f((1, 2, 4, 8)), f((1, 2, 5, 8)), f((1, 2, 5, 8))], lambda T, q, k, v: q.scaled_dot_product_attention(k, v),
     torch=lambda t, q, k, v: ((q @ k.transpose(-1, -2)) / 8 ** 0.5).softmax(-1) @ v, ulp=16, grad_ulp=64)
case("sdpa_causal", [f((1, 4, 8)), f((1, 4, 8)), f((1, 4, 8))],
     lambda T, q, k, v: q.scaled_dot_product_attention(k, v, is_causal=True),
     torch=lambda t, q, k, v: ((q @ k.transpose(-1, -2)) / 8 ** 0.5).masked_fill(t.ones(4, 4).triu(1).bool(), float("-inf"))
     .softmax(-1) @ v, ulp=16, grad_ulp=64)
Y = np.array([0, 3, 1, 2, 4], np.int32)
case("sparse_categorical_crossentropy", [f((5, 6)), Y], lambda T, x, y: x.sparse_categorical_crossentropy(y),
     torch=lambda t, x, y: F("cross_entropy")(t, x, y.long()), ulp=8, grad_ulp=16)
case("sparse_cce_smooth", [f((5, 6)), Y], lambda T, x, y: x.sparse_categorical_crossentropy(y, label_smoothing=0.1),
     torch=lambda t, x, y: F("cross_entropy", label_smoothing=0.1)(t, x, y.long()), ulp=8, grad_ulp=16)
case("cross_entropy", [f((5, 6)), Y], lambda T, x, y: x.cross_entropy(y), torch=lambda t, x, y: F("cross_entropy")(t, x, y.long()),
     ulp=8, grad_ulp=16)
case("cross_entropy_probs", [f((5, 6)), f((5, 6), 0, 1)], lambda T, x, y: x.cross_entropy(y, reduction="sum"),
     torch=lambda t, x, y: F("cross_entropy", reduction="sum")(t, x, y), ulp=8, grad_ulp=16)
case("nll_loss", [f((5, 6)), Y], lambda T, x, y: x.log_softmax().nll_loss(y), torch=lambda t, x, y: F("nll_loss")(t, x.log_softmax(-1),
     y.long()), ulp=8, grad_ulp=16)
case("binary_crossentropy", [f((4, 3), 0.05, 0.95), f((4, 3), 0, 1)], lambda T, x, y: x.binary_crossentropy(y),
     torch=lambda t, x, y: F("binary_cross_entropy")(t, x, y), ulp=8, grad_ulp=16)
case("binary_crossentropy_logits", [f((4, 3)), f((4, 3), 0, 1)], lambda T, x, y: x.binary_crossentropy_logits(y),
     torch=lambda t, x, y: F("binary_cross_entropy_with_logits")(t, x, y), ulp=8, grad_ulp=16)

# ---- creation (no inputs; tinygrad's results are compared exactly where noted) ----
case("arange", [], lambda T: T.arange(2, 11, 3), torch=lambda t: t.arange(2, 11, 3, dtype=t.int32), grad=False)
case("arange_float", [], lambda T: T.arange(0, 1, 0.125), torch=lambda t: t.arange(0, 1, 0.125), grad=False)
case("linspace", [], lambda T: T.linspace(-1, 2, 7), torch=lambda t: t.linspace(-1, 2, 7), grad=False, ulp=1)
case("eye", [], lambda T: T.eye(3, 4), torch=lambda t: t.eye(3, 4), grad=False)
case("zeros_ones_full", [], lambda T: T.zeros(2, 3) + T.ones((2, 3)) * 2 + T.full((2, 3), 0.5),
     torch=lambda t: t.zeros(2, 3) + t.ones(2, 3) * 2 + t.full((2, 3), 0.5), grad=False)
case("full_like", [f(S)], lambda T, x: x.full_like(3.0) + x.zeros_like() + x.ones_like(), torch=lambda t, x: t.full_like(x, 4.0),
     grad=False)
for seed in (0, 1337):
    case(f"rand_{seed}", [], lambda T, s=seed: (T.manual_seed(s), T.rand(4, 5))[1], grad=False)
    case(f"randint_{seed}", [], lambda T, s=seed: (T.manual_seed(s), T.randint(3, 4, low=-5, high=20))[1], grad=False)
    case(f"randperm_{seed}", [], lambda T, s=seed: (T.manual_seed(s), T.randperm(10))[1], grad=False)
    case(f"rand_f16_{seed}", [], lambda T, s=seed: (T.manual_seed(s), T.rand(9, dtype="float16"))[1], grad=False)
    case(f"randn_{seed}", [], lambda T, s=seed: (T.manual_seed(s), T.randn(3, 4))[1], grad=False, tg_ulp=64)
    case(f"uniform_{seed}", [], lambda T, s=seed: (T.manual_seed(s), T.uniform(6, low=-2.5, high=4.0))[1], grad=False, tg_ulp=4)
    case(f"multinomial_{seed}", [], lambda T, s=seed: (T.manual_seed(s), T([[0.1, 0.5, 0.4], [0.7, 0.2, 0.1]])
                                                      .multinomial(4, replacement=True))[1], grad=False)
    case(f"dropout_{seed}", [], lambda T, s=seed: dropout_program(T, s), grad=False)
case("keccak_sha3_256", [np.frombuffer(b"abc maroon", np.uint8).copy()], lambda T, x: x.keccak(),
     torch=lambda t, x: t.tensor(list(__import__("hashlib").sha3_256(x.numpy().tobytes()).digest()), dtype=t.uint8), grad=False)
case("qr_r", [f((4, 3))], lambda T, x: x.qr()[1].abs(), grad=False)
case("svd_s", [f((4, 3))], lambda T, x: x.svd()[1], grad=False)

# ---- the remaining methods, one small program each ----
case("allclose", [f(S), f(S)], lambda T, x, y: x.allclose(x + y * 1e-6), torch=lambda t, x, y: t.tensor(t.allclose(x, x + y * 1e-6)),
     grad=False)
case("assign", [f(S), f(S)], lambda T, x, y: x.assign(y * 2), torch=lambda t, x, y: y * 2, grad=False)
case("bfloat16", [f(S)], lambda T, x: x.bfloat16().float(), torch=lambda t, x: x.bfloat16().float())
case("bitwise_methods", [i(S, 0, 64), i(S, 0, 64)], lambda T, x, y: x.bitwise_and(y).bitwise_or(x).bitwise_xor(y),
     torch=lambda t, x, y: x.bitwise_and(y).bitwise_or(x).bitwise_xor(y), grad=False)
case("contiguous", [f(S)], lambda T, x: x.contiguous().contiguous_backward().realize() * 2, torch=lambda t, x: x.contiguous() * 2)
# Maroon's clone is a realized leaf, so no gradient reaches x through it (tinygrad's and torch's
# pass it on): forward only.
case("clone", [f(S)], lambda T, x: x.clone() * 2, torch=lambda t, x: x.clone() * 2)
case("const", [f(S)], lambda T, x: T.const(2.5) + x.const_like(3) + x, torch=lambda t, x: x + 5.5)
case("eq_ne_methods", [i(S), i(S)], lambda T, x, y: x.eq(y).bitwise_or(x.ne(0)), torch=lambda t, x, y: x.eq(y) | x.ne(0), grad=False)
case("float_short", [f(S, -100, 100)], lambda T, x: x.short().float(), torch=lambda t, x: x.short().float(), grad=False)
case("mod_method", [i(S, -20, 20), i(S, 1, 6)], lambda T, x, y: x.mod(y), torch=lambda t, x, y: t.remainder(x, y), grad=False)
case("usum_uprod", [f(S), f(S)], lambda T, x, y: x.usum(y, y) + x.uprod(y), torch=lambda t, x, y: x + y + y + x * y)
case("newton_schulz", [f((3, 4))], lambda T, x: x.newton_schulz(3, (2.0, -1.5, 0.5)), grad=False, tg_ulp=64)
def shake_hash(data):
    """tinygrad's Tensor.hash in hashlib: shake_128 of each 4 KiB piece of a zero-padded 1 MiB
    chunk, shake_128 of those digests, repeated over chunks while there is more than one."""
    import hashlib

    def one_mb(c):
        pieces = b"".join(hashlib.shake_128(c[i:i + 4096]).digest(16) for i in range(0, 2 ** 20, 4096))
        return hashlib.shake_128(pieces).digest(16)
    chunks = -(-len(data) // 2 ** 20)
    while chunks > 1:
        data = data.ljust(chunks * 2 ** 20, b"\0")
        data = b"".join(one_mb(data[i * 2 ** 20:(i + 1) * 2 ** 20]) for i in range(chunks))
        chunks = -(-chunks // 65536)
    return one_mb(data.ljust(2 ** 20, b"\0"))


# tinygrad's own hash needs about 22 GB on its CPU backend: checked against hashlib instead.
case("hash", [np.frombuffer(b"maroon hashes bytes" * 3, np.uint8).copy()], lambda T, x: x.hash(), grad=False, tinygrad=False,
     torch=lambda t, x: t.tensor(list(shake_hash(x.numpy().tobytes())), dtype=t.uint8))
case("random_bits", [], lambda T: T.random_bits(T([1, 2], dtype="uint32"), T([7, 0], dtype="uint32"), 6), grad=False)
case("threefry", [], lambda T: T([1, 2, 3], dtype="uint64").threefry(T([5], dtype="uint64")), grad=False)
for seed in (0, 1337):
    for name, prog in [("rand_like", lambda T: T.ones(3, 4).rand_like()), ("randn_like", lambda T: T.ones(3, 4).randn_like()),
                       ("normal", lambda T: T.normal(2, 3, mean=1.0, std=2.0)), ("scaled_uniform", lambda T: T.scaled_uniform(4, 3)),
                       ("glorot_uniform", lambda T: T.glorot_uniform(4, 3)), ("kaiming_uniform", lambda T: T.kaiming_uniform(4, 3)),
                       ("kaiming_normal", lambda T: T.kaiming_normal(4, 3))]:
        case(f"{name}_{seed}", [], lambda T, s=seed, prog=prog: (T.manual_seed(s), prog(T))[1], grad=False)

# Bounds against PyTorch (forward, gradient) where the case's own are too tight: measured on
# this machine, rounded up to a power of two and doubled (PyTorch's own kernels differ between
# CPUs). The large ones come from tinygrad's recipes (cos is sin(pi/2 - x), the gelu and selu
# constants, asin/atan polynomials) and from summation order in matmul and conv.
TORCH_BOUNDS = {
    "exp": (1, 4), "sqrt": (0, 2), "rsqrt": (1, 4), "sin": (1, 64), "cos": (64, 1024), "tan": (3, 16),
    "reciprocal": (0, 2), "sigmoid": (2, 128), "tanh": (4, 128), "sinh": (32, 4), "asin": (256, 16), "acos": (4, 16),
    "atan": (256, 64), "logsigmoid": (64, 4), "softsign": (1, 4), "silu": (2, 8), "swish": (2, 128),
    "hardswish": (1, 4), "mish": (128, 64), "quick_gelu": (4, 16), "gelu": (16, 2048), "celu": (4, 16),
    "softplus_beta": (1024, 4), "div": (1, 4), "rdiv_scalar": (0, 2), "mod_float": (2048, 2), "lerp": (32, 32),
    "sum_keepdim": (32, 2), "mean_keepdim": (128, 2), "max_ties": (0, 2), "var": (4, 64), "std": (4, 32),
    "var_nocorr": (4, 2048), "logsumexp": (4, 16), "softmax": (4, 1024), "softmax_axis0": (4, 512),
    "log_softmax": (8, 128), "softmin": (4, 256), "cumsum": (32, 4), "logcumsumexp": (32, 8), "normalize": (4, 256),
    "var_mean": (4, 32), "matmul_batched": (64, 8), "conv2d": (512, 32), "conv2d_stride_groups": (512, 32),
    "conv_transpose2d": (64, 32), "layernorm": (8, 2048), "sdpa": (16, 512), "sparse_cce_smooth": (8, 512),
}
for _c in CASES:
    if _c.name in TORCH_BOUNDS:
        _c.ulp, _c.grad_ulp = TORCH_BOUNDS[_c.name]

# Bounds against tinygrad (forward, gradient), measured the same way. tinygrad's CPU backend
# contracts a*b+c into FMAs, rewrites x*(1/y) to x/y, x**3 to x*x*x and folds casts, and its
# exp2/log2/sin are SLEEF polynomials, so float results differ by a few ULPs (more where a
# recipe cancels: cos, gelu, mod). Integers, bools and the random streams (rand, randint,
# randperm, multinomial, dropout) match bit for bit: their bound stays 0.
TINYGRAD_BOUNDS = {
    "exp": (1, 4), "log": (4, 1), "log2": (1, 4), "log10": (2, 8), "sqrt": (0, 2), "rsqrt": (1, 8), "sin": (32, 32),
    "cos": (64, 512), "tan": (3, 8), "reciprocal": (0, 4), "sigmoid": (2, 128), "tanh": (4, 1024), "asinh": (4, 16),
    "asin": (32, 4), "atan": (64, 32), "softsign": (1, 4), "silu": (2, 8), "swish": (2, 256), "hardswish": (1, 8),
    "mish": (64, 128), "quick_gelu": (16, 16), "gelu": (2048, 256), "div": (1, 4), "rdiv_scalar": (0, 4),
    "mod_float": (2048, 2), "lerp": (32, 32), "var": (4, 32), "var_nocorr": (4, 1024), "softmax": (4, 1024),
    "softmax_axis0": (4, 512), "log_softmax": (8, 256), "softmin": (4, 512), "normalize": (4, 128),
    "matmul_batched": (64, 8), "einsum": (8, 32), "conv2d": (512, 32), "conv2d_stride_groups": (512, 32),
    "batchnorm": (64, 1024), "layernorm": (8, 2048), "sdpa": (64, 256), "sdpa_causal": (16, 512),
    "sparse_cce_smooth": (8, 256), "cross_entropy_probs": (8, 64), "binary_crossentropy": (8, 64),
    "binary_crossentropy_logits": (8, 128), "uniform_0": (64, 0), "qr_r": (8192, 0), "svd_s": (8, 0),
    "usum_uprod": (8, 32), "randn_like_0": (32, 0), "normal_0": (256, 0), "glorot_uniform_0": (32, 0),
    "kaiming_uniform_0": (4, 0), "kaiming_normal_0": (32, 0), "randn_like_1337": (8, 0), "normal_1337": (32, 0),
    "glorot_uniform_1337": (4, 0), "kaiming_uniform_1337": (4, 0), "kaiming_normal_1337": (8, 0),
}
for _c in CASES:
    if _c.name in TINYGRAD_BOUNDS:
        _c.tg_ulp, _c.tg_grad_ulp = TINYGRAD_BOUNDS[_c.name]

TORCH_CASES = [c for c in CASES if c.torch is not None]
