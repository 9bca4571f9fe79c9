// The list of live TensorStates (src/api/autograd.cpp), which backward() and TinyJit walk: it gives
// exactly the live tensors, in creation order, whatever dies in between or on other threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <thread>
#include <vector>

#include "core/jit_hooks.h"
#include "maroon/tensor.h"

namespace maroon::test {
namespace {

// The positions of `want` among the live states (-1: not live).
std::vector<long> positions(const std::vector<const TensorState*>& want) {
  std::vector<std::shared_ptr<TensorState>> live = live_tensor_states();
  std::vector<long> at;
  for (const TensorState* w : want) {
    auto it = std::find_if(live.begin(), live.end(), [&](const auto& s) { return s.get() == w; });
    at.push_back(it == live.end() ? -1 : it - live.begin());
  }
  return at;
}

TEST(TensorState, LiveListHasTheLiveStatesInCreationOrder) {
  std::vector<Tensor> ts;
  for (int i = 0; i < 5; ++i) ts.push_back(Tensor::full({2}, static_cast<double>(i)));
  std::vector<const TensorState*> st;
  for (const Tensor& t : ts) st.push_back(t.state().get());
  std::vector<long> at = positions(st);
  for (size_t i = 0; i < at.size(); ++i) ASSERT_GE(at[i], 0) << i;
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end()));
  // Dropped from the head, the middle and the tail: the rest keep their order.
  ts.erase(ts.begin() + 4);
  ts.erase(ts.begin() + 2);
  ts.erase(ts.begin());
  at = positions(st);
  EXPECT_EQ(at[0], -1);
  EXPECT_EQ(at[2], -1);
  EXPECT_EQ(at[4], -1);
  ASSERT_GE(at[1], 0);
  EXPECT_GT(at[3], at[1]);
}

TEST(TensorState, CopiesShareOneStateThatLeavesWithTheLastHandle) {
  const TensorState* s;
  {
    Tensor a = Tensor::full({3}, 1.0);
    Tensor b = a;
    s = a.state().get();
    EXPECT_EQ(b.state().get(), s);
    { Tensor c = b; }
    EXPECT_GE(positions({s})[0], 0);
  }
  EXPECT_EQ(positions({s})[0], -1);
}

TEST(TensorState, AStateThatDiesHoldingOthersUnlinksThemAll) {
  // A grad chain: destroying the outer state destroys the states it holds from inside its own
  // destruction; none of them is listed after.
  std::vector<const TensorState*> st;
  {
    Tensor x = Tensor::full({2}, 1.0);
    Tensor g1 = Tensor::full({2}, 2.0), g2 = Tensor::full({2}, 3.0);
    g1.set_grad(g2);
    x.set_grad(g1);
    st = {x.state().get(), g1.state().get(), g2.state().get()};
    g1 = Tensor::full({2}, 4.0);  // the grads now live only through x
    g2 = Tensor::full({2}, 5.0);
    for (long p : positions(st)) EXPECT_GE(p, 0);
  }
  for (long p : positions(st)) EXPECT_EQ(p, -1);
}

TEST(TensorState, BackwardStillFillsTheGradOfEveryLiveLeaf) {
  Tensor x = Tensor::full({3}, 2.0).contiguous().realize();
  Tensor y = Tensor::full({3}, 5.0).contiguous().realize();
  (x * y).sum().backward();
  ASSERT_TRUE(x.grad() && y.grad());
  EXPECT_EQ(x.grad()->tolist(), std::vector<double>(3, 5.0));
  EXPECT_EQ(y.grad()->tolist(), std::vector<double>(3, 2.0));
}

TEST(TensorState, ThreadsBuildingAndDroppingTensorsKeepTheListWhole) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([] {
      for (int i = 0; i < 2000; ++i) {
        Tensor a = Tensor::full({1}, 1.0);
        Tensor b = a + 1.0;
        if (i % 100 == 0) live_tensor_states();  // walked while others add and drop states
      }
    });
  Tensor kept = Tensor::full({1}, 7.0);
  for (auto& th : threads) th.join();
  EXPECT_GE(positions({kept.state().get()})[0], 0);
  for (const auto& s : live_tensor_states()) EXPECT_TRUE(s->node != nullptr);
}

}  // namespace
}  // namespace maroon::test
