#!/usr/bin/python3
"""A character-level GPT trained on the GPL-3 text Debian installs, then sampled: written as
tinygrad's examples/gpt2.py and extra/models/transformer.py are, with Maroon's tinygrad API.

    /usr/bin/python3 examples/char_gpt.py                  # 200 steps of the GPT-2 variant (~1 min)
    /usr/bin/python3 examples/char_gpt.py --llama          # RMSNorm, SiLU-gated MLP, rotary positions
    /usr/bin/python3 examples/char_gpt.py --save gpt.safetensors   # ... and keep the weights
    /usr/bin/python3 examples/char_gpt.py --infer gpt.safetensors  # inference digest from the file
    /usr/bin/python3 examples/char_gpt.py --steps 3 --tiny --json   # what the tests run

The loss curve, the sample, the weights digest and the inference digest (maroon.inference_digest
of the logits on the corpus' first window, the function `maroon infer` prints) are the same bits
on every machine, SIMD target (MAROON_SIMD) and thread count (MAROON_THREADS). src/models/char_gpt.cpp is the same program in
C++ (the determinism battery runs it under qemu); tests/data/char_gpt_digest.txt holds the
digests both must print.
"""
import argparse
import functools
import hashlib
import json
import struct
import sys
import time

from maroon import Context, Tensor, dtypes, inference_digest, nn
from maroon.nn.optim import Adam
from maroon.nn.state import get_parameters, get_state_dict, load_state_dict, safe_load, safe_save, safe_save_bytes

CORPUS = "/usr/share/common-licenses/GPL-3"  # Debian's base-files
CORPUS_SHA256 = "3972dc9744f6499f0f9b2dbf76696f2ae7ad8af9b23dde66d6af86c9dfb36986"


@functools.cache
def rope_table(head_dim, T):
  return nn.precompute_freqs_cis(head_dim, T)


class Attention:
  def __init__(self, dim, n_heads, bias):
    self.c_attn = nn.Linear(dim, 3 * dim, bias=bias)
    self.c_proj = nn.Linear(dim, dim, bias=bias)
    self.n_heads = n_heads

  def __call__(self, x, rope):
    B, T, C = x.shape
    q, k, v = [t.reshape(B, T, self.n_heads, C // self.n_heads).transpose(1, 2)
               for t in self.c_attn(x).reshape(B, T, 3, self.n_heads, C // self.n_heads).chunk(3, 2)]
    if rope:
      q, k = nn.apply_rope(q, rope_table(C // self.n_heads, T)), nn.apply_rope(k, rope_table(C // self.n_heads, T))
    y = q.scaled_dot_product_attention(k, v, is_causal=True)
    return self.c_proj(y.transpose(1, 2).reshape(B, T, C))


class FeedForward:  # GPT-2: c_proj(gelu(c_fc(x)))
  def __init__(self, dim, hidden):
    self.c_fc, self.c_proj = nn.Linear(dim, hidden), nn.Linear(hidden, dim)

  def __call__(self, x): return self.c_proj(self.c_fc(x).gelu())


class GatedFeedForward:  # LLaMA: w2(silu(w1(x)) * w3(x))
  def __init__(self, dim, hidden):
    self.w1, self.w2, self.w3 = nn.Linear(dim, hidden, bias=False), nn.Linear(hidden, dim, bias=False), nn.Linear(dim, hidden, bias=False)

  def __call__(self, x): return self.w2(self.w1(x).silu() * self.w3(x))


class TransformerBlock:
  def __init__(self, dim, n_heads, llama):
    norm = nn.RMSNorm if llama else nn.LayerNorm
    self.ln_1 = norm(dim)
    self.attn = Attention(dim, n_heads, bias=not llama)
    self.ln_2 = norm(dim)
    self.mlp = GatedFeedForward(dim, 8 * dim // 3) if llama else FeedForward(dim, 4 * dim)
    self.rope = llama

  def __call__(self, x):
    h = x + self.attn(self.ln_1(x), self.rope)
    return h + self.mlp(self.ln_2(h))


class GPT:
  def __init__(self, vocab_size, block_size=32, dim=64, n_heads=4, n_layers=2, llama=False):
    self.block_size = block_size
    self.wte = nn.Embedding(vocab_size, dim)
    self.wpe = None if llama else nn.Embedding(block_size, dim)
    self.h = [TransformerBlock(dim, n_heads, llama) for _ in range(n_layers)]
    self.ln_f = nn.RMSNorm(dim) if llama else nn.LayerNorm(dim)
    self.lm_head = nn.Linear(dim, vocab_size, bias=False)

  def __call__(self, tokens):
    x = self.wte(tokens)
    if self.wpe is not None: x = x + self.wpe(Tensor.arange(tokens.shape[1]))
    for block in self.h: x = block(x)
    return self.lm_head(self.ln_f(x))


def load_corpus(path=CORPUS, sha256=CORPUS_SHA256):
  data = open(path, "rb").read()
  if (got := hashlib.sha256(data).hexdigest()) != sha256:
    raise SystemExit(f"char_gpt: {path} has SHA-256 {got}, expected {sha256}: refusing another version of the file")
  vocab = sorted(set(data))
  index = {b: i for i, b in enumerate(vocab)}
  return bytes(vocab), [index[b] for b in data]


def get_batch(ids, batch, T):
  starts = Tensor.randint(batch, low=0, high=len(ids) - T - 1).tolist()
  x = Tensor([ids[s:s + T] for s in starts], dtype=dtypes.int32)
  y = Tensor([ids[s + 1:s + T + 1] for s in starts], dtype=dtypes.int32)
  return x, y


def sample(model, vocab, prompt, n):
  ctx = [vocab.index(c) for c in prompt.encode()]
  for _ in range(n):
    window = ctx[-model.block_size:]
    logits = model(Tensor([window], dtype=dtypes.int32))[0, -1]
    ctx.append(int(logits.softmax().multinomial().item()))
  return prompt + bytes(vocab[i] for i in ctx[len(prompt):]).decode("latin-1")


def infer(model, ids):
  """The inference digest of the logits on the corpus' first window, training off."""
  with Context(TRAINING=0):
    return inference_digest([model(Tensor([ids[:model.block_size]], dtype=dtypes.int32))])


def train(steps, batch, cfg, lr=3e-3, seed=1337, prompt="This License", sample_chars=80, log=None, save=None):
  vocab, ids = load_corpus()
  Tensor.manual_seed(seed)
  model = GPT(len(vocab), **cfg)
  opt = Adam(get_parameters(model), lr=lr)
  losses = []
  with Context(TRAINING=1):
    for step in range(steps):
      t0 = time.perf_counter()
      x, y = get_batch(ids, batch, model.block_size)
      opt.zero_grad()
      loss = model(x).reshape(-1, len(vocab)).sparse_categorical_crossentropy(y.reshape(-1))
      loss.backward()
      opt.step()
      losses.append(loss.item())
      if log: log(f"step {step:4d}  loss {losses[-1]:.4f}  {(time.perf_counter() - t0) * 1e3:6.0f} ms")
  text = sample(model, vocab, prompt, sample_chars)
  if save: safe_save(get_state_dict(model), save)
  return {"losses": losses, "sample": text, "inference_digest": infer(model, ids),
          "loss_digest": hashlib.sha256(struct.pack(f"<{len(losses)}f", *losses)).hexdigest(),
          "sample_digest": hashlib.sha256(text.encode("latin-1")).hexdigest(),
          "weights_digest": hashlib.sha256(safe_save_bytes(get_state_dict(model))).hexdigest()}


TINY = {"block_size": 16, "dim": 32, "n_heads": 2, "n_layers": 2}

if __name__ == "__main__":
  ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("--steps", type=int, default=200)
  ap.add_argument("--batch", type=int, default=16)
  ap.add_argument("--llama", action="store_true", help="RMSNorm, SiLU-gated MLP and rotary positions")
  ap.add_argument("--tiny", action="store_true", help=f"the tests' model: {TINY}")
  ap.add_argument("--sample", type=int, default=80, help="characters to sample")
  ap.add_argument("--json", action="store_true", help="print the result as one JSON object")
  ap.add_argument("--save", metavar="PATH", help="write the trained weights (.safetensors)")
  ap.add_argument("--infer", metavar="PATH", help="load weights (same --tiny/--llama) and print their inference digest")
  args = ap.parse_args()
  cfg = dict(TINY if args.tiny else {}, llama=args.llama)
  if args.infer:
    vocab, ids = load_corpus()
    model = GPT(len(vocab), **cfg)
    load_state_dict(model, safe_load(args.infer))
    print(json.dumps({"inference_digest": infer(model, ids)}) if args.json else f"inference_digest: {infer(model, ids)}")
    sys.exit(0)
  out = train(args.steps, args.batch, cfg, sample_chars=args.sample, save=args.save,
              log=None if args.json else lambda s: print(s, file=sys.stderr))
  if args.json:
    print(json.dumps(out))
  else:
    print(f"sample: {out['sample']!r}")
    for k in ("loss_digest", "sample_digest", "weights_digest", "inference_digest"):
      print(f"{k}: {out[k]}")
