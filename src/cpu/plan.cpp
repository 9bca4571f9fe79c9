// Decides which nodes of a schedule get a buffer and which are fused into their consumer, in
// named steps: count each node's consumers, find the matmul chains to defer, then run each node
// (a reduction, another non-elementwise op, or an elementwise op that is fused or materialized).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "core/counters.h"
#include "core/node_map.h"
#include "core/interrupt.h"
#include "cpu/cpu.h"
#include "cpu/epilogue.h"
#include "cpu/gather.h"
#include "cpu/gemm_fused.h"
#include "cpu/kernel.h"
#include "cpu/keyed_store.h"
#include "cpu/mask_rules.h"
#include "cpu/plan_key.h"
#include "cpu/pool_reduce.h"
#include "cpu/vector_product.h"
#include "cpu/row_layernorm.h"
#include "cpu/row_softmax.h"
#include "maroon/settings.h"
#include "maroon/tensor.h"
#include "ref/executor.h"

namespace maroon::cpu {

// Plan::Impl's members, outside the anonymous namespace below: a type with a member of an
// anonymous-namespace type is GCC's -Wsubobject-linkage once this file is part of a unity batch.
// A sum of a product seen through movement ops (conv2d's input gradient permutes the product
// before summing it): the movement nodes and the product are deferred to the reduction, which
// runs them as a matmul over moved factors, or else computes them as usual first.
// A sum read through movement ops of such a matmul's result that nothing else reads (conv2d's
// input gradient folds its window tensor back onto the image): the matmul and the movement
// nodes are deferred to the outer sum, which computes both together (try_matmul_fold) or else
// one after the other.
struct MatmulChains {
  std::unordered_map<const Node*, std::vector<Node*>> chain;  // REDUCE -> its movement nodes
  std::unordered_map<const Node*, std::pair<std::vector<Node*>, Node*>> fold;  // REDUCE -> (chain, matmul)
  std::unordered_set<const Node*> deferred;
};

// A matmul whose result only one elementwise kernel reads (bias, ReLU, residual add) runs that
// kernel as its epilogue (cpu/epilogue.h): the REDUCE and the views from the kernel's leaf down
// to it (leaf first) are deferred to the kernel's node.
struct EpilogueSite {
  Node* reduce = nullptr;
  std::vector<Node*> views;
  int ops = 0;  // in the kernel (capped as fused kernels are: kMaxFusedOps)
  // A REDUCE MAX over views of the kernel's node (a max-pool after conv2d + bias + ReLU), and
  // those views from the node up: the epilogue may fold its windows from each task's block while
  // it is in cache (epilogue.h, EpiloguePool); its own step then has nothing left to do.
  Node* pool = nullptr;
  std::vector<Node*> pool_views;
};

namespace {

bool is_elementwise(const Node& n) { return maroon::is_elementwise(op_info(n.op).kind); }

// Who reads each node inside the schedule: how many source slots point at it, how many of its
// consumers can fuse it (elementwise ops and REDUCE) and how many cannot, and how many handles
// it has in all (a handle outside the schedule means something else can see it).
// (Outside Consumers: NodeMap keeps its first entries inline, which needs Info's default
// constructor while Consumers is still incomplete.)
struct ConsumerInfo {
  int refs = 0, fusable = 0, other = 0;
  long use_count = 0;
  const Node* a_consumer = nullptr;  // the last (for MAROON_PROFILE's report)
  const Node* first_consumer = nullptr;
};
struct Consumers {
  using Info = ConsumerInfo;
  // One entry per node (five maps of the same keys were a sizeable share of planning's time).
  NodeMap<Info> info;
  const Node* root;

  explicit Consumers(const std::vector<Node*>& order) : root(order.back()) {
    for (Node* n : order) {
      bool fuses = is_elementwise(*n) || n->op == Op::REDUCE;
      for (const NodePtr& s : n->src) {
        Info& i = info[s.get()];
        if (i.refs++ == 0) i.first_consumer = n;
        i.a_consumer = n;
        i.use_count = s.use_count();
        (fuses ? i.fusable : i.other)++;
      }
    }
  }
  Info at(const Node* n) const {
    const Info* i = info.find(n);
    return i ? *i : Info{};
  }
  // Nothing outside the schedule sees n, and only one scheduled slot reads it.
  bool private_to_one(const Node* n) const {
    const Info i = at(n);
    return !n->realized && n != root && i.refs == 1 && i.use_count <= i.refs;
  }
};

// The movement nodes from n's source down to the first node that is not one, while each is
// read by nothing else; returns that node.
Node* movement_chain(Node* n, const Consumers& c, std::vector<Node*>* chain) {
  Node* m = n->src[0].get();
  while (op_info(m->op).kind == OpKind::Movement && c.private_to_one(m)) {
    chain->push_back(m);
    m = m->src[0].get();
  }
  return m;
}

MatmulChains find_matmul_chains(const std::vector<Node*>& order, const Consumers& c) {
  MatmulChains mc;
  for (Node* n : order) {
    if (n->op != Op::REDUCE || n->arg.reduce_op != ReduceOp::ADD) continue;
    std::vector<Node*> chain;
    Node* m = movement_chain(n, c, &chain);
    if (chain.empty() || m->op != Op::MUL || !c.private_to_one(m)) continue;
    for (Node* x : chain) mc.deferred.insert(x);
    mc.deferred.insert(m);
    mc.chain[n] = std::move(chain);
  }
  for (Node* n : order) {
    if (n->op != Op::REDUCE || n->arg.reduce_op != ReduceOp::ADD || mc.deferred.count(n)) continue;
    std::vector<Node*> chain;
    Node* m = movement_chain(n, c, &chain);
    // The product: a sum of a MUL, or the opt-in fused one (REDUCE_MULACC: conv2d's input
    // gradient under FusedScope, `maroon train --fused`), which otherwise wrote out the whole
    // window tensor and folded it with the generic reduction (~3x the fold's time).
    const bool product = (m->op == Op::REDUCE && m->arg.reduce_op == ReduceOp::ADD) || m->op == Op::REDUCE_MULACC;
    if (chain.empty() || !product || !c.private_to_one(m)) continue;
    for (Node* x : chain) mc.deferred.insert(x);
    mc.deferred.insert(m);
    mc.fold[n] = {std::move(chain), m};
  }
  return mc;
}

// MAROON_PROFILE (maroon/settings.def) prints every kernel's time: where a graph spends it, and
// on which path.
class Profiler {
 public:
  Profiler() : on_(setting_flag(SettingId::MAROON_PROFILE)) {}
  bool on() const { return on_; }
  // Every kernel is counted (core/counters.h: GlobalCounters, MAROON_DEBUG's lines).
  template <class F>
  bool timed(const Node* n, const char* path, F&& f) {
    if (!on_) return counted_kernel(*n, path, f);
    auto t0 = std::chrono::steady_clock::now();
    bool r = counted_kernel(*n, path, f);
    double ms = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e3;
    if (ms >= 0.05)
      std::fprintf(stderr, "maroon: %8.2f ms %-11s %-8s %s %s\n", ms, path,
                   std::string(op_name(n->op)).c_str(), std::string(dtype_name(n->dtype)).c_str(),
                   shape_str(n->src.empty() ? n->shape : n->src[0]->shape).c_str());
    return r;
  }

 private:
  bool on_;
};

// A REDUCE: the packed matmul when it matches (through its deferred chain, if any), else the
// deferred nodes computed first and the generic fold.
void run_reduction(Node& n, const MatmulChains& mc, Profiler& prof) {
  if (n.op == Op::REDUCE_MULACC) {  // the opt-in fused product: the matmul's tiles with FMA steps, else gemm_fused.h
    static const std::vector<Node*> none;
    if (!prof.timed(&n, "matmul", [&] { return try_matmul(n); }) &&
        !prof.timed(&n, "vector", [&] { return try_vector_product(n, none); }))
      prof.timed(&n, "fused", [&] { run_fused_reduce(n); return true; });
    return;
  }
  auto fold = mc.fold.find(&n);
  if (fold != mc.fold.end()) {
    Node& mm = *fold->second.second;
    auto mm_chain = mc.chain.find(&mm);
    static const std::vector<Node*> none;
    const std::vector<Node*>& mmc = mm_chain == mc.chain.end() ? none : mm_chain->second;
    if (prof.timed(&n, "matmul+fold", [&] { return try_matmul_fold(n, fold->second.first, mm, mmc); })) return;
    run_reduction(mm, mc, prof);
    mm.realized = true;
    for (size_t i = fold->second.first.size(); i-- > 0;) {
      ref::execute(*fold->second.first[i]);
      fold->second.first[i]->realized = true;
    }
    prof.timed(&n, "reduce", [&] { run_reduce(n); return true; });
    return;
  }
  auto chain = mc.chain.find(&n);
  if (chain == mc.chain.end()) {
    static const std::vector<Node*> none;
    if (!prof.timed(&n, "matmul", [&] { return try_matmul(n); }) &&
        !prof.timed(&n, "vector", [&] { return try_vector_product(n, none); }) &&
        !prof.timed(&n, "window", [&] { return try_window_reduce(n); }) &&
        !prof.timed(&n, "count", [&] { return try_count_reduce(n); }) &&
        !prof.timed(&n, "select", [&] { return try_select_reduce(n); }))
      prof.timed(&n, "reduce", [&] { run_reduce(n); return true; });
    return;
  }
  Node* mul = chain->second.back()->src[0].get();
  // A sum of a product with nothing summed (a depthwise conv2d's input gradient: the window
  // tensor, output gradient times weights) folded tile by tile, as a matmul's result is.
  static const std::vector<Node*> none;
  if (prof.timed(&n, "matmul", [&] { return try_matmul(n, chain->second); }) ||
      prof.timed(&n, "vector", [&] { return try_vector_product(n, chain->second); }) ||
      prof.timed(&n, "mul+fold", [&] { return try_matmul_fold(n, chain->second, *mul, none); }))
    return;
  prof.timed(mul, "elementwise", [&] { run_elementwise(*mul); return true; });
  mul->realized = true;
  for (size_t i = chain->second.size(); i-- > 0;) {
    ref::execute(*chain->second[i]);
    chain->second[i]->realized = true;
  }
  prof.timed(&n, "reduce", [&] { run_reduce(n); return true; });
}

// An elementwise kernel with a matmul as its epilogue (find_epilogue), else the matmul, its views
// and the kernel one after the other.
// Returns whether the kernel also computed site.pool.
bool run_epilogue(Node& e, const EpilogueSite& site, const MatmulChains& mc, Profiler& prof,
                  std::unique_ptr<Program>* kept) {
  Node& r = *site.reduce;
  auto chain = mc.chain.find(&r);
  static const std::vector<Node*> none;
  const std::vector<Node*>& rc = chain == mc.chain.end() ? none : chain->second;
  Node* leaf = site.views.empty() ? &r : site.views.front();
  bool pooled = false;
  const EpiloguePoolSite pool{site.pool, &site.pool_views, &pooled};
  // A sum of a matmul's result (conv2d's input gradient) applies the kernel to each image plane
  // as it is folded (ReLU's gradient mask: a pass over the image less); its pool is left to run.
  if (auto fold = mc.fold.find(&r); fold != mc.fold.end()) {
    Node& mm = *fold->second.second;
    auto mm_chain = mc.chain.find(&mm);
    const std::vector<Node*>& mmc = mm_chain == mc.chain.end() ? none : mm_chain->second;
    if (prof.timed(&e, "fold+epi", [&] { return try_matmul_fold_epilogue(r, fold->second.first, mm, mmc, e, leaf, kept); }))
      return false;
  } else if (prof.timed(&e, "matmul+epi",
                        [&] { return try_matmul_epilogue(r, rc, e, leaf, kept, site.pool ? &pool : nullptr); })) {
    return pooled;
  } else if (prof.timed(&e, "vector+epi", [&] { return try_vector_product_epilogue(r, rc, e, leaf, kept); })) {
    return false;  // its pool, if any, is left to run
  }
  run_reduction(r, mc, prof);
  r.realized = true;
  for (size_t i = site.views.size(); i-- > 0;) {
    ref::execute(*site.views[i]);
    site.views[i]->realized = true;
  }
  prof.timed(&e, "elementwise", [&] { run_elementwise(e); return true; });
  return false;
}

// An elementwise node is fused into its only consumer when nothing else can see it: no other
// scheduled consumer, no movement op on it, and no handle outside this graph. A single op over
// realized leaves (x * w broadcast for conv2d: often the largest tensor in the graph) is
// recomputed inside each consumer rather than written out: recomputing one op costs less than
// the memory traffic. A fused kernel keeps a tile per value, so its size is capped: a chain of a
// million `x + 1` becomes kernels of at most kMaxFusedOps ops (materializing never changes a bit).
constexpr int kMaxFusedOps = 256;

// A node read several times whose every reader ends up in one kernel (GELU's u = x / sqrt(2)
// and Erf's t = 1 / (1 + p|u|), read 7 and 5 times by one chain) is fused there too: the
// kernel's program is a graph (build_program), so it is computed once per tile and read from
// its tile. Written out, each was a pass over the tensor and a buffer, and the matmul before
// them could not take the kernel as its epilogue. The kernel each node would end in (its
// "sink"), found from the last node back: a node that must be written out (the root, read by a
// non-elementwise op or through a movement op, seen by a handle outside the schedule) or that
// is not elementwise is its own sink; another node's is its readers' common sink if they have
// one, else itself. Only speed depends on this: materializing never changes a bit.
NodeMap<const Node*> shared_sinks(const std::vector<Node*>& order, const Consumers& c) {
  NodeMap<const Node*> reader_sink;  // the sink common to the readers seen so far; n: none
  NodeMap<const Node*> shared;       // elementwise nodes with several readers and one sink
  for (size_t k = order.size(); k-- > 0;) {
    const Node* n = order[k];
    const Consumers::Info i = c.at(n);
    const Node* sink = n;
    const Node* const* r = reader_sink.find(n);
    const bool own = n == c.root || !is_elementwise(*n) || i.other > 0 || i.use_count > i.refs ||
                     i.fusable != i.refs || i.refs == 0;
    if (!own && r && *r != n) {
      sink = *r;
      if (i.refs > 1) shared[n] = sink;
    }
    for (const NodePtr& s : n->src) {
      const Node** seen = reader_sink.find(s.get());
      if (!seen) reader_sink[s.get()] = sink;
      else if (*seen != sink) *seen = s.get();  // readers in two kernels: its own sink
    }
  }
  return shared;
}

// A mask of mask_candidates() is recomputed by its readers like one op over realized leaves,
// once the compare under it is read by it alone and its operands are realized.
bool recomputed_mask(const Node* n, const Consumers& c, const NodeSet& masks) {
  if (!masks.contains(n)) return false;
  const Node* cmp = n->src[0].get();
  if (cmp->realized || c.at(cmp).refs != 1 || c.at(cmp).use_count > c.at(cmp).refs) return false;
  for (const NodePtr& s : cmp->src)
    if (!s->realized) return false;
  return true;
}

// A node that a handle outside the schedule also sees (most often a later gradient's graph: the
// optimizer realizes one parameter at a time) is fused all the same, and computed again by
// whoever reads it later, when that is cheap: a chain of at most kMaxRecomputedOps cheap ops (a
// SIMD row in the op table) reading at most one full-size buffer. Written out, it cost a pass
// writing the tensor now and one reading it later; recomputed, one reading its stream later.
// Batchnorm's input gradient wrote out three such products (dy * invstd, its product with the
// weight, dy times the centred input) that the weight's and the bias's sums read. A node over
// two streams is kept: written beside the kernel that reads it (find_outputs: Adam's m and v),
// it is read later as one. Which kernel computes a value never changes its bits.
constexpr int kMaxRecomputedOps = 4;
struct Recompute {
  int ops = 0;
  const Node* stream = nullptr;  // the full-size buffer the chain reads, if any
};

// The buffer under the leaf's views when reading it is a stream through memory: a base of an
// eighth of n's elements or more (a slice of a larger tensor counts); nullptr for a smaller one, a
// broadcast (batchnorm's per-channel mean and weight) that stays in cache.
const Node* stream_of(const Node* leaf, const Node* n) {
  while (op_info(leaf->op).kind == OpKind::Movement) leaf = leaf->src[0].get();
  return numel(leaf->shape) * 8 >= numel(n->shape) ? leaf : nullptr;
}

// n's chain when recomputing it is cheap (see kMaxRecomputedOps), else nullopt.
std::optional<Recompute> recompute_cost(const Node* n, const NodeMap<Recompute>& recompute) {
  // The operands' dtype (WHERE's values, a compare's operands): half floats have no SIMD rows.
  if (n->src.empty() || !simd_accepts(n->op, n->src.back()->dtype)) return std::nullopt;
  Recompute r{1, nullptr};
  auto add_stream = [&](const Node* s) {
    if (r.stream && r.stream != s) return false;
    r.stream = s;
    return true;
  };
  for (const NodePtr& s : n->src) {
    if (s->realized) {
      const Node* base = stream_of(s.get(), n);
      if (base && !add_stream(base)) return std::nullopt;
    } else if (const Recompute* f = recompute.find(s.get())) {
      r.ops += f->ops;
      if (f->stream && !add_stream(f->stream)) return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
  if (r.ops > kMaxRecomputedOps) return std::nullopt;
  return r;
}

struct Fusion {
  NodeMap<int> ops;  // ops in the kernel a fused node is part of
  NodeMap<Recompute> recompute;  // fused nodes cheap to compute again (recompute_cost)
};

bool fuses_into_consumers(const Node* n, const Consumers& c, const Profiler& prof, Fusion& fusion,
                          const NodeMap<const Node*>& shared, const NodeSet& masks) {
  bool one_op = true;
  for (const NodePtr& s : n->src) one_op = one_op && s->realized;
  int ops = 1;  // ops in the kernel n would be part of
  for (const NodePtr& s : n->src)
    if (const int* f = fusion.ops.find(s.get())) ops += *f;
  const Consumers::Info i = c.at(n);
  const std::optional<Recompute> again = recompute_cost(n, fusion.recompute);
  bool fuse = n != c.root && i.other == 0 && (i.use_count <= i.refs || again) &&
              i.fusable == i.refs && (i.refs == 1 || one_op || again || shared.contains(n) || recomputed_mask(n, c, masks)) &&
              ops < kMaxFusedOps;
  if (fuse) fusion.ops[n] = ops;
  if (fuse && again) fusion.recompute[n] = *again;
  if (prof.on() && !fuse && n != c.root)
    std::fprintf(stderr, "maroon: materialize %s %s: refs %d fusable %d other %d handles %ld one_op %d (e.g. for %s)\n",
                 std::string(op_name(n->op)).c_str(), shape_str(n->shape).c_str(), i.refs, i.fusable, i.other,
                 i.use_count - i.refs, one_op,
                 i.a_consumer ? std::string(op_name(i.a_consumer->op)).c_str() : "-");
  return fuse;
}

// The kernel rooted at e as the plan's walk has marked it: its fused nodes (`code`, e first),
// its leaves (nodes already marked realized) and, per node, how many source slots of the
// kernel's nodes point at it (find_epilogue and find_outputs compare that with Consumers' refs).
struct KernelWalk {
  NodeMap<int> slots;
  std::vector<Node*> code, leaves;
  explicit KernelWalk(Node* e) : code{e} {
    NodeSet seen;
    seen.insert(e);
    for (size_t i = 0; i < code.size(); ++i)
      for (const NodePtr& s : code[i]->src) {
        ++slots[s.get()];
        if (!seen.insert(s.get())) continue;
        (s->realized ? leaves : code).push_back(s.get());
      }
  }
};

// Whether `e`, an elementwise node about to be materialized, can be the epilogue of a matmul
// among its kernel's leaves (nodes already marked realized by the plan's walk). Only when
// nothing else reads the product, its views or the kernel's fused nodes (no other kernel, no
// handle outside the schedule: a tensor kept for a gradient is one), the views keep the
// product's row-major layout, and the dtype stays the product's.
// A kernel whose leaf is an earlier such kernel read by nothing else (a bias add read twice by
// the ReLU after it) takes over its epilogue: that node is fused into this one (*absorbed).
bool find_epilogue(Node* e, Consumers& c, const MatmulChains& mc,
                   const NodeMap<size_t>& scheduled,
                   const std::unordered_map<const Node*, EpilogueSite>& earlier, EpilogueSite* site,
                   Node** absorbed) {
  KernelWalk w(e);
  NodeMap<int>& slots = w.slots;
  const std::vector<Node*>& code = w.code;
  const std::vector<Node*>& leaves = w.leaves;
  auto only_here = [&](const Node* n) {
    const Consumers::Info i = c.at(n);
    return n != c.root && slots[n] == i.refs && i.use_count <= i.refs;
  };
  for (size_t i = 1; i < code.size(); ++i)
    if (!only_here(code[i])) return false;
  auto private_view = [&](const Node* n) {
    const Consumers::Info i = c.at(n);
    return n != c.root && i.refs == 1 && i.use_count <= 1;
  };
  const int ops = static_cast<int>(code.size());
  for (Node* leaf : leaves) {
    auto it = earlier.find(leaf);
    if (it == earlier.end() || leaf->dtype != e->dtype || !only_here(leaf) || it->second.ops + ops >= kMaxFusedOps)
      continue;
    *site = it->second;
    site->ops += ops;
    *absorbed = leaf;
    return true;
  }
  for (Node* leaf : leaves) {
    std::vector<Node*> views;
    Node* r = leaf;
    while (op_info(r->op).kind == OpKind::Movement && (r == leaf || private_view(r))) {
      views.push_back(r);
      r = r->src[0].get();
    }
    const bool product = (r->op == Op::REDUCE && r->arg.reduce_op == ReduceOp::ADD) || r->op == Op::REDUCE_MULACC;
    if (!product || r->dtype != e->dtype) continue;
    if (mc.deferred.count(r) || !only_here(leaf) || (r != leaf && !private_view(r))) continue;
    bool computed_here = scheduled.contains(r);  // not realized by an earlier schedule
    for (const Node* v : views) computed_here = computed_here && scheduled.contains(v);
    if (!computed_here) continue;
    ShapeTracker v = ShapeTracker::contiguous(r->shape);
    for (size_t i = views.size(); i-- > 0;) v = ref::movement_view(*views[i], v);
    if (!v.is_contiguous() || v.shape() != e->shape) continue;
    *site = {r, std::move(views), ops, nullptr, {}};
    return true;
  }
  return false;
}

// Whether n, an elementwise node whose kernel can be a matmul's epilogue, is materialized as that
// epilogue instead of fused into its readers. Only speed depends on this: materializing never
// changes a bit. Two cases:
// - n is read only by one REDUCE ADD (a ResNet's last block, bias + shortcut + ReLU, into its
//   global average pool; a MAX after a conv is the pool epilogue's, epilogue_pool.h). Fused, the
//   reduction evaluated the chain through its generic tiles, a per-channel leaf copied per
//   output; as an epilogue (a row epilogue, epilogue_rows.h) it runs on the product's tiles while
//   they are in cache and the REDUCE folds a contiguous buffer. The ONNX ResNet, fused, one thread
//   (MAROON_PROFILE, 21 runs): its last conv and the pool 1.21 + 0.32 -> 1.40 + 0.05 ms.
// - a handle outside the schedule also sees n (conv2d's output plus its bias, kept for ReLU's
//   gradient, read here by batchnorm's sums through the ReLU). Fused into its readers
//   (recompute_cost), it was computed again, as a pass of its own, by the gradient's schedule;
//   as the epilogue it is the tensor the matmul writes anyway, and its readers read it there.
// - n is a softmax's input, read by its maximum over the last axis and by x - max only
//   (attention's scores times their scale): the row softmax kernel (row_softmax.h) takes only a
//   realized input; fused into both readers, the softmax ran as four kernels, the scale in two
//   of them (attention on (8,8,256,64) from the Tensor API, one thread: 33.2-34.4 -> 22.8-25.7 ms).
// The product must be large enough for the matmul kernel (plan_matmul_node's 4096), which runs
// the epilogue: REDUCE_MULACC, or a REDUCE ADD over a MUL. Another sum (a softmax's; the loss's
// sum of probabilities times one-hot labels, 128 x 10) is computed on its own at run time and
// would leave n a kernel of its own (an extra one per MNIST step when this took them).
bool epilogue_instead_of_fusing(Node* n, Consumers& c, const MatmulChains& mc, const NodeMap<size_t>& scheduled,
                                const std::unordered_map<const Node*, EpilogueSite>& earlier) {
  const Consumers::Info i = c.at(n);
  if (n == c.root || i.other != 0 || numel(n->shape) < 4096) return false;
  const bool held = i.use_count > i.refs;
  const bool one_sum = i.refs == 1 && !held && i.a_consumer && i.a_consumer->op == Op::REDUCE &&
                       i.a_consumer->arg.reduce_op == ReduceOp::ADD;
  const Node* f = i.first_consumer;
  const bool softmax_input = i.refs == 2 && !held && f && f->op == Op::REDUCE && f->arg.reduce_op == ReduceOp::MAX &&
                             f->arg.ints.size() == 1 && f->arg.ints[0] + 1 == static_cast<int64_t>(n->shape.size()) &&
                             i.a_consumer && is_elementwise(*i.a_consumer);
  if (!held && !one_sum && !softmax_input) return false;
  EpilogueSite site;
  Node* absorbed = nullptr;
  if (!find_epilogue(n, c, mc, scheduled, earlier, &site, &absorbed) || (held && absorbed)) return false;
  const Node* r = site.reduce;  // (an absorbed kernel's site is copied with its product)
  const bool product = r->op == Op::REDUCE_MULACC || (!r->src.empty() && r->src[0]->op == Op::MUL);
  return product && numel(r->src[0]->shape) >= 4096;
}

}  // namespace

// What run() does, decided once: per scheduled node, the path it takes. The decisions depend on
// the graph (consumer counts, handles, which sources end up materialized) and not on the data,
// so a captured step (core/jit.cpp) replays them without deciding again.
struct KeptPlan;

struct Plan::Impl {
  enum class Action { Skip, Reduction, Gather, Ref, Elementwise, Epilogue, Alias, Softmax, LayerNorm };
  std::vector<std::pair<Node*, Action>> steps;
  MatmulChains chains;
  std::unordered_map<const Node*, EpilogueSite> epilogues;  // Action::Epilogue's node -> its matmul
  // Action::Elementwise's node -> the other nodes its kernel writes (find_outputs)
  std::unordered_map<const Node*, std::vector<Node*>> outputs;
  std::unordered_map<const Node*, RowSoftmax> softmaxes;  // Action::Softmax's node -> its pattern
  std::unordered_map<const Node*, RowLayerNorm> layernorms;  // Action::LayerNorm's
  std::vector<std::vector<Node*>> release;  // per kernel run: the buffers to drop after it (set_releases)
  // Per step, what keep_between_runs() lets a run leave to the next: the source view a movement
  // node's view was computed from (the node keeps the view itself), an elementwise program.
  struct Kept {
    bool viewed = false;
    ShapeTracker src_view;
    std::unique_ptr<Program> prog;
  };
  std::vector<Kept> kept;  // empty unless keep_between_runs()
  // The kept plan this plan was taken from (plan()'s store), if any: its movement steps' views.
  std::shared_ptr<const KeptPlan> source;
};

// A plan kept between calls (plan()'s store, plan_key.h): each step's action (only plans with no
// matmul chain, fold, epilogue or kernel of several outputs: those name other nodes; a plain
// product, a small op's fused kernels are steps alone) and, once a plan taken from it has run,
// each movement step's view with the source view it was computed from.
// A movement step's view is a function of its op and arguments (in the key) and of its source's
// view, so a later run whose source has an equal view (compared whole) copies it instead of
// computing it: a 64^2 product's six views. Shared by the plans taken from it (every thread's):
// the views are written once, under the mutex, and never changed after.
struct KeptView {
  bool set = false;  // a movement step
  ShapeTracker src_view, view;
};
struct KeptPlan {
  std::vector<Plan::Impl::Action> actions;
  mutable std::mutex m;
  mutable std::shared_ptr<const std::vector<KeptView>> views;
};

namespace {

// An elementwise step a later kernel may take over (find_outputs).
struct KernelStep {
  size_t step;
  int ops;  // in its kernel
};

// The earlier elementwise kernels of this schedule whose nodes `e` (an elementwise node about
// to be materialized with a kernel of its own) reads directly (no view between), with e's
// shape, and nothing else reads: each is computed in e's kernel instead, which writes it as
// well, in the same pass over the positions (a kernel of several outputs: Adam's new moments
// and the parameter's new value that reads them, 7 streams of memory where three kernels had
// 10). Such a node was materialized because a handle outside the schedule sees it (a state's
// new value, assigned after this realize); inside the schedule only e's kernel reads it, so
// computing it at e's step changes no bit: its sources are realized by then, its ops are the
// same, and it is stored as its own kernel stored it. `kernels`: the elementwise steps planned
// so far, by node. Returns the ops of e's kernel with those it takes over; *out gets the nodes.
int find_outputs(Node* e, const Consumers& c, const NodeMap<KernelStep>& kernels, const Plan::Impl& plan,
                 std::vector<Node*>* out) {
  KernelWalk w(e);
  NodeMap<int>& slots = w.slots;
  const std::vector<Node*>& code = w.code;
  const std::vector<Node*>& leaves = w.leaves;
  int ops = static_cast<int>(code.size());
  for (Node* l : leaves) {
    const KernelStep* k = kernels.find(l);
    if (!k || plan.steps[k->step].second != Plan::Impl::Action::Elementwise || l->shape != e->shape) continue;
    if (ops + k->ops >= kMaxFusedOps) continue;  // a tile per value, capped as fused kernels are
    if (slots[l] != c.at(l).refs) continue;      // read elsewhere too (a view, a reduction, a kernel)
    // Only a node a handle outside the schedule holds (a state's new value): one materialized by
    // the fusion rules alone (read by several nodes, shared_sinks found no one kernel for them)
    // keeps its kernel, whose program may be an accumulator one; as an output here it could
    // make e's program one that is not (a mask output: a WHERE's condition stored as bool).
    if (c.at(l).use_count <= c.at(l).refs) continue;
    // A fused node of this kernel reading l must be this kernel's alone: one recomputed in
    // another kernel too (an op over realized leaves) would read l there before it is computed.
    bool private_readers = true;
    for (size_t i = 1; i < code.size(); ++i)
      for (const NodePtr& s : code[i]->src)
        if (s.get() == l) private_readers = private_readers && slots[code[i]] == c.at(code[i]).refs;
    if (!private_readers) continue;
    out->push_back(l);
    ops += k->ops;
  }
  return ops;
}

// Plans e's kernel (an Elementwise step) to write the nodes find_outputs finds as well: their
// steps become Skip, and the nodes their kernels wrote too come along.
void take_outputs(Node* e, const Consumers& c, NodeMap<KernelStep>& kernels, Plan::Impl& plan) {
  std::vector<Node*> also;
  const int ops = find_outputs(e, c, kernels, plan, &also);
  for (size_t i = 0, taken = also.size(); i < taken; ++i) {
    Node* o = also[i];
    plan.steps[kernels.find(o)->step].second = Plan::Impl::Action::Skip;
    auto more = plan.outputs.find(o);
    if (more == plan.outputs.end()) continue;
    also.insert(also.end(), more->second.begin(), more->second.end());
    plan.outputs.erase(more);
  }
  if (!also.empty()) plan.outputs[e] = std::move(also);
  kernels[e] = {plan.steps.size(), ops};
}

// Softmax over the last axis as one kernel (row_softmax.h) at its product's step: the nodes it
// computes inside, planned as their own kernels before, become Skip. Their steps are the
// positions of the nodes in `order` (one step per node, in order).
// An inner node planned as a matmul's epilogue (softmax's 1 / sum, a sum being a REDUCE ADD)
// may go only with its REDUCE and views, which are then inner nodes too.
bool inner_epilogues(const std::vector<Node*>& inner, const Plan::Impl& plan) {
  auto in = [&](const Node* m) { return std::find(inner.begin(), inner.end(), m) != inner.end(); };
  for (const Node* m : inner) {
    auto e = plan.epilogues.find(m);
    if (e == plan.epilogues.end()) continue;
    if (!in(e->second.reduce)) return false;
    for (const Node* v : e->second.views)
      if (!in(v)) return false;
  }
  return true;
}

void skip_steps(const std::vector<Node*>& inner, const std::vector<Node*>& order, Plan::Impl& plan) {
  for (const Node* m : inner) plan.epilogues.erase(m);
  size_t found = 0;
  for (size_t k = plan.steps.size(); k-- > 0 && found < inner.size();)
    if (std::find(inner.begin(), inner.end(), order[k]) != inner.end()) {
      plan.steps[k].second = Plan::Impl::Action::Skip;
      ++found;
    }
}

// x, an elementwise node the plan fuses into its readers (an op over realized leaves: the
// residual add before a layernorm, recomputed by its row sums and by x - mean), gets a kernel
// of its own at its step instead, so that a row kernel can read it. Materializing never changes
// a bit; other readers of x then read it as a leaf.
bool write_out(Node* x, const std::vector<Node*>& order, const Consumers& c, Plan::Impl& plan,
               std::vector<Node*>& marked) {
  if (!is_elementwise(*x) || x == c.root || plan.chains.deferred.count(x)) return false;
  for (size_t k = plan.steps.size(); k-- > 0;) {
    if (order[k] != x) continue;
    if (plan.steps[k].second != Plan::Impl::Action::Skip) return false;
    plan.steps[k].second = Plan::Impl::Action::Elementwise;
    x->realized = true;
    marked.push_back(x);
    return true;
  }
  return false;
}

// Layer normalization likewise (row_layernorm.h), at its shift's step. Returns n's action.
Plan::Impl::Action plan_row_kernel(Node* n, const std::vector<Node*>& order, const Consumers& c, Plan::Impl& plan,
                                   std::vector<Node*>& marked) {
  using Action = Plan::Impl::Action;
  if ((n->op != Op::MUL && n->op != Op::ADD) || n->dtype != DType::Float32) return Action::Elementwise;
  // Read only by the pattern's slots, and not planned to write other nodes.
  auto only_here = [&](const Node* m, int slots) {
    const Consumers::Info i = c.at(m);
    return m != c.root && i.refs == slots && i.use_count <= i.refs && !plan.outputs.count(m);
  };
  RowSoftmax sm;
  if (match_row_softmax(n, only_here, &sm) && inner_epilogues(sm.inner, plan)) {
    skip_steps(sm.inner, order, plan);
    plan.softmaxes[n] = std::move(sm);
    return Action::Softmax;
  }
  RowLayerNorm ln;
  if (match_row_layernorm(n, only_here, &ln) && inner_epilogues(ln.inner, plan) &&
      (ln.x->realized || write_out(ln.x, order, c, plan, marked))) {
    skip_steps(ln.inner, order, plan);
    plan.layernorms[n] = std::move(ln);
    return Action::LayerNorm;
  }
  return Action::Elementwise;
}

}  // namespace

Plan::Plan() = default;
Plan::~Plan() = default;
Plan::Plan(Plan&&) noexcept = default;
Plan& Plan::operator=(Plan&&) noexcept = default;

void Plan::remap(const std::unordered_map<const Node*, Node*>& to) {
  auto node = [&](const Node* n) { return to.at(n); };
  auto nodes = [&](std::vector<Node*>& v) {
    for (Node*& n : v) n = node(n);
  };
  for (auto& step : impl_->steps) step.first = node(step.first);
  MatmulChains& old = impl_->chains;
  MatmulChains now;
  for (auto& [n, chain] : old.chain) {
    nodes(chain);
    now.chain[node(n)] = std::move(chain);
  }
  for (auto& [n, f] : old.fold) {
    nodes(f.first);
    now.fold[node(n)] = {std::move(f.first), node(f.second)};
  }
  for (const Node* n : old.deferred) now.deferred.insert(node(n));
  old = std::move(now);
  std::unordered_map<const Node*, EpilogueSite> epilogues;
  for (auto& [n, site] : impl_->epilogues) {
    nodes(site.views);
    nodes(site.pool_views);
    epilogues[node(n)] = {node(site.reduce), std::move(site.views), site.ops, site.pool ? node(site.pool) : nullptr,
                          std::move(site.pool_views)};
  }
  impl_->epilogues = std::move(epilogues);
  std::unordered_map<const Node*, std::vector<Node*>> outputs;
  for (auto& [n, also] : impl_->outputs) {
    nodes(also);
    outputs[node(n)] = std::move(also);
  }
  impl_->outputs = std::move(outputs);
  // A row kernel's operands may be leaves outside the schedule (an input, a weight), which a
  // copy of the graph does not name: only the inner nodes are kept (execute() matches again).
  std::unordered_map<const Node*, RowSoftmax> softmaxes;
  for (auto& [n, site] : impl_->softmaxes) {
    nodes(site.inner);
    softmaxes[node(n)].inner = std::move(site.inner);
  }
  impl_->softmaxes = std::move(softmaxes);
  std::unordered_map<const Node*, RowLayerNorm> layernorms;
  for (auto& [n, site] : impl_->layernorms) {
    nodes(site.inner);
    layernorms[node(n)].inner = std::move(site.inner);
  }
  impl_->layernorms = std::move(layernorms);
  for (std::vector<Node*>& r : impl_->release) nodes(r);
}

std::vector<Node*> Plan::kernels() const {
  std::vector<Node*> out;
  for (const auto& [n, a] : impl_->steps)
    if (a != Impl::Action::Skip) out.push_back(n);
  return out;
}

void Plan::set_releases(std::vector<std::vector<Node*>> release) { impl_->release = std::move(release); }

void Plan::keep_between_runs() {
  impl_->kept.clear();
  impl_->kept.resize(impl_->steps.size());
}

namespace {
// A REDUCE MAX reading an epilogue's node through views only (a max-pool after conv2d + ReLU):
// offered to that epilogue (EpilogueSite::pool), which checks the windows when it runs.
void attach_pool(Node* n, Plan::Impl& impl) {
  if (n->op != Op::REDUCE || n->arg.reduce_op != ReduceOp::MAX) return;
  std::vector<Node*> views;
  Node* m = n->src[0].get();
  while (op_info(m->op).kind == OpKind::Movement) {
    views.push_back(m);
    m = m->src[0].get();
  }
  auto e = impl.epilogues.find(m);
  if (e == impl.epilogues.end() || e->second.pool) return;
  std::reverse(views.begin(), views.end());
  e->second.pool = n;
  e->second.pool_views = std::move(views);
}
}  // namespace

// The decisions of the loop below, taken up front: fuses_into_consumers() reads whether each
// source is realized when its consumer runs, so the sources this plan materializes are marked
// realized as the walk passes them (and unmarked after: nothing has run yet).
Plan plan_fresh(const std::vector<Node*>& order) {
  using Action = Plan::Impl::Action;
  Plan p;
  p.impl_ = std::make_unique<Plan::Impl>();
  p.impl_->steps.reserve(order.size());  // one block, not a regrowth per few steps
  Consumers consumers(order);
  p.impl_->chains = find_matmul_chains(order, consumers);
  Profiler prof;
  std::vector<Node*> marked;
  marked.reserve(order.size());
  Fusion fusion;
  const NodeMap<const Node*> shared = shared_sinks(order, consumers);
  const NodeSet masks = mask_candidates(order, p.impl_->chains.deferred);
  NodeMap<size_t> step_of;  // steps a later epilogue may defer
  NodeMap<KernelStep> kernels;  // elementwise steps a later kernel may take over (find_outputs)
  for (Node* n : order) {
    Action a;
    if (p.impl_->chains.deferred.count(n)) a = Action::Skip;
    else if (n->op == Op::REDUCE) a = Action::Reduction;
    else if (n->op == Op::REDUCE_MULACC) a = Action::Reduction;  // the opt-in fused matmul (run_reduction)
    else if (n->op == Op::GATHER) a = Action::Gather;  // row copies (gather.h)
    else if (!is_elementwise(*n)) a = Action::Ref;  // movement ops are views; constants are one element
    else if (!epilogue_instead_of_fusing(n, consumers, p.impl_->chains, step_of, p.impl_->epilogues) &&
             fuses_into_consumers(n, consumers, prof, fusion, shared, masks))
      a = Action::Skip;
    else if (const Node* v = constant_select(*n); v && v->realized && n != consumers.root) a = Action::Alias;
    else a = Action::Elementwise;
    EpilogueSite site;
    Node* absorbed = nullptr;
    if (a == Action::Elementwise &&
        find_epilogue(n, consumers, p.impl_->chains, step_of, p.impl_->epilogues, &site, &absorbed)) {
      if (absorbed) {  // fused into this kernel, which takes over its matmul
        p.impl_->steps[*step_of.find(absorbed)].second = Action::Skip;
        p.impl_->epilogues.erase(absorbed);
        absorbed->realized = false;
      } else {  // the matmul and its views run at this step, inside this node's kernel
        p.impl_->steps[*step_of.find(site.reduce)].second = Action::Skip;
        for (Node* v : site.views) p.impl_->steps[*step_of.find(v)].second = Action::Skip;
      }
      p.impl_->epilogues[n] = std::move(site);
      a = Action::Epilogue;
    }
    if (a == Action::Reduction) attach_pool(n, *p.impl_);
    if (a == Action::Elementwise) a = plan_row_kernel(n, order, consumers, *p.impl_, marked);
    if (a == Action::Elementwise) take_outputs(n, consumers, kernels, *p.impl_);
    p.impl_->steps.push_back({n, a});
    if (a == Action::Reduction || a == Action::Ref || a == Action::Epilogue) step_of[n] = p.impl_->steps.size() - 1;
    if (a != Action::Skip && !n->realized) {
      n->realized = true;
      marked.push_back(n);
    }
  }
  for (Node* n : marked) n->realized = false;
  return p;
}

namespace {

// One store for the process, its own lock inside (KeyedStore).
using KeptPlanStore = KeyedStore<KeptPlan>;
KeptPlanStore& kept_plans() {
  static auto* s = new KeptPlanStore(64);  // never destroyed: plans may run at exit
  return *s;
}
std::atomic<bool> g_plan_cache_on{true};
std::atomic<int64_t> g_plan_cache_hits{0};

}  // namespace

void set_plan_cache(bool on) {
  g_plan_cache_on.store(on);
  kept_plans().clear();
}
int64_t plan_cache_hits() { return g_plan_cache_hits.load(std::memory_order_relaxed); }

// A plan is a function of plan_key's words: a graph seen before with the same words takes the
// same steps, without deciding again (MAROON_PROFILE's reports of the decisions aside: with it
// on, every plan is decided afresh).
Plan plan(const std::vector<Node*>& order) {
  thread_local std::vector<int64_t> key;  // reused: a fresh key was a heap block per call
  if (!g_plan_cache_on.load(std::memory_order_relaxed) || Profiler().on() || !plan_key(order, &key))
    return plan_fresh(order);
  if (std::shared_ptr<const KeptPlan> kept = kept_plans().find(key)) {
    Plan p;
    p.impl_ = std::make_unique<Plan::Impl>();
    p.impl_->steps.reserve(order.size());
    for (size_t i = 0; i < order.size(); ++i) p.impl_->steps.push_back({order[i], kept->actions[i]});
    p.impl_->source = std::move(kept);
    g_plan_cache_hits.fetch_add(1, std::memory_order_relaxed);
    return p;
  }
  Plan p = plan_fresh(order);
  const Plan::Impl& impl = *p.impl_;
  if (impl.chains.chain.empty() && impl.chains.fold.empty() && impl.chains.deferred.empty() &&
      impl.epilogues.empty() && impl.outputs.empty() && impl.softmaxes.empty() &&
      impl.layernorms.empty()) {
    auto kept = std::make_shared<KeptPlan>();
    kept->actions.reserve(order.size());
    for (const auto& step : impl.steps) kept->actions.push_back(step.second);
    kept_plans().put(key, std::move(kept));
  }
  return p;
}

namespace {

std::atomic<int64_t> g_kept_reuses{0};
std::atomic<int64_t> g_kept_views{0};

// A movement node: its view is a function of its source's view and its own arguments, so a kept
// plan recomputes it only when the source's view changed since the last run (an input given
// through another view); else it only takes the source's buffer. A constant's view is always
// the broadcast of its shape: a kept plan builds only its one-element buffer again.
void run_ref(Node& n, Plan::Impl::Kept* kept) {
  if (kept && n.op == Op::CONST) {  // one element, seen through the broadcast view it keeps
    if (!kept->viewed) {
      ref::execute(n);
      kept->viewed = true;
      return;
    }
    auto buf = std::make_shared<Buffer>(n.dtype, 1);
    buf->store(0, n.arg.bits);
    n.buffer = std::move(buf);
    g_kept_reuses.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (!kept || op_info(n.op).kind != OpKind::Movement) return ref::execute(n);
  const Node& src = *n.src[0];
  if (kept->viewed && src.view == kept->src_view) {
    n.buffer = src.buffer;
    g_kept_reuses.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  ref::execute(n);
  kept->src_view = src.view;
  kept->viewed = true;
}

// An elementwise kernel; a kept plan builds its program once. The program depends on which
// nodes under n are realized when it runs, and a plan realizes the same ones on every run;
// a leaf found unrealized (never expected) rebuilds it.
// `also`: the other nodes the kernel writes (find_outputs), marked realized after it.
void run_kept_elementwise(Node& n, Plan::Impl::Kept* kept, const std::vector<Node*>& also) {
  if (!kept) {
    run_elementwise(n, nullptr, also);
  } else {
    bool valid = kept->prog != nullptr;
    if (valid)
      for (const Node* l : kept->prog->leaves) valid = valid && l->realized;
    if (valid) g_kept_reuses.fetch_add(1, std::memory_order_relaxed);
    else kept->prog = std::make_unique<Program>(build_program(&n, also));
    run_elementwise(n, kept->prog.get(), also);
  }
  for (Node* o : also) o->realized = true;
}

// The readers were checked when the plan was made.
bool any_readers(const Node*, int) { return true; }

// A row kernel (softmax, layernorm), else (its operands not contiguous rows) its nodes one by
// one on the reference executor and n's own kernel: the same bits either way.
template <class F>
void run_row_kernel(Node& n, const char* path, F&& kernel, const std::vector<Node*>& inner, Profiler& prof) {
  if (prof.timed(&n, path, kernel)) return;
  for (Node* m : inner) {
    ref::execute(*m);
    m->realized = true;
  }
  prof.timed(&n, "elementwise", [&] { run_elementwise(n); return true; });
}

const std::vector<Node*>& outputs_of(const Plan::Impl& p, const Node* n) {
  static const std::vector<Node*> none;
  if (p.outputs.empty()) return none;
  auto it = p.outputs.find(n);
  return it == p.outputs.end() ? none : it->second;
}

}  // namespace

namespace {

// The views a kept plan's earlier run left (KeptPlan), or null: none yet, or p keeps its own
// between runs (keep_between_runs: a captured step's copy of the graph, its nodes' own views).
std::shared_ptr<const std::vector<KeptView>> kept_views(const Plan::Impl& p) {
  if (!p.source || !p.kept.empty()) return nullptr;
  std::lock_guard<std::mutex> lock(p.source->m);
  return p.source->views;
}

// After a run of a plan taken from a kept one that had no views yet: its movement steps' views
// and their sources', for the next runs (the first run's are kept; a run whose sources have
// other views computes its own where they differ).
void keep_views(const Plan::Impl& p) {
  auto views = std::make_shared<std::vector<KeptView>>(p.steps.size());
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const Node* n = p.steps[i].first;
    if (p.steps[i].second != Plan::Impl::Action::Ref || op_info(n->op).kind != OpKind::Movement) continue;
    (*views)[i] = KeptView{true, n->src[0]->view, n->view};
  }
  std::lock_guard<std::mutex> lock(p.source->m);
  if (!p.source->views) p.source->views = std::move(views);
}

}  // namespace

void execute(const Plan& p) {
  using Action = Plan::Impl::Action;
  Profiler prof;
  const std::vector<std::vector<Node*>>& release = p.impl_->release;
  std::vector<Plan::Impl::Kept>& kept = p.impl_->kept;
  const std::shared_ptr<const std::vector<KeptView>> views = kept_views(*p.impl_);
  size_t ran = 0;
  std::vector<const Node*> pooled;  // REDUCEs an epilogue computed (run_epilogue): their steps are done
  for (size_t i = 0; i < p.impl_->steps.size(); ++i) {
    const auto& step = p.impl_->steps[i];
    // Not a structured binding: clang before 16 cannot capture one in the lambdas below.
    Node* const n = step.first;
    if (step.second == Action::Skip) continue;
    Plan::Impl::Kept* k = kept.empty() ? nullptr : &kept[i];
    if (step.second == Action::Ref && op_info(n->op).kind == OpKind::Movement) {
      // A view of its source: no kernel to interrupt and no buffer to allocate, so no poll (a
      // clock read once Python has installed its check) and no scope: a 64^2 product's call
      // has six such steps and one kernel.
      const KeptView* v = views ? &(*views)[i] : nullptr;
      if (v && v->set && n->src[0]->view == v->src_view) {
        n->buffer = n->src[0]->buffer;  // as ref::execute's movement step
        n->view = v->view;
        g_kept_views.fetch_add(1, std::memory_order_relaxed);
      } else {
        run_ref(*n, k);
      }
      n->realized = true;
      if (ran < release.size())
        for (Node* r : release[ran]) r->buffer.reset();
      ++ran;
      continue;
    }
    poll_interrupt();  // Ctrl-C from Python lands between kernels (and between tasks in them)
    ExecScope scope(n);
    switch (step.second) {
      case Action::Skip: continue;
      case Action::Reduction:
        if (std::find(pooled.begin(), pooled.end(), n) == pooled.end()) run_reduction(*n, p.impl_->chains, prof);
        break;
      case Action::Gather: prof.timed(n, "gather", [&] { run_gather(*n); return true; }); break;
      case Action::Ref: run_ref(*n, k); break;
      case Action::Alias: alias_selected(*n); break;
      case Action::Elementwise: {
        const std::vector<Node*>& also = outputs_of(*p.impl_, n);
        prof.timed(n, also.empty() ? "elementwise" : "multi-out", [&] { run_kept_elementwise(*n, k, also); return true; });
        break;
      }
      case Action::Softmax: {  // its operands found from n again: a replay's copy has its own
        RowSoftmax now;
        run_row_kernel(*n, "row-softmax", [&] { return match_row_softmax(n, any_readers, &now) && run_row_softmax(*n, now); },
                       p.impl_->softmaxes.at(n).inner, prof);
        break;
      }
      case Action::LayerNorm: {
        RowLayerNorm now;
        run_row_kernel(*n, "row-layernorm", [&] { return match_row_layernorm(n, any_readers, &now) && run_row_layernorm(*n, now); },
                       p.impl_->layernorms.at(n).inner, prof);
        break;
      }
      case Action::Epilogue: {
        const EpilogueSite& site = p.impl_->epilogues.at(n);
        if (run_epilogue(*n, site, p.impl_->chains, prof, k ? &k->prog : nullptr)) pooled.push_back(site.pool);
        break;
      }
    }
    n->realized = true;
    if (ran < release.size())
      for (Node* r : release[ran]) r->buffer.reset();
    ++ran;
  }
  if (p.impl_->source && kept.empty() && !views) keep_views(*p.impl_);
}

void run(const std::vector<Node*>& order) { execute(plan(order)); }

int64_t plan_kept_reuses() { return g_kept_reuses.load(std::memory_order_relaxed); }
int64_t plan_kept_views() { return g_kept_views.load(std::memory_order_relaxed); }

}  // namespace maroon::cpu
