// The engine's counters (maroon/counters.h, tinygrad's GlobalCounters): kernels, estimated
// operations and bytes, time and live buffer bytes, counted by the executors; MAROON_DEBUG=2's
// one line per kernel; and counting never changes a bit.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "maroon/backend.h"
#include "maroon/counters.h"
#include "maroon/settings.h"
#include "maroon/tensor.h"

namespace maroon {
namespace {

std::vector<std::string> g_lines;
void keep_line(const std::string& line) { g_lines.push_back(line); }

Tensor ramp(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return Tensor::arange(n).cast(DType::Float32).reshape(s).contiguous().realize();
}

TEST(Counters, AMatmulCountsItsKernelOperationsBytesAndTime) {
  if (backend() != Backend::Cpu) GTEST_SKIP() << "counted by the CPU backend";
  const int64_t M = 16, K = 32, N = 8;
  Tensor a = ramp({M, K}), b = ramp({K, N});
  reset_counters();
  Tensor c = a.matmul(b).realize();
  Counters k = counters();
  EXPECT_GE(k.kernel_count, 1);
  EXPECT_GE(k.global_ops, 2 * M * K * N);                 // a multiply and an add per term
  EXPECT_GE(k.global_mem, (M * K + K * N + M * N) * 4);   // both operands read, the result written
  EXPECT_GT(k.time_sum_s, 0.0);
  EXPECT_GE(k.mem_used, M * N * 4);
  reset_counters();
  Counters z = counters();
  EXPECT_EQ(z.kernel_count, 0);
  EXPECT_EQ(z.global_ops, 0);
  EXPECT_EQ(z.global_mem, 0);
  EXPECT_EQ(z.time_sum_s, 0.0);
  EXPECT_EQ(z.mem_used, k.mem_used);  // not reset: the buffers are still alive
}

TEST(Counters, DebugTwoPrintsOneLinePerKernelAndChangesNoBit) {
  if (backend() != Backend::Cpu) GTEST_SKIP() << "counted by the CPU backend";
  Tensor x = ramp({4, 1000});
  std::vector<uint8_t> quiet = ((x * 3.0 + 1.0).sum({1}) + 2.0).realize().bytes();
  set_kernel_log_sink(&keep_line);
  g_lines.clear();
  set_setting("MAROON_DEBUG", "2");
  reset_counters();
  std::vector<uint8_t> loud = ((x * 3.0 + 1.0).sum({1}) + 2.0).realize().bytes();
  const int64_t kernels = counters().kernel_count;
  set_setting("MAROON_DEBUG", "1");
  (x * 5.0).realize();  // below 2: counted, not printed
  set_setting("MAROON_DEBUG", "");
  set_kernel_log_sink(nullptr);
  EXPECT_EQ(quiet, loud);
  ASSERT_GE(kernels, 1);
  ASSERT_EQ(static_cast<int64_t>(g_lines.size()), kernels);
  for (const std::string& l : g_lines) {
    EXPECT_EQ(l.rfind("*** CPU", 0), 0u) << l;
    EXPECT_NE(l.find(" arg "), std::string::npos) << l;
    EXPECT_NE(l.find(" tm "), std::string::npos) << l;
  }
  EXPECT_NE(g_lines.back().find("(4,)"), std::string::npos) << g_lines.back();
}

}  // namespace
}  // namespace maroon
