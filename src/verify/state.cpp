// A run's state: what it holds (capture, restore), its canonical serialisation and commitment,
// and checkpoint files (docs/verify.md, "State").
#include "verify/state.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "io/files.h"
#include "maroon/safetensors.h"
#include "verify/digest.h"
#include "verify/evict.h"

namespace maroon::verify {

namespace {

// One entry of the state: a live tensor, or a scalar read and written through functions.
struct Slot {
  std::string name;
  std::optional<Tensor> handle;
  std::function<uint64_t()> get;
  std::function<void(uint64_t)> set;
};

Tensor u64_scalar(uint64_t v) { return Tensor::from_bytes(&v, 8, {}, DType::UInt64); }

Tensor job_tensor(const Digest& job) { return Tensor::from_bytes(job.data(), 32, {32}, DType::UInt8); }

// Each optimizer slot is named after the parameter it belongs to (by the model's state names).
void optimizer_slots(const StateBinding& b, std::vector<Slot>& out) {
  optim::Optimizer* opt = b.optimizer;
  std::map<const TensorState*, std::string> names;
  for (auto& [k, t] : b.model) names.emplace(t.state().get(), k);
  std::vector<std::string> pname;
  for (size_t i = 0; i < opt->params().size(); ++i) {
    auto it = names.find(opt->params()[i].state().get());
    pname.push_back(it != names.end() ? it->second : "#" + std::to_string(i));
  }
  auto per_param = [&](const char* what, const std::vector<Tensor>& ts) {
    for (size_t i = 0; i < ts.size() && i < pname.size(); ++i)
      out.push_back({std::string("optim.") + what + "." + pname[i], ts[i], {}, {}});
  };
  out.push_back({"optim.lr", opt->lr, {}, {}});
  if (auto* lamb = dynamic_cast<optim::LAMB*>(opt)) {
    out.push_back({"optim.b1_t", lamb->b1_t, {}, {}});
    out.push_back({"optim.b2_t", lamb->b2_t, {}, {}});
    per_param("m", lamb->m);
    per_param("v", lamb->v);
  } else if (auto* lars = dynamic_cast<optim::LARS*>(opt)) {
    per_param("b", lars->b);
  } else {
    throw Error("[verify] an optimizer other than maroon::optim's: put its state in StateBinding::extra");
  }
}

std::vector<Slot> slots(const StateBinding& b, int64_t* step) {
  std::vector<Slot> out;
  for (auto& [k, t] : b.model) out.push_back({"model." + k, t, {}, {}});
  if (b.optimizer) optimizer_slots(b, out);
  for (auto& [k, t] : b.extra) out.push_back({"extra." + k, t, {}, {}});
  if (b.random) {
    out.push_back({"rng.seed", {}, [] { return Tensor::random_state().seed; },
                   [](uint64_t v) { Tensor::set_random_state({v, Tensor::random_state().counter}); }});
    out.push_back({"rng.counter", {}, [] { return Tensor::random_state().counter; },
                   [](uint64_t v) { Tensor::set_random_state({Tensor::random_state().seed, v}); }});
  }
  if (EpochSampler* s = b.sampler) {
    auto fixed = [](const char* name, uint64_t mine) {
      return Slot{name, {}, [mine] { return mine; }, [name, mine](uint64_t v) {
                    if (v != mine)
                      throw FormatError(std::string(name) + " is " + std::to_string(v) + ", this run's is " +
                                        std::to_string(mine));
                  }};
    };
    out.push_back(fixed("data.seed", s->seed()));
    out.push_back(fixed("data.samples", static_cast<uint64_t>(s->samples())));
    out.push_back(fixed("data.batch", static_cast<uint64_t>(s->batch())));
    out.push_back({"data.position", {}, [s] { return static_cast<uint64_t>(s->position()); },
                   [s](uint64_t v) { s->set_position(static_cast<int64_t>(v)); }});
  }
  out.push_back({"run.step", {}, [step] { return static_cast<uint64_t>(*step); },
                 [step](uint64_t v) { *step = static_cast<int64_t>(v); }});
  std::sort(out.begin(), out.end(), [](const Slot& a, const Slot& c) { return a.name < c.name; });
  for (size_t i = 1; i < out.size(); ++i)
    if (out[i].name == out[i - 1].name) throw Error("[verify] two state entries are named \"" + out[i].name + "\"");
  return out;
}

uint64_t scalar_value(const Tensor& t) { return t.to_vector<uint64_t>().at(0); }

}  // namespace

State capture(const StateBinding& b, int64_t step, const Digest& job) {
  State s;
  for (Slot& slot : slots(b, &step)) {
    // A new handle on the current node: the live handle's later assign() must not change it.
    if (slot.handle) s.push_back({slot.name, Tensor(slot.handle->realize().node())});
    else s.push_back({slot.name, u64_scalar(slot.get())});
  }
  s.push_back({"run.job", job_tensor(job)});  // "run.job" sorts last among the run.* entries
  std::sort(s.begin(), s.end(), [](auto& a, auto& c) { return a.first < c.first; });
  return s;
}

int64_t restore(const StateBinding& b, const State& s, const Digest& job, const std::string& what) {
  std::map<std::string, const Tensor*> by_name;
  for (auto& [k, t] : s)
    if (!by_name.emplace(k, &t).second) throw FormatError(what + ": two tensors are named \"" + k + "\"");
  auto fail = [&](const std::string& m) { return FormatError(what + ": " + m); };
  auto take = [&](const std::string& name, DType dtype, const Shape& shape) -> const Tensor& {
    auto it = by_name.find(name);
    if (it == by_name.end()) throw fail("no tensor \"" + name + "\" (this run's state has one)");
    const Tensor& t = *it->second;
    if (t.dtype() != dtype || t.shape() != shape)
      throw fail("tensor \"" + name + "\" is " + std::string(dtype_name(t.dtype())) + " " + shape_str(t.shape()) +
                 ", this run's is " + std::string(dtype_name(dtype)) + " " + shape_str(shape));
    by_name.erase(it);
    return t;
  };
  const Tensor& j = take("run.job", DType::UInt8, {32});
  Digest got;
  std::vector<uint8_t> jb = j.to_vector<uint8_t>();
  std::copy(jb.begin(), jb.end(), got.begin());
  if (got != job) throw fail("run.job is " + hex(got) + ", this run's job is " + hex(job) + " (another job's state)");
  int64_t step = 0;
  std::vector<Slot> all = slots(b, &step);
  for (Slot& slot : all) {  // check every entry before changing anything
    if (slot.handle) take(slot.name, slot.handle->dtype(), slot.handle->shape());
    else take(slot.name, DType::UInt64, {});
  }
  if (!by_name.empty()) throw fail("tensor \"" + by_name.begin()->first + "\" is not part of this run's state");
  for (auto& [k, t] : s) by_name.emplace(k, &t);
  for (Slot& slot : all) {
    const Tensor& t = *by_name.at(slot.name);
    if (slot.handle) {
      Tensor h = *slot.handle;
      h.assign(t);
    } else {
      try {
        slot.set(scalar_value(t));
      } catch (const FormatError& e) {
        throw fail(e.what());
      }
    }
  }
  return step;
}

Frozen freeze(const State& s) {
  for (auto& [k, t] : s) realized(t);
  return freeze_realized(s);
}

Frozen freeze_realized(const State& s) {
  for (size_t i = 1; i < s.size(); ++i)
    if (!(s[i - 1].first < s[i].first))
      throw Error("[verify] state names must be unique and in byte order: \"" + s[i - 1].first + "\" before \"" +
                  s[i].first + "\"");
  Frozen f{nn::safe_save_header(s), {}};
  for (auto& [k, t] : s) {
    if (!t.node()->realized) throw Error("[verify] internal: state tensor \"" + k + "\" is not realized");
    f.nodes.push_back(t.node());
  }
  return f;
}

Digest commitment_of(const Frozen& f) {
  Hasher h;
  h.update(f.header);
  for (const NodePtr& n : f.nodes) hash_elements(h, *n);
  return h.finish();
}

Digest commitment_evicting(const Frozen& f) {
  constexpr size_t kChunk = size_t{64} << 10;  // hashed while in this core's L2, then evicted
  PieceHasher h(f, true);
  while (!h.piece(kChunk)) {
  }
  return h.finish();
}

bool PieceHasher::piece(size_t budget) {
  if (!header_) h_.update(f_.header), header_ = true;
  while (node_ < f_.nodes.size() && budget > 0) {
    const Node& n = *f_.nodes[node_];
    const uint8_t* p;
    size_t k;
    if (!contiguous_bytes(n, &p, &k)) {  // gathered a row at a time (not in capture's states)
      for_each_piece(n, [&](const uint8_t* q, size_t m) {
        h_.update(q, m);
        if (evict_) evict_from_caches(q, m);
      });
      ++node_;
      break;
    }
    const size_t m = std::min(budget, k - at_);
    if (m) h_.update(p + at_, m);
    if (m && evict_) evict_from_caches(p + at_, m);
    at_ += m, budget -= m;
    if (at_ == k) ++node_, at_ = 0;
  }
  return node_ == f_.nodes.size();
}

namespace {
// Whether a and b serialise to the same layout: headers of one length, then tensors that are each
// one run of their buffers, pairwise of one size.
bool same_layout(const Frozen& a, const Frozen& b) {
  if (a.header.size() != b.header.size() || a.nodes.size() != b.nodes.size()) return false;
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const uint8_t *p, *q;
    size_t m, n;
    if (!contiguous_bytes(*a.nodes[i], &p, &m) || !contiguous_bytes(*b.nodes[i], &q, &n) || m != n) return false;
  }
  return true;
}
}  // namespace

PairHasher::PairHasher(const Frozen& a, bool evict_a, const Frozen& b, bool evict_b)
    : a_(a), b_(b), evict_a_(evict_a), evict_b_(evict_b), lockstep_(same_layout(a, b)), pa_(a, evict_a),
      pb_(b, evict_b) {}

bool PairHasher::piece(size_t budget) {
  if (!lockstep_) {
    if (a_done_) return pb_.piece(budget);
    a_done_ = pa_.piece(budget);
    return false;
  }
  if (!header_) update_pair(ha_, a_.header.data(), hb_, b_.header.data(), a_.header.size()), header_ = true;
  while (node_ < a_.nodes.size() && budget > 0) {
    const uint8_t *p, *q;
    size_t k, kb;
    contiguous_bytes(*a_.nodes[node_], &p, &k);  // one run each, of one size (same_layout)
    contiguous_bytes(*b_.nodes[node_], &q, &kb);
    const size_t m = std::min(budget, k - at_);
    if (m) {
      update_pair(ha_, p + at_, hb_, q + at_, m);
      if (evict_a_) evict_from_caches(p + at_, m);
      if (evict_b_) evict_from_caches(q + at_, m);
    }
    at_ += m, budget -= m;
    if (at_ == k) ++node_, at_ = 0;
  }
  return node_ == a_.nodes.size();
}

std::pair<Digest, Digest> PairHasher::finish() {
  if (!lockstep_) return {pa_.finish(), pb_.finish()};
  return {ha_.finish(), hb_.finish()};
}

void evict_from_caches(const Frozen& f) {
  for (const NodePtr& n : f.nodes) for_each_piece(*n, [](const uint8_t* p, size_t k) { evict_from_caches(p, k); });
}

void write_frozen(const Frozen& f, const std::string& path) {
  io::AtomicFile out(path, "[checkpoint]");
  out.write(f.header);
  for (const NodePtr& n : f.nodes) for_each_piece(*n, [&](const uint8_t* p, size_t k) { out.write(p, k); });
  out.commit();
}

Digest state_commitment(const State& s) { return commitment_of(freeze(s)); }

void write_checkpoint(const State& s, const std::string& path) { write_frozen(freeze(s), path); }

State read_checkpoint(const std::string& path, Digest* commitment) {
  const std::string who = "[checkpoint] '" + path + "'";
  std::string bytes = io::read_file(path, who);
  State s;
  try {
    s = nn::safe_load_bytes(bytes);
  } catch (const FormatError& e) {
    throw FormatError(who + ": not a valid safetensors file: " + e.what());
  }
  for (size_t i = 1; i < s.size(); ++i)
    if (!(s[i - 1].first < s[i].first))
      throw FormatError(who + ": not canonical: tensor \"" + s[i].first + "\" comes after \"" + s[i - 1].first + "\"");
  std::string header = nn::safe_save_header(s);
  if (bytes.compare(0, header.size(), header) != 0)
    throw FormatError(who + ": not canonical: its header is not the one the state's tensors give (metadata, "
                      "spacing or key order)");
  if (commitment) *commitment = sha256(bytes);
  return s;
}

}  // namespace maroon::verify
