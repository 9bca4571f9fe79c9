"""A short training run whose final weights hash to the SHA-256 stored in
tests/data/training_digest.txt; tests/api/training_digest_test.cpp runs the same program in C++
and compares with the same file, so Python and C++ give the same bits."""
import hashlib
import os

from maroon import Context, Tensor, nn
from maroon.nn.optim import Adam
from maroon.nn.state import get_parameters

DIGEST = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "training_digest.txt")


def train():
    """An MLP 16-32-4 with Adam, 8 steps over 4 batches of 32 synthetic examples: inputs from
    Tensor.rand and labels from Tensor.randint after Tensor.manual_seed(42)."""
    Tensor.manual_seed(42)
    l1, l2 = nn.Linear(16, 32), nn.Linear(32, 4)
    opt = Adam(get_parameters([l1, l2]), lr=0.01)
    xs, ys = Tensor.rand(4, 32, 16), Tensor.randint(4, 32, low=0, high=4)
    losses = []
    with Context(TRAINING=1):
        for step in range(8):
            x, y = xs[step % 4], ys[step % 4]
            opt.zero_grad()
            loss = l2(l1(x).relu()).sparse_categorical_crossentropy(y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
    h = hashlib.sha256()
    for t in (l1.weight, l1.bias, l2.weight, l2.bias):
        h.update(t.numpy().tobytes())
    return h.hexdigest(), losses


def test_training_weights_hash_to_the_stored_digest():
    digest, losses = train()
    with open(DIGEST) as f:
        assert digest == f.read().split()[0]
    assert losses[-1] < losses[0]  # it learns


def test_training_is_repeatable_in_one_process():
    assert train()[0] == train()[0]
