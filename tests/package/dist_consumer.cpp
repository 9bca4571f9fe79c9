// A C++ program built against the installed maroon::dist_mpi (tests/package/CMakeLists.txt): the
// rule that cuts a batch into shards, and the shard tree's sum, whose bits for three shards are
// (s0 + s1) + s2 in float32 (docs/dist.md), computed here with the CPU's own additions.
// usage: dist_consumer (exit status 0 when both agree)
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "maroon/dist.h"

int main() {
  using maroon::Tensor;
  using maroon::dist::Range;
  bool parts_ok = true;
  const int64_t want_sizes[] = {6, 7, 6, 7};  // 26 samples in 4 shards: floor(i * 26 / 4)
  for (int i = 0; i < 4; ++i) parts_ok &= maroon::dist::part(26, 4, i).size() == want_sizes[i];

  // The middle column tells the tree from other orders: (1e8 - 1e8) + 1 = 1, 1e8 + (-1e8 + 1) = 0.
  std::vector<std::vector<float>> v = {{0.1f, 1e8f, -3.5f}, {0.2f, -1e8f, 1e-30f}, {0.3f, 1.0f, 7.25f}};
  std::vector<Tensor> leaves;
  for (const auto& x : v) leaves.push_back(Tensor::from_vector<float>(x, {3}));
  std::vector<float> got = maroon::dist::tree_sum(Range{0, 3}, [&](Range n) -> std::optional<Tensor> {
                             if (n.size() == 1) return leaves[static_cast<size_t>(n.begin)];
                             return std::nullopt;
                           }).to_vector<float>();
  int wrong = 0;
  for (size_t i = 0; i < 3; ++i) {
    volatile float left = v[0][i] + v[1][i];  // one rounding per addition, as the spec says
    float want = left + v[2][i];
    wrong += std::memcmp(&want, &got[i], sizeof want) != 0;
  }
  std::printf("maroon::dist: shard sizes %s; %d of 3 tree sums differ; built %s MPI\n", parts_ok ? "right" : "WRONG",
              wrong, maroon::dist::have_mpi() ? "with" : "without");
  return parts_ok && wrong == 0 ? 0 : 1;
}
