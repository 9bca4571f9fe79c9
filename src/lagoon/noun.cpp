// Nouns, and Urbit's jam/cue (hoon.hoon ++jam ++mat ++cue ++rub), bit for bit.
//
// The stream is one atom written from its least significant bit: an atom is a 0 bit then
// mat(a); a cell is the bits 1,0 then jam(head), jam(tail); a backreference is 1,1 then
// mat(offset). mat(0) is the single bit 1; otherwise, with b = met(a) and c = met(b): c zero
// bits, a 1, the low c-1 bits of b, then the b bits of a. jam memoizes every noun's start
// offset by structural equality: a repeated cell is always a backreference, a repeated atom
// only when its bit length exceeds the offset's (otherwise it is written again).
//
// cue is written for hostile input: it reads with bounds checks (never past the end), runs
// iteratively (no recursion to overflow on deep nouns), accepts a backreference only to the
// offset of an earlier noun that is already complete (Hoon's cue crashes otherwise), and
// shares backreferenced nouns instead of copying them, so memory is O(input).
#include <bit>
#include <cstring>
#include <functional>
#include <unordered_map>

#include "lagoon/internal.h"
#include "lagoon/lagoon.hpp"

namespace maroon::lagoon {

static void trim(std::vector<uint8_t>& b) {
  while (!b.empty() && b.back() == 0) b.pop_back();
}

// Children are released iteratively: a deep noun (a long list from cue) would otherwise
// recurse once per level in shared_ptr's destructor and overflow the stack.
Noun::~Noun() {
  std::vector<NounP> stack;
  auto take = [&](NounP& p) {
    if (p && p.use_count() == 1) stack.push_back(std::move(p));
    p.reset();
  };
  take(head);
  take(tail);
  while (!stack.empty()) {
    NounP n = std::move(stack.back());
    stack.pop_back();
    auto& m = const_cast<Noun&>(*n);
    take(m.head);
    take(m.tail);
  }
}

NounP Noun::make_atom(std::vector<uint8_t> bytes) {
  auto n = std::make_shared<Noun>();
  trim(bytes);
  n->atom = std::move(bytes);
  return n;
}

NounP Noun::make_atom(uint64_t v) {
  std::vector<uint8_t> b(8);
  std::memcpy(b.data(), &v, 8);
  return make_atom(std::move(b));
}

NounP Noun::make_cell(NounP h, NounP t) {
  auto n = std::make_shared<Noun>();
  n->is_cell = true;
  n->head = std::move(h);
  n->tail = std::move(t);
  return n;
}

bool noun_equal(const Noun& a, const Noun& b) {
  std::vector<std::pair<const Noun*, const Noun*>> todo{{&a, &b}};
  while (!todo.empty()) {
    auto [x, y] = todo.back();
    todo.pop_back();
    if (x == y) continue;
    if (x->is_cell != y->is_cell) return false;
    if (!x->is_cell) {
      if (x->atom != y->atom) return false;
      continue;
    }
    todo.push_back({x->head.get(), y->head.get()});
    todo.push_back({x->tail.get(), y->tail.get()});
  }
  return true;
}

static uint64_t met0(const std::vector<uint8_t>& a) {  // bit length of an atom
  if (a.empty()) return 0;
  return (a.size() - 1) * 8 + (8 - std::countl_zero(a.back()));
}

static uint64_t met0(uint64_t v) { return v ? 64 - std::countl_zero(v) : 0; }

namespace {

class BitWriter {
 public:
  void bit(bool b) {
    if (n_ % 8 == 0) out_.push_back(0);
    if (b) out_.back() |= uint8_t(1u << (n_ % 8));
    ++n_;
  }
  void bits(uint64_t v, uint64_t count) {  // low `count` bits of v
    for (uint64_t i = 0; i < count; ++i) bit((v >> i) & 1);
  }
  void atom_bits(const std::vector<uint8_t>& a, uint64_t count) {
    if (n_ % 8 == 0) {  // byte aligned: copy whole bytes
      uint64_t whole = count / 8;
      out_.insert(out_.end(), a.begin(), a.begin() + whole);
      n_ += whole * 8;
      for (uint64_t i = whole * 8; i < count; ++i) bit((a[i / 8] >> (i % 8)) & 1);
      return;
    }
    const unsigned s = n_ % 8;
    uint64_t i = 0;
    for (; i + 8 <= count; i += 8) {
      uint8_t byte = a[i / 8];
      out_.back() |= uint8_t(byte << s);
      out_.push_back(uint8_t(byte >> (8 - s)));
      n_ += 8;
    }
    for (; i < count; ++i) bit((a[i / 8] >> (i % 8)) & 1);
  }
  uint64_t size() const { return n_; }
  std::vector<uint8_t> take() {
    trim(out_);
    return std::move(out_);
  }

 private:
  std::vector<uint8_t> out_;
  uint64_t n_ = 0;
};

void mat(BitWriter& w, const std::vector<uint8_t>& a) {
  uint64_t b = met0(a);
  if (b == 0) {
    w.bit(1);
    return;
  }
  uint64_t c = met0(b);
  w.bits(0, c);
  w.bit(1);
  w.bits(b, c - 1);
  w.atom_bits(a, b);
}

void mat(BitWriter& w, uint64_t v) {
  std::vector<uint8_t> b(8);
  std::memcpy(b.data(), &v, 8);
  trim(b);
  mat(w, b);
}

// Structural hashes, memoized per node and computed without recursion (nouns can be deep).
struct NounHash {
  std::unordered_map<const Noun*, size_t> memo;
  size_t operator()(const Noun* root) {
    std::vector<const Noun*> todo{root};
    while (!todo.empty()) {
      const Noun* n = todo.back();
      if (memo.count(n)) {
        todo.pop_back();
        continue;
      }
      if (!n->is_cell) {
        memo.emplace(n, std::hash<std::string_view>{}(
                            std::string_view(reinterpret_cast<const char*>(n->atom.data()), n->atom.size())));
        todo.pop_back();
        continue;
      }
      auto h = memo.find(n->head.get()), t = memo.find(n->tail.get());
      if (h != memo.end() && t != memo.end()) {
        memo.emplace(n, h->second * 1000003u ^ (t->second + 0x9e3779b97f4a7c15ull));
        todo.pop_back();
        continue;
      }
      if (h == memo.end()) todo.push_back(n->head.get());
      if (t == memo.end()) todo.push_back(n->tail.get());
    }
    return memo.at(root);
  }
};

}  // namespace

std::vector<uint8_t> jam(const Noun& root) {
  BitWriter w;
  NounHash hasher;
  std::unordered_multimap<size_t, std::pair<const Noun*, uint64_t>> seen;  // hash -> (noun, offset)
  std::vector<const Noun*> todo{&root};
  while (!todo.empty()) {
    const Noun* n = todo.back();
    todo.pop_back();
    size_t h = hasher(n);
    const uint64_t here = w.size();
    bool found = false;
    uint64_t at = 0;
    for (auto [it, end] = seen.equal_range(h); it != end; ++it)
      if (noun_equal(*it->second.first, *n)) {
        found = true;
        at = it->second.second;
        break;
      }
    if (found && !(!n->is_cell && met0(n->atom) <= met0(at))) {
      w.bits(3, 2);  // backreference: 1, 1
      mat(w, at);
      continue;
    }
    if (!found) seen.emplace(h, std::make_pair(n, here));  // Hoon memoizes before the children
    if (!n->is_cell) {
      w.bit(0);
      mat(w, n->atom);
      continue;
    }
    w.bits(1, 2);  // cell: 1, 0
    todo.push_back(n->tail.get());
    todo.push_back(n->head.get());
  }
  return w.take();
}

namespace {

class BitReader {
 public:
  BitReader(const uint8_t* d, size_t len) : d_(d), nbits_(uint64_t(len) * 8) {}
  uint64_t pos() const { return p_; }
  bool bit() {
    if (p_ >= nbits_) throw Error(kEFormat, "cue: truncated input at bit " + std::to_string(p_));
    bool b = (d_[p_ / 8] >> (p_ % 8)) & 1;
    ++p_;
    return b;
  }
  uint64_t bits(uint64_t count) {  // count <= 64
    uint64_t v = 0;
    for (uint64_t i = 0; i < count; ++i) v |= uint64_t(bit()) << i;
    return v;
  }
  std::vector<uint8_t> atom_bits(uint64_t count) {
    if (count > nbits_ - p_) throw Error(kEFormat, "cue: an atom runs past the end of the input");
    std::vector<uint8_t> out((count + 7) / 8, 0);
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t q = p_ + i;
      if ((d_[q / 8] >> (q % 8)) & 1) out[i / 8] |= uint8_t(1u << (i % 8));
    }
    p_ += count;
    return out;
  }
  uint64_t remaining() const { return nbits_ - p_; }

 private:
  const uint8_t* d_;
  uint64_t nbits_, p_ = 0;
};

// ++rub: the atom's bits, with every length checked against what is left of the input.
std::vector<uint8_t> rub(BitReader& r) {
  uint64_t c = 0;
  while (!r.bit()) {
    if (++c > 64) throw Error(kEFormat, "cue: an atom length field is longer than 64 bits");
  }
  if (c == 0) return {};
  uint64_t len = c - 1 >= 64 ? 0 : (uint64_t{1} << (c - 1));
  len += r.bits(c - 1);
  if (len > r.remaining()) throw Error(kEFormat, "cue: an atom of " + std::to_string(len) + " bits runs past the end");
  return r.atom_bits(len);
}

uint64_t small(const std::vector<uint8_t>& a) {
  if (a.size() > 8) return UINT64_MAX;
  uint64_t v = 0;
  if (!a.empty()) std::memcpy(&v, a.data(), a.size());
  return v;
}

}  // namespace

NounP cue(const uint8_t* bytes, size_t len) {
  if (len > 0 && bytes == nullptr) throw Error(kEArg, "cue: bytes is NULL");
  while (len > 0 && bytes[len - 1] == 0) --len;
  if (len == 0) throw Error(kEFormat, "cue: empty input (0 is not a jammed noun)");
  BitReader r(bytes, len);
  std::unordered_map<uint64_t, NounP> done;  // offset -> complete noun
  struct Frame {
    uint64_t start;
    NounP head;  // null until the head is complete
  };
  std::vector<Frame> stack;
  NounP result;
  for (;;) {
    // Decode one item at the current position: an atom, a backreference, or a cell start.
    uint64_t start = r.pos();
    NounP item;
    if (!r.bit()) {
      item = Noun::make_atom(rub(r));
      done.emplace(start, item);
    } else if (!r.bit()) {
      stack.push_back(Frame{start, nullptr});
      continue;
    } else {
      uint64_t at = small(rub(r));
      auto it = done.find(at);
      if (it == done.end())
        throw Error(kEFormat, "cue: backreference at bit " + std::to_string(start) +
                                  " to an offset that holds no earlier complete noun");
      item = it->second;
    }
    // Complete the cells waiting on this item.
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (!f.head) {
        f.head = item;
        item = nullptr;
        break;
      }
      NounP cellp = Noun::make_cell(f.head, item);
      done.emplace(f.start, cellp);
      stack.pop_back();
      item = cellp;
    }
    if (item) {
      result = item;
      break;
    }
  }
  // A jammed atom ends with its last encoded bit set, so nothing may follow.
  if (r.remaining() >= 8 || (r.remaining() > 0 && (bytes[len - 1] >> (8 - r.remaining())) != 0))
    throw Error(kEFormat, "cue: trailing bits after the noun");
  return result;
}

// ---------------------------------------------------------------- rays as nouns

static NounP cord(const char* s) {
  return Noun::make_atom(std::vector<uint8_t>(s, s + std::strlen(s)));
}

NounP ray_to_noun(const RayRef& a) {
  NounP shape = Noun::make_atom(uint64_t{0});
  for (size_t k = a.meta.shape.size(); k-- > 0;) shape = Noun::make_cell(Noun::make_atom(a.meta.shape[k]), shape);
  NounP meta = Noun::make_cell(
      shape, Noun::make_cell(Noun::make_atom(uint64_t(a.meta.bloq)),
                             Noun::make_cell(cord(kind_name(a.meta.kind)), Noun::make_atom(uint64_t{0}))));
  return Noun::make_cell(meta, Noun::make_atom(std::vector<uint8_t>(a.data, a.data + a.len)));
}

Ray noun_to_ray(const Noun& n) {
  auto need_cell = [](const Noun& x, const char* what) -> const Noun& {
    if (!x.is_cell) throw Error(kEFormat, std::string("ray noun: ") + what + " must be a cell");
    return x;
  };
  auto need_small = [](const Noun& x, const char* what) {
    if (x.is_cell || x.atom.size() > 8) throw Error(kEFormat, std::string("ray noun: ") + what + " must be an atom < 2^64");
    return small(x.atom);
  };
  const Noun& top = need_cell(n, "[meta data]");
  const Noun& meta = need_cell(*top.head, "meta");
  Meta m;
  m.shape.clear();
  const Noun* s = meta.head.get();
  while (s->is_cell) {
    if (m.shape.size() >= 64) throw Error(kEFormat, "ray noun: rank above 64");
    m.shape.push_back(need_small(*s->head, "a shape entry"));
    s = s->tail.get();
  }
  if (!s->atom.empty()) throw Error(kEFormat, "ray noun: the shape list must end in ~");
  const Noun& rest = need_cell(*meta.tail, "[bloq kind tail]");
  uint64_t bloq = need_small(*rest.head, "bloq");
  if (bloq > 7) throw Error(kEKind, "ray noun: bloq " + std::to_string(bloq) + " is not supported (0-7)");
  m.bloq = int(bloq);
  const Noun& kt = need_cell(*rest.tail, "[kind tail]");
  if (kt.head->is_cell) throw Error(kEFormat, "ray noun: kind must be an atom");
  std::string kind(kt.head->atom.begin(), kt.head->atom.end());
  if (kind == "i754") m.kind = Kind::I754;
  else if (kind == "uint") m.kind = Kind::Uint;
  else if (kind == "int2") m.kind = Kind::Int2;
  else throw Error(kEKind, "ray noun: kind %" + kind + " is not supported (%i754 %uint %int2)");
  if (kt.tail->is_cell || !kt.tail->atom.empty()) throw Error(kEFormat, "ray noun: tail must be ~ for %" + kind);
  if (top.tail->is_cell) throw Error(kEFormat, "ray noun: data must be an atom");
  const auto& d = top.tail->atom;
  view(m, d.data(), d.size(), "cue");
  return Ray{m, d};
}

}  // namespace maroon::lagoon
