// math-check: exhaustive verification of maroon::math's binary32 exp2, log2 and sin against
// MPFR: maroon's function is evaluated on every input in every rounding mode and compared bit for
// bit. One MPFR evaluation serves all four modes (see tests/math/mpfr_ref.h); for the monotonic
// exp2 and log2, runs of inputs whose ends have identical correctly rounded results share those
// results (see Unit below), which is exact and saves most MPFR calls. Nothing is skipped: NaNs,
// infinities, zeros and subnormals are all compared with MPFR's own special-value semantics.
//
//   math-check [--func exp2|log2|sin|all] [--threads N] [--range LO HI] [--time-limit S]
//
// LO and HI are bit patterns (decimal or 0x...), HI exclusive; the default is 0 .. 2^32.
// --time-limit stops handing out work after S seconds (per function) and reports the prefix of
// the range that was checked completely.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "math/internal.h"
#include "math/math.h"
#include "../../tests/math/mpfr_ref.h"

using namespace maroon;

namespace {

struct Totals {
  uint64_t mismatches[4] = {0, 0, 0, 0};
  uint64_t mpfr_calls = 0;
  uint64_t fast = 0, accurate = 0, special = 0, unresolved = 0;
};

uint64_t call(mathref::Fn fn, uint64_t x, Round r) {
  switch (fn) {
    case mathref::Fn::Exp2: return math::exp2(sf::kF32, x, r);
    case mathref::Fn::Log2: return math::log2(sf::kF32, x, r);
    case mathref::Fn::Sin: return math::sin(sf::kF32, x, r);
    case mathref::Fn::Pow: break;
  }
  return 0;
}

std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown cpu";
}

// The correctly rounded results of one input in the four modes.
struct R4 {
  uint64_t v[4];
  bool operator==(const R4& o) const {
    return v[0] == o.v[0] && v[1] == o.v[1] && v[2] == o.v[2] && v[3] == o.v[3];
  }
};

// A run of consecutive bit patterns. `mono`: all finite and of one sign, so the real inputs are
// monotonic in the bit pattern; with exp2 and log2 monotonic too, the correctly rounded result
// (in each mode) is monotonic over the run. Then if the two ends of a sub-run have the same four
// results, every input between has them as well (a rigorous consequence, not a sample): the
// checker still evaluates maroon's function on every input and compares it with those results,
// but needs MPFR only at the ends. Everything else is evaluated by MPFR input by input.
struct Unit {
  uint64_t lo, hi;  // inclusive
  bool mono;
};

class Checker {
 public:
  Checker(mathref::Fn fn, const char* name, std::mutex* mu, uint64_t* printed)
      : fn_(fn), name_(name), oracle_(32), mu_(mu), printed_(printed) {
    math::detail::stats() = {};
  }

  void run(const Unit& u) {
    if (!u.mono) {
      for (uint64_t x = u.lo; x <= u.hi; ++x) compare(x, ref(x));
      return;
    }
    R4 a = ref(u.lo), b = ref(u.hi);
    compare(u.lo, a);
    if (u.hi != u.lo) compare(u.hi, b);
    bisect(u.lo, u.hi, a, b);
  }

  void add_to(Totals* t) const {
    const auto& st = math::detail::stats();
    for (int m = 0; m < 4; ++m) t->mismatches[m] += mine_.mismatches[m];
    t->mpfr_calls += mine_.mpfr_calls;
    t->fast += st.fast;
    t->accurate += st.accurate;
    t->special += st.special;
    t->unresolved += st.unresolved;
  }

 private:
  R4 ref(uint64_t x) {
    ++mine_.mpfr_calls;
    mathref::RefValue v = oracle_.eval(fn_, sf::kF32, x);
    R4 r;
    for (int m = 0; m < 4; ++m) r.v[m] = mathref::round_ref(sf::kF32, v, kAllRounds[m]);
    return r;
  }
  void compare(uint64_t x, const R4& want) {
    for (int m = 0; m < 4; ++m) {
      uint64_t got = call(fn_, x, kAllRounds[m]);
      if (got == want.v[m]) continue;
      ++mine_.mismatches[m];
      std::lock_guard<std::mutex> lock(*mu_);
      if ((*printed_)++ < 200)
        std::printf("MISMATCH %s x=0x%08llx mode=%s got=0x%08llx want=0x%08llx\n", name_,
                    (unsigned long long)x, std::string(round_name(kAllRounds[m])).c_str(),
                    (unsigned long long)got, (unsigned long long)want.v[m]);
    }
  }
  // Ends lo, hi already checked; checks the inputs strictly between.
  void bisect(uint64_t lo, uint64_t hi, const R4& a, const R4& b) {
    if (hi - lo <= 1) return;
    if (a == b) {
      for (uint64_t x = lo + 1; x < hi; ++x) compare(x, a);
      return;
    }
    if (hi - lo <= 2) {
      for (uint64_t x = lo + 1; x < hi; ++x) compare(x, ref(x));
      return;
    }
    uint64_t mid = lo + (hi - lo) / 2;
    R4 m = ref(mid);
    compare(mid, m);
    bisect(lo, mid, a, m);
    bisect(mid, hi, m, b);
  }

  mathref::Fn fn_;
  const char* name_;
  mathref::Oracle oracle_;  // 32 bits >= 24 + 2
  Totals mine_;
  std::mutex* mu_;
  uint64_t* printed_;
};

// Splits [lo, hi) into units of at most 2^16 inputs that never straddle a special value.
std::vector<Unit> plan(mathref::Fn fn, uint64_t lo, uint64_t hi) {
  const uint64_t kChunk = 1 << 16;
  bool monotonic = fn == mathref::Fn::Exp2 || fn == mathref::Fn::Log2;
  struct Seg { uint64_t lo, hi; bool mono; };  // inclusive
  const Seg segs[] = {
      {0x00000000, 0x00000000, false}, {0x00000001, 0x7f7fffff, monotonic},
      {0x7f800000, 0x80000000, false},  // +inf, NaNs, -0
      {0x80000001, 0xff7fffff, monotonic}, {0xff800000, 0xffffffff, false},
  };
  std::vector<Unit> units;
  for (const Seg& s : segs) {
    uint64_t a = s.lo > lo ? s.lo : lo, b = s.hi < hi - 1 ? s.hi : hi - 1;
    for (uint64_t x = a; x <= b && a <= b; x += kChunk) {
      uint64_t e = x + kChunk - 1 < b ? x + kChunk - 1 : b;
      units.push_back({x, e, s.mono});
      if (e == b) break;
    }
  }
  return units;
}

int run(mathref::Fn fn, const char* name, uint64_t lo, uint64_t hi, unsigned threads, double limit) {
  std::vector<Unit> units = plan(fn, lo, hi);
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> done{0};
  std::mutex mu;
  Totals total;
  uint64_t printed = 0;
  const uint64_t span = hi - lo, step = span / 50 ? span / 50 : 1;
  auto t0 = std::chrono::steady_clock::now();
  auto worker = [&] {
    Checker c(fn, name, &mu, &printed);
    for (;;) {
      if (limit > 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > limit)
        stop = true;
      if (stop) break;
      size_t i = next.fetch_add(1);
      if (i >= units.size()) break;
      c.run(units[i]);
      uint64_t n = units[i].hi - units[i].lo + 1;
      uint64_t d = done.fetch_add(n) + n;
      if (d / step != (d - n) / step) {
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::fprintf(stderr, "%s: %5.1f%% after %.0f s\n", name, 100.0 * double(d) / double(span), s);
      }
    }
    std::lock_guard<std::mutex> lock(mu);
    c.add_to(&total);
  };
  std::vector<std::thread> pool;
  for (unsigned i = 0; i < threads; ++i) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  uint64_t sum = 0;
  // Units are handed out in order and every unit handed out is finished, so the inputs checked
  // are exactly [lo, end of the last unit handed out).
  size_t handed = next.load() < units.size() ? next.load() : units.size();
  if (handed < units.size()) {
    hi = handed ? units[handed - 1].hi + 1 : lo;
    std::printf("RESULT %s stopped by --time-limit: checked [0x%llx, 0x%llx) only\n", name,
                (unsigned long long)lo, (unsigned long long)hi);
  }
  const uint64_t checked = hi - lo;
  std::printf("RESULT %s inputs [0x%llx, 0x%llx) = %llu, threads %u, %.1f s, MPFR calls %llu, cpu: %s\n",
              name, (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)checked, threads,
              secs, (unsigned long long)total.mpfr_calls, cpu_name().c_str());
  for (int m = 0; m < 4; ++m) {
    std::printf("RESULT %s %-12s mismatches %llu\n", name, std::string(round_name(kAllRounds[m])).c_str(),
                (unsigned long long)total.mismatches[m]);
    sum += total.mismatches[m];
  }
  std::printf("RESULT %s paths (calls, all modes): fast %llu, accurate %llu, special %llu, unresolved %llu\n",
              name, (unsigned long long)total.fast, (unsigned long long)total.accurate,
              (unsigned long long)total.special, (unsigned long long)total.unresolved);
  std::fflush(stdout);
  return sum == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string func = "all";
  double limit = 0;
  unsigned threads = std::thread::hardware_concurrency();
  uint64_t lo = 0, hi = uint64_t{1} << 32;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--func" && i + 1 < argc) {
      func = argv[++i];
    } else if (a == "--threads" && i + 1 < argc) {
      threads = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 0));
    } else if (a == "--time-limit" && i + 1 < argc) {
      limit = std::strtod(argv[++i], nullptr);
    } else if (a == "--range" && i + 2 < argc) {
      lo = std::strtoull(argv[++i], nullptr, 0);
      hi = std::strtoull(argv[++i], nullptr, 0);
    } else {
      std::fprintf(stderr,
                   "usage: %s [--func exp2|log2|sin|all] [--threads N] [--range LO HI] [--time-limit S]\n",
                   argv[0]);
      return 2;
    }
  }
  if (threads == 0) threads = 1;
  if (hi > (uint64_t{1} << 32)) hi = uint64_t{1} << 32;
  if (lo >= hi) {
    std::fprintf(stderr, "empty range\n");
    return 2;
  }
  struct Item { const char* name; mathref::Fn fn; };
  const Item items[] = {{"exp2", mathref::Fn::Exp2}, {"log2", mathref::Fn::Log2}, {"sin", mathref::Fn::Sin}};
  int rc = 0, ran = 0;
  for (const Item& it : items) {
    if (func != "all" && func != it.name) continue;
    rc |= run(it.fn, it.name, lo, hi, threads, limit);
    ++ran;
  }
  if (!ran) {
    std::fprintf(stderr, "unknown --func %s\n", func.c_str());
    return 2;
  }
  return rc;
}
