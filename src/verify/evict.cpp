// Why Run's background hasher evicts each committed state from the caches once it has hashed it.
//
// A committed state's buffers go back to the buffer cache (src/core/buffer.cpp) a step later, and
// the training loop writes them again as new tensors. When the hasher, on another core, has read
// them, its core's caches still hold those lines: every store of the loop to them then has to
// take the line from (invalidate it in) the other core first. On the 2-vCPU EPYC these figures
// come from, the two vCPUs share no cache (a line goes there and back in ~420 ns) and those
// stores stalled the loop's elementwise kernels (perf: MulF32, TileEval's stack pushes waiting on
// a full store buffer) for 14-24% of the MNIST MLP's step; a neighbour hashing 8 MB of its own
// cost the step nothing. Flushing the lines the hasher has read leaves them in memory only, so a
// later store misses to memory like a fresh buffer's, without asking another core: 0-5% of the
// step (docs/verify.md §11). Only cache state changes: the bytes, and so the commitments, do not.
#include "verify/evict.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#if defined(__linux__)
#include <sched.h>
#endif

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace maroon::verify {

#if defined(__x86_64__)

namespace {

constexpr size_t kEvictLine = 64;  // x86-64's cache line

bool have_clflushopt() {
  static const bool yes = [] {
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    return (b & (1u << 23)) != 0;  // CPUID.(EAX=7,ECX=0):EBX.CLFLUSHOPT[bit 23]
  }();
  return yes;
}

// CLFLUSHOPT flushes lines in parallel; CLFLUSH (SSE2, every x86-64) one after another.
__attribute__((target("clflushopt"))) void flush_lines_opt(const uint8_t* p, const uint8_t* end) {
  for (; p < end; p += kEvictLine) _mm_clflushopt(const_cast<uint8_t*>(p));
}
void flush_lines(const uint8_t* p, const uint8_t* end) {
  for (; p < end; p += kEvictLine) _mm_clflush(p);
}

}  // namespace

void evict_from_caches(const uint8_t* p, size_t n) {
  if (n == 0) return;
  const uint8_t* first = p - reinterpret_cast<uintptr_t>(p) % kEvictLine;  // the line holding p
  (have_clflushopt() ? flush_lines_opt : flush_lines)(first, p + n);
}

#else

void evict_from_caches(const uint8_t*, size_t) {}

#endif

namespace {

// A sysfs CPU list ("0-3,8,10-11") as numbers; false on anything else.
bool parse_cpu_list(const std::string& text, std::vector<int>* out) {
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    while (!part.empty() && (part.back() == '\n' || part.back() == ' ')) part.pop_back();
    if (part.empty()) continue;
    const size_t dash = part.find('-');
    try {
      size_t used = 0;
      const int lo = std::stoi(part.substr(0, dash), &used);
      if (used != (dash == std::string::npos ? part.size() : dash)) return false;
      int hi = lo;
      if (dash != std::string::npos) {
        hi = std::stoi(part.substr(dash + 1), &used);
        if (used != part.size() - dash - 1) return false;
      }
      if (lo < 0 || hi < lo || hi - lo > 65536) return false;
      for (int c = lo; c <= hi; ++c) out->push_back(c);
    } catch (const std::exception&) {
      return false;
    }
  }
  return !out->empty();
}

bool read_line(const std::string& path, std::string* line) {
  std::ifstream f(path);
  return static_cast<bool>(std::getline(f, *line));
}

}  // namespace

bool share_last_level_cache(const std::string& root, const std::vector<int>& cpus) {
  if (cpus.size() < 2) return cpus.size() == 1;  // one core: the hasher and the loop share its caches
  const std::string dir = root + "/cpu" + std::to_string(cpus[0]) + "/cache/index";
  int best_level = -1;
  std::vector<int> shared;
  for (int i = 0;; ++i) {  // index0, index1, ... until one is missing
    std::string level, list;
    if (!read_line(dir + std::to_string(i) + "/level", &level)) break;
    std::vector<int> these;
    if (!read_line(dir + std::to_string(i) + "/shared_cpu_list", &list) || !parse_cpu_list(list, &these)) return false;
    int lv = 0;
    try {
      lv = std::stoi(level);
    } catch (const std::exception&) {
      return false;
    }
    if (lv > best_level) best_level = lv, shared = std::move(these);
  }
  if (best_level < 0) return false;
  for (int c : cpus)
    if (std::find(shared.begin(), shared.end(), c) == shared.end()) return false;
  return true;
}

bool eviction_helps() {
  static const bool helps = [] {
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return true;
    std::vector<int> cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
    return !share_last_level_cache("/sys/devices/system/cpu", cpus);
#else
    return true;
#endif
  }();
  return helps;
}

}  // namespace maroon::verify
