// The architecture digest (graph_digest) and flip_bit.
#include <unordered_map>

#include "verify/digest.h"
#include "verify/tracer.h"

namespace maroon::verify {

namespace {

void put(Hasher& h, const std::string& s) {
  uint64_t n = s.size();
  h.update(&n, 8);  // little-endian hosts only, as everywhere in Maroon
  h.update(s);
}

void put_int(Hasher& h, int64_t v) { h.update(&v, 8); }

}  // namespace

Digest graph_digest(const std::vector<Tensor>& outputs, const nn::StateDict& leaves) {
  std::unordered_map<const Node*, std::string> names;
  for (auto& [k, t] : leaves) names.emplace(t.node().get(), k);
  std::unordered_map<const Node*, int64_t> index;
  Hasher h;
  put(h, "maroon-graph/1");
  // Post-order, sources first (the order schedule() uses), stopping at realized nodes.
  std::vector<std::pair<const Node*, size_t>> stack;
  auto visit = [&](const Node* root) {
    if (index.count(root)) return;
    stack.push_back({root, 0});
    while (!stack.empty()) {
      auto& [n, i] = stack.back();
      // A realized node is a leaf: its history (an initialiser's random draws) is not the model.
      if (!n->realized && i < n->src.size()) {
        const Node* s = n->src[i++].get();
        if (!index.count(s)) stack.push_back({s, 0});
        continue;
      }
      if (!index.count(n)) {
        auto it = names.find(n);
        bool leaf = n->realized;
        put(h, leaf ? "BUFFER" : std::string(op_name(n->op)));
        put(h, std::string(dtype_name(n->dtype)));
        put_int(h, static_cast<int64_t>(n->shape.size()));
        for (int64_t d : n->shape) put_int(h, d);
        put(h, std::string(round_name(n->rnd)));
        put(h, leaf ? (it != names.end() ? it->second : "input") : arg_string(*n));
        put_int(h, leaf ? 0 : static_cast<int64_t>(n->src.size()));
        if (!leaf)
          for (const NodePtr& s : n->src) put_int(h, index.at(s.get()));
        index.emplace(n, static_cast<int64_t>(index.size()));
      }
      stack.pop_back();
    }
  };
  for (const Tensor& t : outputs) visit(t.node().get());
  return h.finish();
}

void flip_bit(Tensor& t, int64_t element, int bit) {
  if (element < 0 || element >= t.numel())
    throw IndexError("[flip_bit] element " + std::to_string(element) + " out of range for " + std::to_string(t.numel()) +
                     " elements");
  size_t sz = itemsize(t.dtype());
  if (bit < 0 || bit >= static_cast<int>(8 * sz))
    throw IndexError("[flip_bit] bit " + std::to_string(bit) + " out of range for " + std::string(dtype_name(t.dtype())));
  std::vector<uint8_t> b = t.bytes();
  b[static_cast<size_t>(element) * sz + static_cast<size_t>(bit / 8)] ^= static_cast<uint8_t>(1u << (bit % 8));
  t.assign(Tensor::from_bytes(b.data(), b.size(), t.shape(), t.dtype()));
}

}  // namespace maroon::verify
