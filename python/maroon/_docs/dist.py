"""Docstrings of maroon._maroon.dist, the data-parallel step (``docs/dist.md``); maroon/dist.py
re-exports it with the communicators (maroon/_docs/__init__.py attaches them)."""
from .tensor_shape import _doc

_SAME = "Any number of ranks running the shards gives the bits of one process running them all."

DOCS = {
    "dist.part": _doc("The one rule that cuts ``n`` items into ``k`` contiguous parts: part ``i`` is "
                      "``[i * n // k, (i + 1) * n // k)``. It cuts a batch into shards, the shards among "
                      "the ranks and the gradient's elements into the slices each rank sums.",
                      ["n: the items.", "k: the parts, at least 1.", "i: which part, 0 .. k-1."], "",
                      "maroon._maroon.dist.part(26, 4, 1)"),
    "dist.tree_cover": _doc("The largest nodes of the shard tree over ``shards`` shards inside the shards "
                            "``[begin, end)``, left to right: the partial sums a rank holding those shards "
                            "computes before anything moves.",
                            ["shards: the tree's shard count.", "begin, end: the rank's shards."],
                            "Node [lo, hi) is the sum of [lo, mid) and [mid, hi), mid = lo + ceil((hi - lo) / 2).",
                            "maroon._maroon.dist.tree_cover(12, 3, 9)"),
    "dist.StepOutput": "What ``DataParallel.step`` returns: ``loss`` (the batch's mean loss) and ``count``.",
    "dist.StepOutput.loss": "The tree sum of the shards' losses, each divided by the batch: the batch's mean loss.",
    "dist.StepOutput.count": "The sum over the shards of what each shard function returned as its count (0 if none).",
    "dist.DataParallel": _doc(
        "The data-parallel step over an optimizer's parameters: ``DataParallel(optimizer, shards, comm=None, "
        "batchnorms=[], timeout=600.0)``.",
        ["optimizer: the optimizer whose parameters the step updates (one float dtype).",
         "shards: the shard count S, the run's choice; the ranks must be at most S.",
         "comm: an object with rank(), size(), all_to_all, all_gather and broadcast over bytes "
         "(``maroon.dist.MPIComm``, ``SelfComm``), or None for one process.",
         "batchnorms: the BatchNorm layers whose running statistics the forward updates; each shard's are "
         "applied in shard order.",
         "timeout: seconds a rank waits for the others in one exchange before it ends its process (0: forever)."],
        _SAME),
    "dist.DataParallel.step": _doc(
        "One step: calls ``fn(begin, end)`` for each of this rank's shards (rows begin:end of the batch), with "
        "training on, sums the shard gradients over the shard tree and applies the optimizer once.",
        ["batch: the global batch size, the same on every rank.",
         "fn: returns the shard's summed loss (a Tensor), or (summed loss, count)."],
        "Each shard's loss is divided by ``batch``, so the gradients add up to the batch mean's. With several "
        "ranks, every rank checks its parameters' digest against rank 0's after the update. " + _SAME),
    "dist.DataParallel.shards": "The shard count S.",
    "dist.DataParallel.my_shards": "The shards this rank computes, ``(begin, end)``: ``part(shards, ranks, rank)``.",
    "dist.DataParallel.steps_done": "The steps taken so far.",
    "dist.DataParallel.state_digest": _doc(
        "SHA-256 (hex) of the parameters' bytes in optimizer order, then each BatchNorm's running mean, running "
        "variance and num_batches_tracked: what every rank must agree on.", [], _SAME),
}
