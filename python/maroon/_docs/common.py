"""Phrases the docstring tables share: what an op promises about its bits."""

EXACT = "Exact: no rounding happens, so the result is the same bits everywhere."
ROUNDED = ("Each element is rounded once, in the rounding mode in force when the op is built "
           "(nearest-even unless a rounding scope says otherwise), as ``docs/spec.md`` defines.")
MATH = ("Correctly rounded (Maroon's own EXP2/LOG2/SIN, verified against MPFR; no libm), so "
        "every machine gives the same bits.")
COMPOSITE = ("Built from primitives in the order ``docs/spec.md`` gives (as tinygrad builds it), "
             "each rounded once, so every machine gives the same bits.")
REDUCE = ("Summed as a left fold in index order from the identity, one rounding per step "
          "(``docs/spec.md``): the same bits for any thread count or SIMD width.")
RANDOM = ("Random values come from Threefry-2x32 keyed by ``Tensor.manual_seed`` (tinygrad's "
          "generator): integer arithmetic, the same stream on every machine.")
LAZY = "Lazy: builds a graph node and computes nothing until the result is read or realized."
