// The matmul's epilogue (issue 16): an elementwise chain that reads a matmul's result (a bias
// add, a ReLU, a residual add) run on each task's part of the output right after the kernel
// wrote it, while it is still in cache, instead of as a separate pass over the whole output.
// The chain receives each element as the matmul rounded it and runs the same instructions
// (exec_instr, the fused kernels' code) in the same order: the same bits as the separate pass.
#pragma once
#include <memory>
#include <optional>
#include <vector>

#include "core/graph.h"
#include "cpu/epilogue_pool.h"
#include "cpu/epilogue_rows.h"
#include "cpu/gemm.h"
#include "cpu/kernel.h"

namespace maroon::cpu {

class Epilogue {
 public:
  // `out` is the chain's materialized node; `leaf` the node of its chain that reads the product
  // (the REDUCE, or a view of it that keeps its row-major layout); the chain's other leaves are
  // realized. The result has out's dtype, which is the product's. With `kept` (a kept plan's,
  // cpu::Plan::keep_between_runs) the program is built once and kept there for the next run.
  Epilogue(Node& out, Node* leaf, std::unique_ptr<Program>* kept = nullptr);
  ~Epilogue();
  Epilogue(const Epilogue&) = delete;  // prog_ may point at own_
  Epilogue& operator=(const Epilogue&) = delete;
  Node& out() const { return out_; }
  // Replaces the outputs of task `task` of the product g (gemm_task's split) in place by the
  // chain's values at their positions.
  void apply(const GemmArgs& g, int64_t task) const;
  // Replaces the outputs at positions [s, s + n) of C, for each s in starts[0..count), in place
  // by the chain's values there: runs of a contiguous output that are final (matmul_fold.cpp's
  // units, each folded whole by one task).
  void apply_runs(uint8_t* C, const int64_t* starts, size_t count, int64_t n) const;
  // A max-pool to fold from each run apply() has rewritten (epilogue_pool.h), or null.
  void set_pool(EpiloguePool* pool) { pool_ = pool; }

 private:
  void run(uint8_t* C, int64_t p, int64_t n, TileEval& ev) const;
  // Positions [p, p + n): by the row epilogue where it applies (true), else through the tile
  // interpreter, *ev built on first need (apply and apply_runs share this step).
  bool run_any(uint8_t* C, int64_t p, int64_t n, std::optional<TileEval>* ev) const;
  // Positions [p, p + n) by the row epilogue (rows_), if every run-scalar leaf is one element there.
  bool run_rows(uint8_t* C, int64_t p, int64_t n) const;
  void tile(uint8_t* C, int64_t p, int n, TileEval& ev) const;
  int64_t run_index(int l, int64_t q) const;
  // Leaf l's element at output column col, for a leaf moving only along the rows (along_row_).
  const uint8_t* row_element(int l, int64_t col) const;

  Node& out_;
  Program own_;                                  // the program, unless a kept one is used
  const Program* prog_ = &own_;
  int self_ = -1;                                // the leaf that reads the product
  std::vector<std::unique_ptr<LeafMap>> maps_;   // the other leaves' maps (null for self_)
  std::vector<bool> contiguous_;
  std::vector<int64_t> run_;                     // affine leaves: positions per element read
  std::vector<size_t> lead_;                     // ... and the axes before that run
  std::vector<std::vector<uint64_t>> splat_;     // leaves that read one element everywhere
  std::vector<size_t> size_;                     // each leaf's element size (asked once, not per tile)
  std::vector<bool> along_row_;                  // affine, moving only along the output's last axis, by one
  bool has_rows_ = false;                        // the program is adds and a ReLU (epilogue_rows.h)
  RowEpilogue rows_;
  EpiloguePool* pool_ = nullptr;
};

// The matmul of REDUCE `reduce` (as try_matmul takes it, with its movement `chain`) with the
// epilogue of `out` over `leaf`: realizes `out`, leaving `reduce` and the views between it and
// `leaf` unrealized (nothing else reads them). False, having computed nothing but possibly the
// product's elementwise factors, when try_matmul would decline. With `pool` (a REDUCE MAX over
// views of `out`, plan.cpp's EpilogueSite::pool), its windows are folded in the epilogue if they
// fit (EpiloguePool), which then realizes it and sets *pool->pooled.
bool try_matmul_epilogue(Node& reduce, const std::vector<Node*>& chain, Node& out, Node* leaf,
                         std::unique_ptr<Program>* kept = nullptr, const EpiloguePoolSite* pool = nullptr);

// The same for a sum of a matmul's result through movement ops (try_matmul_fold: conv2d's input
// gradient) with the epilogue of `out` over `leaf` (the sum's node, or a view of it that keeps
// its layout): ReLU's gradient mask, applied as each image plane is folded instead of in a pass
// of its own. Realizes `out`, leaving `reduce` unrealized; false, having computed nothing but
// possibly the product's elementwise factors, when try_matmul_fold would decline.
bool try_matmul_fold_epilogue(Node& reduce, const std::vector<Node*>& chain, Node& mm,
                              const std::vector<Node*>& mm_chain, Node& out, Node* leaf,
                              std::unique_ptr<Program>* kept = nullptr);

// The same for a product of one column (vector_product.h: depthwise conv2d) with the epilogue of
// `out` over `leaf`: each task's rows rewritten as soon as they are final. False, having computed
// nothing, when try_vector_product would decline.
bool try_vector_product_epilogue(Node& reduce, const std::vector<Node*>& chain, Node& out, Node* leaf,
                                 std::unique_ptr<Program>* kept = nullptr);

// How many matmuls ran with an epilogue in this process (the harness checks that its cases did).
int64_t matmul_epilogue_runs();
// How many sums of a matmul's result (try_matmul_fold) ran with an epilogue, for the harness.
int64_t fold_epilogue_runs();
// How many products of one column (try_vector_product_epilogue) ran with an epilogue.
int64_t vector_epilogue_runs();
// How many epilogue tasks read a leaf's row in place instead of copying it per tile (a bias
// along the output's rows: epilogue.cpp), in this process (for the harness).
int64_t epilogue_rows_in_place();
// How many of those found the row's element from the position's column alone (a leaf moving
// only along the rows: no coordinates), for the harness.
int64_t epilogue_rows_by_column();

}  // namespace maroon::cpu
