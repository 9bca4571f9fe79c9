"""Deterministic data-parallel training (docs/dist.md): the same bits on any number of processes.

A step cuts its global batch into ``shards`` shards (the run's choice, not the number of ranks),
computes each shard's gradient alone, sums the shard gradients over a fixed tree on shard index
with Maroon's own additions, and applies the optimizer once. Run it on R <= shards MPI ranks and
the weights are bit for bit those of one process running every shard::

    from mpi4py import MPI
    from maroon.dist import DataParallel, MPIComm

    dp = DataParallel(opt, shards=4, comm=MPIComm(MPI.COMM_WORLD))
    def shard(begin, end):                 # rows begin:end of this step's batch
        logits = model(x[begin:end])
        loss_sum = logits.sparse_categorical_crossentropy(y[begin:end], reduction="sum")
        return loss_sum, (logits.argmax(1) == y[begin:end]).sum()
    out = dp.step(batch_size, shard)        # out.loss: the batch's mean loss; out.count

Start it with ``mpirun -np R python3 -m mpi4py script.py`` (``-m mpi4py`` ends every rank when
one raises, instead of leaving the others waiting). MPI only moves bytes here (mpi4py's
alltoall, allgather and bcast); it never reduces.
"""
from ._maroon.dist import DataParallel, StepOutput, part, tree_cover  # noqa: F401

__all__ = ["DataParallel", "MPIComm", "SelfComm", "StepOutput", "part", "tree_cover"]


class MPIComm:
    """The byte-moving communicator DataParallel needs, over an mpi4py communicator
    (MPI.COMM_WORLD when none is given)."""

    def __init__(self, comm=None):
        if comm is None:
            from mpi4py import MPI
            comm = MPI.COMM_WORLD
        self.comm = comm

    def rank(self):
        return self.comm.Get_rank()

    def size(self):
        return self.comm.Get_size()

    def all_to_all(self, blocks):
        return self.comm.alltoall(blocks)

    def all_gather(self, data):
        return self.comm.allgather(data)

    def broadcast(self, data, root):
        return self.comm.bcast(data, root=root)


class SelfComm:
    """One process alone (what ``comm=None`` uses)."""

    def rank(self):
        return 0

    def size(self):
        return 1

    def all_to_all(self, blocks):
        return list(blocks)

    def all_gather(self, data):
        return [data]

    def broadcast(self, data, root):
        return data
