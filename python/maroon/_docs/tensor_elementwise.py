"""Docstrings of the Tensor's elementwise methods (maroon/_docs/__init__.py attaches them)."""
import textwrap

from .common import COMPOSITE, EXACT, MATH, ROUNDED

_UNARY = {
    # name: (what it computes, promise, example input)
    "abs": ("The absolute value, elementwise.", EXACT, "[-2.0, 0.0, 3.5]"),
    "neg": ("The negation, elementwise.", EXACT, "[-2.0, 0.0, 3.5]"),
    "exp": ("``e ** x``, elementwise, as ``exp2(x * log2(e))``.", COMPOSITE, "[0.0, 1.0, 2.0]"),
    "exp2": ("``2 ** x``, elementwise.", MATH, "[0.0, 1.0, 2.5]"),
    "log": ("The natural logarithm, elementwise, as ``log2(x) * ln(2)`` (NaN below 0, -inf at 0).", COMPOSITE, "[1.0, 2.0, 10.0]"),
    "log2": ("The base-2 logarithm, elementwise.", MATH, "[1.0, 2.0, 10.0]"),
    "log10": ("The base-10 logarithm, elementwise.", COMPOSITE, "[1.0, 10.0, 1000.0]"),
    "sqrt": ("The square root, elementwise.", ROUNDED, "[1.0, 2.0, 9.0]"),
    "rsqrt": ("``1 / sqrt(x)``, elementwise.", COMPOSITE, "[1.0, 4.0, 9.0]"),
    "reciprocal": ("``1 / x``, elementwise.", ROUNDED, "[1.0, 2.0, 3.0]"),
    "square": ("``x * x``, elementwise.", ROUNDED, "[-2.0, 0.5, 3.0]"),
    "sign": ("-1, 0 or 1 by the sign of each element (0 for zeros).", EXACT, "[-2.0, 0.0, 3.5]"),
    "sin": ("The sine, elementwise (radians).", MATH, "[0.0, 1.0, 3.0]"),
    "cos": ("The cosine, elementwise (radians).", COMPOSITE, "[0.0, 1.0, 3.0]"),
    "tan": ("The tangent, elementwise (radians).", COMPOSITE, "[0.0, 0.5, 1.0]"),
    "asin": ("The arcsine, elementwise.", COMPOSITE, "[-0.5, 0.0, 1.0]"),
    "acos": ("The arccosine, elementwise.", COMPOSITE, "[-0.5, 0.0, 1.0]"),
    "atan": ("The arctangent, elementwise.", COMPOSITE, "[-1.0, 0.0, 2.0]"),
    "sinh": ("The hyperbolic sine, elementwise.", COMPOSITE, "[-1.0, 0.0, 2.0]"),
    "cosh": ("The hyperbolic cosine, elementwise.", COMPOSITE, "[-1.0, 0.0, 2.0]"),
    "tanh": ("The hyperbolic tangent, elementwise.", COMPOSITE, "[-1.0, 0.0, 2.0]"),
    "asinh": ("The inverse hyperbolic sine, elementwise.", COMPOSITE, "[-1.0, 0.0, 2.0]"),
    "acosh": ("The inverse hyperbolic cosine, elementwise (NaN below 1).", COMPOSITE, "[1.0, 2.0, 10.0]"),
    "atanh": ("The inverse hyperbolic tangent, elementwise.", COMPOSITE, "[-0.5, 0.0, 0.5]"),
    "erf": ("The error function, elementwise (tinygrad's polynomial approximation).", COMPOSITE, "[-1.0, 0.0, 0.5]"),
    "floor": ("Rounds each element down to an integer value (dtype kept).", EXACT, "[-1.5, 0.5, 2.0]"),
    "ceil": ("Rounds each element up to an integer value (dtype kept).", EXACT, "[-1.5, 0.5, 2.0]"),
    "trunc": ("Rounds each element toward zero to an integer value (dtype kept).", EXACT, "[-1.5, 0.5, 2.7]"),
    "round": ("Rounds each element to the nearest integer value, ties to even (dtype kept).", EXACT,
              "[-1.5, 0.5, 2.5]"),
    "relu": ("The rectified linear unit, ``max(x, 0)``.", EXACT, "[-1.0, 0.0, 2.0]"),
    "relu6": ("``min(max(x, 0), 6)``.", EXACT, "[-1.0, 3.0, 8.0]"),
    "sigmoid": ("The logistic function ``1 / (1 + exp(-x))``.", COMPOSITE, "[-1.0, 0.0, 2.0]"),
    "logsigmoid": ("``log(sigmoid(x))``, computed as ``-softplus(-x)``.", COMPOSITE, "[-1.0, 0.0, 2.0]"),
    "hardswish": ("``x * relu6(x + 3) / 6``.", COMPOSITE, "[-4.0, 0.0, 1.0]"),
    "silu": ("``x * sigmoid(x)`` (also called swish).", COMPOSITE, "[-1.0, 0.0, 2.0]"),
    "swish": ("``x * sigmoid(x)`` (the same as ``silu``).", COMPOSITE, "[-1.0, 0.0, 2.0]"),
    "mish": ("``x * tanh(softplus(x))``.", COMPOSITE, "[-1.0, 0.0, 2.0]"),
    "quick_gelu": ("``x * sigmoid(1.702 * x)``.", COMPOSITE, "[-1.0, 0.0, 2.0]"),
    "softsign": ("``x / (1 + |x|)``.", COMPOSITE, "[-1.0, 0.0, 2.0]"),
    "isnan": ("Whether each element is NaN (a bool tensor).", EXACT, "[1.0, float('nan'), float('inf')]"),
    "isfinite": ("Whether each element is finite (a bool tensor).", EXACT, "[1.0, float('nan'), float('inf')]"),
    "logical_not": ("Logical NOT (a bool tensor).", EXACT, "[True, False]"),
    "bitwise_not": ("Bitwise NOT of an integer or bool tensor.", EXACT, "[0, 5, -1]"),
}

DOCS = {}
for _name, (_what, _promise, _xs) in _UNARY.items():
    DOCS["Tensor." + _name] = f"""
{_what}

{textwrap.fill(_promise, 96)}

>>> Tensor({_xs}).{_name}().tolist()
<OUT>
"""

_PARAM_UNARY = {
    # name: (what, arguments, promise, example call)
    "leaky_relu": ("``x`` where positive, else ``neg_slope * x``.", "neg_slope: the slope below zero.",
                   COMPOSITE, "Tensor([-2.0, 0.0, 3.0]).leaky_relu(0.1)"),
    "elu": ("``x`` where positive, else ``alpha * (exp(x) - 1)``.", "alpha: the scale below zero.", COMPOSITE,
            "Tensor([-2.0, 0.0, 3.0]).elu()"),
    "celu": ("``max(x, 0) + min(0, alpha * (exp(x / alpha) - 1))``.", "alpha: the scale below zero.", COMPOSITE,
             "Tensor([-2.0, 0.0, 3.0]).celu()"),
    "selu": ("``gamma * (max(x, 0) + min(0, alpha * (exp(x) - 1)))``.", "alpha, gamma: SELU's constants.", COMPOSITE,
             "Tensor([-2.0, 0.0, 3.0]).selu()"),
    "gelu": ("The Gaussian error linear unit, in tinygrad's tanh approximation.",
             "approximate: 'tanh' (the only form).", COMPOSITE, "Tensor([-1.0, 0.0, 2.0]).gelu()"),
    "softplus": ("``log(1 + exp(beta * x)) / beta``.", "beta: the sharpness.", COMPOSITE,
                 "Tensor([-1.0, 0.0, 2.0]).softplus()"),
    "hardsigmoid": ("``relu6(alpha * x + beta * 6) / 6``, tinygrad's piecewise linear sigmoid.",
                    "alpha, beta: the slope and the offset.", COMPOSITE, "Tensor([-4.0, 0.0, 1.0]).hardsigmoid()"),
    "hardtanh": ("``x`` clipped to ``[min_val, max_val]``.", "min_val, max_val: the bounds.", EXACT,
                 "Tensor([-4.0, 0.5, 3.0]).hardtanh()"),
    "isinf": ("Whether each element is infinite (a bool tensor).",
              "detect_positive, detect_negative: which infinities count.", EXACT,
              "Tensor([1.0, float('-inf'), float('inf')]).isinf(detect_negative=False)"),
    "clip": ("Each element limited to ``[min_, max_]`` (either may be None).", "min_, max_: the bounds.", EXACT,
             "Tensor([-4.0, 0.5, 3.0]).clip(-1, 1)"),
    "clamp": ("The same as ``clip``: each element limited to ``[min_, max_]``.", "min_, max_: the bounds.", EXACT,
              "Tensor([-4.0, 0.5, 3.0]).clamp(max_=1)"),
}
for _name, (_what, _args, _promise, _call) in _PARAM_UNARY.items():
    DOCS["Tensor." + _name] = f"""
{_what}

Args:
    {_args}

{textwrap.fill(_promise, 96)}

>>> {_call}.tolist()
<OUT>
"""

_BINARY = {
    # name: (what, promise, example call)
    "add": ("``self + x``, broadcasting, with tinygrad's dtype promotion (Python scalars are weak).", ROUNDED,
            "Tensor([1.0, 2.0]).add(Tensor([[10.0], [20.0]]))"),
    "sub": ("``self - x``, broadcasting.", ROUNDED, "Tensor([1.0, 2.0]).sub(0.5)"),
    "mul": ("``self * x``, broadcasting.", ROUNDED, "Tensor([1.0, 2.0]).mul(3)"),
    "pow": ("``self ** x``, broadcasting (integer exponents of integer tensors stay integers).", MATH,
            "Tensor([1.0, 2.0, 3.0]).pow(2)"),
    "maximum": ("The larger of ``self`` and ``x``, elementwise (NaN if either is NaN).", EXACT,
                "Tensor([1.0, 5.0]).maximum(Tensor([3.0, 2.0]))"),
    "minimum": ("The smaller of ``self`` and ``x``, elementwise (NaN if either is NaN).", EXACT,
                "Tensor([1.0, 5.0]).minimum(Tensor([3.0, 2.0]))"),
    "copysign": ("The magnitude of ``self`` with the sign of ``x``.", EXACT, "Tensor([1.0, -2.0]).copysign(-1.0)"),
    "logaddexp": ("``log(exp(self) + exp(x))``, computed stably.", COMPOSITE, "Tensor([0.0, 1.0]).logaddexp(0.0)"),
    "fmod": ("The remainder of ``self / x`` with the sign of ``self`` (C's fmod).", COMPOSITE,
             "Tensor([7.0, -7.0]).fmod(3.0)"),
    "mod": ("The remainder of ``self / x`` with the sign of ``x`` (Python's %).", COMPOSITE,
            "Tensor([7, -7]).mod(3)"),
    "bitwise_and": ("Bitwise AND of integer or bool tensors.", EXACT, "Tensor([12, 10]).bitwise_and(6)"),
    "bitwise_or": ("Bitwise OR of integer or bool tensors.", EXACT, "Tensor([12, 10]).bitwise_or(1)"),
    "bitwise_xor": ("Bitwise XOR of integer or bool tensors.", EXACT, "Tensor([12, 10]).bitwise_xor(6)"),
    "lshift": ("Integer left shift, wrapping as the dtype does.", EXACT, "Tensor([1, 3]).lshift(2)"),
    "rshift": ("Integer right shift (arithmetic for signed dtypes).", EXACT, "Tensor([16, -16]).rshift(2)"),
    "eq": ("``self == x``, elementwise (a bool tensor).", EXACT, "Tensor([1, 2, 3]).eq(2)"),
    "ne": ("``self != x``, elementwise (a bool tensor).", EXACT, "Tensor([1, 2, 3]).ne(2)"),
    "lt": ("``self < x``, elementwise (a bool tensor).", EXACT, "Tensor([1, 2, 3]).lt(2)"),
    "le": ("``self <= x``, elementwise (a bool tensor).", EXACT, "Tensor([1, 2, 3]).le(2)"),
    "gt": ("``self > x``, elementwise (a bool tensor).", EXACT, "Tensor([1, 2, 3]).gt(2)"),
    "ge": ("``self >= x``, elementwise (a bool tensor).", EXACT, "Tensor([1, 2, 3]).ge(2)"),
}
for _name, (_what, _promise, _call) in _BINARY.items():
    DOCS["Tensor." + _name] = f"""
{textwrap.fill(_what, 96)}

Args:
    x: a Tensor, or a Python or numpy scalar (weak: it takes ``self``'s dtype).
    reverse: compute ``x op self`` instead (where the method has it).

{textwrap.fill(_promise, 96)}

>>> {_call}.tolist()
<OUT>
"""

DOCS.update({
    "Tensor.div": f"""
``self / x``, broadcasting. Integer tensors divide to float unless ``rounding_mode`` is given.

Args:
    x: a Tensor or scalar.
    reverse: compute ``x / self``.
    rounding_mode: None (true division), 'trunc' or 'floor' (integer results for integers).

{ROUNDED}

>>> Tensor([7.0, -7.0]).div(2.0).tolist()
<OUT>
>>> Tensor([7, -7]).div(2, rounding_mode="floor").tolist()
<OUT>
""",
    "Tensor.where": f"""
``x`` where ``self`` is true, else ``y`` (``self`` is the condition), broadcasting all three.

Args:
    x, y: Tensors or scalars.

{EXACT}

>>> Tensor([True, False, True]).where(1.0, -1.0).tolist()
<OUT>
""",
    "Tensor.lerp": f"""
``self + (end - self) * weight``: linear interpolation.

Args:
    end: the other end.
    weight: a Tensor or scalar.

{COMPOSITE}

>>> Tensor([0.0, 10.0]).lerp(Tensor([1.0, 20.0]), 0.5).tolist()
<OUT>
""",
    "Tensor.isclose": f"""
``|self - other| <= atol + rtol * |other|`` elementwise (a bool tensor), as numpy's isclose.

Args:
    other: a Tensor or scalar.
    rtol, atol: relative and absolute tolerance.
    equal_nan: whether NaN equals NaN.

{COMPOSITE}

>>> Tensor([1.0, 1.1]).isclose(1.0, rtol=0.01).tolist()
<OUT>
""",
    "Tensor.allclose": f"""
Whether every element of ``self`` is close to ``other`` (``isclose(...).all()``).

{COMPOSITE}

>>> Tensor([1.0, 2.0]).allclose(Tensor([1.0, 2.0000001])).item()
<OUT>
""",
    "Tensor.masked_fill": f"""
``value`` where ``mask`` is true, else ``self``.

Args:
    mask: a bool tensor broadcastable to ``self``.
    value: a scalar or Tensor.

{EXACT}

>>> Tensor([1.0, 2.0, 3.0]).masked_fill(Tensor([False, True, False]), 0.0).tolist()
<OUT>
""",
    "Tensor.cast": f"""
This tensor converted to ``dtype`` (a DType or a name such as 'int32'). Float to integer
truncates toward zero and saturates at the integer's range, as ``docs/spec.md`` defines;
float to a narrower float rounds once.

>>> Tensor([-1.7, 2.5, 300.0]).cast("uint8").tolist()
<OUT>
""",
    "Tensor.bitcast": f"""
This tensor's bits reinterpreted as ``dtype`` (of the same item size). {EXACT}

>>> Tensor([1.0, -2.0]).bitcast("uint32").tolist()
<OUT>
""",
})

for _name, _dt in [("float", "float32"), ("half", "float16"), ("bfloat16", "bfloat16"), ("double", "float64"),
                   ("int", "int32"), ("long", "int64"), ("short", "int16"), ("bool", "bool")]:
    DOCS["Tensor." + _name] = f"""
``self.cast({_dt!r})``: see ``cast`` for how values convert.

>>> Tensor([0.0, 1.5, -2.0]).{_name}().dtype
<OUT>
"""
