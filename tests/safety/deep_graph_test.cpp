// Graphs of any depth are built, realized and freed without recursion on the call stack, and a
// long fused chain is cut into kernels of bounded size (issue 21). Each test runs on a 256 KiB
// stack: one frame per node would overflow it after a few thousand nodes.
#include <string>

#include "maroon/backend.h"
#include "maroon/maroon.h"
#include "util.h"

namespace maroon::test {
namespace {

TEST(DeepGraph, FreeingALongUnrealizedChainDoesNotRecurse) {
  on_small_stack([] {
    Tensor x = Tensor::ones({1});
    for (int i = 0; i < 100000; ++i) x = x + 1;
    // x goes out of scope: freeing used to recurse through ~Node once per link.
  });
}

// Each link is four nodes (a constant, its reshape and expand, the add): 100000 links are
// 400000 nodes, on a stack that would hold a few thousand frames. (A million links also work:
// about 2.6 GB and a minute of CPU, too much for every CI run; docs/reliability.md.)
TEST(DeepGraph, ALongChainRealizesExactly) {
  on_small_stack([] {
    for (Backend b : {Backend::Cpu, Backend::Ref}) {
      Backend old = backend();
      set_backend(b);
      const int n = 100000;
      Tensor x = Tensor::ones({3});
      for (int i = 0; i < n; ++i) x = x + 1;
      EXPECT_EQ(x.to_vector<float>(), std::vector<float>(3, static_cast<float>(n + 1)));
      set_backend(old);
    }
  });
}

TEST(DeepGraph, GradientsOfADeepChain) {
  on_small_stack([] {
    Tensor w = Tensor::full({2}, 1.0, DType::Float32);
    Tensor x = w;
    for (int i = 0; i < 50000; ++i) x = x * 1.0f + 0.0f;
    x.sum().backward();
    ASSERT_TRUE(w.grad());
    EXPECT_EQ(w.grad()->to_vector<float>(), std::vector<float>(2, 1.0f));
  });
}

TEST(DeepGraph, KeccakOfThirtyTwoKibibytes) {
  // Keccak's rounds unroll into a graph thousands of nodes deep; 32 KiB crashed from Python.
  on_small_stack([] {
    std::vector<uint8_t> msg(32 << 10, 'a');
    Tensor d = Tensor::from_vector(msg, {static_cast<int64_t>(msg.size())}).keccak();
    std::vector<uint8_t> got = d.to_vector<uint8_t>();
    ASSERT_EQ(got.size(), 32u);
    std::string hex;
    for (uint8_t c : got) hex += "0123456789abcdef"[c >> 4], hex += "0123456789abcdef"[c & 15];
    // The oracle: Python's hashlib.sha3_256(b"a" * 32768).hexdigest().
    EXPECT_EQ(hex, "c33c4d99ac8ace82dbcbc077cb9bec4359e6547a89a238fd2914ef533ef5c17e");
  });
}

}  // namespace
}  // namespace maroon::test
