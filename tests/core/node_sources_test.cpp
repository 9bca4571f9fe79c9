// A node's sources are held in the node (SrcList, src/core/graph.h), and ~Node frees a dying
// chain through a fixed list in its own frame before spilling to the heap: each source is owned
// exactly as long as its node, copies and moves keep the counts right, and a deep chain still
// frees without recursion.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <vector>

#include "core/graph.h"
#include "maroon/tensor.h"

namespace maroon::test {
namespace {

NodePtr leaf() { return make_node(Op::CONST, DType::Float32, {2}, {}); }

TEST(GraphSources, ListHoldsItsSourcesAndReleasesThemWithTheNode) {
  NodePtr a = leaf(), b = leaf();
  std::weak_ptr<Node> add;
  {
    NodePtr n = make_node(Op::ADD, DType::Float32, {2}, {a, b});
    add = n;
    ASSERT_EQ(n->src.size(), 2u);
    EXPECT_EQ(n->src[0], a);
    EXPECT_EQ(n->src.back(), b);
    EXPECT_EQ(a.use_count(), 2);
    int seen = 0;
    for (const NodePtr& s : n->src) seen += s == a || s == b;
    EXPECT_EQ(seen, 2);
  }
  EXPECT_TRUE(add.expired());
  EXPECT_EQ(a.use_count(), 1);
  EXPECT_EQ(b.use_count(), 1);
}

TEST(GraphSources, CopiesAndMovesKeepTheCounts) {
  NodePtr a = leaf(), b = leaf(), c = leaf();
  SrcList l{a, b, c};
  SrcList copy = l;
  EXPECT_EQ(copy.size(), 3u);
  EXPECT_EQ(a.use_count(), 3);
  SrcList moved = std::move(copy);
  EXPECT_EQ(moved.size(), 3u);
  EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): a moved-from list is empty
  EXPECT_EQ(a.use_count(), 3);
  moved.clear();
  EXPECT_EQ(a.use_count(), 2);
  l = SrcList(std::vector<NodePtr>{c});
  EXPECT_EQ(l.size(), 1u);
  EXPECT_EQ(a.use_count(), 1);
  EXPECT_EQ(c.use_count(), 2);
  EXPECT_THROW((SrcList{a, b, c}.push_back(a)), std::length_error);  // no op has four sources
}

TEST(GraphSources, AChainDeeperThanTheInlineSlotsFreesWithoutRecursion) {
  // Binary nodes whose both sources die with them: the drain list spills past its inline slots.
  // And a long unary chain: freed in a loop, not by a million nested destructors.
  std::weak_ptr<Node> first;
  {
    NodePtr n = leaf();
    first = n;
    for (int i = 0; i < 40; ++i) n = make_node(Op::ADD, DType::Float32, {2}, {n, make_node(Op::SQRT, DType::Float32, {2}, {leaf()})});
    for (int i = 0; i < 1000000; ++i) n = make_node(Op::SQRT, DType::Float32, {2}, {n});
  }
  EXPECT_TRUE(first.expired());
}

TEST(GraphSources, NodesSharedWithALiveGraphSurviveTheChainsDrain) {
  NodePtr shared = make_node(Op::SQRT, DType::Float32, {2}, {leaf()});
  {
    NodePtr n = shared;
    for (int i = 0; i < 30; ++i) n = make_node(Op::ADD, DType::Float32, {2}, {n, shared});
  }
  ASSERT_EQ(shared.use_count(), 1);
  EXPECT_EQ(shared->src.size(), 1u);
  EXPECT_EQ(shared->src[0].use_count(), 1);
  // And the bits of a graph built on the list are the usual ones.
  Tensor x = Tensor::full({3}, 2.0);
  EXPECT_EQ(((x + 1.0) * x).sum().item(), 18.0);
}

}  // namespace
}  // namespace maroon::test
