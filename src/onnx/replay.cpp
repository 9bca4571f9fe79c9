// The ONNX runner's replays (replay.h).
#include "onnx/replay.h"

#include "maroon/backend.h"
#include "maroon/round.h"

namespace maroon::onnx {

namespace {

// Everything that decides the captured graph and plans besides the model: a different value of
// any of these is another signature.
std::string signature(const std::vector<Tensor>& inputs) {
  std::string k = backend_name() + "|" + simd_target() + "|" + std::string(round_name(current_round())) +
                  (current_fused() ? "|fused" : "|unfused");
  for (const Tensor& t : inputs) k += "|" + std::string(dtype_name(t.dtype())) + shape_str(t.shape());
  return k;
}

}  // namespace

std::vector<Tensor> Replays::run(const std::vector<Tensor>& inputs, const RunFn& plain) {
  // Not inside a user's capture or under a trace (jit_can_capture): those record the plain run.
  std::unique_lock lock(mu_, std::try_to_lock);
  if (!lock.owns_lock() || !enabled_ || !jit_can_capture()) {
    if (lock.owns_lock()) ++stats_.plain;
    return plain();
  }
  std::string key = signature(inputs);
  auto it = entries_.find(key);
  if (it == entries_.end() && entries_.size() >= kMaxSignatures) {
    ++stats_.plain;
    return plain();
  }
  Entry& e = it != entries_.end() ? it->second : entries_[key];
  if (e.jit) {
    ++stats_.replays;
    return e.jit->replay(inputs);
  }
  // Inputs on one buffer (a tensor passed twice) would make capture() refuse: this call runs
  // plainly and does not count, so a later one with distinct inputs captures.
  if (e.refused || e.runs == 0 || inputs_sharing_a_buffer(inputs)) {
    std::vector<Tensor> out = plain();
    ++e.runs;
    ++stats_.plain;
    return out;
  }
  return capture(e, inputs, plain);
}

// The second run of a signature: captured. A capture that fails is retried plainly: if the plain
// run fails too, the error is the inputs' (a bad index) and the next run may capture; if it
// succeeds, the failure was the capture's (random numbers) and the signature runs plainly for good.
std::vector<Tensor> Replays::capture(Entry& e, const std::vector<Tensor>& inputs, const RunFn& plain) {
  auto jit = std::make_unique<JitCapture>();
  std::vector<Tensor> out;
  try {
    out = jit->capture(inputs, plain);
  } catch (const Error&) {
    out = plain();  // throws the inputs' own error, if that is what failed
    e.refused = true;
    ++stats_.refused;
    return out;
  }
  ++stats_.captures;
  if (jit->host_reads_of_inputs() > 0) {
    // This call's outputs are right (the capture ran the model); a replay's would not be.
    e.refused = true;
    ++stats_.refused;
    return out;
  }
  e.jit = std::move(jit);
  return out;
}

RunStats Replays::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void Replays::set_enabled(bool on) {
  std::lock_guard lock(mu_);
  enabled_ = on;
  if (!on) entries_.clear();  // the captures' buffers go too
}

bool Replays::enabled() const {
  std::lock_guard lock(mu_);
  return enabled_;
}

}  // namespace maroon::onnx
