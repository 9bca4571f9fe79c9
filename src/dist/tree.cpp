// The fixed rules of the data-parallel step (docs/dist.md): how items are cut into parts, and the
// binary tree over shard index along which the shards' gradients are summed.
#include "maroon/dist.h"

#include <string>

namespace maroon::dist {

Range part(int64_t n, int64_t k, int64_t i) {
  if (k <= 0 || n < 0 || i < 0 || i >= k)
    throw Error("[dist] part " + std::to_string(i) + " of " + std::to_string(n) + " items in " + std::to_string(k) +
                " parts does not exist");
  // n * i overflows only past 2^63 / k items; batch sizes, shard counts and parameter counts are
  // far below, but a wrong argument must not be undefined behaviour.
  if (n > 0 && k > INT64_MAX / n) throw Error("[dist] " + std::to_string(n) + " items are too many to cut");
  return {n * i / k, n * (i + 1) / k};
}

int64_t tree_mid(Range node) { return node.begin + (node.size() + 1) / 2; }

namespace {
void cover(Range node, Range mine, std::vector<Range>& out) {
  if (node.end <= mine.begin || mine.end <= node.begin) return;
  if (mine.begin <= node.begin && node.end <= mine.end) {
    out.push_back(node);
    return;
  }
  int64_t mid = tree_mid(node);  // partly inside, so it has at least two shards
  cover({node.begin, mid}, mine, out);
  cover({mid, node.end}, mine, out);
}
}  // namespace

std::vector<Range> tree_cover(int64_t shards, Range mine) {
  if (shards <= 0) throw Error("[dist] the shard count must be positive, got " + std::to_string(shards));
  std::vector<Range> out;
  cover({0, shards}, mine, out);
  return out;
}

Tensor tree_sum(Range node, const std::function<std::optional<Tensor>(Range)>& have) {
  if (std::optional<Tensor> v = have(node)) return *v;
  if (node.size() <= 1)
    throw Error("[dist] the value of shard " + std::to_string(node.begin) + " is missing from the sum");
  // The spec fixes the mode of these additions; the caller's rounding scope does not reach them.
  RoundingScope nearest(Round::NearestEven);
  int64_t mid = tree_mid(node);
  return tree_sum({node.begin, mid}, have).add(tree_sum({mid, node.end}, have));
}

std::vector<std::string> SelfComm::all_to_all(const std::vector<std::string>& send) {
  if (send.size() != 1) throw Error("[dist] all_to_all on one rank needs one block, got " + std::to_string(send.size()));
  return send;
}

}  // namespace maroon::dist
