"""Bytes a data-parallel step moves per rank (docs/dist.md §4), against a ring all-reduce.

Per step, rank r sends in the all-to-all slice q of each of its c_r partial sums to each other
rank q, and in the all-gather its own summed slice to each other rank (plus a few hundred bytes
of losses and batch statistics per shard and the 64-byte digest broadcast, left out here). A
ring all-reduce (reduce-scatter then all-gather) sends 2 (R-1)/R N b bytes per rank. The table
gives the busiest rank's bytes over the ring's: 1.00 when every rank's shards are one subtree.

    python3 bench/dist/comm_model.py [N]     # N parameters of 4 bytes (default: the MNIST MLP)
"""
import sys

from maroon.dist import part, tree_cover


def rank_bytes(n, shards, ranks, b=4):
    """Bytes each rank sends in one step, by rank."""
    out = []
    for r in range(ranks):
        covers = len(tree_cover(shards, *part(shards, ranks, r)))
        mine = part(n, ranks, r)
        to_others = n - (mine[1] - mine[0])  # elements of the slices other ranks own
        out.append(b * (covers * to_others + (mine[1] - mine[0]) * (ranks - 1)))
    return out


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 784 * 512 + 512 + 512 * 512 + 512 + 512 * 10 + 10
    ranks_list = [2, 3, 4, 8, 16, 64, 256]
    print(f"N = {n} parameters (float32); busiest rank's bytes per step / ring all-reduce's\n")
    print("| S \\ R | " + " | ".join(str(r) for r in ranks_list) + " |")
    print("|---|" + "---|" * len(ranks_list))
    for shards in [4, 12, 16, 64, 256, 1024]:
        cells = []
        for ranks in ranks_list:
            if ranks > shards:
                cells.append("—")
                continue
            ring = 2 * (ranks - 1) * n * 4 / ranks
            cells.append(f"{max(rank_bytes(n, shards, ranks)) / ring:.2f}")
        print(f"| {shards} | " + " | ".join(cells) + " |")
    ranks, shards = 4, 12
    print(f"\nS = {shards}, R = {ranks}: {max(rank_bytes(n, shards, ranks)) / 1e6:.2f} MB per rank per step "
          f"(ring all-reduce {2 * (ranks - 1) * n * 4 / ranks / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
