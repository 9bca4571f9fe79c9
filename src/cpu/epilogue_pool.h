// A 2 x 2 max-pool at stride 2 folded inside the matmul epilogue that writes its input (the ONNX
// CNN's conv2d + bias + ReLU, then MaxPool): each run of positions the epilogue has just rewritten
// (a task's part of a channel's plane, in L1) has its windows folded there, instead of a second
// pass that read the whole conv output back from L2/L3 (the two pools were ~10% of the CNN).
// The same kernel as pool_reduce.cpp's (window_gather.h's Pool2x2RunsFn: identity, then the
// window's four positions in order), over the same values, so the same bits. A window split
// between two tasks (tasks of an odd number of image rows) is folded after the product.
#pragma once
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "core/graph.h"
#include "cpu/window_gather.h"

namespace maroon::cpu {

// What the plan offers an epilogue (plan.cpp, EpilogueSite::pool): the REDUCE node, the movement
// nodes from the epilogue's node up to its source, and where to say it was computed.
struct EpiloguePoolSite {
  Node* pool;
  const std::vector<Node*>* views;
  bool* pooled;
};

class EpiloguePool {
 public:
  // Whether `site.pool` is a MAX over 2 x 2 windows at stride 2 of `out` (contiguous, its last
  // two axes H x W even, the windows' axes last: (..., H/2, W/2, 2, 2)), float32 or float64.
  bool match(const Node& out, const EpiloguePoolSite& site);
  // Folds the windows of out's positions [p, p + n) (C: out's buffer), already final; those of
  // a row pair only partly in the run are left to finish().
  void fold(const uint8_t* C, int64_t p, int64_t n);
  // After every task (out realized): the windows left, then the pool's node gets its buffer.
  void finish();

 private:
  void fold_pairs(const uint8_t* C, int64_t q0, int64_t q1) const;

  Node* node_ = nullptr;
  const Node* out_ = nullptr;
  std::shared_ptr<Buffer> buf_;
  Pool2x2RunsFn fn_ = nullptr;
  int64_t w_ = 0;           // out's row length: a window is {0, 1, W, W + 1}
  int64_t window_[4] = {};
  uint64_t identity_ = 0;
  size_t sz_ = 0;
  // A call of fn_ folds up to kChunk row pairs from its base: the runs' starts and output
  // offsets relative to it, the same for every call (set by match).
  static constexpr int kChunk = 64;
  int64_t start_[kChunk] = {};
  int at_[kChunk + 1] = {};
  std::mutex mu_;
  std::vector<int64_t> straddled_;  // row pairs (of 2W positions) a run held only part of
};

// How many pools an epilogue computed, in this process (for the harness).
int64_t epilogue_pools();
// How many of those had windows split between tasks, folded after the product.
int64_t epilogue_pools_straddled();

}  // namespace maroon::cpu
