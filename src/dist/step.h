// The data-parallel step's intermediate results, shared by data_parallel.cpp (computing and
// applying) and exchange.cpp (moving them between ranks).
#pragma once
#include <string>
#include <vector>

#include "maroon/dist.h"

namespace maroon::dist {

struct DataParallel::Shard {
  std::vector<Tensor> grads;  // realized, one per parameter in optimizer order
  Tensor loss;                // scalar: the shard's loss sum over the global batch size
  int64_t count = 0;
  std::vector<nn::BatchNorm::BatchStats> stats;  // one per layer
};

struct DataParallel::Sums {
  std::vector<Tensor> grads;   // one per parameter: the tree sum of the shards' gradients
  std::vector<Tensor> losses;  // by shard
  int64_t count = 0;
  std::vector<std::vector<nn::BatchNorm::BatchStats>> stats;  // [shard][layer]
};

// Little-endian integers and raw tensor bytes in a message.
void put_u64(std::string& out, uint64_t v);
uint64_t get_u64(const char* p);
// A tensor of `shape` and `d` from its little-endian bytes at `p`.
Tensor tensor_at(const char* p, const Shape& shape, DType d);

}  // namespace maroon::dist
