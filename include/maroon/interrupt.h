// Interrupting long computations. realize() polls a user-supplied check between kernels and,
// on the thread that called it, between the tasks of a parallel kernel (at most every few
// milliseconds); the check aborts the computation by throwing. Python's binding installs one
// that runs Python's signal handlers, so Ctrl-C raises KeyboardInterrupt in the middle of a
// long realize. An interrupted realize leaves the graph consistent: nodes it finished stay
// realized, the others are computed by the next realize.
#pragma once

namespace maroon {

using InterruptCheck = void (*)();
// Installs `check` (nullptr: none, the default). Called only on a thread inside realize().
void set_interrupt_check(InterruptCheck check);

}  // namespace maroon
