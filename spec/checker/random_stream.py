"""Threefry-2x32 (20 rounds), tinygrad's key and counter scheme, and the random functions built on
it (docs/spec-model.md, "Random numbers"), with numpy integer and float32 arithmetic."""
import math

import numpy as np

import ieee

M32 = 0xFFFFFFFF
DEVICE_KEY = 0x14B81119  # sha256((0).to_bytes(4, "big")) mod 2**32


def rotl(x, r): return ((x << np.uint32(r)) | (x >> np.uint32(32 - r))).astype(np.uint32)


def threefry(x0, x1, k0, k1):
    """Threefry-2x32 with 20 rounds on uint32 arrays x0 (low words), x1 (high words)."""
    x0, x1 = np.asarray(x0, np.uint32), np.asarray(x1, np.uint32)
    ks = [np.uint32(k1), np.uint32(k0 ^ k1 ^ 0x1BD11BDA), np.uint32(k0)]
    with np.errstate(over="ignore"):
        a, b = x0 + ks[2], x1 + ks[0]
        for i in range(5):
            for r in ((13, 15, 26, 6), (17, 29, 16, 24))[i % 2]:
                a = a + b
                b = a ^ rotl(b, r)
            a = a + ks[i % 3]
            b = b + ks[(i + 1) % 3] + np.uint32(i + 1)
    return a, b


def random_words(counter, num, k0, k1):
    """`num` (< 2**32) words from a 64-bit counter: a fresh key from Threefry(counter, key), then
    Threefry(j, j + half) for j < half = ceil(num / 2); the low words, then the high words."""
    nk0, nk1 = threefry(counter & M32, counter >> 32, k0, k1)
    half = (num + 1) // 2
    j = np.arange(half, dtype=np.uint64)
    lo, hi = threefry(j.astype(np.uint32), (j + half).astype(np.uint32), int(nk0), int(nk1))
    return np.concatenate([lo, hi])[:num]


# (float dtype, unsigned view, mantissa bits, bits of 1.0)
FLOATS = {"float16": (np.uint16, 10, 0x3C00), "bfloat16": (np.uint16, 7, 0x3F80), "float32": (np.uint32, 23, 0x3F800000),
          "float64": (np.uint64, 52, 0x3FF0000000000000)}


class Stream:
    def __init__(self, seed):
        self.seed, self.counter = seed, 0

    def words(self, n):
        w = random_words(self.counter, n, DEVICE_KEY, self.seed & M32)
        self.counter += n
        return w

    def rand_bits(self, shape, dtype="float32"):
        """Element bits of rand(shape, dtype): ((bits >> (width - mant)) | bits(1.0)) - 1.0."""
        u, mant, one = FLOATS[dtype]
        n = int(np.prod(shape, dtype=np.int64))
        size = np.dtype(u).itemsize
        bits = self.words((n * size + 3) // 4).view(u)[:n]
        f = bits >> u(size * 8 - mant) | u(one)
        fmt = ieee.FORMATS[dtype]
        minus_one = fmt.sign | (fmt.bias << fmt.mbits)
        return np.array([ieee.add(fmt, int(x), minus_one, "nearest") for x in f], u).reshape(shape)

    def rand(self, shape):
        u, mant, one = FLOATS["float32"]
        n = int(np.prod(shape, dtype=np.int64))
        f = (self.words(n) >> np.uint32(9) | np.uint32(one)).view(np.float32) - np.float32(1)
        return f.reshape(shape)

    def uniform(self, shape, low, high):
        return (np.float32(high - low) * self.rand(shape)) + np.float32(low)


def scaled_factor(n):
    """n ** -0.5 correctly rounded to float64 (Maroon's pow), exactly: sqrt(1/n)."""
    return np.array([ieee.sqrt_rat(ieee.FORMATS["float64"], 1, n, 0, "nearest")], np.uint64).view(np.float64)[0]


def call(s, name, a):
    """The expected result of one call of the sequence (None: consumed, not checked)."""
    shape = a.get("shape")
    if name == "rand":
        return s.rand_bits(shape, a["dtype"])
    if name in ("randn", "normal", "kaiming_normal"):
        s.words(2 * int(np.prod(shape)))  # rand(2, *shape) in float32
        return None
    if name == "uniform":
        return s.uniform(shape, a["low"], a["high"])
    if name == "randint":
        return (np.float32(a["high"] - a["low"]) * s.rand(shape)).astype(np.int32) + np.int32(a["low"])
    if name == "scaled_uniform":
        return s.uniform(shape, -1.0, 1.0) * np.float32(scaled_factor(int(np.prod(shape))))
    if name == "glorot_uniform":
        b = math.sqrt(6.0 / (shape[0] + int(np.prod(shape[1:]))))
        return s.uniform(shape, -b, b)
    if name == "kaiming_uniform":
        b = math.sqrt(6.0 / (1 + a["a"] * a["a"]) / int(np.prod(shape[1:])))
        return s.uniform(shape, -b, b)
    if name == "randperm":
        return np.argsort(s.rand([a["n"]]), kind="stable").astype(np.int32)
    if name == "dropout":
        keep = ~(s.rand([8]) < np.float32(a["p"]))
        return np.where(keep, np.float32(1), np.float32(0)) * (np.float32(1) / np.float32(1.0 - a["p"]))
    if name == "multinomial":
        w = np.array(a["weights"], np.float32)
        cw = np.zeros(len(w), np.float32)
        acc = np.float32(0)
        for i, x in enumerate(w):
            acc = acc + x
            cw[i] = acc
        cdf = cw * (np.float32(1) / cw[-1])
        u = s.rand([a["num_samples"], 1, 1])
        return (~(u < cdf[None, None, :])).sum(axis=2).reshape(-1).astype(np.int32)
    if name.startswith("nn.Linear"):
        b = 1 / math.sqrt(a["in"])
        w = s.uniform([a["out"], a["in"]], -b, b)
        s.uniform([a["out"]], -b, b)
        return w
    if name.startswith("nn.Conv2d"):
        b = 1 / math.sqrt(a["in"] * a["kernel"] ** 2)
        w = s.uniform([a["out"], a["in"], a["kernel"], a["kernel"]], -b, b)
        s.uniform([a["out"]], -b, b)
        return w
    raise ValueError(f"unknown random call {name}")


class Sequence:
    def __init__(self):
        self.stream = None

    def check(self, e, ins, outs):
        a = e["args"]
        if e["op"] == "THREEFRY":
            x, k = ins[0].numpy(), ins[1].numpy()
            want = []
            for xv, kv in zip(x.tolist(), k.tolist()):
                r0, r1 = threefry([xv & M32], [xv >> 32], kv & M32, kv >> 32)
                want.append(int(r1[0]) << 32 | int(r0[0]))
            return outs[0].numpy().tolist() == want or "threefry differs"
        if e["op"] == "random_bits":
            k, c = ins[0].numpy().tolist(), ins[1].numpy().tolist()
            want = random_words(c[0] | c[1] << 32, a["num"], k[0], k[1])
            return outs[0].numpy().tolist() == want.tolist() or "random_bits differs"
        if a["call"] == 0:
            self.stream = Stream(a["seed"])
        want = call(self.stream, e["op"], a)
        if want is None:
            return None
        got = outs[0].bits() if e["op"] == "rand" else outs[0].numpy()
        want = np.asarray(want)
        if got.shape != want.shape:
            return f"shape {got.shape}, expected {want.shape}"
        ok = got.tobytes() == want.astype(got.dtype).tobytes() if e["op"] == "rand" else got.tobytes() == want.tobytes()
        return True if ok else f"{e['op']} differs"
