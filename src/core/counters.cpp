// Engine counters and MAROON_DEBUG's kernel lines (maroon/counters.h). Atomics: kernels run under
// realize's lock, but buffers are allocated and freed on any thread.
#include "core/counters.h"

#include <atomic>
#include <cstdio>
#include <string>
#include <vector>

#include "core/node_map.h"
#include "core/ops.h"
#include "core/view.h"
#include "maroon/tensor.h"
#include "maroon/settings.h"

namespace maroon {

namespace {

std::atomic<int64_t> g_kernels{0}, g_ops{0}, g_mem{0}, g_time_ns{0}, g_mem_used{0};
std::atomic<KernelLogSink> g_sink{nullptr};
// Set for good by the first counters() or reset_counters() (kernel_timing()).
std::atomic<bool> g_watched{false};

struct Estimate {
  int64_t ops = 0, mem = 0;
  int args = 1;  // the output
};

// The bytes a realized source is read from: its view's elements, at most its buffer's.
int64_t source_bytes(const Node& s) {
  int64_t n = numel(s.shape);
  if (s.buffer && s.buffer->count < n) n = s.buffer->count;
  return n * itemsize(s.dtype);
}

// The kernel rooted at n computes n and its unrealized sources (fused into it or deferred to
// it) and reads its realized sources. Each op counts the elements it computes (a reduction the
// elements it folds), so a matmul counts 2*M*K*N; views count nothing.
Estimate estimate(const Node& root) {
  Estimate e;
  e.mem = numel(root.shape) * itemsize(root.dtype);
  NodeSet seen;  // a flat list for a small kernel: a hash set's buckets were a malloc per kernel
  seen.insert(&root);
  // Reused per thread (estimate() never nests): a fresh list was a heap block per kernel.
  thread_local std::vector<const Node*> stack;
  stack.clear();
  stack.push_back(&root);
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    OpKind k = op_info(n->op).kind;
    if (k != OpKind::Movement && k != OpKind::Source)
      e.ops += numel(k == OpKind::Reduce && !n->src.empty() ? n->src[0]->shape : n->shape);
    for (const NodePtr& s : n->src) {
      if (!seen.insert(s.get())) continue;
      if (s->realized) {
        e.mem += source_bytes(*s);
        ++e.args;
      } else {
        stack.push_back(s.get());
      }
    }
  }
  return e;
}

// tinygrad's time_to_str: seconds above 10 s, ms above 10 ms, else us, in `w` columns.
std::string time_str(double t, int w) {
  char buf[48];
  if (t > 10) std::snprintf(buf, sizeof buf, "%*.2fs ", w, t);
  else if (t > 10e-3) std::snprintf(buf, sizeof buf, "%*.2fms", w, t * 1e3);
  else std::snprintf(buf, sizeof buf, "%*.2fus", w, t * 1e6);
  return buf;
}

// tinygrad's DEBUG=2 line: kernel number, name, arguments, memory in use, this kernel's time
// over the total since reset, and the rates the estimates give.
void print_line(const Node& n, const char* path, const Estimate& e, double seconds) {
  std::string name = std::string(path) + " " + std::string(op_name(n.op)) + " " + std::string(dtype_name(n.dtype)) +
                     " " + shape_str(n.shape);
  double t = seconds > 0 ? seconds : 1e-20;
  char buf[320];
  std::snprintf(buf, sizeof buf, "*** CPU     %4lld %-46s arg %2d mem %6.2f GB tm %s/%9.2fms (%7.0f GFLOPS %4.0f GB/s)",
                static_cast<long long>(g_kernels.load()), name.c_str(), e.args, g_mem_used.load() / 1e9,
                time_str(seconds, 9).c_str(), g_time_ns.load() * 1e-6, e.ops / t * 1e-9, e.mem / t * 1e-9);
  if (KernelLogSink sink = g_sink.load()) {
    sink(buf);
  } else {
    std::printf("%s\n", buf);
    std::fflush(stdout);
  }
}

}  // namespace

void count_kernel(const Node& n, const char* path, double seconds) {
  Estimate e = estimate(n);
  g_kernels.fetch_add(1, std::memory_order_relaxed);
  g_ops.fetch_add(e.ops, std::memory_order_relaxed);
  g_mem.fetch_add(e.mem, std::memory_order_relaxed);
  g_time_ns.fetch_add(static_cast<int64_t>(seconds * 1e9), std::memory_order_relaxed);
  if (setting_level(SettingId::MAROON_DEBUG) >= 2) print_line(n, path, e, seconds);
}

void count_buffer_bytes(int64_t delta) { g_mem_used.fetch_add(delta, std::memory_order_relaxed); }

bool kernel_timing() {
  return g_watched.load(std::memory_order_relaxed) || setting_level(SettingId::MAROON_DEBUG) >= 2;
}

Counters counters() {
  g_watched.store(true, std::memory_order_relaxed);
  Counters c;
  c.kernel_count = g_kernels.load();
  c.global_ops = g_ops.load();
  c.global_mem = g_mem.load();
  c.time_sum_s = g_time_ns.load() * 1e-9;
  c.mem_used = g_mem_used.load();
  return c;
}

void reset_counters() {
  g_watched.store(true, std::memory_order_relaxed);
  g_kernels = 0;
  g_ops = 0;
  g_mem = 0;
  g_time_ns = 0;
}

void set_kernel_log_sink(KernelLogSink sink) { g_sink = sink; }

}  // namespace maroon
