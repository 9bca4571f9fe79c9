// Repeated runs of one model without rebuilding its graph: the ONNX runner's TinyJit.
//
// A model run builds one node per operator and plans every kernel again, ~5 ms a run of the
// transformer benchmark on the calling thread (docs/performance/onnx-kernels.md). Replays keeps, per input
// signature (each input's shape and dtype, and what else decides the graph: the backend, the
// rounding mode, FusedScope, the SIMD target), a JitCapture of the model's run: the first run with
// a signature runs plainly, the second is captured, later ones replay the captured plans on the
// new inputs. The kernels are the same, so the bits are (tests/onnx/replay_test.cpp).
//
// A replay repeats no host read, so a model that decides anything on the host from its inputs'
// values (a Reshape whose shape is an input, Gather's index check, If's condition, NonZero) must
// never replay: the capture counts such reads (JitCapture::host_reads_of_inputs) and the
// signature is then run plainly for good, as it is when the capture refuses (random numbers).
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "maroon/jit.h"
#include "maroon/onnx.h"

namespace maroon::onnx {

class Replays {
 public:
  using RunFn = std::function<std::vector<Tensor>()>;
  // Runs the model on `inputs` (in the graph's order, already checked): `plain` builds and
  // returns the graph's outputs; a replay returns realized outputs with the same bits.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, const RunFn& plain);
  RunStats stats() const;
  void set_enabled(bool on);
  bool enabled() const;

  // Signatures kept at most: a model fed ever new shapes (a growing sequence) keeps the first
  // ones and runs the others plainly, instead of holding a capture for each.
  static constexpr size_t kMaxSignatures = 8;

 private:
  struct Entry {
    int runs = 0;          // plain runs so far (the second one captures)
    bool refused = false;  // never replay: the capture refused or read an input on the host
    std::unique_ptr<JitCapture> jit;
  };
  std::vector<Tensor> capture(Entry& e, const std::vector<Tensor>& inputs, const RunFn& plain);

  mutable std::mutex mu_;  // one run at a time uses the captures; others run plainly meanwhile
  std::map<std::string, Entry> entries_;
  RunStats stats_;
  bool enabled_ = true;
};

}  // namespace maroon::onnx
