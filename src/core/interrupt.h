// Polling the interrupt check (include/maroon/interrupt.h) from realize's loops.
#pragma once

namespace maroon {

// Marks this thread as running realize(): only such a thread polls.
class RealizeScope {
 public:
  RealizeScope();
  ~RealizeScope();
  RealizeScope(const RealizeScope&) = delete;
  RealizeScope& operator=(const RealizeScope&) = delete;

 private:
  bool prev_;
};

// Calls the installed check if this thread is inside realize() and the last call was more than
// a few milliseconds ago; whatever it throws propagates.
void poll_interrupt();

}  // namespace maroon
