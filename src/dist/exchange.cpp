// Moving a data-parallel step between ranks (docs/dist.md, "Ranks"). The parameters' elements,
// all tensors together in optimizer order, are cut into R slices (part()); rank q sums slice q.
//   1. Each rank sums the largest subtrees of the shard tree that it holds whole (tree_cover).
//   2. all-to-all: rank q receives slice q of every rank's partial sums and sums the rest of the
//      tree on it.
//   3. all-gather: every rank receives every summed slice, and every shard's loss, count and
//      batch statistics.
// Every addition is tree_sum's, in the tree's order, so the bits are those of one process.
#include <algorithm>
#include <cstring>
#include <map>

#include "dist/step.h"
#include "dist/watchdog.h"

namespace maroon::dist {

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}

uint64_t get_u64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

Tensor tensor_at(const char* p, const Shape& shape, DType d) {
  int64_t n = 1;
  for (int64_t x : shape) n *= x;
  return Tensor::from_bytes(p, static_cast<size_t>(n) * itemsize(d), shape, d);
}

namespace {

std::string str(int64_t v) { return std::to_string(v); }

void put_bytes(std::string& out, const Tensor& t) {
  std::vector<uint8_t> b = t.bytes();
  out.append(reinterpret_cast<const char*>(b.data()), b.size());
}

Range overlap(Range a, Range b) {
  int64_t lo = std::max(a.begin, b.begin);
  return {lo, std::max(lo, std::min(a.end, b.end))};
}

}  // namespace

// Per shard: the loss's dtype and bytes (zero-padded to 8), the count, and for each layer the
// input's element count and the batch mean and variance.
size_t DataParallel::meta_size() const {
  size_t n = 1 + 8 + 8;
  for (auto* bn : bns_) n += 8 + 2 * static_cast<size_t>(bn->running_mean->nbytes());
  return n;
}

std::string DataParallel::meta_bytes(const Shard& sh) const {
  std::string m(1, static_cast<char>(sh.loss.dtype()));
  put_bytes(m, sh.loss);
  m.resize(1 + 8, '\0');
  put_u64(m, static_cast<uint64_t>(sh.count));
  for (const auto& st : sh.stats) {
    put_u64(m, static_cast<uint64_t>(st.numel));
    put_bytes(m, st.mean);
    put_bytes(m, st.var);
  }
  if (m.size() != meta_size()) throw Error("[dist] a shard's batch statistics do not have their layers' sizes");
  return m;
}

void DataParallel::read_metas(const std::string& bytes, size_t at, int64_t n, Sums& into) const {
  for (int64_t k = 0; k < n; ++k, at += meta_size()) {
    const char* p = bytes.data() + at;
    auto ld = static_cast<DType>(static_cast<uint8_t>(p[0]));
    if (!is_float(ld) || itemsize(ld) > 8) throw Error("[dist] a rank sent a loss that is not a float");
    into.losses.push_back(tensor_at(p + 1, {}, ld));
    into.count += static_cast<int64_t>(get_u64(p + 9));
    p += 17;
    std::vector<nn::BatchNorm::BatchStats> st;
    for (auto* bn : bns_) {
      const Shape& c = bn->running_mean->shape();
      DType d = bn->running_mean->dtype();
      size_t nb = static_cast<size_t>(bn->running_mean->nbytes());
      st.push_back({tensor_at(p + 8, c, d), tensor_at(p + 8 + nb, c, d), static_cast<int64_t>(get_u64(p))});
      p += 8 + 2 * nb;
    }
    into.stats.push_back(std::move(st));
  }
}

DataParallel::Sums DataParallel::exchanged_sums(const std::vector<Shard>& local) {
  const int R = comm_.size(), me = comm_.rank();
  const size_t isz = itemsize(dtype_), n_params = opt_.params().size();
  const Range mine = my_shards();
  auto param_range = [&](size_t i) { return Range{offset_[i], offset_[i] + opt_.params()[i].numel()}; };

  // 1. Partial sums of my whole subtrees; slice q of each goes to rank q, subtree by subtree.
  const std::vector<Range> covers = tree_cover(shards_, mine);
  std::vector<std::string> send(static_cast<size_t>(R));
  for (int q = 0; q < R; ++q) send[q].reserve(covers.size() * static_cast<size_t>(part(numel_, R, q).size()) * isz);
  for (Range node : covers)
    for (size_t i = 0; i < n_params; ++i) {
      std::vector<uint8_t> b = tree_sum(node, [&](Range n) -> std::optional<Tensor> {
                                 if (n.size() == 1) return local.at(static_cast<size_t>(n.begin - mine.begin)).grads[i];
                                 return std::nullopt;
                               }).bytes();
      for (int q = 0; q < R; ++q) {
        Range o = overlap(part(numel_, R, q), param_range(i));
        if (o.size() == 0) continue;
        send[q].append(reinterpret_cast<const char*>(b.data()) + (o.begin - offset_[i]) * isz, o.size() * isz);
      }
    }
  std::vector<std::string> recv;
  {
    Watchdog::Waiting w(watchdog_.get(), "gradient exchange (all-to-all)", steps_ + 1);
    recv = comm_.all_to_all(send);
  }
  // 2. The rest of the tree on my slice, from every rank's partial sums.
  const Range e = part(numel_, R, me);
  std::map<Range, Tensor> have;
  for (int q = 0; q < R; ++q) {
    std::vector<Range> nodes = tree_cover(shards_, part(shards_, R, q));
    size_t slice = static_cast<size_t>(e.size()) * isz;
    if (recv.at(q).size() != nodes.size() * slice)
      throw Error("[dist] step " + str(steps_ + 1) + ": rank " + str(q) + " sent " + str(recv[q].size()) +
                  " gradient bytes, expected " + str(nodes.size() * slice));
    for (size_t j = 0; j < nodes.size(); ++j) have.emplace(nodes[j], tensor_at(recv[q].data() + j * slice, {e.size()}, dtype_));
  }
  std::vector<uint8_t> sum = tree_sum({0, shards_}, [&](Range n) -> std::optional<Tensor> {
                               auto it = have.find(n);
                               return it == have.end() ? std::nullopt : std::optional<Tensor>(it->second);
                             }).bytes();
  // 3. Every slice and every shard's results, to every rank.
  std::string msg(reinterpret_cast<const char*>(sum.data()), sum.size());
  for (const Shard& sh : local) msg += meta_bytes(sh);
  std::vector<std::string> all;
  {
    Watchdog::Waiting w(watchdog_.get(), "gradient exchange (all-gather)", steps_ + 1);
    all = comm_.all_gather(msg);
  }
  Sums sums;
  for (int q = 0; q < R; ++q) {
    size_t want = static_cast<size_t>(part(numel_, R, q).size()) * isz + part(shards_, R, q).size() * meta_size();
    if (all.at(q).size() != want)
      throw Error("[dist] step " + str(steps_ + 1) + ": rank " + str(q) + " sent " + str(all[q].size()) +
                  " bytes of sums and statistics, expected " + str(want));
    read_metas(all[q], part(numel_, R, q).size() * isz, part(shards_, R, q).size(), sums);
  }
  // Each parameter's gradient from the slices that hold its elements.
  for (size_t i = 0; i < n_params; ++i) {
    std::vector<char> g(static_cast<size_t>(param_range(i).size()) * isz);
    for (int q = 0; q < R; ++q) {
      Range s = part(numel_, R, q), o = overlap(s, param_range(i));
      if (o.size() == 0) continue;
      std::memcpy(g.data() + (o.begin - offset_[i]) * isz, all[q].data() + (o.begin - s.begin) * isz, o.size() * isz);
    }
    sums.grads.push_back(tensor_at(g.data(), opt_.params()[i].shape(), dtype_));
  }
  return sums;
}

}  // namespace maroon::dist
