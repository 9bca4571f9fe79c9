"""Composites, optimizers, the random stream and the MNIST run of docs/spec-model.md, recomputed
with numpy float32 arithmetic (each numpy float32 operation is one IEEE operation rounded to
nearest-even, sqrt and division included) and Python integers. Functions built on EXP2, LOG2, SIN
or POW (exp, log, sigmoid, softmax, the losses, randn) are not checked here."""
import numpy as np

import ieee
import mnist
import random_stream
from tensors import T

F = np.float32


def same(got, want):
    want = np.asarray(want)
    return got.shape == tuple(want.shape) and got.data == want.astype(want.dtype.newbyteorder("<")).tobytes()


def fold_add(terms, axis):
    """Left fold from +0 along `axis` (last index fastest when several: pass them flattened)."""
    terms = np.moveaxis(terms, axis, -1)
    acc = np.zeros(terms.shape[:-1], F)
    for k in range(terms.shape[-1]):
        acc = acc + terms[..., k]
    return acc


def fold_fma(a, b, axis):
    """Left fold from +0 of MULACC along `axis` (exact products, one rounding per step)."""
    a, b = np.broadcast_arrays(a, b)
    a, b = np.moveaxis(a, axis, -1), np.moveaxis(b, axis, -1)
    f = ieee.FORMATS["float32"]
    out = np.zeros(a.shape[:-1], np.uint32)
    for idx in np.ndindex(*a.shape[:-1]):
        acc = 0
        for x, y in zip(a[idx].view(np.uint32), b[idx].view(np.uint32)):
            acc = ieee.fma(f, int(x), int(y), acc, "nearest")
        out[idx] = acc
    return out.view(F)


def recip(x): return F(1) / x


def matmul(a, b): return fold_add(a[:, None, :] * b.T[None, :, :], 2)


def conv2d(x, w, bias, stride, pad):
    n, cin, h, wd = x.shape
    cout, _, kh, kw = w.shape
    xp = np.zeros((n, cin, h + 2 * pad, wd + 2 * pad), F)
    xp[:, :, pad:pad + h, pad:pad + wd] = x
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, cout, oh, ow), F)
    for ci in range(cin):          # the fold runs over (cin, kh, kw) in row-major order
        for ky in range(kh):
            for kx in range(kw):
                patch = xp[:, ci, ky:ky + stride * oh:stride, kx:kx + stride * ow:stride]
                out = out + patch[:, None] * w[None, :, ci, ky, kx, None, None]
    return out + bias[None, :, None, None]


def optimizer(name, args, p, grads):
    """The parameter after each step and the state after the last (Maroon's op order)."""
    lr, out = F(args["lr"]), []
    if name.startswith("optim/adam"):
        b1, b2, eps, wd = args["b1"], args["b2"], args["eps"], args.get("weight_decay", 0.0)
        m, v, b1_t, b2_t = np.zeros_like(p), np.zeros_like(p), np.ones(1, F), np.ones(1, F)
        for g in grads:
            b1_t, b2_t = b1_t * F(b1), b2_t * F(b2)
            m = F(b1) * m + F(1.0 - b1) * g
            v = F(b2) * v + F(1.0 - b2) * (g * g)
            m_hat = m * recip(F(1) + b1_t * F(-1))
            v_hat = v * recip(F(1) + b2_t * F(-1))
            up = m_hat * recip(np.sqrt(v_hat) + F(eps)) + F(wd) * p
            p = p + ((lr * F(1.0)) * up) * F(-1)
            out.append(p)
        return out + [m, v, b1_t, b2_t]
    mom, wd, nesterov = args.get("momentum", 0.0), args.get("weight_decay", 0.0), args.get("nesterov", False)
    b = np.zeros_like(p)
    for g in grads:
        if wd > 0:
            g = g + F(wd) * p
        if mom:
            b = F(mom) * b + g
            g = g + F(mom) * b if nesterov else b
        p = p + ((g * F(1.0)) * lr) * F(-1)
        out.append(p)
    return out + ([b] if mom else [])


def batchnorm_train(x, w, b, eps, momentum):
    n = F(x.size // x.shape[1])
    per_c = np.moveaxis(x, 1, -1).reshape(-1, x.shape[1])     # (n, h, w) in row-major order
    mean = fold_add(per_c, 0) * recip(n)
    y = x + (mean * F(-1))[None, :, None, None]
    var = fold_add(np.moveaxis(y * y, 1, -1).reshape(-1, x.shape[1]), 0) * recip(n)
    rm = F(1 - momentum) * np.zeros(3, F) + F(momentum) * mean
    rv = F(1 - momentum) * np.ones(3, F) + F(momentum * x.size / (x.size - x.shape[1])) * var
    return bn_apply(x, w, b, mean, var, eps), rm, rv


def bn_apply(x, w, b, mean, var, eps):
    s = (1, -1, 1, 1)
    invstd = recip(np.sqrt(var + F(eps)))
    return (((x + (mean * F(-1)).reshape(s)) * w.reshape(s)) * invstd.reshape(s)) + b.reshape(s)


def composite(e, x, outs):
    """True or a mismatch for the composites checked here; None for the others."""
    op, a = e["id"], e["args"]
    with np.errstate(all="ignore"):
        if op.startswith("div/specials/"):
            f, mode = ieee.FORMATS["float32"], e["round"]
            want = [ieee.mul(f, p, ieee.recip(f, q, mode), mode) for p, q in zip(x[0].view(np.uint32).tolist(),
                                                                                  x[1].view(np.uint32).tolist())]
            return [np.array(want, np.uint32).view(F)]
        if op == "div":
            p, q, g = x
            r = recip(q)
            return [p * r, r * g, (((p * g) * F(-1)) * r) * r]
        if op == "relu":
            c = F(0) < x[0]
            return [np.where(c, x[0], F(0)), np.where(c, x[1], F(0))]
        if op == "sqrt":
            r = np.sqrt(x[0])
            return [r, x[1] * recip(r * F(2))]
        if op == "sum/float16":
            return [fold_add(x[0].astype(F), 1).astype(np.float16)]
        if op in ("mean", "mean/all"):
            t, g = x
            flat = t.reshape(-1) if op == "mean/all" else t
            r = recip(F(flat.shape[-1]))
            grad = np.broadcast_to((r * g).reshape(-1, 1) if op == "mean" else r * g, t.shape)
            return [fold_add(flat, -1) * r, grad]
        if op == "matmul":
            p, q, g = x
            return [matmul(p, q), fold_add(q[None, :, :] * g[:, None, :], 2), fold_add(p.T[:, None, :] * g.T[None, :, :], 2)]
        if op == "matmul/fused":
            p, q, g = x
            return [fold_fma(p[:, None, :], q.T[None, :, :], 2), fold_fma(g[:, None, :], q[None, :, :], 2),
                    fold_fma(g.T[None, :, :], p.T[:, None, :], 2)]
        if op == "linear":
            p, w, b, g = x
            return [matmul(p, w.T) + b, fold_add(w.T[None, :, :] * g[:, None, :], 2),
                    fold_add(p.T[None, :, :] * g.T[:, None, :], 2), fold_add(g, 0)]
        if op.startswith("conv2d"):
            return [conv2d(x[0], x[1], x[2], a["stride"], a["padding"])]   # the forward result only
        if op == "max_pool2d":
            t, g = x
            win = t.reshape(1, 2, 2, 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(1, 2, 2, 2, 4)
            mx = win.max(axis=-1)   # exact: no NaN in this input
            mask = (win == mx[..., None]).astype(F)
            grad = (mask * recip(fold_add(mask, -1))[..., None]) * g[..., None]
            # Back through pool's repeat (an EXPAND): each element's copies are summed from +0,
            # and here only one copy is read, so the sum is the value (with -0 made +0).
            return [mx, F(0) + grad.reshape(1, 2, 2, 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(t.shape)]
        if op.startswith("optim/"):
            return optimizer(op, a, x[0], x[1:])
        if op == "gradient_order":
            xv, k, g = x
            return [(xv * k[0] + xv * k[1]) + xv * k[2], ((k[2] * g) + (k[1] * g)) + (k[0] * g)]
        if op == "batchnorm/train":
            out, rm, rv = batchnorm_train(x[0], x[1], x[2], a["eps"], a["momentum"])
            return [out, None, None, None, rm, rv]
    return None


class Context:
    def __init__(self, store, data_dir):
        self.store, self.data_dir, self.bn_state = store, data_dir, None
        self.random = random_stream.Sequence()
        self.mnist = mnist.Run(data_dir)

    def check(self, group, e, ins, outs):
        if group == "random":
            return self.random.check(e, ins, outs)
        if group == "mnist":
            return self.mnist.check(e, ins, outs, self.random)
        if e["id"] == "batchnorm/eval":
            if self.bn_state is None:
                return None
            w, b, rm, rv = self.bn_state
            return compare([bn_apply(ins[0].numpy(), w, b, rm, rv, 1e-5)], outs)
        x = [t.numpy() if t.dtype != "bfloat16" else None for t in ins]
        want = composite(e, x, outs)
        if want is None:
            return None
        if e["id"] == "batchnorm/train":
            self.bn_state = (x[1], x[2], want[4], want[5])
        return compare(want, outs)


def compare(want, outs):
    checked = 0
    for i, (w, got) in enumerate(zip(want, outs)):
        if w is None:
            continue
        checked += 1
        if not same(got, np.asarray(w)):
            return f"output {i} differs"
    return True if checked else None
