// tinygrad's TinyJit: a step function is captured once and then replayed.
//
// The first call runs the function as usual. The second runs it while recording every
// realization: each schedule, the CPU backend's plan for it (what is fused, what gets a buffer,
// which reductions are matmuls) and every Tensor::assign. Later calls run none of the function:
// the new inputs' buffers take the captured inputs' place, each state tensor the function
// assigned (parameters, optimizer moments) feeds its current value in, and the recorded plans
// run again. The bits are the same as calling the function (the kernels are the same; only the
// deciding and graph building are skipped); tests/api/jit_test.cpp proves it.
//
// A replay changes nothing that anybody holds: the capture runs its plans on a private copy of
// the recorded graph, every kernel writes memory it has just allocated (each buffer of the step
// goes back to the buffer cache once its last reader has run: core/jit_lifetimes.h), and the states, the
// tensors the step left on its nodes (a parameter's .grad) and the returned outputs are moved
// to new leaves over the new values. A tensor returned by an earlier call, an earlier input, or
// an earlier step's state held elsewhere (verify::Run's commitments hash and checkpoint them in
// the background) keeps the bytes it had.
//
// What a replay cannot reproduce is refused with an Error naming it: inputs whose count, shape
// or dtype differ from the captured call's, a change of backend, random numbers drawn inside the
// function (a replay would repeat them), two inputs on one buffer in the capturing call (the same
// tensor twice, or two views of one: the capture would hold one leaf for both), a capture inside
// a capture or under a trace, and an assign the replay could not feed back (a state assigned
// from a view or from a tensor the function did not compute). Values the function computes
// outside tensors (a Python float of the loss), and tensors it stores somewhere other than an
// existing tensor's value or .grad without returning them, are not recomputed. Not detected
// either (nor in tinygrad): a capturing call given, as an input, a tensor the function also reads
// by other means (a parameter it closes over): the capture sees one node read twice, so replays
// read the new input for both.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "maroon/tensor.h"

namespace maroon {

struct JitCaptureImpl;  // src/core/jit.cpp

// One captured step: the mechanism under TinyJit (and the Python binding's).
class JitCapture {
 public:
  JitCapture();
  ~JitCapture();
  JitCapture(const JitCapture&) = delete;
  JitCapture& operator=(const JitCapture&) = delete;

  // Realizes `inputs`, then runs `body` recording what it realizes and assigns; realizes the
  // outputs it returns inside the capture and returns them as new leaves over their values (as a
  // replay does: the recorded graph is not kept alive by them, nor by a .grad, which moves too).
  std::vector<Tensor> capture(const std::vector<Tensor>& inputs, const std::function<std::vector<Tensor>()>& body);
  // Runs the captured step on new inputs (same count, shapes and dtypes as captured) and returns
  // its outputs as new tensors.
  std::vector<Tensor> replay(const std::vector<Tensor>& inputs);
  bool captured() const;
  // How many schedules and materialized nodes a replay runs (for reports and tests).
  size_t schedules() const;
  size_t kernels() const;
  // Bytes of the buffers the capture's nodes hold between calls (what its leaves alias; every
  // other buffer of the step is dropped once read, and what a call hands out is the caller's).
  size_t held_bytes() const;
  // Host reads during the capture (Tensor::bytes, to_vector, item, tolist) of values computed
  // from the captured call's inputs, and the first one's shape and dtype. A replay repeats no
  // host read, so whatever the step decided from one (a shape, an index check, a branch) is the
  // captured call's decision: a caller that cannot know its step is free of them (the ONNX
  // runner) checks that this is 0 before replaying. TinyJit does not refuse them: a step that
  // reads its loss for a log line is the usual case.
  size_t host_reads_of_inputs() const;
  const std::string& first_host_read_of_inputs() const;

 private:
  std::unique_ptr<JitCaptureImpl> impl_;
};

// tinygrad's TinyJit decorator: call 1 runs `fn`, call 2 captures it, later calls replay the capture and
// return its outputs (new tensors each call: unlike tinygrad's, earlier outputs stay valid).
class TinyJit {
 public:
  using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
  explicit TinyJit(Fn fn);
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs);
  int64_t calls() const { return calls_; }
  const JitCapture& capture() const { return *jit_; }
  // Forgets the capture: the next call runs the function and the one after captures again.
  void reset();

 private:
  Fn fn_;
  int64_t calls_ = 0;
  std::unique_ptr<JitCapture> jit_;
};

// Realizes `inputs` and returns the first pair (j < i) on one buffer (the same tensor twice, or
// two views of one), which capture() refuses: its graph would read them as one leaf.
std::optional<std::pair<size_t, size_t>> inputs_sharing_a_buffer(const std::vector<Tensor>& inputs);

// Whether a capture is recording on this thread (so code that cannot be replayed can refuse).
bool jit_capturing();
// Whether a capture could start on this thread now: none is recording and no trace observes the
// realizations (capture() and replay() refuse both).
bool jit_can_capture();

}  // namespace maroon
